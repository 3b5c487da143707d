// StoreUniformOnce.cpp -- see StoreUniformOnce.h.
#include "passes/StoreUniformOnce.h"

#include "ir/Uniformity.h"
#include "ir/Visitor.h"

#include <optional>
#include <utility>

#include <set>
#include <utility>

namespace tilet {

namespace {

class OneThreadStores : public ir::Mutator {
public:
    OneThreadStores(const ir::Kernel &k, PassContext &ctx) : uniformity_(k.body), ctx_(ctx), scope_(&k.body) {}
    using ir::Mutator::mutate;

protected:
    ir::Stmt mutateLetStmt(const ir::Stmt &self, const ir::LetStmt &n) override {
        if (const ir::SpecialReg *r = ir::as<ir::SpecialReg>(n.value); r && r->special == ir::SpecialKind::ThreadIdx) threadIndexVars_.insert(n.var.get());
        uniformity_.bind(n.var.get(), divergent_ || uniformity_.threadDependent(n.value));
        return ir::Mutator::mutateLetStmt(self, n);
    }
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        // A loop some threads leave apart (a break or continue they take on
        // their own) may have lost the thread that would store for them all.
        bool dependent = n.threadLocal || uniformity_.loopRunsApart(self);
        uniformity_.bind(n.var.get(), divergent_ || dependent);
        return underControl(dependent, [&] { return ir::Mutator::mutateFor(self, n); });
    }
    ir::Stmt mutateIfThenElse(const ir::Stmt &self, const ir::IfThenElse &n) override {
        std::optional<int64_t> one = soleThread(n.cond);
        if (!one) return underControl(uniformity_.threadDependent(n.cond), [&] { return ir::Mutator::mutateIfThenElse(self, n); });
        // `if (tx == t)`: its then-arm runs in thread t alone.
        std::optional<int64_t> outer = std::exchange(soleThread_, one);
        ir::Stmt thenBody = underControl(true, [&] { return mutate(n.thenBody); });
        soleThread_ = std::nullopt;
        ir::Stmt elseBody = n.elseBody ? underControl(true, [&] { return mutate(n.elseBody); }) : nullptr;
        soleThread_ = outer;
        if (thenBody == n.thenBody && elseBody == n.elseBody) return self;
        return std::make_shared<ir::IfThenElse>(n.cond, thenBody, elseBody, n.span);
    }
    ir::Stmt mutateWhile(const ir::Stmt &self, const ir::While &n) override {
        return underControl(uniformity_.loopRunsApart(self), [&] { return ir::Mutator::mutateWhile(self, n); });
    }
    ir::Stmt mutateWarpSpecialize(const ir::Stmt &self, const ir::WarpSpecialize &n) override {
        int64_t outer = std::exchange(firstThread_, n.firstThread());
        const ir::Stmt *outerScope = std::exchange(scope_, &n.body);
        uniformity_.enterRole(n);
        ir::Stmt out = ir::Mutator::mutateWarpSpecialize(self, n);
        uniformity_.leaveRole();
        firstThread_ = outer;
        scope_ = outerScope;
        return out;
    }

    // An Elect's body runs in one thread already.
    ir::Stmt mutateElect(const ir::Stmt &self, const ir::Elect &) override { return self; }

    ir::Stmt mutateStore(const ir::Stmt &self, const ir::Store &n) override {
        bool memory = n.buffer->scope == ir::MemScope::Shared || n.buffer->scope == ir::MemScope::Global;
        if (divergent_ || !memory || n.op != ir::StoreOp::Assign || uniformity_.threadDependent(n.value)) return self;
        for (const ir::Expr &i : n.indices) {
            if (uniformity_.threadDependent(i)) return self;
        }
        Decision d;
        d.where = n.span;
        d.op = "store to '" + n.buffer->name + "'";
        d.choice = "by thread " + std::to_string(firstThread_) + " only";
        d.why = "every thread would store the same value to the same element (a write-write race, and one transaction per thread)";
        ctx_.explain.record(std::move(d));
        ir::Stmt guarded = std::make_shared<ir::IfThenElse>(ir::isThread(firstThread_), self, nullptr, n.span);
        guards_.insert(guarded.get());
        made_.push_back(guarded);
        return guarded;
    }

