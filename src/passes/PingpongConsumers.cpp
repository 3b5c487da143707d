// PingpongConsumers.cpp -- see PingpongConsumers.h.
#include "passes/PingpongConsumers.h"

#include "ir/Effects.h"
#include "ir/Uniformity.h"
#include "ir/Visitor.h"

#include <algorithm>
#include <set>
#include <utility>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

constexpr int64_t kGroup = ir::WarpSpecialize::kGroupThreads;

// The statements a loop body runs in every iteration, in order: through
// Seqs, bindings and allocations, not into loops or branches.
void straightLine(const Stmt &s, std::vector<Stmt> &out) {
    if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
        for (const Stmt &x : q->stmts) straightLine(x, out);
    } else if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
        straightLine(l->body, out);
    } else if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) {
        straightLine(a->body, out);
    } else if (s) {
        out.push_back(s);
    }
}

bool isWgmmaSync(const ir::StmtNode *s, ir::WgmmaSyncKind k) {
    return s->kind == ir::StmtKind::WgmmaSync && static_cast<const ir::WgmmaSync *>(s)->sync == k;
}

// Whether a statement of `line` between `from` and `to` is work the other
// warp group's GEMMs could run beside (ir::computesBesideWgmma).
bool workBetween(const std::vector<Stmt> &line, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i)
        if (ir::computesBesideWgmma(line[i])) return true;
    return false;
}

// Puts `take` before one statement of a sequence and `pass` after another.
class PlaceTurns : public ir::Mutator {
public:
    PlaceTurns(const ir::StmtNode *before, Stmt take, const ir::StmtNode *after, Stmt pass)
        : before_(before), after_(after), take_(std::move(take)), pass_(std::move(pass)) {}
    using ir::Mutator::mutate;
    int placed = 0;

protected:
    Stmt mutateSeq(const Stmt &self, const ir::Seq &n) override {
        std::vector<Stmt> out;
        bool changed = false;
        for (const Stmt &x : n.stmts) {
            if (x.get() == before_) out.push_back(take_), ++placed, changed = true;
            Stmt y = mutate(x);
            changed = changed || y != x;
            out.push_back(y);
            if (x.get() == after_) out.push_back(pass_), ++placed, changed = true;
        }
        return changed ? ir::seq(std::move(out)) : self;
    }

private:
    const ir::StmtNode *before_, *after_;
    Stmt take_, pass_;
};

