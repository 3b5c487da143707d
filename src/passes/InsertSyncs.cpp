// InsertSyncs.cpp -- see InsertSyncs.h.
//
// A forward dataflow over structured control flow. The state is what has
// been read and written since the last barrier of the current scope (the
// block, or inside ws(...) the role): shared byte ranges and whole global
// tensors, taken from each statement's effects (ir/Effects.h); and, across
// barriers, the generic shared writes no `fence.proxy.async` has ordered
// before the async proxy yet.
//
// - A sequence threads the state through; a unit (a statement that is not
//   control flow the walk descends into) that reads a pending write, or
//   writes a pending read or write, gets a barrier before it.
// - A branch every thread of the scope takes the same way (its condition is
//   uniform: block indices, parameters, memory at uniform indices) is walked
//   branch by branch, so barriers go inside it; the state after it is the
//   union of both branches'. A branch threads may take differently is one
//   unit, like a loop over one thread's own elements.
// - A loop whose body meets a hazard with what came before it gets one
//   barrier before the loop. If the body, entered again with the state its
//   end leaves (version tags shifted by one iteration), meets a hazard before
//   its first barrier, the body starts with one. The state after the loop
//   includes the state before it (zero iterations).
// - Consecutive ws(...) regions run at once on different warp groups: their
//   accesses are ordered by the program's mbarriers (check-barriers proves
//   it), never by block barriers; inside each, the role's named barrier.
// - A cp.async write lands at the cp.async.wait_group that retires its group
//   (each write counts the groups committed after it): until then it is in
//   `landing`, where no barrier clears it, so the barrier a reader needs is
//   placed after the wait.
// - Async proxy: generic writes stay "unfenced" until a fence.proxy.async.
//   A release point (a barrier, an mbarrier arrival, a cluster barrier) with
//   unfenced writes to bytes the async proxy touches anywhere in the kernel
//   gets the fence right before it, executed by the writing threads; an
//   async access of still-unfenced bytes gets a fence and a barrier.
#include "passes/InsertSyncs.h"

#include "ir/Analysis.h"
#include "ir/Effects.h"
#include "ir/Layout.h"
#include "ir/Simplify.h"
#include "ir/Uniformity.h"
#include "ir/Visitor.h"
#include "support/Checked.h"
#include "support/InternalError.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace tilet {

namespace {

// Bytes of shared memory (space null), or a whole global tensor or a view of
// another block's shared buffer (space = the buffer): threads of a block see
// each other's global writes only after a barrier too. An access to a
// pipelined buffer whose version index is (x + offset) % versions carries
// that version tag: two accesses with the same x and different offsets touch
// different versions.
struct Range {
    const void *space = nullptr;
    int64_t lo = 0, hi = 0;   // [lo, hi)
    const ir::BufferNode *buffer = nullptr;
    const ir::BufferNode *publishedBy = nullptr;   // an async write: visible to whoever waits on this mbarrier array;
                                                   // an async read: complete for them
    ir::Proxy proxy = ir::Proxy::Generic;
    int64_t role = -1;       // made inside ws(...) by the role whose first warp this is; -1: by the block
    int64_t segment = 0;     // a role's: where the block last met before it (Inserter::segment_)
    // A role's mbarrier operations on `buffer` (space: the barrier array):
    // phases, not bytes. They conflict only with another role's across a
    // meeting of the block, which check-barriers assumed orders them.
    bool phases = false;
    int64_t serial = 0;      // order of admission into the state (see Inserter::probe)
    SourceRange span;        // the access, for --explain
    const char *by = nullptr;   // the instruction of an async-proxy access ("wgmma", "a TMA store")
    // An access of an operation that one thread of the role (or block)
    // issues (ir::issuedByOneThread) and that completes on an mbarrier or in
    // the tensor core's issue order: a tcgen05.mma or tcgen05.cp (the tensor
    // core runs one thread's in issue order), a TMA or 1D bulk load
    // (completing on an mbarrier the issuing thread's protocol waits on).
    // Two of them are ordered by that thread or not at all -- a barrier
    // between them adds nothing -- unless some other threads waited on the
    // first one's barrier (`waitedBySome`): a barrier then passes their
    // knowledge on to the issuer. Not a TMA or bulk store's: they complete at
    // the issuer's bulk wait, a wait `waitedBySome` does not follow.
    bool singleIssuer = false;
    bool waitedBySome = false;
    ir::Expr tagBase;        // null: untagged
    int64_t tagOffset = 0;
    // A global access of each thread t (threadIdx.x) to its own elements:
    // element offsets ownerBase + t * ownerStride + [ownerLo, ownerHi), the
    // base the same in every thread (block indices and constants only), the
    // span covering every value of the loop variables in the offset.
    ir::Expr ownerBase;      // null: a constant base (ownerStride 0: no such form)
    int64_t ownerStride = 0, ownerLo = 0, ownerHi = 0;
    int64_t ownerThreads = 0;   // the block's threads: t runs from 0 to ownerThreads - 1
    // Plus terms that are multiples of stride * threads, of any value (a loop
    // over chunks, `Out[k * 512 + tx]` on 512 threads): each thread's
    // elements keep their residue modulo that period.
    bool ownerPeriodic = false;
    // Or, where the offset is no multiple of t (threadIdx.x / 4 * 64 +
    // threadIdx.x % 4 * 4, a fragment's rows and columns) but every loop
    // variable in it is bounded: where each thread's runs of
    // ownerHi - ownerLo elements start, relative to ownerBase, for every
    // value of the loop variables, sorted (offset, thread). ownerStride is 0.
    std::shared_ptr<const std::vector<std::pair<int64_t, int64_t>>> ownerStarts;
    // A cp.async write not landed yet (State::landing): how many of the
    // thread's cp.async groups were committed since it was; -1 while its
    // group is still open. cp.async.wait_group N lands it once this is >= N.
    int64_t groupsAfter = -1;
    // A tcgen05.ld/st: the cells of each thread (TmemPartition). Two moves of
    // one partition by the same threads touch different cells in different threads.
    const ir::TmemMove *tmemMove = nullptr;
    // An element access of a shared buffer whose offset past its first index
    // is known, for every thread, to lie in [rowLo, rowHi) of the
    // row (the elements of one first index: a stage of [stages, ...]). Two
    // such accesses of the buffer with disjoint spans touch different
    // elements whatever their first indices are: a row is rowSize elements,
    // so row * rowSize + x meets row' * rowSize + y (x, y in [0, rowSize))
    // only at x = y.
    bool rowKnown = false;
    int64_t rowLo = 0, rowHi = 0;

    bool disjointVersion(const Range &o) const {
        if (!tagBase || !o.tagBase || buffer != o.buffer) return false;
        return ir::structurallyEqual(tagBase, o.tagBase) && tagOffset != o.tagOffset;
    }
    // Two such accesses of one tensor view whose offsets of one thread lie
    // within one stride: different threads touch different elements, and one
    // thread's own accesses are ordered by its program.
    // Or further apart, where no two threads of the block reach each
    // other's elements (`Out[tx]` and `Out[tx + 256]` with 256 threads):
    // threads t and u meet only where (u - t) * stride falls strictly
    // between o.ownerLo - ownerHi and o.ownerHi - ownerLo.
    bool ownedApart(const Range &o) const {
        if (buffer != o.buffer) return false;
        if ((ownerBase == nullptr) != (o.ownerBase == nullptr) || (ownerBase && !ir::structurallyEqual(ownerBase, o.ownerBase))) return false;
        if (ownerStarts || o.ownerStarts) return ownerStarts && o.ownerStarts && runsApart(*ownerStarts, ownerHi - ownerLo, *o.ownerStarts, o.ownerHi - o.ownerLo);
        if (ownerStride == 0 || ownerStride != o.ownerStride) return false;
        int64_t stride = std::abs(ownerStride);
        // Two offsets of threads t != u differ by (t - u) * stride plus less
        // than a stride: never zero, nor (below threads * stride) a multiple
        // of the period.
        if (std::max(ownerHi, o.ownerHi) - std::min(ownerLo, o.ownerLo) <= stride) return true;
        if (ownerPeriodic || o.ownerPeriodic) return false;
        int64_t threads = std::min(ownerThreads, o.ownerThreads);
        if (threads <= 0) return false;
        int64_t below = o.ownerLo - ownerHi, above = o.ownerHi - ownerLo;   // the open interval of offsets where they meet
        // Only |k| < threads can meet (a span of a loop bounded only by its
        // type would otherwise take ~2^31 steps here).
        for (int64_t k = std::max<int64_t>(below / stride - 1, 1 - threads); k < threads && k * stride < above; ++k) {
            if (k != 0 && k * stride > below) return false;
        }
        return true;
    }
    // Whether no run of `width` elements from a start of `mine` meets a run
    // of `otherWidth` from a start of `other` of another thread.
    static bool runsApart(const std::vector<std::pair<int64_t, int64_t>> &mine, int64_t width, const std::vector<std::pair<int64_t, int64_t>> &other,
                          int64_t otherWidth) {
        for (const auto &[start, thread] : mine) {
            // The runs of `other` that meet [start, start + width): those starting in (start - otherWidth, start + width).
            auto it = std::lower_bound(other.begin(), other.end(), std::pair{start - otherWidth + 1, INT64_MIN});
            for (; it != other.end() && it->first < start + width; ++it)
                if (it->second != thread) return false;
        }
        return true;
    }
    bool partitionedAlike(const Range &o) const {
        return tmemMove && o.tmemMove && buffer == o.buffer && role == o.role && ir::samePartition(tmemMove->partition, o.tmemMove->partition);
    }
    bool apartInRows(const Range &o) const {
        return rowKnown && o.rowKnown && buffer == o.buffer && (rowHi <= o.rowLo || o.rowHi <= rowLo);
    }
    // An atomic add whose result no thread sees (Access::atomic): such adds need no order among themselves.
    bool atomic = false;

    bool overlaps(const Range &o) const {
        return space == o.space && lo < o.hi && o.lo < hi && !(atomic && o.atomic) && !disjointVersion(o) && !ownedApart(o) && !partitionedAlike(o) &&
               !apartInRows(o);
    }
};

// Two records of one access (the same statement walked again: a loop's
// second pass, a probe, both arms of a join) are one: the earliest admission
// is kept, so probes see it as they would have seen either. Without this,
// nested loops and branches double the lists at every join.
bool sameLocation(const SourceRange &a, const SourceRange &b) {
    auto same = [](const SourceLoc &x, const SourceLoc &y) { return x.file == y.file && x.line == y.line && x.col == y.col; };
    return same(a.begin, b.begin) && same(a.end, b.end);
}

bool sameAccess(const Range &a, const Range &b) {
    auto sameExpr = [](const ir::Expr &x, const ir::Expr &y) { return x == y || (x && y && ir::structurallyEqual(x, y)); };
    return a.space == b.space && a.lo == b.lo && a.hi == b.hi && a.buffer == b.buffer && a.publishedBy == b.publishedBy &&
           a.proxy == b.proxy && a.role == b.role && a.by == b.by && a.singleIssuer == b.singleIssuer && a.tagOffset == b.tagOffset && sameLocation(a.span, b.span) &&
           sameExpr(a.tagBase, b.tagBase) && a.ownerStride == b.ownerStride && a.ownerLo == b.ownerLo && a.ownerHi == b.ownerHi &&
           a.ownerThreads == b.ownerThreads && a.ownerPeriodic == b.ownerPeriodic &&
           (a.ownerStarts == b.ownerStarts || (a.ownerStarts && b.ownerStarts && *a.ownerStarts == *b.ownerStarts)) &&
           sameExpr(a.ownerBase, b.ownerBase) && a.groupsAfter == b.groupsAfter &&   // one statement's copies of two iterations land apart
           a.tmemMove == b.tmemMove && a.rowKnown == b.rowKnown && a.rowLo == b.rowLo && a.rowHi == b.rowHi && a.atomic == b.atomic;
}

void addUnique(std::vector<Range> &list, const Range &r) {
    for (Range &x : list) {
        if (!sameAccess(x, r)) continue;
        x.serial = std::min(x.serial, r.serial);
        return;
    }
    list.push_back(r);
}

void addUnique(std::vector<Range> &list, const std::vector<Range> &more) {
    for (const Range &r : more) addUnique(list, r);
}

bool overlapsAny(const Range &r, const std::vector<Range> &set) {
    return std::any_of(set.begin(), set.end(), [&](const Range &x) { return r.overlaps(x); });
}

struct State {
    std::vector<Range> reads, writes;
    std::vector<Range> unfenced;   // generic shared writes not yet fenced for the async proxy
    std::vector<Range> inFlight;   // cp.async writes: unfenced once a cp.async.wait_group lands them
    // cp.async writes whose group has not been retired: no barrier orders
    // them yet (the bytes land later), so a barrier leaves them here; the
    // wait_group that retires their group moves them to `writes`.
    std::vector<Range> landing;
    // A wait on an mbarrier that every thread of the scope made since the
    // scope's last barrier (its location): until a barrier, some of them may
    // still be inside it (see Inserter::paceWaiters).
    std::optional<SourceRange> unpacedWait;
    // Since that wait, each warp group of the scope committed a wgmma group
    // and then waited for wgmma groups to retire. A retired wgmma was issued
    // by every warp of its group (it is the warp group's one operation), so
    // an arrival one thread of each group makes after such a wait comes
    // after its whole group issued -- for a pipeline's release, after the
    // group passed the wait on the stage it releases (see paceWaiters).
    enum class Wgmma { None, Committed, Retired } wgmmaSinceWait = Wgmma::None;

