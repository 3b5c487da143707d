// RejectUnimplemented.cpp -- see RejectUnimplemented.h.
#include "passes/RejectUnimplemented.h"

#include "ir/Visitor.h"

namespace tilet {

ir::Kernel rejectUnimplemented(const ir::Kernel &kernel, PassContext &ctx) {
    const std::string target = ctx.target.name;
    auto notYet = [&](SourceRange where, const std::string &what) { ctx.diags.error(where, what + " not supported yet for " + target); };
    if (kernel.hasCluster) notYet(kernel.span, "thread block clusters are");
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        switch (s->kind) {
        case ir::StmtKind::Allocate: {
            const ir::BufferNode &b = *ir::as<ir::Allocate>(s)->buffer;
            if (b.scope == ir::MemScope::Barrier) notYet(b.span, "mbarriers (alloc_barrier) are");
            if (b.scope == ir::MemScope::TMem) notYet(b.span, "tensor memory (alloc_tmem) is");
            break;
        }
        case ir::StmtKind::Copy: {
            const ir::Copy &c = *ir::as<ir::Copy>(s);
            if (c.inst != ir::CopyInst::Normal) {
                std::string hint = c.inst == ir::CopyInst::BulkStore || c.inst == ir::CopyInst::BulkStore1D
                                       ? "; add disable_tma = true for a SIMT store"
                                       : "";
                ctx.diags.error(c.span, std::string("copy ") + ir::memScopeName(c.src.buffer->scope) + "->" + ir::memScopeName(c.dst.buffer->scope) +
                                            " selects " + ir::copyInstName(c.inst) + ", whose code generation is not supported yet for " + target + hint);
            }
            break;
        }
        case ir::StmtKind::Gemm: {
            const ir::Gemm &g = *ir::as<ir::Gemm>(s);
            notYet(g.span, std::string("gemm code generation (") + ir::gemmInstName(g.inst) + ") is");
            break;
        }
        case ir::StmtKind::For: {
            const ir::For &f = *ir::as<ir::For>(s);
            if (f.pipeline && f.pipeline->stages > 0) notYet(f.span, "software pipelining (pipelined with stages > 0) is");
            break;
        }
        case ir::StmtKind::WarpSpecialize: notYet(s->span, "warp specialization (ws) is"); break;
        case ir::StmtKind::SetMaxNReg: notYet(s->span, "set_max_nreg is"); break;
        case ir::StmtKind::PdlTrigger:
        case ir::StmtKind::PdlSync: notYet(s->span, "programmatic dependent launch (pdl_trigger/pdl_sync) is"); break;
        case ir::StmtKind::ClusterSync: notYet(s->span, "cluster_sync is"); break;
        default: break;
        }
    });
    return kernel;
}

} // namespace tilet
