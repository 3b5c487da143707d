#include "passes/ScopedMutator.h"

namespace tilet {

void ScopedMutator::bindLoop(const ir::For &n) {
    ir::Interval lo = ir::boundsOf(n.min, scope_), len = ir::boundsOf(n.extent, scope_);
    ir::Interval r{lo.lo, ir::Interval::kMax};
    if (lo.hi != ir::Interval::kMax && len.hi != ir::Interval::kMax) r.hi = lo.hi + len.hi - 1;
    scope_.bind(n.var.get(), r);
}

ir::Stmt ScopedMutator::mutateFor(const ir::Stmt &self, const ir::For &n) {
    bindLoop(n);
    ir::Stmt out = ir::Mutator::mutateFor(self, n);
    scope_.unbind(n.var.get());
    return out;
}

ir::Stmt ScopedMutator::mutateLetStmt(const ir::Stmt &self, const ir::LetStmt &n) {
    scope_.bind(n.var.get(), ir::boundsOf(n.value, scope_));
    ir::Stmt out = ir::Mutator::mutateLetStmt(self, n);
    scope_.unbind(n.var.get());
    return out;
}

ir::Stmt ScopedMutator::mutateIfThenElse(const ir::Stmt &self, const ir::IfThenElse &n) {
    ir::Expr cond = mutate(n.cond);
    std::vector<std::pair<const ir::VarNode *, ir::Interval>> saved;
    std::vector<ir::Expr> conjuncts{n.cond};
    while (!conjuncts.empty()) {
        ir::Expr c = conjuncts.back();
        conjuncts.pop_back();
        const ir::Binary *b = ir::as<ir::Binary>(c);
        if (!b) continue;
        if (b->op == ir::BinaryOp::And) {
            conjuncts.push_back(b->a);
            conjuncts.push_back(b->b);
            continue;
        }
        if (b->op != ir::BinaryOp::Lt && b->op != ir::BinaryOp::Ge) continue;
        int64_t offset = 0;
        const ir::Var *v = ir::as<ir::Var>(ir::splitConstant(b->a, offset));
        if (!v) continue;
        ir::Interval bound = ir::boundsOf(b->b, scope_), current = scope_.var(v);
        ir::Interval narrowed = current;
        if (b->op == ir::BinaryOp::Lt && bound.hi != ir::Interval::kMax) narrowed.hi = std::min(current.hi, bound.hi - 1 - offset);
        if (b->op == ir::BinaryOp::Ge && bound.lo != ir::Interval::kMin) narrowed.lo = std::max(current.lo, bound.lo - offset);
        saved.push_back({v, current});
        scope_.bind(v, narrowed);
    }
    ir::Stmt thenBody = mutate(n.thenBody);
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) scope_.bind(it->first, it->second);
    ir::Stmt elseBody = mutate(n.elseBody);
    if (cond == n.cond && thenBody == n.thenBody && elseBody == n.elseBody) return self;
    return std::make_shared<ir::IfThenElse>(cond, thenBody, elseBody, n.span);
}

} // namespace tilet
