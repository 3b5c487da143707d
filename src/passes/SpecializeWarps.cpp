// SpecializeWarps.cpp -- see SpecializeWarps.h.
//
// 1. Find the kernel's pipelined loops; only a kernel with exactly one, no
//    ws(...) of its own and whole warp groups qualifies.
// 2. Split the loop body into producers (global->shared copies TMA can
//    load) and consumers; every other global->shared copy disqualifies it.
// 3. Check that the producers can run in their own role: the loops and
//    branches around the loop (a persistent loop over tiles) are ones the
//    producer can repeat (serial, with bounds and conditions that read no
//    memory and no thread index), the bindings it needs likewise, and the
//    consumer side holds nothing a role cannot run yet.
// 4. Rewrite into the two roles (see the header) and record the decision.
#include "passes/SpecializeWarps.h"

#include "ir/Analysis.h"
#include "ir/Effects.h"
#include "ir/Uniformity.h"
#include "ir/Visitor.h"
#include "passes/CopyFacts.h"
#include "passes/MultiVersion.h"
#include "passes/RejectUnimplemented.h"

#include <algorithm>
#include <functional>
#include <set>

namespace tilet {

namespace {

// The first rng_init whose seed, subsequence or offset reads threadIdx.x
// itself (rng_init's default subsequence: a program's own thread indices are
// Kernel::bindsThreadIndices).
std::optional<SourceRange> seedsFromThreadIndex(const ir::Stmt &body) {
    std::optional<SourceRange> found;
    ir::forEachStmt(body, [&](const ir::Stmt &s) {
        const ir::RngInit *init = ir::as<ir::RngInit>(s);
        if (!init || found) return;
        for (const ir::Expr &e : {init->seed, init->sequence, init->offset})
            ir::forEachExpr(e, [&](const ir::Expr &x) {
                if (const ir::SpecialReg *r = ir::as<ir::SpecialReg>(x); r && r->special == ir::SpecialKind::ThreadIdx) found = init->span;
            });
    });
    return found;
}

using ir::Expr;
using ir::Stmt;

constexpr int64_t kGroupThreads = ir::WarpSpecialize::kGroupThreads;

std::vector<const ir::For *> pipelinedLoops(const Stmt &body) {
    std::vector<const ir::For *> loops;
    ir::forEachStmt(body, [&](const Stmt &s) {
        const ir::For *f = ir::as<ir::For>(s);
        if (f && f->pipeline && f->pipeline->stages > 0) loops.push_back(f);
    });
    return loops;
}

// The statements from `s` down to `loop`, through sequences, bindings,
// allocations, loops and branches (qualify() says which of them a producer
// role can repeat). False when `loop` is elsewhere (inside a role, say).
bool pathTo(const Stmt &s, const ir::For *loop, std::vector<Stmt> &path) {
    if (!s) return false;
    path.push_back(s);
    if (s.get() == loop) return true;
    if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
        for (const Stmt &x : q->stmts)
            if (pathTo(x, loop, path)) return true;
    } else if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
        if (pathTo(l->body, loop, path)) return true;
    } else if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) {
        if (pathTo(a->body, loop, path)) return true;
    } else if (const ir::For *f = ir::as<ir::For>(s)) {
        if (pathTo(f->body, loop, path)) return true;
    } else if (const ir::IfThenElse *i = ir::as<ir::IfThenElse>(s)) {
        if (pathTo(i->thenBody, loop, path) || pathTo(i->elseBody, loop, path)) return true;
    } else if (const ir::While *w = ir::as<ir::While>(s)) {
        if (pathTo(w->body, loop, path)) return true;
    }
    path.pop_back();
    return false;
}

bool readsThreadIndex(const Expr &e) {
    bool found = false;
    ir::forEachExpr(e, [&](const Expr &x) {
        const ir::SpecialReg *r = ir::as<ir::SpecialReg>(x);
        found = found || (r && r->special == ir::SpecialKind::ThreadIdx);
    });
    return found;
}

// !cond, a comparison turned around where it is one.
Expr negation(const Expr &cond) {
    if (const ir::Binary *b = ir::as<ir::Binary>(cond)) {
        std::optional<ir::BinaryOp> inverse;
        switch (b->op) {
        case ir::BinaryOp::Lt: inverse = ir::BinaryOp::Ge; break;
        case ir::BinaryOp::Le: inverse = ir::BinaryOp::Gt; break;
        case ir::BinaryOp::Gt: inverse = ir::BinaryOp::Le; break;
        case ir::BinaryOp::Ge: inverse = ir::BinaryOp::Lt; break;
        case ir::BinaryOp::Eq: inverse = ir::BinaryOp::Ne; break;
        case ir::BinaryOp::Ne: inverse = ir::BinaryOp::Eq; break;
        default: break;
        }
        if (inverse && !isFloat(b->a->dtype) && !isFloat(b->b->dtype)) return ir::binary(*inverse, b->a, b->b, cond->span);
    }
    return std::make_shared<ir::Unary>(DType::Bool, ir::UnaryOp::Not, cond, cond->span);
}

bool loadsMemory(const Expr &e) {
    bool found = false;
    ir::forEachExpr(e, [&](const Expr &x) { found = found || ir::as<ir::Load>(x); });
    return found;
}

// Replaces one statement (by identity) with another.
class Replacer : public ir::Mutator {
public:
    Replacer(const ir::StmtNode *target, Stmt replacement) : target_(target), replacement_(std::move(replacement)) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        if (self.get() == target_) return replacement_;
        return ir::Mutator::mutateFor(self, n);
    }

private:
    const ir::StmtNode *target_;
    Stmt replacement_;
};