    void add(const State &o) {
        Wgmma mine = unpacedWait ? wgmmaSinceWait : Wgmma::Retired, theirs = o.unpacedWait ? o.wgmmaSinceWait : Wgmma::Retired;
        if (!unpacedWait) unpacedWait = o.unpacedWait;
        wgmmaSinceWait = unpacedWait ? std::min(mine, theirs) : Wgmma::None;
        addUnique(reads, o.reads);
        addUnique(writes, o.writes);
        addUnique(unfenced, o.unfenced);
        addUnique(inFlight, o.inFlight);
        addUnique(landing, o.landing);
    }
    // cp.async.commit_group: the open group is closed; every group in flight is one older.
    void committed() {
        static constexpr int64_t kOldest = 64;   // older than any wait_group count a program writes
        for (Range &r : landing) r.groupsAfter = std::min(r.groupsAfter + 1, kOldest);
    }
    // cp.async.wait_group: the groups it retires have landed. For the fences
    // (`inFlight`) which ones is not tracked: every copy in flight counts as
    // landed, and stays in flight until a wait for all of them. For the
    // barriers (`landing`) it is, by the groups committed since each write.
    // `serial` numbers the writes that land: they take effect here, so a
    // probe of a loop they land in does not place its barrier before it.
    void landed(int64_t pending, int64_t &serial) {
        addUnique(unfenced, inFlight);
        if (pending == 0) inFlight.clear();
        // The groups it retires, precisely: all but the `pending` newest committed ones.
        auto retired = [&](const Range &r) { return r.groupsAfter >= pending; };
        for (Range r : landing) {
            if (!retired(r)) continue;
            r.groupsAfter = -1;   // landed: a write like any other
            r.serial = ++serial;
            addUnique(writes, r);
        }
        landing.erase(std::remove_if(landing.begin(), landing.end(), retired), landing.end());
    }
    // A barrier: everything before it is visible to everything after it,
    // except to the async proxy.
    void barrier() {
        reads.clear();
        writes.clear();
        unpacedWait.reset();
        wgmmaSinceWait = Wgmma::None;
    }
    // fence.proxy.async: shared writes (and with `global`, global ones) are fenced.
    void fenced(bool global) {
        unfenced.erase(std::remove_if(unfenced.begin(), unfenced.end(),
                                      [&](const Range &r) { return global || (r.buffer->scope != ir::MemScope::Global && !r.buffer->remoteOf); }),
                       unfenced.end());
    }
    // Every thread that waits on mbarrier array `b` sees the async writes completing on it,
    // and the async reads completing on it are done.
    void published(const ir::BufferNode *b) {
        for (std::vector<Range> *list : {&writes, &reads})
            list->erase(std::remove_if(list->begin(), list->end(), [&](const Range &r) { return r.publishedBy == b; }), list->end());
    }
    // Some threads waited on mbarrier array `b`: the async accesses completing on it are complete for them.
    void waitedBySome(const ir::BufferNode *b) {
        for (std::vector<Range> *list : {&writes, &reads})
            for (Range &r : *list)
                if (r.publishedBy == b) r.waitedBySome = true;
    }
    // The state as the next iteration of a loop without a variable sees it:
    // no version tag can be told apart from the same tag of another iteration.
    State untagged() const {
        State out = *this;
        for (std::vector<Range> *list : {&out.reads, &out.writes, &out.unfenced, &out.inFlight, &out.landing}) {
            for (Range &r : *list) r.tagBase = nullptr;
        }
        return out;
    }
    // The state as the next iteration of the loop over `v` sees it: a tag
    // (v + c) of this iteration is (v + c - 1) of the next.
    State shifted(const ir::VarRef &v) const {
        State out = *this;
        for (std::vector<Range> *list : {&out.reads, &out.writes, &out.unfenced, &out.inFlight, &out.landing}) {
            for (Range &r : *list) {
                if (!r.tagBase || !ir::usesVar(r.tagBase, v.get())) continue;
                // A tag v + e, e independent of v (k, or k - start of a loop from a run-time start).
                ir::Expr rest = ir::simplify(ir::sub(r.tagBase, v));
                if (!ir::usesVar(rest, v.get())) r.tagOffset = (r.tagOffset - 1 + r.buffer->pipelineVersions) % r.buffer->pipelineVersions;
                else r.tagBase = nullptr;   // not of the form v + e: no claim
            }
        }
        return out;
    }
};

// Tensor memory too: tcgen05.ld by every warp and tcgen05.mma by one thread
// reach the same columns, so a thread's MMA that overwrites what other warps
// read needs a barrier between (with the tcgen05 fences around it).
bool isMemory(const ir::BufferNode &b) {
    return b.scope == ir::MemScope::Shared || b.scope == ir::MemScope::Global || b.scope == ir::MemScope::TMem;
}

Range rangeOf(const ir::BufferNode &b, const std::vector<ir::Expr> *indices) {
    // A view of a shared buffer's bytes (packed data) is its memory; the versions are dimension 0 of both.
    if (b.scope == ir::MemScope::Shared && b.viewOf) return rangeOf(*b.viewOf, indices);
    Range r;
    r.buffer = &b;
    if (b.scope == ir::MemScope::Global || b.remoteOf || b.scope == ir::MemScope::TMem) {
        r.space = &ir::storageRoot(b);   // a view is its tensor's memory; a tensor-memory buffer its own columns
        r.hi = 1;
        return r;
    }
    int64_t bytes = *b.constElements() * dtypeBits(b.dtype) / 8;
    r.lo = b.sharedOffset;
    r.hi = b.sharedOffset + bytes;
    if (b.pipelineVersions < 2 || !indices || indices->empty()) return r;
    int64_t versions = b.pipelineVersions, versionBytes = bytes / versions;
    const ir::Expr &version = (*indices)[0];
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

// Who accesses memory through the async proxy, for --explain.
const char *asyncAccessor(const ir::Stmt &s) {
    switch (s->kind) {
    case ir::StmtKind::Wgmma: return "wgmma";
    case ir::StmtKind::TmaLoad: return "a TMA load";
    case ir::StmtKind::TmaStore: return "a TMA store";
    case ir::StmtKind::BulkCopy: return "a bulk copy";
    case ir::StmtKind::Tcgen05Mma: return "tcgen05.mma";
    case ir::StmtKind::Tcgen05Copy: return "tcgen05.cp";
    default: return "an asynchronous operation";
    }
}

// Values of the let-bound variables in scope, to see indices in terms of threadIdx.x.
// and the block's threads, the range of threadIdx.x.
struct LetValues {
    std::map<const ir::VarNode *, ir::Expr> values;
    int64_t threads = 1024;
    // The kernel's scalar parameters and dyn sizes: the same in every thread.
    std::set<const ir::VarNode *> invariant;
    // The values each loop variable of the kernel takes (the hull over every
    // loop that binds it), where they are bounded: an index may then vary
    // with it within a known span (see findOwnership).
    std::map<const ir::VarNode *, ir::Interval> loopRanges;
    // findOwnership's answers, by buffer. The walk meets each access many
    // times (a loop's passes, probes, both arms of a branch), and working one
    // out simplifies the offset and may sort thousands of run starts. The
    // answer depends only on the offset (with the let values substituted)
    // and the members above, which are fixed for a kernel: an access whose
    // offset is structurally equal to an earlier one's reuses its answer.
    struct Owned {
        ir::Expr offset;
        int64_t width;
        Range range;   // its ownership fields
    };
    mutable std::map<const ir::BufferNode *, std::vector<Owned>> owned;
};

// threadIdx.x as a variable, so that substitution can probe it.
class ThreadIndexAsVar : public ir::Mutator {
public:
    explicit ThreadIndexAsVar(ir::VarRef t) : t_(std::move(t)) {}
    using ir::Mutator::mutate;
protected:
    ir::Expr mutateSpecialReg(const ir::Expr &self, const ir::SpecialReg &n) override {
        return n.special == ir::SpecialKind::ThreadIdx ? ir::Expr(t_) : self;
    }
private:
    ir::VarRef t_;
};

// `e` with the let-bound variables in scope replaced by their values.
ir::Expr withLetValues(ir::Expr e, const LetValues &lets) {
    for (int depth = 0; depth < 16; ++depth) {   // lets bound to lets, a bounded number of levels
        std::vector<std::pair<ir::VarRef, ir::Expr>> bound;
        ir::forEachExpr(e, [&](const ir::Expr &x) {
            if (const ir::Var *v = ir::as<ir::Var>(x); v && lets.values.count(v)) bound.push_back({std::static_pointer_cast<const ir::VarNode>(x), lets.values.at(v)});
        });
        if (bound.empty()) break;
        for (const auto &[v, value] : bound) e = ir::substitute(e, {{v, value}});
    }
    return e;
}

// The coefficient of `v` in `e`, when `e` is a sum (+, -) of terms each
// either free of v or v times a constant (casts looked through); nullopt
// otherwise.
std::optional<int64_t> linearCoefficient(const ir::Expr &e, const ir::VarNode *v) {
    auto uses = [&](const ir::Expr &x) {
        bool found = false;
        ir::forEachExpr(x, [&](const ir::Expr &y) { found = found || y.get() == v; });
        return found;
    };
    auto strip = [](ir::Expr x) {
        while (const ir::Cast *c = ir::as<ir::Cast>(x)) x = c->value;
        return x;
    };
    if (!uses(e)) return 0;
    ir::Expr x = strip(e);
    if (x.get() == v) return 1;
    const ir::Binary *b = ir::as<ir::Binary>(x);
    if (!b) return std::nullopt;
    if (b->op == ir::BinaryOp::Add || b->op == ir::BinaryOp::Sub) {
        std::optional<int64_t> l = linearCoefficient(b->a, v), r = linearCoefficient(b->b, v);
        if (!l || !r) return std::nullopt;
        return b->op == ir::BinaryOp::Add ? checkedAdd(*l, *r) : checkedSub(*l, *r);   // (nullopt past 64 bits)
    }
    if (b->op == ir::BinaryOp::Mul) {
        for (auto [term, factor] : {std::pair{b->a, b->b}, std::pair{b->b, b->a}}) {
            std::optional<int64_t> c = ir::constInt(factor), inner = c ? linearCoefficient(term, v) : std::nullopt;
            if (inner) return checkedMul(*inner, *c);
        }
    }
    return std::nullopt;
}

// The value of each variable of `body` that lets bind to one value only,
// wherever the binding is: the walk does not descend into a unit (a copy's
// loop, binding its row and column inside), whose accesses are still seen
// in terms of threadIdx.x this way. A variable bound to different values
// (in two copies of a loop) is left to the walk, which binds it as it meets it.
std::map<const ir::VarNode *, ir::Expr> uniqueLetValues(const ir::Stmt &body) {
    std::map<const ir::VarNode *, ir::Expr> values;
    std::set<const ir::VarNode *> rebound;
    ir::forEachStmt(body, [&](const ir::Stmt &s) {
        const ir::LetStmt *l = ir::as<ir::LetStmt>(s);
        if (!l) return;
        auto [it, fresh] = values.emplace(l->var.get(), l->value);
        if (!fresh && !ir::structurallyEqual(it->second, l->value)) rebound.insert(l->var.get());
    });
    for (const ir::VarNode *v : rebound) values.erase(v);
    return values;
}

// LetValues::loopRanges for the loops of `body`: each loop's first and last
// values, bounded with those of the loops around it (a loop from 2 to
// min(16, S - x) runs over [2, 15]). A variable a let binds somewhere too is
// left out: its loop range would not hold there.
std::map<const ir::VarNode *, ir::Interval> loopRangesOf(const ir::Stmt &body, int64_t threads) {
    LetValues lets;
    lets.values = uniqueLetValues(body);
    std::set<const ir::VarNode *> letBound;
    ir::forEachStmt(body, [&](const ir::Stmt &s) {
        if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) letBound.insert(l->var.get());
    });
    std::map<const ir::VarNode *, ir::Interval> ranges;
    ir::BoundsScope scope;
    scope.setSpecial(ir::SpecialKind::ThreadIdx, ir::Interval::range(0, threads - 1));
    // Pre-order: the loops around a loop are bound in `scope` before it.
    ir::forEachStmt(body, [&](const ir::Stmt &s) {
        const ir::For *f = ir::as<ir::For>(s);
        if (!f || letBound.count(f->var.get())) return;
        ir::Interval first = ir::boundsOf(ir::simplify(withLetValues(f->min, lets)), scope);
        ir::Interval last = ir::boundsOf(ir::simplify(withLetValues(ir::sub(ir::add(f->min, f->extent), ir::intImm(1, f->extent->dtype)), lets)), scope);
        ir::Interval r{first.lo, last.hi};
        auto [it, fresh] = ranges.emplace(f->var.get(), r);
        // The same variable bound by two loops (a peeled iteration): their hull.
        if (!fresh) it->second = {std::min(it->second.lo, r.lo), std::max(it->second.hi, r.hi)};
        scope.bind(f->var.get(), it->second);
    });
    // Unbounded ranges claim nothing.
    for (auto it = ranges.begin(); it != ranges.end();) it = it->second.bounded() && it->second.lo <= it->second.hi ? std::next(it) : ranges.erase(it);
    return ranges;
}

// The terms of a sum, each with its constant factor: (+, -) and products
// with a constant distributed, casts between integer types looked through
// (as linearCoefficient does: index arithmetic does not overflow).
void addTerms(const ir::Expr &e, int64_t factor, std::vector<std::pair<ir::Expr, int64_t>> &out) {
    if (const ir::Cast *c = ir::as<ir::Cast>(e); c && isInteger(c->dtype) && isInteger(c->value->dtype)) return addTerms(c->value, factor, out);
    if (const ir::Binary *b = ir::as<ir::Binary>(e)) {
        if (b->op == ir::BinaryOp::Add || b->op == ir::BinaryOp::Sub) {
            addTerms(b->a, factor, out);
            addTerms(b->b, b->op == ir::BinaryOp::Sub ? -factor : factor, out);
            return;
        }
        std::optional<int64_t> k;
        auto small = [](int64_t x) { return x > -(int64_t{1} << 20) && x < (int64_t{1} << 20); };   // products far from overflow
        if (b->op == ir::BinaryOp::Mul && (k = ir::constInt(b->b)) && small(*k) && small(factor)) return addTerms(b->a, factor * *k, out);
        if (b->op == ir::BinaryOp::Mul && (k = ir::constInt(b->a)) && small(*k) && small(factor)) return addTerms(b->b, factor * *k, out);
    }
    out.push_back({e, factor});
}

// Whether `e` is made of block indices, parameters and constants only: the
// same in every thread and every iteration.
bool plainBase(const ir::Expr &e, const LetValues &lets) {
    bool plain = true;
    ir::forEachExpr(e, [&](const ir::Expr &x) {
        if (const ir::Var *v = ir::as<ir::Var>(x); v && !lets.invariant.count(v)) plain = false;
        if (ir::as<ir::Load>(x) || ir::as<ir::Shuffle>(x)) plain = false;
        if (const ir::SpecialReg *s = ir::as<ir::SpecialReg>(x); s && s->special == ir::SpecialKind::ThreadIdx) plain = false;
    });
    return plain;
}

// The ownership fields of `r` for an element offset `e` (threadIdx.x as `t`)
// of the form base + t * stride + c: c a constant plus terms of loop
// variables, each either a multiple of stride * threads (periodic) or
// bounded by its loop (c then lies in a known span, the same for every value
// of the variables, so [ownerLo, ownerHi) covers every iteration), and the
// base made of block indices and constants only (never a loop variable:
// iterations would compare equal bases of different values). False when
// `e` is not of that form.
bool ownedLinearly(Range &r, const ir::Expr &e, const ir::VarRef &t, int64_t width, const LetValues &lets) {
    std::optional<int64_t> stride = ir::constInt(ir::simplify(ir::sub(ir::substitute(e, {{t, ir::intImm(1, DType::Int64)}}),
                                                                       ir::substitute(e, {{t, ir::intImm(0, DType::Int64)}}))));
    // (a stride past 2^40 is no tensor's: left alone, far from overflow)
    if (!stride || *stride == 0 || *stride <= -(int64_t{1} << 40) || *stride >= (int64_t{1} << 40)) return false;
    ir::Expr rest = ir::simplify(ir::sub(e, ir::mul(t, ir::intImm(*stride, DType::Int64))));
    // Terms v * m * stride * threads (v a variable: a loop's, a var's) keep
    // each thread's elements apart whatever v is: they are left out.
    bool periodic = false;
    const int64_t period = std::abs(*stride) * lets.threads;
    std::vector<ir::VarRef> vars;
    ir::forEachExpr(rest, [&](const ir::Expr &x) {
        const ir::Var *v = ir::as<ir::Var>(x);
        if (!v || lets.invariant.count(v)) return;
        for (const ir::VarRef &seen : vars)
            if (seen.get() == v) return;
        vars.push_back(std::static_pointer_cast<const ir::VarNode>(x));
    });
    // Terms v * k of a bounded loop variable v (`2 + i` for i in [0, 2)):
    // each thread's elements move within [lo, hi) of its own, wider by
    // k's share of v's range. ownedApart compares such spans like any other
    // (a thread's span longer than the stride meets its neighbours').
    int64_t spanLo = 0, spanHi = 0;
    static constexpr int64_t kLargestSpan = int64_t{1} << 40;   // far from overflow, far past any tensor
    for (const ir::VarRef &v : vars) {
        std::optional<int64_t> step = linearCoefficient(rest, v.get());
        if (!step) return false;
        auto loop = lets.loopRanges.find(v.get());
        if (*step % period == 0) {
            periodic = true;
        } else if (loop != lets.loopRanges.end()) {
            int64_t atFirst = 0, atLast = 0;
            if (__builtin_mul_overflow(*step, loop->second.lo, &atFirst) || __builtin_mul_overflow(*step, loop->second.hi, &atLast)) return false;
            if (atFirst <= -kLargestSpan || atFirst >= kLargestSpan || atLast <= -kLargestSpan || atLast >= kLargestSpan) return false;
            spanLo += std::min(atFirst, atLast);   // a term and the sum so far below 2^40 each: no overflow
            spanHi += std::max(atFirst, atLast);
            if (std::abs(spanLo) >= kLargestSpan || std::abs(spanHi) >= kLargestSpan) return false;
        } else {
            return false;
        }
        rest = ir::simplify(ir::substitute(rest, {{v, ir::intImm(0, v->dtype)}}));
    }
    if (!plainBase(rest, lets)) return false;
    int64_t c = 0;
    ir::Expr base = ir::splitConstant(rest, c);
    if (c <= -kLargestSpan || c >= kLargestSpan || width >= kLargestSpan) return false;   // (the sums below stay far from overflow)
    r.ownerBase = base;
    r.ownerStride = *stride;
    r.ownerLo = c + spanLo;
    r.ownerHi = c + spanHi + width;
    r.ownerThreads = lets.threads;
    r.ownerPeriodic = periodic;
    return true;
}

// The ownership fields of `r` for an element offset `e` (threadIdx.x as `t`)
// of the form base + f(t) + c + the sum of k_v * v over loop variables v,
// each bounded by its loop, f(t) any expression of t alone (t / 4 * 64 + t %
// 4 * 4): Range::ownerStarts lists, for every thread and every value of the
// loop variables, where the thread's run of `width` elements starts.
void ownedByStarts(Range &r, const ir::Expr &e, const ir::VarRef &t, int64_t width, const LetValues &lets) {
    static constexpr int64_t kMostStarts = int64_t{1} << 14;   // a block's threads times a few iterations
    std::vector<std::pair<int64_t, ir::Interval>> loopTerms;   // k_v and v's range
    std::vector<ir::VarRef> vars;
    ir::forEachExpr(e, [&](const ir::Expr &x) {
        const ir::Var *v = ir::as<ir::Var>(x);
        if (!v || v == t.get() || lets.invariant.count(v)) return;
        for (const ir::VarRef &seen : vars)
            if (seen.get() == v) return;
        vars.push_back(std::static_pointer_cast<const ir::VarNode>(x));
    });
    ir::Expr rest = e;
    int64_t starts = lets.threads;
    for (const ir::VarRef &v : vars) {
        std::optional<int64_t> step = linearCoefficient(rest, v.get());
        auto loop = lets.loopRanges.find(v.get());
        if (!step || loop == lets.loopRanges.end()) return;
        int64_t values = loop->second.hi - loop->second.lo + 1;
        if (values > kMostStarts || (starts *= values) > kMostStarts) return;
        loopTerms.push_back({*step, loop->second});
        rest = ir::simplify(ir::substitute(rest, {{v, ir::intImm(0, v->dtype)}}));
    }
    // f(t): the terms that use t; the base: the others.
    std::vector<std::pair<ir::Expr, int64_t>> terms;
    addTerms(rest, 1, terms);
    ir::Expr ofThread = ir::intImm(0, DType::Int64), base = ir::intImm(0, DType::Int64);
    for (const auto &[term, factor] : terms) {
        ir::Expr &sum = ir::usesVar(term, t.get()) ? ofThread : base;
        sum = ir::add(sum, ir::mul(ir::cast(DType::Int64, term), ir::intImm(factor, DType::Int64)));
    }
    if (!plainBase(base, lets)) return;
    ir::BoundsScope scope;
    std::vector<std::pair<int64_t, int64_t>> found;
    found.reserve(static_cast<size_t>(starts));
    for (int64_t thread = 0; thread < lets.threads; ++thread) {
        scope.bind(t.get(), ir::Interval::point(thread));
        ir::Interval at = ir::boundsOf(ofThread, scope);   // a point, unless f reads something else
        if (!at.isPoint() || at.lo <= -(int64_t{1} << 40) || at.lo >= (int64_t{1} << 40)) return;
        found.push_back({at.lo, thread});
    }
    for (const auto &[step, range] : loopTerms) {
        auto small = [](int64_t x) { return x > -(int64_t{1} << 20) && x < (int64_t{1} << 20); };   // starts far from overflow
        if (!small(step) || !small(range.lo) || !small(range.hi)) return;
        std::vector<std::pair<int64_t, int64_t>> more;
        more.reserve(found.size() * static_cast<size_t>(range.hi - range.lo + 1));
        for (const auto &[at, thread] : found)
            for (int64_t v = range.lo; v <= range.hi; ++v) more.push_back({at + step * v, thread});
        found = std::move(more);
    }
    int64_t c = 0;
    base = ir::splitConstant(ir::simplify(base), c);
    if (c <= -(int64_t{1} << 40) || c >= (int64_t{1} << 40)) return;   // (starts stay far from overflow)
    for (auto &[at, thread] : found) at += c;
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    r.ownerBase = base;
    r.ownerStride = 0;
    r.ownerLo = 0;
    r.ownerHi = width;
    r.ownerThreads = lets.threads;
    r.ownerStarts = std::make_shared<const std::vector<std::pair<int64_t, int64_t>>>(std::move(found));
}

// Sets the ownership fields of `r`, a global element access of `width`
// elements at `indices`, when each thread's elements are known apart from
// the others' (ownedLinearly, ownedByStarts).
void findOwnership(Range &r, const ir::BufferNode &b, const std::vector<ir::Expr> &indices, int64_t width, const LetValues &lets) {
    if (b.scope != ir::MemScope::Global || indices.size() != b.shape.size()) return;
    ir::Expr offset = withLetValues(ir::bufferOffset(b, indices, DType::Int64), lets);
    auto copyOwnership = [](Range &to, const Range &from) {
        to.ownerBase = from.ownerBase;
        to.ownerStride = from.ownerStride;
        to.ownerLo = from.ownerLo;
        to.ownerHi = from.ownerHi;
        to.ownerThreads = from.ownerThreads;
        to.ownerPeriodic = from.ownerPeriodic;
        to.ownerStarts = from.ownerStarts;
    };
    std::vector<LetValues::Owned> &known = lets.owned[&b];
    for (const LetValues::Owned &o : known) {
        if (o.width != width || !ir::structurallyEqual(o.offset, offset)) continue;
        copyOwnership(r, o.range);
        return;
    }
    Range found;
    ir::VarRef t = ir::makeVar("t", DType::Int64);
    ir::Expr e = ir::simplify(ThreadIndexAsVar(t).mutate(ir::cast(DType::Int64, offset)));
    if (!ownedLinearly(found, e, t, width, lets)) ownedByStarts(found, e, t, width, lets);
    copyOwnership(r, found);
    known.push_back({offset, width, std::move(found)});
}

// Range::rowKnown for an access of `elements` elements at `indices` of a
// shared buffer: the offset past the first index, row-major over the other
// dimensions, bounded for every thread (threadIdx.x % 32 * 4 + 128: a
// chunk of one stage). Not for packed buffers (two elements share a byte)
// or views (their indices count the view's elements).
void findRowSpan(Range &r, const ir::BufferNode &b, const std::vector<ir::Expr> &indices, int64_t elements, const LetValues *lets) {
    if (b.scope != ir::MemScope::Shared || b.viewOf || b.remoteOf || isSubByte(b.dtype) || indices.size() != b.shape.size()) return;
    std::optional<std::vector<int64_t>> shape = b.constShape();
    if (!shape) return;
    size_t first = shape->size() > 1 ? 1 : 0;
    ir::Expr inner = ir::intImm(0, DType::Int64);
    int64_t rowSize = 1;
    for (size_t d = shape->size(); d-- > first;) {
        inner = ir::add(inner, ir::mul(ir::cast(DType::Int64, indices[d]), ir::intImm(rowSize, DType::Int64)));
        rowSize *= (*shape)[d];
    }
    ir::BoundsScope scope;
    scope.setSpecial(ir::SpecialKind::ThreadIdx, ir::Interval::range(0, (lets ? lets->threads : 1024) - 1));
    ir::Interval span = ir::boundsOf(ir::simplify(lets ? withLetValues(inner, *lets) : inner), scope);
    if (!span.bounded() || span.lo < 0 || span.hi + elements > rowSize) return;
    r.rowKnown = true;
    r.rowLo = span.lo;
    r.rowHi = span.hi + elements;
}

// A TMA or 1D bulk store: it joins the issuing thread's bulk group, its
// accesses complete at that thread's bulk wait (not on an mbarrier).
bool completesAtBulkWait(const ir::Stmt &s) {
    const ir::BulkCopy *bulk = ir::as<ir::BulkCopy>(s);
    return ir::as<ir::TmaStore>(s) || (bulk && !bulk->barrier);
}

void addRanges(State &st, const ir::Stmt &s, const ir::Effects &fx, int64_t role, const LetValues *lets) {
    for (const ir::Access &a : fx.accesses) {
        if (!isMemory(*a.buffer)) continue;
        Range range = rangeOf(*a.buffer, a.indices);
        if (a.exact) findRowSpan(range, *a.buffer, *a.indices, a.elements, lets);
        if (lets && a.indices && !a.region) {
            if (ir::as<ir::Store>(s) || ir::as<ir::VectorCopy>(s)) findOwnership(range, *a.buffer, *a.indices, a.elements, *lets);
        }
        range.proxy = a.proxy;
        range.role = role;
        range.span = a.span;
        range.atomic = a.atomic;
        if (a.proxy == ir::Proxy::Async) range.by = asyncAccessor(s);
        range.singleIssuer = ir::issuedByOneThread(s) && !completesAtBulkWait(s);
        range.tmemMove = a.buffer->scope == ir::MemScope::TMem ? ir::as<ir::TmemMove>(s) : nullptr;
        if (a.writes()) {
            Range w = range;
            w.publishedBy = a.completesOn;
            // cp.async (generic, asynchronous, completing at a wait_group, not an mbarrier)
            bool cpAsync = a.asynchronous && a.proxy == ir::Proxy::Generic && !a.completesOn;
            addUnique(cpAsync ? st.landing : st.writes, w);
            // Generic writes the async proxy may meet: shared bytes, global
            // tensors (a TMA store over them), and another block's shared
            // bytes (distributed shared memory), counted at the bytes they land in.
            // Not tensor memory: tcgen05's own fences order it (lower-tensor-memory, lower-gemms).
            bool fenceable = a.buffer->scope != ir::MemScope::TMem && (!range.space || a.buffer->scope == ir::MemScope::Global || a.buffer->remoteOf);
            Range target = range;
            if (a.buffer->remoteOf) {
                target = rangeOf(*a.buffer->remoteOf, nullptr);
                target.buffer = a.buffer;   // the view: fenced with the fence of every state space
                target.span = range.span;
            }
            if (a.proxy == ir::Proxy::Generic && fenceable) addUnique(a.asynchronous ? st.inFlight : st.unfenced, target);
        }
        if (a.reads()) {
            Range r = range;
            r.publishedBy = a.completesOn;
            addUnique(st.reads, r);
        }
    }
}

// The memory accesses of `s` itself (a loop's bounds, a branch's condition).
// With `lets`, the values of the variables in scope there, global accesses
// of each thread's own elements are recognised (Range::ownedApart).
State ownAccessesOf(const ir::Stmt &s, const LetValues *lets = nullptr) {
    State st;
    addRanges(st, s, ir::ownEffects(s), -1, lets);
    return st;
}

// The memory accesses of `s` and every statement inside it, as ranges; those
// of a ws(...) region are marked as its role's.
State accessesOf(const ir::Stmt &s, const LetValues *lets = nullptr) {
    const ir::WarpSpecialize *w = ir::as<ir::WarpSpecialize>(s);
    int64_t role = w ? w->warps.front() : -1;
    State st;
    ir::forEachEffect(s, [&](const ir::Stmt &x, const ir::Effects &fx) { addRanges(st, x, fx, role, lets); });
    return st;
}

// Shared bytes and global tensors the async proxy accesses anywhere in the kernel.
std::vector<Range> asyncBytes(const ir::Stmt &body) {
    std::vector<Range> out;
    ir::forEachEffect(body, [&](const ir::Stmt &s, const ir::Effects &fx) {
        for (const ir::Access &a : fx.accesses) {
            if (a.proxy != ir::Proxy::Async || !isMemory(*a.buffer) || a.buffer->remoteOf) continue;
            Range r = rangeOf(*a.buffer, nullptr);
            r.span = a.span;
            r.by = asyncAccessor(s);
            out.push_back(r);
        }
    });
    return out;
}

// Why a barrier is needed: a later access and the earlier one it conflicts with.
struct Conflict {
    enum Kind { ReadAfterWrite, WriteAfterRead, WriteAfterWrite, AsyncAfterGeneric } kind = ReadAfterWrite;
    Range earlier, later;
};

std::string describe(const Conflict &c) {
    const Range &e = c.earlier, &l = c.later;
    if (e.phases || l.phases)
        return "mbarrier '" + e.buffer->name + "' is used at " + e.span.lineColumn() +
               " by a ws(...) role before the block meets here and by a role after it: the barrier-protocol check took the meeting "
               "as given (a role could otherwise complete a phase before another role's wait for the phase before)";
    std::string name = "'" + l.buffer->name + "'";
    if (l.buffer->scope == ir::MemScope::Global) name += " (global memory)";
    // Buffers whose lifetimes do not overlap may share bytes (plan-shared-memory).
    std::string before = e.buffer == l.buffer ? name : name + " shares bytes with '" + e.buffer->name + "', which";
    switch (c.kind) {
    case Conflict::ReadAfterWrite: return before + " is written at " + e.span.lineColumn() + "; it is read here by other threads";
    case Conflict::WriteAfterRead: return before + " is read at " + e.span.lineColumn() + "; it is written here by other threads";
    case Conflict::WriteAfterWrite: return before + " is written at " + e.span.lineColumn() + "; it is written here by other threads";
    case Conflict::AsyncAfterGeneric:
        return before + " is written at " + e.span.lineColumn() + " through the generic proxy; it is accessed here by " +
               (l.by ? std::string(l.by) + " (the async proxy)" : "the async proxy");
    }
    return name;
}

// Why a fence: a generic write and an async-proxy access of its bytes.
std::string describeFence(const Conflict &c) {
    const ir::BufferNode &b = *c.earlier.buffer;
    std::string name = b.remoteOf ? "'" + b.remoteOf->name + "' of another block of the cluster" : "'" + b.name + "'";
    return name + " is written at " + c.earlier.span.lineColumn() + " through the generic proxy and accessed at " +
           c.later.span.lineColumn() + " by " + (c.later.by ? std::string(c.later.by) + " (the async proxy)" : "the async proxy");
}

class Inserter {
public:
    Inserter(std::vector<Range> asyncBytes, const ir::Stmt &body, int64_t threads, std::set<const ir::VarNode *> invariant, DiagnosticEngine *diags)
        : asyncBytes_(std::move(asyncBytes)), uniformity_(body), diags_(diags), blockSequences_(ir::blockSequences(body)) {
        lets_.threads = threads;
        lets_.invariant = std::move(invariant);
        lets_.loopRanges = loopRangesOf(body, threads);
        lets_.values = uniqueLetValues(body);
        // Named barriers already in the kernel (specialize-warps' pacing, the
        // program's sync_threads(id, n) in a role) keep theirs.
        ir::forEachStmt(body, [&](const ir::Stmt &s) {
            if (const ir::SyncThreads *b = ir::as<ir::SyncThreads>(s); b && b->barrierId > 0) idThreads_[b->barrierId] = b->threads;
            if (const ir::WarpSpecialize *w = ir::as<ir::WarpSpecialize>(s))
                ir::forEachStmt(w->body, [&](const ir::Stmt &x) {
                    if (const ir::SyncThreads *b = ir::as<ir::SyncThreads>(x); b && b->barrierId > 0) idFirstThread_[b->barrierId] = w->firstThread();
                });
        });
        // The waits a statement after them in program order may complete
        // another phase of (see paceWaiters).
        std::vector<const ir::BarrierWait *> waits;
        ir::forEachEffect(body, [&](const ir::Stmt &s, const ir::Effects &fx) {
            if (const ir::BarrierWait *w = ir::as<ir::BarrierWait>(s)) waits.push_back(w);
            std::set<const ir::BufferNode *> advanced;
            addAdvanced(fx, advanced);
            for (const ir::BarrierWait *w : waits)
                if (advanced.count(w->barrier.get())) waitsAdvancedLater_.insert(w);
        });
        // Roles run side by side: in one, a wait on a barrier that a role
        // advances may see it advance again whatever the program order.
        std::set<const ir::BufferNode *> advancedInRoles;
        std::vector<const ir::BarrierWait *> waitsInRoles;
        ir::forEachStmt(body, [&](const ir::Stmt &s) {
            if (!ir::as<ir::WarpSpecialize>(s)) return;
            ir::forEachEffect(s, [&](const ir::Stmt &x, const ir::Effects &fx) {
                if (const ir::BarrierWait *w = ir::as<ir::BarrierWait>(x)) waitsInRoles.push_back(w);
                addAdvanced(fx, advancedInRoles);
            });
        });
        for (const ir::BarrierWait *w : waitsInRoles)
            if (advancedInRoles.count(w->barrier.get())) waitsAdvancedLater_.insert(w);
        // Which barriers' phases can lead to which: a role (or the block's
        // own code) that waits on one and arrives on (or completes
        // transactions on) another. Loops make program order moot.
        std::set<const ir::StmtNode *> inRoles;
        auto chains = [&](const ir::Stmt &region, bool roles) {
            std::set<const ir::BufferNode *> waited, advanced;
            ir::forEachEffect(region, [&](const ir::Stmt &x, const ir::Effects &fx) {
                if (roles) inRoles.insert(x.get());
                else if (inRoles.count(x.get())) return;   // the block's own code: not its roles'
                if (const ir::BarrierWait *w = ir::as<ir::BarrierWait>(x)) waited.insert(w->barrier.get());
                addAdvanced(fx, advanced);
            });
            for (const ir::BufferNode *w : waited) barrierLeadsTo_[w].insert(advanced.begin(), advanced.end());
        };
        ir::forEachStmt(body, [&](const ir::Stmt &s) {
            if (ir::as<ir::WarpSpecialize>(s)) chains(s, true);
        });
        chains(body, false);
    }

