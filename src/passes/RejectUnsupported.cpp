// RejectUnsupported.cpp -- see RejectUnsupported.h. Runs before any lowering
// so that a kernel is either translated completely or not at all.
#include "passes/RejectUnsupported.h"

#include "ir/Visitor.h"

namespace tilet {

namespace {

class Checker {
public:
    Checker(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx), target_(ctx.target.name) {}

    void run() {
        if (kernel_.threads > ctx_.target.maxThreadsPerBlock)
            ctx_.diags.error(kernel_.span, "kernel '" + kernel_.name + "' has " + std::to_string(kernel_.threads) +
                                               " threads but " + target_ + " allows " + std::to_string(ctx_.target.maxThreadsPerBlock) + " per block");
        if (kernel_.hasCluster) {
            int64_t size = kernel_.cluster[0] * kernel_.cluster[1] * kernel_.cluster[2];
            if (!ctx_.target.clusters) ctx_.diags.error(kernel_.span, "thread block clusters need sm_90 or newer; " + target_ + " has none");
            else if (size > ctx_.target.maxClusterSize)
                ctx_.diags.error(kernel_.span, "a cluster of " + std::to_string(size) + " blocks exceeds the " +
                                                   std::to_string(ctx_.target.maxClusterSize) + " that " + target_ + " allows");
            else notYet(kernel_.span, "thread block clusters");
        }
        ir::forEachStmt(kernel_.body, [&](const ir::Stmt &s) { visit(s); });
    }

private:
    void notYet(SourceRange where, const std::string &what) {
        ctx_.diags.error(where, what + " not supported yet for " + target_);
    }

    void visit(const ir::Stmt &s) {
        switch (s->kind) {
        case ir::StmtKind::Allocate: {
            const ir::BufferNode &b = *ir::as<ir::Allocate>(s)->buffer;
            if (b.scope == ir::MemScope::Barrier) {
                if (!ctx_.target.tma) ctx_.diags.error(b.span, "mbarriers (alloc_barrier) need sm_90 or newer; " + target_ + " has none");
                else notYet(b.span, "mbarriers (alloc_barrier) are");
            }
            if (b.scope == ir::MemScope::TMem) {
                if (!ctx_.target.tcgen05) ctx_.diags.error(b.span, "tensor memory (alloc_tmem) needs sm_100a; " + target_ + " has none");
                else notYet(b.span, "tensor memory (alloc_tmem) is");
            }
            break;
        }
        case ir::StmtKind::Gemm: notYet(s->span, "gemm code generation is"); break;
        case ir::StmtKind::For: {
            const ir::For &f = *ir::as<ir::For>(s);
            if (f.pipeline && f.pipeline->stages > 0) notYet(f.span, "software pipelining (pipelined with stages > 0) is");
            break;
        }
        case ir::StmtKind::WarpSpecialize: notYet(s->span, "warp specialization (ws) is"); break;
        case ir::StmtKind::SetMaxNReg:
            if (!ctx_.target.setmaxnreg) ctx_.diags.error(s->span, "set_max_nreg (setmaxnreg) needs sm_90a or sm_100a; " + target_ + " has none");
            else notYet(s->span, "set_max_nreg is");
            break;
        case ir::StmtKind::PdlTrigger:
        case ir::StmtKind::PdlSync:
            if (!ctx_.target.pdl) ctx_.diags.error(s->span, "programmatic dependent launch needs sm_90 or newer; " + target_ + " has none");
            else notYet(s->span, "programmatic dependent launch (pdl_trigger/pdl_sync) is");
            break;
        case ir::StmtKind::ClusterSync:
            if (!ctx_.target.clusters) ctx_.diags.error(s->span, "cluster_sync needs sm_90 or newer; " + target_ + " has no clusters");
            else notYet(s->span, "cluster_sync is");
            break;
        case ir::StmtKind::BarrierArrive:
        case ir::StmtKind::BarrierWait: break;   // reported with their barrier's allocation
        default: break;
        }
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    std::string target_;
};

} // namespace

ir::Kernel rejectUnsupported(const ir::Kernel &kernel, PassContext &ctx) {
    Checker(kernel, ctx).run();
    return kernel;
}

} // namespace tilet
