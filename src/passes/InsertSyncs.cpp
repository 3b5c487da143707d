// InsertSyncs.cpp -- see InsertSyncs.h.
//
// The state is the set of shared byte ranges (and global tensors) read and
// written since the last barrier. Walking a sequence, a unit that reads a
// pending write, or writes a pending read or write, gets a barrier before it.
// A loop whose body would meet a hazard with what came before it gets one
// barrier before the loop; loops are walked inside, and if the body, entered
// again with the state at its end (version tags shifted by one iteration),
// would meet a hazard before its first barrier, the body starts with one.
#include "passes/InsertSyncs.h"

#include "ir/Analysis.h"
#include "ir/Visitor.h"

#include <algorithm>

namespace tilet {

namespace {

// Bytes of shared memory (space null), or a whole global tensor (space = the
// tensor): threads of a block see each other's global writes only after a
// barrier too. An access to a pipelined buffer whose version index is
// (x + offset) % versions carries that version tag: two accesses with the
// same x and different offsets touch different versions.
struct Range {
    const void *space;
    int64_t lo, hi;   // [lo, hi)
    const ir::BufferNode *buffer = nullptr;
    const ir::BufferNode *publishedBy = nullptr;   // a TMA write: visible to whoever waits on this mbarrier array
    int64_t role = -1;   // made inside ws(...) by this first warp group; -1: by the block
    ir::Expr tagBase;  // null: untagged
    int64_t tagOffset = 0;