std::set<std::string> bufferNames(const ir::Kernel &k) {
    std::set<std::string> names;
    for (const ir::Param &p : k.params) names.insert(p.name());
    ir::forEachStmt(k.body, [&](const Stmt &s) {
        if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) names.insert(a->buffer->name);
    });
    return names;
}

std::string unusedName(const std::set<std::string> &taken, const std::string &base) {
    if (!taken.count(base)) return base;
    for (int i = 1;; ++i)
        if (!taken.count(base + "_" + std::to_string(i))) return base + "_" + std::to_string(i);
}

// The first barrier that `body` waits for by parity, outside nested serial
// loops and ws(...) roles, whose phases complete with fewer arrivals than
// the `waiters` threads that wait: a thread may then fall behind by whole
// phases. Null when there is none.
const ir::BufferNode *pacingBarrier(const Stmt &body, int64_t waiters) {
    const ir::BufferNode *found = nullptr;
    std::function<void(const Stmt &)> walk = [&](const Stmt &s) {
        if (!s || found) return;
        if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
            for (const Stmt &x : q->stmts) walk(x);
        } else if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
            walk(l->body);
        } else if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) {
            walk(a->body);
        } else if (const ir::IfThenElse *i = ir::as<ir::IfThenElse>(s)) {
            walk(i->thenBody);
            walk(i->elseBody);
        } else if (const ir::BarrierWait *w = ir::as<ir::BarrierWait>(s)) {
            for (int64_t count : w->barrier->arriveCounts)
                if (count < waiters) found = w->barrier.get();
        }
        // Nested loops pace themselves; ws(...) roles keep their own protocol.
    };
    walk(body);
    return found;
}

// A barrier of the program waited for by parity in every iteration of a
// loop (a tcgen05 gemm's mbar, a TMA load's barrier) whose phases complete
// without every waiter arriving: a thread that falls two phases behind
// waits for a parity that is not coming back and waits forever (the
// emulator found it). The block's threads meet at the end of each such
// iteration. Warp-specialized consumers meet on their own named barrier
// (above); ws(...) roles written by hand keep their own protocol. A loop
// that not every thread runs alike (under a branch on the thread index, or
// with thread-dependent bounds) gets no __syncthreads: it would deadlock.
class Pacer : public ir::Mutator {
public:
    Pacer(const Stmt &body, int64_t threads, PassContext &ctx) : uniformity_(body), threads_(threads), ctx_(ctx) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateLetStmt(const Stmt &self, const ir::LetStmt &n) override {
        uniformity_.bind(n.var.get(), uniformity_.threadDependent(n.value));
        return ir::Mutator::mutateLetStmt(self, n);
    }
    Stmt mutateIfThenElse(const Stmt &self, const ir::IfThenElse &n) override {
        if (uniformity_.threadDependent(n.cond)) return self;
        return ir::Mutator::mutateIfThenElse(self, n);
    }
    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        if (n.forKind == ir::ForKind::Parallel) return self;
        if (uniformity_.threadDependent(n.min) || uniformity_.threadDependent(n.extent)) return self;
        Stmt inner = ir::Mutator::mutateFor(self, n);
        const ir::BufferNode *barrier = pacingBarrier(n.body, threads_);
        if (!barrier) return inner;
        const ir::For &loop = *ir::as<ir::For>(inner);
        auto paced = ir::rebuildFor(loop, loop.min, loop.extent, ir::seq({loop.body, std::make_shared<ir::SyncThreads>(n.span)}));
        Decision d;
        d.where = n.span;
        d.op = "loop";
        d.choice = "the block's threads meet (__syncthreads) at the end of each iteration";
        d.why = "'" + barrier->name + "' is waited for by parity in every iteration and its phases complete without every waiting thread arriving: a thread two phases behind would wait forever";
        ctx_.explain.record(std::move(d));
        return paced;
    }
    Stmt mutateWarpSpecialize(const Stmt &self, const ir::WarpSpecialize &) override { return self; }

private:
    ir::Uniformity uniformity_;
    int64_t threads_;
    PassContext &ctx_;
};

// A loop that qualifies: its producers and consumers, and where it sits.
struct Plan {
    const ir::For *loop = nullptr;
    std::vector<Stmt> producers, consumers;
    std::vector<Stmt> scopes;   // the LetStmts and Allocates above the kernel's statements, outermost first
    bool multicast = false;     // a producer multicasts to the blocks of the cluster
    Stmt statements;            // the kernel's statements (below `scopes`)
    std::vector<Stmt> path;     // from `statements` down to the loop
    std::set<const ir::LetStmt *> producerLets;   // bindings on the path the producer uses
    int outerLoops = 0;         // loops around the pipelined loop (a persistent loop over tiles)
};

std::string bufferName(const Stmt &producer) { return producedTile(producer)->name; }

// Producers whose tiles the consumers first read in the same statement, and
// the barriers that hand their stages over. Tiles first read in different
// statements get their own barriers (FlashAttention-3's separate K and V
// pipelines): the consumers start on the first tile before the second has
// landed, and each stage goes back as soon as its last reader is done.
struct StageGroup {
    std::vector<Stmt> producers;   // in program order
    size_t first = 0, last = 0;    // the consumers [first, last) read the group's tiles
    std::string releasedAfter;     // the wait of an asynchronous read that moves the release later, as --explain says it ("" if none)
    ir::Buffer full, empty;
};

