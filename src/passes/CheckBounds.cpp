// CheckBounds.cpp -- see CheckBounds.h.
//
// An index that is a constant plus constant multiples of distinct variables,
// each ranging over a box of values all of which the kernel reaches, takes its
// extremes at the box's corners: the check is exact, so an error is never a
// guess. The box: loop variables of loops with constant bounds, the thread
// index (not inside a role, an elected thread's code or a parallel loop,
// where only some threads run), the block indices of a constant grid. Only
// accesses certain to run are checked: none under a branch, in a while
// loop, or in a loop that may run no iteration or leave early (break,
// continue), nor in a select's sides or the right of && and ||.
#include "passes/CheckBounds.h"

#include "ir/Analysis.h"
#include "ir/Visitor.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace tilet {

namespace {

// constant + sum of coefficient * value; a value is a Var (loop variable) or
// a SpecialReg kind, told apart by `special`.
struct Term {
    const void *value = nullptr;
    int64_t coefficient = 0;
};
struct LinearIndex {
    int64_t constant = 0;
    std::vector<Term> terms;   // in order of first appearance: deterministic witnesses
};

struct Domain {
    int64_t lo = 0, hi = 0;
    std::string name;
};

class BoundsChecker : public ir::Visitor {
public:
    // The thread index and the block indices of a constant grid take every
    // value. (Not the rank in the cluster: it is a function of the block
    // index, and the corners of a box of both need not occur together.)
    BoundsChecker(const ir::Kernel &kernel, PassContext &ctx) : ctx_(ctx) {
        domains_[specialKey(ir::SpecialKind::ThreadIdx)] = {0, kernel.threads - 1, ir::specialKindName(ir::SpecialKind::ThreadIdx)};
        const ir::SpecialKind blocks[] = {ir::SpecialKind::BlockIdxX, ir::SpecialKind::BlockIdxY, ir::SpecialKind::BlockIdxZ};
        for (size_t d = 0; d < kernel.grid.size() && d < 3; ++d) {
            std::optional<int64_t> n = ir::constInt(kernel.grid[d]);
            if (n && *n >= 1) domains_[specialKey(blocks[d])] = {0, *n - 1, ir::specialKindName(blocks[d])};
        }
    }
    using ir::Visitor::visit;

protected:
    void visitFor(const ir::For &n) override {
        visit(n.min);
        visit(n.extent);
        std::optional<int64_t> min = ir::constInt(n.min), extent = ir::constInt(n.extent);
        // A body that may not run, or that a break or continue may leave
        // early for some values, is not certain to reach any of its accesses.
        bool certain = min && extent && *extent >= 1 && !ir::jumpsOutOf(n.body);
        auto saved = domains_;
        if (certain) domains_[n.var.get()] = {*min, *min + *extent - 1, n.var->name};
        // A parallel loop's iterations are spread over the threads: each
        // thread runs only some, so the thread index there is not free.
        if (n.forKind == ir::ForKind::Parallel) domains_.erase(specialKey(ir::SpecialKind::ThreadIdx));
        uncertain_ += !certain;
        visit(n.body);
        uncertain_ -= !certain;
        domains_ = std::move(saved);
    }
    void visitLetStmt(const ir::LetStmt &n) override {
        visit(n.value);
        if (std::optional<LinearIndex> l = linear(n.value)) lets_[n.var.get()] = *l;
        // A witness names the thread and block indices as the program does (`tx = 127`).
        const ir::SpecialReg *special = ir::as<ir::SpecialReg>(n.value);
        const void *key = special ? specialKey(special->special) : nullptr;
        std::string before;
        if (auto named = domains_.find(key); named != domains_.end()) before = std::exchange(named->second.name, n.var->name);
        visit(n.body);
        if (auto named = domains_.find(key); named != domains_.end() && !before.empty()) named->second.name = before;
        lets_.erase(n.var.get());
    }
    void visitIfThenElse(const ir::IfThenElse &n) override {
        visit(n.cond);
        underCondition([&] {
            visit(n.thenBody);
            if (n.elseBody) visit(n.elseBody);
        });
    }
    void visitWhile(const ir::While &n) override {
        underCondition([&] { ir::Visitor::visitWhile(n); });
    }
    // A role or an elected thread runs every iteration of the loops around
    // it, but only some of the block's threads.
    void visitWarpSpecialize(const ir::WarpSpecialize &n) override { withoutThreadIndex([&] { ir::Visitor::visitWarpSpecialize(n); }); }
    void visitElect(const ir::Elect &n) override { withoutThreadIndex([&] { ir::Visitor::visitElect(n); }); }
    // An external function receives element pointers; one past the end is a
    // valid pointer.
    void visitCallExtern(const ir::CallExtern &) override {}