    bool disjointVersion(const Range &o) const {
        if (!tagBase || !o.tagBase || buffer != o.buffer) return false;
        return ir::structurallyEqual(tagBase, o.tagBase) && tagOffset != o.tagOffset;
    }
};

struct State {
    std::vector<Range> reads, writes;
    bool hazard(const State &unit) const {
        for (const Range &r : unit.reads) {
            if (overlaps(r, writes)) return true;
        }
        for (const Range &w : unit.writes) {
            if (overlaps(w, writes) || overlaps(w, reads)) return true;
        }
        return false;
    }
    void add(const State &o) {
        reads.insert(reads.end(), o.reads.begin(), o.reads.end());
        writes.insert(writes.end(), o.writes.begin(), o.writes.end());
    }
    void clear() {
        reads.clear();
        writes.clear();
    }
    // Every thread that waits on mbarrier array `b` sees the TMA writes completing on it.
    void published(const ir::BufferNode *b) {
        writes.erase(std::remove_if(writes.begin(), writes.end(), [&](const Range &r) { return r.publishedBy == b; }), writes.end());
    }
    bool empty() const { return reads.empty() && writes.empty(); }
    static bool overlaps(const Range &r, const std::vector<Range> &set) {
        for (const Range &x : set) {
            // Accesses of ws(...) roles are ordered by the program's mbarriers
            // (check-barriers proves it), never by block barriers.
            if (r.role >= 0 && x.role >= 0) continue;
            if (r.space == x.space && r.lo < x.hi && x.lo < r.hi && !r.disjointVersion(x)) return true;
        }
        return false;
    }
    // The state as the next iteration of the loop over `v` sees it: a tag
    // (v + c) of this iteration is (v + c - 1) of the next.
    State shifted(const ir::VarNode *v) const {
        State out = *this;
        for (std::vector<Range> *list : {&out.reads, &out.writes}) {
            for (Range &r : *list) {
                if (!r.tagBase || !ir::usesVar(r.tagBase, v)) continue;
                const ir::Var *base = ir::as<ir::Var>(r.tagBase);
                if (base && base == v) r.tagOffset = (r.tagOffset - 1 + r.buffer->pipelineVersions) % r.buffer->pipelineVersions;
                else r.tagBase = nullptr;   // not of the form v + c: no claim
            }
        }
        return out;
    }
};

bool isMemory(const ir::BufferNode &b) { return b.scope == ir::MemScope::Shared || b.scope == ir::MemScope::Global; }

Range rangeOf(const ir::BufferNode &b, const std::vector<ir::Expr> &indices) {
    if (b.scope == ir::MemScope::Global) return {&b, 0, 1};
    int64_t bytes = *b.constElements() * dtypeBits(b.dtype) / 8;
    Range r{nullptr, b.sharedOffset, b.sharedOffset + bytes, &b};
    if (b.pipelineVersions < 2 || indices.empty()) return r;
    int64_t versions = b.pipelineVersions, versionBytes = bytes / versions;
    const ir::Expr &version = indices[0];
    if (std::optional<int64_t> v = ir::constInt(version)) {
        r.lo = b.sharedOffset + *v * versionBytes;
        r.hi = r.lo + versionBytes;
        return r;
    }
    const ir::Binary *m = ir::as<ir::Binary>(version);
    if (m && m->op == ir::BinaryOp::Mod && ir::constInt(m->b) == versions) {
        int64_t c = 0;
        r.tagBase = ir::splitConstant(m->a, c);
        r.tagOffset = ((c % versions) + versions) % versions;
        if (!r.tagBase) {   // a constant after all
            r.lo = b.sharedOffset + r.tagOffset * versionBytes;
            r.hi = r.lo + versionBytes;
        }
    }
    return r;
}

State accessesOf(const ir::Stmt &s);

// The accesses of a ws(...) region, marked as its role's.
State roleAccessesOf(const ir::WarpSpecialize &w, const ir::Stmt &s) {
    State st = accessesOf(s);
    for (std::vector<Range> *list : {&st.reads, &st.writes}) {
        for (Range &r : *list) r.role = w.roles.front();
    }
    return st;
}

State accessesOf(const ir::Stmt &s) {
    if (const ir::WarpSpecialize *w = ir::as<ir::WarpSpecialize>(s)) return roleAccessesOf(*w, w->body);
    State st;
    ir::forEachStmt(s, [&](const ir::Stmt &x) {
        if (const ir::Store *w = ir::as<ir::Store>(x); w && isMemory(*w->buffer)) st.writes.push_back(rangeOf(*w->buffer, w->indices));
        if (const ir::VectorCopy *v = ir::as<ir::VectorCopy>(x)) {
            if (isMemory(*v->dst)) st.writes.push_back(rangeOf(*v->dst, v->dstIndices));
            if (isMemory(*v->src)) st.reads.push_back(rangeOf(*v->src, v->srcIndices));
        }
        if (const ir::LdMatrix *l = ir::as<ir::LdMatrix>(x)) st.reads.push_back(rangeOf(*l->src, l->srcIndices));
        if (const ir::TmaLoad *t = ir::as<ir::TmaLoad>(x)) {
            Range r = rangeOf(*t->dst, t->dstIndices);
            r.publishedBy = t->barrier.get();
            st.writes.push_back(r);
        }
        if (const ir::TmaStore *t = ir::as<ir::TmaStore>(x)) st.reads.push_back(rangeOf(*t->src, t->srcIndices));
        if (const ir::Wgmma *w = ir::as<ir::Wgmma>(x)) {
            for (const ir::WgmmaOperand *o : {&w->a, &w->b}) {
                if (o->buffer->scope == ir::MemScope::Shared) st.reads.push_back(rangeOf(*o->buffer, o->indices));
            }
        }
        if (const ir::BulkCopy *b = ir::as<ir::BulkCopy>(x)) {
            Range w = rangeOf(*b->dst, b->dstIndices);
            w.publishedBy = b->barrier.get();
            if (isMemory(*b->dst)) st.writes.push_back(w);
            if (isMemory(*b->src)) st.reads.push_back(rangeOf(*b->src, b->srcIndices));
        }
    });
    ir::forEachExpr(s, [&](const ir::Expr &e) {
        if (const ir::Load *l = ir::as<ir::Load>(e); l && isMemory(*l->buffer)) st.reads.push_back(rangeOf(*l->buffer, l->indices));
    });
    return st;
}

class Inserter {
public:
    // Returns `s` with barriers inserted; `state` is updated to after `s`.
    ir::Stmt process(const ir::Stmt &s, State &state) {
        if (!s) return s;
        if (const ir::Seq *seq = ir::as<ir::Seq>(s)) {
            std::vector<ir::Stmt> out;
            const std::vector<ir::Stmt> &stmts = seq->stmts;
            for (size_t i = 0; i < stmts.size(); ++i) {
                if (ir::as<ir::WarpSpecialize>(stmts[i])) {
                    size_t end = i;
                    while (end < stmts.size() && ir::as<ir::WarpSpecialize>(stmts[end])) ++end;
                    processRoles({stmts.begin() + static_cast<std::ptrdiff_t>(i), stmts.begin() + static_cast<std::ptrdiff_t>(end)}, state, out);
                    i = end - 1;
                    continue;
                }
                ir::Stmt y = processUnit(stmts[i], state, out);
                if (y) out.push_back(y);
            }
            return std::make_shared<ir::Seq>(std::move(out), s->span);
        }
        std::vector<ir::Stmt> out;
        ir::Stmt y = processUnit(s, state, out);
        if (y) out.push_back(y);
        return ir::seq(std::move(out));
    }

private:
    // A barrier of the current context: the block, or inside ws(...) the role's named barrier.
    ir::Stmt barrier(SourceRange span) const { return std::make_shared<ir::SyncThreads>(span, barrierId_, barrierThreads_); }