std::vector<StageGroup> stageGroups(const Plan &plan) {
    const std::vector<Stmt> &consumers = plan.consumers;
    std::vector<StageGroup> groups;
    for (const Stmt &p : plan.producers) {
        const ir::BufferNode *tile = producedTile(p).get();
        size_t first = consumers.size(), last = 0;
        for (size_t i = 0; i < consumers.size(); ++i) {
            if (!usesBuffer(consumers[i], tile)) continue;
            first = std::min(first, i);
            last = std::max(last, i + 1);
        }
        // A tile no consumer reads is waited for first and released last.
        if (first == consumers.size()) first = 0, last = consumers.size();
        // An asynchronous read of a stage (a tcgen05 gemm's, completing on
        // its mbar) lasts until the wait on that barrier: the stage is
        // released after it.
        std::string releasedAfter;
        for (size_t i = first; i < last && i < consumers.size(); ++i) {
            ir::forEachEffect(consumers[i], [&](const Stmt &, const ir::Effects &e) {
                for (const ir::Access &a : e.accesses) {
                    if (!a.completesOn || !a.reads() || a.buffer != tile) continue;
                    for (size_t j = i + 1; j < consumers.size(); ++j) {
                        bool waits = false;
                        ir::forEachEffect(consumers[j], [&](const Stmt &, const ir::Effects &w) {
                            for (const ir::SyncEffect &y : w.syncs) waits = waits || (y.kind == ir::SyncKind::MbarrierWait && y.barrier == a.completesOn);
                        });
                        if (waits) {
                            if (j + 1 > last)
                                releasedAfter = "their wait on '" + a.completesOn->name + "': the asynchronous MMAs read it until they arrive there";
                            last = std::max(last, j + 1);
                            break;
                        }
                    }
                }
            });
            // A gemm that leaves its wgmma group in flight (wg_wait other
            // than 0) reads the stage until a later wait retires the group.
            ir::forEachStmt(consumers[i], [&](const Stmt &s) {
                const ir::Gemm *g = ir::as<ir::Gemm>(s);
                if (!g || g->wgWait == 0 || (g->a.buffer.get() != tile && g->b.buffer.get() != tile)) return;
                auto [j, at] = wgmmaGroupRetired(consumers, i + 1);
                if (j + 1 > last)
                    releasedAfter = (at.valid() ? "the wait at " + at.lineColumn() : std::string("the end of the iteration")) +
                                    " that retires the wgmma group of the gemm at " + s->span.lineColumn() +
                                    " (wg_wait = " + std::to_string(g->wgWait) + "), which reads it until then";
                last = std::max(last, std::min(j + 1, consumers.size()));
            });
        }
        auto same = std::find_if(groups.begin(), groups.end(), [&](const StageGroup &g) { return g.first == first; });
        if (same == groups.end()) {
            groups.push_back(StageGroup{{p}, first, last, releasedAfter, nullptr, nullptr});
            continue;
        }
        same->producers.push_back(p);
        if (last > same->last) same->last = last, same->releasedAfter = releasedAfter;
    }
    std::stable_sort(groups.begin(), groups.end(), [](const StageGroup &a, const StageGroup &b) { return a.first < b.first; });
    return groups;
}

class Specializer {
public:
    Specializer(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx) {}

    ir::Kernel run() {
        ir::Kernel specialized = specialize();
        Pacer pacer(specialized.body, specialized.threads, ctx_);
        specialized.body = pacer.mutate(specialized.body);
        return specialized;
    }

private:
    ir::Kernel specialize() {
        std::vector<const ir::For *> loops = pipelinedLoops(kernel_.body);
        for (const ir::For *loop : loops) {
            std::optional<bool> asked = loop->pipeline->warpSpecialize;
            if (asked && !*asked) {
                record(*loop, "not warp-specialized", "warp_specialize = false");
                continue;
            }
            // Without TMA there is nothing to decide: the cp.async pipeline is the only one.
            if (!ctx_.target.has(Feature::Tma) && !asked) continue;
            std::string why;
            std::optional<Plan> plan = qualify(*loop, loops.size(), why);
            if (plan) return rewrite(*plan);
            if (asked) {
                ctx_.diags.error(loop->span, "warp_specialize = true cannot be honoured: " + why);
                continue;
            }
            bool holdsRoles = false;
            ir::forEachStmt(loop->body, [&](const Stmt &s) { holdsRoles = holdsRoles || ir::as<ir::WarpSpecialize>(s); });
            // (Whether its loads then use cp.async is pipeline-loops' decision, stated in its own remark.)
            record(*loop, "not warp-specialized", holdsRoles ? why : why + "; the loop is pipelined, if at all, without warp specialization");
        }
        return kernel_;
    }

