// WaitSynchronousGemms.cpp -- see WaitSynchronousGemms.h.
#include "passes/WaitSynchronousGemms.h"

#include "ir/BufferEdits.h"
#include "ir/Effects.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <functional>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

// TileLang's T.gemm(..., mbar) into tensor memory waits for its MMAs; its
// T.tcgen05_gemm (here inst = tcgen05) and T.tcgen05_gemm_blockscaled (here
// gemm_blockscaled with factors in tensor memory) do not.
bool isSynchronousTcgen05(const ir::Gemm &g) {
    bool blockScaledTcgen05 = g.sfa && g.sfa->buffer->scope == ir::MemScope::TMem;
    return g.mbar && g.c.buffer->scope == ir::MemScope::TMem && g.explicitInst == ir::GemmInst::Unselected && !blockScaledTcgen05;
}

// A T.gemm into tensor memory with no mbar (and no inst = tcgen05, which
// would make it TileLang's asynchronous T.tcgen05_gemm): synchronous like a
// gemm into registers, on a barrier of tilet's.
// (Not the CTA pair's: its MMAs write the tensor memory of both blocks, and
// the peer block would have to wait too; select-gemm-inst asks for mbar.)
bool needsOwnBarrier(const ir::Gemm &g) {
    bool blockScaledTcgen05 = g.sfa && g.sfa->buffer->scope == ir::MemScope::TMem;
    return !g.mbar && !g.completesOn && !g.use2cta && g.c.buffer->scope == ir::MemScope::TMem && g.explicitInst == ir::GemmInst::Unselected &&
           !blockScaledTcgen05;
}

// `body` with the statement after its leading allocations and bindings
// replaced by wrap(that statement).
Stmt wrapAfterLeadingBindings(const Stmt &body, const std::function<Stmt(const Stmt &)> &wrap) {
    if (const ir::Allocate *a = ir::as<ir::Allocate>(body))
        return std::make_shared<ir::Allocate>(a->buffer, wrapAfterLeadingBindings(a->body, wrap), a->span);
    if (const ir::LetStmt *l = ir::as<ir::LetStmt>(body))
        return std::make_shared<ir::LetStmt>(l->var, l->value, wrapAfterLeadingBindings(l->body, wrap), l->span);
    return wrap(body);
}

bool holdsJump(const Stmt &body) {
    bool found = false;
    ir::forEachStmt(body, [&](const Stmt &s) { found = found || ir::as<ir::Jump>(s); });
    return found;
}

// How many statements of `body` may arrive on barrier `index` of `barrier`
// (gemms with mbar included: the effects query counts their commit); an
// arrival on another constant index of the array does not count.
int arrivalsOn(const Stmt &body, const ir::BufferNode *barrier, int64_t index) {
    int n = 0;
    ir::forEachEffect(body, [&](const Stmt &, const ir::Effects &e) {
        for (const ir::SyncEffect &s : e.syncs) {
            if ((s.kind != ir::SyncKind::MbarrierArrive && !(s.kind == ir::SyncKind::MbarrierExpectTx && s.arrives)) || s.barrier != barrier) continue;
            std::optional<int64_t> other = s.index && *s.index ? ir::constInt(*s.index) : std::optional<int64_t>(0);
            if (!other || *other == index) ++n;
        }
    });
    return n;
}

bool readsMemory(const Expr &e) {
    bool reads = false;
    ir::forEachExpr(e, [&](const Expr &x) { reads |= ir::as<ir::Load>(x) != nullptr; });
    return reads;
}

class Waiter : public ir::Mutator {
public:
    Waiter(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        if (n.forKind == ir::ForKind::Parallel) return self;
        loops_.push_back(&n);
        branchesAtLoop_.push_back(branches_);
        boundInLoops_.push_back(n.var.get());
        Stmt out = ir::Mutator::mutateFor(self, n);
        boundInLoops_.pop_back();
        branchesAtLoop_.pop_back();
        loops_.pop_back();
        return out;
    }
    Stmt mutateLetStmt(const Stmt &self, const ir::LetStmt &n) override {
        if (loops_.empty()) return ir::Mutator::mutateLetStmt(self, n);
        boundInLoops_.push_back(n.var.get());
        Stmt out = ir::Mutator::mutateLetStmt(self, n);
        boundInLoops_.pop_back();
        return out;
    }
    Stmt mutateIfThenElse(const Stmt &self, const ir::IfThenElse &n) override {
        ++branches_;
        Stmt out = ir::Mutator::mutateIfThenElse(self, n);
        --branches_;
        return out;
    }
    Stmt mutateWhile(const Stmt &self, const ir::While &n) override {
        ++whiles_;
        Stmt out = ir::Mutator::mutateWhile(self, n);
        --whiles_;
        return out;
    }

