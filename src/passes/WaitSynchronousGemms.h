// WaitSynchronousGemms.h -- TileLang's synchronous tcgen05 gemm: the wait
// for its completion, made explicit.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// gemm(A, B, C_tmem, mbar = b) without inst = tcgen05 is TileLang's T.gemm
// lowered to tcgen05: its MMAs complete asynchronously, arrive once on b
// (one thread's tcgen05.commit), and then every thread waits for that phase
// of b before going on. This pass writes that wait after the gemm,
//
//   gemm(...); barrier_wait(b, phase)
//
// so every later pass (warp specialization, the protocol check, the syncs)
// sees the program as if its author had written the asynchronous form
// (inst = tcgen05) and waited. The phase is the parity of the gemm's
// executions before this one: the linearised iteration count of its
// enclosing loops, mod 2 (TileLang derives it from the pipelined loop).
// That count is only right when nothing else arrives on b, b completes a
// phase with one arrival, and the gemm runs once per innermost iteration --
// no branch, `while` or loop whose trip count depends on an outer loop
// between it and the kernel; otherwise it is an error that says to write the
// asynchronous form. Explained per gemm.
ir::Kernel waitSynchronousGemms(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
