// PythonPrinter.h -- the optional Python binding of a translation's launch
// functions (`--python k.py`): standard-library ctypes code that takes
// PyTorch / CuPy / __cuda_array_interface__ / __dlpack__ tensors, checks
// them against each kernel's parameters and calls the library's C ABI.
#pragma once

#include "codegen/CudaPrinter.h"
#include "ir/IR.h"
#include "target/Target.h"

#include <string>

namespace tilet {

// `pyFile`: the file name written (its stem is the module users import).
// `cpu`: for a --cpu library, whose tensors are in host memory.
std::string printPythonBinding(const Variants &variants, const OutputNames &names, const std::string &pyFile, bool cpu = false);

} // namespace tilet
