#include "ir/Visitor.h"

#include "support/InternalError.h"

namespace tilet::ir {

// ------------------------------------------------------------------ Visitor

void Visitor::visit(const Expr &e) {
    if (!e) return;
    switch (e->kind) {
#define TILET_IR_EXPR(name)                                                                                            \
    case ExprKind::name: return visit##name(static_cast<const name &>(*e));
#include "ir/Nodes.def"
    }
}

void Visitor::visit(const Stmt &s) {
    if (!s) return;
    switch (s->kind) {
#define TILET_IR_STMT(name)                                                                                            \
    case StmtKind::name: return visit##name(static_cast<const name &>(*s));
#include "ir/Nodes.def"
    }
}

void Visitor::visitRegion(const Region &r) {
    for (const Expr &m : r.mins) visit(m);
}

void Visitor::visitIntImm(const IntImm &) {}
void Visitor::visitFloatImm(const FloatImm &) {}
void Visitor::visitVar(const Var &) {}
void Visitor::visitSpecialReg(const SpecialReg &) {}
void Visitor::visitUnary(const Unary &n) { visit(n.a); }
void Visitor::visitBinary(const Binary &n) { visit(n.a); visit(n.b); }
void Visitor::visitSelect(const Select &n) { visit(n.cond); visit(n.thenValue); visit(n.elseValue); }
void Visitor::visitCast(const Cast &n) { visit(n.value); }
void Visitor::visitMathCall(const MathCall &n) { for (const Expr &a : n.args) visit(a); }
void Visitor::visitLoad(const Load &n) { for (const Expr &i : n.indices) visit(i); }
void Visitor::visitDp4a(const Dp4a &n) {
    visit(n.a);
    visit(n.b);
    visit(n.c);
}
void Visitor::visitClcQuery(const ClcQuery &n) { visit(n.response); }
void Visitor::visitShuffle(const Shuffle &n) {
    visit(n.value);
    visit(n.operand);
}

void Visitor::visitSeq(const Seq &n) { for (const Stmt &s : n.stmts) visit(s); }
void Visitor::visitLetStmt(const LetStmt &n) { visit(n.value); visit(n.body); }
void Visitor::visitAllocate(const Allocate &n) { visit(n.body); }
void Visitor::visitFor(const For &n) { visit(n.min); visit(n.extent); visit(n.body); }
void Visitor::visitIfThenElse(const IfThenElse &n) { visit(n.cond); visit(n.thenBody); visit(n.elseBody); }
void Visitor::visitWhile(const While &n) { visit(n.cond); visit(n.body); }
void Visitor::visitStore(const Store &n) { for (const Expr &i : n.indices) visit(i); visit(n.value); }
void Visitor::visitAtomicFetchAdd(const AtomicFetchAdd &n) {
    visit(n.target);
    visit(n.value);
    visit(n.previous);
}
void Visitor::visitAtomicLoad(const AtomicLoad &n) {
    visit(n.source);
    visit(n.destination);
}
void Visitor::visitCallExtern(const CallExtern &n) { for (const Expr &a : n.args) visit(a); }
void Visitor::visitRngInit(const RngInit &n) { visit(n.seed); visit(n.sequence); visit(n.offset); }
void Visitor::visitRngDraw(const RngDraw &n) { visit(n.result); }
void Visitor::visitVectorCopy(const VectorCopy &n) {
    for (const Expr &i : n.dstIndices) visit(i);
    for (const Expr &i : n.srcIndices) visit(i);
    visit(n.srcValid);
}
void Visitor::visitLdMatrix(const LdMatrix &n) {
    visit(n.dstOffset);
    for (const Expr &i : n.srcIndices) visit(i);
}
void Visitor::visitStMatrix(const StMatrix &n) {
    for (const Expr &i : n.dstIndices) visit(i);
    visit(n.srcOffset);
}
void Visitor::visitMma(const Mma &n) {
    visit(n.dOffset);
    visit(n.aOffset);
    visit(n.bOffset);
    if (n.scales) {
        visit(n.scales->aOffset);
        visit(n.scales->aThread);
        visit(n.scales->aByte);
        visit(n.scales->bOffset);
        visit(n.scales->bThread);
        visit(n.scales->bByte);
    }
}
void Visitor::visitCpAsyncCommit(const CpAsyncCommit &) {}
void Visitor::visitWgmma(const Wgmma &n) {
    visit(n.dOffset);
    for (const Expr &i : n.a.indices) visit(i);
    for (const Expr &i : n.b.indices) visit(i);
    visit(n.scaleD);
}
void Visitor::visitWgmmaSync(const WgmmaSync &) {}
void Visitor::visitTmaLoad(const TmaLoad &n) {
    for (const Expr &i : n.dstIndices) visit(i);
    for (const Expr &c : n.coords) visit(c);
    for (const Expr &o : n.im2colOffsets) visit(o);
    visit(n.barrierIndex);
}
void Visitor::visitTmaStore(const TmaStore &n) {
    for (const Expr &i : n.srcIndices) visit(i);
    for (const Expr &c : n.coords) visit(c);
}
void Visitor::visitBulkCopy(const BulkCopy &n) {
    for (const Expr &i : n.dstIndices) visit(i);
    for (const Expr &i : n.srcIndices) visit(i);
    visit(n.barrierIndex);
}
void Visitor::visitBarrierExpectTx(const BarrierExpectTx &n) { visit(n.index); }
void Visitor::visitClcTryCancel(const ClcTryCancel &n) {
    for (const Expr &i : n.resultIndices) visit(i);
    visit(n.barrierIndex);
}
void Visitor::visitFenceProxyAsync(const FenceProxyAsync &) {}
void Visitor::visitTmaStoreWait(const TmaStoreWait &) {}
void Visitor::visitTmemAlloc(const TmemAlloc &) {}
void Visitor::visitTmemDealloc(const TmemDealloc &n) { visit(n.address); }
void Visitor::visitTcgen05Mma(const Tcgen05Mma &n) {
    visit(n.dAddress);
    for (const Expr &e : n.a.indices) visit(e);
    if (n.aAddress) visit(n.aAddress);
    for (const Expr &e : n.b.indices) visit(e);
    visit(n.enableInputD);
    if (n.scales) {
        visit(n.scales->sfaAddress);
        visit(n.scales->sfbAddress);
        visit(n.scales->descriptor);
    }
}
void Visitor::visitTcgen05Commit(const Tcgen05Commit &n) { visit(n.index); }
void Visitor::visitTcgen05Copy(const Tcgen05Copy &n) {
    for (const Expr &e : n.srcIndices) visit(e);
    visit(n.column);
}
void Visitor::visitTmemMove(const TmemMove &n) {
    visit(n.address);
    visit(n.regOffset);
    visit(n.partition.firstColumn);
}
void Visitor::visitTcgen05Sync(const Tcgen05Sync &) {}
void Visitor::visitTmaPrefetch(const TmaPrefetch &) {}
void Visitor::visitCpAsyncWait(const CpAsyncWait &) {}
void Visitor::visitCopy(const Copy &n) {
    visitRegion(n.src);
    visitRegion(n.dst);
    visit(n.barrierIndex);
    visit(n.dstBlock);
}
void Visitor::visitGemm(const Gemm &n) {
    visitRegion(n.a);
    visitRegion(n.b);
    visitRegion(n.c);
    visit(n.clearAccum);
    visit(n.mbarIndex);
    visit(n.sfKStart);
    if (n.sfa) visitRegion(*n.sfa);
    if (n.sfb) visitRegion(*n.sfb);
}
void Visitor::visitFill(const Fill &n) { visitRegion(n.dst); visit(n.value); }
void Visitor::visitReduce(const Reduce &) {}
void Visitor::visitCumsum(const Cumsum &n) {
    visitRegion(n.src);
    visitRegion(n.dst);
}
void Visitor::visitFinalizeReducer(const FinalizeReducer &) {}
void Visitor::visitScaleTranspose(const ScaleTranspose &n) { visitRegion(n.region); }
void Visitor::visitIm2Col(const Im2Col &n) {
    visitRegion(n.dst);
    visit(n.nhwStep);
    visit(n.cStep);
    if (n.barrierIndex) visit(n.barrierIndex);
}
void Visitor::visitAtomicAdd(const AtomicAdd &n) {
    visitRegion(n.dst);
    if (n.src) visitRegion(*n.src);
    visit(n.value);
}
void Visitor::visitSyncThreads(const SyncThreads &) {}
void Visitor::visitIssueTurn(const IssueTurn &n) { visit(n.barrierId); }
void Visitor::visitBarrierInit(const BarrierInit &) {}
void Visitor::visitBarrierArrive(const BarrierArrive &n) {
    visit(n.index);
    if (n.remoteRank) visit(n.remoteRank);
}
void Visitor::visitBarrierWait(const BarrierWait &n) { visit(n.index); visit(n.parity); }
void Visitor::visitClusterSync(const ClusterSync &) {}
void Visitor::visitWarpSpecialize(const WarpSpecialize &n) { visit(n.body); }
void Visitor::visitElect(const Elect &n) { visit(n.body); }
void Visitor::visitSetMaxNReg(const SetMaxNReg &) {}
void Visitor::visitJump(const Jump &) {}
void Visitor::visitPdlTrigger(const PdlTrigger &) {}
void Visitor::visitPdlSync(const PdlSync &) {}

// ------------------------------------------------------------------ Mutator

Expr Mutator::mutate(const Expr &e) {
    if (!e) return e;
    switch (e->kind) {
#define TILET_IR_EXPR(name)                                                                                            \
    case ExprKind::name: return mutate##name(e, static_cast<const name &>(*e));
#include "ir/Nodes.def"
    }
    TILET_INTERNAL_ERROR("unknown expression kind");
}

Stmt Mutator::mutate(const Stmt &s) {
    if (!s) return s;
    switch (s->kind) {
#define TILET_IR_STMT(name)                                                                                            \
    case StmtKind::name: return mutate##name(s, static_cast<const name &>(*s));
#include "ir/Nodes.def"
    }
    TILET_INTERNAL_ERROR("unknown statement kind");
}

std::vector<Expr> Mutator::mutateAll(const std::vector<Expr> &es, bool &changed) {
    std::vector<Expr> out;
    out.reserve(es.size());
    for (const Expr &e : es) {
        out.push_back(mutate(e));
        if (out.back() != e) changed = true;
    }
    return out;
}

std::vector<Expr> Mutator::mutateIndices(const BufferNode &, const std::vector<Expr> &indices, bool &changed) {
    return mutateAll(indices, changed);
}

Region Mutator::mutateRegion(const Region &r) {
    bool changed = false;
    std::vector<Expr> mins = mutateAll(r.mins, changed);
    Buffer buffer = mutateBuffer(r.buffer);
    if (!changed && buffer == r.buffer) return r;
    Region out = r;
    out.buffer = std::move(buffer);
    out.mins = std::move(mins);
    return out;
}

namespace {
bool sameRegion(const Region &a, const Region &b) {
    if (a.buffer != b.buffer || a.mins.size() != b.mins.size()) return false;
    for (size_t i = 0; i < a.mins.size(); ++i) {
        if (a.mins[i] != b.mins[i]) return false;
    }
    return true;
}

bool sameRegion(const std::optional<Region> &a, const std::optional<Region> &b) {
    if (!a || !b) return !a && !b;
    return sameRegion(*a, *b);
}
} // namespace

Expr Mutator::mutateIntImm(const Expr &self, const IntImm &) { return self; }
Expr Mutator::mutateFloatImm(const Expr &self, const FloatImm &) { return self; }
Expr Mutator::mutateVar(const Expr &self, const Var &) { return self; }
Expr Mutator::mutateSpecialReg(const Expr &self, const SpecialReg &) { return self; }

Expr Mutator::mutateUnary(const Expr &self, const Unary &n) {
    Expr a = mutate(n.a);
    if (a == n.a) return self;
    return std::make_shared<Unary>(n.dtype, n.op, a, n.span);
}

Expr Mutator::mutateBinary(const Expr &self, const Binary &n) {
    Expr a = mutate(n.a), b = mutate(n.b);
    if (a == n.a && b == n.b) return self;
    return std::make_shared<Binary>(n.dtype, n.op, a, b, n.span);
}

Expr Mutator::mutateSelect(const Expr &self, const Select &n) {
    Expr c = mutate(n.cond), t = mutate(n.thenValue), f = mutate(n.elseValue);
    if (c == n.cond && t == n.thenValue && f == n.elseValue) return self;
    return std::make_shared<Select>(n.dtype, c, t, f, n.span);
}

Expr Mutator::mutateCast(const Expr &self, const Cast &n) {
    Expr v = mutate(n.value);
    if (v == n.value) return self;
    return std::make_shared<Cast>(n.dtype, v, n.span);
}

Expr Mutator::mutateMathCall(const Expr &self, const MathCall &n) {
    bool changed = false;
    std::vector<Expr> args = mutateAll(n.args, changed);
    if (!changed) return self;
    return std::make_shared<MathCall>(n.dtype, n.func, std::move(args), n.span);
}

Expr Mutator::mutateLoad(const Expr &self, const Load &n) {
    bool changed = false;
    std::vector<Expr> idx = mutateIndices(*n.buffer, n.indices, changed);
    Buffer buffer = mutateBuffer(n.buffer);
    if (!changed && buffer == n.buffer) return self;
    return std::make_shared<Load>(buffer, std::move(idx), n.span);
}

Expr Mutator::mutateClcQuery(const Expr &self, const ClcQuery &n) {
    Expr response = mutate(n.response);
    if (response == n.response) return self;
    return std::make_shared<ClcQuery>(n.field, response, n.span);
}

Expr Mutator::mutateDp4a(const Expr &self, const Dp4a &n) {
    Expr a = mutate(n.a), b = mutate(n.b), c = mutate(n.c);
    if (a == n.a && b == n.b && c == n.c) return self;
    return std::make_shared<Dp4a>(n.dtype, a, b, c, n.span);
}

Expr Mutator::mutateShuffle(const Expr &self, const Shuffle &n) {
    Expr v = mutate(n.value), operand = mutate(n.operand);
    if (v == n.value && operand == n.operand) return self;
    return std::make_shared<Shuffle>(n.mode, v, operand, n.width, n.span);
}

Stmt Mutator::mutateSeq(const Stmt &self, const Seq &n) {
    bool changed = false;
    std::vector<Stmt> out;
    for (const Stmt &s : n.stmts) {
        Stmt m = mutate(s);
        if (m != s) changed = true;
        if (m) out.push_back(m);
    }
    if (!changed) return self;
    return std::make_shared<Seq>(std::move(out), n.span);
}

Stmt Mutator::mutateLetStmt(const Stmt &self, const LetStmt &n) {
    Expr v = mutate(n.value);
    Stmt b = mutate(n.body);
    if (v == n.value && b == n.body) return self;
    return std::make_shared<LetStmt>(n.var, v, b, n.span);
}

Stmt Mutator::mutateAllocate(const Stmt &self, const Allocate &n) {
    Stmt b = mutate(n.body);
    Buffer buffer = mutateBuffer(n.buffer);
    if (b == n.body && buffer == n.buffer) return self;
    return std::make_shared<Allocate>(buffer, b, n.span);
}

Stmt Mutator::mutateFor(const Stmt &self, const For &n) {
    Expr mn = mutate(n.min), ext = mutate(n.extent);
    Stmt b = mutate(n.body);
    if (mn == n.min && ext == n.extent && b == n.body) return self;
    return rebuildFor(n, mn, ext, b);
}

Stmt Mutator::mutateIfThenElse(const Stmt &self, const IfThenElse &n) {
    Expr c = mutate(n.cond);
    Stmt t = mutate(n.thenBody), e = mutate(n.elseBody);
    if (c == n.cond && t == n.thenBody && e == n.elseBody) return self;
    return std::make_shared<IfThenElse>(c, t, e, n.span);
}

Stmt Mutator::mutateWhile(const Stmt &self, const While &n) {
    Expr c = mutate(n.cond);
    Stmt b = mutate(n.body);
    if (c == n.cond && b == n.body) return self;
    return std::make_shared<While>(c, b ? b : seq({}), n.span);
}

Stmt Mutator::mutateStore(const Stmt &self, const Store &n) {
    bool changed = false;
    std::vector<Expr> idx = mutateIndices(*n.buffer, n.indices, changed);
    Expr v = mutate(n.value);
    Buffer buffer = mutateBuffer(n.buffer);
    if (!changed && v == n.value && buffer == n.buffer) return self;
    return n.movedTo(buffer, std::move(idx), v);
}

Stmt Mutator::mutateAtomicFetchAdd(const Stmt &self, const AtomicFetchAdd &n) {
    Expr target = mutate(n.target), value = mutate(n.value), previous = mutate(n.previous);
    if (target == n.target && value == n.value && previous == n.previous) return self;
    return std::make_shared<AtomicFetchAdd>(target, value, previous, n.order, n.span);
}

Stmt Mutator::mutateAtomicLoad(const Stmt &self, const AtomicLoad &n) {
    Expr source = mutate(n.source), destination = mutate(n.destination);
    if (source == n.source && destination == n.destination) return self;
    return std::make_shared<AtomicLoad>(source, destination, n.order, n.span);
}

Stmt Mutator::mutateCallExtern(const Stmt &self, const CallExtern &n) {
    std::vector<Expr> args;
    bool changed = false;
    for (const Expr &a : n.args) {
        args.push_back(mutate(a));
        changed |= args.back() != a;
    }
    if (!changed) return self;
    return std::make_shared<CallExtern>(n.function, std::move(args), n.kinds, n.span);
}

Stmt Mutator::mutateRngInit(const Stmt &self, const RngInit &n) {
    Buffer state = mutateBuffer(n.state);
    Expr seed = mutate(n.seed), sequence = mutate(n.sequence), offset = mutate(n.offset);
    if (state == n.state && seed == n.seed && sequence == n.sequence && offset == n.offset) return self;
    return std::make_shared<RngInit>(state, seed, sequence, offset, n.span);
}

Stmt Mutator::mutateRngDraw(const Stmt &self, const RngDraw &n) {
    Buffer state = mutateBuffer(n.state);
    Expr result = mutate(n.result);
    if (state == n.state && result == n.result) return self;
    return std::make_shared<RngDraw>(state, result, n.distribution, n.span);
}

Stmt Mutator::mutateVectorCopy(const Stmt &self, const VectorCopy &n) {
    bool changed = false;
    std::vector<Expr> di = mutateIndices(*n.dst, n.dstIndices, changed);
    std::vector<Expr> si = mutateIndices(*n.src, n.srcIndices, changed);
    Expr valid = mutate(n.srcValid);
    Buffer dst = mutateBuffer(n.dst), src = mutateBuffer(n.src);
    if (!changed && valid == n.srcValid && dst == n.dst && src == n.src) return self;
    return std::make_shared<VectorCopy>(dst, std::move(di), src, std::move(si), n.bytes, n.span, n.async, valid);
}

Stmt Mutator::mutateLdMatrix(const Stmt &self, const LdMatrix &n) {
    bool changed = false;
    Expr off = mutate(n.dstOffset);
    std::vector<Expr> si = mutateIndices(*n.src, n.srcIndices, changed);
    Buffer dst = mutateBuffer(n.dst), src = mutateBuffer(n.src);
    if (!changed && off == n.dstOffset && dst == n.dst && src == n.src) return self;
    return std::make_shared<LdMatrix>(dst, off, src, std::move(si), n.count, n.trans, n.span);
}

Stmt Mutator::mutateStMatrix(const Stmt &self, const StMatrix &n) {
    bool changed = false;
    std::vector<Expr> di = mutateIndices(*n.dst, n.dstIndices, changed);
    Expr off = mutate(n.srcOffset);
    Buffer dst = mutateBuffer(n.dst), src = mutateBuffer(n.src);
    if (!changed && off == n.srcOffset && dst == n.dst && src == n.src) return self;
    return std::make_shared<StMatrix>(dst, std::move(di), src, off, n.count, n.span);
}

Stmt Mutator::mutateMma(const Stmt &self, const Mma &n) {
    Expr d = mutate(n.dOffset), a = mutate(n.aOffset), b = mutate(n.bOffset);
    Buffer dBuf = mutateBuffer(n.d), aBuf = mutateBuffer(n.a), bBuf = mutateBuffer(n.b);
    std::optional<MmaScales> scales = n.scales;
    bool scalesSame = true;
    if (scales) {
        scales->aOffset = mutate(n.scales->aOffset);
        scales->bOffset = mutate(n.scales->bOffset);
        scales->aThread = mutate(n.scales->aThread);
        scales->bThread = mutate(n.scales->bThread);
        scales->aByte = mutate(n.scales->aByte);
        scales->bByte = mutate(n.scales->bByte);
        scales->a = mutateBuffer(n.scales->a);
        scales->b = mutateBuffer(n.scales->b);
        scalesSame = scales->aOffset == n.scales->aOffset && scales->bOffset == n.scales->bOffset && scales->aThread == n.scales->aThread &&
                     scales->bThread == n.scales->bThread && scales->aByte == n.scales->aByte && scales->bByte == n.scales->bByte &&
                     scales->a == n.scales->a && scales->b == n.scales->b;
    }
    if (d == n.dOffset && a == n.aOffset && b == n.bOffset && dBuf == n.d && aBuf == n.a && bBuf == n.b && scalesSame) return self;
    return std::make_shared<Mma>(n.instruction, n.operand, dBuf, d, aBuf, a, bBuf, b, n.span, std::move(scales));
}

Stmt Mutator::mutateCpAsyncCommit(const Stmt &self, const CpAsyncCommit &) { return self; }
WgmmaOperand Mutator::mutateOperand(const WgmmaOperand &o, bool &changed) {
    WgmmaOperand out = o;
    out.indices = mutateIndices(*o.buffer, o.indices, changed);
    out.buffer = mutateBuffer(o.buffer);
    changed = changed || out.buffer != o.buffer;
    return out;
}
Stmt Mutator::mutateWgmma(const Stmt &self, const Wgmma &n) {
    bool changed = false;
    WgmmaOperand a = mutateOperand(n.a, changed), b = mutateOperand(n.b, changed);
    Expr d = mutate(n.dOffset), scale = mutate(n.scaleD);
    Buffer dBuf = mutateBuffer(n.d);
    if (!changed && d == n.dOffset && scale == n.scaleD && dBuf == n.d) return self;
    return std::make_shared<Wgmma>(n.instruction, n.m, n.n, n.k, dBuf, d, a, b, scale, n.span);
}
Stmt Mutator::mutateWgmmaSync(const Stmt &self, const WgmmaSync &) { return self; }
Stmt Mutator::mutateTmaLoad(const Stmt &self, const TmaLoad &n) {
    bool changed = false;
    std::vector<Expr> di = mutateIndices(*n.dst, n.dstIndices, changed), c = mutateAll(n.coords, changed), o = mutateAll(n.im2colOffsets, changed);
    Expr bi = mutate(n.barrierIndex);
    TmaDescriptorRef desc = mutateTmaDescriptor(n.desc);
    Buffer dst = mutateBuffer(n.dst), barrier = mutateBuffer(n.barrier);
    if (!changed && bi == n.barrierIndex && desc == n.desc && dst == n.dst && barrier == n.barrier) return self;
    return std::make_shared<TmaLoad>(desc, dst, std::move(di), std::move(c), barrier, bi, n.multicastMask, n.span, std::move(o), n.completesOnLeader);
}
Stmt Mutator::mutateTmaStore(const Stmt &self, const TmaStore &n) {
    bool changed = false;
    std::vector<Expr> si = mutateIndices(*n.src, n.srcIndices, changed), c = mutateAll(n.coords, changed);
    TmaDescriptorRef desc = mutateTmaDescriptor(n.desc);
    Buffer src = mutateBuffer(n.src);
    if (!changed && desc == n.desc && src == n.src) return self;
    return std::make_shared<TmaStore>(desc, src, std::move(si), std::move(c), n.span, n.reduceAdd);
}
Stmt Mutator::mutateBulkCopy(const Stmt &self, const BulkCopy &n) {
    bool changed = false;
    std::vector<Expr> di = mutateIndices(*n.dst, n.dstIndices, changed), si = mutateIndices(*n.src, n.srcIndices, changed);
    Expr bi = mutate(n.barrierIndex);
    Buffer dst = mutateBuffer(n.dst), src = mutateBuffer(n.src), barrier = mutateBuffer(n.barrier);
    if (!changed && bi == n.barrierIndex && dst == n.dst && src == n.src && barrier == n.barrier) return self;
    return std::make_shared<BulkCopy>(dst, std::move(di), src, std::move(si), n.bytes, barrier, bi, n.span);
}
Stmt Mutator::mutateClcTryCancel(const Stmt &self, const ClcTryCancel &n) {
    bool changed = false;
    std::vector<Expr> ri = mutateIndices(*n.result, n.resultIndices, changed);
    Expr bi = mutate(n.barrierIndex);
    Buffer result = mutateBuffer(n.result), barrier = mutateBuffer(n.barrier);
    if (!changed && bi == n.barrierIndex && result == n.result && barrier == n.barrier) return self;
    return std::make_shared<ClcTryCancel>(result, std::move(ri), barrier, bi, n.multicast, n.span);
}
Stmt Mutator::mutateBarrierExpectTx(const Stmt &self, const BarrierExpectTx &n) {
    Expr i = mutate(n.index);
    Buffer barrier = mutateBuffer(n.barrier);
    if (i == n.index && barrier == n.barrier) return self;
    return std::make_shared<BarrierExpectTx>(barrier, i, n.bytes, n.arrive, n.span);
}
Stmt Mutator::mutateFenceProxyAsync(const Stmt &self, const FenceProxyAsync &) { return self; }
Stmt Mutator::mutateTmaStoreWait(const Stmt &self, const TmaStoreWait &) { return self; }
Stmt Mutator::mutateTmemAlloc(const Stmt &self, const TmemAlloc &n) {
    Buffer word = mutateBuffer(n.word);
    if (word == n.word) return self;
    return std::make_shared<TmemAlloc>(word, n.columns, n.pair, n.span);
}
Stmt Mutator::mutateTmemDealloc(const Stmt &self, const TmemDealloc &n) {
    Expr a = mutate(n.address);
    if (a == n.address) return self;
    return std::make_shared<TmemDealloc>(a, n.columns, n.pair, n.span);
}
Stmt Mutator::mutateTcgen05Mma(const Stmt &self, const Tcgen05Mma &n) {
    bool changed = false;
    WgmmaOperand a = mutateOperand(n.a, changed), b = mutateOperand(n.b, changed);
    Expr d = mutate(n.dAddress), enable = mutate(n.enableInputD), aAddress = n.aAddress ? mutate(n.aAddress) : nullptr;
    Buffer dBuf = mutateBuffer(n.d), completion = mutateBuffer(n.completesOn);
    std::optional<Tcgen05Scales> scales = n.scales;
    if (scales) {
        Tcgen05Scales &sc = *scales;
        Buffer sfa = mutateBuffer(sc.sfa), sfb = mutateBuffer(sc.sfb);
        Expr sfaAddress = mutate(sc.sfaAddress), sfbAddress = mutate(sc.sfbAddress), descriptor = mutate(sc.descriptor);
        changed = changed || sfa != sc.sfa || sfb != sc.sfb || sfaAddress != sc.sfaAddress || sfbAddress != sc.sfbAddress || descriptor != sc.descriptor;
        sc = {sfa, sfb, sfaAddress, sfbAddress, descriptor};
    }
    if (!changed && d == n.dAddress && aAddress == n.aAddress && enable == n.enableInputD && dBuf == n.d && completion == n.completesOn) return self;
    return std::make_shared<Tcgen05Mma>(n.instruction, dBuf, d, a, aAddress, b, n.instructionDescriptor, enable, completion, scales, n.span);
}
Stmt Mutator::mutateTcgen05Copy(const Stmt &self, const Tcgen05Copy &n) {
    bool changed = false;
    std::vector<Expr> idx = mutateIndices(*n.src, n.srcIndices, changed);
    Expr column = mutate(n.column);
    Buffer src = mutateBuffer(n.src), tmem = mutateBuffer(n.tmem), completion = mutateBuffer(n.completesOn);
    if (!changed && column == n.column && src == n.src && tmem == n.tmem && completion == n.completesOn) return self;
    return std::make_shared<Tcgen05Copy>(src, idx, tmem, column, completion, n.pair, n.span);
}
Stmt Mutator::mutateTcgen05Commit(const Stmt &self, const Tcgen05Commit &n) {
    Expr i = mutate(n.index);
    Buffer b = mutateBuffer(n.barrier);
    if (i == n.index && b == n.barrier) return self;
    return std::make_shared<Tcgen05Commit>(b, i, n.bothBlocks, n.pair, n.span);
}
Stmt Mutator::mutateTmemMove(const Stmt &self, const TmemMove &n) {
    Expr a = mutate(n.address), off = mutate(n.regOffset);
    Buffer tmem = mutateBuffer(n.tmem), regs = mutateBuffer(n.regs);
    TmemPartition partition = n.partition;
    partition.firstColumn = mutate(n.partition.firstColumn);
    if (a == n.address && off == n.regOffset && tmem == n.tmem && regs == n.regs && partition.firstColumn == n.partition.firstColumn) return self;
    return std::make_shared<TmemMove>(n.shape, n.store, tmem, a, regs, off, n.repeat, partition, n.span);
}
Stmt Mutator::mutateTcgen05Sync(const Stmt &self, const Tcgen05Sync &) { return self; }
Stmt Mutator::mutateTmaPrefetch(const Stmt &self, const TmaPrefetch &n) {
    TmaDescriptorRef desc = mutateTmaDescriptor(n.desc);
    if (desc == n.desc) return self;
    return std::make_shared<TmaPrefetch>(desc, n.span);
}
Stmt Mutator::mutateCpAsyncWait(const Stmt &self, const CpAsyncWait &) { return self; }

Stmt Mutator::mutateCopy(const Stmt &self, const Copy &n) {
    Region src = mutateRegion(n.src), dst = mutateRegion(n.dst);
    Expr bi = mutate(n.barrierIndex), db = mutate(n.dstBlock);
    Buffer barrier = mutateBuffer(n.barrier), remoteBarrier = mutateBuffer(n.remoteBarrier);
    if (sameRegion(src, n.src) && sameRegion(dst, n.dst) && bi == n.barrierIndex && db == n.dstBlock && barrier == n.barrier &&
        remoteBarrier == n.remoteBarrier)
        return self;
    auto c = std::make_shared<Copy>(n);
    c->src = src;
    c->dst = dst;
    c->barrierIndex = bi;
    c->dstBlock = db;
    c->barrier = barrier;
    c->remoteBarrier = remoteBarrier;
    return c;
}

Stmt Mutator::mutateGemm(const Stmt &self, const Gemm &n) {
    Region a = mutateRegion(n.a), b = mutateRegion(n.b), c = mutateRegion(n.c);
    std::optional<Region> sfa = n.sfa ? std::optional<Region>(mutateRegion(*n.sfa)) : std::nullopt;
    std::optional<Region> sfb = n.sfb ? std::optional<Region>(mutateRegion(*n.sfb)) : std::nullopt;
    Expr clear = mutate(n.clearAccum), mi = mutate(n.mbarIndex), kStart = mutate(n.sfKStart);
    Buffer mbar = mutateBuffer(n.mbar), completion = mutateBuffer(n.completesOn);
    if (sameRegion(a, n.a) && sameRegion(b, n.b) && sameRegion(c, n.c) && sameRegion(sfa, n.sfa) && sameRegion(sfb, n.sfb) &&
        clear == n.clearAccum && mi == n.mbarIndex && mbar == n.mbar && completion == n.completesOn && kStart == n.sfKStart)
        return self;
    auto g = std::make_shared<Gemm>(n);
    g->a = a;
    g->b = b;
    g->c = c;
    g->sfa = sfa;
    g->sfb = sfb;
    g->sfKStart = kStart;
    g->clearAccum = clear;
    g->mbarIndex = mi;
    g->mbar = mbar;
    g->completesOn = completion;
    return g;
}

Stmt Mutator::mutateFill(const Stmt &self, const Fill &n) {
    Region d = mutateRegion(n.dst);
    Expr v = mutate(n.value);
    if (sameRegion(d, n.dst) && v == n.value) return self;
    return std::make_shared<Fill>(d, v, n.span);
}

Stmt Mutator::mutateReduce(const Stmt &self, const Reduce &n) {
    Buffer src = mutateBuffer(n.src), dst = mutateBuffer(n.dst);
    if (src == n.src && dst == n.dst) return self;
    return std::make_shared<Reduce>(n.op, src, dst, n.dim, n.clear, n.span);
}

Stmt Mutator::mutateCumsum(const Stmt &self, const Cumsum &n) {
    Region src = mutateRegion(n.src), dst = mutateRegion(n.dst);
    if (sameRegion(src, n.src) && sameRegion(dst, n.dst)) return self;
    return std::make_shared<Cumsum>(src, dst, n.dimFromEnd, n.reverse, n.span);
}

Stmt Mutator::mutateFinalizeReducer(const Stmt &self, const FinalizeReducer &n) {
    Buffer r = mutateBuffer(n.reducer);
    if (r == n.reducer) return self;
    return std::make_shared<FinalizeReducer>(r, n.span);
}

Stmt Mutator::mutateScaleTranspose(const Stmt &self, const ScaleTranspose &n) {
    Region r = mutateRegion(n.region);
    if (sameRegion(r, n.region)) return self;
    return std::make_shared<ScaleTranspose>(r, n.span);
}

Stmt Mutator::mutateIm2Col(const Stmt &self, const Im2Col &n) {
    Buffer image = mutateBuffer(n.image);
    Region dst = mutateRegion(n.dst);
    Expr nhw = mutate(n.nhwStep), c = mutate(n.cStep), bi = n.barrierIndex ? mutate(n.barrierIndex) : nullptr;
    Buffer barrier = mutateBuffer(n.barrier);
    if (image == n.image && sameRegion(dst, n.dst) && nhw == n.nhwStep && c == n.cStep && bi == n.barrierIndex && barrier == n.barrier) return self;
    auto out = std::make_shared<Im2Col>(n);
    out->image = image;
    out->dst = dst;
    out->nhwStep = nhw;
    out->cStep = c;
    out->barrierIndex = bi;
    out->barrier = barrier;
    return out;
}

Stmt Mutator::mutateAtomicAdd(const Stmt &self, const AtomicAdd &n) {
    Region d = mutateRegion(n.dst);
    std::optional<Region> s = n.src ? std::optional<Region>(mutateRegion(*n.src)) : std::nullopt;
    Expr v = mutate(n.value);
    if (sameRegion(d, n.dst) && (!s || sameRegion(*s, *n.src)) && v == n.value) return self;
    return std::make_shared<AtomicAdd>(d, s, v, n.order, n.span);
}

Stmt Mutator::mutateSyncThreads(const Stmt &self, const SyncThreads &) { return self; }
Stmt Mutator::mutateIssueTurn(const Stmt &self, const IssueTurn &n) {
    Expr id = mutate(n.barrierId);
    if (id == n.barrierId) return self;
    return std::make_shared<IssueTurn>(n.action, id, n.threads, n.span);
}
Stmt Mutator::mutateBarrierInit(const Stmt &self, const BarrierInit &n) {
    std::vector<Buffer> barriers;
    for (const Buffer &b : n.barriers) barriers.push_back(mutateBuffer(b));
    if (barriers == n.barriers) return self;
    return std::make_shared<BarrierInit>(std::move(barriers), n.span);
}

Stmt Mutator::mutateBarrierArrive(const Stmt &self, const BarrierArrive &n) {
    Expr i = mutate(n.index), r = n.remoteRank ? mutate(n.remoteRank) : nullptr;
    Buffer barrier = mutateBuffer(n.barrier);
    if (i == n.index && r == n.remoteRank && barrier == n.barrier) return self;
    return std::make_shared<BarrierArrive>(barrier, i, r, n.span);
}

Stmt Mutator::mutateBarrierWait(const Stmt &self, const BarrierWait &n) {
    Expr i = mutate(n.index), p = mutate(n.parity);
    Buffer barrier = mutateBuffer(n.barrier);
    if (i == n.index && p == n.parity && barrier == n.barrier) return self;
    return std::make_shared<BarrierWait>(barrier, i, p, n.span);
}

Stmt Mutator::mutateClusterSync(const Stmt &self, const ClusterSync &) { return self; }

Stmt Mutator::mutateWarpSpecialize(const Stmt &self, const WarpSpecialize &n) {
    Stmt b = mutate(n.body);
    if (b == n.body) return self;
    return std::make_shared<WarpSpecialize>(n.warps, b, n.span);
}

Stmt Mutator::mutateElect(const Stmt &self, const Elect &n) {
    Stmt b = mutate(n.body);
    if (b == n.body) return self;
    return std::make_shared<Elect>(n.unit, n.firstThread, b, n.span);
}

Stmt Mutator::mutateSetMaxNReg(const Stmt &self, const SetMaxNReg &) { return self; }
Stmt Mutator::mutateJump(const Stmt &self, const Jump &) { return self; }
Stmt Mutator::mutatePdlTrigger(const Stmt &self, const PdlTrigger &) { return self; }
Stmt Mutator::mutatePdlSync(const Stmt &self, const PdlSync &) { return self; }

// ------------------------------------------------------------------ helpers

namespace {

class ExprWalker : public Visitor {
public:
    explicit ExprWalker(const std::function<void(const Expr &)> &f) : f_(f) {}
    void visit(const Expr &e) override {
        if (!e) return;
        f_(e);
        Visitor::visit(e);
    }
    using Visitor::visit;

private:
    const std::function<void(const Expr &)> &f_;
};

class StmtWalker : public Visitor {
public:
    explicit StmtWalker(const std::function<void(const Stmt &)> &f) : f_(f) {}
    void visit(const Stmt &s) override {
        if (!s) return;
        f_(s);
        Visitor::visit(s);
    }
    using Visitor::visit;

private:
    const std::function<void(const Stmt &)> &f_;
};

class Substituter : public Mutator {
public:
    explicit Substituter(const std::vector<std::pair<VarRef, Expr>> &m) : map_(m) {}
    using Mutator::mutate;

protected:
    Expr mutateVar(const Expr &self, const Var &node) override {
        for (const auto &[var, value] : map_) {
            if (var.get() == &node) return value;
        }
        return self;
    }

private:
    const std::vector<std::pair<VarRef, Expr>> &map_;
};

} // namespace

void forEachExpr(const Stmt &s, const std::function<void(const Expr &)> &f) { ExprWalker(f).visit(s); }
void forEachExpr(const Expr &e, const std::function<void(const Expr &)> &f) { ExprWalker(f).visit(e); }
void forEachStmt(const Stmt &s, const std::function<void(const Stmt &)> &f) { StmtWalker(f).visit(s); }

bool jumpsOutOf(const Stmt &body) {
    struct Finder : Visitor {
        bool found = false;
        void visitJump(const Jump &) override { found = true; }
        void visitFor(const For &) override {}     // its jumps are its own
        void visitWhile(const While &) override {}
    } finder;
    finder.visit(body);
    return finder.found;
}

Expr substitute(const Expr &e, const std::vector<std::pair<VarRef, Expr>> &map) { return Substituter(map).mutate(e); }
Stmt substitute(const Stmt &s, const std::vector<std::pair<VarRef, Expr>> &map) { return Substituter(map).mutate(s); }

bool usesVar(const Expr &e, const VarNode *v) {
    bool found = false;
    forEachExpr(e, [&](const Expr &x) {
        if (x.get() == v) found = true;
    });
    return found;
}

} // namespace tilet::ir
