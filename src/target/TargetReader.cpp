// TargetReader.cpp -- see TargetReader.h.
#include "target/TargetReader.h"

// yaml-cpp 0.7's inline node code trips GCC 12's dangling-pointer analysis.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <yaml-cpp/yaml.h>

#include <functional>
#include <set>

namespace tilet {

const char *featureKey(Feature f) {
    static const char *const keys[] = {
#define TILET_FEATURE(name, key, text) key,
#include "target/Features.def"
#undef TILET_FEATURE
    };
    return keys[static_cast<size_t>(f)];
}

const char *featureText(Feature f) {
    static const char *const texts[] = {
#define TILET_FEATURE(name, key, text) text,
#include "target/Features.def"
#undef TILET_FEATURE
    };
    return texts[static_cast<size_t>(f)];
}

namespace {

SourceRange markRange(FileId file, const YAML::Mark &mark) {
    if (mark.is_null()) return {};
    // yaml-cpp marks are 0-based.
    SourceLoc loc{file, static_cast<uint32_t>(mark.line + 1), static_cast<uint32_t>(mark.column + 1)};
    return SourceRange::at(loc);
}

struct Field {
    std::string key;
    std::function<bool(Target &, const YAML::Node &)> read;
};

template <class T> std::function<bool(Target &, const YAML::Node &)> reader(T Target::*member) {
    return [member](Target &t, const YAML::Node &n) {
        T value;
        if (!YAML::convert<T>::decode(n, value)) return false;
        t.*member = value;
        return true;
    };
}

// Every key a target has: its identity and limits, then one per feature.
const std::vector<Field> &fields() {
    static const std::vector<Field> table = [] {
        std::vector<Field> f = {
            {"arch", reader(&Target::arch)},
            {"family", reader(&Target::family)},
            {"gencode", reader(&Target::gencode)},
            {"exact_capability", reader(&Target::exactCapability)},
            {"max_shared_per_block", reader(&Target::maxSharedPerBlock)},
            {"registers_per_sm", reader(&Target::registersPerSm)},
            {"max_registers_per_thread", reader(&Target::maxRegistersPerThread)},
            {"max_threads_per_block", reader(&Target::maxThreadsPerBlock)},
            {"max_cluster_size", reader(&Target::maxClusterSize)},
            {"sm_count", reader(&Target::smCount)},
        };
        for (size_t i = 0; i < kFeatureCount; ++i) {
            f.push_back({featureKey(static_cast<Feature>(i)), [i](Target &t, const YAML::Node &n) {
                             bool value = false;
                             if (!YAML::convert<bool>::decode(n, value)) return false;
                             t.features[i] = value;
                             return true;
                         }});
        }
        return f;
    }();
    return table;
}

void addTarget(FileId file, const std::string &name, const YAML::Mark &nameMark, const YAML::Node &body,
               std::map<std::string, Target> &targets, DiagnosticEngine &diags) {
    if (!body.IsMap()) {
        diags.error(markRange(file, body.Mark()), "target '" + name + "' must be a map of properties");
        return;
    }
    Target target;
    std::set<std::string> given;
    if (targets.count(name)) {
        target = targets[name];   // a later file overrides fields of an earlier target
        for (const Field &f : fields()) given.insert(f.key);
    }
    if (const YAML::Node base = body["base"]) {
        std::string baseName = base.as<std::string>();
        auto found = targets.find(baseName);
        if (found == targets.end()) {
            diags.error(markRange(file, base.Mark()), "unknown base target '" + baseName + "'");
            return;
        }
        target = found->second;
        for (const Field &f : fields()) given.insert(f.key);
    }
    target.name = name;
    for (auto kv = body.begin(); kv != body.end(); ++kv) {
        std::string key = kv->first.as<std::string>();
        if (key == "base") continue;
        const Field *field = nullptr;
        for (const Field &f : fields()) {
            if (key == f.key) field = &f;
        }
        if (!field) {
            diags.error(markRange(file, kv->first.Mark()), "unknown target property '" + key + "'");
            continue;
        }
        if (!kv->second.IsScalar() || !field->read(target, kv->second)) {
            diags.error(markRange(file, kv->second.Mark()), "invalid value for '" + key + "'");
            continue;
        }
        given.insert(key);
    }
    std::string missing;
    for (const Field &f : fields()) {
        if (!given.count(f.key)) missing += (missing.empty() ? "'" : ", '") + f.key + "'";
    }
    if (!missing.empty())
        diags.error(markRange(file, nameMark), "target '" + name + "' lacks " + missing + " (or a base: target to take them from)");
    if (target.maxThreadsPerBlock <= 0 || target.maxSharedPerBlock < 0 || target.arch <= 0 || target.smCount <= 0)
        diags.error(markRange(file, nameMark), "target '" + name + "' has a non-positive limit");
    targets[name] = target;
}

} // namespace

bool readTargets(FileId file, const std::string &text, std::map<std::string, Target> &targets, DiagnosticEngine &diags) {
    unsigned errorsBefore = diags.errorCount();
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception &e) {
        diags.error(markRange(file, e.mark), "malformed target file: " + e.msg);
        return false;
    }
    if (root.IsNull()) return true;
    if (!root.IsMap()) {
        diags.error(markRange(file, root.Mark()), "a target file is a map from target names to their properties");
        return false;
    }
    for (auto it = root.begin(); it != root.end(); ++it) addTarget(file, it->first.as<std::string>(), it->first.Mark(), it->second, targets, diags);
    return diags.errorCount() == errorsBefore;
}

} // namespace tilet

#pragma GCC diagnostic pop
