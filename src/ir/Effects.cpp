// Effects.cpp -- see Effects.h.
#include "ir/Effects.h"

#include "ir/Visitor.h"

namespace tilet::ir {

const char *proxyName(Proxy p) { return p == Proxy::Generic ? "generic" : "async"; }

const char *syncKindName(SyncKind k) {
    switch (k) {
    case SyncKind::Barrier: return "barrier";
    case SyncKind::ClusterBarrier: return "cluster barrier";
    case SyncKind::ProxyFence: return "async-proxy fence";
    case SyncKind::MbarrierInit: return "mbarrier init";
    case SyncKind::MbarrierArrive: return "mbarrier arrive";
    case SyncKind::MbarrierExpectTx: return "mbarrier expect_tx";
    case SyncKind::MbarrierWait: return "mbarrier wait";
    case SyncKind::CpAsyncCommit: return "cp.async commit";
    case SyncKind::CpAsyncWait: return "cp.async wait";
    case SyncKind::WgmmaFence: return "wgmma fence";
    case SyncKind::WgmmaCommit: return "wgmma commit";
    case SyncKind::WgmmaWait: return "wgmma wait";
    case SyncKind::BulkWait: return "bulk wait";
    case SyncKind::PdlTrigger: return "pdl trigger";
    case SyncKind::PdlWait: return "pdl wait";
    case SyncKind::Tcgen05Wait: return "tcgen05 wait";
    case SyncKind::Tcgen05Fence: return "tcgen05 fence";
    }
    return "?";
}

namespace {

// The loads in the expressions of one statement, not of the statements inside it.
class OwnLoads : public Visitor {
public:
    OwnLoads(const StmtNode *root, std::vector<Access> &out) : root_(root), out_(out) {}
    using Visitor::visit;
    void visit(const Stmt &s) override {
        if (s.get() == root_) Visitor::visit(s);
    }
    void visitLoad(const Load &n) override { load(n, 1); }
    // A call_extern's pointer is no load of its element: the call's own
    // access of the buffer says what it does there (operandEffects).
    void visitCallExtern(const CallExtern &n) override {
        for (size_t i = 0; i < n.args.size(); ++i) {
            if (n.kinds[i] == ExternArgKind::Value) visit(n.args[i]);
            else for (const Expr &index : as<Load>(n.args[i])->indices) visit(index);
        }
    }
    // An atomic fetch-add's elements are its own accesses (ownEffects), not loads.
    void visitAtomicFetchAdd(const AtomicFetchAdd &n) override {
        for (const Expr &element : {n.target, n.previous})
            for (const Expr &index : as<Load>(element)->indices) visit(index);
        visit(n.value);
    }
    // An atomic load's element and register are its own accesses (ownEffects), not loads.
    void visitAtomicLoad(const AtomicLoad &n) override {
        for (const Expr &element : {n.source, n.destination})
            for (const Expr &index : as<Load>(element)->indices) visit(index);
    }
    // A draw's register is its own access (ownEffects), not a load.
    void visitRngDraw(const RngDraw &n) override {
        for (const Expr &index : as<Load>(n.result)->indices) visit(index);
    }
    // A cluster-launch-control answer is read whole: 16 bytes from its first element.
    void visitClcQuery(const ClcQuery &n) {
        const Load &response = *as<Load>(n.response);
        load(response, ClcTryCancel::kBytes * 8 / std::max(8, dtypeBits(response.buffer->dtype)));
    }
    // dp4a reads four elements from each operand's address.
    void visitDp4a(const Dp4a &n) override {
        load(*as<Load>(n.a), Dp4a::kElements);
        load(*as<Load>(n.b), Dp4a::kElements);
        visit(n.c);
    }

private:
    void load(const Load &n, int64_t elements) {
        Access a;
        a.buffer = n.buffer.get();
        a.owner = &n.buffer;
        a.indices = &n.indices;
        a.elements = elements;
        a.exact = true;
        a.span = n.span;
        out_.push_back(a);
        Visitor::visitLoad(n);
    }

