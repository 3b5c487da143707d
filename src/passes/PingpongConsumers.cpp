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
void straightLine(const Stmt &s, std::vector<const ir::StmtNode *> &out) {
    if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
        for (const Stmt &x : q->stmts) straightLine(x, out);
    } else if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
        straightLine(l->body, out);
    } else if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) {
        straightLine(a->body, out);
    } else if (s) {
        out.push_back(s.get());
    }
}

bool isWgmmaSync(const ir::StmtNode *s, ir::WgmmaSyncKind k) {
    return s->kind == ir::StmtKind::WgmmaSync && static_cast<const ir::WgmmaSync *>(s)->sync == k;
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
        // Two consecutive named barriers no other barrier of the kernel uses,
        // from the top of PTX's 16 (insert-syncs takes role barriers from 1 up).
        std::set<int64_t> used;
        ir::forEachStmt(k.body, [&](const Stmt &s) {
            if (const ir::SyncThreads *b = ir::as<ir::SyncThreads>(s)) used.insert(b->barrierId);
        });
        for (int64_t id = 14; id > 0 && !firstId_; --id)
            if (!used.count(id) && !used.count(id + 1)) firstId_ = id;
    }
    using ir::Mutator::mutate;

protected:
    Stmt mutateWarpSpecialize(const Stmt &self, const ir::WarpSpecialize &n) override {
        if (!n.wholeWarpGroups() || n.warpGroups().size() != 2 || !firstId_) return self;
        role_ = &n;
        roleArrivals_.clear();
        ir::forEachEffect(n.body, [&](const Stmt &, const ir::Effects &fx) {
            for (const ir::SyncEffect &e : fx.syncs)
                if (e.kind == ir::SyncKind::MbarrierArrive || e.kind == ir::SyncKind::MbarrierExpectTx) roleArrivals_.insert(e.barrier);
        });
        Stmt out = ir::Mutator::mutateWarpSpecialize(self, n);
        role_ = nullptr;
        return out;
    }
    // Inside a branch or a loop of the thread's own trip count, the two warp
    // groups may not run the loop alike.
    Stmt mutateIfThenElse(const Stmt &self, const ir::IfThenElse &n) override { return divergent(self, [&] { return ir::Mutator::mutateIfThenElse(self, n); }); }
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
        if (!role_ || base != self || n.forKind != ir::ForKind::Serial) return base;
        std::string whyNot = divergence_ || !uniform ? "the two warp groups may not run the loop alike (it is under a branch, or its bounds depend on the thread)" : "";
        if (Stmt turns = alternate(n, whyNot)) return turns;
        return base;
    }

