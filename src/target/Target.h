// Target.h -- what a GPU architecture can do: the built-in targets
// (templates/targets.yaml, turned into a table at build time) plus any
// --target-file, read by the one YAML reader (TargetReader.h).
#pragma once

#include "support/Diagnostics.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilet {

enum class Feature : uint8_t {
#define TILET_FEATURE(name, key, text) name,
#include "target/Features.def"
#undef TILET_FEATURE
};

constexpr size_t kFeatureCount = 0
#define TILET_FEATURE(name, key, text) +1
#include "target/Features.def"
#undef TILET_FEATURE
    ;

// targets.yaml's key ("cp_async") and a message's name ("cp.async").
const char *featureKey(Feature f);
const char *featureText(Feature f);

struct Target {
    std::string name;                 // "sm_90a"
    int arch = 0;                     // 90
    std::string family;               // "hopper"
    std::string gencode;              // "arch=compute_90a,code=sm_90a"
    bool exactCapability = false;     // runs on compute capability arch/10.arch%10 alone (the "a" targets)
    std::array<bool, kFeatureCount> features{};
    int64_t maxSharedPerBlock = 0;
    int64_t registersPerSm = 0;
    int64_t maxRegistersPerThread = 0;
    int64_t maxThreadsPerBlock = 0;
    int64_t maxClusterSize = 1;
    // The SMs of the architecture's flagship GPU (H100 SXM: 132): the
    // num_sms() the barrier-protocol check assumes (the launch queries the device's).
    int64_t smCount = 1;

    bool has(Feature f) const { return features[static_cast<size_t>(f)]; }
};

// "sm_80 or newer", "sm_90a or sm_100a", "sm_100a": the built-in targets that
// have `f`, for "X needs ...; sm_75 has none" messages.
std::string targetsWith(Feature f);
// "<feature> needs <targetsWith>; <t.name> has none".
std::string lacks(const Target &t, Feature f);

// setmaxnreg's split of the register file between warp-specialized roles
// (TileLang's AnnotateWarpGroupRegAlloc): the producer warp group, which only
// issues TMA, drops to 24 registers per thread and the consumer warp groups
// share what is left, in multiples of 8, at most 240 -- 240 for one or two
// consumer groups and 160 for three on 64K-register SMs. None for four or
// more consumer groups (TileLang does not reallocate then) or a target
// without setmaxnreg.
struct RegisterSplit {
    int64_t producer = 0, consumer = 0;
};
std::optional<RegisterSplit> warpGroupRegisterSplit(const Target &t, int64_t consumerGroups);

// The built-in targets, oldest first (generated from templates/targets.yaml).
const std::vector<Target> &builtinTargets();

class TargetTable {
public:
    TargetTable();   // the built-in targets
    // Reads a --target-file registered in `sources`, adding or overriding
    // targets. Problems are diagnostics at their line and column; returns
    // false if there were any.
    bool load(FileId file, const SourceManager &sources, DiagnosticEngine &diags);

    const Target *find(const std::string &name) const;
    std::vector<std::string> names() const;   // by architecture

private:
    std::map<std::string, Target> targets_;
};

} // namespace tilet