class Pingpong : public ir::Mutator {
public:
    Pingpong(const ir::Kernel &k, PassContext &ctx) : uniformity_(k.body), ctx_(ctx) {
        ir::forEachStmt(k.body, [&](const Stmt &s) {
            if (const ir::SyncThreads *b = ir::as<ir::SyncThreads>(s)) usedIds_.insert(b->barrierId);
        });
    }
    using ir::Mutator::mutate;

protected:
    Stmt mutateWarpSpecialize(const Stmt &self, const ir::WarpSpecialize &n) override {
        uniformity_.enterRole(n);
        Stmt out = mutateRole(self, n);
        uniformity_.leaveRole();
        return out;
    }
    Stmt mutateRole(const Stmt &self, const ir::WarpSpecialize &n) {
        // Other roles are walked too, for the loops that ask for turns.
        if (!n.wholeWarpGroups() || n.warpGroups().size() != 2) return ir::Mutator::mutateWarpSpecialize(self, n);
        role_ = &n;
        firstId_ = 0;
        roleArrivals_.clear();
        ir::forEachEffect(n.body, [&](const Stmt &, const ir::Effects &fx) {
            for (const ir::SyncEffect &e : fx.syncs)
                if (e.kind == ir::SyncKind::MbarrierArrive || e.kind == ir::SyncKind::MbarrierExpectTx) roleArrivals_.insert(e.barrier);
        });
        Stmt out = ir::Mutator::mutateWarpSpecialize(self, n);
        role_ = nullptr;
        return out;
    }
    // Inside a branch on the thread or a loop of the thread's own trip
    // count, the two warp groups may not run the loop alike. (A branch the
    // whole block takes alike, such as the one around a rotated loop of
    // overlap-intra-warpgroup, is not one.)
    Stmt mutateIfThenElse(const Stmt &self, const ir::IfThenElse &n) override {
        if (!uniformity_.threadDependent(n.cond)) return ir::Mutator::mutateIfThenElse(self, n);
        return divergent(self, [&] { return ir::Mutator::mutateIfThenElse(self, n); });
    }
    Stmt mutateElect(const Stmt &self, const ir::Elect &n) override { return divergent(self, [&] { return ir::Mutator::mutateElect(self, n); }); }
    Stmt mutateWhile(const Stmt &self, const ir::While &n) override { return divergent(self, [&] { return ir::Mutator::mutateWhile(self, n); }); }
    Stmt mutateLetStmt(const Stmt &self, const ir::LetStmt &n) override {
        uniformity_.bind(n.var.get(), uniformity_.threadDependent(n.value));
        return ir::Mutator::mutateLetStmt(self, n);
    }

    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        bool uniform = !uniformity_.threadDependent(n.min) && !uniformity_.threadDependent(n.extent);
        uniformity_.bind(n.var.get(), !uniform);
        if (!uniform) ++divergence_;
        Stmt base = ir::Mutator::mutateFor(self, n);
        if (!uniform) --divergence_;
        if (n.pingpong == false) {
            if (role_) record(n, "none", "pingpong = false");
            return base;
        }
        // Not given to them: a loop inside the role's loop took the turns.
        if ((!role_ || base != self) && !n.pingpong) return base;
        std::string given, whyNot;
        if (!role_)
            given = "the loop is not run by two consumer warp groups of their own (a ws(...) role of two warp groups, as automatic "
                    "warp specialization makes for 256 consumer threads)";
        else if (n.forKind != ir::ForKind::Serial) given = "the loop is not serial";
        else if (base != self) given = "a loop inside it takes the turns";
        else if (divergence_ || !uniform) given = "the two warp groups may not run the loop alike (it is under a branch, or its bounds depend on the thread)";
        Stmt turns = alternate(n, given, whyNot);
        if (turns) return turns;
        if (n.pingpong) {
            std::string reason = !whyNot.empty() ? whyNot : !given.empty() ? given : "the loop does not issue two or more wgmma groups per iteration";
            ctx_.diags.error(n.span, "pingpong = true cannot be honoured: " + reason);
        } else if (!whyNot.empty()) {
            record(n, "none", whyNot);
        }
        return base;
    }

