// OverlapWgmma.cpp -- see OverlapWgmma.h.
#include "passes/OverlapWgmma.h"

#include "ir/BufferEdits.h"
#include "ir/Effects.h"
#include "ir/Visitor.h"

#include <set>
#include <utility>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

// The last statement of `s`, looking through Seqs and LetStmts.
const ir::StmtNode *lastStatement(const Stmt &s) {
    if (const ir::Seq *q = ir::as<ir::Seq>(s)) return q->stmts.empty() ? nullptr : lastStatement(q->stmts.back());
    if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) return lastStatement(l->body);
    return s.get();
}

// Replaces one wgmma wait (by identity) with a wait that leaves a group in flight.
class WaitRelaxer : public ir::Mutator {
public:
    explicit WaitRelaxer(const ir::StmtNode *wait) : wait_(wait) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateWgmmaSync(const Stmt &self, const ir::WgmmaSync &n) override {
        if (self.get() != wait_) return self;
        return std::make_shared<ir::WgmmaSync>(ir::WgmmaSyncKind::Wait, 1, n.span);
    }

private:
    const ir::StmtNode *wait_;
};

class Overlapper : public ir::Mutator {
public:
    Overlapper(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx), scopeThreads_(k.threads) {}
    using ir::Mutator::mutate;
    ir::BufferEdits edits;   // release barriers' arrive counts, one per warp group

protected:
    Stmt mutateWarpSpecialize(const Stmt &self, const ir::WarpSpecialize &n) override {
        int64_t outer = std::exchange(scopeThreads_, n.wholeWarpGroups() ? n.threads() : 0);
        Stmt out = ir::Mutator::mutateWarpSpecialize(self, n);
        scopeThreads_ = outer;
        return out;
    }

    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        Stmt base = ir::Mutator::mutateFor(self, n);
        const ir::For &f = *ir::as<ir::For>(base);
        const ir::Seq *body = ir::as<ir::Seq>(f.body);
        if (f.forKind != ir::ForKind::Serial || !body) return base;

        std::vector<const ir::WgmmaSync *> waits;
        std::set<const ir::BufferNode *> accumulators, operands;
        ir::forEachStmt(f.body, [&](const Stmt &s) {
            if (const ir::WgmmaSync *w = ir::as<ir::WgmmaSync>(s); w && w->sync == ir::WgmmaSyncKind::Wait) waits.push_back(w);
            if (const ir::Wgmma *w = ir::as<ir::Wgmma>(s)) {
                accumulators.insert(w->d.get());
                operands.insert(w->a.buffer.get());
                operands.insert(w->b.buffer.get());
            }
        });
        // The releases: the arrivals right after a statement that ends in a
        // wait for every wgmma group (one per block of the cluster with
        // multicast). A loop whose tiles have separate barriers has several.
        std::vector<size_t> sites;
        for (size_t i = 0; i + 1 < body->stmts.size(); ++i) {
            const ir::StmtNode *last = lastStatement(body->stmts[i]);
            const ir::WgmmaSync *w = last && last->kind == ir::StmtKind::WgmmaSync ? static_cast<const ir::WgmmaSync *>(last) : nullptr;
            if (w && w->sync == ir::WgmmaSyncKind::Wait && w->pending == 0 && ir::as<ir::BarrierArrive>(body->stmts[i + 1])) sites.push_back(i);
        }
        if (sites.empty()) return base;
        std::vector<Stmt> stmts;
        bool changed = false;
        size_t next = 0;   // the first statement of the body not yet in `stmts`
        for (size_t at : sites) {
            std::vector<const ir::BarrierArrive *> releases;
            for (size_t i = at + 1; i < body->stmts.size() && ir::as<ir::BarrierArrive>(body->stmts[i]); ++i)
                releases.push_back(ir::as<ir::BarrierArrive>(body->stmts[i]));
            std::optional<int64_t> perGroup = arrivalsPerGroup(f, releases);
            if (perGroup) edits.edit(releases.front()->barrier).arriveCounts.assign(releases.front()->barrier->arriveCounts.size(), *perGroup);
            auto release = [&](const std::vector<Stmt> &arrivals) {
                if (perGroup) return Stmt(std::make_shared<ir::Elect>(ir::Elect::Unit::WarpGroup, 0, ir::seq(arrivals), releases.front()->span));
                return ir::seq(arrivals);
            };
            Decision d;
            d.where = releases.front()->span;
            if (perGroup)
                d.details.push_back("one thread of each warp group releases the stage, after its wait retired the group's wgmma (" + std::to_string(*perGroup) +
                                    (*perGroup == 1 ? " arrival" : " arrivals") + " per phase of '" + releases.front()->barrier->name + "', not " +
                                    std::to_string(releases.front()->barrier->arriveCounts.front()) +
                                    "): only wgmma reads the stages in the loop, and a wgmma is the whole warp group's (CUTLASS's consumer_release)");

            if (sites.size() == 1) {
                Stmt overlapped = overlap(f, *body, at, waits, releases, operands, accumulators, release);
                if (overlapped && ir::jumpsOutOf(f.body)) {
                    // The release after the loop is the last iteration's stage.
                    Decision kept;
                    kept.where = f.span;
                    kept.op = "wgmma in flight";
                    kept.choice = "each iteration waits for its own wgmma group (wgmma.wait_group 0) before releasing its stage of '" +
                                  releases.front()->barrier->name + "'";
                    kept.why = "a break or continue may end the loop early, and the stage released after the loop would then not be the last one read";
                    ctx_.explain.record(std::move(kept));
                } else if (overlapped) {
                    d.op = "wgmma in flight";
                    d.choice = "each iteration waits for the previous iteration's wgmma group (wgmma.wait_group 1) and then releases its stage of '" +
                               releases.front()->barrier->name + "'";
                    d.why = "the wait only gates the release of the stage the MMAs read, so the tensor cores keep the next group queued while this one "
                            "runs; the last group is waited for after the loop";
                    ctx_.explain.record(std::move(d));
                    return overlapped;
                }
            }
            if (!perGroup) continue;
            // The loop keeps its waits; only this release changes.
            auto from = body->stmts.begin();
            stmts.insert(stmts.end(), from + static_cast<std::ptrdiff_t>(next), from + static_cast<std::ptrdiff_t>(at + 1));
            next = at + 1 + releases.size();
            stmts.push_back(release(std::vector<Stmt>(from + static_cast<std::ptrdiff_t>(at + 1), from + static_cast<std::ptrdiff_t>(next))));
            changed = true;
            d.op = "stage release";
            d.choice = "one thread of each warp group releases the stage of '" + releases.front()->barrier->name + "'";
            d.why = "the wgmma groups that read it are retired (wgmma.wait_group 0) right before";
            ctx_.explain.record(std::move(d));
        }
        if (!changed) return base;
        stmts.insert(stmts.end(), body->stmts.begin() + static_cast<std::ptrdiff_t>(next), body->stmts.end());
        return ir::rebuildFor(f, f.min, f.extent, ir::seq(std::move(stmts)));
    }

