#include "ir/Analysis.h"

#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <algorithm>
#include <numeric>

namespace tilet::ir {

namespace {

int64_t satAdd(int64_t a, int64_t b) {
    if (a == Interval::kMin || b == Interval::kMin) return Interval::kMin;
    if (a == Interval::kMax || b == Interval::kMax) return Interval::kMax;
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return a > 0 ? Interval::kMax : Interval::kMin;
    return r;
}

Interval addI(Interval a, Interval b) {
    Interval r;
    r.lo = (a.lo == Interval::kMin || b.lo == Interval::kMin) ? Interval::kMin : satAdd(a.lo, b.lo);
    r.hi = (a.hi == Interval::kMax || b.hi == Interval::kMax) ? Interval::kMax : satAdd(a.hi, b.hi);
    return r;
}

Interval negI(Interval a) {
    Interval r;
    r.lo = a.hi == Interval::kMax ? Interval::kMin : -a.hi;
    r.hi = a.lo == Interval::kMin ? Interval::kMax : -a.lo;
    return r;
}

Interval mulI(Interval a, Interval b) {
    if (!a.bounded() || !b.bounded()) {
        // Scaling by a non-negative constant keeps whichever sides are known.
        if (b.isPoint() && b.lo >= 0) std::swap(a, b);
        if (a.isPoint() && a.lo >= 0) {
            Interval r;
            int64_t c = a.lo;
            if (c == 0) return Interval::point(0);
            int64_t t;
            r.lo = b.lo == Interval::kMin || __builtin_mul_overflow(b.lo, c, &t) ? Interval::kMin : t;
            r.hi = b.hi == Interval::kMax || __builtin_mul_overflow(b.hi, c, &t) ? Interval::kMax : t;
            return r;
        }
        return {};
    }
    int64_t p[4];
    if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) || __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
        __builtin_mul_overflow(a.hi, b.lo, &p[2]) || __builtin_mul_overflow(a.hi, b.hi, &p[3]))
        return {};
    return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}

Interval typeRange(DType t) {
    switch (t) {
    case DType::Bool: return {0, 1};
    case DType::Int4: return {-8, 7};
    case DType::Int8: return {INT8_MIN, INT8_MAX};
    case DType::Int16: return {INT16_MIN, INT16_MAX};
    case DType::Int32: return {INT32_MIN, INT32_MAX};
    case DType::UInt4: return {0, 15};
    case DType::UInt8: return {0, UINT8_MAX};
    case DType::UInt16: return {0, UINT16_MAX};
    case DType::UInt32: return {0, UINT32_MAX};
    case DType::UInt64: return {0, Interval::kMax};
    default: return {};
    }
}

} // namespace

Interval BoundsScope::var(const VarNode *v) const {
    auto it = vars_.find(v);
    Interval r = it != vars_.end() ? it->second : typeRange(v->dtype);
    // What the variable promises narrows what is known of its value.
    return {std::max(r.lo, v->promisedLo), std::min(r.hi, v->promisedHi)};
}

BoundsScope BoundsScope::forKernel(const Kernel &k) {
    BoundsScope s;
    s.setSpecial(SpecialKind::ThreadIdx, {0, k.threads - 1});
    SpecialKind blocks[3] = {SpecialKind::BlockIdxX, SpecialKind::BlockIdxY, SpecialKind::BlockIdxZ};
    for (int d = 0; d < 3; ++d) {
        if (d < static_cast<int>(k.grid.size())) {
            std::optional<int64_t> g = constInt(k.grid[d]);
            s.setSpecial(blocks[d], g ? Interval{0, *g - 1} : Interval{0, INT32_MAX});
        } else {
            s.setSpecial(blocks[d], Interval::point(0));
        }
    }
    int64_t clusterSize = k.cluster[0] * k.cluster[1] * k.cluster[2];
    s.setSpecial(SpecialKind::ClusterCtaRank, {0, clusterSize - 1});
    return s;
}

