// Pipeline.cpp -- the pass pipeline, in order, in one function.
#include "passes/Pipeline.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Verifier.h"
#include "passes/AllocateRoleRegisters.h"
#include "passes/AnalyzeParams.h"
#include "passes/FlattenBuffers.h"
#include "passes/HoistLoopAllocations.h"
#include "passes/PredicatePipelineBranches.h"
#include "passes/InferLayouts.h"
#include "passes/InsertSyncs.h"
#include "passes/LowerFragmentStores.h"
#include "passes/LowerPackedCopies.h"
#include "passes/LowerGemms.h"
#include "passes/LowerParallelLoops.h"
#include "passes/LowerReductions.h"
#include "passes/LowerTileOps.h"
#include "passes/LowerTma.h"
#include "passes/OverlapIntraWarpgroup.h"
#include "passes/OverlapWgmma.h"
#include "passes/CheckWgmmaGroups.h"
#include "passes/CheckWholeWarps.h"
#include "passes/PinWgmmaRegisters.h"
#include "passes/PingpongConsumers.h"
#include "passes/PipelineLoops.h"
#include "passes/PlanSharedMemory.h"
#include "passes/PlanTensorMemory.h"
#include "passes/LowerTensorMemory.h"
#include "passes/CheckBarriers.h"
#include "passes/CheckCtaPairs.h"
#include "passes/CheckBounds.h"
#include "passes/CheckTarget.h"
#include "passes/RejectUnimplemented.h"
#include "passes/SelectCopyInst.h"
#include "passes/SelectGemmInst.h"
#include "passes/SpecializeWarps.h"
#include "passes/SplitTmemEpilogues.h"
#include "passes/WaitSynchronousGemms.h"
#include "passes/StoreUniformOnce.h"
#include "passes/VectorizeAccesses.h"

#include <optional>
#include <ostream>
#include <sstream>

namespace tilet {

namespace {

ir::Kernel simplifyKernel(const ir::Kernel &kernel, PassContext &) {
    ir::Kernel out = kernel;
    out.body = ir::simplify(kernel.body, ir::BoundsScope::forKernel(kernel));
    if (!out.body) out.body = ir::seq({});
    return out;
}

// Runs one pass: the pass itself, the verifier at the given level, and the
// dump the user asked for. Stops at the first pass that reports errors.
class Runner {
public:
    Runner(ir::Kernel &kernel, PassContext &ctx, const DumpOptions &dump) : kernel_(kernel), ctx_(ctx), dump_(dump) {}