private:
    // The loop with its wgmma group in flight across iterations, or null:
    // the wait before the release must be the loop's only one, the release
    // depend on the iteration, every operand be a shared tile in two or more
    // versions (a single buffer would deadlock, and registers -- A of wgmma
    // from registers -- are rewritten by the next iteration while the group
    // still reads them), and nothing else in the loop read or write the
    // accumulators: not their registers, nor the fragments they hold (a
    // parallel loop or a reduction over the accumulator, not lowered to
    // registers yet), which the group still in flight would write under them.
    template <class Release>
    Stmt overlap(const ir::For &f, const ir::Seq &body, size_t at, const std::vector<const ir::WgmmaSync *> &waits,
                 const std::vector<const ir::BarrierArrive *> &releases, const std::set<const ir::BufferNode *> &operands,
                 const std::set<const ir::BufferNode *> &accumulators, const Release &release) const {
        if (waits.size() != 1 || lastStatement(body.stmts[at]) != waits.front()) return nullptr;
        // Another arrival in the loop (the release of another group of tiles,
        // which the same wgmma may read) would hand its stage back while the
        // group still in flight reads it.
        size_t arrivals = 0;
        ir::forEachStmt(f.body, [&](const Stmt &s) { arrivals += ir::as<ir::BarrierArrive>(s) ? 1 : 0; });
        if (arrivals != releases.size()) return nullptr;
        for (const ir::BarrierArrive *r : releases)
            if (!ir::usesVar(r->index, f.var.get())) return nullptr;
        for (const ir::BufferNode *b : operands)
            if (b->scope != ir::MemScope::Shared || b->pipelineVersions < 2) return nullptr;
        bool touched = false;
        ir::forEachEffect(f.body, [&](const Stmt &s, const ir::Effects &fx) {
            if (ir::as<ir::Wgmma>(s)) return;
            for (const ir::Access &a : fx.accesses) {
                const ir::BufferNode *b = a.buffer;
                touched = touched || accumulators.count(b) || (b->registers && accumulators.count(b->registers.get()));
            }
        });
        if (touched) return nullptr;
        std::optional<int64_t> trips = ir::constInt(f.extent);
        if (trips && *trips <= 0) return nullptr;

        auto releaseAt = [&](const Expr &k) {
            std::vector<Stmt> out;
            for (const ir::BarrierArrive *r : releases)
                out.push_back(std::make_shared<ir::BarrierArrive>(r->barrier, ir::substitute(r->index, {{f.var, k}}), r->remoteRank, r->span));
            return release(out);
        };
        SourceRange span = releases.front()->span;
        std::vector<Stmt> stmts(body.stmts.begin(), body.stmts.begin() + static_cast<std::ptrdiff_t>(at));
        stmts.push_back(WaitRelaxer(waits.front()).mutate(body.stmts[at]));
        stmts.push_back(std::make_shared<ir::IfThenElse>(ir::binary(ir::BinaryOp::Gt, f.var, f.min), releaseAt(ir::sub(f.var, ir::intImm(1))), nullptr, span));
        stmts.insert(stmts.end(), body.stmts.begin() + static_cast<std::ptrdiff_t>(at + 1 + releases.size()), body.stmts.end());
        auto loop = ir::rebuildFor(f, f.min, f.extent, ir::seq(std::move(stmts)));
        // The last group's wait is outside the run-time check that the loop
        // ran: with no group in flight it returns at once, and the wait then
        // holds on every path (check-wgmma-groups does not relate the branch
        // to the loop's trip count).
        Stmt lastRelease = releaseAt(ir::sub(ir::add(f.min, f.extent), ir::intImm(1)));
        if (!trips) lastRelease = std::make_shared<ir::IfThenElse>(ir::binary(ir::BinaryOp::Gt, f.extent, ir::intImm(0)), lastRelease, nullptr, span);
        return ir::seq({loop, std::make_shared<ir::WgmmaSync>(ir::WgmmaSyncKind::Wait, 0, span), lastRelease});
    }

    // The arrive count when the release is one thread's per warp group
    // (CUTLASS's consumer_release) instead of every thread's: the loop runs
    // in whole warp groups, nothing but wgmma reads or writes the stages in
    // it (a wgmma retired in the elected thread was issued by its whole
    // group), and the releases are the barrier's only arrivals, every
    // thread arriving once per release. Nullopt otherwise.
    std::optional<int64_t> arrivalsPerGroup(const ir::For &f, const std::vector<const ir::BarrierArrive *> &releases) const {
        constexpr int64_t kGroup = ir::WarpSpecialize::kGroupThreads;
        if (scopeThreads_ <= 0 || scopeThreads_ % kGroup != 0) return std::nullopt;
        const ir::Buffer &barrier = releases.front()->barrier;
        int64_t arrivals = 0;   // statements that arrive on it (a copy's remote barrier and tcgen05.commit too)
        ir::forEachEffect(kernel_.body, [&](const Stmt &, const ir::Effects &fx) {
            for (const ir::SyncEffect &e : fx.syncs)
                if (e.kind == ir::SyncKind::MbarrierArrive && e.barrier == barrier.get()) ++arrivals;
        });
        if (arrivals != static_cast<int64_t>(releases.size())) return std::nullopt;
        for (const ir::BarrierArrive *r : releases)
            if (r->barrier.get() != barrier.get()) return std::nullopt;
        const int64_t perThread = static_cast<int64_t>(releases.size());
        for (int64_t count : barrier->arriveCounts)
            if (count != scopeThreads_ * perThread) return std::nullopt;
        // The stages: the pipelined (versioned) shared tiles the loop touches.
        bool wgmmaReads = false, otherAccess = false;
        ir::forEachEffect(f.body, [&](const Stmt &s, const ir::Effects &fx) {
            for (const ir::Access &a : fx.accesses) {
                if (a.buffer->scope != ir::MemScope::Shared || a.buffer->pipelineVersions < 2) continue;
                if (ir::as<ir::Wgmma>(s)) wgmmaReads = true;
                else otherAccess = true;
            }
        });
        if (!wgmmaReads || otherAccess) return std::nullopt;
        return scopeThreads_ / kGroup * perThread;
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    int64_t scopeThreads_;   // the threads of the enclosing role (0: not whole warp groups) or block
};

} // namespace

ir::Kernel overlapWgmma(const ir::Kernel &kernel, PassContext &ctx) {
    if (kernel.waitsForWgmma) {
        // The program places its waits (TileLang's wg_wait / wait_wgmma);
        // this pass, overlap-intra-warpgroup and pingpong-consumers leave them.
        const ir::StmtNode *first = nullptr;
        ir::forEachStmt(kernel.body, [&](const Stmt &s) {
            if (!first && ir::as<ir::Wgmma>(s)) first = s.get();
        });
        if (first) {
            Decision d;
            d.where = kernel.span;
            d.op = "wgmma waits";
            d.choice = "the program's own";
            d.why = "its gemms' wg_wait and its wait_wgmma place them; no wait is moved (no automatic overlap of a wgmma group with the work "
                    "after it, no intra-warp-group overlap, no ping-pong turns), and check-wgmma-groups checks them";
            ctx.explain.record(std::move(d));
        }
        return kernel;
    }
    ir::Kernel out = kernel;
    Overlapper overlapper(kernel, ctx);
    out.body = overlapper.mutate(kernel.body);
    overlapper.edits.applyTo(out);
    return out;
}

} // namespace tilet
