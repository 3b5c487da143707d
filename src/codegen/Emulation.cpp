// Emulation.cpp -- see Emulation.h. Each rewrite works on one line (the
// generated code puts each statement and declaration on its own), so no
// pattern runs over the whole file.
#include "codegen/Emulation.h"

#include "target/Catalog.h"

#include "support/InternalError.h"

#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace tilet {

namespace {

std::vector<std::string> splitLines(const std::string &text) {
    std::vector<std::string> lines;
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) lines.push_back(line);
    if (!text.empty() && text.back() == '\n') lines.push_back("");
    return lines;
}

std::string joinLines(const std::vector<std::string> &lines) {
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
    return out;
}

// Every match of `re` in `s` replaced by `f(match)`.
std::string replaceAll(const std::string &s, const std::regex &re, const std::function<std::string(const std::smatch &)> &f) {
    std::string out;
    auto begin = std::sregex_iterator(s.begin(), s.end(), re);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
        out += s.substr(last, static_cast<size_t>(it->position()) - last) + f(*it);
        last = static_cast<size_t>(it->position() + it->length());
    }
    return out + s.substr(last);
}

std::string replaceText(std::string s, const std::string &from, const std::string &to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

// The C++ operand type of an mma/wgmma helper's type suffix.
std::string operandType(const std::string &suffix) {
    static const std::map<std::string, std::string> types = {
        {"f16", "__half"}, {"bf16", "__nv_bfloat16"}, {"tf32", "float"}, {"s8", "signed char"}, {"u8", "unsigned char"},
        {"s4", "emu::S4"}, {"u4", "emu::U4"}, {"e4m3", "__nv_fp8_e4m3"}, {"e5m2", "__nv_fp8_e5m2"}};
    auto it = types.find(suffix);
    TILET_ASSERT(it != types.end(), "the emulator has no operand type for '" << suffix << "'");
    return it->second;
}

// mma.sync helpers are named by their catalog entries: each becomes emu.h's
// model of its shape and operand type ({helper call, model call}).
const std::vector<std::pair<std::string, std::string>> &mmaModels() {
    static const std::vector<std::pair<std::string, std::string>> models = [] {
        static const std::map<DType, std::string> types = {
            {DType::F16, "__half"}, {DType::BF16, "__nv_bfloat16"}, {DType::F32, "float"}, {DType::TF32, "float"}, {DType::Int8, "signed char"},
            {DType::UInt8, "unsigned char"}, {DType::Int4, "emu::S4"}, {DType::UInt4, "emu::U4"}, {DType::F8E4M3, "__nv_fp8_e4m3"},
            {DType::F8E5M2, "__nv_fp8_e5m2"}};
        std::vector<std::pair<std::string, std::string>> out;
        for (const Instruction &i : catalog::all()) {
            // Block-scaled: the forms lower-gemms generates, packed e2m1 with four
            // factors to a k-step (kind::mxf4nvf4) and 8-bit operands with one.
            if (i.cls == InstrClass::MmaSync && i.blockScaled()) {
                for (DType t : {DType::F4E2M1, DType::F8E4M3, DType::F8E5M2}) {
                    bool packedForm = dtypeBits(t) == 4 && !i.subBytePadded;
                    if (!i.takes(i.a, t) || (dtypeBits(t) != 8 && !packedForm)) continue;
                    std::string type = t == DType::F4E2M1 ? "emu::E2M1" : types.at(t);
                    out.push_back({"tilet_" + catalog::helperKey(i, t) + "(", "emu::mmaBlockScaled<" + std::to_string(i.m.lo) + ", " +
                                                                               std::to_string(i.n.lo) + ", " + std::to_string(i.k.lo) + ", " + type +
                                                                               ", " + std::to_string(i.scaleVec) + ">("});
                }
                continue;
            }
            if (i.cls != InstrClass::MmaSync || i.blockScaled() || i.layout != FragmentLayout::MmaM16N8) continue;
            unsigned first = static_cast<unsigned>(__builtin_ctz(i.a));   // f32 before tf32: both are floats to the model
            auto type = types.find(static_cast<DType>(first));
            if (type == types.end()) continue;   // the model has no such operand type: tilet does not lower it either
            out.push_back({"tilet_" + std::string(i.name) + "(", "emu::mma<" + std::to_string(i.m.lo) + ", " + std::to_string(i.n.lo) + ", " +
                                                                   std::to_string(i.k.lo) + ", " + type->second + ">("});
        }
        return out;
    }();
    return models;
}

// The lines between a begin marker (prefix) and its end marker, each kept by `keep`.
void forEachBlock(std::vector<std::string> &lines, const std::string &begin, const std::string &end,
                  const std::function<void(std::vector<std::string> &, size_t, size_t)> &block) {
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].rfind(begin, 0) != 0) continue;
        size_t j = i + 1;
        while (j < lines.size() && lines[j].rfind(end, 0) != 0) ++j;
        block(lines, i, j);
        i = j;
    }
}

