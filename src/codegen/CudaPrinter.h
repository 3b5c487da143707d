// CudaPrinter.h -- prints lowered IR as a self-contained .cu file.
//
// The printer decides nothing: every instruction, layout, offset and barrier
// was chosen by a pass. It spells types, names and statements, and includes
// only the CUDA toolkit headers the printed code uses.
#pragma once

#include "ir/IR.h"
#include "target/Target.h"

#include <string>

namespace tilet {

struct OutputNames {
    std::string cuFile;       // "softmax.cu" (file names only: they appear in banners and includes)
    std::string hostFile;     // "softmax.host.cpp"
    std::string headerFile;   // "softmax.h"
    std::string moduleName;   // C identifier prefix for module functions, e.g. "softmax"
    std::string symbolPrefix; // --symbol-prefix: before every exported symbol ("" by default)
    bool lineDirectives = false;   // #line directives pointing at the .tl source
};

std::string printCuda(const ir::Module &module, const Target &target, const OutputNames &names);

// The device-side name of a kernel (`<prefix><name>_kernel`), shared with the host printer.
std::string deviceKernelName(const ir::Kernel &k, const OutputNames &names);

} // namespace tilet
