// CheckBarriers.cpp -- see CheckBarriers.h.
//
// 1. Unroll: per agent (a warp group, or a warp when a role is warps that are
//    not whole warp groups), the list of events it executes (arrive, wait,
//    shared read/write with the concrete box it touches, block barrier at
//    the edges of ws(...) runs), with the loop values of each event. In a
//    kernel with a cluster, the agents of every block of one cluster, each
//    unrolled with its rank known (block_rank_in_cluster()).
// 2. Simulate: agents step through their events; barrier phases (by
//    barrier, element and block) complete after their arrive count and the
//    bytes of the loads they expect; waits block on the parity; vector
//    clocks give happens-before, and every shared access (by buffer and
//    block) is compared with the earlier accesses of the other agents.
// 3. Report the first problem at the statement that shows it.
#include "passes/CheckBarriers.h"

#include "ir/Analysis.h"
#include "ir/Effects.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Uniformity.h"
#include "ir/Visitor.h"
#include "passes/ParallelNest.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

constexpr size_t kMaxEvents = 200000;   // per agent; beyond it the check is skipped
// Statements walked per agent: a loop of 2^62 trips with no barrier
// operations in it would otherwise be walked for ever. (The examples walk
// about 1.5 statements per event.)
constexpr size_t kMaxSteps = 2 * kMaxEvents;

// The unit the simulation runs as one agent: a warp group, or a warp when
// a role is warps that are not whole warp groups (TileLang's `if tx < 32:`).
// A kernel with a cluster runs the blocks of one cluster together: agent a
// is group a % groups of the block of rank a / groups.
struct Agents {
    int64_t threads = 128;
    const char *name = "warp group";
    int64_t blockThreads = 128;   // the block's threads: the last agent may have fewer than `threads`
    int64_t groups = 1;           // agents per block
    int64_t blocks = 1;           // blocks simulated together: the cluster's
    bool readsRank = false;       // the kernel reads block_rank_in_cluster()
    std::string of(int64_t n) const { return std::to_string(n) + " " + name + (n == 1 ? "" : "s"); }
    // The threads of group g of a block (an agent never has more than the block).
    int64_t threadsOf(int64_t g) const { return std::max<int64_t>(1, std::min(threads, blockThreads - g * threads)); }
    int64_t blockOf(int64_t agent) const { return agent / groups; }
    std::string agent(int64_t a) const {
        return (blocks > 1 ? "block " + std::to_string(a / groups) + " " : std::string()) + name + " " + std::to_string(a % groups);
    }
};
Agents currentAgents;   // the kernel being checked's (checkBarriers sets it; one kernel at a time)

// The values of the loops around an event, outermost first, by loop
// variable name ("while" for a while loop's iteration).
using LoopValues = std::vector<std::pair<const std::string *, int64_t>>;

// "k = 3, j = 1".
std::string loopText(const LoopValues &loops) {
    std::string text;
    for (const auto &[name, value] : loops) text += (text.empty() ? "" : ", ") + *name + " = " + std::to_string(value);
    return text;
}

struct Event {
    // Expect: the load's transaction bytes a barrier's phase also waits
    // for (in `arrivals` loads); Land: one load's bytes landing on it, which
    // orders the load's write before the phase. Followed in a kernel with a
    // cluster (where bytes may land on another block's barrier: the CTA
    // pair's load, a multicast); in one block, a TMA load's write counts as
    // made when it is issued, ordered by the issuer's later arrivals.
    // ClusterMeet: a cluster barrier (cluster_sync()) of every block.
    enum Kind { Arrive, Wait, Read, Write, SyncAll, Meet, ClusterMeet, Expect, Land } kind;
    const ir::BufferNode *buffer = nullptr;
    int64_t element = 0;   // barrier element
    int64_t parity = 0;
    std::vector<ir::Interval> box;   // accesses: inclusive per dimension
    SourceRange span;
    std::shared_ptr<const LoopValues> when;   // the loop values (shared by the events of an iteration)
    int64_t arrivals = 0;                  // Arrive: how many threads arrive (an agent's, or one)
    int64_t barrierId = 0, groups = 0;     // Meet: the named barrier, and how many agents it joins
    bool inRole = false;                   // Read, Write: made inside ws(...)
    bool atomic = false;                   // Write: an atomic add whose result no thread sees (Access::atomic), unordered with others by right
    // Read, Write: by the MMAs of a tcgen05 gemm the group issued, which
    // access the operands until a tcgen05.commit of the group arrives and
    // that phase completes. Arrive: such a commit (a tcgen05 gemm's own, or
    // tcgen05_mma_arrive), which also completes the group's MMAs before it.
    bool byMma = false;
    // Write: by a TMA load the agent issued, which writes until its bytes
    // land (Land) and that phase completes; not ordered by the agent's program.
    bool byLoad = false;
    // The block of the cluster (its rank) whose barrier an Arrive, Wait,
    // Expect or Land is on, whose shared buffer a Read or Write accesses.
    int32_t block = 0;
};

using Clock = std::vector<int64_t>;

// a = a joined with b (what a knows and what b knows), in place.
void join(Clock &a, const Clock &b) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
}

bool overlap(const std::vector<ir::Interval> &a, const std::vector<ir::Interval> &b) {
    if (a.size() != b.size()) return true;
    for (size_t d = 0; d < a.size(); ++d) {
        if (a[d].hi < b[d].lo || b[d].hi < a[d].lo) return false;
    }
    return true;
}

// ------------------------------------------------------------ unrolling

// A run-time condition: its key, as the program would write it (the same
// for a condition and its negation: a > b is !(a <= b), a != b is
// !(a == b), !c is c negated), and the key's negation.
struct Condition {
    std::string key, fails;
    bool negated = false;   // the condition is the key's negation
};

Condition conditionOf(const Expr &cond) {
    auto text = [](const Expr &e) {
        std::string t = ir::toString(e);
        return t.size() > 2 && t.front() == '(' && t.back() == ')' ? t.substr(1, t.size() - 2) : t;
    };
    if (const ir::Unary *u = ir::as<ir::Unary>(cond); u && u->op == ir::UnaryOp::Not) {
        Condition c = conditionOf(u->a);
        c.negated = !c.negated;
        return c;
    }
    if (const ir::Binary *b = ir::as<ir::Binary>(cond)) {
        auto with = [&](ir::BinaryOp op) { return text(std::make_shared<ir::Binary>(b->dtype, op, b->a, b->b)); };
        switch (b->op) {
        case ir::BinaryOp::Gt: return {with(ir::BinaryOp::Le), text(cond), true};
        case ir::BinaryOp::Ge: return {with(ir::BinaryOp::Lt), text(cond), true};
        case ir::BinaryOp::Ne: return {with(ir::BinaryOp::Eq), text(cond), true};
        case ir::BinaryOp::Le: return {text(cond), with(ir::BinaryOp::Gt), false};
        case ir::BinaryOp::Lt: return {text(cond), with(ir::BinaryOp::Ge), false};
        case ir::BinaryOp::Eq: return {text(cond), with(ir::BinaryOp::Ne), false};
        default: break;
        }
    }
    return {text(cond), "!(" + text(cond) + ")", false};
}

using BlockIndex = std::array<int64_t, 3>;

// blockIdx.{x,y,z} as the block a run assumes (when `block` is given), and
// block_rank_in_cluster() as its rank (when `rank` is not negative).
class KnownBlock : public ir::Mutator {
public:
    KnownBlock(const BlockIndex *block, int64_t rank) : block_(block), rank_(rank) {}
    using ir::Mutator::mutate;

protected:
    Expr mutateSpecialReg(const Expr &self, const ir::SpecialReg &n) override {
        if (n.special == ir::SpecialKind::ClusterCtaRank) return rank_ >= 0 ? ir::intImm(rank_) : self;
        if (!block_) return self;
        switch (n.special) {
        case ir::SpecialKind::BlockIdxX: return ir::intImm((*block_)[0]);
        case ir::SpecialKind::BlockIdxY: return ir::intImm((*block_)[1]);
        case ir::SpecialKind::BlockIdxZ: return ir::intImm((*block_)[2]);
        default: return self;
        }
    }

private:
    const BlockIndex *block_;
    int64_t rank_;
};

// The value of `e` folded as ir::binary folds integers, its leaves (block
// indices, variables, registers) given by `leaf` -- worked out without
// building an expression, since the check evaluates indices at every step
// of a run and conditions in every block of the grid. Nullopt where a leaf
// is unknown or an operation is not folded here (a float, ~).
template <typename Leaf> std::optional<int64_t> foldLeaves(const Expr &e, const Leaf &leaf) {
    switch (e->kind) {
    case ir::ExprKind::IntImm: return ir::as<ir::IntImm>(e)->value;
    case ir::ExprKind::Unary: {
        const ir::Unary &u = *ir::as<ir::Unary>(e);
        if (isFloat(u.dtype) || u.op == ir::UnaryOp::BitNot) return std::nullopt;
        std::optional<int64_t> x = foldLeaves(u.a, leaf);
        if (!x) return std::nullopt;
        if (u.op == ir::UnaryOp::Not) return *x == 0 ? 1 : 0;
        return ir::foldBinary(ir::BinaryOp::Sub, 0, *x, u.dtype);
    }
    case ir::ExprKind::Binary: {
        const ir::Binary &bin = *ir::as<ir::Binary>(e);
        if (isFloat(bin.a->dtype) || isFloat(bin.b->dtype)) return std::nullopt;
        std::optional<int64_t> x = foldLeaves(bin.a, leaf);
        if (!x) return std::nullopt;
        std::optional<int64_t> y = foldLeaves(bin.b, leaf);
        if (!y) return std::nullopt;
        return ir::foldBinary(bin.op, *x, *y, bin.dtype);
    }
    default: return leaf(e);
    }
}

// Block `b`'s index that special register `e` reads, if it is one.
std::optional<int64_t> blockIndexIn(const Expr &e, const BlockIndex &b) {
    const ir::SpecialReg *r = ir::as<ir::SpecialReg>(e);
    if (!r) return std::nullopt;
    switch (r->special) {
    case ir::SpecialKind::BlockIdxX: return b[0];
    case ir::SpecialKind::BlockIdxY: return b[1];
    case ir::SpecialKind::BlockIdxZ: return b[2];
    default: return std::nullopt;
    }
}

// The value of `e` in block `b` when folding its constants and block indices gives it.
std::optional<int64_t> foldInBlock(const Expr &e, const BlockIndex &b) {
    return foldLeaves(e, [&](const Expr &x) { return blockIndexIn(x, b); });
}

