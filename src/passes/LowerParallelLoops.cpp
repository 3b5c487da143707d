// LowerParallelLoops.cpp -- see LowerParallelLoops.h.
//
// For a nest over shape E with layout L (thread modes T_k, local modes M_k):
//
//   let i_thread = sum over T_k on i of digit_k(threadIdx.x) * stride_k
//   for i_1 in unrolled(extent of the slowest local mode) ...
//     for v in vectorized(extent of M_0)        (the fastest local mode)
//       let i = i_thread + sum over M_k on i of digit * stride
//       body, with fragment x[i, j] -> x_regs[sum of x's local digits]
#include "passes/LowerParallelLoops.h"

#include "ir/Effects.h"
#include "ir/Layout.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "passes/ParallelNest.h"
#include "passes/ScopedMutator.h"
#include "support/InternalError.h"

#include <functional>
#include <set>
#include <utility>

namespace tilet {

namespace {

// Rewrites fragment accesses inside one nest into register accesses.
class FragmentRewriter : public ir::Mutator {
public:
    // `coords` give each nest variable as threadIdx digits plus step
    // variables; `scope` bounds both.
    FragmentRewriter(const ParallelNest &nest, const ir::TileLayout &loop, const std::vector<ir::VarRef> &digits,
                     const std::vector<ir::Expr> &coords, const ir::BoundsScope &scope, ir::Expr thread)
        : nest_(nest), loop_(loop), digits_(digits), coords_(coords), scope_(scope), thread_(std::move(thread)) {}
    using ir::Mutator::mutate;

protected:
    ir::Expr mutateLoad(const ir::Expr &self, const ir::Load &n) override {
        if (n.buffer->scope != ir::MemScope::Fragment) return ir::Mutator::mutateLoad(self, n);
        return std::make_shared<ir::Load>(n.buffer->registers, std::vector<ir::Expr>{registerIndex(*n.buffer, n.indices)}, n.span);
    }
    ir::Stmt mutateStore(const ir::Stmt &self, const ir::Store &n) override {
        if (n.buffer->scope != ir::MemScope::Fragment) return ir::Mutator::mutateStore(self, n);
        ir::Expr value = mutate(n.value);
        return n.movedTo(n.buffer->registers, std::vector<ir::Expr>{registerIndex(*n.buffer, n.indices)}, value);
    }

private:
    // The register of the element: from the loop's own step variables when
    // the fragment's layout derives from the loop's (the common case, no
    // arithmetic), else from the element's coordinates (a fragment indexed by
    // constants or outer variables, or laid out elsewhere; infer-layouts
    // checked that this thread holds it).
    ir::Expr registerIndex(const ir::BufferNode &b, const std::vector<ir::Expr> &indices) {
        std::vector<int> dims;
        for (const ir::Expr &i : indices) {
            int found = -1;
            for (size_t v = 0; v < nest_.vars.size(); ++v) {
                if (i.get() == nest_.vars[v].get()) found = static_cast<int>(v);
            }
            if (found < 0) return indexFromCoordinates(b, indices);
            dims.push_back(found);
        }
        std::optional<std::vector<int>> positions = ir::matchLocalModes(loop_, *b.layout, dims);
        if (!positions) return indexFromCoordinates(b, indices);
        ir::Expr index = ir::intImm(0);
        for (size_t m = 0; m < positions->size(); ++m)
            index = ir::add(index, ir::mul(digits_[(*positions)[m]], ir::intImm(ir::localStride(*b.layout, m))));
        return index;
    }

    // The register from the element's coordinates. Where the fragment's
    // threads own the loop's elements in another register order (an mma
    // accumulator read as an mma A operand), the index written over the
    // nest variables depends on threadIdx only through terms that cancel:
    // with the coordinates expanded into threadIdx digits and steps, the
    // simplifier removes them, so the register is a compile-time constant
    // in each unrolled step and the array stays in registers (an index
    // that depends on threadIdx puts the array in local memory).
    ir::Expr indexFromCoordinates(const ir::BufferNode &b, const std::vector<ir::Expr> &indices) {
        ir::Expr direct = ir::localIndexOf(*b.layout, indices);
        std::vector<std::pair<ir::VarRef, ir::Expr>> expand;
        for (size_t d = 0; d < nest_.vars.size(); ++d) expand.push_back({nest_.vars[d], coords_[d]});
        ir::Expr expanded = ir::simplify(ir::substitute(direct, expand), scope_);
        bool threadFree = true;
        ir::forEachExpr(expanded, [&](const ir::Expr &e) {
            if (ir::structurallyEqual(e, thread_)) threadFree = false;
        });
        return threadFree ? expanded : direct;
    }