    // TileLang's tcgen05_mma_arrive run by a whole role: the commit tracks
    // the MMAs its own thread issued, and one thread issues the role's
    // (lower-gemms: its first), so that thread commits, once.
    ir::Stmt mutateTcgen05Commit(const ir::Stmt &self, const ir::Tcgen05Commit &n) override {
        // Under a condition on the thread index, the threads that take it
        // commit: right only when that is the issuing thread alone.
        if (divergent_) {
            if (soleThread_ != firstThread_ && issuesMmas(*scope_))
                ctx_.diags.error(n.span, "tcgen05_mma_arrive under a condition on the thread index is run by the threads that take it, and "
                                         "a commit tracks the MMAs of its own thread: only thread " + std::to_string(firstThread_) +
                                         " issues these tcgen05 gemms, so another would arrive at once. Write it where every thread of the "
                                         "role (or block) reaches it: tilet gives it to that thread");
            return self;
        }
        if (!issuesMmas(*scope_)) {
            ctx_.diags.error(n.span, "tcgen05_mma_arrive arrives once the MMAs of the thread that runs it complete, and thread " +
                                         std::to_string(firstThread_) + " issues no tcgen05 gemm here (it would arrive at once): " +
                                         "write it in the branch or ws(...) role whose gemms it waits for");
            return self;
        }
        Decision d;
        d.where = n.span;
        d.op = "tcgen05_mma_arrive on '" + n.barrier->name + "'";
        d.choice = "tcgen05.commit by thread " + std::to_string(firstThread_) + " only";
        d.why = std::string("the thread that issues this role's tcgen05.mma: a commit tracks the MMAs of its own thread; ") +
                (n.bothBlocks ? "one arrival in each block of the CTA pair (arrive_2cta)" : "one arrival");
        ctx_.explain.record(std::move(d));
        return std::make_shared<ir::IfThenElse>(ir::isThread(firstThread_), self, nullptr, n.span);
    }

    // TileLang's tcgen05_cp_warpx4 (one elected thread issues it): the
    // thread that issues the role's tcgen05.mma, so that the tensor core runs
    // the copy before the MMAs that read what it copied, and their commit
    // covers it (PTX ISA, "tcgen05 Memory Consistency Model": pipelined
    // tcgen05.cp -> tcgen05.mma of one thread).
    ir::Stmt mutateTcgen05Copy(const ir::Stmt &self, const ir::Tcgen05Copy &n) override {
        if (divergent_) return self;
        if (!issuesMmas(*scope_)) {
            ctx_.diags.error(n.span, "tcgen05_cp_warpx4 is issued by the thread that issues the role's tcgen05 gemms, and thread " +
                                         std::to_string(firstThread_) + " issues none here: write it in the branch or role of the gemm_blockscaled it feeds");
            return self;
        }
        Decision d;
        d.where = n.span;
        d.op = "tcgen05_cp_warpx4 of '" + n.src->name + "' into '" + n.tmem->name + "'";
        d.choice = std::string(n.pair ? "tcgen05.cp.cta_group::2" : "tcgen05.cp.cta_group::1") + ".32x128b.warpx4 by thread " +
                   std::to_string(firstThread_) + " only, after tcgen05.fence::after_thread_sync" +
                   (n.pair ? ": the CTA pair's copy, the same words from each block's shared memory into its own tensor memory" : "");
        d.why = "the thread that issues this role's tcgen05.mma: the tensor core runs its copies before the MMAs it issues after them, and its "
                "commit to '" + (n.completesOn ? n.completesOn->name : std::string("?")) + "' covers them (the stage's shared words are read until then)";
        ctx_.explain.record(std::move(d));
        ir::Stmt guarded = std::make_shared<ir::IfThenElse>(ir::isThread(firstThread_), self, nullptr, n.span);
        guards_.insert(guarded.get());
        copyGuards_.insert(guarded.get());
        made_.push_back(guarded);
        return guarded;
    }