    bool operator()(const char *name, ir::Kernel (*pass)(const ir::Kernel &, PassContext &), const ir::VerifyLevel &level) {
        if (failed_) return false;
        unsigned errorsBefore = ctx_.diags.errorCount();
        ctx_.diags.setStage(name);   // the rule of what this pass reports
        // Passes decide buffer facts on the shared buffer nodes, so "did it
        // change anything" compares the printed IR, taken before the pass.
        bool dumping = dump_.out && (dump_.after == "all" || dump_.after == name);
        std::string before = dumping ? printed(kernel_) : std::string();
        std::optional<PhaseScope> passTime(std::in_place, dump_.times, name);
        ir::Kernel next = pass(kernel_, ctx_);
        passTime.reset();
        if (ctx_.diags.errorCount() != errorsBefore) {
            failed_ = true;
            return false;
        }
        {
            PhaseScope verifyTime(dump_.times, "verify IR");
            ir::verify(next, level, name);
        }
        if (dumping) {
            std::string after = printed(next);
            *dump_.out << "// ---- IR after " << name << (after == before ? " (unchanged)" : "") << "\n" << after;
        }
        kernel_ = std::move(next);
        return true;
    }
    bool failed() const { return failed_; }

private:
    static std::string printed(const ir::Kernel &k) {
        std::ostringstream text;
        ir::print(k, text);
        return text.str();
    }
    ir::Kernel &kernel_;
    PassContext &ctx_;
    const DumpOptions &dump_;
    bool failed_ = false;
};

} // namespace

const std::vector<std::string> &passNames() {
    static const std::vector<std::string> names = {
        "analyze-params", "check-target", "check-bounds", "hoist-loop-allocations", "predicate-pipeline-branches", "wait-synchronous-gemms", "specialize-warps", "allocate-role-registers", "check-cta-pairs", "check-barriers", "select-gemm-inst", "select-copy-inst", "reject-unimplemented", "split-tmem-epilogues", "plan-tensor-memory", "pipeline-loops", "lower-tma", "lower-tile-ops", "infer-layouts", "lower-gemms", "lower-tensor-memory", "lower-fragment-stores", "lower-packed-copies", "overlap-wgmma", "overlap-intra-warpgroup", "lower-reductions",
        "lower-parallel-loops", "store-uniform-once", "vectorize-accesses", "plan-shared-memory", "insert-syncs", "pingpong-consumers", "check-wgmma-groups", "pin-wgmma-registers", "check-whole-warps", "flatten-buffers", "simplify"};
    return names;
}

bool lower(ir::Module &module, PassContext &ctx, const DumpOptions &dump) {
    bool ok = true;
    for (ir::Kernel &kernel : module.kernels) {
        Runner run(kernel, ctx, dump);
        ir::VerifyLevel checked, noTileOps{true}, noParallel{true, true}, scalar{true, true, true}, flat{true, true, true, true};

        // Facts about parameters: tensors never written print as const.
        run("analyze-params", analyzeParams, checked);
        // What the target cannot do at all; no decision is explained for such a kernel.
        run("check-target", checkTarget, checked);
        // Element accesses of shared, fragment and local buffers that some
        // iteration certainly takes past their ends (as written, before any rewriting).
        run("check-bounds", checkBounds, checked);
        // Buffers allocated in a pipelined loop's body: once, around the loop
        // (TileLang allocates them for the block), so its copies can be pipelined.
        run("hoist-loop-allocations", hoistLoopAllocations, checked);
        // Copies under an `if` in a pipelined loop: one `if` per statement of
        // the branch, so the copies are producers predicated by their iteration.
        run("predicate-pipeline-branches", predicatePipelineBranches, checked);
        // TileLang's synchronous tcgen05 gemm (gemm with mbar, C in tensor
        // memory): the wait for its completion written after it, as the
        // asynchronous form's author writes it.
        run("wait-synchronous-gemms", waitSynchronousGemms, checked);
        // A pipelined loop whose loads can use TMA becomes a producer warp
        // group and consumer warp groups: ordinary ws(...) code with mbarriers,
        // which every later pass (the protocol check first) treats like a
        // hand-written one.
        run("specialize-warps", specializeWarps, checked);
        // setmaxnreg for ws(...) roles written by hand: each role gets its own
        // copy of the kernel, which the protocol check then verifies.
        run("allocate-role-registers", allocateRoleRegisters, checked);
        // The CTA pair's tcgen05 instructions: issued by the leader for both blocks, all of .cta_group::2.
        run("check-cta-pairs", checkCtaPairs, checked);
        // mbarrier protocols and ws(...) roles, simulated: deadlocks, over-arrivals and races are errors.
        run("check-barriers", checkBarriers, checked);
        // Gemm instruction, warp partition and operand swizzles (TileLang's Gemm::SelectInst); before
        // copy selection, which needs to know which fragments hold MMA operands.
        run("select-gemm-inst", selectGemmInst, checked);
        // TileLang's copy decision chain (LowerCopy); it must see copies before they become loops.
        run("select-copy-inst", selectCopyInst, checked);
        // Every decision is made (and explained) by now; what code generation
        // cannot do yet is reported before any lowering, so a kernel is
        // translated completely or not at all.
        run("reject-unimplemented", rejectUnimplemented, checked);
        // An accumulator read out of tensor memory into a fragment too large
        // for the registers, only to be stored: in column chunks.
        run("split-tmem-epilogues", splitTmemEpilogues, checked);
        // Columns of tensor memory for alloc_tmem buffers; warp 0 allocates them for the block.
        run("plan-tensor-memory", planTensorMemory, checked);
        // Pipelined loops: versioned shared buffers, cp.async groups, the
        // prologue; while copies are still tile operations.
        run("pipeline-loops", pipelineLoops, checked);
        // Descriptor TMA copies: tensor maps for the host, one thread issues.
        run("lower-tma", lowerTma, checked);
        // SIMT copies, fills and atomic adds become parallel loops, so that
        // layout inference sees every fragment access as a loop.
        run("lower-tile-ops", lowerTileOps, {false});
        // Layouts of fragments and parallel loops, in program order (gemm
        // accumulators and register operands first: the instruction fixes them).
        run("infer-layouts", inferLayouts, checked);
        // mma.sync gemms into ldmatrix and mma per warp; needs the accumulator registers.
        run("lower-gemms", lowerGemms, checked);
        // Copies out of tensor memory (tcgen05.ld); needs the fragment layouts.
        run("lower-tensor-memory", lowerTensorMemory, checked);
        // Accumulators copied to shared memory with stmatrix; needs their registers.
        run("lower-fragment-stores", lowerFragmentStores, checked);
        // f4e2m1 fragments packed into bytes (or unpacked): a loop over register pairs; needs the layouts.
        run("lower-packed-copies", lowerPackedCopies, checked);
        // A consumer loop's wgmma group stays in flight while the next is issued.
        run("overlap-wgmma", overlapWgmma, checked);
        // Attention's softmax overlaps the previous key tile's P V (rotates the consumer loop).
        run("overlap-intra-warpgroup", overlapIntraWarpgroup, checked);
        // Reductions need the layouts of their fragments.
        run("lower-reductions", lowerReductions, noTileOps);
        // Per-thread loops; needs layouts; fragments become register arrays.
        run("lower-parallel-loops", lowerParallelLoops, noParallel);
        // A store every thread would make alike (thread-level code) is made by one thread.
        run("store-uniform-once", storeUniformOnce, noParallel);
        // Wide accesses need the per-thread lane loops and the bounds guards.
        run("vectorize-accesses", vectorizeAccesses, scalar);
        // Offsets and sharing of shared buffers; insert-syncs orders bytes, so it comes after.
        run("plan-shared-memory", planSharedMemory, scalar);
        // Barriers; before flattening, so pipelined buffers' versions can be told apart.
        run("insert-syncs", insertSyncs, scalar);
        // Two consumer warp groups with work between their wgmma take turns at
        // the tensor cores (FlashAttention-3's ping-pong); after insert-syncs,
        // whose barriers would otherwise make a turn wait for itself.
        run("pingpong-consumers", pingpongConsumers, scalar);
        // Nothing touches what a wgmma group in flight uses: the program's
        // waits (wg_wait, wait_wgmma) and those the passes above placed or moved.
        run("check-wgmma-groups", checkWgmmaGroups, scalar);
        // The accumulators each wgmma fence and wait orders, for the compiler (CUTLASS's warpgroup_fence_operand).
        run("pin-wgmma-registers", pinWgmmaRegisters, scalar);
        // A block that ends in a partial warp: no warp-wide instruction in the code every pass above made.
        run("check-whole-warps", checkWholeWarps, scalar);
        // Flat (and swizzled) offsets, after every pass that reasons about dimensions.
        run("flatten-buffers", flattenBuffers, flat);
        run("simplify", simplifyKernel, flat);
        ok = ok && !run.failed();
    }
    return ok;
}

} // namespace tilet