// The value of `e`, an expression of the block index, in block `b`.
std::optional<int64_t> valueInBlock(const Expr &e, const BlockIndex &b) {
    if (std::optional<int64_t> v = foldInBlock(e, b)) return v;
    return ir::constInt(ir::simplify(KnownBlock(&b, -1).mutate(e)));
}

// The block of rank `rank` in the cluster whose first block is `origin`
// (ranks run x fastest, as %cluster_ctarank).
BlockIndex blockOfRank(const ir::Kernel &k, const BlockIndex &origin, int64_t rank) {
    return {origin[0] + rank % k.cluster[0], origin[1] + rank / k.cluster[0] % k.cluster[1], origin[2] + rank / (k.cluster[0] * k.cluster[1])};
}

// Which way the block goes at branches on run-time conditions alike in
// every thread: by condition, those not listed `otherwise`.
struct BranchWays {
    std::map<std::string, bool> ways;   // by Condition::key: whether it holds
    std::map<std::string, Condition> conditions;
    bool otherwise = true;
    bool holds(const std::string &key) const {
        auto it = ways.find(key);
        return it == ways.end() ? otherwise : it->second;
    }
    std::string describe() const {
        if (ways.empty()) return std::string("with branches on run-time values ") + (otherwise ? "taken" : "not taken");
        std::string s;
        for (const auto &[key, value] : ways) {
            const Condition &c = conditions.at(key);
            s += (s.empty() ? "when " : " and ") + (value ? c.key : c.fails);
        }
        return s;
    }
};

class Unroller {
public:
    // `ways`: which way the block goes at each branch whose condition,
    // alike in every thread, is known only at run time.
    // `block`: the block index the run assumes (branches on it go that
    // block's way), or none (they are run-time conditions). `rank`: the
    // block's rank in its cluster (block_rank_in_cluster() is known).
    Unroller(const ir::Kernel &k, const ir::Uniformity &uniformity, int64_t group, int64_t rank, int64_t dynamicTrips, const BranchWays &ways,
             const std::optional<BlockIndex> &block)
        : kernel_(k), uniformity_(uniformity), group_(group), rank_(rank), trips_(dynamicTrips), ways_(ways), block_(block),
          blockSequences_(ir::blockSequences(k.body)), accessBlock_(rank) {}
    std::vector<Condition> conditions;   // the run-time conditions met, in order
    std::vector<Event> events;
    bool overflow = false;
    std::optional<ir::JumpKind> jumping_;   // a break or continue met, until its loop takes it

    // After an iteration: whether a break ends the loop (a continue only ended the iteration).
    bool leavesLoop() {
        bool leaves = jumping_ == ir::JumpKind::Break;
        jumping_.reset();
        return leaves;
    }
    std::vector<SourceRange> unknownBranches;   // data-dependent branches holding barrier operations
    std::vector<Expr> unknownConditions;        // their conditions, as far as the run knows them
    // In a run for one block: what the block index decided (a branch's
    // condition, a loop's bounds), as an expression of the block index, and
    // the value it took in this block.
    std::vector<std::pair<Expr, int64_t>> blockChoices;

    // The kernel's run: what wgmma groups still read at its end, they read until then.
    void run(const Stmt &body) {
        walk(body);
        retireWgmmaGroups(0);
    }

    void walk(const Stmt &s) {
        if (!s || overflow || jumping_) return;   // a break or continue skips the rest of its loop's body
        if (events.size() > kMaxEvents || ++steps_ > kMaxSteps) {
            overflow = true;
            return;
        }
        switch (s->kind) {
        case ir::StmtKind::Seq: {
            const std::vector<Stmt> &stmts = ir::as<ir::Seq>(s)->stmts;
            bool top = blockSequences_.count(ir::as<ir::Seq>(s)) > 0;
            bool inRun = false;
            const size_t assumed = assumedExtents_.size();
            for (const Stmt &x : stmts) {
                bool ws = ir::as<ir::WarpSpecialize>(x) != nullptr;
                // In the block's own sequences, the block meets at the edges of
                // a run of ws(...) regions (ir::blockSequences: insert-syncs puts
                // a barrier there when accesses on either side conflict).
                if (top && ws != inRun) events.push_back({Event::SyncAll, nullptr, 0, 0, {}, x->span, {}});
                inRun = ws;
                walk(x);
            }
            if (top && inRun) events.push_back({Event::SyncAll, nullptr, 0, 0, {}, s->span, {}});
            assumedExtents_.resize(assumed);
            return;
        }
        case ir::StmtKind::LetStmt: {
            const ir::LetStmt &l = *ir::as<ir::LetStmt>(s);
            env_.push_back({l.var, evaluate(l.value)});
            walk(l.body);
            env_.pop_back();
            return;
        }
        case ir::StmtKind::Allocate: walk(ir::as<ir::Allocate>(s)->body); return;
        case ir::StmtKind::For: {
            const ir::For &f = *ir::as<ir::For>(s);
            if (f.forKind == ir::ForKind::Parallel) {
                parallelAccesses(f);
                return;
            }
            accesses(effectsOf(s), s->span);   // its bounds
            std::optional<int64_t> lo = ir::constInt(evaluate(f.min)), n = ir::constInt(evaluate(f.extent));
            noteBlockChoice(f.min, lo);
            noteBlockChoice(f.extent, n);
            Expr extent = evaluate(f.extent);
            int64_t count = n ? *n : trips_;
            // A run-time trip count is tried as trips_, or as its bound when
            // lower (`min(ceildiv(seq_len, N), ...)`, at most seq_len / N).
            ir::BoundsScope scope;
            ir::Interval bound = ir::boundsOf(extent, scope);
            if (!n && bound.hi != ir::Interval::kMax) count = std::min(count, bound.hi);
            if (!n && bound.lo != ir::Interval::kMin) count = std::max(count, bound.lo);
            count = std::max<int64_t>(0, count);
            // A run-time start stays symbolic: iteration i is `min + i`, so
            // what is relative to the start ((k - min) % stages) is known.
            Expr start = evaluate(f.min);
            // The trip count tried is the loop's inside it: its last
            // iteration (`if (k == loop_range - 1)`) is known.
            // (Not an extent that reads memory: the body may change it.)
            bool readsMemory = false;
            ir::forEachExpr(extent, [&](const Expr &x) { readsMemory = readsMemory || ir::as<ir::Load>(x); });
            bool assumed = !n && lo && !readsMemory;
            if (assumed) assumedExtents_.push_back({extent, count});
            for (int64_t i = 0; i < count && !overflow; ++i) {
                env_.push_back({f.var, lo ? ir::intImm(*lo + i) : ir::simplify(ir::add(start, ir::intImm(i)))});
                loops_.push_back({&f.var->name, lo ? *lo + i : i});
                loopsChanged();
                const size_t inner = assumedExtents_.size();
                walk(f.body);
                assumedExtents_.resize(inner);
                loops_.pop_back();
                loopsChanged();
                env_.pop_back();
                if (leavesLoop()) break;
            }
            // The count stays assumed for the rest of the enclosing sequence:
            // what follows the loop (a ring counter adding its trip count,
            // specialize-warps') sees the count the loop ran.
            return;
        }
        case ir::StmtKind::Jump: jumping_ = ir::as<ir::Jump>(s)->jump; return;
        case ir::StmtKind::While: {
            // Its trip count is known at run time only: tried like a loop's.
            const ir::While &w = *ir::as<ir::While>(s);
            const ir::Effects &condition = effectsOf(s);
            for (int64_t i = 0; i < trips_ && !overflow; ++i) {
                loops_.push_back({&kWhile, i});
                loopsChanged();
                accesses(condition, s->span);
                walk(w.body);
                loops_.pop_back();
                loopsChanged();
                if (leavesLoop()) return;
            }
            accesses(condition, s->span);   // read once more, to leave
            return;
        }
        case ir::StmtKind::IfThenElse: {
            const ir::IfThenElse &i = *ir::as<ir::IfThenElse>(s);
            accesses(effectsOf(s), s->span);   // its condition's
            Expr cond = evaluate(i.cond);
            std::optional<int64_t> c = ir::constInt(cond);
            noteBlockChoice(i.cond, c);
            if (c) {
                walk(*c ? i.thenBody : i.elseBody);
                return;
            }
            // (A break or continue there decides which barrier operations follow.)
            bool barriers = false;
            ir::forEachStmt(s, [&](const Stmt &x) { barriers = barriers || ir::as<ir::BarrierArrive>(x) || ir::as<ir::BarrierWait>(x) || ir::as<ir::Jump>(x); });
            if (barriers) {
                unknownBranches.push_back(i.span);
                unknownConditions.push_back(cond);
                return;
            }
            // Shared accesses only. A condition that differs between threads
            // sends some of them each way: both arms run. One alike in every
            // thread sends the whole block one way, tried both ways (see
            // checkBarriers).
            if (uniformity_.threadDependent(cond)) {
                walk(i.thenBody);
                walk(i.elseBody);
            } else {
                walk(taken(cond) ? i.thenBody : i.elseBody);
            }
            return;
        }
        case ir::StmtKind::WarpSpecialize: {
            const ir::WarpSpecialize &w = *ir::as<ir::WarpSpecialize>(s);
            int64_t agentWarps = currentAgents.threads / ir::WarpSpecialize::kWarpThreads;
            if (std::find(w.warps.begin(), w.warps.end(), group_ * agentWarps) == w.warps.end()) return;
            bool outer = inRole_;
            int64_t outerFirst = roleFirstGroup_;
            inRole_ = true;
            roleFirstGroup_ = w.warps.front() / agentWarps;
            walk(w.body);
            inRole_ = outer;
            roleFirstGroup_ = outerFirst;
            return;
        }
        case ir::StmtKind::Elect: {
            // One thread runs the body: the agent holding it walks it, and
            // its arrivals are that thread's one.
            const ir::Elect &el = *ir::as<ir::Elect>(s);
            const int64_t first = group_ * currentAgents.threads;
            bool holds = el.unit == ir::Elect::Unit::WarpGroup ? first % ir::WarpSpecialize::kGroupThreads == 0
                                                               : first <= el.firstThread && el.firstThread < first + currentAgents.threads;
            if (!holds) return;
            bool outer = std::exchange(oneThread_, true);
            walk(el.body);
            oneThread_ = outer;
            return;
        }
        default: {
            // Everything else: its shared accesses and mbarrier operations, as its effects state them.
            const ir::Effects &fx = effectsOf(s);
            if (const ir::Store *st = ir::as<ir::Store>(s)) {
                record(*st);
            } else {
                // A register written otherwise (an atomic fetch-add's result, a call_extern's pointer) is no longer known.
                for (const ir::Access &a : fx.accesses)
                    if (a.writes()) registers_.erase(a.buffer);
            }
            // A gemm with mbar is tcgen05's: MMAs and their commit to mbar;
            // one bound to a later commit (completesOn), MMAs alone.
            const ir::Gemm *gemm = ir::as<ir::Gemm>(s);
            const ir::Tcgen05Commit *commit = ir::as<ir::Tcgen05Commit>(s);
            const ir::Copy *copy = ir::as<ir::Copy>(s);
            const ir::Tcgen05Copy *scaleCopy = ir::as<ir::Tcgen05Copy>(s);
            // tcgen05_cp_warpx4 reads asynchronously too, until the thread's next commit.
            bool mma = (gemm && (gemm->mbar || gemm->completesOn)) || commit || scaleCopy;
            // The CTA pair's gemm and tcgen05_cp_warpx4 read the shared
            // memory of both blocks of the pair, and its commit (or
            // tcgen05_mma_arrive(arrive_2cta)) arrives on the barrier of both.
            bool pair = currentAgents.blocks > 1 && ((gemm && gemm->use2cta) || (commit && commit->bothBlocks) || (scaleCopy && scaleCopy->pair));
            size_t before = events.size();
            if (pair) {
                for (int64_t b : {rank_ & ~int64_t(1), rank_ | 1}) {
                    accessBlock_ = b;
                    accesses(fx, s->span);
                }
                accessBlock_ = rank_;
            } else if (!copy || currentAgents.blocks == 1 || !clusterCopy(*copy, fx, s->span)) {
                accesses(fx, s->span);
            }
            for (size_t i = before; i < events.size(); ++i) events[i].byMma = mma;
            // A gemm that leaves its wgmma group in flight (wg_wait other than
            // 0, TileLang's) reads its shared operands until a later wait
            // retires the group: its reads are made there, so a stage
            // released before that wait races with the next load into it.
            // (A gemm that ends up mma.sync is synchronous: its reads are
            // then taken later than they are made, which only orders less.)
            if (gemm && !mma) {
                if (gemm->wgWait != 0) {
                    auto reads = std::stable_partition(events.begin() + static_cast<std::ptrdiff_t>(before), events.end(),
                                                       [](const Event &e) { return e.kind != Event::Read; });
                    wgmmaGroups_.emplace_back(std::make_move_iterator(reads), std::make_move_iterator(events.end()));
                    events.erase(reads, events.end());
                }
                retireWgmmaGroups(gemm->wgWait < 0 ? wgmmaGroups_.size() : static_cast<size_t>(gemm->wgWait));
            }
            if (const ir::WgmmaSync *w = ir::as<ir::WgmmaSync>(s); w && w->sync == ir::WgmmaSyncKind::Wait) retireWgmmaGroups(static_cast<size_t>(w->pending));
            for (const ir::SyncEffect &e : fx.syncs) {
                // Meetings: the block's __syncthreads outside ws(...) (written
                // in the program, or specialize-warps' pacing), and a named
                // barrier (bar.sync id, n) of whole warp groups inside a role.
                if (e.kind == ir::SyncKind::Barrier && !inRole_ && e.barrierId == 0) {
                    events.push_back({Event::SyncAll, nullptr, 0, 0, {}, s->span, {}});
                } else if (e.kind == ir::SyncKind::Barrier && inRole_ && e.barrierId != 0 && e.threads >= 2 * currentAgents.threads &&
                    e.threads % currentAgents.threads == 0) {
                    Event ev{Event::Meet, nullptr, 0, 0, {}, s->span, {}};
                    ev.barrierId = e.barrierId;
                    ev.groups = e.threads / currentAgents.threads;
                    push(std::move(ev));
                } else if (e.kind == ir::SyncKind::ClusterBarrier && currentAgents.blocks > 1) {
                    push({Event::ClusterMeet, nullptr, 0, 0, {}, s->span, {}});
                } else if (e.kind == ir::SyncKind::MbarrierWait) {
                    std::optional<int64_t> p = known(*e.parity);
                    if (!p) p = ir::constInt(evaluate(*e.parity));
                    Event ev{Event::Wait, e.barrier, index(*e.index), p ? (*p & 1) : -1, {}, s->span, {}};
                    ev.block = static_cast<int32_t>(rank_);
                    push(std::move(ev));
                } else if (e.kind == ir::SyncKind::MbarrierArrive && e.count == 1) {
                    // One thread arrives: a tcgen05 commit (on both blocks of
                    // the pair for the pair's MMAs), or copy_cluster's
                    // remote_barrier (on the barrier of dst_block).
                    if (group_ != (inRole_ ? roleFirstGroup_ : 0)) continue;
                    int64_t to[2] = {rank_, rank_};
                    size_t blocks = 1;
                    if (pair) to[0] = rank_ & ~int64_t(1), to[1] = rank_ | 1, blocks = 2;
                    else if (e.remote && copy && copy->dstBlock) to[0] = rankOf(copy->dstBlock);
                    for (size_t i = 0; i < blocks; ++i) {
                        const int64_t b = to[i];
                        Event ev{Event::Arrive, e.barrier, e.index ? index(*e.index) : 0, 0, {}, s->span, {}};
                        ev.arrivals = 1;
                        ev.byMma = mma;
                        blockOf(ev, b);
                        push(std::move(ev));
                    }
                } else if (e.kind == ir::SyncKind::MbarrierArrive) {
                    // Every thread of the agent arrives, or its elected one:
                    // on this block's barrier, or barrier_arrive(b, rank)'s.
                    Event ev{Event::Arrive, e.barrier, index(*e.index), 0, {}, s->span, {}};
                    ev.arrivals = oneThread_ ? 1 : currentAgents.threadsOf(group_);
                    const ir::BarrierArrive *arrive = ir::as<ir::BarrierArrive>(s);
                    blockOf(ev, arrive && arrive->remoteRank ? rankOf(arrive->remoteRank) : rank_);
                    push(std::move(ev));
                }
            }
            return;
        }
        }
    }

private:
    size_t steps_ = 0;   // statements walked (kMaxSteps)
    // A var's value as the unrolled run left it (a scheduler's `current_iter`
    // in a role's `while` loop), read where barrier indices and parities use it.
    class KnownRegisters : public ir::Mutator {
    public:
        explicit KnownRegisters(const std::map<const ir::BufferNode *, Expr> &values) : values_(values) {}
        using ir::Mutator::mutate;

