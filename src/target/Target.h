// Target.h -- what a GPU architecture can do, read from the YAML target table
// (templates/targets.yaml, embedded; plus any --target-file).
#pragma once

#include "support/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilet {

struct Target {
    std::string name;                 // "sm_90a"
    int arch = 0;                     // 90
    std::string family;               // "hopper"
    std::string gencode;              // "arch=compute_90a,code=sm_90a"
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

    const Target *find(const std::string &name) const;
    std::vector<std::string> names() const;

private:
    std::map<std::string, Target> targets_;
};

} // namespace tilet
