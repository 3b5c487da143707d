// PythonPrinter.cpp -- see PythonPrinter.h. The generic part (tensor
// introspection, the checks, the ctypes call) is templates/python/binding.py;
// this file adds each kernel's parameter table, read from the IR: names,
// dtypes, shapes (constants or dynamic-dimension names), alignments.
#include "codegen/PythonPrinter.h"

#include "codegen/Emitter.h"
#include "support/Embedded.h"

#include <filesystem>

namespace tilet {

namespace {

std::string pyString(std::string_view s) {
    std::string q = "\"";
    for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
}

// A dimension: its constant, or the name of the dynamic dimension it is.
std::string pyDim(const ir::Expr &d) {
    if (std::optional<int64_t> v = ir::constInt(d)) return std::to_string(*v);
    if (const ir::Var *var = ir::as<ir::Var>(d)) return pyString(var->name);
    return "None";
}

} // namespace

std::string printPythonBinding(const Variants &variants, const OutputNames &names, const std::string &pyFile, bool cpu) {
    const ir::Module &module = variants.front().module;
    std::string stem = std::filesystem::path(pyFile).stem().string();
    std::string out = fillTemplate(embedded::get("python/binding.py"), {{"py", std::filesystem::path(pyFile).filename().string()},
                                                                         {"source", module.sourceName},
                                                                         {"target", targetList(variants)},
                                                                         {"header", names.headerFile},
                                                                         {"module", names.symbolPrefix + names.moduleName},
                                                                         {"pymodule", stem}});
    out += "\n\nKERNELS = [\n";
    for (size_t ki = 0; ki < module.kernels.size(); ++ki) {
        const ir::Kernel &k = module.kernels[ki];
        out += "    Kernel(" + pyString(k.name) + ", " + pyString(names.symbolPrefix + k.name) + ", [\n";
        std::string dyn;
        for (size_t pi = 0; pi < k.params.size(); ++pi) {
            const ir::Param &p = k.params[pi];
            if (p.kind == ir::ParamKind::DynDim) {
                dyn += (dyn.empty() ? "" : ", ") + pyString(p.var->name);
                continue;
            }
            if (p.kind == ir::ParamKind::SmCount) continue;   // the launch function queries it
            if (p.kind == ir::ParamKind::Scalar) {
                out += "        (\"scalar\", " + pyString(p.var->name) + ", " + pyString(dtypeName(p.var->dtype)) + "),\n";
                continue;
            }
            const ir::BufferNode &t = *p.tensor;
            std::string shape;
            for (const ir::Expr &d : t.shape) shape += pyDim(d) + ", ";
            out += "        (\"tensor\", " + pyString(t.name) + ", " + pyString(dtypeName(t.dtype)) + ", (" + shape + "), " +
                   std::to_string(std::max<int64_t>(requiredAlignment(variants, ki, pi), 1)) + "),\n";
        }
        out += "    ], [" + dyn + "]" + (cpu ? ", gpu=False" : "") + "),\n";
    }
    out += "]\n\n\n";
    out += "def load(path):\n";
    out += "    \"\"\"The library at `path` (built from " + module.sourceName + "): its launch functions as methods.\"\"\"\n";
    out += "    return Library(path, KERNELS, " + pyString(names.symbolPrefix + names.moduleName) + ")\n";
    return out;
}

} // namespace tilet