    protected:
        Expr mutateLoad(const Expr &self, const ir::Load &n) override {
            auto it = values_.find(n.buffer.get());
            if (it != values_.end()) return it->second;
            return ir::Mutator::mutateLoad(self, n);
        }

    private:
        const std::map<const ir::BufferNode *, Expr> &values_;
    };
    // The run-time extents of the loops around, as the trip counts tried.
    class AssumedExtents : public ir::Mutator {
    public:
        explicit AssumedExtents(const std::vector<std::pair<Expr, int64_t>> &extents) : extents_(extents) {}
        Expr mutate(const Expr &e) override {
            for (const auto &[extent, trips] : extents_)
                if (ir::structurallyEqual(e, extent)) return ir::intImm(trips, e->dtype);
            return ir::Mutator::mutate(e);
        }

    private:
        const std::vector<std::pair<Expr, int64_t>> &extents_;
    };
    // The value of `e` when everything it reads is a constant here (the loop
    // variables, the block, the registers followed): what evaluate() would
    // fold it to, worked out without building a new expression (the run
    // evaluates every index at every step). Nullopt: ask evaluate(), which
    // also folds what only simplification can.
    std::optional<int64_t> known(const Expr &e) const {
        if (!assumedExtents_.empty()) return std::nullopt;
        return foldLeaves(e, [&](const Expr &x) -> std::optional<int64_t> {
            switch (x->kind) {
            case ir::ExprKind::Var:
                for (auto it = env_.rbegin(); it != env_.rend(); ++it)
                    if (it->first.get() == x.get()) return ir::constInt(it->second);
                return std::nullopt;
            case ir::ExprKind::Load: {
                auto it = registers_.find(ir::as<ir::Load>(x)->buffer.get());
                return it == registers_.end() ? std::nullopt : ir::constInt(it->second);
            }
            case ir::ExprKind::SpecialReg:
                if (ir::as<ir::SpecialReg>(x)->special == ir::SpecialKind::ClusterCtaRank) return rank_;
                if (!block_ || blockHidden_) return std::nullopt;
                return blockIndexIn(x, *block_);
            default: return std::nullopt;
            }
        });
    }
    Expr evaluate(const Expr &e) const {
        if (std::optional<int64_t> v = known(e)) return ir::intImm(*v, e->dtype);
        Expr out = ir::substitute(e, env_);
        bool blockKnown = block_ && !blockHidden_;
        if (blockKnown || currentAgents.readsRank) out = KnownBlock(blockKnown ? &*block_ : nullptr, rank_).mutate(out);
        if (!registers_.empty()) out = KnownRegisters(registers_).mutate(out);
        out = ir::simplify(out);
        if (!assumedExtents_.empty()) out = ir::simplify(AssumedExtents(assumedExtents_).mutate(out));
        return out;
    }
    // Notes `e` (a branch's condition, a loop's bound) among blockChoices
    // when its `value` here comes from the block index.
    void noteBlockChoice(const Expr &e, const std::optional<int64_t> &value) {
        if (!block_ || !value) return;
        blockHidden_ = true;
        Expr symbolic = evaluate(e);
        blockHidden_ = false;
        if (!ir::constInt(symbolic)) blockChoices.push_back({symbolic, *value});
    }
    // A store to a one-element register: its value, when the run knows it.
    void record(const ir::Store &st) {
        bool scalar = st.buffer->shape.empty() || (st.buffer->shape.size() == 1 && ir::constInt(st.buffer->shape[0]) == 1);
        if (st.buffer->scope != ir::MemScope::Local || !scalar) return;
        Expr v = evaluate(st.value);
        if (ir::constInt(v)) registers_[st.buffer.get()] = v;
        else registers_.erase(st.buffer.get());
    }