    // Consecutive ws(...) regions run at the same time on different warp
    // groups: no block barrier goes between them (the threads of one role
    // would wait for the other roles' whole regions; their order is the
    // business of their mbarriers). A hazard with what came before gets one
    // block barrier before them all; inside each, hazards get the role's
    // named barrier (1 + its first warp group).
    void processRoles(const std::vector<ir::Stmt> &regions, State &state, std::vector<ir::Stmt> &out) {
        State all;
        for (const ir::Stmt &r : regions) all.add(accessesOf(r));
        if (state.hazard(all)) {
            out.push_back(barrier(regions.front()->span));
            state.clear();
        }
        for (const ir::Stmt &r : regions) {
            const ir::WarpSpecialize &w = *ir::as<ir::WarpSpecialize>(r);
            int64_t outerId = barrierId_, outerThreads = barrierThreads_;
            barrierId_ = 1 + w.roles.front();
            barrierThreads_ = w.threads();
            State inside;
            ir::Stmt body = process(w.body, inside);
            barrierId_ = outerId;
            barrierThreads_ = outerThreads;
            out.push_back(std::make_shared<ir::WarpSpecialize>(w.roles, body, w.span));
        }
        state.add(all);
    }

    // Processes one element of a sequence; a barrier it needs is appended to `out` first.
    ir::Stmt processUnit(const ir::Stmt &s, State &state, std::vector<ir::Stmt> &out) {
        if (ir::as<ir::SyncThreads>(s)) {
            state.clear();
            return s;
        }
        if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) return std::make_shared<ir::LetStmt>(l->var, l->value, process(l->body, state), l->span);
        if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) return std::make_shared<ir::Allocate>(a->buffer, process(a->body, state), a->span);
        if (ir::as<ir::Seq>(s)) return process(s, state);
        if (const ir::For *f = ir::as<ir::For>(s); f && !f->threadLocal) {
            // A hazard with what came before the loop is resolved once, before it,
            // rather than in every iteration.
            State probe = state;
            if (firstHazard(f->body, probe)) {
                out.push_back(barrier(f->span));
                state.clear();
            }
            State entry = state;
            ir::Stmt body = process(f->body, state);
            // Entered again with the state its end leaves behind?
            State wrap = state.shifted(f->var.get());
            if (firstHazard(body, wrap)) {
                State fresh;
                body = process(f->body, fresh);
                body = ir::seq({barrier(f->span), body});
                state = fresh;
            }
            state.add(entry);   // the loop may run zero times
            return ir::rebuildFor(*f, f->min, f->extent, body);
        }
        if (const ir::BarrierWait *w = ir::as<ir::BarrierWait>(s)) {
            state.published(w->barrier.get());
            return s;
        }
        if (ir::as<ir::WarpSpecialize>(s)) {
            processRoles({s}, state, out);
            ir::Stmt region = out.back();
            out.pop_back();
            return region;
        }
        State unit = accessesOf(s);
        if (state.hazard(unit)) {
            out.push_back(barrier(s->span));
            state.clear();
        }
        state.add(unit);
        return s;
    }

    int64_t barrierId_ = 0, barrierThreads_ = 0;

    // Whether walking `s` from `state` meets a hazard before a barrier.
    bool firstHazard(const ir::Stmt &s, State &state) {
        bool stopped = false;
        return hazardBefore(s, state, stopped);
    }
    bool hazardBefore(const ir::Stmt &s, State &state, bool &stopped) {
        if (!s || stopped) return false;
        if (ir::as<ir::SyncThreads>(s)) {
            stopped = true;
            return false;
        }
        if (const ir::Seq *seq = ir::as<ir::Seq>(s)) {
            for (const ir::Stmt &x : seq->stmts) {
                if (hazardBefore(x, state, stopped)) return true;
                if (stopped) return false;
            }
            return false;
        }
        if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) return hazardBefore(l->body, state, stopped);
        if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) return hazardBefore(a->body, state, stopped);
        if (const ir::For *f = ir::as<ir::For>(s); f && !f->threadLocal) return hazardBefore(f->body, state, stopped);
        State unit = accessesOf(s);
        if (state.hazard(unit)) return true;
        state.add(unit);
        return false;
    }
};

} // namespace

ir::Kernel insertSyncs(const ir::Kernel &kernel, PassContext &) {
    ir::Kernel out = kernel;
    State state;
    out.body = Inserter().process(kernel.body, state);
    return out;
}

} // namespace tilet