    // The decisions behind the barriers and fences of the result, for --explain.
    std::vector<Decision> log;

    // Returns `s` with barriers inserted; `state` is updated to after `s`.
    ir::Stmt process(const ir::Stmt &s, State &state) {
        if (!s) return s;
        std::vector<ir::Stmt> out;
        if (const ir::Seq *seq = ir::as<ir::Seq>(s)) {
            const std::vector<ir::Stmt> &stmts = seq->stmts;
            // The block meets at the edges of a run of roles in its own
            // sequences (ir::blockSequences): roles' accesses on either side
            // conflict like any others.
            bool meets = blockSequences_.count(seq) > 0, inRun = false;
            for (size_t i = 0; i < stmts.size(); ++i) {
                bool roles = ir::as<ir::WarpSpecialize>(stmts[i]) != nullptr;
                if (meets && roles != inRun) ++segment_;
                inRun = roles;
                if (roles) {
                    size_t end = i;
                    while (end < stmts.size() && ir::as<ir::WarpSpecialize>(stmts[end])) ++end;
                    processRoles({stmts.begin() + static_cast<std::ptrdiff_t>(i), stmts.begin() + static_cast<std::ptrdiff_t>(end)}, state, out);
                    i = end - 1;
                    continue;
                }
                if (ir::Stmt y = processStmt(stmts[i], state, out)) out.push_back(y);
            }
            if (meets && inRun) ++segment_;
            return std::make_shared<ir::Seq>(std::move(out), s->span);
        }
        if (ir::as<ir::WarpSpecialize>(s)) {
            processRoles({s}, state, out);
            return ir::seq(std::move(out));
        }
        if (ir::Stmt y = processStmt(s, state, out)) out.push_back(y);
        return ir::seq(std::move(out));
    }

private:
    // A barrier of the current scope: the block, or inside ws(...) the role's named barrier.
    ir::Stmt barrierStmt(SourceRange span) const { return std::make_shared<ir::SyncThreads>(span, barrierId_, barrierThreads_); }
    std::string barrierName() const {
        if (barrierId_ == 0) return "__syncthreads()";
        if (barrierId_ < 0) return "__syncwarp() (the role is one warp)";
        return "bar.sync " + std::to_string(barrierId_) + ", " + std::to_string(barrierThreads_) + " (the role's named barrier)";
    }
    // The named barrier of a role: its first warp group's (WarpSpecialize::
    // namedBarrierId), unless an earlier role of another size took that id
    // (ws(0) then ws(0, 1), or chains of branches on the thread index), or
    // the role does not start at a warp group (warps 1-2 of a 96-thread
    // block): then a free id from 9 to 15, the same for every role of those
    // threads.
    int64_t roleBarrierId(const ir::WarpSpecialize &w) {
        int64_t id = w.namedBarrierId();
        if (id < 0) return id;
        auto key = std::make_pair(w.firstThread(), w.threads());
        if (auto it = roleIds_.find(key); it != roleIds_.end()) return it->second;
        auto usedBy = idFirstThread_.find(id);   // a program barrier of other threads
        if (auto used = idThreads_.find(id); id == 0 ||
            (used != idThreads_.end() && used->second != w.threads()) || (usedBy != idFirstThread_.end() && usedBy->second != w.firstThread())) {
            id = 0;
            for (int64_t free = 9; free <= 15 && !id; ++free)
                if (!idThreads_.count(free)) id = free;
            TILET_ASSERT(id, "more roles of different sizes than PTX has named barriers");
        }
        idThreads_[id] = w.threads();
        roleIds_[key] = id;
        return id;
    }
    bool probing() const { return !probes_.empty(); }
    bool recording() const { return !probing(); }