    // The values `e` may take here: the one it has when the run knows it
    // (known(), without building an expression), else its bounds in `scope`.
    ir::Interval rangeOf(const Expr &e, const ir::BoundsScope &scope) const {
        if (std::optional<int64_t> v = known(e)) return ir::Interval::point(*v);
        return ir::boundsOf(evaluate(e), scope);
    }
    int64_t index(const Expr &e) const {
        std::optional<int64_t> v = known(e);
        if (!v) v = ir::constInt(evaluate(e));
        return v ? *v : -1;   // -1: not known here
    }
    // A block rank of the cluster the program computes (dst_block, barrier_arrive's rank).
    static constexpr int64_t kUnknownRank = std::numeric_limits<int64_t>::min();
    int64_t rankOf(const Expr &e) const {
        std::optional<int64_t> v = known(e);
        if (!v) v = ir::constInt(evaluate(e));
        return v ? *v : kUnknownRank;
    }
    // Aims a barrier event at block `b` (the simulation reports one outside
    // the cluster); an unknown block skips it, like an unknown index.
    static void blockOf(Event &ev, int64_t b) {
        if (b == kUnknownRank) ev.element = -1;
        else ev.block = static_cast<int32_t>(std::clamp<int64_t>(b, -1, std::numeric_limits<int32_t>::max()));
    }

    // A copy in a kernel with a cluster. Its writes may reach other blocks:
    // copy_cluster(dst_block = r) writes block r's shared memory; a
    // multicast completing on the program's barrier (specialize-warps'
    // producer) is issued by the lowest block of each mask, for every block
    // of it (the others of the mask only expect the bytes; a block outside
    // its own mask loads its own). A TMA load on a program barrier writes
    // asynchronously: its write is ordered before others' accesses only by
    // the phase its bytes complete (Expect, Land); the CTA pair's load (on a
    // cluster barrier) lands on the barrier of the pair's leader, which
    // expects both blocks' bytes. Records the copy's accesses and
    // transaction events; false when it is none of these (its accesses are
    // the block's own, recorded as any statement's).
    bool clusterCopy(const ir::Copy &c, const ir::Effects &fx, SourceRange span) {
        bool load = c.barrier && c.dst.buffer->scope == ir::MemScope::Shared && c.src.buffer->scope == ir::MemScope::Global;
        bool pairLoad = load && c.barrier->clusterBarrier && kernel_.pairCluster() && !c.multicast();
        bool multicast = load && c.multicast() && static_cast<size_t>(rank_) < c.clusterMasks.size();
        if (!c.dstBlock && !load) {
            // A multicast waiting for its own bytes: the blocks of the cluster
            // meet first (lower-tma); then the bytes landing in each block
            // are ordered before its own wait for them, as its own load's.
            if (c.multicast() && !inRole_) push({Event::ClusterMeet, nullptr, 0, 0, {}, span, {}});
            return false;
        }
        std::vector<int64_t> to;   // the blocks whose `dst` the copy writes (and whose barriers a load's bytes land on)
        if (c.dstBlock) {
            int64_t r = rankOf(c.dstBlock);
            if (r == kUnknownRank)
                for (int64_t b = 0; b < currentAgents.blocks; ++b) to.push_back(b);
            else to.push_back(r);
        } else if (!multicast) {
            to.push_back(rank_);
        } else {
            int64_t mask = c.clusterMasks[static_cast<size_t>(rank_)];
            if (!((mask >> rank_) & 1)) {
                to.push_back(rank_);
            } else if ((mask & ((int64_t(1) << rank_) - 1)) == 0) {   // the lowest block of its mask
                for (int64_t b = 0; b < currentAgents.blocks && b < 63; ++b)
                    if ((mask >> b) & 1) to.push_back(b);
            }
        }
        for (const ir::Access &a : fx.accesses) {
            Event::Kind kind = a.writes() ? Event::Write : Event::Read;
            if (a.region != &c.dst) {
                if (a.region) region(*a.region, kind, span);
                else element(*a.buffer, a.indices, kind, span, {});
                continue;
            }
            for (int64_t b : to) {
                if (b < 0 || b >= currentAgents.blocks) continue;   // reported at the arrival, if any
                accessBlock_ = b;
                const size_t at = events.size();
                region(*a.region, kind, span);
                if (load && events.size() > at) events.back().byLoad = true;
            }
            accessBlock_ = rank_;
        }
        // The bytes: counted by the one thread that issues.
        if (!load || group_ != (inRole_ ? roleFirstGroup_ : 0)) return true;
        int64_t at = c.barrierIndex ? index(c.barrierIndex) : 0;
        auto bytes = [&](Event::Kind kind, int64_t block, int64_t loads) {
            Event ev{kind, c.barrier.get(), at, 0, {}, span, {}};
            ev.arrivals = loads;
            ev.block = static_cast<int32_t>(block);
            push(std::move(ev));
        };
        if (pairLoad) {
            int64_t leader = rank_ & ~int64_t(1);
            if (rank_ == leader) bytes(Event::Expect, leader, 2);
            bytes(Event::Land, leader, 1);
        } else {
            bytes(Event::Expect, rank_, 1);
            for (int64_t b : to)
                if (b < currentAgents.blocks) bytes(Event::Land, b, 1);
        }
        return true;
    }

    // A wgmma wait leaving `inFlight` groups: the reads of the older ones are made now.
    void retireWgmmaGroups(size_t inFlight) {
        while (wgmmaGroups_.size() > inFlight) {
            for (Event &e : wgmmaGroups_.front()) events.push_back(std::move(e));
            wgmmaGroups_.erase(wgmmaGroups_.begin());
        }
    }

    void push(Event e) {
        // Outside ws(...) all warp groups share each statement's work: its
        // accesses are the block's, recorded once (for group 0); inside, a
        // role's groups share it, and it is recorded for the role's first
        // group (the role's own barriers order its groups, see insert-syncs).
        if (e.kind == Event::Read || e.kind == Event::Write) {
            if (!recordsAccesses()) return;
            e.block = static_cast<int32_t>(accessBlock_);
        }
        if (!when_) when_ = std::make_shared<const LoopValues>(loops_);
        e.when = when_;
        e.inRole = inRole_;
        events.push_back(std::move(e));
    }

    // Whether this agent records the shared accesses it meets (push): the
    // others skip working out their boxes.
    bool recordsAccesses() const { return group_ == (inRole_ ? roleFirstGroup_ : 0); }

    // Shared memory and tensor memory (per block; the tcgen05 MMAs write
    // their accumulators there asynchronously).
    static bool tracked(const ir::BufferNode &b) { return b.scope == ir::MemScope::Shared || b.scope == ir::MemScope::TMem; }

    void region(const ir::Region &r, Event::Kind kind, SourceRange span, bool atomic = false) {
        if (!tracked(*r.buffer) || !recordsAccesses()) return;
        ir::BoundsScope scope;
        std::vector<ir::Interval> box;
        box.reserve(r.mins.size());   // one allocation per event: the run records tens of thousands
        for (size_t d = 0; d < r.mins.size(); ++d) {
            ir::Interval lo = rangeOf(r.mins[d], scope);
            std::optional<int64_t> dim = ir::constInt(r.buffer->shape[d]);
            if (!lo.bounded()) box.push_back({0, dim ? *dim - 1 : ir::Interval::kMax});
            else box.push_back({lo.lo, lo.hi + r.extents[d] - 1});
        }
        Event e{kind, r.buffer.get(), 0, 0, std::move(box), span, {}};
        e.atomic = atomic;
        push(std::move(e));
    }

    // The element at `indices` (the whole buffer when null).
    void element(const ir::BufferNode &b, const std::vector<Expr> *indices, Event::Kind kind, SourceRange span, const ir::BoundsScope &scope,
                 bool atomic = false) {
        if (!tracked(b) || !recordsAccesses()) return;
        std::vector<ir::Interval> box;
        box.reserve(b.shape.size());
        for (size_t d = 0; d < b.shape.size(); ++d) {
            ir::Interval r = indices ? rangeOf((*indices)[d], scope) : ir::Interval{};
            std::optional<int64_t> dim = ir::constInt(b.shape[d]);
            if (!indices || !r.bounded()) r = {0, dim ? *dim - 1 : ir::Interval::kMax};
            box.push_back(r);
        }
        Event e{kind, &b, 0, 0, std::move(box), span, {}};
        e.atomic = atomic;
        push(std::move(e));
    }

    // A parallel nest's shared accesses, each as the box its whole iteration space touches.
    void parallelAccesses(const ir::For &f) {
        if (!recordsAccesses()) return;
        ParallelNest nest = parallelNest(f);
        ir::BoundsScope scope;
        for (size_t d = 0; d < nest.vars.size(); ++d) scope.bind(nest.vars[d].get(), {0, nest.extents[d] - 1});
        ir::forEachStmt(nest.body, [&](const Stmt &s) {
            if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) scope.bind(l->var.get(), ir::boundsOf(evaluate(l->value), scope));
        });
        ir::forEachEffect(nest.body, [&](const Stmt &s, const ir::Effects &fx) {
            for (const ir::Access &a : fx.accesses) {
                if (a.writes()) element(*a.buffer, a.indices, Event::Write, s->span, scope, a.atomic);
                if (a.reads()) element(*a.buffer, a.indices, Event::Read, f.span, scope, a.atomic);
            }
        });
    }

    // The shared accesses of effects `fx` of a statement at `span`.
    void accesses(const ir::Effects &fx, SourceRange span) {
        for (const ir::Access &a : fx.accesses) {
            Event::Kind kind = a.writes() ? Event::Write : Event::Read;
            if (a.region) region(*a.region, kind, span, a.atomic);
            else element(*a.buffer, a.indices, kind, span, {}, a.atomic);
        }
    }
    // Whether the block takes a branch on run-time condition `cond`.
    bool taken(const Expr &cond) {
        Condition c = conditionOf(cond);
        if (std::none_of(conditions.begin(), conditions.end(), [&](const Condition &x) { return x.key == c.key; })) conditions.push_back(c);
        return ways_.holds(c.key) != c.negated;
    }

    const ir::Kernel &kernel_;
    const ir::Uniformity &uniformity_;
    int64_t group_;
    int64_t rank_;   // the block's rank in its cluster
    int64_t trips_;
    const BranchWays &ways_;
    std::optional<BlockIndex> block_;
    bool blockHidden_ = false;   // evaluating as if the block were unknown (noteBlockChoice)
    std::set<const ir::Seq *> blockSequences_;   // where the block meets at the edges of a run of roles
    std::vector<std::pair<ir::VarRef, Expr>> env_;
    std::map<const ir::BufferNode *, Expr> registers_;   // one-element registers (vars) with a known value
    std::vector<std::pair<Expr, int64_t>> assumedExtents_;   // see AssumedExtents
    LoopValues loops_;
    static inline const std::string kWhile = "while";
    // loops_ as the events keep them, copied when an event of the iteration
    // needs it (most iterations of long loops record none) and written out
    // only when a problem names the event.
    std::shared_ptr<const LoopValues> when_;
    void loopsChanged() { when_ = nullptr; }
    // A statement's own effects, worked out once: the run meets it in every iteration.
    std::map<const ir::StmtNode *, ir::Effects> effects_;
    const ir::Effects &effectsOf(const Stmt &s) {
        auto it = effects_.find(s.get());
        if (it == effects_.end()) it = effects_.emplace(s.get(), ir::ownEffects(s)).first;
        return it->second;
    }
    bool inRole_ = false;
    int64_t roleFirstGroup_ = 0;
    bool oneThread_ = false;    // inside an Elect: arrivals are one thread's
    std::vector<std::vector<Event>> wgmmaGroups_;   // the shared reads of the wgmma groups in flight, oldest first
    int64_t accessBlock_;       // the block whose shared memory the accesses being recorded touch
};