    Stmt mutateGemm(const Stmt &self, const ir::Gemm &g) override {
        if (needsOwnBarrier(g)) return waitOnOwnBarrier(g);
        if (!isSynchronousTcgen05(g)) return self;
        std::string bar = "'" + g.mbar->name + "'";
        auto cannot = [&](const std::string &why) {
            ctx_.diags.error(g.span, "cannot derive the phase of " + bar + " this gemm waits for (TileLang's synchronous T.gemm with mbar): " + why +
                                         "; write inst = tcgen05 and wait on " + bar + " yourself");
            return self;
        };
        if (g.mbarIndex && !ir::constInt(g.mbarIndex)) return cannot("it arrives on a barrier of the array chosen at run time");
        if (g.mbar->arriveCounts.size() != 1 && !g.mbarIndex) return cannot(bar + " is an array; name one barrier");
        int64_t index = g.mbarIndex ? *ir::constInt(g.mbarIndex) : 0;
        if (static_cast<size_t>(index) < g.mbar->arriveCounts.size() && g.mbar->arriveCounts[index] != 1)
            return cannot(bar + " completes a phase with " + std::to_string(g.mbar->arriveCounts[index]) +
                          " arrivals, and the gemm's commit is one");
        if (arrivalsOn(kernel_.body, g.mbar.get(), index) != 1) return cannot("something else arrives on " + bar + " too");
        std::string why;
        Expr parity = executionParity(why);
        if (!parity) return cannot(why);
        Stmt wait = std::make_shared<ir::BarrierWait>(g.mbar, g.mbarIndex ? g.mbarIndex : ir::intImm(0), parity, g.span);

        Decision d;
        d.where = g.span;
        d.op = "gemm with mbar";
        d.choice = "then every thread waits for phase " + ir::toString(parity) + " of " + bar;
        d.why = "TileLang's T.gemm lowered to tcgen05 waits for its own MMAs: they complete asynchronously and arrive once on " + bar +
                (loops_.empty() ? ", whose first phase this is" : ", once per iteration of the enclosing loops, so the phase is the parity of the iterations before");
        ctx_.explain.record(std::move(d));
        return ir::seq({self, wait});
    }

