// AllocateRoleRegisters.h -- setmaxnreg for ws(...) roles written by hand.
#pragma once

#include "ir/IR.h"
#include "passes/PassContext.h"

namespace tilet {

// A kernel whose ws(...) roles are written by hand (TileLang's T.ws) gets the
// register reallocation automatic warp specialization has (TileLang's
// AnnotateWarpGroupRegAlloc gives it to the automatic form only): the warp
// group that only issues TMA loads and waits and arrives on barriers drops to
// 24 registers per thread, the other roles' warp groups rise to what is left
// (warpGroupRegisterSplit, Target.h).
//
// setmaxnreg bounds the registers of the code that runs after it, so each
// role's code must be its own. From the kernel's first statement that holds a
// role on, the kernel becomes one copy per role: the role's ws(...) bodies,
// and the loops, branches, bindings and barriers every thread runs; the other
// roles' bodies are dropped.
//
//   for k { ws(0) { P } ws(1) { C } } ws(1) { E }
//   -->  ws(0) { setmaxnreg.dec 24;  for k { P } }
//        ws(1) { setmaxnreg.inc 240; for k { C } E }
//
// Every thread runs the statements it ran before, in the same order; what
// the split loses is the program order between statements of different
// roles, which the protocol check assumes at the edges of each run of
// ws(...) blocks. So the check (which runs next, on the split kernel) is
// tried on the split kernel first: a race, or a protocol it cannot check,
// keeps the kernel as written; so do global or tensor memory one role writes
// and another uses (the check follows shared memory only), and statements
// every role runs after the roles begin that read memory. Also not done, and
// explained, when the target has no setmaxnreg, the kernel runs in clusters,
// the program sets registers itself (set_max_nreg is kept as written), the
// roles are not whole warp groups that partition the block, not exactly one
// warp group only loads (TMA loads for certain, tma_copy or prefer = tma,
// global -> shared, and barrier operations), or any other statement -- an
// allocation included -- runs in every role after the first role begins
// (the loading warp group would run it in 24 registers).
ir::Kernel allocateRoleRegisters(const ir::Kernel &kernel, PassContext &ctx);

} // namespace tilet
