// HostPrinter.cpp -- see HostPrinter.h.
//
// A launch function checks what the kernel assumes (dynamic sizes are not
// negative, tensors are aligned for the widest vector access the kernel
// makes, the grid fits the hardware limits) and returns the CUDA error
// instead of launching when an assumption fails.
#include "codegen/HostPrinter.h"

#include "codegen/CSyntax.h"
#include "support/Embedded.h"
#include "support/InternalError.h"

#include <algorithm>
#include <functional>
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
        // num_sms() is the launch function's to find out (printLaunch), not its caller's to give.
        if (p.kind != ir::ParamKind::SmCount) {
            join(s.params, type + " " + name);
            join(s.cParams, cTypeText + " " + name);
        }
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
        // Sizes count elements, strides bytes (packed rows: half their elements for 4-bit types, 3/4 for 6-bit ones).
        const int bits = dtypeBits(t.dtype);
        std::string stride = bits >= 8 ? std::to_string(bits / 8) : "";
        const std::string packedBytes = 8 % bits == 0 ? " / " + std::to_string(8 / bits) : " * " + std::to_string(bits) + " / 8";
        for (size_t i = 0; i < rank; ++i) {
            const ir::Expr &dim = t.shape[rank - 1 - i];
            sizes += (i ? ", " : "") + std::string("static_cast<cuuint64_t>(") + ep.print(dim) + ")";
            if (i < d->box.size()) box += (i ? ", " : "") + std::to_string(d->box[i]);   // (an im2col map has no tiled box)
            if (i + 1 < rank) {
                stride = "static_cast<cuuint64_t>(" + ep.print(dim) + ")" + (stride.empty() ? packedBytes : " * " + stride);
                strides += (i ? ", " : "") + stride;
            }
        }
        if (d->im2col) {
            // TMA's im2col mode: the corners and traversal stride of the filter windows.
            const ir::Im2colBox &b = *d->im2col;
            out.line("// " + name + ": im2col loads of " + std::to_string(b.pixelsPerColumn) + " pixels x " + std::to_string(b.channelsPerPixel) +
                     " channels of '" + t.name + "' (NHWC; sizes innermost first, corners W then H)");
            out.line("CUtensorMap " + name + ";");
            out.line("const cuuint64_t " + name + "_sizes[4] = {" + sizes + "};");
            out.line("const cuuint64_t " + name + "_strides[3] = {" + strides + "};");
            out.line("const int " + name + "_lower[2] = {" + std::to_string(b.lowerW) + ", " + std::to_string(b.lowerH) + "};");
            out.line("const int " + name + "_upper[2] = {" + std::to_string(b.upperW) + ", " + std::to_string(b.upperH) + "};");
            out.line("const cudaError_t " + name + "_status = tilet_encode_im2col_tensor_map(&" + name + ", " + tensorMapType(t.dtype) + ", " +
                     names.buffer(&ir::storageRoot(*d->tensor)) + ", " + name + "_sizes, " + name + "_strides, " + name + "_lower, " + name + "_upper, " +
                     std::to_string(b.channelsPerPixel) + ", " + std::to_string(b.pixelsPerColumn) + ", " + std::to_string(b.stride) + ", " +
                     tensorMapSwizzle(d->swizzle) + ");");
            out.line("if (" + name + "_status != cudaSuccess)");
            out.line("    return tilet_fail(" + name + "_status, \"" + launchName + ": TMA cannot describe tensor '" + names.buffer(&ir::storageRoot(t)) +
                     "' in im2col mode (cuTensorMapEncodeIm2col: 16-byte aligned base, every pixel a multiple of 16 bytes)\");");
            continue;
        }
        out.line("// " + name + ": boxes of " + std::to_string(d->box.size()) + "-d tiles of '" + t.name + "' (sizes and box innermost first)");
        out.line("CUtensorMap " + name + ";");
        out.line("const cuuint64_t " + name + "_sizes[" + std::to_string(rank) + "] = {" + sizes + "};");
        out.line("const cuuint64_t " + name + "_strides[" + std::to_string(std::max<size_t>(rank - 1, 1)) + "] = {" + (strides.empty() ? "0" : strides) + "};");
        out.line("const cuuint32_t " + name + "_box[" + std::to_string(rank) + "] = {" + box + "};");
        if (d->unpacksInto)
            out.line("// (packed " + std::string(dtypeName(t.dtype)) + " unpacked into the 8-bit slots tcgen05.mma reads: " + std::to_string(2 * bits) +
                     " bytes of 16 elements, then " + std::to_string(16 - 2 * bits) + " bytes of gap)");
        const std::string type = d->unpacksInto ? ir::unpackingTensorMapType(*d->unpacksInto) : tensorMapType(t.dtype);
        out.line("const cudaError_t " + name + "_status = tilet_encode_tensor_map(&" + name + ", " + type + ", " +
                 std::to_string(rank) + ", " + names.buffer(&ir::storageRoot(*d->tensor)) + ", " + name + "_sizes, " + name + "_strides, " + name + "_box, " +
                 tensorMapSwizzle(d->swizzle) + ");");
        out.line("if (" + name + "_status != cudaSuccess)");
        out.line("    return tilet_fail(" + name + "_status, \"" + launchName + ": TMA cannot describe tensor '" + names.buffer(&ir::storageRoot(t)) +
                 "' (cuTensorMapEncodeTiled: 16-byte aligned base, every row a multiple of 16 bytes, at most 2^32 elements per dimension" +
                 (d->unpacksInto ? "; unpacking " + std::string(dtypeName(t.dtype)) + ": 32-byte aligned base, rows a multiple of 128 elements" : "") + ")\");");
    }
}

