#include "target/Target.h"

// yaml-cpp 0.7's inline node code trips GCC 12's dangling-pointer analysis.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <set>

namespace tilet {

namespace {

SourceRange markRange(FileId file, const YAML::Mark &mark) {
    if (mark.is_null()) return {};
    // yaml-cpp marks are 0-based.
    SourceLoc loc{file, static_cast<uint32_t>(mark.line + 1), static_cast<uint32_t>(mark.column + 1)};
    return SourceRange::at(loc);
}

struct Field {
    const char *key;
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

const std::vector<Field> &fields() {
    static const std::vector<Field> table = {
        {"arch", reader(&Target::arch)},
        {"family", reader(&Target::family)},
        {"gencode", reader(&Target::gencode)},
        {"exact_capability", reader(&Target::exactCapability)},
        {"cp_async", reader(&Target::cpAsync)},
        {"ldmatrix", reader(&Target::ldmatrix)},
        {"stmatrix", reader(&Target::stmatrix)},
        {"tma", reader(&Target::tma)},
        {"wgmma", reader(&Target::wgmma)},
        {"tcgen05", reader(&Target::tcgen05)},
        {"clusters", reader(&Target::clusters)},
        {"setmaxnreg", reader(&Target::setmaxnreg)},
        {"pdl", reader(&Target::pdl)},
        {"fp8_mma", reader(&Target::fp8Mma)},
        {"max_shared_per_block", reader(&Target::maxSharedPerBlock)},
        {"registers_per_sm", reader(&Target::registersPerSm)},
        {"max_registers_per_thread", reader(&Target::maxRegistersPerThread)},
        {"max_threads_per_block", reader(&Target::maxThreadsPerBlock)},
        {"max_cluster_size", reader(&Target::maxClusterSize)},
    };
    return table;
}

// Whole-line comments blanked out (newlines kept, so marks still point at the
// right lines): yaml-cpp scans comments character by character, and the
// embedded table is mostly documentation.
std::string withoutFullLineComments(const std::string &text) {
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        size_t end = text.find('\n', i);
        if (end == std::string::npos) end = text.size();
        size_t first = text.find_first_not_of(" \t", i);
        bool comment = first < end && text[first] == '#';
        if (!comment) out.append(text, i, end - i);
        if (end < text.size()) out += '\n';
        i = end + 1;
    }
    return out;
}

} // namespace

bool TargetTable::load(FileId file, const SourceManager &sources, DiagnosticEngine &diags) {
    return loadText(file, sources.text(file), diags);
}

void TargetTable::loadLazily(FileId file, const SourceManager &sources, DiagnosticEngine &diags) {
    const std::string &text = sources.text(file);
    pendingDiags_ = &diags;
    size_t lineStart = 0, sectionStart = std::string::npos, line = 0, sectionLine = 0;
    std::string name;
    auto close = [&](size_t end) {
        if (sectionStart == std::string::npos) return;
        pending_[name] = {file, std::string(sectionLine, '\n') + text.substr(sectionStart, end - sectionStart)};
    };
    while (lineStart < text.size()) {
        size_t end = text.find('\n', lineStart);
        if (end == std::string::npos) end = text.size();
        char first = text[lineStart];
        // A top-level key ("sm_80:") starts an entry; comments and indented lines do not.
        if (first != '#' && first != ' ' && first != '\t' && first != '\n' && text.find(':', lineStart) < end) {
            close(lineStart);
            sectionStart = lineStart;
            sectionLine = line;
            name = text.substr(lineStart, text.find(':', lineStart) - lineStart);
        }
        lineStart = end + 1;
        ++line;
    }
    close(text.size());
}

void TargetTable::materialize(const std::string &requested) {
    std::string name = requested;   // `requested` may be the key erased below
    auto it = pending_.find(name);
    if (it == pending_.end()) return;
    Section section = std::move(it->second);
    pending_.erase(it);
    // The embedded table is plain "name:" / "  key: value" lines (the unit
    // tests check that this reads it as yaml-cpp does), so its entries are
    // built as nodes directly instead of parsed.
    YAML::Node body(YAML::NodeType::Map);
    size_t pos = 0;
    bool first = true;
    while (pos < section.text.size()) {
        size_t end = section.text.find('\n', pos);
        if (end == std::string::npos) end = section.text.size();
        std::string line = section.text.substr(pos, end - pos);
        pos = end + 1;
        size_t colon = line.find(':');
        if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
        if (first) {   // the "name:" line
            first = false;
            continue;
        }
        size_t keyStart = line.find_first_not_of(' ');
        size_t valueStart = line.find_first_not_of(' ', colon + 1);
        if (keyStart == std::string::npos || line.find_first_not_of(" \t", keyStart) == std::string::npos) continue;
        body[line.substr(keyStart, colon - keyStart)] = valueStart == std::string::npos ? std::string() : line.substr(valueStart);
    }
    addTarget(section.file, name, YAML::Mark::null_mark(), body, *pendingDiags_);
}

bool TargetTable::loadText(FileId file, const std::string &text, DiagnosticEngine &diags) {
    unsigned errorsBefore = diags.errorCount();
    YAML::Node root;
    try {
        root = YAML::Load(withoutFullLineComments(text));
    } catch (const YAML::Exception &e) {
        diags.error(markRange(file, e.mark), "malformed target file: " + e.msg);
        return false;
    }
    if (root.IsNull()) return true;
    if (!root.IsMap()) {
        diags.error(markRange(file, root.Mark()), "a target file is a map from target names to their properties");
        return false;
    }
    for (auto it = root.begin(); it != root.end(); ++it) addTarget(file, it->first.as<std::string>(), it->first.Mark(), it->second, diags);
    return diags.errorCount() == errorsBefore;
}

void TargetTable::addTarget(FileId file, const std::string &name, const YAML::Mark &nameMark, const YAML::Node &body, DiagnosticEngine &diags) {
    if (!body.IsMap()) {
        diags.error(markRange(file, body.Mark()), "target '" + name + "' must be a map of properties");
        return;
    }
    Target target;
    std::set<std::string> given;
    materialize(name);
    bool existing = targets_.count(name) != 0;
    if (existing) {
        target = targets_[name];   // a later file overrides fields of an earlier target
        for (const Field &f : fields()) given.insert(f.key);
    }
    if (const YAML::Node base = body["base"]) {
        std::string baseName = base.as<std::string>();
        materialize(baseName);
        auto found = targets_.find(baseName);
        if (found == targets_.end()) {
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
        if (!given.count(f.key)) missing += (missing.empty() ? "'" : ", '") + std::string(f.key) + "'";
    }
    if (!missing.empty())
        diags.error(markRange(file, nameMark), "target '" + name + "' lacks " + missing + " (or a base: target to take them from)");
    if (target.maxThreadsPerBlock <= 0 || target.maxSharedPerBlock < 0 || target.arch <= 0)
        diags.error(markRange(file, nameMark), "target '" + name + "' has a non-positive limit");
    targets_[name] = target;
}

const Target *TargetTable::find(const std::string &name) {
    materialize(name);
    auto it = targets_.find(name);
    return it == targets_.end() ? nullptr : &it->second;
}

std::vector<std::string> TargetTable::names() {
    while (!pending_.empty()) materialize(pending_.begin()->first);
    std::vector<const Target *> sorted;
    for (const auto &[name, t] : targets_) sorted.push_back(&t);
    std::stable_sort(sorted.begin(), sorted.end(), [](const Target *a, const Target *b) { return a->arch < b->arch; });
    std::vector<std::string> out;
    for (const Target *t : sorted) out.push_back(t->name);
    return out;
}

} // namespace tilet

#pragma GCC diagnostic pop