    const ParallelNest &nest_;
    const ir::TileLayout &loop_;
    const std::vector<ir::VarRef> &digits_;
    const std::vector<ir::Expr> &coords_;
    const ir::BoundsScope &scope_;
    ir::Expr thread_;
};

// Guards global accesses that cannot be proven in bounds, and memory writes
// of replicas other than the first.
class Guarder : public ScopedMutator {
public:
    Guarder(const ir::Kernel &k, const ir::BoundsScope &outer, ir::Expr replicaCond, PassContext &ctx)
        : ScopedMutator(k), replicaCond_(std::move(replicaCond)), ctx_(ctx) {
        scope_ = outer;
    }
    using ScopedMutator::mutate;
    ir::BoundsScope &scope() { return scope_; }

    // A branch, loop or let of the body that writes only memory does nothing
    // in replicas other than the first (each store is the first replica's):
    // they skip it whole, so they do not compute its condition or values
    // either -- reading memory the first replica writes in it would race with
    // that write.
    ir::Stmt mutate(const ir::Stmt &s) override {
        bool compound = ir::as<ir::IfThenElse>(s) || ir::as<ir::For>(s) || ir::as<ir::LetStmt>(s);
        if (!replicaCond_ || !compound || !writesOnlyMemory(s)) return ScopedMutator::mutate(s);
        ir::Expr replica = std::exchange(replicaCond_, nullptr);
        ir::Stmt body = ScopedMutator::mutate(s);
        replicaCond_ = replica;
        return std::make_shared<ir::IfThenElse>(replica, body, nullptr, s->span);
    }

protected:
    ir::Expr mutateLoad(const ir::Expr &self, const ir::Load &n) override {
        ir::Expr base = ScopedMutator::mutateLoad(self, n);
        // Inside a store guarded by the same checks, or a select's chosen side, the checks already made are not repeated.
        ir::Expr cond = boundsCond(n.buffer, ir::as<ir::Load>(base)->indices, n.span);
        if (!cond) return base;
        ir::Expr zero = isFloat(n.dtype) ? ir::floatImm(0, n.dtype) : n.dtype == DType::Bool ? ir::boolImm(false) : ir::intImm(0, n.dtype);
        return std::make_shared<ir::Select>(n.dtype, cond, base, zero, n.span);
    }
    // The chosen side of a select is evaluated only where its condition holds:
    // a load there needs no check that the condition already makes (im2col's
    // padding test, `i < n ? A[i] : 0`).
    ir::Expr mutateSelect(const ir::Expr &self, const ir::Select &n) override {
        ir::Expr cond = mutate(n.cond), otherwise = mutate(n.elseValue);
        size_t knownBefore = known_.size();
        forEachConjunct(cond, [&](const ir::Expr &c) { known_.push_back(c); });
        ir::Expr chosen = mutate(n.thenValue);
        known_.resize(knownBefore);
        if (cond == n.cond && chosen == n.thenValue && otherwise == n.elseValue) return self;
        return std::make_shared<ir::Select>(n.dtype, cond, chosen, otherwise, n.span);
    }
    ir::Stmt mutateStore(const ir::Stmt &self, const ir::Store &n) override {
        bool changed = false;
        std::vector<ir::Expr> indices = mutateAll(n.indices, changed);
        ir::Expr cond = boundsCond(n.buffer, indices, n.span);
        if ((writesMemory(*n.buffer) || updatesReducer(n)) && replicaCond_) cond = ir::logicalAnd(replicaCond_, cond);
        size_t knownBefore = known_.size();
        if (cond) forEachConjunct(cond, [&](const ir::Expr &c) { known_.push_back(c); });
        ir::Expr value = mutate(n.value);
        known_.resize(knownBefore);
        ir::Stmt store = (!changed && value == n.value) ? self : n.movedTo(n.buffer, indices, value);
        if (!cond) return store;
        return std::make_shared<ir::IfThenElse>(cond, store, nullptr, n.span);
    }

private:
    // Memory is written by the first replica of an iteration only.
    static bool writesMemory(const ir::BufferNode &b) { return b.scope == ir::MemScope::Global || b.scope == ir::MemScope::Shared; }