// ------------------------------------------------------------ simulation

struct Problem {
    SourceRange where;
    std::string message;
    std::vector<std::pair<SourceRange, std::string>> notes;
};

std::string describe(const Event &e, int64_t agent) {
    std::string s = currentAgents.agent(agent);
    if (e.when && !e.when->empty()) s += " (" + loopText(*e.when) + ")";
    return s;
}

// 'name[i]' of a barrier event, with its block when a cluster's blocks run together.
std::string barrierText(const Event &e) {
    std::string s = "'" + e.buffer->name + "[" + std::to_string(e.element) + "]'";
    if (currentAgents.blocks > 1 || e.block != 0) s += " of block " + std::to_string(e.block);
    return s;
}

class Simulator {
public:
    Simulator(const std::vector<std::vector<Event>> &events, const ir::Kernel &k) : events_(events), kernel_(k) {
        // Shared buffers one block accesses in another's shared memory (the
        // CTA pair's MMAs, a multicast, copy_cluster(dst_block)): no block
        // barrier orders one block's accesses before another's, so theirs
        // are followed outside roles too.
        if (currentAgents.blocks > 1)
            for (size_t a = 0; a < events_.size(); ++a)
                for (const Event &e : events_[a]) {
                    if ((e.kind == Event::Read || e.kind == Event::Write) && e.block != currentAgents.blockOf(static_cast<int64_t>(a)))
                        crossBlock_.insert(e.buffer);
                    loads_ = loads_ || e.byLoad;
                }
        // The phase state each barrier event works on, found once here
        // rather than looked up at every step of every schedule: by buffer,
        // element and block, for the events that name an existing one (the
        // others are skipped or reported before they reach a state).
        std::unordered_map<std::pair<const ir::BufferNode *, int64_t>, uint32_t, BarrierKeyHash> index;
        stateOf_.resize(events_.size());
        for (size_t a = 0; a < events_.size(); ++a) {
            stateOf_[a].assign(events_[a].size(), 0);
            for (size_t i = 0; i < events_[a].size(); ++i) {
                const Event &e = events_[a][i];
                bool onBarrier = e.kind == Event::Arrive || e.kind == Event::Expect || e.kind == Event::Land || e.kind == Event::Wait;
                if (!onBarrier || e.element < 0 || e.element >= static_cast<int64_t>(e.buffer->arriveCounts.size()) || e.block < 0 ||
                    e.block >= currentAgents.blocks)
                    continue;
                auto [it, added] = index.emplace(std::make_pair(e.buffer, e.element * currentAgents.blocks + e.block), static_cast<uint32_t>(stateBarriers_.size()));
                if (added) stateBarriers_.push_back({e.buffer, e.element});
                stateOf_[a][i] = it->second;
            }
        }
    }

    // Runs with `order`: the agent preferred while it can progress (-1: one event per agent in turn).
    std::optional<Problem> run(int64_t preferred) {
        size_t G = events_.size();
        pc_.assign(G, 0);
        clocks_.assign(G, newClock());
        mmaStamp_.assign(G, 0);
        loadStamp_.assign(G, 0);
        // An agent's own count starts at 1, what the others know of it at 0:
        // its first access is ordered before none of theirs.
        for (size_t g = 0; g < G; ++g) clocks_[g][g] = 1;
        barriers_.assign(stateBarriers_.size(), BarrierState{});
        for (size_t i = 0; i < stateBarriers_.size(); ++i) {
            BarrierState &s = barriers_[i];
            s.expected = s.pending = stateBarriers_[i].first->arriveCounts[static_cast<size_t>(stateBarriers_[i].second)];
            s.pendingClock = newClock();
        }
        accesses_.clear();
        serial_ = 0;
        asyncRecorded_ = false;
        while (true) {
            bool progressed = false;
            if (preferred >= 0) {
                for (size_t k = 0; k < G && !progressed; ++k) {
                    size_t g = (static_cast<size_t>(preferred) + k) % G;
                    while (true) {
                        std::optional<bool> stepped = step(g);
                        if (problem_) return problem_;
                        if (!stepped || !*stepped) break;
                        progressed = true;
                    }
                }
            } else {
                for (size_t g = 0; g < G; ++g) {
                    std::optional<bool> stepped = step(g);
                    if (problem_) return problem_;
                    if (stepped && *stepped) progressed = true;
                }
            }
            if (releaseSyncAll()) progressed = true;
            if (releaseMeets()) progressed = true;
            if (currentAgents.blocks > 1 && releaseClusterMeet()) progressed = true;
            bool done = true;
            for (size_t g = 0; g < G; ++g) done = done && pc_[g] >= events_[g].size();
            if (done) return std::nullopt;
            if (!progressed) return deadlock();
        }
    }

private:
    struct BarrierState {
        int64_t expected = 0, pending = 0, completed = 0;
        int64_t tx = 0;   // loads whose bytes the phase expects and that have not landed (negative: landed first)
        Clock pendingClock;
        Clock phaseClock;   // the last completed phase's
    };
    // A recorded access: its agent's own clock component at it is all the
    // ordering test needs (a later access of another agent is ordered after
    // it when that agent knows this stamp); `serial` counts accesses across
    // agents, so that a race names the earliest access it conflicts with.
    struct Access {
        int64_t stamp;
        uint64_t serial;
        const Event *event;
    };
    // The accesses of one buffer by agent, in stamp order: those of agent h
    // another agent g does not know of yet are the suffix above clock[h].
    struct Accesses {
        std::vector<std::vector<Access>> byGroup;
        std::vector<size_t> pruneAt;
    };

    // The state of the barrier phase agent g's next event is on.
    BarrierState &barrier(size_t g) { return barriers_[stateOf_[g][pc_[g]]]; }
    // The phase completes once every arrival and every expected load's bytes have come.
    void completeIfDone(BarrierState &b) {
        if (b.pending != 0 || b.tx != 0) return;
        ++b.completed;
        std::swap(b.phaseClock, b.pendingClock);
        b.pendingClock.assign(slots(), 0);
        b.pending = b.expected;
    }