    const StmtNode *root_;
    std::vector<Access> &out_;
};

Access element(const Buffer &b, AccessMode mode, const std::vector<Expr> *indices = nullptr, Proxy proxy = Proxy::Generic) {
    Access a;
    a.buffer = b.get();
    a.owner = &b;
    a.mode = mode;
    a.indices = indices;
    a.proxy = proxy;
    return a;
}

Access box(const Region &r, AccessMode mode) {
    Access a;
    a.buffer = r.buffer.get();
    a.owner = &r.buffer;
    a.mode = mode;
    a.region = &r;
    return a;
}

// The A and B operands of wgmma and tcgen05.mma: shared ones are read
// through matrix descriptors (the async proxy), all of them asynchronously.
void descriptorOperands(const WgmmaOperand &a, const WgmmaOperand &b, std::vector<Access> &acc) {
    for (const WgmmaOperand *o : {&a, &b}) {
        bool shared = o->buffer->scope == MemScope::Shared;
        Access x = element(o->buffer, AccessMode::Read, &o->indices, shared ? Proxy::Async : Proxy::Generic);
        x.asynchronous = true;
        acc.push_back(x);
    }
}

SyncEffect sync(SyncKind k, const Buffer &barrier = nullptr, const Expr *index = nullptr) {
    SyncEffect e{k};
    e.barrier = barrier.get();
    e.index = index;
    return e;
}

bool isBulkLoad(CopyInst i) { return i == CopyInst::BulkLoad || i == CopyInst::BulkLoad1D; }
bool isBulkStore(CopyInst i) { return i == CopyInst::BulkStore || i == CopyInst::BulkStore1D; }

// The operands of each statement kind. No default: a new kind must say what it does.
void operandEffects(const Stmt &s, Effects &fx) {
    std::vector<Access> &acc = fx.accesses;
    std::vector<SyncEffect> &syn = fx.syncs;
    switch (s->kind) {
    case StmtKind::Seq:
    case StmtKind::LetStmt:
    case StmtKind::Allocate:
    case StmtKind::For:
    case StmtKind::IfThenElse:
    case StmtKind::While:
    case StmtKind::WarpSpecialize:
    case StmtKind::Elect:
    case StmtKind::SetMaxNReg:
    case StmtKind::TmaPrefetch:   // reads a kernel parameter (the tensor map), no buffer
        return;
    case StmtKind::Store: {
        const Store &n = *as<Store>(s);
        Access a = element(n.buffer, n.op == StoreOp::AtomicAdd ? AccessMode::ReadWrite : AccessMode::Write, &n.indices);
        a.asynchronous = n.op == StoreOp::AsyncCopy;
        a.atomic = n.op == StoreOp::AtomicAdd || n.op == StoreOp::AtomicStore;
        a.exact = true;
        acc.push_back(a);
        return;
    }
    case StmtKind::AtomicFetchAdd: {
        const AtomicFetchAdd &n = *as<AtomicFetchAdd>(s);
        const Load &target = *as<Load>(n.target), &previous = *as<Load>(n.previous);
        Access update = element(target.buffer, AccessMode::ReadWrite, &target.indices);
        Access result = element(previous.buffer, AccessMode::Write, &previous.indices);
        // Not `atomic`: the value it returns shows which adds came before it.
        update.exact = result.exact = true;
        acc.push_back(update);
        acc.push_back(result);
        return;
    }
    case StmtKind::AtomicLoad: {
        // `atomic`: ordered with other atomic accesses of the element by
        // their memory orders (the program's own protocol), not by barriers.
        const AtomicLoad &n = *as<AtomicLoad>(s);
        const Load &source = *as<Load>(n.source), &destination = *as<Load>(n.destination);
        Access read = element(source.buffer, AccessMode::Read, &source.indices);
        Access result = element(destination.buffer, AccessMode::Write, &destination.indices);
        read.atomic = true;
        read.exact = result.exact = true;
        acc.push_back(read);
        acc.push_back(result);
        return;
    }
    case StmtKind::CallExtern: {
        // Through a pointer the function may touch the whole buffer.
        const CallExtern &n = *as<CallExtern>(s);
        for (size_t i = 0; i < n.args.size(); ++i) {
            static const AccessMode modes[] = {AccessMode::Read, AccessMode::Read, AccessMode::Write, AccessMode::ReadWrite};   // ExternArgKind order
            if (n.kinds[i] == ExternArgKind::Value) continue;
            Access a = element(as<Load>(n.args[i])->buffer, modes[static_cast<int>(n.kinds[i])]);
            a.span = n.args[i]->span;
            acc.push_back(a);
        }
        return;
    }
    case StmtKind::VectorCopy: {
        const VectorCopy &n = *as<VectorCopy>(s);
        Access w = element(n.dst, AccessMode::Write, &n.dstIndices);
        w.asynchronous = n.async;   // cp.async: lands at the wait_group that retires its group
        w.elements = n.bytes * 8 / dtypeBits(n.dst->dtype);
        w.exact = true;
        acc.push_back(w);
        Access r = element(n.src, AccessMode::Read, &n.srcIndices);
        r.elements = n.bytes * 8 / dtypeBits(n.src->dtype);
        r.exact = true;
        acc.push_back(r);
        return;
    }
    case StmtKind::LdMatrix: {
        const LdMatrix &n = *as<LdMatrix>(s);
        acc.push_back(element(n.src, AccessMode::Read, &n.srcIndices));
        acc.push_back(element(n.dst, AccessMode::Write));
        return;
    }
    case StmtKind::StMatrix: {
        // Each lane's 16-byte row (count matrices: lanes 0 .. 8 * count - 1 give rows).
        const StMatrix &n = *as<StMatrix>(s);
        Access w = element(n.dst, AccessMode::Write, &n.dstIndices);
        w.elements = 16 * 8 / dtypeBits(n.dst->dtype);
        acc.push_back(w);
        acc.push_back(element(n.src, AccessMode::Read));
        return;
    }
    case StmtKind::Mma: {
        const Mma &n = *as<Mma>(s);
        acc.push_back(element(n.a, AccessMode::Read));
        acc.push_back(element(n.b, AccessMode::Read));
        if (n.scales) {
            acc.push_back(element(n.scales->a, AccessMode::Read));
            acc.push_back(element(n.scales->b, AccessMode::Read));
        }
        acc.push_back(element(n.d, AccessMode::ReadWrite));
        return;
    }
    case StmtKind::Wgmma: {
        const Wgmma &n = *as<Wgmma>(s);
        descriptorOperands(n.a, n.b, acc);
        Access d = element(n.d, AccessMode::ReadWrite);
        d.asynchronous = true;
        acc.push_back(d);
        return;
    }
    case StmtKind::WgmmaSync: {
        const WgmmaSync &n = *as<WgmmaSync>(s);
        SyncEffect e = sync(n.sync == WgmmaSyncKind::Fence    ? SyncKind::WgmmaFence
                            : n.sync == WgmmaSyncKind::Commit ? SyncKind::WgmmaCommit
                                                              : SyncKind::WgmmaWait);
        e.count = n.pending;
        syn.push_back(e);
        return;
    }
    case StmtKind::CpAsyncCommit: syn.push_back(sync(SyncKind::CpAsyncCommit)); return;
    case StmtKind::CpAsyncWait: {
        SyncEffect e = sync(SyncKind::CpAsyncWait);
        e.count = as<CpAsyncWait>(s)->pending;
        syn.push_back(e);
        return;
    }
    case StmtKind::TmaLoad: {
        const TmaLoad &n = *as<TmaLoad>(s);
        Access w = element(n.dst, AccessMode::Write, &n.dstIndices, Proxy::Async);
        w.asynchronous = true;
        w.completesOn = n.barrier.get();
        w.remote = n.multicastMask != 0;
        acc.push_back(w);
        acc.push_back(element(n.desc->tensor, AccessMode::Read, nullptr, Proxy::Async));
        return;
    }
    case StmtKind::TmaStore: {
        const TmaStore &n = *as<TmaStore>(s);
        Access r = element(n.src, AccessMode::Read, &n.srcIndices, Proxy::Async);
        r.asynchronous = true;   // until the bulk wait
        acc.push_back(r);
        Access w = element(n.desc->tensor, AccessMode::Write, nullptr, Proxy::Async);
        w.asynchronous = true;
        acc.push_back(w);
        return;
    }
    case StmtKind::BulkCopy: {
        const BulkCopy &n = *as<BulkCopy>(s);
        Access w = element(n.dst, AccessMode::Write, &n.dstIndices, Proxy::Async);
        w.asynchronous = true;
        w.completesOn = n.barrier.get();
        acc.push_back(w);
        Access r = element(n.src, AccessMode::Read, &n.srcIndices, Proxy::Async);
        r.asynchronous = true;
        acc.push_back(r);
        return;
    }
    case StmtKind::RngInit:
        acc.push_back(element(as<RngInit>(s)->state, AccessMode::Write));
        return;
    case StmtKind::RngDraw: {
        // Reads and advances the generator; the number lands in one register.
        const RngDraw &n = *as<RngDraw>(s);
        const Load &result = *as<Load>(n.result);
        acc.push_back(element(n.state, AccessMode::ReadWrite));
        Access r = element(result.buffer, AccessMode::Write, &result.indices);
        r.exact = true;
        acc.push_back(r);
        return;
    }
    case StmtKind::ClcTryCancel: {
        // The answer: written through the async proxy, landing when the
        // barrier's phase completes (in every block of the cluster with multicast).
        const ClcTryCancel &n = *as<ClcTryCancel>(s);
        Access w = element(n.result, AccessMode::Write, &n.resultIndices, Proxy::Async);
        w.elements = ClcTryCancel::kBytes * 8 / std::max(8, dtypeBits(n.result->dtype));
        w.asynchronous = true;
        w.completesOn = n.barrier.get();
        w.remote = n.multicast;
        acc.push_back(w);
        return;
    }
    case StmtKind::BarrierExpectTx: {
        const BarrierExpectTx &n = *as<BarrierExpectTx>(s);
        SyncEffect e = sync(SyncKind::MbarrierExpectTx, n.barrier, &n.index);
        e.count = n.bytes;
        e.arrives = n.arrive;
        syn.push_back(e);
        return;
    }
    case StmtKind::FenceProxyAsync: {
        SyncEffect e = sync(SyncKind::ProxyFence);
        e.global = as<FenceProxyAsync>(s)->global;
        syn.push_back(e);
        return;
    }
    case StmtKind::TmaStoreWait: syn.push_back(sync(SyncKind::BulkWait)); return;
    case StmtKind::TmemAlloc: acc.push_back(element(as<TmemAlloc>(s)->word, AccessMode::Write)); return;
    case StmtKind::TmemDealloc: return;   // the allocation's own bytes: ordered by the barrier before it
    case StmtKind::Tcgen05Mma: {
        const Tcgen05Mma &n = *as<Tcgen05Mma>(s);
        descriptorOperands(n.a, n.b, acc);
        acc.push_back(element(n.d, AccessMode::ReadWrite));
        if (n.scales) {
            acc.push_back(element(n.scales->sfa, AccessMode::Read));
            acc.push_back(element(n.scales->sfb, AccessMode::Read));
        }
        // All until the commit's arrival on completesOn (a wait on it publishes D).
        for (Access &a : acc) {
            a.asynchronous = true;
            a.completesOn = n.completesOn.get();
        }
        return;
    }
    case StmtKind::Tcgen05Copy: {
        // Run by the tensor core in order with the thread's tcgen05.mma, until its next commit.
        const Tcgen05Copy &n = *as<Tcgen05Copy>(s);
        acc.push_back(element(n.src, AccessMode::Read, &n.srcIndices, Proxy::Async));
        acc.push_back(element(n.tmem, AccessMode::Write));
        for (Access &a : acc) {
            a.asynchronous = true;
            a.completesOn = n.completesOn.get();
        }
        return;
    }
    case StmtKind::Tcgen05Commit: {
        const Tcgen05Commit &n = *as<Tcgen05Commit>(s);
        SyncEffect e = sync(SyncKind::MbarrierArrive, n.barrier, &n.index);
        e.count = 1;
        syn.push_back(e);
        return;
    }
    case StmtKind::TmemMove: {
        const TmemMove &n = *as<TmemMove>(s);
        if (n.store) {
            // Complete at tcgen05.wait::st, which lower-tensor-memory writes
            // right after a copy's stores: what follows sees them.
            acc.push_back(element(n.regs, AccessMode::Read));
            acc.push_back(element(n.tmem, AccessMode::Write));
            return;
        }
        acc.push_back(element(n.tmem, AccessMode::Read));
        Access w = element(n.regs, AccessMode::Write);
        w.asynchronous = true;   // until tcgen05.wait::ld
        acc.push_back(w);
        return;
    }
    case StmtKind::Tcgen05Sync: {
        Tcgen05SyncKind k = as<Tcgen05Sync>(s)->sync;
        SyncEffect e = sync(k == Tcgen05SyncKind::WaitLoad || k == Tcgen05SyncKind::WaitStore ? SyncKind::Tcgen05Wait : SyncKind::Tcgen05Fence);
        e.count = k == Tcgen05SyncKind::FenceAfter ? 1 : 0;
        syn.push_back(e);
        return;
    }
    case StmtKind::Copy: {
        const Copy &n = *as<Copy>(s);
        Access r = box(n.src, AccessMode::Read), w = box(n.dst, AccessMode::Write);
        if (isBulkLoad(n.inst)) {
            r.proxy = w.proxy = Proxy::Async;
            w.asynchronous = true;
            w.completesOn = n.barrier.get();
        } else if (isBulkStore(n.inst)) {
            r.proxy = w.proxy = Proxy::Async;
            r.asynchronous = w.asynchronous = true;
        } else if (n.inst == CopyInst::CPAsync) {
            w.asynchronous = true;
        }
        w.remote = n.dstBlock != nullptr || n.multicast();
        acc.push_back(r);
        acc.push_back(w);
        // tma_copy(..., barrier = b): the load adds its bytes to b's phase.
        if (n.barrier) syn.push_back(sync(SyncKind::MbarrierExpectTx, n.barrier, &n.barrierIndex));
        // copy_cluster(dst_block, remote_barrier): one thread arrives on the peer's barrier.
        if (n.dstBlock && n.remoteBarrier) {
            SyncEffect e = sync(SyncKind::MbarrierArrive, n.remoteBarrier);
            e.remote = true;
            e.count = 1;
            syn.push_back(e);
        }
        return;
    }
    case StmtKind::Gemm: {
        const Gemm &n = *as<Gemm>(s);
        acc.push_back(box(n.a, AccessMode::Read));
        acc.push_back(box(n.b, AccessMode::Read));
        acc.push_back(box(n.c, AccessMode::ReadWrite));
        if (n.sfa) acc.push_back(box(*n.sfa, AccessMode::Read));
        if (n.sfb) acc.push_back(box(*n.sfb, AccessMode::Read));
        // With mbar = b (tcgen05), the MMAs read their operands (scale
        // factors included) and write C asynchronously, until b's phase
        // completes; without, until the phase of the thread's next commit.
        if (const BufferNode *completion = n.mbar ? n.mbar.get() : n.completesOn.get())
            for (Access &a : acc) {
                a.asynchronous = true;
                a.completesOn = completion;
            }
        // gemm(..., mbar = b): its MMAs' completion arrives on b once
        // (TileLang's tcgen05 gemm: one thread's tcgen05.commit).
        if (n.mbar) {
            SyncEffect e = sync(SyncKind::MbarrierArrive, n.mbar, n.mbarIndex ? &n.mbarIndex : nullptr);
            e.count = 1;
            syn.push_back(e);
        }
        return;
    }
    case StmtKind::Fill: acc.push_back(box(as<Fill>(s)->dst, AccessMode::Write)); return;
    case StmtKind::Reduce: {
        const Reduce &n = *as<Reduce>(s);
        acc.push_back(element(n.src, AccessMode::Read));
        acc.push_back(element(n.dst, n.clear ? AccessMode::Write : AccessMode::ReadWrite));
        return;
    }
    case StmtKind::FinalizeReducer: acc.push_back(element(as<FinalizeReducer>(s)->reducer, AccessMode::ReadWrite)); return;
    case StmtKind::Cumsum: {
        const Cumsum &n = *as<Cumsum>(s);
        acc.push_back(box(n.src, AccessMode::Read));
        acc.push_back(box(n.dst, n.src.buffer == n.dst.buffer ? AccessMode::ReadWrite : AccessMode::Write));
        return;
    }
    case StmtKind::AtomicAdd: {
        const AtomicAdd &n = *as<AtomicAdd>(s);
        acc.push_back(box(n.dst, AccessMode::ReadWrite));
        acc.back().atomic = true;
        if (n.src) acc.push_back(box(*n.src, AccessMode::Read));
        return;
    }
    case StmtKind::ScaleTranspose: acc.push_back(box(as<ScaleTranspose>(s)->region, AccessMode::ReadWrite)); return;
    case StmtKind::Im2Col: {
        const Im2Col &n = *as<Im2Col>(s);
        Access r = element(n.image, AccessMode::Read), w = box(n.dst, AccessMode::Write);   // a gather: any element of the image
        w.asynchronous = n.inst == CopyInst::CPAsync;
        if (isBulkLoad(n.inst)) {
            // TMA's im2col mode, like a copy's TMA load.
            r.proxy = w.proxy = Proxy::Async;
            w.asynchronous = true;
            w.completesOn = n.barrier.get();
        }
        acc.push_back(r);
        acc.push_back(w);
        if (n.barrier) syn.push_back(sync(SyncKind::MbarrierExpectTx, n.barrier, &n.barrierIndex));
        return;
    }
    case StmtKind::SyncThreads: {
        const SyncThreads &n = *as<SyncThreads>(s);
        SyncEffect e = sync(SyncKind::Barrier);
        e.barrierId = n.barrierId;
        e.threads = n.threads;
        syn.push_back(e);
        return;
    }
    // Orders when the warp groups issue, not what they read or write (see
    // IssueTurn): no pass may count on it to order an access.
    case StmtKind::IssueTurn: return;
    case StmtKind::BarrierInit:
        for (const Buffer &b : as<BarrierInit>(s)->barriers) syn.push_back(sync(SyncKind::MbarrierInit, b));
        return;
    case StmtKind::BarrierArrive: {
        const BarrierArrive &n = *as<BarrierArrive>(s);
        SyncEffect e = sync(SyncKind::MbarrierArrive, n.barrier, &n.index);
        e.remote = n.remoteRank != nullptr;
        syn.push_back(e);
        return;
    }
    case StmtKind::BarrierWait: {
        const BarrierWait &n = *as<BarrierWait>(s);
        SyncEffect e = sync(SyncKind::MbarrierWait, n.barrier, &n.index);
        e.parity = &n.parity;
        syn.push_back(e);
        return;
    }
    case StmtKind::ClusterSync: syn.push_back(sync(SyncKind::ClusterBarrier)); return;
    case StmtKind::Jump: return;   // control flow only: the passes that walk loops follow it
    case StmtKind::PdlTrigger: syn.push_back(sync(SyncKind::PdlTrigger)); return;
    case StmtKind::PdlSync: syn.push_back(sync(SyncKind::PdlWait)); return;
    }
}

} // namespace

Effects ownEffects(const Stmt &s) {
    Effects fx;
    if (!s) return fx;
    operandEffects(s, fx);
    for (Access &a : fx.accesses) a.span = s->span;
    OwnLoads loads(s.get(), fx.accesses);
    loads.visit(s);
    return fx;
}

void forEachEffect(const Stmt &s, const std::function<void(const Stmt &, const Effects &)> &f) {
    forEachStmt(s, [&](const Stmt &x) { f(x, ownEffects(x)); });
}

bool touchesBuffer(const Stmt &s, const BufferNode *b, bool writesOnly) {
    bool found = false;
    forEachEffect(s, [&](const Stmt &, const Effects &fx) {
        for (const Access &a : fx.accesses) found = found || (a.buffer == b && (!writesOnly || a.writes()));
    });
    return found;
}

std::optional<Writer> writerOfWhatItReads(const Expr &e, const Stmt &body) {
    std::set<const BufferNode *> read;
    forEachExpr(e, [&](const Expr &x) {
        if (const Load *l = as<Load>(x)) read.insert(&storageRoot(*l->buffer));
    });
    std::optional<Writer> writer;
    if (read.empty()) return writer;
    forEachEffect(body, [&](const Stmt &t, const Effects &fx) {
        for (const Access &a : fx.accesses)
            if (!writer && a.buffer && read.count(&storageRoot(*a.buffer)) && a.writes()) writer = Writer{a.buffer->name, t->span};
    });
    return writer;
}

bool computesBesideWgmma(const Stmt &s) {
    if (!s || s->kind == StmtKind::WgmmaSync || s->kind == StmtKind::BarrierWait) return false;
    bool wgmma = false, reads = false;
    forEachEffect(s, [&](const Stmt &x, const Effects &fx) {
        wgmma = wgmma || as<Wgmma>(x);
        for (const Access &a : fx.accesses) reads = reads || a.reads();
    });
    return reads && !wgmma;
}

std::set<const Seq *> blockSequences(const Stmt &body) {
    std::set<const Seq *> out;
    std::function<void(const Stmt &)> walk = [&](const Stmt &s) {
        if (!s) return;
        if (const Seq *q = as<Seq>(s)) {
            out.insert(q);
            for (const Stmt &x : q->stmts) walk(x);
        } else if (const LetStmt *l = as<LetStmt>(s)) {
            walk(l->body);
        } else if (const Allocate *a = as<Allocate>(s)) {
            walk(a->body);
        }
    };
    walk(body);
    return out;
}

bool issuedByOneThread(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::TmaLoad:
    case StmtKind::TmaStore:
    case StmtKind::BulkCopy:
    case StmtKind::Tcgen05Mma:
    case StmtKind::Tcgen05Copy:
    case StmtKind::Tcgen05Commit:
    case StmtKind::ClcTryCancel:
    case StmtKind::TmaPrefetch: return true;
    case StmtKind::LdMatrix:
    case StmtKind::StMatrix:
    case StmtKind::Mma:
    case StmtKind::Wgmma:
    case StmtKind::WgmmaSync:
    case StmtKind::TmemAlloc:
    case StmtKind::TmemDealloc:
    case StmtKind::TmemMove:
    case StmtKind::ScaleTranspose:
    case StmtKind::WarpSpecialize:
    case StmtKind::SetMaxNReg:
    case StmtKind::IssueTurn:
    case StmtKind::SyncThreads:
    case StmtKind::Seq:
    case StmtKind::LetStmt:
    case StmtKind::Allocate:
    case StmtKind::For:
    case StmtKind::IfThenElse:
    case StmtKind::While:
    case StmtKind::Jump:
    case StmtKind::Store:
    case StmtKind::VectorCopy:
    case StmtKind::AtomicFetchAdd:
    case StmtKind::AtomicLoad:
    case StmtKind::CallExtern:
    case StmtKind::RngInit:
    case StmtKind::RngDraw:
    case StmtKind::CpAsyncCommit:
    case StmtKind::CpAsyncWait:
    case StmtKind::BarrierExpectTx:
    case StmtKind::FenceProxyAsync:
    case StmtKind::TmaStoreWait:
    case StmtKind::Tcgen05Sync:
    case StmtKind::Copy:
    case StmtKind::Gemm:
    case StmtKind::Fill:
    case StmtKind::Reduce:
    case StmtKind::Cumsum:
    case StmtKind::FinalizeReducer:
    case StmtKind::AtomicAdd:
    case StmtKind::Im2Col:
    case StmtKind::BarrierInit:
    case StmtKind::BarrierArrive:
    case StmtKind::BarrierWait:
    case StmtKind::ClusterSync:
    case StmtKind::Elect:
    case StmtKind::PdlTrigger:
    case StmtKind::PdlSync: return false;
    }
    return false;
}