    // Whether `scope` (a role's body, or the kernel's outside its roles) issues a tcgen05.mma.
    static bool issuesMmas(const ir::Stmt &scope) {
        std::set<const ir::StmtNode *> mmas, otherRoles;
        ir::forEachStmt(scope, [&](const ir::Stmt &s) {
            if (ir::as<ir::Tcgen05Mma>(s)) mmas.insert(s.get());
            if (ir::as<ir::WarpSpecialize>(s))
                ir::forEachStmt(s, [&](const ir::Stmt &x) { otherRoles.insert(x.get()); });
        });
        for (const ir::StmtNode *m : mmas)
            if (!otherRoles.count(m)) return true;
        return false;
    }

    // Consecutive one-thread stores share one branch.
    ir::Stmt mutateSeq(const ir::Stmt &self, const ir::Seq &n) override {
        ir::Stmt base = ir::Mutator::mutateSeq(self, n);
        const ir::Seq *q = ir::as<ir::Seq>(base);
        if (!q) return base;
        std::vector<ir::Stmt> out, run;
        bool changed = false;
        auto flush = [&] {
            // tcgen05.cp after a wait on a barrier: ordered after it by
            // tcgen05.fence::after_thread_sync, once for a run of them.
            bool copies = !run.empty() && copyGuards_.count(run[0].get());
            if (run.size() == 1 && !copies) out.push_back(run[0]);
            if (run.size() > 1 || copies) {
                std::vector<ir::Stmt> stores;
                if (copies) stores.push_back(std::make_shared<ir::Tcgen05Sync>(ir::Tcgen05SyncKind::FenceAfter, run[0]->span));
                for (const ir::Stmt &g : run) stores.push_back(ir::as<ir::IfThenElse>(g)->thenBody);
                out.push_back(std::make_shared<ir::IfThenElse>(ir::as<ir::IfThenElse>(run[0])->cond, ir::seq(stores), nullptr, run[0]->span));
                changed = true;
            }
            run.clear();
        };
        for (const ir::Stmt &x : q->stmts) {
            if (!guards_.count(x.get())) flush();
            (guards_.count(x.get()) ? run : out).push_back(x);
        }
        flush();
        if (!changed) return base;
        return ir::seq(out);
    }

private:
    // Inside control flow that threads may follow differently a store is
    // not made by every thread, so it is left as it is.
    template <typename F> ir::Stmt underControl(bool dependent, F walk) {
        bool outer = divergent_;
        divergent_ = divergent_ || dependent;
        ir::Stmt out = walk();
        divergent_ = outer;
        return out;
    }

    ir::Uniformity uniformity_;
    PassContext &ctx_;
    const ir::Stmt *scope_;   // the body of the role (or kernel) being walked
    std::set<const ir::StmtNode *> guards_;   // the branches made here
    std::set<const ir::StmtNode *> copyGuards_;   // those of tcgen05.cp
    std::vector<ir::Stmt> made_;   // keeps them alive: a freed node's address could be taken by another
    bool divergent_ = false;
    std::optional<int64_t> soleThread_;                   // in the then-arm of `if (tx == t)`: t
    std::set<const ir::VarNode *> threadIndexVars_;       // names of threadIdx.x (threads(N) as (tx))

    // t when `cond` is `threadIdx.x == t` (either way round).
    std::optional<int64_t> soleThread(const ir::Expr &cond) const {
        const ir::Binary *b = ir::as<ir::Binary>(cond);
        if (!b || b->op != ir::BinaryOp::Eq) return std::nullopt;
        auto isIndex = [&](const ir::Expr &e) {
            const ir::SpecialReg *r = ir::as<ir::SpecialReg>(e);
            const ir::VarNode *v = ir::as<ir::VarNode>(e);
            return (r && r->special == ir::SpecialKind::ThreadIdx) || (v && threadIndexVars_.count(v));
        };
        if (isIndex(b->a)) return ir::constInt(b->b);
        if (isIndex(b->b)) return ir::constInt(b->a);
        return std::nullopt;
    }
    int64_t firstThread_ = 0;   // the first thread of the block, or of the warp-specialized role
};

} // namespace

ir::Kernel storeUniformOnce(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    out.body = OneThreadStores(kernel, ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