    // One event of agent g: true if it ran, false if it blocks, nullopt when the agent is done.
    std::optional<bool> step(size_t g) {
        if (pc_[g] >= events_[g].size()) return std::nullopt;
        const Event &e = events_[g][pc_[g]];
        Clock &clock = clocks_[g];
        switch (e.kind) {
        case Event::SyncAll: return false;       // released by releaseSyncAll
        case Event::Meet: return false;          // released by releaseMeets
        case Event::ClusterMeet: return false;   // released by releaseClusterMeet
        case Event::Arrive: {
            if (!onBarrier(e, g)) return false;
            if (e.element < 0) return skip(g);
            BarrierState &b = barrier(g);
            b.pending -= e.arrivals;
            join(b.pendingClock, clock);
            // A commit: the agent's MMAs so far complete before this arrival.
            if (e.byMma) b.pendingClock[mmaSlot(g)] = std::max(b.pendingClock[mmaSlot(g)], mmaStamp_[g]);
            if (b.pending < 0) {
                problem_ = Problem{e.span,
                                   barrierText(e) + " receives more arrivals in one phase than its arrive count of " + std::to_string(b.expected) +
                                       ": " + describe(e, g) + " brings " + std::to_string(e.arrivals) + " more when only " +
                                       std::to_string(b.pending + e.arrivals) + " are missing",
                                   {}};
                return false;
            }
            completeIfDone(b);
            break;
        }
        case Event::Expect:
        case Event::Land: {
            if (!onBarrier(e, g)) return false;
            if (e.element < 0) return skip(g);
            BarrierState &b = barrier(g);
            if (e.kind == Event::Expect) {
                b.tx += e.arrivals;
            } else {
                // The bytes land after the writes of the agent's loads so far
                // (not its own program's accesses: complete_tx releases none).
                b.tx -= e.arrivals;
                if (loads_) b.pendingClock[loadSlot(g)] = std::max(b.pendingClock[loadSlot(g)], loadStamp_[g]);
            }
            completeIfDone(b);
            break;
        }
        case Event::Wait: {
            if (!onBarrier(e, g)) return false;
            if (e.element < 0 || e.parity < 0) return skip(g);
            BarrierState &b = barrier(g);
            if (b.completed % 2 == e.parity) return false;   // that phase has not completed
            if (b.completed > 0) join(clock, b.phaseClock);
            break;
        }
        case Event::Read:
        case Event::Write: {
            // Only roles' accesses of each other are ordered by the protocol
            // alone: insert-syncs puts a barrier between the block's own
            // code and any access it conflicts with. Not so between blocks,
            // nor with the tcgen05 MMAs an agent issued, which access their
            // operands until a phase their commit completes: the block's own
            // code is compared with those (and records its own MMAs').
            bool cross = !crossBlock_.empty() && crossBlock_.count(e.buffer) > 0;
            const bool blockCode = !e.inRole && !cross && !e.byMma && !e.byLoad;
            if (blockCode && !asyncRecorded_) break;
            if (!e.inRole && !cross && (e.byMma || e.byLoad)) asyncRecorded_ = true;
            std::vector<Accesses> &byBlock = accesses_[e.buffer];
            if (byBlock.size() <= static_cast<size_t>(e.block)) byBlock.resize(static_cast<size_t>(e.block) + 1);
            Accesses &seen = byBlock[static_cast<size_t>(e.block)];
            if (seen.byGroup.empty()) {
                seen.byGroup.resize(slots());
                seen.pruneAt.assign(slots(), 256);
            }
            const Access *race = nullptr;
            size_t raceGroup = 0;
            const size_t programSlots = events_.size();
            for (size_t h = blockCode ? programSlots : 0; h < slots(); ++h) {
                // (The tensor core runs one thread's MMAs in the order it issued them.)
                if (h == g || (e.byMma && h == mmaSlot(g))) continue;
                const std::vector<Access> &list = seen.byGroup[h];
                if (list.empty()) continue;
                bool sameBlock = cross && h < programSlots && blockOfSlot(h) == blockOfSlot(g);
                // Ordered: what happened before this (stamps up to what g knows of h).
                auto first = std::upper_bound(list.begin(), list.end(), clock[h], [](int64_t known, const Access &a) { return known < a.stamp; });
                for (auto a = first; a != list.end(); ++a) {
                    if ((a->event->kind == Event::Read && e.kind == Event::Read) || (a->event->atomic && e.atomic)) continue;
                    // One block's own code and a role of it: ordered by insert-syncs.
                    if (sameBlock && (!a->event->inRole || !e.inRole)) continue;
                    if (!overlap(a->event->box, e.box)) continue;
                    if (!race || a->serial < race->serial) race = &*a, raceGroup = h;
                    break;
                }
            }
            if (race) {
                // The MMAs an agent issued access their operands until a
                // tcgen05.commit of the agent arrives and that phase
                // completes; a TMA load writes until its bytes complete a phase.
                const size_t A = events_.size();
                bool mmas = raceGroup >= A && raceGroup < 2 * A, loads = raceGroup >= 2 * A, write = race->event->kind == Event::Write;
                std::string what = std::string(e.kind == Event::Write ? "write" : "read") + (e.byMma ? "" : "s");
                std::string other = std::string(write ? "write" : "read") + (mmas ? "" : "s");
                std::string by = e.byMma ? "the tcgen05 MMAs " + describe(e, g) + " issues" : e.byLoad ? "the TMA load " + describe(e, g) + " issues" : describe(e, g);
                std::string them = mmas    ? "the tcgen05 MMAs " + describe(*race->event, raceGroup - A) + " issued"
                                   : loads ? "the TMA load " + describe(*race->event, raceGroup - 2 * A) + " issued"
                                           : describe(*race->event, raceGroup);
                std::string until = mmas ? " (they " + std::string(write ? "write" : "read") +
                                               " it until a tcgen05.commit of theirs arrives on an mbarrier and that phase completes: wait for "
                                               "the phase before " + (e.kind == Event::Read ? "reading" : "reusing") + " the elements)"
                                  : loads ? " (it writes them until its bytes complete a phase of its mbarrier: wait for that phase before "
                                            "using the elements)"
                                          : "";
                std::string buffer = "'" + e.buffer->name + "'" + (currentAgents.blocks > 1 ? " of block " + std::to_string(e.block) : "");
                problem_ = Problem{e.span,
                                   "race on " + std::string(e.buffer->scope == ir::MemScope::TMem ? "tensor memory " : "shared buffer ") + buffer + ": " + by + " " + what + " it here while " + them + " " + other +
                                       " the same elements with no barrier phase ordering the two" + until,
                                   {{race->event->span, "the other access, by " + them}}};
                return false;
            }
            if (blockCode) break;   // ordered with the block's other code by insert-syncs
            // The MMAs' accesses are their own: only a wait on the phase a
            // later commit completes orders them, not the issuing agent's program.
            size_t slot = e.byMma ? mmaSlot(g) : e.byLoad ? loadSlot(g) : g;
            seen.byGroup[slot].push_back({e.byMma ? ++mmaStamp_[g] : e.byLoad ? ++loadStamp_[g] : clock[g], serial_++, &e});
            if (seen.byGroup[slot].size() >= seen.pruneAt[slot]) prune(seen, slot);
            break;
        }
        }
        ++clock[g];
        ++pc_[g];
        return true;
    }

    // Whether barrier event `e` of agent g names a barrier that exists (else reports it).
    bool onBarrier(const Event &e, size_t g) {
        if (e.element < static_cast<int64_t>(e.buffer->arriveCounts.size()) &&
            (e.element < 0 || static_cast<uint64_t>(e.block) < static_cast<uint64_t>(currentAgents.blocks))) [[likely]]
            return true;
        return reportMissingBarrier(e, g);
    }
    [[gnu::noinline]] bool reportMissingBarrier(const Event &e, size_t g) {
        if (e.element >= static_cast<int64_t>(e.buffer->arriveCounts.size())) {
            problem_ = Problem{e.span,
                               "barrier index " + std::to_string(e.element) + " is out of range for '" + e.buffer->name + "' (" +
                                   std::to_string(e.buffer->arriveCounts.size()) + " barriers) for " + describe(e, g),
                               {}};
            return false;
        }
        if (e.element >= 0 && (e.block < 0 || e.block >= currentAgents.blocks)) {
            problem_ = Problem{e.span,
                               barrierText(e) + " does not exist: the cluster has " + std::to_string(currentAgents.blocks) + " block" +
                                   (currentAgents.blocks == 1 ? "" : "s") + " (ranks 0 to " + std::to_string(currentAgents.blocks - 1) + "); " +
                                   describe(e, g) + " arrives on it",
                               {}};
            return false;
        }
        return true;
    }

    std::optional<bool> skip(size_t g) {
        ++pc_[g];
        return true;
    }

    // All agents of a block that are not done wait at a block barrier: they pass it together.
    bool releaseSyncAll() {
        const size_t groups = static_cast<size_t>(currentAgents.groups);
        bool any = false;
        for (size_t first = 0; first < events_.size(); first += groups) {
            const size_t end = std::min(first + groups, events_.size());
            bool all = true, some = false;
            for (size_t g = first; g < end && all; ++g) {
                if (pc_[g] >= events_[g].size()) continue;
                all = events_[g][pc_[g]].kind == Event::SyncAll;
                some = true;
            }
            if (!all || !some) continue;
            Clock joined = newClock();
            for (size_t g = first; g < end; ++g) join(joined, clocks_[g]);
            for (size_t g = first; g < end; ++g) {
                if (pc_[g] >= events_[g].size()) continue;
                clocks_[g] = joined;
                ++clocks_[g][g];
                ++pc_[g];
            }
            any = true;
        }
        return any;
    }

    // The agents of a block waiting at a named barrier pass it together
    // once as many as it joins have come.
    bool releaseMeets() {
        std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> waiting;   // by block and barrier id
        for (size_t g = 0; g < events_.size(); ++g)
            if (pc_[g] < events_[g].size() && events_[g][pc_[g]].kind == Event::Meet)
                waiting[{currentAgents.blockOf(static_cast<int64_t>(g)), events_[g][pc_[g]].barrierId}].push_back(g);
        bool any = false;
        for (const auto &[id, groups] : waiting) {
            if (static_cast<int64_t>(groups.size()) < events_[groups.front()][pc_[groups.front()]].groups) continue;
            Clock all = newClock();
            for (size_t g : groups) join(all, clocks_[g]);
            for (size_t g : groups) {
                clocks_[g] = all;
                ++clocks_[g][g];
                ++pc_[g];
            }
            any = true;
        }
        return any;
    }

    // Every agent of the cluster that is not done waits at a cluster barrier: they pass it together.
    bool releaseClusterMeet() {
        bool some = false;
        for (size_t g = 0; g < events_.size(); ++g) {
            if (pc_[g] >= events_[g].size()) continue;
            if (events_[g][pc_[g]].kind != Event::ClusterMeet) return false;
            some = true;
        }
        if (!some) return false;
        Clock all = newClock();
        for (size_t g = 0; g < events_.size(); ++g) join(all, clocks_[g]);
        for (size_t g = 0; g < events_.size(); ++g) {
            if (pc_[g] >= events_[g].size()) continue;
            clocks_[g] = all;
            ++clocks_[g][g];
            ++pc_[g];
        }
        return true;
    }

    Problem deadlock() {
        Problem p;
        auto add = [&](const Event &e, const std::string &text) {
            if (p.message.empty()) {
                p.where = e.span;
                p.message = "barrier protocol deadlock: " + text + "; no " + std::string(currentAgents.name) + " can arrive any more";
            } else {
                p.notes.push_back({e.span, "also blocked: " + text});
            }
        };
        for (size_t g = 0; g < events_.size(); ++g) {
            if (pc_[g] >= events_[g].size()) continue;
            const Event &e = events_[g][pc_[g]];
            if (e.kind == Event::Meet) {
                int64_t come = 0;
                for (size_t h = 0; h < events_.size(); ++h)
                    come += pc_[h] < events_[h].size() && events_[h][pc_[h]].kind == Event::Meet && events_[h][pc_[h]].barrierId == e.barrierId &&
                            currentAgents.blockOf(static_cast<int64_t>(h)) == currentAgents.blockOf(static_cast<int64_t>(g));
                add(e, describe(e, g) + " waits at named barrier " + std::to_string(e.barrierId) + " for " + currentAgents.of(e.groups) + ", of which " +
                           std::to_string(come) + " have come");
                continue;
            }
            if (e.kind == Event::ClusterMeet) {
                add(e, describe(e, g) + " waits at a cluster barrier for every " + std::string(currentAgents.name) + " of the cluster's " +
                           std::to_string(currentAgents.blocks) + " blocks");
                continue;
            }
            if (e.kind != Event::Wait) continue;
            const BarrierState &b = barrier(g);
            std::string text = describe(e, g) + " waits for phase parity " + std::to_string(e.parity) + " of '" + e.buffer->name + "[" +
                               std::to_string(e.element) + "]', which has completed " + std::to_string(b.completed) + " phase" +
                               (b.completed == 1 ? "" : "s") + " and has " + std::to_string(b.expected - b.pending) + " of its " +
                               std::to_string(b.expected) + " arrivals for the next";
            if (b.tx > 0) text += ", and waits for the bytes of " + std::to_string(b.tx) + " TMA load" + (b.tx == 1 ? "" : "s");
            if (b.tx < 0) text += ", and has the bytes of " + std::to_string(-b.tx) + " TMA load" + (b.tx == -1 ? "" : "s") + " that no expect_tx counted";
            add(e, text);
        }
        if (p.message.empty()) {
            p.where = kernel_.span;
            p.message = "barrier protocol deadlock: the " + std::string(currentAgents.name) + "s cannot all reach the block barrier between ws(...) regions";
        }
        return p;
    }