    // The first unfenced write the async proxy touches, and that async access.
    std::optional<Conflict> unfencedAsync(const State &state) const {
        for (const Range &w : state.unfenced)
            for (const Range &a : asyncBytes_)
                if (w.overlaps(a)) return Conflict{Conflict::AsyncAfterGeneric, w, a};
        return std::nullopt;
    }
    // Before a release point: the fence that makes this thread's generic
    // writes visible to the async proxy of whoever acquires it. Returns the
    // fence's name, or null when none was needed.
    const char *fenceBeforeRelease(State &state, SourceRange span, std::vector<ir::Stmt> &out, const char *before) {
        std::optional<Conflict> c = unfencedAsync(state);
        if (!c) return nullptr;
        // Global memory and other blocks' shared memory need the fence of every state space.
        bool global = false;
        for (const Range &w : state.unfenced)
            if ((w.buffer->scope == ir::MemScope::Global || w.buffer->remoteOf) && overlapsAny(w, asyncBytes_)) global = true;
        out.push_back(std::make_shared<ir::FenceProxyAsync>(span, global));
        state.fenced(global);
        const char *name = global ? "fence.proxy.async (every state space)" : "fence.proxy.async";
        if (before && recording()) {
            Decision d;
            d.where = span;
            d.op = "async-proxy fence";
            d.choice = std::string(name) + " before " + before;
            d.why = describeFence(*c);
            log.push_back(std::move(d));
        }
        return name;
    }
    void insertBarrier(State &state, SourceRange span, std::vector<ir::Stmt> &out, const Conflict &why, const std::string &placement = {}) {
        std::optional<Conflict> fence = unfencedAsync(state);
        const char *fenceName = nullptr;
        std::optional<Decision> d = placeBarrier(state, span, out, fenceName);
        if (!d) return;
        d->where = why.later.span;
        d->why = describe(why);
        if (!placement.empty()) d->details.push_back(placement);
        if (fence && why.kind != Conflict::AsyncAfterGeneric) d->details.push_back(std::string(fenceName) + " first: " + describeFence(*fence));
        log.push_back(std::move(*d));
    }
    // A barrier of the scope (after the fence pending writes need, whose
    // name goes to `fenceName`); while recording, its decision for the
    // caller to complete.
    std::optional<Decision> placeBarrier(State &state, SourceRange span, std::vector<ir::Stmt> &out, const char *&fenceName) {
        fenceName = fenceBeforeRelease(state, span, out, nullptr);
        out.push_back(barrierStmt(span));
        state.barrier();
        if (!recording()) return std::nullopt;
        Decision d;
        d.op = "barrier";
        d.choice = barrierName() + (fenceName ? std::string(" after ") + fenceName : "");
        return d;
    }

