// Verifier.cpp -- scope walk: every variable is bound before use, every
// buffer a statement's effects name is a parameter or allocated around the
// statement, element accesses match the buffer's rank, and the lowered forms
// required by the level are gone.
#include "ir/Verifier.h"

#include "ir/Effects.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "support/InternalError.h"

#include <set>

namespace tilet::ir {

namespace {

class Checker : public Visitor {
public:
    Checker(const Kernel &k, const VerifyLevel &level, const char *pass) : level_(level), pass_(pass) {
        for (const Param &p : k.params) {
            if (p.kind == ParamKind::Tensor) buffers_.insert(p.tensor.get());
            else vars_.insert(p.var.get());
        }
        for (const Expr &g : k.grid) visit(g);
    }
    using Visitor::visit;

    // Every buffer a statement accesses or synchronises on is in scope, and
    // element accesses match its rank.
    void visit(const Stmt &s) override {
        if (!s) return;
        Effects fx = ownEffects(s);
        for (const Access &a : fx.accesses) {
            if (a.indices) access(*a.buffer, *a.indices);
            else inScope(*a.buffer);
        }
        for (const SyncEffect &e : fx.syncs)
            if (e.barrier) inScope(*e.barrier);
        Visitor::visit(s);
    }

    void visitVar(const Var &v) override {
        if (!vars_.count(&v)) fail("variable '" + v.name + "' is used outside its scope");
    }
    void visitLetStmt(const LetStmt &n) override {
        visit(n.value);
        vars_.insert(n.var.get());
        visit(n.body);
        vars_.erase(n.var.get());
    }
    void visitFor(const For &n) override {
        visit(n.min);
        visit(n.extent);
        if (!isInteger(n.extent->dtype)) fail("loop '" + n.var->name + "' has a non-integer extent");
        if (level_.noParallel && n.forKind == ForKind::Parallel) fail("a parallel loop survived lowering");
        if (level_.noVectorized && n.forKind == ForKind::Vectorized) fail("a vectorized loop survived lowering");
        vars_.insert(n.var.get());
        visit(n.body);
        vars_.erase(n.var.get());
    }
    void visitAllocate(const Allocate &n) override {
        if (level_.noParallel && n.buffer->scope == MemScope::Fragment) fail("fragment '" + n.buffer->name + "' survived lowering");
        // A fragment's register array is live wherever the fragment is.
        buffers_.insert(n.buffer.get());
        if (n.buffer->registers) buffers_.insert(n.buffer->registers.get());
        visit(n.body);
        buffers_.erase(n.buffer.get());
        if (n.buffer->registers) buffers_.erase(n.buffer->registers.get());
    }
    void visitStore(const Store &n) override {
        if (n.value->dtype != n.buffer->dtype) fail("store of " + std::string(dtypeName(n.value->dtype)) + " into " + std::string(dtypeName(n.buffer->dtype)) + " buffer '" + n.buffer->name + "'");
        Visitor::visitStore(n);
    }
    void visitAtomicFetchAdd(const AtomicFetchAdd &n) override {
        const Load *target = as<Load>(n.target), *previous = as<Load>(n.previous);
        if (!target || !previous) fail("an atomic fetch-add's element or result is no longer a load of its buffer");
        else if (n.value->dtype != target->dtype || previous->dtype != target->dtype) fail("an atomic fetch-add of mixed types into '" + target->buffer->name + "'");
        Visitor::visitAtomicFetchAdd(n);
    }
    void visitAtomicLoad(const AtomicLoad &n) override {
        const Load *source = as<Load>(n.source), *destination = as<Load>(n.destination);
        if (!source || !destination) fail("an atomic load's element or register is no longer a load of its buffer");
        else if (source->dtype != destination->dtype) fail("an atomic load of '" + source->buffer->name + "' into a register of another type");
        Visitor::visitAtomicLoad(n);
    }
    void visitRngDraw(const RngDraw &n) override {
        const Load *result = as<Load>(n.result);
        if (!result) fail("a random draw's register is no longer a load of its buffer");
        else if (result->dtype != (n.distribution == RngDistribution::Bits ? DType::UInt32 : DType::F32)) fail("a random draw into a " + std::string(dtypeName(result->dtype)) + " register");
        Visitor::visitRngDraw(n);
    }
    void visitClcQuery(const ClcQuery &n) override {
        if (!as<Load>(n.response)) fail("a clc query's answer is no longer a load of its buffer");
        Visitor::visitClcQuery(n);
    }
    void visitDp4a(const Dp4a &n) override {
        for (const Expr &operand : {n.a, n.b}) {
            const Load *l = as<Load>(operand);
            if (!l) fail("a dp4a operand is no longer a load of its buffer");
            else if (l->dtype != DType::Int8 && l->dtype != DType::UInt8) fail("a dp4a operand reads " + std::string(dtypeName(l->dtype)) + " elements");
        }
        Visitor::visitDp4a(n);
    }
    void visitCallExtern(const CallExtern &n) override {
        if (n.kinds.size() != n.args.size()) fail("call_extern " + n.function + " has " + std::to_string(n.args.size()) + " arguments but " + std::to_string(n.kinds.size()) + " kinds");
        for (size_t i = 0; i < n.args.size() && i < n.kinds.size(); ++i) {
            if (n.kinds[i] == ExternArgKind::Value) continue;
            const Load *l = as<Load>(n.args[i]);
            if (!l) fail("a pointer argument of call_extern " + n.function + " is no longer a load of its buffer");
            else if (l->buffer->scope == MemScope::Fragment) fail("call_extern " + n.function + " takes the address of fragment '" + l->buffer->name + "'");
        }
        Visitor::visitCallExtern(n);
    }
    void visitCopy(const Copy &n) override { tileOp("copy"); Visitor::visitCopy(n); }
    void visitGemm(const Gemm &n) override { tileOp("gemm"); Visitor::visitGemm(n); }
    void visitFill(const Fill &n) override { tileOp("fill"); Visitor::visitFill(n); }
    void visitCumsum(const Cumsum &n) override { tileOp("cumsum"); Visitor::visitCumsum(n); }
    void visitReduce(const Reduce &n) override { tileOp("reduce"); Visitor::visitReduce(n); }
    void visitFinalizeReducer(const FinalizeReducer &n) override { tileOp("finalize_reducer"); Visitor::visitFinalizeReducer(n); }
    void visitAtomicAdd(const AtomicAdd &n) override { tileOp("atomic_add"); Visitor::visitAtomicAdd(n); }
    void visitIm2Col(const Im2Col &n) override { tileOp("im2col"); Visitor::visitIm2Col(n); }
    void visitScaleTranspose(const ScaleTranspose &n) override { tileOp("tcgen05_sf_warp_transpose"); Visitor::visitScaleTranspose(n); }

private:
    void tileOp(const char *what) {
        if (level_.noTileOps) fail(std::string("tile operation '") + what + "' survived lowering");
    }
    void inScope(const BufferNode &b) {
        // A view of a global tensor is that tensor's memory: a tensor map may
        // describe one nothing declares (the bytes of a packed tensor, lower-tma).
        if (b.scope == MemScope::Global && b.viewOf && buffers_.count(&storageRoot(b))) return;
        if (!buffers_.count(&b)) fail("buffer '" + b.name + "' is used outside its allocation");
    }
    void access(const BufferNode &b, const std::vector<Expr> &indices) {
        inScope(b);
        if (level_.noParallel && b.scope == MemScope::Fragment) fail("fragment '" + b.name + "' is still accessed element-wise");
        bool ok = static_cast<int>(indices.size()) == b.rank() || (level_.flat && indices.size() == 1 && b.rank() > 1);
        if (level_.flat && indices.size() > 1) ok = false;
        if (!ok) fail("buffer '" + b.name + "' of rank " + std::to_string(b.rank()) + " accessed with " + std::to_string(indices.size()) + " indices");
        for (const Expr &i : indices) {
            if (!isInteger(i->dtype)) fail("index of '" + b.name + "' has type " + std::string(dtypeName(i->dtype)));
        }
    }
    void fail(const std::string &what) { TILET_INTERNAL_ERROR("IR verification failed after " << pass_ << ": " << what); }

    const VerifyLevel &level_;
    const char *pass_;
    std::set<const VarNode *> vars_;
    std::set<const BufferNode *> buffers_;
};

} // namespace

void verify(const Kernel &k, const VerifyLevel &level, const char *afterPass) {
    Checker c(k, level, afterPass);
    c.visit(k.body);
}

} // namespace tilet::ir
