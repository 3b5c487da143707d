// Uniformity.cpp -- see Uniformity.h.
#include "ir/Uniformity.h"

#include <utility>

#include "ir/Effects.h"
#include "ir/Visitor.h"

#include <algorithm>
#include <cstdint>

namespace tilet::ir {

namespace {

bool isMemory(const BufferNode &b) { return b.scope == MemScope::Shared || b.scope == MemScope::Global; }

} // namespace

Uniformity::Uniformity(const Stmt &body) {
    for (size_t before = SIZE_MAX; before != perThread_.size();) {
        before = perThread_.size();
        dependentVars_.clear();
        findPerThreadRegisters(body, false);
    }
    dependentVars_.clear();
}

bool Uniformity::threadDependent(const Expr &e) const {
    Sources src = sourcesOf(e);
    return src.threadIndex || src.perThreadRegister;
}

bool Uniformity::threadDependentBeyondFragments(const Expr &e) const {
    bool dependent = false;
    forEachExpr(e, [&](const Expr &x) {
        if (const SpecialReg *r = as<SpecialReg>(x); r && r->special == SpecialKind::ThreadIdx) dependent = true;
        if (const Var *v = as<Var>(x); v && dependentVars_.count(v)) dependent = true;
        if (as<Shuffle>(x)) dependent = true;
        if (const Load *l = as<Load>(x); l && !isMemory(*l->buffer) && l->buffer->scope != MemScope::Fragment && perThread_.count(l->buffer.get()))
            dependent = true;
    });
    return dependent;
}

void Uniformity::bind(const VarNode *v, bool dependent) {
    if (dependent) dependentVars_.insert(v);
}

const BufferNode *Uniformity::onlyPerThreadRegister(const Expr &e) const {
    Sources src = sourcesOf(e);
    return src.threadIndex ? nullptr : src.perThreadRegister;
}

bool Uniformity::loopRunsApart(const Stmt &loop) const {
    if (const For *f = as<For>(loop)) return threadDependent(f->min) || threadDependent(f->extent) || jumpsApart(loop.get());
    if (const While *w = as<While>(loop)) return threadDependent(w->cond) || jumpsApart(loop.get());
    return false;
}

// A loop's body. A break or continue that some threads take and others not
// leaves the rest of the body (and the later iterations) to some threads
// only: the body is walked again as divergent.
void Uniformity::findInLoop(const Stmt &loop, const Stmt &body, bool divergent) {
    bool outerEntry = std::exchange(loopEntryDivergent_, divergent);
    bool outerMet = std::exchange(jumpMetApart_, false);
    int outerRoleDepth = std::exchange(loopRoleDepth_, roleDepth_);
    findPerThreadRegisters(body, divergent);
    if (jumpMetApart_) {
        jumpsApart_.insert(loop.get());
        findPerThreadRegisters(body, true);
    }
    loopEntryDivergent_ = outerEntry;
    jumpMetApart_ = outerMet;
    loopRoleDepth_ = outerRoleDepth;
}

// What makes `e` differ between threads: the thread index (directly, through
// a variable derived from it, or a shuffle), and the first per-thread register it reads.
Uniformity::Sources Uniformity::sourcesOf(const Expr &e) const {
    Sources src;
    forEachExpr(e, [&](const Expr &x) {
        if (const SpecialReg *r = as<SpecialReg>(x); r && r->special == SpecialKind::ThreadIdx) src.threadIndex = true;
        if (const Var *v = as<Var>(x); v && dependentVars_.count(v)) src.threadIndex = true;
        if (as<Shuffle>(x)) src.threadIndex = true;
        if (const Load *l = as<Load>(x); l && !src.perThreadRegister && !isMemory(*l->buffer) && perThread_.count(l->buffer.get()))
            src.perThreadRegister = l->buffer.get();
    });
    return src;
}

void Uniformity::findPerThreadRegisters(const Stmt &s, bool divergent) {
    if (!s) return;
    if (const Seq *q = as<Seq>(s)) {
        for (const Stmt &x : q->stmts) findPerThreadRegisters(x, divergent);
        return;
    }
    if (const LetStmt *l = as<LetStmt>(s)) {
        bind(l->var.get(), divergent || threadDependent(l->value));
        findPerThreadRegisters(l->body, divergent);
        return;
    }
    if (const Allocate *a = as<Allocate>(s)) {
        if (inRole_) roleLocals_.insert(a->buffer.get());
        return findPerThreadRegisters(a->body, divergent);
    }
    if (const For *f = as<For>(s)) {
        bool d = divergent || threadDependent(f->min) || threadDependent(f->extent);
        bind(f->var.get(), d);
        return findInLoop(s, f->body, d);
    }
    if (const While *w = as<While>(s)) return findInLoop(s, w->body, divergent || threadDependent(w->cond));
    if (as<Jump>(s)) {
        // Under a condition that differs between threads, or in a role
        // (ws(...), a branch on the thread index) inside the loop: only some
        // of the loop's threads take it.
        if ((divergent && !loopEntryDivergent_) || roleDepth_ > loopRoleDepth_) jumpMetApart_ = true;
        return;
    }
    if (const IfThenElse *i = as<IfThenElse>(s)) {
        bool d = divergent || threadDependent(i->cond);
        findPerThreadRegisters(i->thenBody, d);
        findPerThreadRegisters(i->elseBody, d);
        return;
    }
    if (const Elect *e = as<Elect>(s)) return findPerThreadRegisters(e->body, true);
    // Inside a role, "alike" is among the role's threads: a register
    // allocated there is only seen by them; one allocated outside and
    // written there differs between the role's threads and the others.
    if (const WarpSpecialize *w = as<WarpSpecialize>(s)) {
        bool outerIn = std::exchange(inRole_, true);
        std::set<const BufferNode *> outerLocals = std::exchange(roleLocals_, {});
        ++roleDepth_;
        findPerThreadRegisters(w->body, divergent);
        --roleDepth_;
        inRole_ = outerIn;
        roleLocals_ = std::move(outerLocals);
        return;
    }
    auto uniformIndices = [&](const std::vector<Expr> &indices) {
        return std::none_of(indices.begin(), indices.end(), [&](const Expr &i) { return threadDependent(i); });
    };
    bool uniformStore = false;
    if (const Store *store = as<Store>(s))
        uniformStore = !divergent && !threadDependent(store->value) && uniformIndices(store->indices);
    // A wide move (the vectorized form of such a store) is alike in every
    // thread when its addresses are and it reads memory or a uniform register.
    if (const VectorCopy *v = as<VectorCopy>(s))
        uniformStore = !divergent && !v->async && uniformIndices(v->dstIndices) && uniformIndices(v->srcIndices) &&
                       (isMemory(*v->src) || !perThread_.count(v->src.get()));
    for (const Access &a : ownEffects(s).accesses) {
        if (a.writes() && !isMemory(*a.buffer) && (!uniformStore || (inRole_ && !roleLocals_.count(a.buffer)))) perThread_.insert(a.buffer);
    }
}

} // namespace tilet::ir