    // mbarrier.try_wait.parity tells only whether the phase of a parity has
    // completed since the barrier's current one began (PTX ISA, "mbarrier"):
    // a thread still inside a wait while the barrier completes two more
    // phases sees its parity come round again and waits for ever. Threads
    // that wait and then arrive themselves keep the phases from running
    // ahead of them; but when every thread of the scope waited and one of
    // them alone then arrives, issues a TMA load or commits tcgen05.mma (what
    // the lowering makes of a role's collective copy, gemm or
    // tcgen05_mma_arrive), that thread can run phases ahead of the others
    // (TileLang elects it with a warp shuffle, which holds the warp
    // together). A barrier of the scope right before it holds them together.
    // One thread per warp group arriving after its group's wgmma retired (an
    // Elect of each warp group, a wgmma consumer's release, see
    // State::wgmmaSinceWait) cannot run ahead of its group, and the barrier
    // waits for every group.
    void paceWaiters(const ir::Stmt &s, State &state, std::vector<ir::Stmt> &out) {
        const ir::Elect *elect = ir::as<ir::Elect>(s);
        if (!state.unpacedWait || (!ir::as<ir::IfThenElse>(s) && !elect) || !advancesAnMbarrier(s)) return;
        if (elect && elect->unit == ir::Elect::Unit::WarpGroup && state.wgmmaSinceWait == State::Wgmma::Retired) return;
        SourceRange wait = *state.unpacedWait;
        const char *fenceName = nullptr;
        std::optional<Decision> d = placeBarrier(state, here(s), out, fenceName);
        if (!d) return;
        d->where = here(s);
        d->why = std::string("every thread of the ") + (barrierId_ == 0 ? "block" : "role") + " waits on an mbarrier at " + wait.lineColumn() +
                 " and one of them alone then completes mbarrier phases here: without a barrier it could run two phases ahead of a "
                 "thread still in that wait, which would see the parity it waits for come round again and wait for ever "
                 "(PTX ISA, mbarrier.try_wait.parity)";
        log.push_back(std::move(*d));
    }
    // Whether `s` arrives on an mbarrier or issues what completes on one (TMA, tcgen05.commit).
    static bool advancesAnMbarrier(const ir::Stmt &s) {
        bool found = false;
        ir::forEachEffect(s, [&](const ir::Stmt &, const ir::Effects &fx) {
            std::set<const ir::BufferNode *> advanced;
            addAdvanced(fx, advanced);
            found = found || !advanced.empty();
        });
        return found;
    }
    // The mbarrier arrays effects `fx` arrive on or complete transactions on (TMA, tcgen05.commit).
    static void addAdvanced(const ir::Effects &fx, std::set<const ir::BufferNode *> &out) {
        for (const ir::SyncEffect &e : fx.syncs)
            if (e.kind == ir::SyncKind::MbarrierArrive || e.kind == ir::SyncKind::MbarrierExpectTx) out.insert(e.barrier);
        for (const ir::Access &a : fx.accesses)
            if (a.completesOn) out.insert(a.completesOn);
    }
    // The mbarrier arrays of its own block every thread of the scope arrives
    // on in `body` (arrivals outside control flow threads may take
    // differently; a uniform branch counts what both arms arrive on).
    std::set<const ir::BufferNode *> arrivedByEveryThread(const ir::Stmt &body) const {
        std::set<const ir::BufferNode *> out;
        if (!body) return out;
        if (const ir::BarrierArrive *a = ir::as<ir::BarrierArrive>(body)) {
            if (!a->remoteRank) out.insert(a->barrier.get());
            return out;
        }
        if (const ir::Seq *q = ir::as<ir::Seq>(body)) {
            for (const ir::Stmt &x : q->stmts) {
                std::set<const ir::BufferNode *> more = arrivedByEveryThread(x);
                out.insert(more.begin(), more.end());
            }
            return out;
        }
        if (const ir::LetStmt *l = ir::as<ir::LetStmt>(body)) return arrivedByEveryThread(l->body);
        if (const ir::Allocate *a = ir::as<ir::Allocate>(body)) return arrivedByEveryThread(a->body);
        if (const ir::IfThenElse *i = ir::as<ir::IfThenElse>(body); i && !uniformity_.threadDependent(i->cond)) {
            std::set<const ir::BufferNode *> other = arrivedByEveryThread(i->elseBody);
            for (const ir::BufferNode *b : arrivedByEveryThread(i->thenBody))
                if (other.count(b)) out.insert(b);
        }
        return out;
    }
    // Whether a phase the one-thread guards of the scope complete can lead
    // to a phase of `waited` without every thread of the scope: through the
    // kernel's chains of waits and arrivals (barrierLeadsTo_), stopping at
    // the barriers every thread of the scope arrives on (their phases wait
    // for a thread that has not passed its waits yet). TileLang's
    // FlashAttention for Blackwell: the MMA warp's commit to bmm1_full lets
    // the softmax warp group complete a phase of bmm1_empty, which the MMA
    // warp waits on, while one of its lanes has not reached that wait; its
    // arrivals on dma1_empty hold nothing of that back.
    bool guardsReach(const ir::BufferNode *waited) const {
        std::set<const ir::BufferNode *> seen;
        std::vector<const ir::BufferNode *> todo(advancedByOneThread_.begin(), advancedByOneThread_.end());
        while (!todo.empty()) {
            const ir::BufferNode *b = todo.back();
            todo.pop_back();
            if (b == waited) return true;
            if (arrivedByScope_.count(b) || !seen.insert(b).second) continue;
            auto next = barrierLeadsTo_.find(b);
            if (next != barrierLeadsTo_.end()) todo.insert(todo.end(), next->second.begin(), next->second.end());
        }
        return false;
    }
    // The mbarrier arrays that code in `body` some threads of the scope run
    // and others skip (the one-thread guards) arrives on or completes
    // transactions on: a wait on one of those is not held back by the
    // scope's own arrivals.
    std::set<const ir::BufferNode *> advancedByOneThread(const ir::Stmt &body) const {
        std::set<const ir::BufferNode *> out;
        ir::forEachStmt(body, [&](const ir::Stmt &s) {
            const ir::IfThenElse *i = ir::as<ir::IfThenElse>(s);
            if (!ir::as<ir::Elect>(s) && (!i || !uniformity_.threadDependent(i->cond))) return;
            ir::forEachEffect(s, [&](const ir::Stmt &, const ir::Effects &fx) { addAdvanced(fx, out); });
        });
        return out;
    }
    // Entering the body of a loop (or of a role): whether its threads all
    // arrive in each pass, and which barriers its one-thread guards advance.
    struct PacingScope {
        PacingScope(Inserter &in, const ir::Stmt &body, bool arrivalsPace)
            : in_(in), outerPaced_(in.pacedByArrivals_), outerAdvanced_(std::move(in.advancedByOneThread_)),
              outerArrived_(std::move(in.arrivedByScope_)) {
            in.arrivedByScope_ = in.arrivedByEveryThread(body);
            in.pacedByArrivals_ = arrivalsPace && !in.arrivedByScope_.empty();
            in.advancedByOneThread_ = in.advancedByOneThread(body);
        }
        ~PacingScope() {
            in_.pacedByArrivals_ = outerPaced_;
            in_.advancedByOneThread_ = std::move(outerAdvanced_);
            in_.arrivedByScope_ = std::move(outerArrived_);
        }
        Inserter &in_;
        bool outerPaced_;
        std::set<const ir::BufferNode *> outerAdvanced_, outerArrived_;
    };

