// PlanSharedMemory.h -- places shared buffers in the dynamic shared memory.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// Gives every shared buffer an offset in one dynamic shared-memory block,
// aligned to 16 bytes (or more where a buffer needs it). Buffers whose
// lifetimes do not overlap share bytes. A kernel that needs more than the
// target allows per block is an error listing each buffer and its size.
ir::Kernel planSharedMemory(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