// The functions the launch functions share (templates/host/checks.cpp, device_check.cpp): the
// thread's last error message, and the device check, once per device. The
// target's machine code (code=sm_XY) runs on compute capability X.Y and
// later minor versions of X; that of the architecture-specific targets
// (`exact_capability`: sm_90a, sm_100a, sm_120a) on X.Y alone (CUDA C++
// Programming Guide, "Binary Compatibility"). Several targets: the choice of
// the variant for the device instead (templates/host/variants.cpp).
void printCheckSupport(const Variants &variants, const OutputNames &names, Emitter &out) {
    const Target &target = variants.front().target;
    std::string major = std::to_string(target.arch / 10), minor = std::to_string(target.arch % 10);
    out.raw(fillTemplate(embedded::get("host/checks.cpp"), {{"module", names.symbolPrefix + names.moduleName}}));
    if (variants.size() > 1) return;
    out.raw(fillTemplate(embedded::get("host/device_check.cpp"),
                         {{"target", target.name},
                          {"capability", major + "." + minor + (target.exactCapability ? "" : " or a later " + major + ".x")},
                          {"runs", "major == " + major + " && minor " + (target.exactCapability ? "== " : ">= ") + minor}}));
}

// Several targets: which variant a launch runs (templates/host/variants.cpp),
// after the kernels' declarations, which its table names.
void printVariantChoice(const Variants &variants, const OutputNames &names, Emitter &out) {
    std::string table;
    for (const Variant &v : variants) {
        std::string probe = v.module.kernels.empty() ? "nullptr" : "reinterpret_cast<const void *>(&" + deviceKernelName(v.module.kernels.front(), names, v) + ")";
        table += "    {\"" + v.target.name + "\", " + std::to_string(v.target.arch / 10) + ", " + std::to_string(v.target.arch % 10) + ", " +
                 (v.target.exactCapability ? "true" : "false") + ", " + probe + "},\n";
    }
    out.blank();
    out.raw(fillTemplate(embedded::get("host/variants.cpp"), {{"targets", targetList(variants)},
                                                               {"count", std::to_string(variants.size())},
                                                               {"table", table},
                                                               {"cu", names.cuFile},
                                                               {"gencode", gencodeFlags(variants)}}));
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

std::map<std::string, std::string> templateValues(const Variants &variants, const OutputNames &n) {
    return {{"cu", n.cuFile},
            {"host", n.hostFile},
            {"header", n.headerFile},
            {"source", variants.front().module.sourceName},
            {"target", targetList(variants)},
            {"gencode", gencodeFlags(variants)},
            {"module", n.symbolPrefix + n.moduleName}};
}

// Kernels that need an opt-in (init) get it once per device from their launch: tilet_init_once.
bool needsOptIn(const ir::Kernel &k) {
    return k.dynamicSharedBytes > 48 * 1024 || (k.hasCluster && k.cluster[0] * k.cluster[1] * k.cluster[2] > 8);
}

// The opt-ins of one variant's kernels, as the body of an init function;
// returns whether there was any.
bool printOptIns(const Variant &v, const OutputNames &names, Emitter &out) {
    bool any = false;
    auto setAttribute = [&](const ir::Kernel &k, const std::string &attribute, int64_t value) {
        if (!any) out.line("cudaError_t err = cudaSuccess;");
        any = true;
        out.line("err = cudaFuncSetAttribute(reinterpret_cast<const void *>(&" + deviceKernelName(k, names, v) + "), " + attribute + ", " +
                 std::to_string(value) + ");");
        out.line("if (err != cudaSuccess) return err;");
    };
    for (const ir::Kernel &k : v.module.kernels) {
        if (!needsOptIn(k)) continue;
        if (k.dynamicSharedBytes > 48 * 1024) setAttribute(k, "cudaFuncAttributeMaxDynamicSharedMemorySize", k.dynamicSharedBytes);
        // Clusters of more than 8 blocks (up to 16) need the non-portable opt-in.
        if (k.hasCluster && k.cluster[0] * k.cluster[1] * k.cluster[2] > 8) setAttribute(k, "cudaFuncAttributeNonPortableClusterSizeAllowed", 1);
    }
    if (!any) out.line("// No kernel needs more than the default 48 KiB of dynamic shared memory or a cluster above 8 blocks.");
    out.line("return cudaSuccess;");
    return any;
}

// `initName` once per device, before the first launch on it (thread-safe), as `onceName`.
void printInitOnce(const std::string &onceName, const std::string &initName, Emitter &out) {
    out.blank();
    out.line("// " + initName + " once per device, before the first launch on it (thread-safe): a launch needs no");
    out.line("// call beforehand. Devices 64 and up take the lock on every launch (the opt-in is idempotent).");
    out.open("static cudaError_t " + onceName + "(void)");
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
    out.close(onceName);
}

// The launch's checks of its parameters: each failure says which, with the value found.
void printParameterChecks(const Variants &variants, size_t kernel, const std::string &launchName, NameTable &n, ExprPrinter &ep, Emitter &out) {
    const ir::Kernel &k = variants.front().module.kernels[kernel];
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
    for (size_t i = 0; i < k.params.size(); ++i) {
        const ir::Param &p = k.params[i];
        if (p.kind != ir::ParamKind::Tensor) continue;
        const ir::BufferNode &t = *p.tensor;
        std::string name = n.buffer(&t), empty;
        for (const ir::Expr &d : t.shape)
            if (!ir::constInt(d)) empty += " && " + ep.print(d) + " != 0";   // a tensor with no elements may be null
        out.line("if (" + name + " == nullptr" + empty + ")");
        out.line("    return tilet_fail(cudaErrorInvalidValue, \"" + launchName + ": tensor '" + name + "' (" + std::string(dtypeName(t.dtype)) + " " + dimsText(t) + ") is a null pointer\");");
        int64_t alignment = requiredAlignment(variants, kernel, i);
        if (alignment > 1) {
            out.line("if (reinterpret_cast<std::uintptr_t>(" + name + ") % " + std::to_string(alignment) + " != 0)");
            out.line("    return tilet_fail(cudaErrorMisalignedAddress, \"" + launchName + ": tensor '" + name + "' must be " + std::to_string(alignment) +
                     "-byte aligned (its vector or TMA accesses); its address %p is not\", static_cast<const void *>(" + name + "));");
        }
    }
    out.raw("#endif\n");
}

// One variant's launch of a kernel: the grid and its limits, [the device
// check,] the tensor maps, the opt-in, cudaLaunchKernelEx.
void printLaunch(const Variant &v, size_t kernel, const OutputNames &names, const std::string &launchName, const std::string &initOnce, bool checkDevice,
                 NameTable &n, ExprPrinter &ep, Emitter &out) {
    const ir::Kernel &k = v.module.kernels[kernel];
    Signature sig = signatureOf(k, n);
    for (const ir::Param &p : k.params) {
        if (p.kind != ir::ParamKind::SmCount) continue;
        out.line("int " + n.var(p.var.get()) + " = 0;   // num_sms()");
        out.line("const cudaError_t sm_count_status = tilet_sm_count(\"" + launchName + "\", &" + n.var(p.var.get()) + ");");
        out.line("if (sm_count_status != cudaSuccess) return sm_count_status;");
    }
    static const char *axes[] = {"x", "y", "z"};
    for (size_t i = 0; i < 3; ++i) {
        std::string value = i < k.grid.size() ? "static_cast<long long>(" + ep.print(k.grid[i]) + ")" : "1";
        out.line("const long long grid_" + std::string(axes[i]) + " = " + value + ";");
    }
    out.line("if (grid_x == 0 || grid_y == 0 || grid_z == 0) return cudaSuccess;");
    out.line("if (grid_x < 0 || grid_y < 0 || grid_z < 0 || grid_x > 2147483647LL || grid_y > 65535 || grid_z > 65535)");
    out.line("    return tilet_fail(cudaErrorInvalidConfiguration, \"" + launchName +
             ": the grid (%lld, %lld, %lld) is outside CUDA's limits (x up to 2^31 - 1, y and z up to 65535)\", grid_x, grid_y, grid_z);");
    if (k.hasCluster) {
        std::string dims = std::to_string(k.cluster[0]) + " x " + std::to_string(k.cluster[1]) + " x " + std::to_string(k.cluster[2]);
        out.line("// The grid is made of whole " + dims + " clusters.");
        out.line("if (grid_x % " + std::to_string(k.cluster[0]) + " != 0 || grid_y % " + std::to_string(k.cluster[1]) + " != 0 || grid_z % " +
                 std::to_string(k.cluster[2]) + " != 0)");
        out.line("    return tilet_fail(cudaErrorInvalidConfiguration, \"" + launchName + ": the grid (%lld, %lld, %lld) is not made of whole " + dims +
                 " clusters\", grid_x, grid_y, grid_z);");
    }
    if (checkDevice) {
        out.raw("#ifndef TILET_NO_CHECKS\n");
        out.line("const cudaError_t device_status = tilet_check_device(\"" + launchName + "\");");
        out.line("if (device_status != cudaSuccess) return device_status;");
        out.raw("#endif\n");
    }
    encodeTensorMaps(k, launchName, n, ep, out);
    if (needsOptIn(k)) {
        out.line("const cudaError_t init_status = " + initOnce + "();");
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
    out.line("return cudaLaunchKernelEx(&config, " + deviceKernelName(k, names, v) + (sig.args.empty() ? "" : ", " + sig.args) + ");");
}

// `switch (variant)` over the variants, each case one `statement(v, i)`.
void printVariantSwitch(const Variants &variants, const std::function<std::string(const Variant &)> &statement, Emitter &out) {
    out.open("switch (variant)");
    for (size_t i = 0; i + 1 < variants.size(); ++i) out.line("case " + std::to_string(i) + ": " + statement(variants[i]));
    out.line("default: " + statement(variants.back()));
    out.close();
}

} // namespace

std::string printHostHeader(const Variants &variants, const OutputNames &names) {
    const ir::Module &module = variants.front().module;
    const bool several = variants.size() > 1;
    std::map<std::string, std::string> values = templateValues(variants, names);
    std::string includes;
    for (const std::string &h : tensorHeaders(module)) includes += "#include <" + h + ">\n";
    values["includes"] = includes;
    Emitter out;
    out.raw(fillTemplate(embedded::get("host/header_prologue.h"), values));
    for (size_t ki = 0; ki < module.kernels.size(); ++ki) {
        const ir::Kernel &k = module.kernels[ki];
        NameTable names2;
        Signature sig = signatureOf(k, names2);
        out.blank();
        std::string grid;
        ExprPrinter ep(names2);
        for (size_t i = 0; i < k.grid.size(); ++i) grid += (i ? ", " : "") + ep.print(k.grid[i]);
        auto resources = [](const ir::Kernel &variant) {
            return std::to_string(variant.threads) + " threads per block, " + std::to_string(variant.dynamicSharedBytes) + " bytes of dynamic shared memory";
        };
        if (!several) {
            out.line("// " + k.name + ": grid (" + grid + "), " + resources(k) + ".");
        } else {
            out.line("// " + k.name + ": grid (" + grid + "); on " + targetList(variants).replace(targetList(variants).rfind(", "), 2, " and ") + ":");
            for (const Variant &v : variants) out.line("//   " + v.target.name + ": " + resources(v.module.kernels[ki]));
        }
        for (size_t pi = 0; pi < k.params.size(); ++pi) {
            const ir::Param &p = k.params[pi];
            if (p.kind == ir::ParamKind::Tensor) {
                std::string line = "//   " + names2.buffer(p.tensor.get()) + ": " + std::string(dtypeName(p.tensor->dtype)) + " " +
                                   dimsText(*p.tensor) + (p.tensor->readOnly ? ", read" : ", written");
                if (int64_t alignment = requiredAlignment(variants, ki, pi); alignment > 0) line += ", " + std::to_string(alignment) + "-byte aligned";
                out.line(line);
            } else if (p.kind == ir::ParamKind::Scalar) {
                out.line("//   " + names2.var(p.var.get()) + ": " + std::string(dtypeName(p.var->dtype)) + " scalar");
            } else if (p.kind == ir::ParamKind::SmCount) {
                continue;   // said after the parameters
            } else {
                out.line("//   " + names2.var(p.var.get()) + ": dynamic dimension, at least 0" +
                         (p.var->divisor > 1 ? ", a multiple of " + std::to_string(p.var->divisor) + " (promised: dyn " + p.var->name + " % " +
                                                   std::to_string(p.var->divisor) + ")" : ""));
            }
        }
        if (std::any_of(k.params.begin(), k.params.end(), [](const ir::Param &p) { return p.kind == ir::ParamKind::SmCount; }))
            out.line("// num_sms() is the current device's number of SMs (cudaDevAttrMultiProcessorCount), queried once per device.");
        bool promises = std::any_of(k.params.begin(), k.params.end(), [](const ir::Param &p) { return p.kind == ir::ParamKind::DynDim && p.var->divisor > 1; });
        out.line(std::string("// Returns cudaErrorInvalidValue for a negative dimension") + (promises ? " (or one that breaks its promise)" : "") +
                 " or a null tensor, cudaErrorMisalignedAddress");
        if (!several) out.line("// for a misaligned tensor, cudaErrorNoKernelImageForDevice on a device that cannot run " + variants.front().target.name + " code,");
        else out.line("// for a misaligned tensor, cudaErrorNoKernelImageForDevice on a device that none of the variants runs on,");
        out.line("// cudaErrorInvalidConfiguration for a grid beyond the limits (" + names.symbolPrefix + names.moduleName + "_last_error() says which");
        out.line("// check failed, and why); an empty grid launches nothing and returns cudaSuccess.");
        // A tensor map over a tensor with a dynamic inner dimension: its strides are only known at launch.
        std::set<const ir::BufferNode *> told;
        for (const Variant &v : variants) {
            for (const ir::TmaDescriptorRef &d : v.module.kernels[ki].tmaDescriptors) {
                const ir::BufferNode &t = *d->tensor;
                bool dynamicRows = false;
                for (size_t i = 1; i < t.shape.size(); ++i) dynamicRows = dynamicRows || !ir::constInt(t.shape[i]);
                const ir::BufferNode &root = ir::storageRoot(t);
                // The same tensor of the first variant's kernel: its name in this signature.
                const ir::BufferNode *named = nullptr;
                for (size_t pi = 0; pi < k.params.size(); ++pi)
                    if (v.module.kernels[ki].params[pi].tensor.get() == &root) named = k.params[pi].tensor.get();
                if (!dynamicRows || !named || !told.insert(named).second) continue;
                out.line("// Also cudaErrorInvalidValue when TMA cannot describe '" + names2.buffer(named) + "'" + (several ? " (on " + v.target.name + ")" : "") +
                         ": each of its rows (the last");
                out.line("// dimension) must be a multiple of 16 bytes, " + std::to_string(128 / dtypeBits(root.dtype)) + " " + std::string(dtypeName(root.dtype)) +
                         " elements (cuTensorMapEncodeTiled).");
            }
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

std::string printHostSource(const Variants &variants, const OutputNames &names) {
    const ir::Module &module = variants.front().module;
    const bool several = variants.size() > 1;
    Emitter out;
    out.raw(fillTemplate(embedded::get("host/source_prologue.cpp"), templateValues(variants, names)));
    bool optIn = false, tiled = false, im2col = false;   // which tensor-map encoders the launches call
    bool smCount = false;                                 // whether a launch queries num_sms()
    for (const Variant &v : variants) {
        for (const ir::Kernel &k : v.module.kernels) {
            optIn = optIn || needsOptIn(k);
            for (const ir::Param &p : k.params) smCount = smCount || p.kind == ir::ParamKind::SmCount;
            for (const ir::TmaDescriptorRef &d : k.tmaDescriptors) (d->im2col ? im2col : tiled) = true;
        }
    }
    out.line("#include <atomic>");
    out.line("#include <cstdarg>");
    out.line("#include <cstdio>");
    if (optIn) out.line("#include <mutex>");
    if (tiled || im2col) out.raw(std::string(embedded::get("host/tma_maps.cpp")));
    if (tiled) out.raw(std::string(embedded::get("host/tma_encode.cpp")));
    if (im2col) out.raw(std::string(embedded::get("host/tma_encode_im2col.cpp")));
    printCheckSupport(variants, names, out);
    if (smCount) out.raw(std::string(embedded::get("host/sm_count.cpp")));
    out.blank();
    out.line("// Kernels defined in " + names.cuFile + " (nvcc emits host stubs with these names).");
    for (const Variant &v : variants) {
        for (const ir::Kernel &k : v.module.kernels) {
            NameTable n;
            out.line("extern \"C\" void " + deviceKernelName(k, names, v) + "(" + signatureOf(k, n).deviceParams + ");");
        }
    }
    if (several) printVariantChoice(variants, names, out);

    // The opt-ins: the exported init function, and each launch's once per device.
    const std::string initName = names.symbolPrefix + names.moduleName + "_init";
    std::vector<std::string> initOnce(variants.size());
    if (!several) {
        out.blank();
        out.open("extern \"C\" cudaError_t " + initName + "(void)");
        if (printOptIns(variants.front(), names, out)) initOnce[0] = "tilet_init_once";
        out.close(initName);
        if (!initOnce[0].empty()) printInitOnce(initOnce[0], initName, out);
    } else {
        std::vector<bool> any(variants.size());
        for (size_t i = 0; i < variants.size(); ++i) {
            const std::string variantInit = "tilet_init" + variants[i].kernelSuffix;
            out.blank();
            out.open("static cudaError_t " + variantInit + "(void)");
            any[i] = printOptIns(variants[i], names, out);
            out.close(variantInit);
            if (any[i]) {
                initOnce[i] = "tilet_init_once" + variants[i].kernelSuffix;
                printInitOnce(initOnce[i], variantInit, out);
            }
        }
        out.blank();
        out.open("extern \"C\" cudaError_t " + initName + "(void)");
        out.line("int variant = 0;");
        out.line("const cudaError_t device_status = tilet_device_variant(\"" + initName + "\", &variant);");
        out.line("if (device_status != cudaSuccess) return device_status;");
        printVariantSwitch(variants, [](const Variant &v) { return "return tilet_init" + v.kernelSuffix + "();"; }, out);
        out.close(initName);
    }

    for (size_t ki = 0; ki < module.kernels.size(); ++ki) {
        const ir::Kernel &k = module.kernels[ki];
        const std::string launchName = names.symbolPrefix + k.name;
        if (several) {
            // Each variant's launch, for the one launch function to choose from.
            for (size_t i = 0; i < variants.size(); ++i) {
                NameTable n;
                ExprPrinter ep(n);
                const std::string variantLaunch = "tilet_launch_" + k.name + variants[i].kernelSuffix;
                out.blank();
                out.open("static cudaError_t " + variantLaunch + "(" + signatureOf(variants[i].module.kernels[ki], n).params + ")");
                printLaunch(variants[i], ki, names, launchName, initOnce[i], false, n, ep, out);
                out.close(variantLaunch);
            }
        }
        NameTable n;
        Signature sig = signatureOf(k, n);
        ExprPrinter ep(n);
        out.blank();
        out.open("extern \"C\" cudaError_t " + launchName + "(" + sig.params + ")");
        out.line("tilet_last_error[0] = '\\0';");
        printParameterChecks(variants, ki, launchName, n, ep, out);
        if (!several) {
            printLaunch(variants.front(), ki, names, launchName, initOnce[0], true, n, ep, out);
        } else {
            std::string args;
            for (const ir::Param &p : k.params)
                if (p.kind != ir::ParamKind::SmCount) args += (p.kind == ir::ParamKind::Tensor ? n.buffer(p.tensor.get()) : n.var(p.var.get())) + ", ";
            out.line("int variant = 0;");
            out.line("const cudaError_t device_status = tilet_device_variant(\"" + launchName + "\", &variant);");
            out.line("if (device_status != cudaSuccess) return device_status;");
            printVariantSwitch(variants, [&](const Variant &v) { return "return tilet_launch_" + k.name + v.kernelSuffix + "(" + args + "stream);"; }, out);
        }
        out.close(launchName);
    }
    return out.str();
}

} // namespace tilet
