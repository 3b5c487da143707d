// OverlapWgmma.cpp -- see OverlapWgmma.h.
#include "passes/OverlapWgmma.h"

#include "ir/Effects.h"
#include "ir/Visitor.h"

#include <set>

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
    explicit Overlapper(PassContext &ctx) : ctx_(ctx) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        Stmt base = ir::Mutator::mutateFor(self, n);
        const ir::For &f = *ir::as<ir::For>(base);
        const ir::Seq *body = ir::as<ir::Seq>(f.body);
        if (f.forKind != ir::ForKind::Serial || !body) return base;

        // One wgmma wait in the loop, ending a statement that the release follows.
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
        if (waits.size() != 1 || waits.front()->pending != 0) return base;
        size_t at = body->stmts.size();
        for (size_t i = 0; i + 1 < body->stmts.size(); ++i) {
            if (lastStatement(body->stmts[i]) == waits.front() && ir::as<ir::BarrierArrive>(body->stmts[i + 1])) at = i;
        }
        if (at == body->stmts.size()) return base;
        // The release: the arrivals right after the wait (one per block of the cluster with multicast).
        std::vector<const ir::BarrierArrive *> releases;
        for (size_t i = at + 1; i < body->stmts.size() && ir::as<ir::BarrierArrive>(body->stmts[i]); ++i)
            releases.push_back(ir::as<ir::BarrierArrive>(body->stmts[i]));
        for (const ir::BarrierArrive *r : releases)
            if (!ir::usesVar(r->index, f.var.get())) return base;
        // Every operand must be a shared tile in two or more versions: a single
        // buffer would deadlock, and registers (A of wgmma from registers) are
        // rewritten by the next iteration while the group still reads them.
        for (const ir::BufferNode *b : operands)
            if (b->scope != ir::MemScope::Shared || b->pipelineVersions < 2) return base;
        // Nothing else in the loop may read or write the accumulators: not
        // their registers, nor the fragments they hold (a parallel loop or a
        // reduction over the accumulator, not lowered to registers yet), which
        // the wgmma group still in flight would write under them.
        bool touched = false;
        ir::forEachEffect(f.body, [&](const Stmt &s, const ir::Effects &fx) {
            if (ir::as<ir::Wgmma>(s)) return;
            for (const ir::Access &a : fx.accesses) {
                const ir::BufferNode *b = a.buffer;
                touched = touched || accumulators.count(b) || (b->registers && accumulators.count(b->registers.get()));
            }
        });
        if (touched) return base;

        // The rewrite.
        auto releaseAt = [&](const Expr &k) {
            std::vector<Stmt> out;
            for (const ir::BarrierArrive *r : releases)
                out.push_back(std::make_shared<ir::BarrierArrive>(r->barrier, ir::substitute(r->index, {{f.var, k}}), r->remoteRank, r->span));
            return ir::seq(std::move(out));
        };
        SourceRange span = releases.front()->span;
        std::vector<Stmt> stmts(body->stmts.begin(), body->stmts.begin() + static_cast<std::ptrdiff_t>(at));
        stmts.push_back(WaitRelaxer(waits.front()).mutate(body->stmts[at]));
        stmts.push_back(std::make_shared<ir::IfThenElse>(ir::binary(ir::BinaryOp::Gt, f.var, f.min), releaseAt(ir::sub(f.var, ir::intImm(1))), nullptr, span));
        stmts.insert(stmts.end(), body->stmts.begin() + static_cast<std::ptrdiff_t>(at + 1 + releases.size()), body->stmts.end());
        auto loop = ir::rebuildFor(f, f.min, f.extent, ir::seq(std::move(stmts)));
        Stmt drain = ir::seq({std::make_shared<ir::WgmmaSync>(ir::WgmmaSyncKind::Wait, 0, span), releaseAt(ir::sub(ir::add(f.min, f.extent), ir::intImm(1)))});
        std::optional<int64_t> trips = ir::constInt(f.extent);
        if (!trips) drain = std::make_shared<ir::IfThenElse>(ir::binary(ir::BinaryOp::Gt, f.extent, ir::intImm(0)), drain, nullptr, span);
        else if (*trips <= 0) return base;

        Decision d;
        d.where = span;
        d.op = "wgmma in flight";
        d.choice = "each iteration waits for the previous iteration's wgmma group (wgmma.wait_group 1) and then releases its stage of '" +
                   releases.front()->barrier->name + "'";
        d.why = "the wait only gates the release of the stage the MMAs read, so the tensor cores keep the next group queued while this one "
                "runs; the last group is waited for after the loop";
        ctx_.explain.record(std::move(d));
        return ir::seq({loop, drain});
    }

private:
    PassContext &ctx_;
};

} // namespace

ir::Kernel overlapWgmma(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    out.body = Overlapper(ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