    // `unit`'s accesses join the state, numbered in order.
    void admit(State &state, State unit) {
        for (std::vector<Range> *list : {&unit.reads, &unit.writes, &unit.unfenced, &unit.inFlight, &unit.landing})
            for (Range &r : *list) r.serial = ++serial_;
        state.add(unit);
    }

    // Whether `unit` must be separated from `state` by a barrier (and a
    // fence); the first conflict is kept in conflict_. A conflict with a range
    // admitted before an active probe began is a hit for that probe.
    bool hazard(const State &state, const State &unit) {
        bool found = false;
        auto conflict = [&](const Range &r, const std::vector<Range> &set, Conflict::Kind kind) {
            for (const Range &x : set) {
                // Accesses of ws(...) roles between two meetings of the block
                // are ordered by the program's mbarriers (check-barriers
                // proves it), never by block barriers.
                bool acrossMeeting = r.role >= 0 && x.role >= 0 && r.segment != x.segment;
                if (r.role >= 0 && x.role >= 0 && !acrossMeeting) continue;
                if ((r.phases || x.phases) && !acrossMeeting) continue;
                if (r.singleIssuer && x.singleIssuer && !x.waitedBySome) continue;
                if (!r.overlaps(x)) continue;
                if (!found) conflict_ = Conflict{kind, x, r};
                found = true;
                for (Probe &p : probes_) {
                    if (x.serial >= p.start || p.hit) continue;
                    p.hit = true;
                    p.conflict = Conflict{kind, x, r};
                }
            }
        };
        for (const Range &r : unit.reads) conflict(r, state.writes, Conflict::ReadAfterWrite);
        for (const Range &w : unit.writes) {
            conflict(w, state.writes, Conflict::WriteAfterWrite);
            conflict(w, state.reads, Conflict::WriteAfterRead);
        }
        // A cp.async write is issued after what came before it. (Until its
        // group is retired, its bytes are the program's to leave alone: an
        // access of them before the wait_group would race, barrier or not.)
        for (const Range &w : unit.landing) {
            conflict(w, state.writes, Conflict::WriteAfterWrite);
            conflict(w, state.reads, Conflict::WriteAfterRead);
        }
        // The async proxy reading or overwriting bytes with unfenced generic writes.
        for (const std::vector<Range> *list : {&unit.reads, &unit.writes}) {
            for (const Range &r : *list) {
                if (r.proxy == ir::Proxy::Async) conflict(r, state.unfenced, Conflict::AsyncAfterGeneric);
            }
        }
        return found;
    }

    // Whether walking `s` from `state` meets a hazard with a range of
    // `state` before a barrier separates them (nothing is inserted or
    // recorded); the conflict, if so.
    std::optional<Conflict> probe(const ir::Stmt &s, State state) {
        probes_.push_back({serial_ + 1, false, {}});
        process(s, state);
        Probe p = probes_.back();
        probes_.pop_back();
        if (!p.hit) return std::nullopt;
        return p.conflict;
    }

    static bool usesMbarriers(const ir::Stmt &body) {
        bool uses = false;
        ir::forEachEffect(body, [&](const ir::Stmt &, const ir::Effects &fx) {
            for (const ir::SyncEffect &e : fx.syncs)
                uses = uses || e.kind == ir::SyncKind::MbarrierWait || e.kind == ir::SyncKind::MbarrierArrive || e.kind == ir::SyncKind::MbarrierExpectTx;
        });
        return uses;
    }

    void processRoles(const std::vector<ir::Stmt> &regions, State &state, std::vector<ir::Stmt> &out) {
        State all;
        for (const ir::Stmt &r : regions) {
            all.add(located(accessesOf(r, &lets_)));
            // The mbarrier phases the role advances or waits for.
            int64_t role = ir::as<ir::WarpSpecialize>(r)->warps.front();
            ir::forEachEffect(r, [&](const ir::Stmt &x, const ir::Effects &fx) {
                std::set<const ir::BufferNode *> used;
                addAdvanced(fx, used);
                for (const ir::SyncEffect &e : fx.syncs)
                    if (e.kind == ir::SyncKind::MbarrierWait) used.insert(e.barrier);
                for (const ir::BufferNode *b : used) {
                    Range p;
                    p.space = b;
                    p.hi = 1;
                    p.buffer = b;
                    p.role = role;
                    p.phases = true;
                    p.span = x->span.valid() ? x->span : r->span;
                    addUnique(all.writes, p);
                }
            });
        }
        for (std::vector<Range> *list : {&all.reads, &all.writes, &all.unfenced, &all.inFlight, &all.landing})
            for (Range &r : *list) r.segment = segment_;
        if (hazard(state, all)) insertBarrier(state, regions.front()->span, out, conflict_, "placed before the ws(...) roles at " + regions.front()->span.lineColumn());
        all.unfenced.clear();
        all.inFlight.clear();
        all.landing.clear();
        for (const ir::Stmt &r : regions) {
            const ir::WarpSpecialize &w = *ir::as<ir::WarpSpecialize>(r);
            int64_t outerId = barrierId_, outerThreads = barrierThreads_;
            barrierId_ = roleBarrierId(w);
            barrierThreads_ = w.threads();
            State inside;
            Nested inRole(nested_);
            uniformity_.enterRole(w);
            // A role inside a loop runs its body once per iteration of it.
            PacingScope pacing(*this, w.body, loops_ > 0);
            size_t logged = log.size();
            ir::Stmt body = process(w.body, inside);
            // ... with nothing of the block's between two runs: a hazard
            // between one run's accesses and the next's (in the next
            // iteration of any loop around it) gets the role's barrier at
            // the start of its body. A role that waits on or arrives at
            // mbarriers is ordered across runs by that protocol, which
            // check-barriers verified.
            if (!loopVars_.empty() && !probing() && !usesMbarriers(w.body)) {
                for (const ir::VarRef &v : loopVars_) {
                    State wrap = v ? inside.shifted(v) : inside.untagged();
                    std::optional<Conflict> c = probe(w.body, wrap);
                    if (!c) continue;
                    log.resize(logged);   // the body is walked again from the new barrier
                    std::vector<ir::Stmt> head;
                    insertBarrier(wrap, w.span, head, *c,
                                  "placed at the start of the role's body: the role runs once per iteration of the loop around it, and the "
                                  "hazard is between two runs");
                    head.push_back(process(w.body, wrap));
                    body = ir::seq(std::move(head));
                    inside = wrap;
                    break;
                }
            }
            uniformity_.leaveRole();
            barrierId_ = outerId;
            barrierThreads_ = outerThreads;
            out.push_back(std::make_shared<ir::WarpSpecialize>(w.warps, body, w.span));
            // What a role leaves unfenced, the next release point of the block fences.
            addUnique(all.unfenced, inside.unfenced);
            addUnique(all.inFlight, inside.inFlight);
            addUnique(all.landing, inside.landing);
        }
        admit(state, all);
    }