    void visitSelect(const ir::Select &n) override {
        visit(n.cond);
        ++conditional_;
        visit(n.thenValue);
        visit(n.elseValue);
        --conditional_;
    }
    void visitBinary(const ir::Binary &n) override {
        visit(n.a);
        bool shortCircuit = n.op == ir::BinaryOp::And || n.op == ir::BinaryOp::Or;
        conditional_ += shortCircuit;
        visit(n.b);
        conditional_ -= shortCircuit;
    }
    void visitLoad(const ir::Load &n) override {
        ir::Visitor::visitLoad(n);
        check(*n.buffer, n.indices, {}, n.span);
    }
    void visitStore(const ir::Store &n) override {
        ir::Visitor::visitStore(n);
        check(*n.buffer, n.indices, {}, n.span);
    }
    // A tile operation's region: its corner moves with the loops, its extents are constant.
    void visitRegion(const ir::Region &r) override {
        ir::Visitor::visitRegion(r);
        if (r.buffer) check(*r.buffer, r.mins, r.extents, r.span);
    }

private:
    static const void *specialKey(ir::SpecialKind k) { return &kSpecialKeys[static_cast<int>(k)]; }
    static constexpr char kSpecialKeys[5] = {};

    template <typename F>
    void underCondition(F visitBody) {
        ++uncertain_;
        visitBody();
        --uncertain_;
    }
    template <typename F>
    void withoutThreadIndex(F visitBody) {
        auto saved = domains_;
        domains_.erase(specialKey(ir::SpecialKind::ThreadIdx));
        visitBody();
        domains_ = std::move(saved);
    }
    std::optional<LinearIndex> linear(const ir::Expr &e) const {
        if (std::optional<int64_t> c = ir::constInt(e)) return LinearIndex{*c, {}};
        if (const ir::Var *v = ir::as<ir::Var>(e)) {
            if (auto let = lets_.find(v); let != lets_.end()) return let->second;
            return LinearIndex{0, {{v, 1}}};
        }
        if (const ir::SpecialReg *s = ir::as<ir::SpecialReg>(e)) return LinearIndex{0, {{specialKey(s->special), 1}}};
        if (const ir::Unary *u = ir::as<ir::Unary>(e); u && u->op == ir::UnaryOp::Neg) return scaled(linear(u->a), -1);
        const ir::Binary *b = ir::as<ir::Binary>(e);
        if (!b) return std::nullopt;
        switch (b->op) {
        case ir::BinaryOp::Add: return sum(linear(b->a), linear(b->b), 1);
        case ir::BinaryOp::Sub: return sum(linear(b->a), linear(b->b), -1);
        case ir::BinaryOp::Mul:
            if (std::optional<int64_t> c = ir::constInt(b->b)) return scaled(linear(b->a), *c);
            if (std::optional<int64_t> c = ir::constInt(b->a)) return scaled(linear(b->b), *c);
            return std::nullopt;
        default: return std::nullopt;
        }
    }
    static std::optional<LinearIndex> scaled(std::optional<LinearIndex> l, int64_t factor) {
        if (!l) return std::nullopt;
        if (__builtin_mul_overflow(l->constant, factor, &l->constant)) return std::nullopt;
        for (Term &t : l->terms) {
            if (__builtin_mul_overflow(t.coefficient, factor, &t.coefficient)) return std::nullopt;
        }
        return l;
    }
    static std::optional<LinearIndex> sum(std::optional<LinearIndex> a, std::optional<LinearIndex> b, int64_t sign) {
        b = scaled(b, sign);
        if (!a || !b) return std::nullopt;
        if (__builtin_add_overflow(a->constant, b->constant, &a->constant)) return std::nullopt;
        for (const Term &t : b->terms) {
            bool merged = false;
            for (Term &x : a->terms) {
                if (x.value != t.value) continue;
                if (__builtin_add_overflow(x.coefficient, t.coefficient, &x.coefficient)) return std::nullopt;
                merged = true;
            }
            if (!merged) a->terms.push_back(t);
        }
        return a;
    }

