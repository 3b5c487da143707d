// Pipeline.h -- lowers checked IR to the form the printers emit.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"
#include "support/PhaseTimes.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace tilet {

struct DumpOptions {
    std::string after;            // a pass name, "all", or empty
    std::ostream *out = nullptr;  // where dumps go
    PhaseTimes *times = nullptr;  // --time-report: each pass's time goes here
};

// Runs every pass on every kernel, in order. Returns false if a pass
// reported a user error (the module is then unusable).
bool lower(ir::Module &module, PassContext &ctx, const DumpOptions &dump);

// The names --dump-ir-after accepts, in pipeline order.
const std::vector<std::string> &passNames();

} // namespace tilet