    // So is a reducer's update (a store to its registers that reads them):
    // each replica would add the iteration's value to its own copy, and
    // finalize_reducer would count it once per replica. Its fill still
    // reaches every copy.
    static bool updatesReducer(const ir::Store &n) {
        if (!n.buffer->reducer) return false;
        bool reads = false;
        ir::forEachExpr(n.value, [&](const ir::Expr &e) {
            const ir::Load *l = ir::as<ir::Load>(e);
            reads = reads || (l && l->buffer == n.buffer);
        });
        return reads;
    }

    static bool writesOnlyMemory(const ir::Stmt &s) {
        bool memoryWrites = false, other = false;
        ir::forEachEffect(s, [&](const ir::Stmt &, const ir::Effects &fx) {
            if (!fx.syncs.empty()) other = true;
            for (const ir::Access &a : fx.accesses) {
                if (!a.writes()) continue;
                (writesMemory(*a.buffer) ? memoryWrites : other) = true;
            }
        });
        return memoryWrites && !other;
    }

    static void forEachConjunct(const ir::Expr &e, const std::function<void(const ir::Expr &)> &f) {
        if (const ir::Binary *b = ir::as<ir::Binary>(e); b && b->op == ir::BinaryOp::And) {
            forEachConjunct(b->a, f);
            forEachConjunct(b->b, f);
        } else {
            f(e);
        }
    }
    std::vector<ir::Expr> known_;

    bool known(const ir::Expr &c) const {
        for (const ir::Expr &k : known_) {
            if (ir::structurallyEqual(k, c)) return true;
        }
        return false;
    }

    // The checks an access of `b` at `indices` needs: those its index ranges
    // do not prove, less those the enclosing guards make (known_).
    ir::Expr boundsCond(const ir::Buffer &b, const std::vector<ir::Expr> &indices, SourceRange span) {
        if (b->scope != ir::MemScope::Global) return nullptr;
        ir::Expr cond;
        for (size_t d = 0; d < indices.size(); ++d) {
            ir::Interval r = ir::boundsOf(indices[d], scope_);
            std::optional<int64_t> dim = ir::constInt(b->shape[d]);
            ir::Expr low = ir::ge(indices[d], ir::intImm(0, indices[d]->dtype));
            ir::Expr high = ir::lt(indices[d], ir::cast(indices[d]->dtype, b->shape[d]));
            bool lowOk = r.lo >= 0 || known(low);
            bool highOk = (dim && r.hi != ir::Interval::kMax && r.hi < *dim) || known(high);
            if (!lowOk) cond = ir::logicalAnd(cond, low);
            if (!highOk) cond = ir::logicalAnd(cond, high);
            if ((!lowOk || !highOk) && reported_.insert({b.get(), span.begin.line * 100000 + span.begin.col * 10 + static_cast<uint32_t>(d)}).second) {
                Decision dec;
                dec.where = span;
                dec.op = "access of '" + b->name + "'";
                dec.choice = "bounds check on dimension " + std::to_string(d);
                // The side that is not proved, as the program can see it (`x % n` of a negative x is negative).
                std::string below = r.lo == ir::Interval::kMin ? std::string("the index may be any negative value") : "the index may be as low as " + std::to_string(r.lo);
                std::string above = dim ? "the index may reach " + (r.hi == ir::Interval::kMax ? std::string("any value") : std::to_string(r.hi)) +
                                              " but the dimension has " + std::to_string(*dim) + " elements"
                                        : "the dimension is dynamic ('" + ir::toString(b->shape[d]) + "')";
                dec.why = !lowOk && !highOk ? below + ", and " + above : !lowOk ? below : above;
                ctx_.explain.record(std::move(dec));
            }
        }
        return cond;
    }

    ir::Expr replicaCond_;
    PassContext &ctx_;
    std::set<std::pair<const ir::BufferNode *, uint64_t>> reported_;
};

class Lowerer : public ScopedMutator {
public:
    Lowerer(const ir::Kernel &k, PassContext &ctx) : ScopedMutator(k), kernel_(k), ctx_(ctx) {}
    using ScopedMutator::mutate;

protected:
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        if (n.forKind != ir::ForKind::Parallel) return ScopedMutator::mutateFor(self, n);
        TILET_ASSERT(n.threadLayout, "parallel loop without a layout after inferLayouts");
        const ir::TileLayout &L = *n.threadLayout;
        ParallelNest nest = parallelNest(n);
        int rank = static_cast<int>(nest.vars.size());
        ir::Expr tx = roleThread_ ? ir::Expr(roleThread_) : ir::threadIdx();