// The C text from `from` on, as `visit(i, c)` sees each character outside
// string literals with the parenthesis depth then (an opening one counts
// from itself on); stops where `visit` returns false. Returns where it stopped.
size_t scanCode(const std::string &text, size_t from, const std::function<bool(size_t, char, int)> &visit) {
    int depth = 0;
    bool quote = false;
    for (size_t i = from; i < text.size(); ++i) {
        char c = text[i];
        if (quote) {
            if (c == '\\') ++i;   // an escape: the next character is literal
            else if (c == '"') quote = false;
            continue;
        }
        if (c == '"') {
            quote = true;
            continue;
        }
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (!visit(i, c, depth)) return i;
    }
    return text.size();
}

// `text` cut at each `sep` outside parentheses and string literals.
std::vector<std::string> splitTop(const std::string &text, char sep) {
    std::vector<std::string> parts;
    size_t start = 0;
    scanCode(text, 0, [&](size_t i, char c, int depth) {
        if (c == sep && depth == 0) {
            parts.push_back(text.substr(start, i - start));
            start = i + 1;
        }
        return true;
    });
    parts.push_back(text.substr(start));
    return parts;
}

// One single-instruction asm statement `asm volatile("op.t %0, %1, ...;" :
// "=r"(d) : "r"(a), ...)` as `emu::ptx::op_t(d, a, ...)`: the operands in the
// template's order (destinations first).
std::string asmCall(const std::string &body) {
    std::vector<std::string> sections = splitTop(body, ':');
    std::string templ;
    static const std::regex literal(R"re("((?:[^"\\]|\\.)*)")re");
    for (auto it = std::sregex_iterator(sections[0].begin(), sections[0].end(), literal); it != std::sregex_iterator(); ++it) templ += (*it)[1];
    templ = replaceText(replaceText(templ, "\\n", ""), "\\t", " ");
    std::vector<std::string> operands;
    static const std::regex operand(R"re(\s*"[^"]*"\s*\(([\s\S]*)\)\s*$)re");
    for (size_t s = 1; s < sections.size() && s < 3; ++s) {
        for (const std::string &item : splitTop(sections[s], ',')) {
            std::smatch m;
            if (std::regex_match(item, m, operand)) operands.push_back(m[1]);
        }
    }
    static const std::regex instruction(R"re(\s*([\w.]+)\s+([^;]*);?\s*)re");
    std::smatch m;
    if (!std::regex_match(templ, m, instruction))
        throw std::runtime_error("the emulator models one PTX instruction per asm statement, not: " + templ);
    std::string args, name = replaceText(m[1], ".", "_");
    static const std::regex placeholder(R"(%(\d+))");
    std::string list = m[2];
    for (auto it = std::sregex_iterator(list.begin(), list.end(), placeholder); it != std::sregex_iterator(); ++it) {
        size_t k = std::stoul((*it)[1]);
        if (k >= operands.size()) throw std::runtime_error("asm operand %" + std::to_string(k) + " has no constraint: " + templ);
        args += (args.empty() ? "" : ", ") + operands[k];
    }
    return "emu::ptx::" + name + "(" + args + ")";
}

// Every asm statement of `code` as a call of its instruction's model, on as many lines.
std::string rewriteAsm(const std::string &code) {
    static const std::regex start(R"(\basm\s*(?:volatile\s*)?\()");
    std::string out;
    size_t pos = 0;
    for (auto it = std::sregex_iterator(code.begin(), code.end(), start); it != std::sregex_iterator(); ++it) {
        size_t at = static_cast<size_t>(it->position());
        if (at < pos) continue;
        size_t open = at + static_cast<size_t>(it->length()) - 1;   // the statement's '('
        size_t close = scanCode(code, open, [](size_t, char c, int depth) { return !(c == ')' && depth == 0); });
        std::string body = code.substr(open + 1, close - open - 1);
        out += code.substr(pos, at - pos) + asmCall(body) + std::string(static_cast<size_t>(std::count(body.begin(), body.end(), '\n')), '\n');
        pos = close + 1;
    }
    return out + code.substr(pos);
}

// `{start, "file", line}` for each #line directive of the .cu: the line after
// it is `line` of `file` (the .cu's own name: "", its own lines again).
std::string sourceSegments(const std::vector<std::string> &lines, const std::string &cuName) {
    static const std::regex directive(R"re(#line (\d+) "((?:[^"\\]|\\.)*)")re");
    std::string table;
    for (size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (!std::regex_match(lines[i], m, directive)) continue;
        std::string file = m[2] == cuName ? "" : m[2].str();
        table += (table.empty() ? "" : ", ") + ("{" + std::to_string(i + 2) + ", \"" + file + "\", " + m[1].str() + "}");
    }
    return table;
}

std::string rewriteDevice(const std::string &cu) {
    std::vector<std::string> lines = splitLines(cu);
    // The PTX helpers give way to emu.h's models; #line directives into the
    // .tl go (the detector and the mutation test count .cu lines).
    forEachBlock(lines, "// ---- PTX helpers", "// ---- end of PTX helpers ----", [](std::vector<std::string> &l, size_t b, size_t e) {
        for (size_t k = b; k <= e && k < l.size(); ++k) l[k].clear();
    });
    for (std::string &line : lines)
        if (line.rfind("#line ", 0) == 0) line.clear();
    forEachBlock(lines, "// ---- imported source ", "// ---- end of imported source ", [](std::vector<std::string> &l, size_t b, size_t e) {
        std::vector<std::string> inner(l.begin() + static_cast<long>(b) + 1, l.begin() + static_cast<long>(e));
        std::vector<std::string> rewritten = splitLines(rewriteAsm(joinLines(inner)));
        for (size_t k = 0; k < inner.size(); ++k) l[b + 1 + k] = k < rewritten.size() ? rewritten[k] : "";
    });

    static const std::regex smem(R"(extern __shared__ __align__\(\d+\) unsigned char tilet_smem\[\];)");
    static const std::regex declaration(R"(([A-Za-z_][\w: ]*?)\* (\w+) = reinterpret_cast<\1\*>\(tilet_smem \+ (.+?)\);)");
    static const std::regex remote(R"([A-Za-z_][\w: ]*?\* (\w+) = tilet_map_shared_rank\()");
    std::set<std::string> shared;
    for (std::string &line : lines) {
        line = std::regex_replace(line, smem, "emu::SharedPtr<unsigned char> tilet_smem = emu::sharedBase();");
        line = replaceAll(line, declaration, [&](const std::smatch &m) {
            shared.insert(m[2]);
            return "emu::SharedPtr<" + m[1].str() + "> " + m[2].str() + " = tilet_smem.as<" + m[1].str() + ">(" + m[3].str() + ", \"" + m[2].str() + "\");";
        });
        line = replaceAll(line, remote, [&](const std::smatch &m) {
            shared.insert(m[1]);
            return "auto " + m[1].str() + " = tilet_map_shared_rank(";
        });
    }
    if (!shared.empty()) {
        std::string names;
        for (const std::string &n : shared) names += (names.empty() ? "" : "|") + n;
        std::regex cast("reinterpret_cast<(?:const )?([\\w: ]+?)\\*>\\(&(" + names + ")\\[");
        for (std::string &line : lines) line = std::regex_replace(line, cast, "emu::sharedCast<$1>(&$2[");
    }
    static const std::regex sync(R"(^(\s*)((?:__syncthreads\(\)|__syncwarp\(\)|tilet_named_barrier\(.*\)|tilet_mbarrier_wait(?:_cluster)?\(.*\))"
                                 R"(|tilet_mbarrier_arrive(?:_cluster|_expect_tx)?\(.*\)|tilet_fence_proxy_async(?:_all)?\(\))"
                                 R"(|tilet_fence_barrier_init\(\)|tilet_cluster_sync\(\)|tilet_wgmma_wait<\d+>\(\))"
                                 R"(|tilet_cp_async_wait<\d+>\(\)|tilet_tma_store_wait\(\));)\s*$)");
    static const std::regex dp4a(R"(\btilet_dp4a_([su])8_([su])8\()");
    static const std::regex ldmatrix(R"(tilet_ldmatrix_x(\d)(_trans)?\()");
    static const std::regex stmatrix(R"(tilet_stmatrix_x(\d)\()");
    static const std::regex cpAsync(R"(tilet_cp_async_(\d+)\()");
    static const std::regex tmemLoad(R"(tilet_tmem_(load|store)_(32x32b|16x256b)_x(\d+)\()");
    static const std::regex atomic(R"(\btilet_atomic_add_(?:relaxed|acquire|release|acq_rel|seq_cst)_(?:f16|bf16|f32|f64|s32|u32|s64|u64)\()");
    static const std::regex atomicAccess(R"(\btilet_atomic_(load|store)_(?:relaxed|acquire|release|seq_cst)_(?:f32|f64|s32|u32|s64|u64)\()");
    static const std::regex wgmma(R"(tilet_wgmma_m(\d+)n(\d+)k(\d+)_([a-z0-9]+)_([a-z0-9]+?)(?:_(e4m3|e5m2|s8|u8|f16|bf16|tf32))?(_rs)?<(\d), (\d)>\()");
    static const std::regex tmaLoad(R"(tilet_tma_load_\dd\()"), tmaMulticast(R"(tilet_tma_load_\dd_multicast\()"), tmaStore(R"(tilet_tma_store_\dd\()"),
        tmaReduceAdd(R"(tilet_tma_reduce_add_\dd\()");
    auto flag = [](bool b) { return b ? std::string("true") : std::string("false"); };
    for (std::string &line : lines) {
        std::smatch m;
        if (std::regex_match(line, m, sync)) line = m[1].str() + "if (emu::keep(__LINE__)) " + m[2].str();
        line = replaceAll(line, dp4a, [&](const std::smatch &x) { return "emu::dp4a<" + flag(x[1] == "s") + ", " + flag(x[2] == "s") + ">("; });
        line = replaceAll(line, ldmatrix, [&](const std::smatch &x) { return "emu::ldmatrix<" + x[1].str() + ", " + flag(x[2].matched) + ">("; });
        line = replaceAll(line, stmatrix, [&](const std::smatch &x) { return "emu::stmatrix<" + x[1].str() + ">("; });
        if (line.find("tilet_mma_") != std::string::npos)
            for (const auto &[helper, model] : mmaModels()) line = replaceText(line, helper, model);
        line = std::regex_replace(line, cpAsync, "emu::cpAsync<$1>(");
        line = replaceText(line, "tilet_cp_async_commit(", "emu::cpAsyncCommit(");
        // Every memory order is sequentially consistent in the emulator.
        line = std::regex_replace(line, atomic, "atomicAdd(");
        line = replaceAll(line, atomicAccess, [](const std::smatch &x) { return std::string(x[1] == "load" ? "emu::atomicLoad(" : "emu::atomicStore("); });
        // tilet_wgmma_m64nNkK_ACC_A[_B][_rs]: B's type is named only when it differs from A's; _rs: A from registers.
        line = replaceAll(line, wgmma, [&](const std::smatch &x) {
            return std::string("emu::wgmma") + (x[7].matched ? "RS" : "") + "<" + x[1].str() + ", " + x[2].str() + ", " + x[3].str() + ", " +
                   operandType(x[5]) + ", " + operandType(x[6].matched ? x[6].str() : x[5].str()) + ", " + x[8].str() + ", " + x[9].str() + ">(";
        });
        line = replaceText(line, "tilet_wgmma_desc(", "emu::wgmmaDesc(");
        line = std::regex_replace(line, tmemLoad, "emu::tmem_$1_$2<$3>(");
        line = replaceText(line, "tilet_tma_load_im2col_4d(", "emu::tmaLoadIm2col(");
        line = std::regex_replace(line, tmaMulticast, "emu::tmaLoadMulticast(");
        line = std::regex_replace(line, tmaLoad, "emu::tmaLoad(");
        line = std::regex_replace(line, tmaStore, "emu::tmaStore(");
        line = std::regex_replace(line, tmaReduceAdd, "emu::tmaReduceAdd(");
        line = replaceText(line, "const __grid_constant__ CUtensorMap", "const CUtensorMap");
        line = replaceText(line, "tilet_cp_async_wait<", "emu::cpAsyncWait<");
    }
    return joinLines(lines);
}

// The emulated device is the one the module was translated for (its banner names it).
std::string rewriteHost(std::string host, const std::string &cu) {
    static const std::regex banner(R"(generated by tilet from .* for sm_(\d+)a?\.)");
    std::smatch m;
    int arch = std::regex_search(cu.begin(), cu.begin() + static_cast<long>(std::min<size_t>(cu.size(), 400)), m, banner) ? std::stoi(m[1]) : 80;
    host = replaceText(host, "cudaDeviceGetAttribute(", "emu::deviceGetAttribute<" + std::to_string(arch / 10) + ", " + std::to_string(arch % 10) + ">(");
    host = replaceText(host, "cudaLaunchKernelEx(", "emu::launchEx(");
    host = replaceText(host, "cudaFuncSetAttribute(", "emu::funcSetAttribute(");
    host = replaceText(host, "cudaGetDevice(", "emu::getDevice(");
    host = replaceText(host, "cudaGetErrorString(", "emu::errorString(");
    return replaceText(host, "cudaGetDriverEntryPointByVersion(", "emu::getDriverEntryPoint(");
}

} // namespace

std::string emulatedSource(const std::string &cu, const std::string &host, const std::string &cuName, const std::string &hostName) {
    // The kernels, by the line of their name (the line after `extern "C" __global__`), for the detector's reports.
    std::vector<std::string> lines = splitLines(cu);
    std::string table;
    static const std::regex name(R"(\s*(\w+)\(.*)");
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
        std::smatch m;
        if (lines[i].rfind("extern \"C\" __global__", 0) == 0 && std::regex_match(lines[i + 1], m, name))
            table += (table.empty() ? "" : ", ") + ("{" + std::to_string(i + 2) + ", \"" + m[1].str() + "\"}");
    }
    return "#include \"emu.h\"\n#line 1 \"" + cuName + "\"\n" + rewriteDevice(cu) + "\nstatic const bool emu_kernels_registered = emu::rc::registerKernels(\"" +
           cuName + "\", {" + table + "});\nstatic const bool emu_sources_registered = emu::rc::registerSourceLines({" + sourceSegments(lines, cuName) +
           "});\n#line 1 \"" + hostName + "\"\n" + rewriteHost(host, cu);
}

} // namespace tilet