private:
    template <class F> Stmt divergent(const Stmt &, F &&walk) {
        ++divergence_;
        Stmt out = walk();
        --divergence_;
        return out;
    }

    // The loop with the warp groups' turns, or null when it does not
    // qualify. A loop issuing two or more wgmma groups that does not says
    // why (`whyNot`, or the first condition it fails).
    Stmt alternate(const ir::For &f, std::string whyNot) {
        std::vector<const ir::StmtNode *> line;
        straightLine(f.body, line);
        std::vector<const ir::StmtNode *> fences, commits;
        for (const ir::StmtNode *s : line) {
            if (isWgmmaSync(s, ir::WgmmaSyncKind::Fence)) fences.push_back(s);
            if (isWgmmaSync(s, ir::WgmmaSyncKind::Commit)) commits.push_back(s);
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
            if (const ir::BarrierWait *w = ir::as<ir::BarrierWait>(s); w && roleArrivals_.count(w->barrier.get()))
                what = "a wait on '" + w->barrier->name + "', on which the warp groups themselves arrive";
            if (!what.empty()) meeting = what + " at line " + std::to_string(s->span.begin.line);
        });
        if (commits.empty() || commitsAnywhere < 2) return nullptr;   // nothing to alternate here
        const ir::StmtNode *firstCommit = commits.empty() ? nullptr : commits.front(), *lastFence = fences.empty() ? nullptr : fences.back();
        std::optional<int64_t> trips = ir::constInt(f.extent);
        if (!whyNot.empty()) {
        } else if (!meeting.empty()) {
            whyNot = "one warp group waits for the other in the loop (" + meeting + "), so a turn could wait for itself";
        } else if (fences.size() != fencesAnywhere || commits.size() != commitsAnywhere || fences.size() != commits.size()) {
            whyNot = "some of its wgmma groups are issued under a branch or in an inner loop";
        } else if (std::find(line.begin(), line.end(), firstCommit) > std::find(line.begin(), line.end(), lastFence)) {
            whyNot = "its wgmma groups overlap";
        } else if (trips && *trips <= 0) {
            return nullptr;
        }
        if (!whyNot.empty()) {
            Decision d;
            d.where = f.span;
            d.op = "warp-group ping-pong";
            d.choice = "none";
            d.why = whyNot;
            ctx_.explain.record(std::move(d));
            return nullptr;
        }

        const int64_t threads = role_->threads();
        ir::VarRef groupVar = ir::makeVar("warp_group", DType::Int32, f.span);
        Expr group = groupVar;
        auto isGroup = [&](int64_t g) { return ir::binary(ir::BinaryOp::Eq, group, ir::intImm(g)); };
        auto passTo = [&](Expr id, SourceRange span) { return std::make_shared<ir::IssueTurn>(ir::IssueTurn::Action::Pass, std::move(id), threads, span); };
        SourceRange takeSpan = lastFence->span, passSpan = firstCommit->span;
        Stmt take = std::make_shared<ir::IssueTurn>(ir::IssueTurn::Action::Take, ir::add(ir::intImm(firstId_), group), threads, takeSpan);
        // Warp group 1 does not pass in the first iteration: warp group 0's
        // first pass is the only turn in play, so the two alternate.
        Expr passes = ir::binary(ir::BinaryOp::Or, isGroup(0), ir::binary(ir::BinaryOp::Gt, f.var, f.min));
        Expr other = ir::add(ir::binary(ir::BinaryOp::BitXor, group, ir::intImm(1)), ir::intImm(firstId_));
        Stmt pass = std::make_shared<ir::IfThenElse>(passes, passTo(other, passSpan), nullptr, passSpan);
        PlaceTurns place(lastFence, take, firstCommit, pass);
        Stmt body = place.mutate(f.body);
        if (place.placed != 2) return nullptr;   // a statement outside any Seq: leave the loop as it is

        // Its pass in the first iteration withheld, warp group 1 owes warp
        // group 0 the turn of its last iteration.
        Expr owes = isGroup(1);
        if (!trips) owes = ir::logicalAnd(owes, ir::binary(ir::BinaryOp::Gt, f.extent, ir::intImm(0)));
        Stmt last = std::make_shared<ir::IfThenElse>(owes, passTo(ir::intImm(firstId_), passSpan), nullptr, passSpan);

        Decision d;
        d.where = f.span;
        d.op = "warp-group ping-pong";
        d.choice = "the 2 warp groups of threads " + std::to_string(role_->firstThread()) + ".." + std::to_string(role_->firstThread() + threads - 1) +
                   " take turns at issuing wgmma: each waits for its turn (bar.sync " + std::to_string(firstId_) + " + its warp group, " +
                   std::to_string(threads) + ") before the wgmma of line " + std::to_string(takeSpan.begin.line) +
                   " and hands it on (bar.arrive) once it has issued the wgmma of line " + std::to_string(passSpan.begin.line) + " of the next iteration";
        d.why = "the loop issues " + std::to_string(fences.size()) +
                " wgmma groups per iteration with other work between them: one warp group does that work while the other's GEMMs run on the "
                "tensor cores (FlashAttention-3's ping-pong); the turns order when wgmma are issued, not memory";
        d.details.push_back("warp group 0 passes first; warp group 1 passes once more after the loop, so each bar.sync meets one bar.arrive");
        ctx_.explain.record(std::move(d));
        Expr whichGroup = ir::div(ir::sub(ir::threadIdx(), ir::intImm(role_->firstThread())), ir::intImm(kGroup));
        return std::make_shared<ir::LetStmt>(groupVar, whichGroup, ir::seq({ir::rebuildFor(f, f.min, f.extent, body), last}), f.span);
    }

    ir::Uniformity uniformity_;
    PassContext &ctx_;
    int64_t firstId_ = 0;                      // named barriers firstId_ and firstId_ + 1; 0: none free
    const ir::WarpSpecialize *role_ = nullptr; // the role of two warp groups being walked
    std::set<const ir::BufferNode *> roleArrivals_;   // mbarriers the role itself arrives on
    int divergence_ = 0;                       // branches, elected threads and thread-dependent loops around
};

} // namespace

ir::Kernel pingpongConsumers(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    out.body = Pingpong(kernel, ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