    // One element of a sequence; a barrier it needs is appended to `out` first.
    ir::Stmt processStmt(const ir::Stmt &s, State &state, std::vector<ir::Stmt> &out) {
        // Statements the lowering made without a location of their own are
        // explained at the nearest statement around them that has one.
        SourceRange outer = context_;
        if (s->span.valid()) context_ = s->span;
        startCluster(s, state, out);
        ir::Stmt result = processStmtIn(s, state, out);
        context_ = outer;
        return result;
    }

    // Distributed shared memory: a block may access another block's shared
    // memory only once that block has started, which a cluster barrier after
    // the kernel's start guarantees (CUDA C++ Programming Guide, "Distributed
    // Shared Memory"). Before the first statement of the kernel's top level
    // that reaches into another block (directly or inside it), unless a
    // cluster barrier came first. Only the top level: every thread of every
    // block of the cluster must reach a cluster barrier.
    void startCluster(const ir::Stmt &s, State &state, std::vector<ir::Stmt> &out) {
        if (clusterStarted_ || nested_ > 0) return;
        if (ir::as<ir::ClusterSync>(s)) {
            clusterStarted_ = true;
            return;
        }
        if (ir::as<ir::Seq>(s) || ir::as<ir::LetStmt>(s) || ir::as<ir::Allocate>(s)) return;   // walked into
        std::optional<SourceRange> remote;
        ir::forEachEffect(s, [&](const ir::Stmt &, const ir::Effects &fx) {
            for (const ir::Access &a : fx.accesses)
                if (!remote && a.buffer->remoteOf) remote = a.span.valid() ? a.span : here(s);
        });
        if (!remote) return;
        // It orders the block's own accesses too (release and acquire), so it
        // stands for a block barrier here.
        fenceBeforeRelease(state, here(s), out, "the cluster barrier");
        out.push_back(std::make_shared<ir::ClusterSync>(here(s)));
        state.barrier();
        clusterStarted_ = true;
        if (!recording()) return;
        Decision d;
        d.where = *remote;
        d.op = "cluster barrier";
        d.choice = "barrier.cluster.arrive + wait before the first access of another block's shared memory";
        d.why = "a block may access distributed shared memory only after the block that owns it has started: a cluster barrier since the kernel "
                "began guarantees it (CUDA C++ Programming Guide)";
        log.push_back(std::move(d));
    }
    State located(State st) const {
        for (std::vector<Range> *list : {&st.reads, &st.writes, &st.unfenced, &st.inFlight, &st.landing})
            for (Range &r : *list)
                if (!r.span.valid()) r.span = context_;
        return st;
    }
    SourceRange here(const ir::Stmt &s) const { return s->span.valid() ? s->span : context_; }