    std::optional<Plan> qualify(const ir::For &loop, size_t loopCount, std::string &why) {
        const Target &t = ctx_.target;
        if (!t.has(Feature::Tma)) return fail(why, "its loads need TMA (" + targetsWith(Feature::Tma) + "); " + t.name + " has none");
        bool manual = false;
        ir::forEachStmt(kernel_.body, [&](const Stmt &s) { manual = manual || ir::as<ir::WarpSpecialize>(s); });
        if (manual) return fail(why, "the kernel has ws(...) roles of its own");
        // The consumers would run as threads 128 and up, so indices the
        // program computes from its thread index would name other threads.
        if (kernel_.bindsThreadIndices) return fail(why, "the kernel computes with its thread indices (threads(...) as (...)), which a producer warp group would renumber");
        if (std::optional<SourceRange> init = seedsFromThreadIndex(kernel_.body))
            return fail(why, "rng_init at " + init->lineColumn() + " takes its default subsequence from threadIdx.x, which a producer warp group would renumber");
        if (loopCount > 1) return fail(why, "the kernel has " + std::to_string(loopCount) + " pipelined loops; warp specialization splits a kernel around one");
        if (kernel_.threads % kGroupThreads != 0)
            return fail(why, "its " + std::to_string(kernel_.threads) + " threads are not whole warp groups of 128, which the consumer role needs");
        if (kernel_.threads + kGroupThreads > 1024)
            return fail(why, "a producer warp group would make " + std::to_string(kernel_.threads + kGroupThreads) + " threads, above 1024");

        Plan plan;
        plan.loop = &loop;
        // Producers: the body's global->shared copies, all of which TMA must load.
        std::vector<Stmt> body = ir::as<ir::Seq>(loop.body) ? ir::as<ir::Seq>(loop.body)->stmts : std::vector<Stmt>{loop.body};
        for (const Stmt &s : body) {
            const ir::Copy *guardedCopy = s != ir::unguarded(s) ? ir::as<ir::Copy>(ir::unguarded(s)) : nullptr;
            if (guardedCopy && isGlobalToShared(*guardedCopy))
                return fail(why, "the copy at " + guardedCopy->span.lineColumn() + " is predicated by the branch at " + s->span.lineColumn() +
                                     ", and a TMA producer role does not predicate its loads yet");
            if (const ir::Im2Col *g = ir::as<ir::Im2Col>(s)) {
                Option tma = tmaIm2col(*g, t);
                if (!tma.ok) return fail(why, "the im2col at " + s->span.lineColumn() + " cannot load with TMA's im2col mode: " + tma.reason);
                plan.producers.push_back(s);
                continue;
            }
            const ir::Copy *c = ir::as<ir::Copy>(s);
            if (!c || !isGlobalToShared(*c)) {
                plan.consumers.push_back(s);
                continue;
            }
            bool multicast = c->copyKind == ir::CopyKind::CopyCluster && c->multicast() && !c->barrier;
            if ((c->copyKind != ir::CopyKind::Copy && !multicast) || c->barrier)
                return fail(why, "the " + std::string(ir::copyKindName(c->copyKind)) + " at " + c->span.lineColumn() +
                                     " is not a plain copy or a copy_cluster multicast");
            if (c->prefer == ir::CopyPreference::CpAsync || c->prefer == ir::CopyPreference::Sync)
                return fail(why, "the copy at " + c->span.lineColumn() + " asks for " + (c->prefer == ir::CopyPreference::Sync ? "sync" : "cp_async"));
            if (c->disableTma) return fail(why, "the copy at " + c->span.lineColumn() + " says disable_tma = true");
            Option tma = tmaTensorCopy(*c, /*load=*/true, /*descriptor=*/true, t);
            if (!tma.ok) return fail(why, "the copy at " + c->span.lineColumn() + " cannot load with TMA: " + tma.reason);
            if (Option stages = tmaStages(*c->dst.buffer, loop.pipeline->stages); !stages.ok) return fail(why, stages.reason);
            plan.producers.push_back(s);
            plan.multicast = plan.multicast || multicast;
        }
        if (plan.producers.empty()) return fail(why, "no statement of its body is a global->shared copy");

        // Where the loop sits.
        Stmt s = kernel_.body;
        while (ir::as<ir::LetStmt>(s) || ir::as<ir::Allocate>(s)) {
            plan.scopes.push_back(s);
            s = ir::as<ir::LetStmt>(s) ? ir::as<ir::LetStmt>(s)->body : ir::as<ir::Allocate>(s)->body;
        }
        plan.statements = s;
        if (!pathTo(s, &loop, plan.path)) return fail(why, "it runs inside a ws(...) role or an elected thread");
        // The producer role repeats the loops and branches around the loop
        // (a persistent loop over the block's tiles, say) with the same
        // bounds and conditions, so it must be able to compute them.
        std::vector<const ir::LetStmt *> innerLets;
        std::vector<Expr> used;
        // What keeps the producer role from computing `e` itself, if anything.
        auto obstacle = [](const Expr &e) -> std::optional<std::string> {
            if (loadsMemory(e)) return "a value loaded from memory that the producer role does not load";
            if (readsThreadIndex(e)) return "the thread index";
            return std::nullopt;
        };
        auto repeatable = [&](const Expr &e, const std::string &what) -> std::optional<std::string> {
            if (std::optional<std::string> no = obstacle(e)) return what + " on " + *no;
            used.push_back(e);
            return std::nullopt;
        };
        for (const Expr &bound : {loop.min, loop.extent})
            if (std::optional<std::string> no = repeatable(bound, "its bounds depend")) return fail(why, *no);
        for (const Stmt &p : plan.path) {
            if (p.get() == &loop) break;
            if (ir::as<ir::Allocate>(p))
                return fail(why, "'" + ir::as<ir::Allocate>(p)->buffer->name +
                                     "' is allocated after the kernel's first statement and would live inside the consumer role, which is not supported yet");
            if (const ir::LetStmt *l = ir::as<ir::LetStmt>(p)) innerLets.push_back(l);
            if (ir::as<ir::While>(p)) return fail(why, "it is nested in the while loop at " + p->span.lineColumn() + ", which the producer role does not repeat yet");
            if (const ir::For *o = ir::as<ir::For>(p)) {
                if (o->forKind != ir::ForKind::Serial && o->forKind != ir::ForKind::Unrolled)
                    return fail(why, "it is nested in the " + std::string(ir::forKindName(o->forKind)) + " loop at " + p->span.lineColumn());
                for (const Expr &bound : {o->min, o->extent})
                    if (std::optional<std::string> no = repeatable(bound, "it is nested in the loop at " + p->span.lineColumn() + ", which depends"))
                        return fail(why, *no);
                if (ir::jumpsOutOf(o->body))
                    return fail(why, "it is nested in the loop at " + p->span.lineColumn() + ", whose break or continue the producer role does not repeat yet");
                ++plan.outerLoops;
            }
            if (const ir::IfThenElse *i = ir::as<ir::IfThenElse>(p))
                if (std::optional<std::string> no = repeatable(i->cond, "it is nested in the branch at " + p->span.lineColumn() + ", which depends"))
                    return fail(why, *no);
        }
        // The blocks of a cluster fill each other's stages: they must run the
        // loop alike, which loops and branches around it (a persistent loop
        // whose last wave some blocks skip) do not promise.
        if (plan.multicast && std::any_of(plan.path.begin(), plan.path.end(), [&](const Stmt &p) {
                return p.get() != &loop && (ir::as<ir::For>(p) || ir::as<ir::IfThenElse>(p));
            }))
            return fail(why, "its copy_cluster multicast fills the stages of every block of the cluster, and inside other loops or branches the "
                             "blocks may run the loop a different number of times");
        for (const Stmt &p : plan.producers) {
            bool loads = false;
            ir::forEachExpr(p, [&](const Expr &e) { loads = loads || ir::as<ir::Load>(e); });
            if (loads)
                return fail(why, "the copy at " + p->span.lineColumn() + " depends on a value loaded from memory, which the producer role does not load");
        }
        // Bindings made after the kernel's first statement that the producer
        // uses (its trip count, its copies' indices, the bounds around it) are
        // bound again inside the producer role; a binding that loads from
        // memory is not.
        for (const Stmt &p : plan.producers) ir::forEachExpr(p, [&](const Expr &e) { used.push_back(e); });
        for (auto it = innerLets.rbegin(); it != innerLets.rend(); ++it) {
            const ir::LetStmt *l = *it;
            bool needed = std::any_of(used.begin(), used.end(), [&](const Expr &e) { return ir::usesVar(e, l->var.get()); });
            if (!needed) continue;
            if (std::optional<std::string> no = obstacle(l->value))
                return fail(why, "the producer needs '" + l->var->name + "' (bound at " + l->span.lineColumn() + "), which depends on " + *no);
            plan.producerLets.insert(l);
            used.push_back(l->value);
        }
        if (std::string late = wgmmaGroupPastIteration(plan.producers, plan.consumers); !late.empty()) return fail(why, late);
        std::vector<ir::Stmt> statements = plan.producers;
        statements.insert(statements.end(), plan.consumers.begin(), plan.consumers.end());
        for (const ir::Stmt &p : plan.producers)
            if (std::string rewritten = tileRewrittenInLoop(p, statements, loop); !rewritten.empty()) return fail(why, rewritten);
        // The producer warp group loads from the kernel's start and runs
        // ahead across runs of the loop: nothing orders its loads after a
        // store of the consumers, before the loop or between its runs.
        if (std::string blocked = consumerRoleObstacle(loop); !blocked.empty()) return fail(why, blocked);
        const std::vector<Stmt> before = runsBeforeLoads(plan.path);
        for (const ir::Stmt &p : plan.producers)
            for (const Stmt &b : before)
                if (std::optional<ir::Writer> writer = sourceWrittenBy(p, b))
                    return fail(why, "the copy at " + p->span.lineColumn() + " loads from '" + writer->buffer + "', which the kernel writes at " +
                                         writer->at.lineColumn() + ": a producer warp group's loads would not wait for that write");
        return plan;
    }