    // `indices` are an element's, or a region's corner with `extents` (empty for an element).
    void check(const ir::BufferNode &buffer, const std::vector<ir::Expr> &indices, const std::vector<int64_t> &extents, SourceRange where) {
        if (conditional_ || uncertain_ || buffer.scope == ir::MemScope::Global) return;
        if (buffer.scope != ir::MemScope::Shared && buffer.scope != ir::MemScope::Fragment && buffer.scope != ir::MemScope::Local) return;
        for (size_t d = 0; d < indices.size() && d < buffer.shape.size(); ++d) {
            std::optional<int64_t> size = ir::constInt(buffer.shape[d]);
            std::optional<LinearIndex> index = linear(indices[d]);
            if (!size || !index || index->terms.empty()) continue;   // a constant index is sema's
            // The extremes, and the values that reach each.
            int64_t lo = index->constant, hi = index->constant;
            std::string atLo, atHi;
            bool exact = true;
            for (const Term &t : index->terms) {
                if (t.coefficient == 0) continue;
                auto found = domains_.find(t.value);
                if (found == domains_.end()) {
                    exact = false;
                    break;
                }
                const Domain &dom = found->second;
                int64_t forLo = t.coefficient > 0 ? dom.lo : dom.hi, forHi = t.coefficient > 0 ? dom.hi : dom.lo;
                int64_t a = 0, b = 0;
                if (__builtin_mul_overflow(t.coefficient, forLo, &a) || __builtin_mul_overflow(t.coefficient, forHi, &b) ||
                    __builtin_add_overflow(lo, a, &lo) || __builtin_add_overflow(hi, b, &hi)) {
                    exact = false;
                    break;
                }
                atLo += (atLo.empty() ? "" : ", ") + dom.name + " = " + std::to_string(forLo);
                atHi += (atHi.empty() ? "" : ", ") + dom.name + " = " + std::to_string(forHi);
            }
            if (!exact || atLo.empty()) continue;   // no variable left: a constant index is sema's
            int64_t last = hi;   // the last element a region's corner at `hi` covers
            if (d < extents.size() && (extents[d] < 1 || __builtin_add_overflow(hi, extents[d] - 1, &last))) continue;
            if (last < *size && lo >= 0) continue;
            bool past = last >= *size;
            std::string what = extents.empty() ? "index of '" + buffer.name + "'" : "region of '" + buffer.name + "'";
            ctx_.diags.error(where, what + " reaches " + std::to_string(past ? last : lo) + " at " + (past ? atHi : atLo) +
                                        (past ? ", past the end of dimension " : ", before the start of dimension ") + std::to_string(d) +
                                        " (size " + std::to_string(*size) + ")");
            return;   // one error per access
        }
    }

    PassContext &ctx_;
    std::map<const void *, Domain> domains_;   // loop variables and special registers whose values are known
    std::map<const ir::VarNode *, LinearIndex> lets_;
    int conditional_ = 0;   // inside a select's sides or the right of && / ||: evaluated only sometimes
    int uncertain_ = 0;     // inside a branch, a while loop, or a loop that may run no iteration or leave early
};

} // namespace

ir::Kernel checkBounds(const ir::Kernel &kernel, PassContext &ctx) {
    BoundsChecker(kernel, ctx).visit(kernel.body);
    return kernel;
}

} // namespace tilet
