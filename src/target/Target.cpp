// Target.cpp -- see Target.h. The built-in targets come from the table
// generated at build time (src/target/GenerateTables.cpp).
#include "target/Target.h"

#include "target/TargetReader.h"

#include <algorithm>

namespace tilet {

std::string targetsWith(Feature f) {
    const std::vector<Target> &all = builtinTargets();   // oldest first
    std::vector<const Target *> with;
    for (const Target &t : all)
        if (t.has(f)) with.push_back(&t);
    if (with.empty()) return "a target tilet does not know";
    // Every target from the first that has it on: "sm_80 or newer".
    bool fromThenOn = std::all_of(all.begin(), all.end(), [&](const Target &t) { return t.arch < with.front()->arch || t.has(f); });
    if (fromThenOn && with.size() > 1) return with.front()->name + " or newer";
    std::string text;
    for (size_t i = 0; i < with.size(); ++i) text += (i == 0 ? "" : i + 1 == with.size() ? " or " : ", ") + with[i]->name;
    return text;
}

std::string lacks(const Target &t, Feature f) { return std::string(featureText(f)) + " needs " + targetsWith(f) + "; " + t.name + " has none"; }

std::optional<RegisterSplit> warpGroupRegisterSplit(const Target &t, int64_t consumerGroups) {
    constexpr int64_t kGroupThreads = 128, kProducerRegisters = 24;
    if (!t.has(Feature::Setmaxnreg) || consumerGroups < 1 || consumerGroups > 3) return std::nullopt;
    int64_t perThread = (t.registersPerSm / kGroupThreads - kProducerRegisters) / consumerGroups;
    return RegisterSplit{kProducerRegisters, std::min<int64_t>(240, perThread / 8 * 8)};
}

TargetTable::TargetTable() {
    for (const Target &t : builtinTargets()) targets_[t.name] = t;
}

bool TargetTable::load(FileId file, const SourceManager &sources, DiagnosticEngine &diags) {
    return readTargets(file, sources.text(file), targets_, diags);
}

const Target *TargetTable::find(const std::string &name) const {
    auto it = targets_.find(name);
    return it == targets_.end() ? nullptr : &it->second;
}

std::vector<std::string> TargetTable::names() const {
    std::vector<const Target *> sorted;
    for (const auto &[name, t] : targets_) sorted.push_back(&t);
    std::stable_sort(sorted.begin(), sorted.end(), [](const Target *a, const Target *b) { return a->arch < b->arch; });
    std::vector<std::string> out;
    for (const Target *t : sorted) out.push_back(t->name);
    return out;
}

} // namespace tilet