const char *warpWideInstruction(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::LdMatrix: return "ldmatrix";
    case StmtKind::StMatrix: return "stmatrix";
    case StmtKind::Mma: return "mma.sync";
    case StmtKind::Wgmma: return "wgmma.mma_async";
    case StmtKind::WgmmaSync: return "wgmma's fence, commit or wait";
    case StmtKind::TmemAlloc: return "tcgen05.alloc";
    case StmtKind::TmemDealloc: return "tcgen05.dealloc";
    case StmtKind::TmemMove: return "tcgen05.ld / tcgen05.st";
    case StmtKind::ScaleTranspose: return "a warp's scale-factor transpose";
    case StmtKind::WarpSpecialize: return "a role of whole warps (ws)";
    case StmtKind::SetMaxNReg: return "setmaxnreg";
    case StmtKind::IssueTurn: return "a named barrier (bar.sync with a thread count)";
    case StmtKind::SyncThreads:
        // The block's barrier counts the block's threads; a named one counts whole warps, __syncwarp a whole warp.
        return as<SyncThreads>(s)->barrierId == 0 ? nullptr : "a named barrier or __syncwarp";
    case StmtKind::Seq:
    case StmtKind::LetStmt:
    case StmtKind::Allocate:
    case StmtKind::For:
    case StmtKind::IfThenElse:
    case StmtKind::While:
    case StmtKind::Jump:
    case StmtKind::Store:
    case StmtKind::VectorCopy:
    case StmtKind::AtomicFetchAdd:
    case StmtKind::AtomicLoad:
    case StmtKind::CallExtern:
    case StmtKind::RngInit:
    case StmtKind::RngDraw:
    case StmtKind::CpAsyncCommit:
    case StmtKind::CpAsyncWait:
    case StmtKind::TmaLoad:
    case StmtKind::TmaStore:
    case StmtKind::BulkCopy:
    case StmtKind::BarrierExpectTx:
    case StmtKind::FenceProxyAsync:
    case StmtKind::TmaStoreWait:
    case StmtKind::Tcgen05Mma:
    case StmtKind::Tcgen05Commit:
    case StmtKind::Tcgen05Copy:
    case StmtKind::Tcgen05Sync:
    case StmtKind::TmaPrefetch:
    case StmtKind::ClcTryCancel:
    case StmtKind::Copy:
    case StmtKind::Gemm:
    case StmtKind::Fill:
    case StmtKind::Reduce:
    case StmtKind::Cumsum:
    case StmtKind::FinalizeReducer:
    case StmtKind::AtomicAdd:
    case StmtKind::Im2Col:
    case StmtKind::BarrierInit:
    case StmtKind::BarrierArrive:
    case StmtKind::BarrierWait:
    case StmtKind::ClusterSync:
    case StmtKind::Elect:
    case StmtKind::PdlTrigger:
    case StmtKind::PdlSync: break;
    }
    // A warp shuffle in the statement's own expressions (a reduction's, the program's).
    class OwnShuffles : public Visitor {
    public:
        explicit OwnShuffles(const StmtNode *root) : root_(root) {}
        using Visitor::visit;
        void visit(const Stmt &x) override {
            if (x.get() == root_) Visitor::visit(x);
        }
        void visitShuffle(const Shuffle &n) override {
            found = true;
            Visitor::visitShuffle(n);
        }
        bool found = false;

    private:
        const StmtNode *root_;
    } shuffles(s.get());
    shuffles.visit(s);
    return shuffles.found ? "a warp shuffle (shfl.sync)" : nullptr;
}

} // namespace tilet::ir