Interval boundsOf(const Expr &e, const BoundsScope &scope) {
    if (!e) return {};
    switch (e->kind) {
    case ExprKind::IntImm: return Interval::point(static_cast<const IntImm &>(*e).value);
    case ExprKind::Var: return scope.var(static_cast<const Var *>(e.get()));
    case ExprKind::SpecialReg: return scope.special(static_cast<const SpecialReg &>(*e).special);
    case ExprKind::Cast: {
        const Cast &c = static_cast<const Cast &>(*e);
        if (isFloat(c.dtype) || isFloat(c.value->dtype)) return {};
        Interval in = boundsOf(c.value, scope);
        Interval limit = typeRange(c.dtype);
        if (in.lo >= limit.lo && in.hi <= limit.hi) return in;
        return limit;
    }
    case ExprKind::Unary: {
        const Unary &u = static_cast<const Unary &>(*e);
        if (u.op == UnaryOp::Neg) return negI(boundsOf(u.a, scope));
        if (u.op == UnaryOp::Not) return {0, 1};
        return typeRange(e->dtype);
    }
    case ExprKind::Select: {
        const Select &s = static_cast<const Select &>(*e);
        Interval a = boundsOf(s.thenValue, scope), b = boundsOf(s.elseValue, scope);
        return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::Binary: break;
    default: return typeRange(e->dtype);
    }
    const Binary &b = static_cast<const Binary &>(*e);
    if (isComparison(b.op) || b.op == BinaryOp::And || b.op == BinaryOp::Or) return {0, 1};
    Interval x = boundsOf(b.a, scope), y = boundsOf(b.b, scope);
    // Unsigned arithmetic wraps (C): past its type's range, anything in it.
    auto wrapping = [&](Interval r) {
        Interval limit = typeRange(e->dtype);
        if (isInteger(e->dtype) && !isSigned(e->dtype) && (r.lo < limit.lo || r.hi > limit.hi)) return limit;
        return r;
    };
    switch (b.op) {
    case BinaryOp::Add: return wrapping(addI(x, y));
    case BinaryOp::Sub: return wrapping(addI(x, negI(y)));
    case BinaryOp::Mul: return wrapping(mulI(x, y));
    case BinaryOp::Div:
        // C division truncates, which is monotone for a positive divisor.
        if (y.isPoint() && y.lo > 0) {
            Interval r;
            r.lo = x.lo == Interval::kMin ? Interval::kMin : x.lo / y.lo;
            r.hi = x.hi == Interval::kMax ? Interval::kMax : x.hi / y.lo;
            return r;
        }
        return {};
    case BinaryOp::Mod:
        if (y.isPoint() && y.lo > 0) {
            int64_t c = y.lo;
            if (x.lo >= 0 && x.bounded() && x.hi - x.lo < c && x.lo % c <= x.hi % c) return {x.lo % c, x.hi % c};
            // x a multiple of d, d dividing c: x % c is a multiple of d too, at most c - d.
            int64_t d = knownDivisor(b.a);
            int64_t top = d > 0 && c % d == 0 ? c - d : c - 1;
            if (x.lo >= 0) return {0, std::min(top, x.hi)};
            return {-(c - 1), c - 1};
        }
        return {};
    case BinaryOp::Min: return {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
    case BinaryOp::Max: return {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
    case BinaryOp::Shr:
        if (y.isPoint() && y.lo >= 0 && y.lo < 63 && x.lo >= 0) return {x.lo >> y.lo, x.hi == Interval::kMax ? Interval::kMax : x.hi >> y.lo};
        return typeRange(e->dtype);
    case BinaryOp::BitAnd:
        if (y.isPoint() && y.lo >= 0 && x.lo >= 0) return {0, y.lo};
        if (x.isPoint() && x.lo >= 0 && y.lo >= 0) return {0, x.lo};
        return typeRange(e->dtype);
    default: return typeRange(e->dtype);
    }
}

int64_t knownDivisor(const Expr &e) {
    if (!e) return 1;
    if (const IntImm *i = as<IntImm>(e)) return i->value < 0 ? -i->value : i->value;
    if (const Binary *b = as<Binary>(e)) {
        switch (b->op) {
        case BinaryOp::Mul: {
            int64_t da = knownDivisor(b->a), db = knownDivisor(b->b);
            if (da == 0 || db == 0) return 0;
            int64_t r;
            if (__builtin_mul_overflow(da, db, &r)) return 1;
            return r;
        }
        case BinaryOp::Add:
        case BinaryOp::Sub:
        case BinaryOp::Mod: return std::gcd(knownDivisor(b->a), knownDivisor(b->b));   // a % b = a - b * (a / b)
        case BinaryOp::Shl:
            if (std::optional<int64_t> s = constInt(b->b); s && *s >= 0 && *s < 62) {
                int64_t da = knownDivisor(b->a);
                return da == 0 ? 0 : da << *s;
            }
            return 1;
        default: return 1;
        }
    }
    if (const Cast *c = as<Cast>(e); c && !isFloat(c->dtype) && !isFloat(c->value->dtype)) return knownDivisor(c->value);
    if (const Var *v = as<Var>(e)) return v->divisor;
    return 1;
}

bool structurallyEqual(const Expr &a, const Expr &b) {
    if (a == b) return true;
    if (!a || !b || a->kind != b->kind || a->dtype != b->dtype) return false;
    auto all = [](const std::vector<Expr> &x, const std::vector<Expr> &y) {
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i) {
            if (!structurallyEqual(x[i], y[i])) return false;
        }
        return true;
    };
    switch (a->kind) {
    case ExprKind::IntImm: return static_cast<const IntImm &>(*a).value == static_cast<const IntImm &>(*b).value;
    case ExprKind::FloatImm: {
        double x = static_cast<const FloatImm &>(*a).value, y = static_cast<const FloatImm &>(*b).value;
        return x == y || (x != x && y != y);
    }
    case ExprKind::Var: return false;   // different nodes are different variables
    case ExprKind::SpecialReg: return static_cast<const SpecialReg &>(*a).special == static_cast<const SpecialReg &>(*b).special;
    case ExprKind::Unary: {
        auto &x = static_cast<const Unary &>(*a), &y = static_cast<const Unary &>(*b);
        return x.op == y.op && structurallyEqual(x.a, y.a);
    }
    case ExprKind::Binary: {
        auto &x = static_cast<const Binary &>(*a), &y = static_cast<const Binary &>(*b);
        return x.op == y.op && structurallyEqual(x.a, y.a) && structurallyEqual(x.b, y.b);
    }
    case ExprKind::Select: {
        auto &x = static_cast<const Select &>(*a), &y = static_cast<const Select &>(*b);
        return structurallyEqual(x.cond, y.cond) && structurallyEqual(x.thenValue, y.thenValue) &&
               structurallyEqual(x.elseValue, y.elseValue);
    }
    case ExprKind::Cast: return structurallyEqual(static_cast<const Cast &>(*a).value, static_cast<const Cast &>(*b).value);
    case ExprKind::MathCall: {
        auto &x = static_cast<const MathCall &>(*a), &y = static_cast<const MathCall &>(*b);
        return x.func == y.func && all(x.args, y.args);
    }
    case ExprKind::Load: {
        auto &x = static_cast<const Load &>(*a), &y = static_cast<const Load &>(*b);
        return x.buffer == y.buffer && all(x.indices, y.indices);
    }
    case ExprKind::ClcQuery: {
        auto &x = static_cast<const ClcQuery &>(*a), &y = static_cast<const ClcQuery &>(*b);
        return x.field == y.field && structurallyEqual(x.response, y.response);
    }
    case ExprKind::Dp4a: {
        auto &x = static_cast<const Dp4a &>(*a), &y = static_cast<const Dp4a &>(*b);
        return structurallyEqual(x.a, y.a) && structurallyEqual(x.b, y.b) && structurallyEqual(x.c, y.c);
    }
    case ExprKind::Shuffle: {
        auto &x = static_cast<const Shuffle &>(*a), &y = static_cast<const Shuffle &>(*b);
        return x.mode == y.mode && x.width == y.width && structurallyEqual(x.operand, y.operand) && structurallyEqual(x.value, y.value);
    }
    }
    return false;
}

const Stmt &unguarded(const Stmt &s) {
    const IfThenElse *branch = as<IfThenElse>(s);
    return branch && !branch->elseBody ? branch->thenBody : s;
}

bool provablyInRange(const Expr &e, const Expr &extent, const BoundsScope &scope) {
    Interval r = boundsOf(e, scope);
    if (r.lo < 0 || r.hi == Interval::kMax) return false;
    std::optional<int64_t> n = constInt(extent);
    if (n) return r.hi < *n;
    // A dynamic extent: provable only when e is (extent - something >= 1) shaped; not attempted.
    return false;
}

Expr splitConstant(const Expr &e, int64_t &c) {
    if (std::optional<int64_t> v = constInt(e)) {
        c += *v;
        return nullptr;
    }
    const Binary *b = as<Binary>(e);
    if (b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub)) {
        if (std::optional<int64_t> v = constInt(b->b)) {
            c += b->op == BinaryOp::Add ? *v : -*v;
            return splitConstant(b->a, c);
        }
        if (std::optional<int64_t> v = constInt(b->a); v && b->op == BinaryOp::Add) {
            c += *v;
            return splitConstant(b->b, c);
        }
    }
    return e;
}

Expr splitLaneRuns(const Expr &e, const VarRef &lane, int64_t width, const BoundsScope &scope) {
    class Rewriter : public Mutator {
    public:
        Rewriter(const VarRef &lane, int64_t width, const BoundsScope &scope) : lane_(lane), width_(width), scope_(scope) {}
        using Mutator::mutate;

    protected:
        Expr mutateBinary(const Expr &self, const Binary &n) override {
            Expr out = Mutator::mutateBinary(self, n);
            const Binary *b = as<Binary>(out);
            std::optional<int64_t> c = b ? constInt(b->b) : std::nullopt;
            if (!b || (b->op != BinaryOp::Div && b->op != BinaryOp::Mod) || !c || *c <= 0 || *c % width_ != 0 || !usesVar(b->a, lane_.get()))
                return out;
            auto at = [&](int64_t k) { return simplify(substitute(b->a, {{lane_, intImm(k, lane_->dtype)}})); };
            Expr base = at(0);
            // One step per lane, all the way: base + lane.
            if (constInt(simplify(sub(at(1), base))) != 1 || constInt(simplify(sub(at(width_ - 1), base))) != width_ - 1) return out;
            int64_t divisor = knownDivisor(base);
            if ((divisor != 0 && divisor % width_ != 0) || boundsOf(base, scope_).lo < 0) return out;
            if (b->op == BinaryOp::Div) return div(base, b->b);
            return add(mod(base, b->b), cast(base->dtype, lane_));
        }

    private:
        const VarRef &lane_;
        int64_t width_;
        const BoundsScope &scope_;
    };
    return Rewriter(lane, width, scope).mutate(e);
}

} // namespace tilet::ir
