// ScopedMutator.h -- a Mutator that knows the value range of every loop and
// let variable in scope, for passes that need to prove facts about indices.
#pragma once

#include "ir/Analysis.h"
#include "ir/Visitor.h"

namespace tilet {

class ScopedMutator : public ir::Mutator {
public:
    explicit ScopedMutator(const ir::Kernel &k) : scope_(ir::BoundsScope::forKernel(k)) {}
    using ir::Mutator::mutate;

protected:
    const ir::BoundsScope &scope() const { return scope_; }
    // Loops and lets bind their variable around the default traversal.
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override;
    ir::Stmt mutateLetStmt(const ir::Stmt &self, const ir::LetStmt &n) override;
    // Inside the then-branch, conditions `v + c < e` and `v + c >= e` narrow v's range.
    ir::Stmt mutateIfThenElse(const ir::Stmt &self, const ir::IfThenElse &n) override;
    void bindLoop(const ir::For &n);

    ir::BoundsScope scope_;
};

} // namespace tilet
