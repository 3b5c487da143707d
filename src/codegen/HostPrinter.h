// HostPrinter.h -- prints the host launch code (OUT.host.cpp) and its header
// (OUT.h): one C-callable launch function per kernel plus a module init
// function, using only the CUDA runtime API.
#pragma once

#include "codegen/CudaPrinter.h"

namespace tilet {

std::string printHostHeader(const ir::Module &module, const Target &target, const OutputNames &names);
std::string printHostSource(const ir::Module &module, const Target &target, const OutputNames &names);

} // namespace tilet