    // The parity of the executions before this one -- the linearised
    // iteration count of the enclosing loops, mod 2 -- or null (and why)
    // when they cannot be counted.
    // (A branch around the loops runs them at most once; one inside them
    // may skip executions, and so may a break or continue.)
    Expr executionParity(std::string &why) const {
        if (whiles_) {
            why = "it runs in a while loop, so its executions cannot be counted";
            return nullptr;
        }
        if (!loops_.empty() && branches_ > branchesAtLoop_.front()) {
            why = "it runs under a branch inside loop '" + loops_.front()->var->name + "', so its executions cannot be counted";
            return nullptr;
        }
        for (const ir::For *loop : loops_)
            if (holdsJump(loop->body)) {
                why = "loop '" + loop->var->name + "' holds a break or continue, so its executions cannot be counted";
                return nullptr;
            }
        Expr count = ir::intImm(0);
        for (size_t i = 0; i < loops_.size(); ++i) {
            const ir::For &loop = *loops_[i];
            // An inner loop's trip count must be the same in every
            // iteration of the outer ones: no name bound inside them, no
            // memory (a `var` or a tensor) that may change between them.
            // A bound read from memory (a var the body may advance) is
            // read once, when the loop starts, and may differ later.
            if (readsMemory(loop.extent) || readsMemory(loop.min)) {
                why = "the bounds of loop '" + loop.var->name + "' read memory, so its executions are counted from values that may change";
                return nullptr;
            }
            if (i > 0) {
                for (const ir::VarNode *v : boundInLoops_)
                    if (ir::usesVar(loop.extent, v) || ir::usesVar(loop.min, v)) {
                        why = "the trip count of loop '" + loop.var->name + "' depends on '" + v->name + "', bound inside the loops around it";
                        return nullptr;
                    }
            }
            count = ir::add(ir::mul(count, loop.extent), ir::sub(loop.var, loop.min));
        }
        return loops_.empty() ? ir::intImm(0) : ir::simplify(ir::mod(count, ir::intImm(2)));
    }

public:
    // tilet's barriers for gemms without mbar, one per gemm, and their phase bits (per thread).
    ir::Buffer ownBarriers, ownPhases;
    int64_t ownCount = 0;

private:
    // gemm_done[i] takes the gemm's commit and every thread waits for its
    // phase: the parity of the gemm's executions where they can be counted
    // (as for TileLang's T.gemm with mbar), else the phase bit each thread
    // keeps and flips (as for tilet's TMA loads), which holds under any
    // branch or `while`. (A counted parity leaves the kernel without a
    // statement of tilet's ahead of it, which warp specialization needs.)
    Stmt waitOnOwnBarrier(const ir::Gemm &g) {
        if (!ownBarriers) ownBarriers = ir::makeBuffer("gemm_done", DType::UInt64, {ir::intImm(1)}, ir::MemScope::Barrier, kernel_.span);
        Expr index = ir::intImm(ownCount++);
        auto gemm = std::make_shared<ir::Gemm>(g);
        gemm->mbar = ownBarriers;
        gemm->mbarIndex = index;
        std::string uncounted;
        Expr parity = executionParity(uncounted);
        std::vector<Stmt> out{gemm};
        const std::string barrier = "tilet's barrier 'gemm_done[" + ir::toString(index) + "]'";
        Decision d;
        d.where = g.span;
        d.op = "gemm into tensor memory";
        if (parity) {
            out.push_back(std::make_shared<ir::BarrierWait>(ownBarriers, index, parity, g.span));
            d.choice = "synchronous: one tcgen05.commit to " + barrier + ", then every thread waits for phase " + ir::toString(parity) +
                       (loops_.empty() ? "" : " (the parity of the iterations before)");
        } else {
            if (!ownPhases) ownPhases = ir::makeBuffer("gemm_phase", DType::Int32, {ir::intImm(1)}, ir::MemScope::Local, kernel_.span);
            Expr phase = std::make_shared<ir::Load>(ownPhases, std::vector<Expr>{index}, g.span);
            out.push_back(std::make_shared<ir::BarrierWait>(ownBarriers, index, phase, g.span));
            out.push_back(std::make_shared<ir::Store>(ownPhases, std::vector<Expr>{index}, ir::binary(ir::BinaryOp::BitXor, phase, ir::intImm(1)),
                                                      ir::StoreOp::Assign, g.span));
            d.choice = "synchronous: one tcgen05.commit to " + barrier + ", then every thread waits for the phase its bit 'gemm_phase[" +
                       ir::toString(index) + "]' names and flips the bit";
            d.details.push_back("a phase bit per thread, since " + uncounted);
        }
        d.why = "a gemm into tensor memory with neither mbar nor inst = tcgen05 is TileLang's synchronous T.gemm: its MMAs complete before "
                "the next statement, as a gemm into registers does (TileLang asks for an mbar here; tilet uses a barrier of its own)";
        ctx_.explain.record(std::move(d));
        return ir::seq(std::move(out));
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    std::vector<const ir::For *> loops_;
    std::vector<const ir::VarNode *> boundInLoops_;   // loop variables and lets inside the enclosing loops
    int branches_ = 0, whiles_ = 0;
    std::vector<int> branchesAtLoop_;   // the branches around each of loops_
};

} // namespace

ir::Kernel waitSynchronousGemms(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Waiter waiter(kernel, ctx);
    out.body = waiter.mutate(kernel.body);
    if (waiter.ownBarriers) {
        ir::BufferEdits edits;
        ir::BufferNode &barriers = edits.edit(waiter.ownBarriers);
        barriers.shape = {ir::intImm(waiter.ownCount)};
        barriers.arriveCounts.assign(static_cast<size_t>(waiter.ownCount), 1);
        if (waiter.ownPhases) {
            // (One bit per gemm, indexed like the barriers: some are unused.)
            edits.edit(waiter.ownPhases).shape = {ir::intImm(waiter.ownCount)};
            ir::VarRef i = ir::makeVar("i");
            auto clear = std::make_shared<ir::For>(
                i, ir::intImm(0), ir::intImm(waiter.ownCount), ir::ForKind::Unrolled,
                std::make_shared<ir::Store>(waiter.ownPhases, std::vector<Expr>{i}, ir::intImm(0), ir::StoreOp::Assign, kernel.span), kernel.span);
            clear->threadLocal = true;
            // After the kernel's leading allocations and bindings: warp
            // specialization splits what follows its first statement.
            out.body = wrapAfterLeadingBindings(out.body, [&](const Stmt &rest) -> Stmt {
                return std::make_shared<ir::Allocate>(waiter.ownPhases, ir::seq({clear, rest}), kernel.span);
            });
        }
        out.body = std::make_shared<ir::Allocate>(waiter.ownBarriers, out.body, kernel.span);
        edits.applyTo(out);
    }
    return out;
}

} // namespace tilet