        // Thread part of every coordinate, and the replica condition.
        std::vector<ir::Expr> threadTerm(rank, ir::intImm(0));
        ir::Expr replicaCond;
        for (size_t k = 0; k < L.threadModes.size(); ++k) {
            const ir::LayoutMode &m = L.threadModes[k];
            ir::Expr digit = ir::threadDigit(L, k, tx);
            if (m.dim == ir::LayoutMode::kReplicate) replicaCond = ir::logicalAnd(replicaCond, ir::binary(ir::BinaryOp::Eq, digit, ir::intImm(0)));
            else threadTerm[m.dim] = ir::add(threadTerm[m.dim], ir::mul(digit, ir::intImm(m.coordStride)));
        }
        std::vector<ir::VarRef> threadVars(rank);
        for (int d = 0; d < rank; ++d) {
            if (!ir::constInt(threadTerm[d])) threadVars[d] = ir::makeVar(nest.vars[d]->name + "_thread");
        }

        // Per-thread steps: one variable per local mode.
        std::vector<ir::VarRef> digits;
        std::vector<int> perDim(rank, 0);
        bool vectorized = L.vectorWidth() > 1;
        for (size_t k = 0; k < L.localModes.size(); ++k) {
            const ir::LayoutMode &m = L.localModes[k];
            std::string name = (k == 0 && vectorized) ? "v" : nest.vars[m.dim]->name + "_" + std::to_string(++perDim[m.dim]);
            digits.push_back(ir::makeVar(name));
        }
        std::vector<ir::Expr> coord(rank);
        for (int d = 0; d < rank; ++d) coord[d] = threadVars[d] ? ir::Expr(threadVars[d]) : threadTerm[d];
        for (size_t k = 0; k < L.localModes.size(); ++k) {
            const ir::LayoutMode &m = L.localModes[k];
            coord[m.dim] = ir::add(coord[m.dim], ir::mul(digits[k], ir::intImm(m.coordStride)));
        }

        // The body: fragments to registers, then guards.
        std::vector<ir::Expr> expanded = threadTerm;
        ir::BoundsScope stepScope = scope_;
        for (size_t k = 0; k < L.localModes.size(); ++k) {
            const ir::LayoutMode &m = L.localModes[k];
            expanded[m.dim] = ir::add(expanded[m.dim], ir::mul(digits[k], ir::intImm(m.coordStride)));
            stepScope.bind(digits[k].get(), {0, m.extent - 1});
        }
        ir::Stmt body = FragmentRewriter(nest, L, digits, expanded, stepScope, tx).mutate(nest.body);
        Guarder guarder(kernel_, scope_, replicaCond, ctx_);
        for (int d = 0; d < rank; ++d) guarder.scope().bind(nest.vars[d].get(), {0, nest.extents[d] - 1});
        body = guarder.mutate(body);
        for (int d = rank; d-- > 0;) body = std::make_shared<ir::LetStmt>(nest.vars[d], coord[d], body, n.span);
        ir::Expr padding = paddingCond(nest, L, coord, vectorized ? digits[0] : nullptr);
        if (padding && !vectorized) body = std::make_shared<ir::IfThenElse>(padding, body, nullptr, n.span);
        for (size_t k = 0; k < L.localModes.size(); ++k) {
            auto loop = std::make_shared<ir::For>(digits[k], ir::intImm(0), ir::intImm(L.localModes[k].extent),
                                                  (k == 0 && vectorized) ? ir::ForKind::Vectorized : ir::ForKind::Unrolled, body, n.span);
            loop->threadLocal = true;
            body = loop;
            if (padding && k == 0 && vectorized) body = std::make_shared<ir::IfThenElse>(padding, body, nullptr, n.span);
        }
        for (int d = rank; d-- > 0;) {
            if (threadVars[d]) body = std::make_shared<ir::LetStmt>(threadVars[d], threadTerm[d], body, n.span);
        }
        return body;
    }

