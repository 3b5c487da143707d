// CheckTarget.cpp -- see CheckTarget.h.
#include "passes/CheckTarget.h"

#include "ir/Visitor.h"

#include <algorithm>

namespace tilet {

namespace {

// setmaxnreg.inc waits until the SM's register file has the registers it
// asks for (PTX ISA, "setmaxnreg"): if the roles of one block ask for more
// than the SM has, it waits forever. Roles that do not reallocate keep what
// the launch gave them, at most registers_per_sm / threads each.
void checkRegisterBudget(const ir::Kernel &kernel, const Target &t, PassContext &ctx) {
    int64_t total = 0, reallocatingThreads = 0;
    const ir::SetMaxNReg *largest = nullptr;
    std::string roles;
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        const ir::WarpSpecialize *ws = ir::as<ir::WarpSpecialize>(s);
        if (!ws) return;
        const ir::SetMaxNReg *request = nullptr;
        ir::forEachStmt(ws->body, [&](const ir::Stmt &x) {
            const ir::SetMaxNReg *r = ir::as<ir::SetMaxNReg>(x);
            if (r && (!request || r->count > request->count)) request = r;
        });
        if (!request) return;
        if (!ws->wholeWarpGroups()) {
            ctx.diags.error(request->span, "set_max_nreg in a role of threads " + std::to_string(ws->firstThread()) + ".." +
                                               std::to_string(ws->firstThread() + ws->threads() - 1) +
                                               ": setmaxnreg is executed by every warp of a warp group (PTX ISA, \"setmaxnreg\"), and this role is not whole warp groups "
                                               "(roles of one chain of conditions that make up a warp group, none of them under a condition on the block, may each start with the "
                                               "same set_max_nreg)");
            return;
        }
        total += ws->threads() * request->count;
        reallocatingThreads += ws->threads();
        roles += (roles.empty() ? "" : " + ") + std::to_string(ws->threads()) + " x " + std::to_string(request->count);
        if (request->increase && (!largest || request->count > largest->count)) largest = request;
    });
    if (!largest || t.registersPerSm <= 0) return;
    int64_t others = std::max<int64_t>(0, kernel.threads - reallocatingThreads);
    int64_t atLaunch = std::min<int64_t>(t.maxRegistersPerThread, t.registersPerSm / std::max<int64_t>(kernel.threads, 1)) / 8 * 8;
    if (others) roles += " + " + std::to_string(others) + " x " + std::to_string(atLaunch) + " (the threads that keep their launch registers)";
    total += others * atLaunch;
    if (total > t.registersPerSm)
        ctx.diags.error(largest->span, "the block's warp groups ask for " + std::to_string(total) + " registers (" + roles + "), more than the " +
                                           std::to_string(t.registersPerSm) + " of an " + t.name + " SM: this setmaxnreg.inc would wait forever");
}

} // namespace

ir::Kernel checkTarget(const ir::Kernel &kernel, PassContext &ctx) {
    const Target &t = ctx.target;
    auto error = [&](SourceRange where, const std::string &text) { ctx.diags.error(where, text); };
    if (kernel.threads > t.maxThreadsPerBlock)
        error(kernel.span, "kernel '" + kernel.name + "' has " + std::to_string(kernel.threads) + " threads but " + t.name + " allows " +
                               std::to_string(t.maxThreadsPerBlock) + " per block");
    if (kernel.hasCluster) {
        int64_t size = kernel.cluster[0] * kernel.cluster[1] * kernel.cluster[2];
        if (!t.has(Feature::Clusters)) error(kernel.span, "thread block clusters need " + targetsWith(Feature::Clusters) + "; " + t.name + " has none");
        else if (size > t.maxClusterSize)
            error(kernel.span, "a cluster of " + std::to_string(size) + " blocks exceeds the " + std::to_string(t.maxClusterSize) + " that " +
                                   t.name + " allows");
    }
    checkRegisterBudget(kernel, t, ctx);
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        switch (s->kind) {
        case ir::StmtKind::Allocate: {
            const ir::BufferNode &b = *ir::as<ir::Allocate>(s)->buffer;
            if (b.scope == ir::MemScope::Barrier && !t.has(Feature::Tma))
                error(b.span, "mbarriers (alloc_barrier) need " + targetsWith(Feature::Tma) + "; " + t.name + " has none");
            if (b.scope == ir::MemScope::TMem && !t.has(Feature::Tcgen05))
                error(b.span, "tensor memory (alloc_tmem) needs " + targetsWith(Feature::Tcgen05) + "; " + t.name + " has none");
            break;
        }
        case ir::StmtKind::SetMaxNReg:
            if (!t.has(Feature::Setmaxnreg)) error(s->span, "set_max_nreg (setmaxnreg) needs " + targetsWith(Feature::Setmaxnreg) + "; " + t.name + " has none");
            break;
        case ir::StmtKind::Tcgen05Commit:
            if (!t.has(Feature::Tcgen05))
                error(s->span, "tcgen05_mma_arrive (tcgen05.commit) needs " + targetsWith(Feature::Tcgen05) + "; " + t.name + " has none");
            break;
        case ir::StmtKind::Tcgen05Copy:
            if (!t.has(Feature::Tcgen05))
                error(s->span, "tcgen05_cp_warpx4 (tcgen05.cp) needs " + targetsWith(Feature::Tcgen05) + "; " + t.name + " has none");
            break;
        case ir::StmtKind::PdlTrigger:
        case ir::StmtKind::PdlSync:
            if (!t.has(Feature::Pdl)) error(s->span, lacks(t, Feature::Pdl));
            break;
        case ir::StmtKind::Store:
        case ir::StmtKind::AtomicAdd:
        case ir::StmtKind::AtomicFetchAdd: {
            // atom.add.noftz.bf16 (any memory order but the relaxed one CUDA's
            // atomicAdd emulates) needs sm_90 (PTX ISA, "atom").
            const ir::Store *st = ir::as<ir::Store>(s);
            const ir::AtomicAdd *a = ir::as<ir::AtomicAdd>(s);
            const ir::AtomicFetchAdd *f = ir::as<ir::AtomicFetchAdd>(s);
            bool atomic = a || f || st->op == ir::StoreOp::AtomicAdd;
            ir::MemoryOrder order = a ? a->order : f ? f->order : st->order;
            DType type = a ? a->dst.buffer->dtype : f ? f->target->dtype : st->buffer->dtype;
            if (atomic && order != ir::MemoryOrder::Relaxed && type == DType::BF16 && !t.has(Feature::AtomBf16))
                error(s->span, std::string("a bf16 atomic_add with memory_order = ") + ir::memoryOrderName(order) +
                                   " needs " + targetsWith(Feature::AtomBf16) + " (atom.add.bf16); " + t.name + " has only the relaxed one");
            break;
        }
        case ir::StmtKind::ClusterSync:
            if (!t.has(Feature::Clusters)) error(s->span, "cluster_sync needs " + targetsWith(Feature::Clusters) + "; " + t.name + " has no clusters");
            break;
        case ir::StmtKind::ClcTryCancel:
            if (!t.has(Feature::ClusterLaunchControl)) error(s->span, lacks(t, Feature::ClusterLaunchControl));
            break;
        default: break;
        }
    });
    bool queried = false;
    ir::forEachExpr(kernel.body, [&](const ir::Expr &e) {
        if (queried || !ir::as<ir::ClcQuery>(e)) return;
        queried = true;
        if (!t.has(Feature::ClusterLaunchControl)) error(e->span, lacks(t, Feature::ClusterLaunchControl));
    });
    return kernel;
}

} // namespace tilet
