// HostPrinter.cpp -- see HostPrinter.h.
//
// A launch function checks what the kernel assumes (dynamic sizes are not
// negative, tensors are aligned for the widest vector access the kernel
// makes, the grid fits the hardware limits) and returns the CUDA error
// instead of launching when an assumption fails.
#include "codegen/HostPrinter.h"

#include "codegen/CSyntax.h"
#include "support/Embedded.h"

#include <algorithm>
#include <set>

namespace tilet {

namespace {

// The launch function's parameter list (C types, no __restrict__) and the
// argument list it forwards to the kernel.
struct Signature {
    std::string params;
    std::string cParams;   // the launch function's parameters for C callers (cStorageType)
    std::string args;
    std::string deviceParams;
};

Signature signatureOf(const ir::Kernel &k, NameTable &names) {
    Signature s;
    for (const ir::Param &p : k.params) {
        std::string name = p.kind == ir::ParamKind::Tensor ? names.buffer(p.tensor.get()) : names.var(p.var.get());
        std::string type = p.kind == ir::ParamKind::Tensor ? std::string(p.tensor->readOnly ? "const " : "") + cType(p.tensor->dtype) + "*"
                                                           : cType(p.var->dtype);
        std::string devType = p.kind == ir::ParamKind::Tensor && !k.usesPdl ? type + " __restrict__" : type;
        std::string cTypeText = p.kind == ir::ParamKind::Tensor ? std::string(p.tensor->readOnly ? "const " : "") + cStorageType(p.tensor->dtype) + "*"
                                                                : cStorageType(p.var->dtype);
        auto join = [](std::string &list, const std::string &item) { list += (list.empty() ? "" : ", ") + item; };
        join(s.params, type + " " + name);
        join(s.cParams, cTypeText + " " + name);
        join(s.deviceParams, devType + " " + name);
        join(s.args, name);
    }
    // Tensor maps: kernel parameters the launch function encodes.
    for (const ir::TmaDescriptorRef &d : k.tmaDescriptors) {
        std::string name = names.var(d->param.get());
        s.deviceParams += (s.deviceParams.empty() ? "" : ", ") + std::string("const CUtensorMap ") + name;
        s.args += (s.args.empty() ? "" : ", ") + name;
    }
    std::string sep = s.params.empty() ? "" : ", ";
    s.params += sep + "cudaStream_t stream";
    s.cParams += sep + "cudaStream_t stream";
    return s;
}

const char *tensorMapType(DType t) {
    switch (t) {
    case DType::F16: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case DType::BF16: return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case DType::F32:
    case DType::TF32: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    case DType::F64: return "CU_TENSOR_MAP_DATA_TYPE_FLOAT64";
    case DType::Int32: return "CU_TENSOR_MAP_DATA_TYPE_INT32";
    case DType::UInt32: return "CU_TENSOR_MAP_DATA_TYPE_UINT32";
    case DType::Int64: return "CU_TENSOR_MAP_DATA_TYPE_INT64";
    case DType::UInt64: return "CU_TENSOR_MAP_DATA_TYPE_UINT64";
    default: return dtypeBits(t) == 16 ? "CU_TENSOR_MAP_DATA_TYPE_UINT16" : "CU_TENSOR_MAP_DATA_TYPE_UINT8";   // bytes moved as they are
    }
}

const char *tensorMapSwizzle(ir::SharedSwizzle s) {
    switch (s) {
    case ir::SharedSwizzle::None: return "CU_TENSOR_MAP_SWIZZLE_NONE";
    case ir::SharedSwizzle::B32: return "CU_TENSOR_MAP_SWIZZLE_32B";
    case ir::SharedSwizzle::B64: return "CU_TENSOR_MAP_SWIZZLE_64B";
    case ir::SharedSwizzle::B128: return "CU_TENSOR_MAP_SWIZZLE_128B";
    }
    return "CU_TENSOR_MAP_SWIZZLE_NONE";
}

// Declares and encodes each tensor map of `k`; returns the error on failure.
void encodeTensorMaps(const ir::Kernel &k, const std::string &launchName, NameTable &names, ExprPrinter &ep, Emitter &out) {
    for (const ir::TmaDescriptorRef &d : k.tmaDescriptors) {
        const ir::BufferNode &t = *d->tensor;
        std::string name = names.var(d->param.get());
        size_t rank = t.shape.size();
        std::string sizes, strides, box;
        std::string stride = std::to_string(dtypeBits(t.dtype) / 8);
        for (size_t i = 0; i < rank; ++i) {
            const ir::Expr &dim = t.shape[rank - 1 - i];
            sizes += (i ? ", " : "") + std::string("static_cast<cuuint64_t>(") + ep.print(dim) + ")";
            box += (i ? ", " : "") + std::to_string(d->box[i]);
            if (i + 1 < rank) {
                stride = "static_cast<cuuint64_t>(" + ep.print(dim) + ") * " + stride;
                strides += (i ? ", " : "") + stride;
            }
        }
        out.line("// " + name + ": boxes of " + std::to_string(d->box.size()) + "-d tiles of '" + t.name + "' (sizes and box innermost first)");
        out.line("CUtensorMap " + name + ";");
        out.line("const cuuint64_t " + name + "_sizes[" + std::to_string(rank) + "] = {" + sizes + "};");
        out.line("const cuuint64_t " + name + "_strides[" + std::to_string(std::max<size_t>(rank - 1, 1)) + "] = {" + (strides.empty() ? "0" : strides) + "};");
        out.line("const cuuint32_t " + name + "_box[" + std::to_string(rank) + "] = {" + box + "};");
        out.line("const cudaError_t " + name + "_status = tilet_encode_tensor_map(&" + name + ", " + tensorMapType(t.dtype) + ", " +
                 std::to_string(rank) + ", " + names.buffer(&ir::storageRoot(*d->tensor)) + ", " + name + "_sizes, " + name + "_strides, " + name + "_box, " +
                 tensorMapSwizzle(d->swizzle) + ");");
        out.line("if (" + name + "_status != cudaSuccess)");
        out.line("    return tilet_fail(" + name + "_status, \"" + launchName + ": TMA cannot describe tensor '" + names.buffer(&ir::storageRoot(t)) +
                 "' (cuTensorMapEncodeTiled: 16-byte aligned base, every row a multiple of 16 bytes, at most 2^32 elements per dimension)\");");
    }
}

// The functions the launch functions share (templates/host/checks.cpp): the
// thread's last error message, and the device check, once per device. The
// target's machine code (code=sm_XY) runs on compute capability X.Y and
// later minor versions of X; that of the architecture-specific targets
// (`exact_capability`: sm_90a, sm_100a, sm_120a) on X.Y alone (CUDA C++
// Programming Guide, "Binary Compatibility").
void printCheckSupport(const Target &target, const OutputNames &names, Emitter &out) {
    std::string major = std::to_string(target.arch / 10), minor = std::to_string(target.arch % 10);
    out.raw(fillTemplate(embedded::get("host/checks.cpp"),
                         {{"module", names.symbolPrefix + names.moduleName},
                          {"target", target.name},
                          {"capability", major + "." + minor + (target.exactCapability ? "" : " or a later " + major + ".x")},
                          {"runs", "major == " + major + " && minor " + (target.exactCapability ? "== " : ">= ") + minor}}));
}

std::string dimsText(const ir::BufferNode &b) {
    std::string s = "[";
    for (size_t i = 0; i < b.shape.size(); ++i) {
        if (i) s += ", ";
        if (std::optional<int64_t> v = ir::constInt(b.shape[i])) s += std::to_string(*v);
        else if (const ir::Var *var = ir::as<ir::Var>(b.shape[i])) s += var->name;
        else s += "?";
    }
    return s + "]";
}

std::set<std::string> tensorHeaders(const ir::Module &m) {
    std::set<std::string> out;
    for (const ir::Kernel &k : m.kernels) {
        for (const ir::Param &p : k.params) {
            std::string h = cTypeHeader(p.kind == ir::ParamKind::Tensor ? p.tensor->dtype : p.var->dtype);
            if (!h.empty()) out.insert(h);
        }
    }
    return out;
}

std::map<std::string, std::string> templateValues(const ir::Module &m, const Target &t, const OutputNames &n) {
    return {{"cu", n.cuFile}, {"host", n.hostFile}, {"header", n.headerFile}, {"source", m.sourceName},
            {"target", t.name}, {"gencode", t.gencode}, {"module", n.symbolPrefix + n.moduleName}};
}

} // namespace

std::string printHostHeader(const ir::Module &module, const Target &target, const OutputNames &names) {
    std::map<std::string, std::string> values = templateValues(module, target, names);
    std::string includes;
    for (const std::string &h : tensorHeaders(module)) includes += "#include <" + h + ">\n";
    values["includes"] = includes;
    Emitter out;
    out.raw(fillTemplate(embedded::get("host/header_prologue.h"), values));
    for (const ir::Kernel &k : module.kernels) {
        NameTable names2;
        Signature sig = signatureOf(k, names2);
        out.blank();
        std::string grid;
        ExprPrinter ep(names2);
        for (size_t i = 0; i < k.grid.size(); ++i) grid += (i ? ", " : "") + ep.print(k.grid[i]);
        out.line("// " + k.name + ": grid (" + grid + "), " + std::to_string(k.threads) + " threads per block, " +
                 std::to_string(k.dynamicSharedBytes) + " bytes of dynamic shared memory.");
        for (const ir::Param &p : k.params) {
            if (p.kind == ir::ParamKind::Tensor) {
                std::string line = "//   " + names2.buffer(p.tensor.get()) + ": " + std::string(dtypeName(p.tensor->dtype)) + " " +
                                   dimsText(*p.tensor) + (p.tensor->readOnly ? ", read" : ", written");
                if (p.tensor->alignment > 0) line += ", " + std::to_string(p.tensor->alignment) + "-byte aligned";
                out.line(line);
            } else if (p.kind == ir::ParamKind::Scalar) {
                out.line("//   " + names2.var(p.var.get()) + ": " + std::string(dtypeName(p.var->dtype)) + " scalar");
            } else {
                out.line("//   " + names2.var(p.var.get()) + ": dynamic dimension, at least 0" +
                         (p.var->divisor > 1 ? ", a multiple of " + std::to_string(p.var->divisor) + " (promised: dyn " + p.var->name + " % " +
                                                   std::to_string(p.var->divisor) + ")" : ""));
            }
        }
        bool promises = std::any_of(k.params.begin(), k.params.end(), [](const ir::Param &p) { return p.kind == ir::ParamKind::DynDim && p.var->divisor > 1; });
        out.line(std::string("// Returns cudaErrorInvalidValue for a negative dimension") + (promises ? " (or one that breaks its promise)" : "") +
                 " or a null tensor, cudaErrorMisalignedAddress");
        out.line("// for a misaligned tensor, cudaErrorNoKernelImageForDevice on a device that cannot run " + target.name + " code,");
        out.line("// cudaErrorInvalidConfiguration for a grid beyond the limits (" + names.symbolPrefix + names.moduleName + "_last_error() says which");
        out.line("// check failed, and why); an empty grid launches nothing and returns cudaSuccess.");
        // A tensor map over a tensor with a dynamic inner dimension: its strides are only known at launch.
        std::set<const ir::BufferNode *> told;
        for (const ir::TmaDescriptorRef &d : k.tmaDescriptors) {
            const ir::BufferNode &t = *d->tensor;
            bool dynamicRows = false;
            for (size_t i = 1; i < t.shape.size(); ++i) dynamicRows = dynamicRows || !ir::constInt(t.shape[i]);
            if (!dynamicRows || !told.insert(&ir::storageRoot(t)).second) continue;
            const ir::BufferNode &root = ir::storageRoot(t);
            out.line("// Also cudaErrorInvalidValue when TMA cannot describe '" + names2.buffer(&root) + "': each of its rows (the last");
            out.line("// dimension) must be a multiple of 16 bytes, " + std::to_string(128 / dtypeBits(root.dtype)) + " " + std::string(dtypeName(root.dtype)) +
                     " elements (cuTensorMapEncodeTiled).");
        }
        if (sig.cParams == sig.params) {
            out.line("cudaError_t " + names.symbolPrefix + k.name + "(" + sig.params + ");");
        } else {
            // C has no __half, __nv_bfloat16 or fp8 types (their headers declare C++ classes): a C
            // caller passes pointers to the elements' bits, the same pointers to the same function.
            out.line("#ifdef __cplusplus");
            out.line("cudaError_t " + names.symbolPrefix + k.name + "(" + sig.params + ");");
            out.line("#else");
            out.line("// C: 16-bit and 8-bit floats as pointers to their bits, bool as _Bool.");
            out.line("cudaError_t " + names.symbolPrefix + k.name + "(" + sig.cParams + ");");
            out.raw("#endif\n");
        }
    }
    out.raw(fillTemplate(embedded::get("host/header_epilogue.h"), values));
    return out.str();
}

std::string printHostSource(const ir::Module &module, const Target &target, const OutputNames &names) {
    Emitter out;
    out.raw(fillTemplate(embedded::get("host/source_prologue.cpp"), templateValues(module, target, names)));
    // Kernels that need an opt-in (init) get it once per device from their launch: tilet_init_once.
    auto needsOptIn = [](const ir::Kernel &k) {
        return k.dynamicSharedBytes > 48 * 1024 || (k.hasCluster && k.cluster[0] * k.cluster[1] * k.cluster[2] > 8);
    };
    bool optIn = std::any_of(module.kernels.begin(), module.kernels.end(), needsOptIn);
    out.line("#include <atomic>");
    out.line("#include <cstdarg>");
    out.line("#include <cstdio>");
    if (optIn) out.line("#include <mutex>");
    bool tma = false;
    for (const ir::Kernel &k : module.kernels) tma = tma || !k.tmaDescriptors.empty();
    if (tma) out.raw(std::string(embedded::get("host/tma_encode.cpp")));
    printCheckSupport(target, names, out);
    out.blank();
    out.line("// Kernels defined in " + names.cuFile + " (nvcc emits host stubs with these names).");
    for (const ir::Kernel &k : module.kernels) {
        NameTable n;
        out.line("extern \"C\" void " + deviceKernelName(k, names) + "(" + signatureOf(k, n).deviceParams + ");");
    }

    out.blank();
    out.open("extern \"C\" cudaError_t " + names.symbolPrefix + names.moduleName + "_init(void)");
    bool any = false;
    auto setAttribute = [&](const ir::Kernel &k, const std::string &attribute, int64_t value) {
        if (!any) out.line("cudaError_t err = cudaSuccess;");
        any = true;
        out.line("err = cudaFuncSetAttribute(reinterpret_cast<const void *>(&" + deviceKernelName(k, names) + "), " + attribute + ", " +
                 std::to_string(value) + ");");
        out.line("if (err != cudaSuccess) return err;");
    };
    for (const ir::Kernel &k : module.kernels) {
        if (!needsOptIn(k)) continue;
        if (k.dynamicSharedBytes > 48 * 1024) setAttribute(k, "cudaFuncAttributeMaxDynamicSharedMemorySize", k.dynamicSharedBytes);
        // Clusters of more than 8 blocks (up to 16) need the non-portable opt-in.
        if (k.hasCluster && k.cluster[0] * k.cluster[1] * k.cluster[2] > 8) setAttribute(k, "cudaFuncAttributeNonPortableClusterSizeAllowed", 1);
    }
    if (!any) out.line("// No kernel needs more than the default 48 KiB of dynamic shared memory or a cluster above 8 blocks.");
    out.line("return cudaSuccess;");
    out.close(names.symbolPrefix + names.moduleName + "_init");
    const std::string initName = names.symbolPrefix + names.moduleName + "_init";
    if (any) {
        // The launch functions do the opt-in themselves: no ritual before the first launch.
        out.blank();
        out.line("// " + initName + " once per device, before the first launch on it (thread-safe): a launch needs no");
        out.line("// call beforehand. Devices 64 and up take the lock on every launch (the opt-in is idempotent).");
        out.open("static cudaError_t tilet_init_once(void)");
        out.line("int device = 0;");
        out.line("cudaError_t err = cudaGetDevice(&device);");
        out.line("if (err != cudaSuccess) return err;");
        out.line("static std::atomic<unsigned long long> ready{0};");
        out.line("if (device < 64 && (ready.load(std::memory_order_acquire) >> device & 1)) return cudaSuccess;");
        out.line("static std::mutex lock;");
        out.line("std::lock_guard<std::mutex> guard(lock);");
        out.line("err = " + initName + "();");
        out.line("if (err == cudaSuccess && device < 64) ready.fetch_or(1ull << device, std::memory_order_release);");
        out.line("return err;");
        out.close("tilet_init_once");
    }

    for (const ir::Kernel &k : module.kernels) {
        NameTable n;
        Signature sig = signatureOf(k, n);
        ExprPrinter ep(n);
        out.blank();
        const std::string launchName = names.symbolPrefix + k.name;
        out.open("extern \"C\" cudaError_t " + launchName + "(" + sig.params + ")");
        out.line("tilet_last_error[0] = '\\0';");
        // The parameters' checks: each failure says which, with the value found.
        out.raw("#ifndef TILET_NO_CHECKS\n");
        for (const ir::Param &p : k.params) {
            if (p.kind != ir::ParamKind::DynDim) continue;
            std::string v = n.var(p.var.get());
            out.line("if (" + v + " < 0)");
            out.line("    return tilet_fail(cudaErrorInvalidValue, \"" + launchName + ": dynamic dimension '" + v + "' is %lld; it must be at least 0\", static_cast<long long>(" + v + "));");
            if (p.var->divisor > 1) {
                std::string d = std::to_string(p.var->divisor);
                out.line("if (" + v + " % " + d + " != 0)");
                out.line("    return tilet_fail(cudaErrorInvalidValue, \"" + launchName + ": dynamic dimension '" + v + "' is %lld; the kernel was promised a multiple of " + d +
                         " (dyn " + p.var->name + " % " + d + ")\", static_cast<long long>(" + v + "));");
            }
        }
        for (const ir::Param &p : k.params) {
            if (p.kind != ir::ParamKind::Tensor) continue;
            const ir::BufferNode &t = *p.tensor;
            std::string name = n.buffer(&t), empty;
            for (const ir::Expr &d : t.shape)
                if (!ir::constInt(d)) empty += " && " + ep.print(d) + " != 0";   // a tensor with no elements may be null
            out.line("if (" + name + " == nullptr" + empty + ")");
            out.line("    return tilet_fail(cudaErrorInvalidValue, \"" + launchName + ": tensor '" + name + "' (" + std::string(dtypeName(t.dtype)) + " " + dimsText(t) + ") is a null pointer\");");
            if (t.alignment > 1) {
                out.line("if (reinterpret_cast<std::uintptr_t>(" + name + ") % " + std::to_string(t.alignment) + " != 0)");
                out.line("    return tilet_fail(cudaErrorMisalignedAddress, \"" + launchName + ": tensor '" + name + "' must be " + std::to_string(t.alignment) +
                         "-byte aligned (its vector or TMA accesses); its address %p is not\", static_cast<const void *>(" + name + "));");
            }
        }
        out.raw("#endif\n");
        static const char *axes[] = {"x", "y", "z"};
        std::vector<std::string> grid;
        for (size_t i = 0; i < 3; ++i) {
            std::string g = "grid_" + std::string(axes[i]);
            std::string value = i < k.grid.size() ? "static_cast<long long>(" + ep.print(k.grid[i]) + ")" : "1";
            out.line("const long long " + g + " = " + value + ";");
            grid.push_back(g);
        }
        out.line("if (grid_x == 0 || grid_y == 0 || grid_z == 0) return cudaSuccess;");
        out.line("if (grid_x < 0 || grid_y < 0 || grid_z < 0 || grid_x > 2147483647LL || grid_y > 65535 || grid_z > 65535)");
        out.line("    return tilet_fail(cudaErrorInvalidConfiguration, \"" + launchName +
                 ": the grid (%lld, %lld, %lld) is outside CUDA's limits (x up to 2^31 - 1, y and z up to 65535)\", grid_x, grid_y, grid_z);");
        if (k.hasCluster) {
            out.line("// The grid is made of whole " + std::to_string(k.cluster[0]) + " x " + std::to_string(k.cluster[1]) + " x " +
                     std::to_string(k.cluster[2]) + " clusters.");
            out.line("if (grid_x % " + std::to_string(k.cluster[0]) + " != 0 || grid_y % " + std::to_string(k.cluster[1]) + " != 0 || grid_z % " +
                     std::to_string(k.cluster[2]) + " != 0)");
            out.line("    return tilet_fail(cudaErrorInvalidConfiguration, \"" + launchName + ": the grid (%lld, %lld, %lld) is not made of whole " +
                     std::to_string(k.cluster[0]) + " x " + std::to_string(k.cluster[1]) + " x " + std::to_string(k.cluster[2]) +
                     " clusters\", grid_x, grid_y, grid_z);");
        }
        out.raw("#ifndef TILET_NO_CHECKS\n");
        out.line("const cudaError_t device_status = tilet_check_device(\"" + launchName + "\");");
        out.line("if (device_status != cudaSuccess) return device_status;");
        out.raw("#endif\n");
        encodeTensorMaps(k, launchName, n, ep, out);
        if (needsOptIn(k)) {
            out.line("const cudaError_t init_status = tilet_init_once();");
            out.line("if (init_status != cudaSuccess) return init_status;");
        }
        out.line("cudaLaunchConfig_t config = {};");
        out.line("config.gridDim = dim3(static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y), static_cast<unsigned>(grid_z));");
        out.line("config.blockDim = dim3(" + std::to_string(k.threads) + ", 1, 1);");
        out.line("config.dynamicSmemBytes = " + std::to_string(k.dynamicSharedBytes) + ";");
        out.line("config.stream = stream;");
        int attributes = (k.hasCluster ? 1 : 0) + (k.usesPdl ? 1 : 0);
        if (attributes > 0) {
            out.line("cudaLaunchAttribute attributes[" + std::to_string(attributes) + "] = {};");
            int a = 0;
            if (k.hasCluster) {
                std::string at = "attributes[" + std::to_string(a++) + "]";
                out.line(at + ".id = cudaLaunchAttributeClusterDimension;");
                out.line(at + ".val.clusterDim.x = " + std::to_string(k.cluster[0]) + ";");
                out.line(at + ".val.clusterDim.y = " + std::to_string(k.cluster[1]) + ";");
                out.line(at + ".val.clusterDim.z = " + std::to_string(k.cluster[2]) + ";");
            }
            if (k.usesPdl) {
                // Only for kernels that use PDL (TileLang sets it on every launch).
                std::string at = "attributes[" + std::to_string(a++) + "]";
                out.line(at + ".id = cudaLaunchAttributeProgrammaticStreamSerialization;");
                out.line(at + ".val.programmaticStreamSerializationAllowed = 1;");
            }
            out.line("config.attrs = attributes;");
            out.line("config.numAttrs = " + std::to_string(attributes) + ";");
        }
        out.line("return cudaLaunchKernelEx(&config, " + deviceKernelName(k, names) + (sig.args.empty() ? "" : ", " + sig.args) + ");");
        out.close(names.symbolPrefix + k.name);
    }
    return out.str();
}

} // namespace tilet
