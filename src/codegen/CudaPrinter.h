// CudaPrinter.h -- prints lowered IR as a self-contained .cu file.
//
// The printer decides nothing: every instruction, layout, offset and barrier
// was chosen by a pass. It spells types, names and statements, and includes
// only the CUDA toolkit headers the printed code uses.
#pragma once

#include "ir/IR.h"
#include "target/Target.h"

#include <string>
#include <vector>

namespace tilet {

struct OutputNames {
    std::string cuFile;       // "softmax.cu" (file names only: they appear in banners and includes)
    std::string hostFile;     // "softmax.host.cpp"
    std::string headerFile;   // "softmax.h"
    std::string moduleName;   // C identifier prefix for module functions, e.g. "softmax"
    std::string symbolPrefix; // --symbol-prefix: before every exported symbol ("" by default)
    bool lineDirectives = false;   // #line directives pointing at the .tl source
};

// One translation of the program, lowered for one target. A multi-architecture
// output (`--arch sm_80,sm_90a`) holds one per target, in ascending order of
// compute capability; each variant's kernels then carry its name
// (`softmax_kernel_sm_90a`), and the launch functions pick the variant for the
// device.
struct Variant {
    const ir::Module &module;
    const Target &target;
    std::string kernelSuffix;   // "" for a single-target output, else "_sm_90a"
};
using Variants = std::vector<Variant>;

std::string printCuda(const Variants &variants, const OutputNames &names);

// The device-side name of a kernel (`<prefix><name>_kernel<suffix>`), shared with the host printer.
std::string deviceKernelName(const ir::Kernel &k, const OutputNames &names, const Variant &variant);

// The C preprocessor condition that holds in nvcc's device pass for the
// target's -gencode, and in no other pass: `__CUDA_ARCH__` and, for an
// architecture-specific target (sm_90a), its `__CUDA_ARCH_FEAT_SM90_ALL`
// (CUDA C++ Programming Guide, "Feature Availability").
std::string devicePassCondition(const Target &target);

// "sm_80, sm_90a" and "-gencode arch=compute_80,code=sm_80 -gencode ...": the
// targets of an output, for banners and build lines.
std::string targetList(const Variants &variants);
std::string gencodeFlags(const Variants &variants);

// The alignment a launch requires of parameter `param` (a tensor) of kernel
// `kernel`: the strictest of the variants', so that a call that works on one
// GPU works on every other.
int64_t requiredAlignment(const Variants &variants, size_t kernel, size_t param);

} // namespace tilet