    // A padded layout (infer-layouts: threads that do not divide the
    // extents) runs iterations past the nest's end: the condition that skips
    // them, or null. A vector's lanes all fall on the same side (the vector
    // divides the extent), so the test reads its first lane, outside the
    // lane loop.
    ir::Expr paddingCond(const ParallelNest &nest, const ir::TileLayout &L, const std::vector<ir::Expr> &coord, const ir::VarRef &lane) {
        ir::Expr cond;
        for (size_t d = 0; d < nest.vars.size(); ++d) {
            if (L.shape[d] == nest.extents[d]) continue;
            ir::Expr first = coord[d];
            if (lane) first = ir::substitute(first, {{lane, ir::intImm(0)}});
            cond = ir::logicalAnd(cond, ir::binary(ir::BinaryOp::Lt, first, ir::intImm(nest.extents[d])));
        }
        return cond;
    }

    // Inside ws(r, ...) loops are spread over the role's threads, numbered
    // from 0: threadIdx.x % 128 for one warp group, % 32 for one warp.
    ir::Stmt mutateWarpSpecialize(const ir::Stmt &self, const ir::WarpSpecialize &n) override {
        ir::VarRef outer = roleThread_;
        roleThread_ = ir::makeVar("role_thread");
        int64_t threads = n.threads();
        bool oneUnit = threads == ir::WarpSpecialize::kGroupThreads ? n.wholeWarpGroups() : threads == ir::WarpSpecialize::kWarpThreads;
        ir::Expr value = oneUnit ? ir::mod(ir::threadIdx(), ir::intImm(threads)) : ir::sub(ir::threadIdx(), ir::intImm(n.firstThread()));
        scope_.bind(roleThread_.get(), {0, threads - 1});
        ir::Stmt body = mutate(n.body);
        scope_.unbind(roleThread_.get());
        ir::Stmt out = self;
        if (body != n.body) {
            bool used = false;
            ir::forEachExpr(body, [&](const ir::Expr &e) { used = used || e.get() == roleThread_.get(); });
            if (used) body = std::make_shared<ir::LetStmt>(roleThread_, value, body, n.span);
            out = std::make_shared<ir::WarpSpecialize>(n.warps, body, n.span);
        }
        roleThread_ = outer;
        return out;
    }

    // A fragment accessed outside parallel loops is fully replicated
    // (infer-layouts): each thread reads and writes its own copy.
    ir::Expr mutateLoad(const ir::Expr &self, const ir::Load &n) override {
        if (n.buffer->scope != ir::MemScope::Fragment) return ScopedMutator::mutateLoad(self, n);
        bool changed = false;
        std::vector<ir::Expr> indices = mutateAll(n.indices, changed);
        return std::make_shared<ir::Load>(n.buffer->registers, std::vector<ir::Expr>{ir::localIndexOf(*n.buffer->layout, indices)}, n.span);
    }
    ir::Stmt mutateStore(const ir::Stmt &self, const ir::Store &n) override {
        if (n.buffer->scope != ir::MemScope::Fragment) return ScopedMutator::mutateStore(self, n);
        bool changed = false;
        std::vector<ir::Expr> indices = mutateAll(n.indices, changed);
        ir::Expr value = mutate(n.value);
        return n.movedTo(n.buffer->registers, std::vector<ir::Expr>{ir::localIndexOf(*n.buffer->layout, indices)}, value);
    }

    ir::Stmt mutateAllocate(const ir::Stmt &self, const ir::Allocate &n) override {
        ir::Stmt base = ScopedMutator::mutateAllocate(self, n);
        if (n.buffer->scope != ir::MemScope::Fragment) return base;
        // A reshaped view holds the registers of the fragment it reshapes.
        if (n.buffer->viewOf) return ir::as<ir::Allocate>(base)->body;
        if (!n.buffer->registers) {
            // A fragment no parallel loop or reduction touched: it holds nothing.
            return ir::as<ir::Allocate>(base)->body;
        }
        return std::make_shared<ir::Allocate>(n.buffer->registers, ir::as<ir::Allocate>(base)->body, n.span);
    }

private:
    const ir::Kernel &kernel_;
    PassContext &ctx_;
    ir::VarRef roleThread_;   // inside ws(...): the thread's number within its role
};

} // namespace

ir::Kernel lowerParallelLoops(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    out.body = Lowerer(kernel, ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
