// HostPrinter.h -- prints the host launch code (OUT.host.cpp) and its header
// (OUT.h): one C-callable launch function per kernel plus a module init
// function, using only the CUDA runtime API.
#pragma once

#include "codegen/CudaPrinter.h"

namespace tilet {

// Several variants: each launch function runs the one for the current device.
std::string printHostHeader(const Variants &variants, const OutputNames &names);
std::string printHostSource(const Variants &variants, const OutputNames &names);

} // namespace tilet
