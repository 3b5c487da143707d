// RoleMutator.h -- a Mutator that knows which threads run the statement it
// is at: the block's, or inside ws(...) the role's warp groups.
#pragma once

#include "ir/Visitor.h"

namespace tilet {

class RoleMutator : public ir::Mutator {
public:
    explicit RoleMutator(const ir::Kernel &k) : threads_(k.threads) {}
    using ir::Mutator::mutate;

protected:
    int64_t roleThreads() const { return threads_; }         // how many
    int64_t roleFirstThread() const { return firstThread_; } // threadIdx.x of the first
    // threadIdx.x counted from the role's first thread.
    ir::Expr roleThread() const { return firstThread_ ? ir::sub(ir::threadIdx(), ir::intImm(firstThread_)) : ir::threadIdx(); }

    ir::Stmt mutateWarpSpecialize(const ir::Stmt &self, const ir::WarpSpecialize &n) override {
        int64_t outerThreads = threads_, outerFirst = firstThread_;
        threads_ = n.threads();
        firstThread_ = n.firstThread();
        ir::Stmt out = ir::Mutator::mutateWarpSpecialize(self, n);
        threads_ = outerThreads;
        firstThread_ = outerFirst;
        return out;
    }

private:
    int64_t threads_;
    int64_t firstThread_ = 0;
};

} // namespace tilet