    const std::vector<std::vector<Event>> &events_;
    const ir::Kernel &kernel_;
    std::vector<size_t> pc_;
    std::vector<Clock> clocks_;   // per agent: a component per agent, then one per agent's MMAs (and one per agent's loads)
    std::vector<int64_t> mmaStamp_;   // per agent: its MMAs' accesses so far
    std::vector<int64_t> loadStamp_;  // per agent: its TMA loads' writes so far
    bool loads_ = false;              // some agent's TMA loads are followed (Event::byLoad): a third slot per agent
    size_t slots() const { return (loads_ ? 3 : 2) * events_.size(); }
    Clock newClock() const { return Clock(slots(), 0); }
    size_t mmaSlot(size_t g) const { return events_.size() + g; }
    size_t loadSlot(size_t g) const { return 2 * events_.size() + g; }
    int64_t blockOfSlot(size_t slot) const { return currentAgents.blockOf(static_cast<int64_t>(slot % events_.size())); }
    // By buffer and element * blocks + block.
    struct BarrierKeyHash {
        size_t operator()(const std::pair<const ir::BufferNode *, int64_t> &k) const {
            return std::hash<const void *>()(k.first) ^ (std::hash<int64_t>()(k.second) * 0x9e3779b97f4a7c15ull);
        }
    };
    std::vector<std::pair<const ir::BufferNode *, int64_t>> stateBarriers_;   // by state: the barrier array and element
    std::vector<std::vector<uint32_t>> stateOf_;                              // by agent and event: its state (barrier events)
    std::vector<BarrierState> barriers_;                                      // by state, for the schedule being run
    std::map<const ir::BufferNode *, std::vector<Accesses>> accesses_;   // by buffer, then by the block whose it is
    std::set<const ir::BufferNode *> crossBlock_;
    uint64_t serial_ = 0;
    bool asyncRecorded_ = false;   // the block's own code issued MMAs (or loads) whose accesses are recorded

    // An access every other agent has synchronised past (their clocks have
    // seen it) cannot race with anything to come: drop it, so that the check
    // of each access looks at the unordered window only.
    // Drops agent g's accesses of one buffer that every other agent already
    // knows of (an agent that is done accesses nothing more).
    void prune(Accesses &accesses, size_t g) {
        int64_t known = std::numeric_limits<int64_t>::max();
        for (size_t h = 0; h < clocks_.size(); ++h)
            if (h != g && pc_[h] < events_[h].size()) known = std::min(known, clocks_[h][g]);
        std::vector<Access> &list = accesses.byGroup[g];
        auto first = std::upper_bound(list.begin(), list.end(), known, [](int64_t k, const Access &a) { return k < a.stamp; });
        list.erase(list.begin(), first);
        accesses.pruneAt[g] = std::max<size_t>(256, 2 * list.size());
    }
    std::optional<Problem> problem_;
};

bool hasProtocol(const ir::Kernel &k) {
    bool found = false;
    ir::forEachStmt(k.body, [&](const Stmt &s) {
        found = found || s->kind == ir::StmtKind::WarpSpecialize || s->kind == ir::StmtKind::BarrierArrive || s->kind == ir::StmtKind::BarrierWait;
    });
    return found;
}

bool usesTensorMemory(const ir::Kernel &k) {
    bool found = false;
    ir::forEachStmt(k.body, [&](const Stmt &s) {
        if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) found = found || a->buffer->scope == ir::MemScope::TMem;
    });
    return found;
}

bool hasDynamicLoop(const ir::Kernel &k) {
    bool found = false;
    ir::forEachStmt(k.body, [&](const Stmt &s) {
        if (const ir::For *f = ir::as<ir::For>(s); f && f->forKind != ir::ForKind::Parallel && !ir::constInt(ir::simplify(f->extent))) found = true;
        if (ir::as<ir::While>(s)) found = true;
    });
    return found;
}

// The ways to try the kernel's branches on run-time conditions (alike in
// every thread): with up to three such conditions (as its unrolled run meets
// them), every combination; with more, all taken and none taken. In a
// cluster, every block goes the same way at a condition written alike in
// them (one that reads the block's rank is a condition of each block).
// The first way takes every branch, as `all` does: `walks` keeps the runs
// made with `all` to find the conditions (by rank, then group), which are
// that way's runs, so the check does not walk them again.
std::vector<BranchWays> branchWays(const ir::Kernel &kernel, const ir::Uniformity &uniformity, int64_t trips,
                                   const std::optional<BlockIndex> &cluster, const BranchWays &all, std::vector<Unroller> &walks) {
    std::vector<Condition> keys;
    walks.clear();
    for (int64_t r = 0; r < currentAgents.blocks; ++r)
        for (int64_t g = 0; g < currentAgents.groups; ++g) {
            std::optional<BlockIndex> block;
            if (cluster) block = blockOfRank(kernel, *cluster, r);
            Unroller &u = walks.emplace_back(kernel, uniformity, g, r, trips, all, block);
            u.run(kernel.body);
            for (const Condition &c : u.conditions)
                if (std::none_of(keys.begin(), keys.end(), [&](const Condition &x) { return x.key == c.key; })) keys.push_back(c);
        }
    if (keys.empty()) return {all};
    BranchWays none;
    none.otherwise = false;
    if (keys.size() > 3) return {all, none};
    std::vector<BranchWays> out;
    for (size_t mask = 0; mask < (size_t(1) << keys.size()); ++mask) {
        BranchWays w;
        for (size_t i = 0; i < keys.size(); ++i) {
            w.ways[keys[i].key] = (mask >> i & 1) == 0;
            w.conditions[keys[i].key] = keys[i];
        }
        out.push_back(std::move(w));
    }
    return out;
}

// The grid's size in blocks per dimension, when constant.
std::optional<BlockIndex> gridDims(const ir::Kernel &kernel) {
    BlockIndex dims{1, 1, 1};
    for (size_t d = 0; d < kernel.grid.size() && d < 3; ++d) {
        std::optional<int64_t> n = ir::constInt(ir::simplify(kernel.grid[d]));
        if (!n || *n <= 0) return std::nullopt;
        dims[d] = *n;
    }
    return dims;
}

// A condition of the block index (with a block's rank known), and the rank
// of the block it is a condition of.
using BlockCondition = std::pair<Expr, int64_t>;

// The grid's clusters (its blocks, without a cluster) in classes that go the
// same way at `conditions` (expressions of the block index: a persistent
// loop's `tile < tiles` for each wave, each for the block of its rank), each
// class as the first blocks of its clusters in linear order. None when that
// cannot be told: a grid of run-time size (or more than 65,536 blocks, or not
// whole clusters), a condition that depends on more than the block index, or
// more than 8 classes.
std::optional<std::vector<std::vector<BlockIndex>>> blockClasses(const ir::Kernel &kernel, const std::vector<BlockCondition> &conditions) {
    constexpr int64_t kMaxBlocks = 65536;
    constexpr size_t kMaxClasses = 8;
    std::optional<BlockIndex> dims = gridDims(kernel);
    if (!dims || (*dims)[0] * (*dims)[1] * (*dims)[2] > kMaxBlocks) return std::nullopt;
    BlockIndex clusters{1, 1, 1};
    for (size_t d = 0; d < 3; ++d) {
        if ((*dims)[d] % kernel.cluster[d] != 0) return std::nullopt;
        clusters[d] = (*dims)[d] / kernel.cluster[d];
    }
    std::map<std::vector<int64_t>, size_t> classOf;
    std::vector<std::vector<BlockIndex>> classes;
    for (int64_t linear = 0; linear < clusters[0] * clusters[1] * clusters[2]; ++linear) {
        BlockIndex origin{linear % clusters[0] * kernel.cluster[0], linear / clusters[0] % clusters[1] * kernel.cluster[1],
                          linear / (clusters[0] * clusters[1]) * kernel.cluster[2]};
        std::vector<int64_t> way;
        for (const auto &[c, rank] : conditions) {
            std::optional<int64_t> v = valueInBlock(c, blockOfRank(kernel, origin, rank));
            if (!v) return std::nullopt;
            way.push_back(*v != 0);
        }
        auto [it, added] = classOf.emplace(way, classes.size());
        if (added) {
            if (classes.size() == kMaxClasses) return std::nullopt;
            classes.emplace_back();
        }
        classes[it->second].push_back(origin);
    }
    return classes;
}

std::string blockText(const BlockIndex &b) {
    return "(" + std::to_string(b[0]) + ", " + std::to_string(b[1]) + ", " + std::to_string(b[2]) + ")";
}

} // namespace

