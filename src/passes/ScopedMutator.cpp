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

} // namespace tilet
