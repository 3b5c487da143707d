// GenerateTables.cpp -- a build-time tool: reads templates/targets.yaml and
// templates/instructions.yaml and writes them as C++ tables, so that tilet
// parses no YAML unless a --target-file is given (yaml-cpp takes longer to
// parse the targets than tilet takes to translate a kernel).
//
//   tilet-generate-tables TARGETS.yaml INSTRUCTIONS.yaml OUT.cpp
//
// Errors are located diagnostics; the build stops on any.
#include "ir/DType.h"
#include "target/Catalog.h"
#include "target/TargetReader.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

using namespace tilet;

namespace {

SourceRange at(FileId file, const YAML::Mark &mark) {
    if (mark.is_null()) return {};
    return SourceRange::at(SourceLoc{file, static_cast<uint32_t>(mark.line + 1), static_cast<uint32_t>(mark.column + 1)});
}

std::string quoted(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// Reads one instructions.yaml entry into C++ initializer text.
class EntryReader {
public:
    EntryReader(FileId file, DiagnosticEngine &diags) : file_(file), diags_(diags) {}

    std::string read(const std::string &name, const YAML::Node &body, const YAML::Mark &nameMark) {
        if (!body.IsMap()) return fail(body.Mark(), "instruction '" + name + "' must be a map of properties");
        static const std::set<std::string> known = {"class", "requires", "m", "n", "k", "a", "b", "c", "a_from", "b_from", "c_in",
                                                    "a_major", "b_major", "warp_tile", "layout", "ptx", "scale", "scale_vec", "note", "a_codes", "c_codes",
                                                    "sub_byte", "cta_group"};
        for (auto kv = body.begin(); kv != body.end(); ++kv)
            if (!known.count(kv->first.as<std::string>())) fail(kv->first.Mark(), "unknown instruction property '" + kv->first.as<std::string>() + "'");
        for (const char *key : {"class", "requires", "m", "n", "k", "a", "b", "c", "a_from", "b_from", "c_in", "layout", "ptx"})
            if (!body[key]) fail(nameMark, "instruction '" + name + "' lacks '" + key + "'");
        if (failed_) return "";
        std::string cls = choice(body["class"], {{"mma_sync", "MmaSync"}, {"wgmma", "Wgmma"}, {"tcgen05_mma", "Tcgen05Mma"}});
        std::string feature = featureOf(body["requires"]);
        std::string m = range(body["m"]), n = range(body["n"]), k = range(body["k"]);
        std::string a = dtypes(body["a"]), b = dtypes(body["b"]), c = dtypes(body["c"]);
        std::string aFrom = locations(body["a_from"]), bFrom = locations(body["b_from"]), cIn = locations(body["c_in"]);
        std::string aMajor = body["a_major"] ? choice(body["a_major"], {{"k", "true"}, {"any", "false"}}) : "false";
        std::string bMajor = body["b_major"] ? choice(body["b_major"], {{"k", "true"}, {"any", "false"}}) : "false";
        std::string warpRows = first(body["m"]), warpCols = first(body["n"]);
        if (const YAML::Node w = body["warp_tile"]) {
            if (!w.IsSequence() || w.size() != 2) return fail(w.Mark(), "warp_tile is [rows, cols]");
            warpRows = std::to_string(w[0].as<int>());
            warpCols = std::to_string(w[1].as<int>());
        }
        std::string layout = choice(body["layout"], {{"mma_m16n8", "MmaM16N8"}, {"mma_m8n8", "MmaM8N8"}, {"mma_m8n8k4", "MmaM8N8K4"},
                                                     {"mma_m8n8k16", "MmaM8N8K16"}, {"wgmma_m64", "WgmmaM64"}, {"tmem", "TMem"}});
        std::string scale = body["scale"] ? dtypes(body["scale"]) : "0u";
        std::string scaleVec = body["scale_vec"] ? std::to_string(body["scale_vec"].as<int>()) : "0";
        if (body["scale"].IsDefined() != body["scale_vec"].IsDefined()) fail(nameMark, "a block-scaled instruction gives both 'scale' and 'scale_vec'");
        std::string note = body["note"] ? body["note"].as<std::string>() : "";
        std::string subBytePadded = body["sub_byte"] ? choice(body["sub_byte"], {{"packed", "false"}, {"padded", "true"}}) : "false";
        std::string aCodes = codes(body["a_codes"]), cCodes = codes(body["c_codes"]);
        std::string ctaGroup = body["cta_group"] ? choice(body["cta_group"], {{"1", "1"}, {"2", "2"}}) : "1";
        if (failed_) return "";
        return "    {" + quoted(name) + ", InstrClass::" + cls + ", Feature::" + feature + ", " + m + ", " + n + ", " + k + ", " + a + ", " + b + ", " +
               c + ", " + aFrom + ", " + bFrom + ", " + cIn + ", " + aMajor + ", " + bMajor + ", " + warpRows + ", " + warpCols +
               ", FragmentLayout::" + layout + ", " + quoted(body["ptx"].as<std::string>()) + ", " + scale + ", " + scaleVec + ", " + quoted(note) +
               ", " + subBytePadded + ", " + aCodes + ", " + cCodes + ", " + ctaGroup + "},\n";
    }

    bool failed() const { return failed_; }

private:
    std::string fail(const YAML::Mark &mark, const std::string &text) {
        diags_.error(at(file_, mark), text);
        failed_ = true;
        return "";
    }

    std::string choice(const YAML::Node &n, const std::map<std::string, std::string> &values) {
        auto it = n.IsScalar() ? values.find(n.as<std::string>()) : values.end();
        if (it != values.end()) return it->second;
        std::string list;
        for (const auto &[k, v] : values) list += (list.empty() ? "" : ", ") + k;
        return fail(n.Mark(), "expected one of " + list);
    }

    std::string featureOf(const YAML::Node &n) {
        static const std::map<std::string, std::string> names = {
#define TILET_FEATURE(name, key, text) {key, #name},
#include "target/Features.def"
#undef TILET_FEATURE
        };
        return choice(n, names);
    }

    // A number, a list in arithmetic progression, or "LO..HI/STEP".
    std::string range(const YAML::Node &n) {
        std::vector<int> values;
        int lo = 0, hi = 0, step = 1;
        if (n.IsSequence()) {
            for (const YAML::Node &v : n) values.push_back(v.as<int>());
            if (values.empty()) return fail(n.Mark(), "an empty list of values");
            lo = values.front();
            hi = values.back();
            step = values.size() > 1 ? values[1] - values[0] : 1;
            for (size_t i = 1; i < values.size(); ++i)
                if (step <= 0 || values[i] - values[i - 1] != step) return fail(n.Mark(), "a list of values must be an increasing arithmetic progression");
        } else {
            std::string text = n.as<std::string>();
            char dots1 = 0, dots2 = 0, slash = 0, rest = 0;
            int parsed = std::sscanf(text.c_str(), "%d%c%c%d%c%d%c", &lo, &dots1, &dots2, &hi, &slash, &step, &rest);
            if (parsed == 1) hi = lo, step = 1;
            else if (parsed != 6 || dots1 != '.' || dots2 != '.' || slash != '/' || step <= 0 || hi < lo)
                return fail(n.Mark(), "expected a number, a list, or LO..HI/STEP");
        }
        return "{" + std::to_string(lo) + ", " + std::to_string(hi) + ", " + std::to_string(step) + "}";
    }

    std::string first(const YAML::Node &n) {
        if (n.IsSequence()) return n.size() ? std::to_string(n[0].as<int>()) : "0";
        int v = 0;
        std::sscanf(n.as<std::string>().c_str(), "%d", &v);
        return std::to_string(v);
    }

    std::string dtypes(const YAML::Node &n) {
        std::vector<std::string> names;
        if (n.IsSequence())
            for (const YAML::Node &v : n) names.push_back(v.as<std::string>());
        else
            names.push_back(n.as<std::string>());
        uint32_t set = 0;
        for (const std::string &name : names) {
            std::optional<DType> t = dtypeFromName(name);
            if (!t) return fail(n.Mark(), "unknown dtype '" + name + "'");
            set |= 1u << static_cast<unsigned>(*t);
        }
        return std::to_string(set) + "u";
    }

    // {dtype: code, ...} as the initializer of a per-dtype array (-1: none).
    std::string codes(const YAML::Node &n) {
        std::vector<int> values(kDTypeCount, -1);
        if (n && !n.IsMap()) return fail(n.Mark(), "expected a map from dtypes to codes");
        if (n)
            for (auto kv = n.begin(); kv != n.end(); ++kv) {
                std::optional<DType> t = dtypeFromName(kv->first.as<std::string>());
                if (!t) return fail(kv->first.Mark(), "unknown dtype '" + kv->first.as<std::string>() + "'");
                values[static_cast<size_t>(*t)] = kv->second.as<int>();
            }
        std::string out;
        for (int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
        return "{{" + out + "}}";
    }

    std::string locations(const YAML::Node &n) {
        std::vector<std::string> names;
        if (n.IsSequence())
            for (const YAML::Node &v : n) names.push_back(v.as<std::string>());
        else
            names.push_back(n.as<std::string>());
        std::string out;
        for (const std::string &name : names) {
            std::string bit = name == "registers" ? "kRegisters" : name == "shared" ? "kShared" : name == "tmem" ? "kTMem" : "";
            if (bit.empty()) return fail(n.Mark(), "unknown location '" + name + "' (registers, shared or tmem)");
            out += (out.empty() ? "" : " | ") + bit;
        }
        return "uint8_t(" + out + ")";
    }

    FileId file_;
    DiagnosticEngine &diags_;
    bool failed_ = false;
};

std::string targetInitializer(const Target &t) {
    std::string features;
    for (bool f : t.features) features += std::string(features.empty() ? "" : ", ") + (f ? "true" : "false");
    std::ostringstream out;
    out << "        {" << quoted(t.name) << ", " << t.arch << ", " << quoted(t.family) << ", " << quoted(t.gencode) << ", "
        << (t.exactCapability ? "true" : "false") << ", {" << features << "}, " << t.maxSharedPerBlock << ", " << t.registersPerSm << ", "
        << t.maxRegistersPerThread << ", " << t.maxThreadsPerBlock << ", " << t.maxClusterSize << ", " << t.smCount << "},\n";
    return out.str();
}

std::optional<std::string> readFile(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 4) {
        std::cerr << "usage: " << argv[0] << " TARGETS.yaml INSTRUCTIONS.yaml OUT.cpp\n";
        return 2;
    }
    SourceManager sources;
    DiagnosticEngine diags(sources, std::cerr);
    std::optional<std::string> targetText = readFile(argv[1]), instructionText = readFile(argv[2]);
    if (!targetText || !instructionText) {
        std::cerr << argv[0] << ": cannot read " << (targetText ? argv[2] : argv[1]) << "\n";
        return 1;
    }
    std::map<std::string, Target> targets;
    readTargets(sources.add(argv[1], *targetText), *targetText, targets, diags);

    FileId instructionFile = sources.add(argv[2], *instructionText);
    EntryReader entries(instructionFile, diags);
    std::string instructionRows;
    try {
        YAML::Node root = YAML::Load(*instructionText);
        if (!root.IsMap()) diags.error(at(instructionFile, root.Mark()), "an instruction file is a map from helper keys to their properties");
        else
            for (auto it = root.begin(); it != root.end(); ++it) instructionRows += entries.read(it->first.as<std::string>(), it->second, it->first.Mark());
    } catch (const YAML::Exception &e) {
        diags.error(at(instructionFile, e.mark), "malformed instruction file: " + e.msg);
    }
    if (diags.errorCount()) return 1;

    std::vector<const Target *> sorted;
    for (const auto &[name, t] : targets) sorted.push_back(&t);
    std::stable_sort(sorted.begin(), sorted.end(), [](const Target *x, const Target *y) { return x->arch < y->arch; });
    std::string targetRows;
    for (const Target *t : sorted) targetRows += targetInitializer(*t);

    std::string out = "// Generated by tilet-generate-tables from templates/targets.yaml and\n"
                      "// templates/instructions.yaml. Do not edit.\n"
                      "#include \"target/Catalog.h\"\n\n"
                      "namespace tilet {\n\n"
                      "const std::vector<Target> &builtinTargets() {\n"
                      "    static const std::vector<Target> targets = {\n" +
                      targetRows +
                      "    };\n"
                      "    return targets;\n"
                      "}\n\n"
                      "namespace catalog {\n\n"
                      "namespace {\n"
                      "const Instruction kInstructions[] = {\n" +
                      instructionRows +
                      "};\n"
                      "} // namespace\n\n"
                      "std::span<const Instruction> all() { return kInstructions; }\n\n"
                      "} // namespace catalog\n"
                      "} // namespace tilet\n";
    std::string temporary = std::string(argv[3]) + ".tmp";
    {
        std::ofstream file(temporary, std::ios::binary);
        file << out;
        if (!file) {
            std::cerr << argv[0] << ": cannot write " << temporary << "\n";
            return 1;
        }
    }
    if (std::rename(temporary.c_str(), argv[3]) != 0) {
        std::cerr << argv[0] << ": cannot write " << argv[3] << "\n";
        return 1;
    }
    return 0;
}

#pragma GCC diagnostic pop
