// Target.h -- what a GPU architecture can do, read from the YAML target table
// (templates/targets.yaml, embedded; plus any --target-file).
#pragma once

#include "support/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace YAML {
class Node;
struct Mark;
} // namespace YAML

namespace tilet {

struct Target {
    std::string name;                 // "sm_90a"
    int arch = 0;                     // 90
    std::string family;               // "hopper"
    std::string gencode;              // "arch=compute_90a,code=sm_90a"
    bool exactCapability = false;     // runs on compute capability arch/10.arch%10 alone (the "a" targets)
    bool cpAsync = false;
    bool ldmatrix = false;
    bool stmatrix = false;
    bool tma = false;
    bool wgmma = false;
    bool tcgen05 = false;
    bool clusters = false;
    bool setmaxnreg = false;
    bool pdl = false;
    bool fp8Mma = false;
    int64_t maxSharedPerBlock = 0;
    int64_t registersPerSm = 0;
    int64_t maxRegistersPerThread = 0;
    int64_t maxThreadsPerBlock = 0;
    int64_t maxClusterSize = 1;
};

class TargetTable {
public:
    // Reads YAML text registered in `sources` as `file`, adding or overriding
    // targets. Problems are diagnostics at their line and column; returns
    // false if there were any.
    bool load(FileId file, const SourceManager &sources, DiagnosticEngine &diags);
    // The same, but each top-level entry is parsed only when it is first
    // needed (found, used as a base or overridden): yaml-cpp takes longer
    // to parse the whole embedded table than tilet takes to translate a
    // kernel. For the embedded table, which the unit tests load whole.
    void loadLazily(FileId file, const SourceManager &sources, DiagnosticEngine &diags);

    const Target *find(const std::string &name);
    std::vector<std::string> names();

private:
    bool loadText(FileId file, const std::string &text, DiagnosticEngine &diags);
    void addTarget(FileId file, const std::string &name, const YAML::Mark &nameMark, const YAML::Node &body, DiagnosticEngine &diags);
    void materialize(const std::string &name);

    struct Section {
        FileId file;
        std::string text;   // the entry, preceded by blank lines so marks keep their line numbers
    };
    std::map<std::string, Target> targets_;
    std::map<std::string, Section> pending_;
    DiagnosticEngine *pendingDiags_ = nullptr;
};

} // namespace tilet
