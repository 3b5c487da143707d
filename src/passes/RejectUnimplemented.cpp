// RejectUnimplemented.cpp -- see RejectUnimplemented.h.
#include "passes/RejectUnimplemented.h"

#include "ir/Visitor.h"
#include "passes/LowerGemms.h"

#include <set>

namespace tilet {

std::string notYetInRole(const ir::Stmt &x) {
    switch (x->kind) {
    case ir::StmtKind::WarpSpecialize: return "ws(...)";
    case ir::StmtKind::Copy: {
        // Their block-wide barriers would wait for the other roles' threads.
        const ir::Copy &c = *ir::as<ir::Copy>(x);
        if (c.multicast() && !c.producerRole) return "a multicast copy_cluster";
        if (c.dstBlock && c.remoteBarrier) return "a copy_cluster with remote_barrier";
        return "";
    }
    case ir::StmtKind::Allocate:
        // Shared and fragment buffers were moved out (hoist-loop-allocations).
        if (ir::as<ir::Allocate>(x)->buffer->scope == ir::MemScope::Barrier) return "allocating barriers";
        return "";
    default: return "";
    }
}

ir::Kernel rejectUnimplemented(const ir::Kernel &kernel, PassContext &ctx) {
    const std::string target = ctx.target.name;
    auto notYet = [&](SourceRange where, const std::string &what) { ctx.diags.error(where, what + " not supported yet for " + target); };
    // Register A operands of mma.sync gemms: lower-gemms loads them with ldmatrix.
    std::set<const ir::BufferNode *> mmaOperands;
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        const ir::Gemm *g = ir::as<ir::Gemm>(s);
        if (g && g->inst == ir::GemmInst::MMA && gemmNotGeneratedYet(*g).empty() && g->a.buffer->scope == ir::MemScope::Fragment) mmaOperands.insert(g->a.buffer.get());
    });
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        switch (s->kind) {
        case ir::StmtKind::Copy: {
            const ir::Copy &c = *ir::as<ir::Copy>(s);
            bool pipelined = c.inst == ir::CopyInst::CPAsync && c.inPipeline;
            bool operandLoad = c.inst == ir::CopyInst::LDSM && mmaOperands.count(c.dst.buffer.get());
            // lower-tensor-memory says which tensor-memory copies it cannot generate.
            bool tensorMemory = c.inst == ir::CopyInst::TMemLoad || c.inst == ir::CopyInst::TMemStore;
            // select-copy-inst takes stmatrix only where lower-fragment-stores generates it.
            bool stmatrix = c.inst == ir::CopyInst::STSM;
            // lower-packed-copies says which layouts it cannot pack.
            bool packed = c.inst == ir::CopyInst::PackedBytes;
            bool tma = c.inst == ir::CopyInst::BulkLoad || c.inst == ir::CopyInst::BulkStore || c.inst == ir::CopyInst::BulkLoad1D ||
                       c.inst == ir::CopyInst::BulkStore1D;
            // Multicast needs every block's consumers to release a stage before
            // one block overwrites it everywhere: the warp-specialized pipeline
            // has that protocol, a copy on its own does not.
            if (tma && c.multicast() && c.barrier && !c.producerRole) {
                notYet(c.span, "a TMA multicast completing on the program's barrier (tma_copy with cluster_mask) is");
                break;
            }
            if (c.inst != ir::CopyInst::Normal && !pipelined && !operandLoad && !tma && !tensorMemory && !stmatrix && !packed) {
                std::string hint = c.inst == ir::CopyInst::BulkStore || c.inst == ir::CopyInst::BulkStore1D
                                       ? "; add disable_tma = true for a SIMT store"
                                       : "";
                ctx.diags.error(c.span, std::string(ir::copyKindName(c.copyKind)) + " " + ir::memScopeName(c.src.buffer->scope) + "->" + ir::memScopeName(c.dst.buffer->scope) +
                                            " selects " + ir::copyInstName(c.inst) + ", whose code generation is not supported yet for " + target + hint);
            }
            break;
        }
        case ir::StmtKind::Gemm: {
            const ir::Gemm &g = *ir::as<ir::Gemm>(s);
            std::string gap = gemmNotGeneratedYet(g);
            if (!gap.empty()) notYet(g.span, gap);
            break;
        }
        case ir::StmtKind::For: {
            const ir::For &f = *ir::as<ir::For>(s);
            if (f.pipeline && f.pipeline->stages > 0 && (!f.pipeline->order.empty() || !f.pipeline->stage.empty()))
                notYet(f.span, "an explicit pipeline order or stage list is");
            break;
        }
        case ir::StmtKind::WarpSpecialize: {
            const ir::WarpSpecialize &w = *ir::as<ir::WarpSpecialize>(s);
            if (!w.consecutive()) notYet(w.span, "ws(...) over warp groups that are not consecutive is");
            // What runs block-wide today cannot run on one role's warp groups yet.
            ir::forEachStmt(w.body, [&](const ir::Stmt &x) {
                if (x == s) return;
                if (std::string what = notYetInRole(x); !what.empty()) notYet(x->span, what + " inside ws(...) is");
            });
            break;
        }
        default: break;
        }
    });
    return kernel;
}

} // namespace tilet
