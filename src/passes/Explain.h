// Explain.h -- the record of every lowering decision, for `--explain`.
//
// Passes record what they chose for each tile operation and loop, why, and
// which stronger options they rejected with the constraint that rejected
// them. The driver prints the record as remarks (or JSON) in source order.
#pragma once

#include "support/Diagnostics.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace tilet {

struct Rejected {
    std::string option;   // e.g. "BulkLoad"
    std::string reason;   // the constraint that failed
};

// Whether an option is possible, and if not, the constraint that rules it out.
struct Option {
    bool ok = false;
    std::string reason;
    static Option yes() { return {true, {}}; }
    static Option no(std::string r) { return {false, std::move(r)}; }
};

struct Decision {
    SourceRange where;
    std::string op;         // "copy global->shared", "parallel loop", "reduce_max"
    std::string choice;     // "Normal", "CPAsync", "4 threads x 16 elements"
    std::string why;
    std::vector<Rejected> rejected;
    std::vector<std::string> details;   // further facts: partitions, shapes, bytes
    // A choice that holds only if a later pass issues this instruction
    // ("cp.async": it needs aligned 4-16-byte vectors); `otherwise` is the
    // choice when it does not (Explain::breakPromise).
    std::string promises, otherwise;
};

class Explain {
public:
    // A decision identical to one already recorded (the same statement
    // lowered again, as a pipeline's prologue copies are) is kept once.
    void record(Decision d);
    // A later pass did not issue `promised` for the statement at `inside`:
    // each decision that promised it, whose range holds `inside` and none of
    // `issued` (where it was issued after all), now says its `otherwise`,
    // with the promised instruction rejected because of `why`.
    void breakPromise(const std::string &promised, SourceRange inside, const std::vector<SourceRange> &issued, const std::string &why);
    const std::vector<Decision> &decisions() const { return decisions_; }

    // As remarks with notes, in source order. `target`: in a multi-architecture
    // translation, the target the decisions were made for (each remark starts
    // with "[sm_80] ", each JSON object has "target").
    void printRemarks(DiagnosticEngine &diags, const std::string &target = "") const;
    // One JSON object per line and decision.
    void printJson(const SourceManager &sources, std::ostream &out, const std::string &target = "") const;

private:
    std::vector<Decision> decisions_;
};

} // namespace tilet
