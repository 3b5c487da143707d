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
    auto size = [&] {
        size_t n = perThread_.size();
        for (const auto &[b, writers] : roleWritten_) n += writers.size();
        return n;
    };
    for (size_t before = SIZE_MAX; before != size();) {
        before = size();
        dependentVars_.clear();
        findPerThreadRegisters(body, false);
    }
    dependentVars_.clear();
}

bool Uniformity::perThread(const BufferNode *b) const {
    if (perThread_.count(b)) return true;
    auto written = roleWritten_.find(b);
    if (written == roleWritten_.end()) return false;
    if (roles_.empty()) return true;   // the block's threads: some ran a writer, some not
    const std::vector<int64_t> &here = roles_.back()->warps;
    for (const WarpSpecialize *writer : written->second) {
        auto ran = [&](int64_t warp) { return std::binary_search(writer->warps.begin(), writer->warps.end(), warp); };
        bool all = std::all_of(here.begin(), here.end(), ran), none = std::none_of(here.begin(), here.end(), ran);
        if (!all && !none) return true;
    }
    return false;
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
        if (const Load *l = as<Load>(x); l && !isMemory(*l->buffer) && l->buffer->scope != MemScope::Fragment && perThread(l->buffer.get()))
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
        if (const Load *l = as<Load>(x); l && !src.perThreadRegister && !isMemory(*l->buffer) && perThread(l->buffer.get()))
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
        if (!roles_.empty()) allocatedInRoles_[a->buffer.get()] = roles_.size();
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
        enterRole(*w);
        ++roleDepth_;
        findPerThreadRegisters(w->body, divergent);
        --roleDepth_;
        leaveRole();
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
                       (isMemory(*v->src) || !perThread(v->src.get()));
    for (const Access &a : ownEffects(s).accesses) {
        if (!a.writes() || isMemory(*a.buffer)) continue;
        auto local = allocatedInRoles_.find(a.buffer);
        if (!uniformStore) perThread_.insert(a.buffer);
        else if (!roles_.empty() && (local == allocatedInRoles_.end() || local->second < roles_.size())) roleWritten_[a.buffer].insert(roles_.back());
    }
}

} // namespace tilet::ir