    // The statements that may run before some of the loads of the loop at
    // the end of `path` (from the kernel's body down to it): all but those
    // that follow it outside every loop around it, which run once it is done.
    static std::vector<Stmt> runsBeforeLoads(const std::vector<Stmt> &path) {
        std::vector<Stmt> out;
        for (size_t i = 0; i + 1 < path.size(); ++i) {
            // A loop around it runs all its body again before the next run's loads.
            if (ir::as<ir::For>(path[i]) || ir::as<ir::While>(path[i])) {
                out.push_back(path[i]);
                return out;
            }
            if (const ir::Seq *seq = ir::as<ir::Seq>(path[i]))
                for (const Stmt &x : seq->stmts) {
                    if (x == path[i + 1]) break;
                    out.push_back(x);
                }
        }
        out.push_back(path.back());   // the loop's own statements
        return out;
    }

    // Why what would run in the consumer role -- the kernel's statements but
    // the loads of `loop` -- keeps the loop from being specialized ("" when
    // nothing does): a cluster barrier or a wait for the previous kernel
    // (pdl_sync) that the producer warp group would not meet, or, outside
    // the loop, what a role cannot run yet.
    std::string consumerRoleObstacle(const ir::For &loop) const {
        std::set<const ir::StmtNode *> inLoop;
        ir::forEachStmt(loop.body, [&](const Stmt &x) { inLoop.insert(x.get()); });
        std::string why;
        ir::forEachStmt(kernel_.body, [&](const Stmt &x) {
            if (!why.empty()) return;
            // (In the loop too: its statements but the loads are the consumers'.)
            if (ir::as<ir::ClusterSync>(x))
                why = "the cluster_sync at " + x->span.lineColumn() + " waits for every thread of the cluster, and a producer warp group would not meet it";
            else if (ir::as<ir::PdlSync>(x))
                why = "the pdl_sync at " + x->span.lineColumn() + " makes the threads that run it wait for the previous kernel, and a producer warp group's "
                      "loads would not wait";
            else if (std::string what = ir::as<ir::Allocate>(x) || inLoop.count(x.get()) ? "" : notYetInRole(x); !what.empty())
                why = what + " (at " + x->span.lineColumn() + ") would run in the consumer role, and inside a role it is not supported yet";
        });
        return why;
    }

    static std::optional<Plan> fail(std::string &why, std::string reason) {
        why = std::move(reason);
        return std::nullopt;
    }