    ir::Stmt processStmtIn(const ir::Stmt &s, State &state, std::vector<ir::Stmt> &out) {
        if (const ir::SyncThreads *b = ir::as<ir::SyncThreads>(s)) {
            fenceBeforeRelease(state, here(s), out, "the barrier");
            state.barrier();
            // An earlier pass's block barrier (a pipelined loop's, say) inside
            // a role is met by the role's threads alone: the role's barrier.
            if (b->barrierId == 0 && barrierId_ != 0) return barrierStmt(s->span);
            return s;
        }
        if (ir::as<ir::ClusterSync>(s)) {
            // barrier.cluster.arrive (release) and wait (acquire) by every thread of the cluster.
            fenceBeforeRelease(state, here(s), out, "the cluster barrier");
            state.barrier();
            return s;
        }
        if (ir::as<ir::BarrierArrive>(s)) {
            State unit = located(ownAccessesOf(s, &lets_));
            if (hazard(state, unit)) insertBarrier(state, here(s), out, conflict_);
            fenceBeforeRelease(state, here(s), out, "the mbarrier arrival");
            admit(state, unit);
            return s;
        }
        if (const ir::FenceProxyAsync *f = ir::as<ir::FenceProxyAsync>(s)) {
            state.fenced(f->global);
            return s;
        }
        if (const ir::CpAsyncWait *w = ir::as<ir::CpAsyncWait>(s)) {
            state.landed(w->pending, serial_);
            return s;
        }
        if (ir::as<ir::CpAsyncCommit>(s)) {
            state.committed();
            return s;
        }
        if (const ir::BarrierWait *w = ir::as<ir::BarrierWait>(s)) {
            state.published(w->barrier.get());
            bool paced = pacedByArrivals_ && !guardsReach(w->barrier.get());
            if (!paced && (loops_ > 0 || waitsAdvancedLater_.count(w))) {
                state.unpacedWait = here(s);
                state.wgmmaSinceWait = State::Wgmma::None;
            }
            return s;
        }
        if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
            State unit = located(ownAccessesOf(s, &lets_));
            if (hazard(state, unit)) insertBarrier(state, here(s), out, conflict_);
            admit(state, unit);
            uniformity_.bind(l->var.get(), uniformity_.threadDependent(l->value));
            lets_.values[l->var.get()] = l->value;
            return std::make_shared<ir::LetStmt>(l->var, l->value, process(l->body, state), l->span);
        }
        if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) return std::make_shared<ir::Allocate>(a->buffer, process(a->body, state), a->span);
        if (ir::as<ir::Seq>(s) || ir::as<ir::WarpSpecialize>(s)) return process(s, state);
        // A break or continue: what the walk holds here reaches the loop's
        // exit, or its next iteration, too (processIterations joins them).
        // The state walks on unchanged into what follows: more accesses
        // than that path makes, never fewer.
        if (const ir::Jump *j = ir::as<ir::Jump>(s)) {
            if (recording() && !jumps_.empty()) {
                JumpStates &loop = jumps_.back();
                // A continue of a while loop goes to its condition, past the
                // barrier the end of the body may hold for it.
                if (j->jump == ir::JumpKind::Continue && loop.condition && hazard(state, *loop.condition))
                    insertBarrier(state, here(s), out, conflict_, "placed before the continue: the loop's condition is read next");
                (j->jump == ir::JumpKind::Break ? loop.breaks : loop.continues).add(state);
            }
            return s;
        }
        // Control flow every thread of the scope follows alike is walked into.
        if (const ir::For *f = ir::as<ir::For>(s); f && !f->threadLocal && !uniformity_.loopRunsApart(s)) return processLoop(s, *f, state, out);
        if (const ir::IfThenElse *i = ir::as<ir::IfThenElse>(s); i && !uniformity_.threadDependent(i->cond)) return processBranch(s, *i, state, out);
        if (const ir::While *w = ir::as<ir::While>(s); w && !uniformity_.loopRunsApart(s)) return processWhile(s, *w, state, out);
        checkLoopLeftApart(s);
        return processUnit(s, state, out);
    }

    // A statement the walk does not descend into: an instruction, a loop over
    // one thread's own elements, or control flow threads may follow
    // differently (a barrier inside would not be reached by every thread).
    // The lowering puts only one thread's own work there -- guards, replicas
    // writing once, the one thread that issues TMA -- and the language has no
    // thread-dependent condition outside parallel loops (a `var` every thread
    // assigns alike is uniform, see Uniformity); so its accesses are taken
    // all at once.
    ir::Stmt processUnit(const ir::Stmt &s, State &state, std::vector<ir::Stmt> &out) {
        checkDivergentBranch(s);
        State unit = located(accessesOf(s, &lets_));
        if (hazard(state, unit)) insertBarrier(state, here(s), out, conflict_);
        paceWaiters(s, state, out);
        admit(state, unit);
        if (const ir::WgmmaSync *w = ir::as<ir::WgmmaSync>(s); w && state.unpacedWait) {
            if (w->sync == ir::WgmmaSyncKind::Commit && state.wgmmaSinceWait == State::Wgmma::None) state.wgmmaSinceWait = State::Wgmma::Committed;
            if (w->sync == ir::WgmmaSyncKind::Wait && state.wgmmaSinceWait == State::Wgmma::Committed) state.wgmmaSinceWait = State::Wgmma::Retired;
        }
        // Waits some threads make in here: what completes on their barriers is
        // known to those threads, which a barrier can pass on.
        ir::forEachStmt(s, [&](const ir::Stmt &x) {
            if (const ir::BarrierWait *w = ir::as<ir::BarrierWait>(x)) state.waitedBySome(w->barrier.get());
        });
        return s;
    }

    // A branch some threads may take and others not -- its condition reads a
    // `var` each thread assigns on its own -- cannot hold a block barrier.
    // When it holds work spread over the block's threads (a tile operation
    // or parallel loop) that exchanges data through memory, no placement of
    // barriers is correct: the program is rejected (TileLang would put
    // __syncthreads() inside, which threads that skip the branch never reach).
    void checkDivergentBranch(const ir::Stmt &s) {
        const ir::IfThenElse *branch = ir::as<ir::IfThenElse>(s);
        if (!branch || !diags_ || !checkedBranches_.insert(s.get()).second) return;
        const ir::BufferNode *reg = uniformity_.onlyPerThreadRegister(branch->cond);
        if (!reg) return;
        std::vector<Probe> savedProbes;
        std::swap(savedProbes, probes_);   // a check of its own: no probe's hit
        Conflict savedConflict = conflict_;
        std::optional<Conflict> inside;
        for (const ir::Stmt &arm : {branch->thenBody, branch->elseBody}) {
            if (!arm || !distributesOverThreads(arm)) continue;
            State seen;
            forEachPart(arm, [&](const State &unit) {
                if (!inside && hazard(seen, unit)) inside = conflict_;
                seen.add(unit);
            });
        }
        std::swap(savedProbes, probes_);
        conflict_ = savedConflict;
        if (!inside) return;
        Diagnostic d{Severity::Error, inside->later.span.valid() ? inside->later.span : here(s),
                     "threads may take the branch at " + here(s).lineColumn() + " differently (its condition reads '" + reg->name +
                         "', which each thread assigns on its own), but inside it " + describe(*inside) +
                         ": no block barrier can order them",
                     {}, {}};
        d.note(here(s), "the branch");
        d.note({}, "compute the condition from values every thread shares (block indices, parameters, memory), "
                   "or assign '" + reg->name + "' alike in every thread");
        diags_->report(std::move(d));
    }

    // A loop some threads leave (or skip iterations of) apart from the
    // others cannot hold a block barrier, so it cannot hold work spread over
    // the block's threads that exchanges data through memory.
    void checkLoopLeftApart(const ir::Stmt &s) {
        if (!diags_ || !uniformity_.jumpsApart(s.get()) || !checkedBranches_.insert(s.get()).second) return;
        const ir::For *f = ir::as<ir::For>(s);
        const ir::Stmt &body = f ? f->body : ir::as<ir::While>(s)->body;
        if (!distributesOverThreads(body)) return;
        SourceRange jump;
        ir::forEachStmt(body, [&](const ir::Stmt &x) {
            if (ir::as<ir::Jump>(x) && !jump.valid()) jump = x->span;
        });
        Diagnostic d{Severity::Error, jump.valid() ? jump : here(s),
                     "some threads may leave the loop at " + here(s).lineColumn() +
                         " without the others (this jump is in a role, or depends on a value that differs between threads), but the loop "
                         "spreads work over the block's threads, which no block barrier can then order",
                     {}, {}};
        d.note(here(s), "the loop");
        d.note({}, "take the jump in every thread of the loop, on values they all share (block indices, parameters, memory, a var every "
                   "thread assigns alike), or put the loop inside the role");
        diags_->report(std::move(d));
    }

    // Whether `s` spreads work over the block's threads (binds a thread index).
    static bool distributesOverThreads(const ir::Stmt &s) {
        bool found = false;
        ir::forEachStmt(s, [&](const ir::Stmt &x) {
            const ir::LetStmt *l = ir::as<ir::LetStmt>(x);
            if (!l || found) return;
            ir::forEachExpr(l->value, [&](const ir::Expr &e) {
                if (const ir::SpecialReg *r = ir::as<ir::SpecialReg>(e); r && r->special == ir::SpecialKind::ThreadIdx) found = true;
            });
        });
        return found;
    }

    // The accesses of `s` in program order, one statement of its sequences at a time.
    void forEachPart(const ir::Stmt &s, const std::function<void(const State &)> &f) {
        if (!s) return;
        if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
            for (const ir::Stmt &x : q->stmts) forEachPart(x, f);
        } else if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
            f(located(ownAccessesOf(s, &lets_)));
            lets_.values[l->var.get()] = l->value;
            forEachPart(l->body, f);
        } else if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) {
            forEachPart(a->body, f);
        } else {
            f(located(accessesOf(s, &lets_)));
        }
    }

    ir::Stmt processLoop(const ir::Stmt &self, const ir::For &f, State &state, std::vector<ir::Stmt> &out) {
        State bounds = located(ownAccessesOf(self, &lets_));
        if (hazard(state, bounds)) insertBarrier(state, here(self), out, conflict_);
        admit(state, bounds);
        uniformity_.bind(f.var.get(), false);
        auto walk = [&](State &st, std::vector<ir::Stmt> head) {
            head.push_back(process(f.body, st));
            return ir::seq(std::move(head));
        };
        PacingScope pacing(*this, f.body, true);
        std::optional<int64_t> trips = ir::constInt(f.extent);
        ++loops_;
        InLoop inLoopVar(loopVars_, f.var);
        ir::Stmt body = processIterations(self, f.body, state, out, walk, [&](const State &st) { return st.shifted(f.var); }, trips && *trips > 0);
        --loops_;
        return body == self ? self : ir::rebuildFor(f, f.min, f.extent, body);
    }

    // A while loop every thread of the scope runs alike: a loop whose
    // condition is read before each iteration, which may run zero times.
    // No version tags carry over between its iterations (it has no
    // variable to shift them by).
    ir::Stmt processWhile(const ir::Stmt &self, const ir::While &w, State &state, std::vector<ir::Stmt> &out) {
        State cond = located(ownAccessesOf(self, &lets_));
        if (hazard(state, cond)) insertBarrier(state, here(self), out, conflict_);
        admit(state, cond);
        // The body, then the condition read again before the next iteration:
        // a hazard with it gets a barrier at the end of the body.
        auto walk = [&](State &st, std::vector<ir::Stmt> head) {
            head.push_back(process(w.body, st));
            st.add(jumps_.back().continues);   // a continue reads the condition too
            if (hazard(st, cond)) insertBarrier(st, here(self), head, conflict_, "placed at the end of the loop body: the condition is read before the next iteration");
            admit(st, cond);
            return ir::seq(std::move(head));
        };
        PacingScope pacing(*this, w.body, true);
        ++loops_;
        InLoop inLoopVar(loopVars_, nullptr);   // no variable: any iteration
        whileCondition_ = cond;
        ir::Stmt body = processIterations(self, w.body, state, out, walk, [](const State &st) { return st.untagged(); }, false);
        --loops_;
        return body == self ? self : std::make_shared<ir::While>(w.cond, body, w.span);
    }

    // The iterations of a loop (its bounds or condition already admitted):
    // `walk` walks one iteration from a state, after the statements given;
    // `next` is the state the next iteration starts from. Returns the new
    // body, or `self` while probing.
    ir::Stmt processIterations(const ir::Stmt &self, const ir::Stmt &body, State &state, std::vector<ir::Stmt> &out,
                               const std::function<ir::Stmt(State &, std::vector<ir::Stmt>)> &walk,
                               const std::function<State(const State &)> &next, bool runsAtLeastOnce) {
        // The loop's own breaks and continues, gathered by each walk of its body.
        jumps_.emplace_back();
        jumps_.back().condition = std::exchange(whileCondition_, std::nullopt);
        struct PopJumps {
            std::vector<JumpStates> &jumps;
            ~PopJumps() { jumps.pop_back(); }
        } popJumps{jumps_};
        auto walkOnce = [&](State &st, std::vector<ir::Stmt> head) {
            jumps_.back().breaks = {};
            jumps_.back().continues = {};
            ir::Stmt walked = walk(st, std::move(head));
            st.add(jumps_.back().continues);   // a continue ends the iteration too
            return walked;
        };
        if (probing()) {
            // A probe asks only whether a range from before meets a hazard:
            // the first iteration shows it, and the loop may run zero times.
            State entry = state;
            Nested inLoop(nested_);
            process(body, state);
            state.add(entry);
            return self;
        }
        // A hazard with what came before the loop is resolved once, before
        // it, rather than in every iteration.
        if (std::optional<Conflict> c = probe(body, state)) {
            // A loop a statement was lowered into (a gemm's k-steps) has that statement's place.
            const bool own = here(self).lineColumn() == c->later.span.lineColumn();
            insertBarrier(state, here(self), out, *c,
                          own ? "placed before the loop that statement is lowered into, once, rather than in each of its iterations"
                              : "placed before the loop at " + here(self).lineColumn() + ", once, rather than in every iteration");
        }
        State entry = state;
        size_t logged = log.size();
        Nested inLoop(nested_);
        ir::Stmt walked = walkOnce(state, {});
        // Entered again with the state its end leaves behind?
        State wrap = next(state);
        if (wrap.unpacedWait && !entry.unpacedWait) {
            // A wait late in one iteration paces what the next one issues first.
            log.resize(logged);
            state = entry;
            state.unpacedWait = wrap.unpacedWait;
            state.wgmmaSinceWait = wrap.wgmmaSinceWait;
            walked = walkOnce(state, {});
            wrap = next(state);
        }
        if (std::optional<Conflict> c = probe(body, wrap)) {
            log.resize(logged);   // the body is walked again from the new barrier
            std::vector<ir::Stmt> head;
            State fresh = wrap;
            insertBarrier(fresh, here(self), head, *c, "placed at the start of the loop body: the hazard is between iterations");
            walked = walkOnce(fresh, std::move(head));
            state = fresh;
        }
        std::optional<SourceRange> afterLast = state.unpacedWait;
        State::Wgmma wgmmaAfterLast = state.wgmmaSinceWait;
        state.add(entry);   // the loop may run zero times
        const State &breaks = jumps_.back().breaks;
        state.add(breaks);
        if (runsAtLeastOnce) {
            state.unpacedWait = afterLast;
            state.wgmmaSinceWait = wgmmaAfterLast;
            if (breaks.unpacedWait) {
                // A break leaves the loop with the wait it made unpaced too.
                State pacing;
                pacing.unpacedWait = breaks.unpacedWait;
                pacing.wgmmaSinceWait = breaks.wgmmaSinceWait;
                state.add(pacing);
            }
        }
        return walked;
    }

    // A branch every thread of the scope takes the same way: barriers may go inside.
    ir::Stmt processBranch(const ir::Stmt &self, const ir::IfThenElse &i, State &state, std::vector<ir::Stmt> &out) {
        State cond = located(ownAccessesOf(self, &lets_));
        if (hazard(state, cond)) insertBarrier(state, here(self), out, conflict_);
        // A hazard with what came before the branch is resolved once, before
        // it (a probe needs only to walk both arms). Not one with the
        // condition's own reads: they happen after any barrier before the
        // branch, so that barrier goes inside the arms.
        std::optional<Conflict> c;
        if (!probing()) c = probe(i.thenBody, state);
        if (!probing() && !c && i.elseBody) c = probe(i.elseBody, state);
        if (c) insertBarrier(state, here(self), out, *c, "placed before the branch at " + i.span.lineColumn() + ", once for both of its arms");
        admit(state, cond);
        State elseState = state;
        Nested inBranch(nested_);
        ir::Stmt thenBody = process(i.thenBody, state);
        ir::Stmt elseBody = i.elseBody ? process(i.elseBody, elseState) : nullptr;
        state.add(elseState);
        return std::make_shared<ir::IfThenElse>(i.cond, thenBody, elseBody, i.span);
    }

    // The states at the breaks and continues of each loop being walked, innermost last.
    struct JumpStates {
        State breaks, continues;
        std::optional<State> condition;   // a while loop's: what its condition reads
    };
    std::vector<JumpStates> jumps_;
    std::optional<State> whileCondition_;   // handed to the next processIterations
    std::vector<Range> asyncBytes_;
    ir::Uniformity uniformity_;
    LetValues lets_;         // every let met so far (variables are unique): indices in terms of threadIdx.x
    DiagnosticEngine *diags_;
    std::set<const ir::StmtNode *> checkedBranches_;   // divergent branches checked once (loops and probes walk them again)
    int64_t barrierId_ = 0, barrierThreads_ = 0;
    std::map<std::pair<int64_t, int64_t>, int64_t> roleIds_;   // (first thread, threads) of a role -> its named barrier
    std::map<int64_t, int64_t> idThreads_;                     // named barrier -> the threads it joins
    std::map<int64_t, int64_t> idFirstThread_;                 // the program's named barrier -> the first thread of its role
    int64_t serial_ = 0;     // ranges admitted so far
    Conflict conflict_;      // the first conflict hazard() found
    SourceRange context_;    // the innermost statement with a location being walked
    int nested_ = 0;         // loops, branches and roles around the statement being walked
    std::vector<ir::VarRef> loopVars_;   // the loops around it, innermost last (null: a while loop)
    struct InLoop {
        std::vector<ir::VarRef> &vars;
        InLoop(std::vector<ir::VarRef> &v, ir::VarRef var) : vars(v) { vars.push_back(std::move(var)); }
        ~InLoop() { vars.pop_back(); }
    };
    bool clusterStarted_ = false;   // a cluster barrier has run since the kernel began
    // Every thread of the scope arrives on an mbarrier in each iteration of
    // the innermost loop being walked: its waits cannot fall phases behind
    // (see paceWaiters), as the phases wait for their arrivals.
    bool pacedByArrivals_ = false;
    std::set<const ir::BufferNode *> advancedByOneThread_;   // of that loop's body (see advancedByOneThread)
    int loops_ = 0;   // loops around the statement being walked: a wait in one may see its barrier again
    std::set<const ir::Seq *> blockSequences_;   // where the block meets at the edges of a run of roles
    int64_t segment_ = 0;   // how many times the block has met so far there
    std::set<const ir::BarrierWait *> waitsAdvancedLater_;   // waits on a barrier a later statement arrives on
    // A barrier's phases lead to the barriers code waiting on it advances (see guardsReach).
    std::map<const ir::BufferNode *, std::set<const ir::BufferNode *>> barrierLeadsTo_;
    std::set<const ir::BufferNode *> arrivedByScope_;   // barriers every thread of the pacing scope arrives on
    struct Nested {
        explicit Nested(int &depth) : depth_(depth) { ++depth_; }
        ~Nested() { --depth_; }
        int &depth_;
    };
    struct Probe {
        int64_t start;       // ranges numbered below it were admitted before the probe
        bool hit;
        Conflict conflict;   // the first conflict with such a range
    };
    std::vector<Probe> probes_;
};

} // namespace

ir::Kernel insertSyncs(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    State state;
    std::set<const ir::VarNode *> invariant;
    for (const ir::Param &p : kernel.params) {
        if (p.kind != ir::ParamKind::Tensor) invariant.insert(p.var.get());
    }
    Inserter inserter(asyncBytes(kernel.body), kernel.body, kernel.threads, std::move(invariant), &ctx.diags);
    out.body = inserter.process(kernel.body, state);
    for (Decision &d : inserter.log) ctx.explain.record(std::move(d));
    return out;
}

} // namespace tilet