ir::Kernel checkBarriers(const ir::Kernel &given, PassContext &ctx) {
    if (!hasProtocol(given)) return given;
    // The simulation counts a phase's transaction bytes in loads (Expect,
    // Land); bytes the program expects itself, and cluster-launch-control
    // answers landing on its barriers, are not modeled yet.
    SourceRange unmodeled;
    ir::forEachStmt(given.body, [&](const Stmt &s) {
        if (!unmodeled.valid() && (ir::as<ir::BarrierExpectTx>(s) || ir::as<ir::ClcTryCancel>(s))) unmodeled = s->span;
    });
    if (unmodeled.valid()) {
        ctx.diags.warning(unmodeled, "the barrier protocol of '" + given.name + "' is not checked: the check does not model transaction bytes the program "
                                     "expects itself (barrier_arrive_expect_tx) or cluster-launch-control answers yet",
                          "unchecked-protocol");
        return given;
    }
    // num_sms() is the device's, known at launch: the check assumes the
    // target's flagship count (a persistent kernel's waves then have a size).
    std::optional<ir::Kernel> assumed;
    for (const ir::Param &p : given.params) {
        if (p.kind != ir::ParamKind::SmCount) continue;
        const std::vector<std::pair<ir::VarRef, ir::Expr>> count{{p.var, ir::intImm(ctx.target.smCount)}};
        assumed = given;
        assumed->body = ir::substitute(given.body, count);
        for (ir::Expr &g : assumed->grid) g = ir::simplify(ir::substitute(g, count));
    }
    const ir::Kernel &kernel = assumed ? *assumed : given;
    currentAgents = Agents{};
    ir::forEachStmt(kernel.body, [&](const Stmt &s) {
        if (const ir::WarpSpecialize *w = ir::as<ir::WarpSpecialize>(s); w && !w->wholeWarpGroups()) currentAgents = Agents{32, "warp"};
    });
    // A block of fewer threads than an agent is one agent of them all; a
    // last, partial warp group is an agent of its threads.
    currentAgents.blockThreads = std::max<int64_t>(1, kernel.threads);
    const int64_t groups = std::max<int64_t>(1, (kernel.threads + currentAgents.threads - 1) / currentAgents.threads);
    currentAgents.groups = groups;
    // The blocks of a cluster arrive on each other's barriers and access
    // each other's shared memory: one cluster's blocks run together.
    constexpr int64_t kMaxClusterBlocks = 16;
    const int64_t clusterBlocks = std::max<int64_t>(1, kernel.cluster[0] * kernel.cluster[1] * kernel.cluster[2]);
    if (clusterBlocks > kMaxClusterBlocks) {
        ctx.diags.warning(kernel.span, "the barrier protocol of '" + kernel.name + "' is not checked: its cluster has more than " +
                                           std::to_string(kMaxClusterBlocks) + " blocks",
                          "unchecked-protocol");
        return given;
    }
    currentAgents.blocks = clusterBlocks;
    if (clusterBlocks > 1)
        ir::forEachExpr(kernel.body, [&](const Expr &e) {
            const ir::SpecialReg *r = ir::as<ir::SpecialReg>(e);
            if (r && r->special == ir::SpecialKind::ClusterCtaRank) currentAgents.readsRank = true;
        });
    const int64_t agents = clusterBlocks * groups;
    std::vector<int64_t> trips = hasDynamicLoop(kernel) ? std::vector<int64_t>{1, 2, 5} : std::vector<int64_t>{1};
    ir::Uniformity uniformity(kernel.body);
    size_t totalEvents = 0, schedules = 0;
    // Runs the protocol of one cluster (the one whose first block is
    // `cluster`, or any when none; without a cluster, one block): false
    // when it was reported or cannot be checked (`unknown` then holds the
    // branches on run-time conditions with barrier operations).
    std::vector<SourceRange> unknown;
    std::vector<BlockCondition> unknownConditions;
    std::vector<std::pair<BlockCondition, int64_t>> blockChoices;   // (condition, rank), value
    auto check = [&](const std::optional<BlockIndex> &cluster) {
        const BranchWays all;
        std::vector<Unroller> walks;   // the first way's runs, made by branchWays
        for (int64_t t : trips) {
            const std::vector<BranchWays> waysToTry = branchWays(kernel, uniformity, t, cluster, all, walks);
            for (size_t w = 0; w < waysToTry.size(); ++w) {
                const BranchWays &ways = waysToTry[w];
                std::vector<std::vector<Event>> events;
                for (int64_t r = 0; r < clusterBlocks; ++r)
                    for (int64_t g = 0; g < groups; ++g) {
                        std::optional<BlockIndex> block;
                        if (cluster) block = blockOfRank(kernel, *cluster, r);
                        const size_t agent = static_cast<size_t>(r * groups + g);
                        std::optional<Unroller> walked;
                        if (w != 0 || agent >= walks.size()) {
                            walked.emplace(kernel, uniformity, g, r, t, ways, block);
                            walked->run(kernel.body);
                        }
                        Unroller &u = walked ? *walked : walks[agent];
                        if (u.overflow) {
                            ctx.diags.warning(kernel.span, "the barrier protocol of '" + kernel.name + "' is not checked: it runs more than " +
                                                               std::to_string(kMaxEvents) + " barrier and shared-memory operations, or " +
                                                               std::to_string(kMaxSteps) + " statements, per " + std::string(currentAgents.name),
                                              "unchecked-protocol");
                            return false;
                        }
                        // Arrivals that may or may not happen cannot be simulated:
                        // no verdict at all (the conditions of the other blocks
                        // of the cluster, of their ranks, are gathered too).
                        if (!u.unknownBranches.empty()) {
                            unknown.insert(unknown.end(), u.unknownBranches.begin(), u.unknownBranches.end());
                            for (const Expr &c : u.unknownConditions) unknownConditions.push_back({c, r});
                            break;
                        }
                        for (const auto &[e, v] : u.blockChoices) blockChoices.push_back({{e, r}, v});
                        totalEvents += u.events.size();
                        events.push_back(std::move(u.events));
                    }
                if (!unknown.empty()) return false;
                Simulator sim(events, kernel);
                for (int64_t order = -1; order < agents; ++order) {
                    ++schedules;
                    if (std::optional<Problem> p = sim.run(order)) {
                        Diagnostic d{Severity::Error, p->where, p->message, {}, {}};
                        for (const auto &[where, text] : p->notes) d.note(where, text);
                        if (cluster && clusterBlocks > 1) d.note({}, "in the cluster of blocks " + blockText(*cluster) + " to " +
                                                                         blockText(blockOfRank(kernel, *cluster, clusterBlocks - 1)));
                        else if (cluster) d.note({}, "in block " + blockText(*cluster));
                        if (t != 1 || trips.size() > 1) d.note({}, "with loops of run-time length run " + std::to_string(t) + " time" + (t == 1 ? "" : "s"));
                        if (!ways.ways.empty() || !ways.otherwise) d.note({}, ways.describe());
                        ctx.diags.report(std::move(d));
                        return false;
                    }
                }
            }
        }
        return true;
    };
    // Branches with barrier operations on the block index (a persistent
    // loop's last wave, which some blocks skip) go each block's own way. The
    // grid's blocks (its clusters, with a cluster) fall into classes that go
    // alike at every such branch; the check runs one of each, then makes
    // sure every decision the block index made in that run (a branch, a
    // loop's bounds, nested ones included) is the same in every block of
    // its class (in the block of the same rank of every cluster of it).
    std::vector<BlockIndex> representatives;
    size_t totalMembers = 0;
    if (!check(std::nullopt)) {
        if (unknown.empty()) return given;   // reported, or too long to run
        std::optional<std::vector<std::vector<BlockIndex>>> classes = blockClasses(kernel, unknownConditions);
        bool checked = classes.has_value();
        for (size_t c = 0; checked && c < classes->size(); ++c) {
            const std::vector<BlockIndex> &members = (*classes)[c];
            unknown.clear();
            blockChoices.clear();
            if (!check(members.front())) {
                if (unknown.empty()) return given;   // reported
                checked = false;
                break;
            }
            std::map<std::string, std::pair<BlockCondition, int64_t>> distinct;
            for (const auto &[choice, v] : blockChoices)
                distinct.emplace(std::to_string(choice.second) + ": " + ir::toString(choice.first) + " = " + std::to_string(v), std::make_pair(choice, v));
            for (const auto &[key, choice] : distinct)
                for (const BlockIndex &origin : members)
                    if (valueInBlock(choice.first.first, blockOfRank(kernel, origin, choice.first.second)) != choice.second) checked = false;
            representatives.push_back(members.front());
            totalMembers += members.size();
        }
        if (!checked) {
            std::set<std::string> warned;   // a branch in a loop is met once per iteration
            for (const SourceRange &r : unknown)
                if (warned.insert(r.lineColumn()).second)
                    ctx.diags.warning(r, "the barrier protocol of '" + kernel.name +
                                             "' is not checked: barrier operations here depend on a condition known only at run time",
                                      "unchecked-protocol");
            if (unknown.empty())
                ctx.diags.warning(kernel.span, "the barrier protocol of '" + kernel.name +
                                                   "' is not checked: barrier operations depend on the block index in ways that no few blocks stand for",
                                  "unchecked-protocol");
            return given;
        }
    }
    Decision d;
    d.where = kernel.span;
    d.op = "barrier protocol of '" + kernel.name + "'";
    d.choice = "checked";
    std::string partial;   // a block of fewer threads than its agents would have
    if (kernel.threads % currentAgents.threads != 0)
        partial = std::string(" (") + (groups == 1 ? "of " : "the last of ") + std::to_string(currentAgents.threadsOf(groups - 1)) + " threads)";
    d.why = (clusterBlocks > 1 ? std::to_string(clusterBlocks) + " blocks of a cluster x " : std::string()) + currentAgents.of(groups) + partial + ", " +
            std::to_string(totalEvents) + " barrier and shared-memory operations, " + std::to_string(schedules) +
            " schedules: no deadlock, no over-arrival, no unordered shared" + (usesTensorMemory(kernel) ? " or tensor memory" : "") + " access";
    if (assumed)
        d.details.push_back("run with num_sms() = " + std::to_string(ctx.target.smCount) + ", the SMs of " + ctx.target.name +
                            "'s flagship GPU (templates/targets.yaml: sm_count); a launch passes the device's own");
    if (clusterBlocks > 1)
        d.details.push_back("the " + std::to_string(clusterBlocks) +
                            " blocks of a cluster run together: each knows its rank (block_rank_in_cluster()), arrives on the barriers of the "
                            "blocks it names and accesses their shared memory");
    if (!representatives.empty()) {
        std::string which;
        for (const BlockIndex &b : representatives) which += (which.empty() ? "" : ", ") + blockText(b);
        const bool one = representatives.size() == 1;
        if (clusterBlocks > 1)
            d.details.push_back("barrier operations depend on the block index (a persistent loop's last wave, say): the " + std::to_string(totalMembers) +
                                " clusters fall into " + std::to_string(representatives.size()) + " class" + (one ? "" : "es") +
                                " that take the same branches and loop bounds; run for the cluster" + (one ? " of block " : "s of blocks ") + which +
                                ", one of each");
        else
            d.details.push_back("barrier operations depend on the block index (a persistent loop's last wave, say): the " + std::to_string(totalMembers) +
                                " blocks fall into " + std::to_string(representatives.size()) + " class" + (one ? "" : "es") +
                                " that take the same branches and loop bounds; run for block" + (one ? " " : "s ") + which + ", one of each");
    }
    // The roles, as the simulation ran them (a branch on the thread index with tile work is one too).
    ir::forEachStmt(kernel.body, [&](const Stmt &x) {
        const ir::WarpSpecialize *w = ir::as<ir::WarpSpecialize>(x);
        if (!w) return;
        std::string warps = w->warps.size() == 1 ? "warp " + std::to_string(w->warps.front())
                                                 : "warps " + std::to_string(w->warps.front()) + ".." + std::to_string(w->warps.back());
        d.details.push_back("role at " + w->span.lineColumn() + ": " + warps + " (threads " + std::to_string(w->firstThread()) + ".." +
                            std::to_string(w->firstThread() + w->threads() - 1) + ")");
    });
    ctx.explain.record(std::move(d));
    return given;
}

} // namespace tilet