    ir::Kernel rewrite(const Plan &plan) {
        const ir::For &f = *plan.loop;
        const int64_t S = f.pipeline->stages;
        const int64_t consumerThreads = kernel_.threads, consumerGroups = consumerThreads / kGroupThreads;
        std::optional<VersionedBuffers> versions = versionBuffers(kernel_.body, f, plan.producers, plan.consumers, S, "pipelined copy", ctx_.diags);
        if (!versions) return kernel_;

        std::vector<StageGroup> groups = stageGroups(plan);
        std::set<std::string> taken = bufferNames(kernel_);
        // With multicast, one block's TMA writes a stage in every block of the
        // cluster, so a stage is empty only when the consumers of all blocks
        // have released it: every consumer arrives on every block's barrier.
        const int64_t blocks = plan.multicast ? kernel_.cluster[0] * kernel_.cluster[1] * kernel_.cluster[2] : 1;
        for (StageGroup &g : groups) {
            // One group keeps the plain names; several are named after their first tile.
            std::string prefix = groups.size() == 1 ? "stage_" : bufferName(g.producers.front()) + "_";
            auto full = ir::makeBuffer(unusedName(taken, prefix + "full"), DType::UInt64, {ir::intImm(S)}, ir::MemScope::Barrier, f.span);
            taken.insert(full->name);
            auto empty = ir::makeBuffer(unusedName(taken, prefix + "empty"), DType::UInt64, {ir::intImm(S)}, ir::MemScope::Barrier, f.span);
            taken.insert(empty->name);
            // One producer thread waits, issues and arrives.
            full->arriveCounts.assign(static_cast<size_t>(S), 1);
            empty->arriveCounts.assign(static_cast<size_t>(S), consumerThreads * blocks);
            full->clusterScope = empty->clusterScope = plan.multicast;
            g.full = full;
            g.empty = empty;
        }

        // Inside other loops (a persistent loop over the block's tiles) the
        // ring goes on from one run of the loop to the next: each role counts
        // the iterations of its earlier runs in a register of its own, `base`.
        // Iteration k uses version (base + k - min) % S in phase
        // ((base + k - min) / S) % 2.
        // The counters are 64-bit when the loop's variable or trip count is.
        const DType counterType = f.var->dtype == DType::Int64 || f.extent->dtype == DType::Int64 ? DType::Int64 : DType::Int32;
        ir::Buffer producerBase, consumerBase;
        if (plan.outerLoops > 0) {
            producerBase = ir::makeBuffer(unusedName(taken, "producer_ring_base"), counterType, {}, ir::MemScope::Local, f.span);
            taken.insert(producerBase->name);
            consumerBase = ir::makeBuffer(unusedName(taken, "consumer_ring_base"), counterType, {}, ir::MemScope::Local, f.span);
            taken.insert(consumerBase->name);
        }
        auto iterationOf = [&](const Expr &k, const ir::Buffer &base) {
            Expr run = ir::sub(k, f.min);
            return base ? ir::add(std::make_shared<ir::Load>(base, std::vector<Expr>{}, f.span), run) : run;
        };
        auto stageOf = [&](const Expr &k, const ir::Buffer &base) { return S == 1 ? ir::intImm(0) : ir::mod(iterationOf(k, base), ir::intImm(S)); };
        auto phaseOf = [&](const Expr &k, const ir::Buffer &base) { return ir::mod(ir::div(iterationOf(k, base), ir::intImm(S)), ir::intImm(2)); };
        // After each run, base += its trip count; each role starts at 0.
        std::optional<int64_t> trips = ir::constInt(f.extent);
        Expr tripCount = trips ? ir::intImm(std::max<int64_t>(*trips, 0)) : ir::binary(ir::BinaryOp::Max, f.extent, ir::intImm(0));
        auto advance = [&](const ir::Buffer &base, const Expr &trip) -> Stmt {
            if (!base) return nullptr;
            return std::make_shared<ir::Store>(base, std::vector<Expr>{},
                                               ir::cast(base->dtype, ir::add(std::make_shared<ir::Load>(base, std::vector<Expr>{}, f.span), trip)),
                                               ir::StoreOp::Assign, f.span);
        };
        auto counted = [&](const ir::Buffer &base, const Stmt &role) -> Stmt {
            if (!base) return role;
            return std::make_shared<ir::Allocate>(
                base, ir::seq({std::make_shared<ir::Store>(base, std::vector<Expr>{}, ir::cast(base->dtype, ir::intImm(0)), ir::StoreOp::Assign, f.span), role}), f.span);
        };

        // The producer: its own loop variable, the copies completing on full[stage].
        ir::VarRef pk = ir::makeVar(f.var->name, f.var->dtype, f.var->span);
        Expr pStage = stageOf(pk, producerBase), pPhase = phaseOf(pk, producerBase);
        std::vector<Stmt> produce;
        for (const StageGroup &g : groups) {
            produce.push_back(std::make_shared<ir::BarrierWait>(g.empty, pStage, ir::binary(ir::BinaryOp::BitXor, pPhase, ir::intImm(1)), f.span));
            for (const Stmt &p : g.producers) {
                Stmt issued;
                if (const ir::Im2Col *gather = ir::as<ir::Im2Col>(p)) {
                    auto issue = std::make_shared<ir::Im2Col>(*gather);
                    issue->barrier = g.full;
                    issue->barrierIndex = pStage;
                    issue->producerRole = true;
                    issued = issue;
                } else {
                    auto copy = std::make_shared<ir::Copy>(*ir::as<ir::Copy>(p));
                    copy->barrier = g.full;
                    copy->barrierIndex = pStage;
                    copy->producerRole = true;
                    issued = copy;
                }
                produce.push_back(selectVersion(*versions, pStage, ir::substitute(issued, {{f.var, pk}})));
            }
            produce.push_back(std::make_shared<ir::BarrierArrive>(g.full, pStage, nullptr, f.span));
        }
        // Each iteration is the role's first thread's: it alone waits, issues
        // and arrives (CUTLASS's producer; the other producer threads would
        // only wait, and with nothing to hold them to that thread's pace
        // they could fall phases behind). The loop stays every thread's,
        // which ptxas allocates registers for as before.
        Stmt producerLoop = std::make_shared<ir::For>(pk, f.min, f.extent, f.forKind,
                                                      std::make_shared<ir::Elect>(ir::Elect::Unit::Scope, 0, ir::seq(std::move(produce)), f.span), f.span);
        producerLoop = ir::seq({producerLoop, advance(producerBase, tripCount)});
        // Around it, the loops, branches and bindings the producer needs from
        // the path down to the loop, with their own variables, since the
        // consumer role keeps the originals.
        std::vector<std::pair<ir::VarRef, Expr>> rebound;
        std::function<Stmt(size_t)> around = [&](size_t i) -> Stmt {
            const Stmt &p = plan.path[i];
            if (p.get() == &f) return ir::substitute(producerLoop, rebound);
            if (const ir::LetStmt *l = ir::as<ir::LetStmt>(p)) {
                if (!plan.producerLets.count(l)) return around(i + 1);
                ir::VarRef v = ir::makeVar(l->var->name, l->var->dtype, l->var->span);
                Expr value = ir::substitute(l->value, rebound);
                rebound.push_back({l->var, v});
                return std::make_shared<ir::LetStmt>(v, value, around(i + 1), l->span);
            }
            if (const ir::For *o = ir::as<ir::For>(p)) {
                ir::VarRef v = ir::makeVar(o->var->name, o->var->dtype, o->var->span);
                Expr min = ir::substitute(o->min, rebound), extent = ir::substitute(o->extent, rebound);
                rebound.push_back({o->var, v});
                return std::make_shared<ir::For>(v, min, extent, o->forKind, around(i + 1), o->span);
            }
            if (const ir::IfThenElse *c = ir::as<ir::IfThenElse>(p)) {
                Expr cond = ir::substitute(c->cond, rebound);
                if (c->thenBody == plan.path[i + 1]) return std::make_shared<ir::IfThenElse>(cond, around(i + 1), nullptr, c->span);
                return std::make_shared<ir::IfThenElse>(negation(cond), around(i + 1), nullptr, c->span);
            }
            return around(i + 1);   // a sequence: only the statement holding the loop
        };
        Stmt producerStatements = counted(producerBase, around(0));

        // The consumer: waits for each group before the first statement that
        // reads its tiles, releases the group's version after the last one.
        Expr cStage = stageOf(f.var, consumerBase), cPhase = phaseOf(f.var, consumerBase);
        std::vector<Stmt> consume;
        auto release = [&](const StageGroup &g) {
            for (int64_t r = 0; r < blocks; ++r)
                consume.push_back(std::make_shared<ir::BarrierArrive>(g.empty, cStage, plan.multicast ? ir::intImm(r) : nullptr, f.span));
        };
        for (size_t i = 0; i <= plan.consumers.size(); ++i) {
            // Releases first (a stage goes back as early as it can), except a
            // group read by no statement (a loop of copies only), released
            // right after its own wait.
            for (const StageGroup &g : groups)
                if (g.last == i && g.first < i) release(g);
            for (const StageGroup &g : groups)
                if (g.first == i) consume.push_back(std::make_shared<ir::BarrierWait>(g.full, cStage, cPhase, f.span));
            for (const StageGroup &g : groups)
                if (g.last == i && g.first == i) release(g);
            if (i < plan.consumers.size()) consume.push_back(selectVersion(*versions, cStage, plan.consumers[i]));
        }
        // The consumers pace themselves like any loop (Pacer, above): the ring
        // lets a consumer thread fall a whole iteration behind. They meet on
        // their own named barrier: consumer warp groups are 1 .. consumerGroups,
        // so theirs is 1 + the first.
        const ir::BufferNode *pacing = pacingBarrier(ir::seq(plan.consumers), consumerThreads);
        std::string pacedBy = pacing ? pacing->name : "";
        if (pacing) consume.push_back(std::make_shared<ir::SyncThreads>(f.span, 2, consumerThreads));
        auto consumerLoop = ir::rebuildFor(f, f.min, f.extent, ir::seq(std::move(consume)));
        consumerLoop->pipeline.reset();
        consumerLoop->consumerStages = S;

        // The two roles, inside the kernel's scopes and the new barriers.
        std::optional<RegisterSplit> registers = kernel_.keepsRegisterBudgets ? std::nullopt : warpGroupRegisterSplit(ctx_.target, consumerGroups);
        std::vector<int64_t> consumerRoles;
        for (int64_t g = 1; g <= consumerGroups; ++g) consumerRoles.push_back(g);
        Stmt consumerStatements = counted(consumerBase, Replacer(&f, ir::seq({consumerLoop, advance(consumerBase, tripCount)})).mutate(plan.statements));
        Stmt producer = ir::seq({registers ? std::make_shared<ir::SetMaxNReg>(registers->producer, false, f.span) : nullptr, producerStatements});
        Stmt consumer = ir::seq({registers ? std::make_shared<ir::SetMaxNReg>(registers->consumer, true, f.span) : nullptr, consumerStatements});
        Stmt body = ir::seq({std::make_shared<ir::WarpSpecialize>(ir::WarpSpecialize::warpsOfGroups({0}), producer, f.span),
                             std::make_shared<ir::WarpSpecialize>(ir::WarpSpecialize::warpsOfGroups(consumerRoles), consumer, f.span)});
        for (auto g = groups.rbegin(); g != groups.rend(); ++g)
            body = std::make_shared<ir::Allocate>(g->full, std::make_shared<ir::Allocate>(g->empty, body, f.span), f.span);
        for (auto it = plan.scopes.rbegin(); it != plan.scopes.rend(); ++it) {
            if (const ir::LetStmt *l = ir::as<ir::LetStmt>(*it)) body = std::make_shared<ir::LetStmt>(l->var, l->value, body, l->span);
            else body = std::make_shared<ir::Allocate>(ir::as<ir::Allocate>(*it)->buffer, body, (*it)->span);
        }

        ir::Kernel out = kernel_;
        out.body = replaceAllocations(body, versions->replacement);
        out.threads = consumerThreads + kGroupThreads;

        Decision d;
        d.where = f.span;
        d.op = "pipelined loop";
        d.choice = "warp-specialized: warp group 0 loads with TMA " + std::to_string(S) + " stage" + (S == 1 ? "" : "s") + " ahead, warp group" +
                   (consumerGroups == 1 ? " 1 computes" : "s 1-" + std::to_string(consumerGroups) + " compute");
        d.why = ctx_.target.name + " has TMA and every global->shared copy of the loop can use it";
        d.details.push_back("the block grows from " + std::to_string(consumerThreads) + " to " + std::to_string(out.threads) +
                            " threads; the kernel's other statements run on the consumer warp groups");
        std::string fulls, empties;
        const std::string position = plan.outerLoops > 0 ? "(base + k)" : "k";
        for (const StageGroup &g : groups) {
            fulls += std::string(fulls.empty() ? "" : ", ") + "'" + g.full->name + "[" + std::to_string(S) + "]'";
            empties += std::string(empties.empty() ? "" : ", ") + "'" + g.empty->name + "[" + std::to_string(S) + "]'";
        }
        d.details.push_back("one thread of warp group 0 runs the producer's iterations; " + fulls + " (its one arrival + the TMA bytes) hand" +
                            (groups.size() == 1 ? "s" : "") + " each stage to the consumers, " + empties + " (" +
                            std::to_string(consumerThreads * blocks) + " consumer arrivals) hand" + (groups.size() == 1 ? "s" : "") +
                            " it back; stage " + position + " % " + std::to_string(S) + ", phase (" + position + " / " + std::to_string(S) + ") % 2");
        if (plan.outerLoops > 0)
            d.details.push_back("the loop runs inside " + std::to_string(plan.outerLoops) + " other loop" + (plan.outerLoops == 1 ? "" : "s") +
                                " (a persistent loop over the block's tiles, say), which both roles run: the ring goes on from one run of the loop to "
                                "the next, each role adding every run's trip count to a register of its own ('" + producerBase->name + "', '" +
                                consumerBase->name + "'), so the producer loads the next run's first stages while the consumers finish this one "
                                "(the epilogue of one tile overlaps the loads of the next, as in CUTLASS's cooperative persistent kernels)");
        if (groups.size() > 1) {
            std::string each;
            for (const StageGroup &g : groups) {
                std::string tiles;
                for (const Stmt &p : g.producers) tiles += std::string(tiles.empty() ? "'" : ", '") + bufferName(p) + "'";
                each += std::string(each.empty() ? "" : "; ") + tiles + " on '" + g.full->name + "'/'" + g.empty->name + "', waited for before " +
                        plan.consumers[std::min(g.first, plan.consumers.size() - 1)]->span.lineColumn() + " and released after " +
                        plan.consumers[std::max<size_t>(g.last, 1) - 1]->span.lineColumn();
            }
            d.details.push_back("tiles first read by different statements have separate barriers, so the consumers start on one before the next "
                                "has landed and each stage goes back after its own last reader (FlashAttention-3's separate K and V pipelines): " + each);
        }
        if (plan.multicast)
            d.details.push_back("multicast loads fill a stage in all " + std::to_string(blocks) + " blocks of the cluster: every consumer arrives on " +
                                empties + " of every block (" + std::to_string(consumerThreads * blocks) +
                                " arrivals per phase), the barriers are initialised before a cluster barrier, and the blocks meet at a cluster "
                                "barrier before they exit");
        if (registers)
            d.details.push_back("setmaxnreg: the producer drops to " + std::to_string(registers->producer) + " registers per thread, the consumers rise to " +
                                std::to_string(registers->consumer));
        else if (!ctx_.target.has(Feature::Setmaxnreg))
            d.details.push_back("no setmaxnreg: " + ctx_.target.name + " cannot reallocate registers between warp groups");
        else if (kernel_.keepsRegisterBudgets)
            d.details.push_back("no setmaxnreg: disable_warp_group_reg_alloc() keeps every warp group's register budget");
        else
            d.details.push_back("no setmaxnreg: no register split fits one producer and " + std::to_string(consumerGroups) + " consumer warp groups");
        int64_t total = 0;
        for (const ir::Buffer &v : versions->order) {
            int64_t bytes = *v->constElements() * dtypeBits(v->dtype) / 8;
            total += bytes;
            d.details.push_back("'" + v->name + "': " + std::to_string(S) + " version" + (S == 1 ? "" : "s") + ", " + std::to_string(bytes) +
                                " bytes of shared memory");
        }
        d.details.push_back(std::to_string(total) + " bytes of shared memory for the pipelined tiles");
        if (!pacedBy.empty())
            d.details.push_back("the consumers meet (bar.sync 2, " + std::to_string(consumerThreads) + ") at the end of each iteration: '" + pacedBy +
                                "' is waited for by parity in every iteration, and a thread two phases behind would wait forever");
        for (const StageGroup &g : groups)
            if (!g.releasedAfter.empty())
                d.details.push_back("the consumers release a stage" + (groups.size() == 1 ? std::string() : " of '" + g.empty->name + "'") +
                                    " after " + g.releasedAfter);
        ctx_.explain.record(std::move(d));
        return out;
    }

    void record(const ir::For &loop, const std::string &choice, const std::string &why) {
        Decision d;
        d.where = loop.span;
        d.op = "warp specialization";
        d.choice = choice;
        d.why = why;
        ctx_.explain.record(std::move(d));
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
};

} // namespace

ir::Kernel specializeWarps(const ir::Kernel &kernel, PassContext &ctx) { return Specializer(kernel, ctx).run(); }

} // namespace tilet