private:
    void record(const ir::For &f, const std::string &choice, const std::string &why) {
        Decision d;
        d.where = f.span;
        d.op = "warp-group ping-pong";
        d.choice = choice;
        d.why = why;
        ctx_.explain.record(std::move(d));
    }

    template <class F> Stmt divergent(const Stmt &, F &&walk) {
        ++divergence_;
        Stmt out = walk();
        --divergence_;
        return out;
    }

    // The loop with the warp groups' turns, or null. A loop that issues two
    // or more wgmma groups per iteration and does not qualify gets the
    // reason in `whyNot`: `given` (the caller's), or the first condition it
    // fails; another loop leaves `whyNot` empty.
    Stmt alternate(const ir::For &f, const std::string &given, std::string &whyNot) {
        std::vector<Stmt> line;
        straightLine(f.body, line);
        std::vector<size_t> fences, commits;   // their positions in `line`
        for (size_t i = 0; i < line.size(); ++i) {
            if (isWgmmaSync(line[i].get(), ir::WgmmaSyncKind::Fence)) fences.push_back(i);
            if (isWgmmaSync(line[i].get(), ir::WgmmaSyncKind::Commit)) commits.push_back(i);
        }
        size_t fencesAnywhere = 0, commitsAnywhere = 0;
        std::string meeting;   // what makes one warp group wait for the other, if anything
        ir::forEachStmt(f.body, [&](const Stmt &s) {
            fencesAnywhere += isWgmmaSync(s.get(), ir::WgmmaSyncKind::Fence) ? 1 : 0;
            commitsAnywhere += isWgmmaSync(s.get(), ir::WgmmaSyncKind::Commit) ? 1 : 0;
            if (!meeting.empty()) return;
            std::string what;
            if (const ir::SyncThreads *b = ir::as<ir::SyncThreads>(s); b && b->barrierId >= 0)
                what = b->barrierId == 0 ? "__syncthreads()" : "bar.sync " + std::to_string(b->barrierId) + ", " + std::to_string(b->threads);
            if (ir::as<ir::ClusterSync>(s)) what = "a cluster barrier";
            if (ir::as<ir::IssueTurn>(s) || ir::as<ir::WarpSpecialize>(s)) what = "a turn or role of their own";
            if (ir::as<ir::CallExtern>(s)) what = "hand-written device code, which may synchronise";
            if (const ir::BarrierWait *w = ir::as<ir::BarrierWait>(s); w && roleArrivals_.count(w->barrier.get()))
                what = "a wait on '" + w->barrier->name + "', on which the warp groups themselves arrive";
            if (!what.empty()) meeting = what + " at line " + std::to_string(s->span.begin.line);
        });
        if (commitsAnywhere < 2) return nullptr;   // nothing to alternate
        size_t firstCommit = commits.empty() ? 0 : commits.front(), lastFence = fences.empty() ? 0 : fences.back();
        // The groups issued back to back with the work after them (a loop
        // overlap-intra-warpgroup rotated): the turn spans them within the
        // iteration. Otherwise it spans the last group and the next
        // iteration's first, around the work between them.
        const bool withinIteration = !fences.empty() && !commits.empty() && firstCommit < lastFence && !workBetween(line, firstCommit, lastFence) &&
                                     (workBetween(line, commits.back(), line.size()) || workBetween(line, 0, fences.front()));
        std::optional<int64_t> trips = ir::constInt(f.extent);
        if (!given.empty()) whyNot = given;
        else if (!meeting.empty()) whyNot = "one warp group waits for the other in the loop (" + meeting + "), so a turn could wait for itself";
        else if (fences.size() != fencesAnywhere || commits.size() != commitsAnywhere || fences.size() != commits.size())
            whyNot = "some of its wgmma groups are issued under a branch or in an inner loop";
        else if (firstCommit > lastFence)
            whyNot = "its wgmma groups overlap";
        else if (trips && *trips <= 0)
            whyNot = "the loop runs no iteration";
        else if (f.consumerStages == 0)
            whyNot = "only the consumers' loop of automatic warp specialization takes turns: its stage ring shows that waiting for a turn never "
                     "holds back a release the producer needs first";
        else if (f.consumerStages < 2)
            whyNot = "its tiles have one stage: a warp group waiting for its turn could hold back the release the producer needs before the "
                     "other warp group can hand it on";
        else if (!withinIteration && !workBetween(line, firstCommit, lastFence))
            whyNot = "nothing but its wgmma runs between the first and last wgmma groups: the turns would only stall them";
        if (whyNot.empty() && !firstId_) {
            // Two consecutive named barriers no other barrier of the kernel
            // uses, from the top of PTX's 16 (insert-syncs takes role
            // barriers from 1 up); one pair per role.
            for (int64_t id = 14; id > 0 && !firstId_; --id)
                if (!usedIds_.count(id) && !usedIds_.count(id + 1)) firstId_ = id;
            if (firstId_) usedIds_.insert({firstId_, firstId_ + 1});
            else whyNot = "no two named barriers are free";
        }
        if (!whyNot.empty()) return nullptr;

        const int64_t threads = role_->threads();
        ir::VarRef groupVar = ir::makeVar("warp_group", DType::Int32, f.span);
        Expr group = groupVar;
        auto isGroup = [&](int64_t g) { return ir::binary(ir::BinaryOp::Eq, group, ir::intImm(g)); };
        auto passTo = [&](Expr id, SourceRange span) { return std::make_shared<ir::IssueTurn>(ir::IssueTurn::Action::Pass, std::move(id), threads, span); };
        const size_t takeAt = withinIteration ? fences.front() : lastFence, passAt = withinIteration ? commits.back() : firstCommit;
        SourceRange takeSpan = line[takeAt]->span, passSpan = line[passAt]->span;
        Stmt take = std::make_shared<ir::IssueTurn>(ir::IssueTurn::Action::Take, ir::add(ir::intImm(firstId_), group), threads, takeSpan);
        Expr other = ir::add(ir::binary(ir::BinaryOp::BitXor, group, ir::intImm(1)), ir::intImm(firstId_));
        Stmt pass;
        Stmt first;   // before the loop
        if (withinIteration) {
            // Warp group 1 hands warp group 0 its first turn before the loop
            // and does not pass in the last iteration: each takes n turns and
            // gets n passes. Every pass in the loop follows a take of the same
            // warp group, and warp group 1's pass before the loop follows its
            // last take of the loop's previous run, so neither warp group can
            // pass twice before the other takes, even when the loop runs
            // again inside an outer one.
            Expr lastIteration = ir::sub(ir::add(f.min, f.extent), ir::intImm(1));
            Expr passes = ir::binary(ir::BinaryOp::Or, isGroup(0), ir::binary(ir::BinaryOp::Lt, f.var, lastIteration));
            pass = std::make_shared<ir::IfThenElse>(passes, passTo(other, passSpan), nullptr, passSpan);
            Expr opens = isGroup(1);
            if (!trips) opens = ir::logicalAnd(opens, ir::binary(ir::BinaryOp::Gt, f.extent, ir::intImm(0)));
            first = std::make_shared<ir::IfThenElse>(opens, passTo(ir::intImm(firstId_), passSpan), nullptr, passSpan);
        } else {
            // Warp group 1 does not pass in the first iteration: warp group 0's
            // first pass is the only turn in play, so the two alternate.
            Expr passes = ir::binary(ir::BinaryOp::Or, isGroup(0), ir::binary(ir::BinaryOp::Gt, f.var, f.min));
            pass = std::make_shared<ir::IfThenElse>(passes, passTo(other, passSpan), nullptr, passSpan);
        }
        PlaceTurns place(line[takeAt].get(), take, line[passAt].get(), pass);
        Stmt body = place.mutate(f.body);
        if (place.placed != 2) {   // a statement outside any Seq
            whyNot = "its wgmma groups are not statements of a sequence";
            return nullptr;
        }

        // Its pass in the first iteration withheld, warp group 1 owes warp
        // group 0 the turn of its last iteration.
        Stmt last;
        if (!withinIteration) {
            Expr owes = isGroup(1);
            if (!trips) owes = ir::logicalAnd(owes, ir::binary(ir::BinaryOp::Gt, f.extent, ir::intImm(0)));
            last = std::make_shared<ir::IfThenElse>(owes, passTo(ir::intImm(firstId_), passSpan), nullptr, passSpan);
        }

        Decision d;
        d.where = f.span;
        d.op = "warp-group ping-pong";
        d.choice = "the 2 warp groups of threads " + std::to_string(role_->firstThread()) + ".." + std::to_string(role_->firstThread() + threads - 1) +
                   " take turns at issuing wgmma: each waits for its turn (bar.sync " + std::to_string(firstId_) + " + its warp group, " +
                   std::to_string(threads) + ") before the wgmma of line " + std::to_string(takeSpan.begin.line) +
                   " and hands it on (bar.arrive) once it has issued the wgmma of line " + std::to_string(passSpan.begin.line) +
                   (withinIteration ? " of the same iteration" : " of the next iteration");
        d.why = "the loop issues " + std::to_string(fences.size()) +
                " wgmma groups per iteration with other work between them: one warp group does that work while the other's GEMMs run on the "
                "tensor cores (FlashAttention-3's ping-pong); the turns order when wgmma are issued, not memory";
        d.details.push_back(withinIteration ? "warp group 1 hands warp group 0 its first turn before the loop and does not pass in the last "
                                              "iteration, so each bar.sync meets one bar.arrive"
                                            : "warp group 0 passes first; warp group 1 passes once more after the loop, so each bar.sync meets one "
                                              "bar.arrive");
        ctx_.explain.record(std::move(d));
        Expr whichGroup = ir::div(ir::sub(ir::threadIdx(), ir::intImm(role_->firstThread())), ir::intImm(kGroup));
        return std::make_shared<ir::LetStmt>(groupVar, whichGroup, ir::seq({first, ir::rebuildFor(f, f.min, f.extent, body), last}), f.span);
    }

    ir::Uniformity uniformity_;
    PassContext &ctx_;
    std::set<int64_t> usedIds_;                // named barriers the kernel uses
    int64_t firstId_ = 0;                      // the role's turns: named barriers firstId_ and firstId_ + 1; 0: none yet
    const ir::WarpSpecialize *role_ = nullptr; // the role of two warp groups being walked
    std::set<const ir::BufferNode *> roleArrivals_;   // mbarriers the role itself arrives on
    int divergence_ = 0;                       // branches, elected threads and thread-dependent loops around
};

} // namespace

ir::Kernel pingpongConsumers(const ir::Kernel &kernel, PassContext &ctx) {
    if (kernel.waitsForWgmma) return kernel;   // the program's own waits (overlap-wgmma explains)
    ir::Kernel out = kernel;
    out.body = Pingpong(kernel, ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
