// Simplify.cpp -- see Simplify.h.
//
// Integer expressions are brought into a linear form  c0 + sum(ci * atom_i)
// where atoms are whatever is not a sum or a product by a constant (variables,
// registers, loads, divisions, remainders). Division and remainder by a
// positive constant c split the linear form into a part divisible by c and a
// remainder R; when the whole numerator and R are provably non-negative,
//   (q*c + R) / c = q + R / c   and   (q*c + R) % c = R % c,
// and when R is provably below c the R terms vanish from the quotient (so do
// the terms of R below some d dividing c when the rest of R is a
// non-negative multiple of d: (jj*4 + j) / 8 == jj / 2 for j < 4). A
// numerator that is all multiples of c divides exactly, whatever its sign.
#include "ir/Simplify.h"

#include "ir/Visitor.h"

#include <algorithm>
#include <numeric>

#include <optional>

namespace tilet::ir {

namespace {

struct Term {
    int64_t coef;
    Expr atom;
};

// `overflow` also marks a form holding INT64_MIN: subtraction negates
// coefficients and rebuild() negates negative ones, and INT64_MIN has no
// negation in 64 bits. Such a form is not rebuilt.
struct Linear {
    DType type = DType::Int32;
    int64_t constant = 0;
    std::vector<Term> terms;
    bool overflow = false;

    void check(int64_t v) {
        if (v == INT64_MIN) overflow = true;
    }
    void addTerm(int64_t coef, const Expr &atom) {
        for (Term &t : terms) {
            if (structurallyEqual(t.atom, atom)) {
                if (__builtin_add_overflow(t.coef, coef, &t.coef)) overflow = true;
                check(t.coef);
                return;
            }
        }
        check(coef);
        terms.push_back({coef, atom});
    }
    void addConstant(int64_t c) {
        if (__builtin_add_overflow(constant, c, &constant)) overflow = true;
        check(constant);
    }
    void scale(int64_t c) {
        if (__builtin_mul_overflow(constant, c, &constant)) overflow = true;
        check(constant);
        for (Term &t : terms) {
            if (__builtin_mul_overflow(t.coef, c, &t.coef)) overflow = true;
            check(t.coef);
        }
    }
    void append(const Linear &o, int64_t sign) {
        overflow |= o.overflow;   // o's values may be INT64_MIN, which sign = -1 cannot negate
        if (o.overflow) return;
        addConstant(sign * o.constant);
        for (const Term &t : o.terms) addTerm(sign * t.coef, t.atom);
    }
};

bool isIndexType(DType t) { return t == DType::Int32 || t == DType::Int64; }

class Simplifier : public Mutator {
public:
    explicit Simplifier(const BoundsScope &scope) : scope_(scope) {}
    using Mutator::mutate;

    // Statement traversal keeps loop and let variables' ranges in scope.
    Stmt mutateFor(const Stmt &self, const For &n) override {
        Expr mn = mutate(n.min), ext = mutate(n.extent);
        if (std::optional<int64_t> e = constInt(ext); e && *e <= 0) return nullptr;
        if (constInt(ext) == 1 && !n.pipeline && n.forKind != ForKind::Parallel && !jumpsOutOf(n.body)) {
            // One iteration: the body with the variable replaced by the start
            // (a body that jumps keeps its loop: its break or continue needs one).
            return mutate(substitute(n.body, {{n.var, mn}}));
        }
        Interval lo = boundsOf(mn, scope_), len = boundsOf(ext, scope_);
        Interval r;
        r.lo = lo.lo;
        r.hi = (lo.hi == Interval::kMax || len.hi == Interval::kMax) ? Interval::kMax : lo.hi + len.hi - 1;
        scope_.bind(n.var.get(), r);
        Stmt body = mutate(n.body);
        scope_.unbind(n.var.get());
        if (!body) return nullptr;
        if (mn == n.min && ext == n.extent && body == n.body) return self;
        return rebuildFor(n, mn, ext, body);
    }

    Stmt mutateLetStmt(const Stmt &self, const LetStmt &n) override {
        Expr v = mutate(n.value);
        scope_.bind(n.var.get(), boundsOf(v, scope_));
        Stmt body = mutate(n.body);
        scope_.unbind(n.var.get());
        if (!body) return nullptr;
        bool used = false;
        forEachExpr(body, [&](const Expr &e) { used = used || e.get() == n.var.get(); });
        if (!used) return body;   // a binding nothing reads
        if (v == n.value && body == n.body) return self;
        return std::make_shared<LetStmt>(n.var, v, body, n.span);
    }

    Stmt mutateIfThenElse(const Stmt &self, const IfThenElse &n) override {
        Expr c = mutate(n.cond);
        if (std::optional<int64_t> v = constInt(c)) return *v ? mutate(n.thenBody) : mutate(n.elseBody);
        Stmt t = mutate(n.thenBody), e = mutate(n.elseBody);
        if (!t && !e) return nullptr;
        if (!t) return std::make_shared<IfThenElse>(std::make_shared<Unary>(DType::Bool, UnaryOp::Not, c, c->span), e, nullptr, n.span);
        if (c == n.cond && t == n.thenBody && e == n.elseBody) return self;
        return std::make_shared<IfThenElse>(c, t, e, n.span);
    }

    Stmt mutateSeq(const Stmt &self, const Seq &n) override {
        Stmt s = Mutator::mutateSeq(self, n);
        if (const Seq *q = as<Seq>(s); q && q->stmts.empty()) return nullptr;
        return s;
    }

protected:
    // !c and -c of an integer constant (a branch's negated condition, once
    // the condition is known).
    Expr mutateUnary(const Expr &self, const Unary &n) override {
        Expr a = mutate(n.a);
        if (std::optional<int64_t> v = constInt(a); v && !isFloat(n.dtype)) {
            if (n.op == UnaryOp::Not) return boolImm(*v == 0);
            if (n.op == UnaryOp::Neg)   // (none where 0 - v overflows)
                if (std::optional<int64_t> r = foldBinary(BinaryOp::Sub, 0, *v, n.dtype)) return intImm(*r, n.dtype);
        }
        if (a == n.a) return self;
        return std::make_shared<Unary>(n.dtype, n.op, a, n.span);
    }
    Expr mutateBinary(const Expr &self, const Binary &n) override {
        Expr a = mutate(n.a), b = mutate(n.b);
        if (isIndexType(n.dtype) && isIndexType(a->dtype) && isIndexType(b->dtype)) {
            if (n.op == BinaryOp::Add || n.op == BinaryOp::Sub || n.op == BinaryOp::Mul) {
                Expr e = (a == n.a && b == n.b) ? self : binary(n.op, a, b, n.span);
                Linear lin = linearize(e, n.dtype);
                if (!lin.overflow) return rebuild(lin);
                return e;
            }
            if (n.op == BinaryOp::Div || n.op == BinaryOp::Mod) {
                if (Expr r = simplifyDivMod(n.op, a, b, n.dtype)) return r;
            }
            // x & (2^k - 1) is x % 2^k for x >= 0: terms that are multiples of
            // 2^k drop out (the swizzle of a versioned tile's rows).
            if (n.op == BinaryOp::BitAnd) {
                std::optional<int64_t> mask = constInt(b);
                // (mask + 1 overflows for the mask 2^63 - 1, which this form does not need)
                if (mask && *mask >= 0 && *mask < INT64_MAX && ((*mask + 1) & *mask) == 0) {
                    if (Expr r = simplifyDivMod(BinaryOp::Mod, a, intImm(*mask + 1, n.dtype), n.dtype)) {
                        const Binary *m = as<Binary>(r);
                        if (m && m->op == BinaryOp::Mod && constInt(m->b) == *mask + 1) return binary(BinaryOp::BitAnd, m->a, b, n.span);
                        return r;
                    }
                }
            }
            // x ^ 0 and x | 0 (a swizzle whose rows all fall in its first line).
            if (n.op == BinaryOp::BitXor || n.op == BinaryOp::BitOr) {
                if (constInt(b) == 0) return a;
                if (constInt(a) == 0) return b;
            }
            if (n.op == BinaryOp::Min || n.op == BinaryOp::Max) {
                Interval x = boundsOf(a, scope_), y = boundsOf(b, scope_);
                if (n.op == BinaryOp::Min && x.hi != Interval::kMax && x.hi <= y.lo) return a;
                if (n.op == BinaryOp::Min && y.hi != Interval::kMax && y.hi <= x.lo) return b;
                if (n.op == BinaryOp::Max && y.hi != Interval::kMax && y.hi <= x.lo) return a;
                if (n.op == BinaryOp::Max && x.hi != Interval::kMax && x.hi <= y.lo) return b;
            }
        }
        if (isComparison(n.op) && !isFloat(a->dtype) && !isFloat(b->dtype)) {
            // Decide comparisons that value ranges settle.
            Interval x = boundsOf(a, scope_), y = boundsOf(b, scope_);
            auto known = [&](bool truth) { return boolImm(truth); };
            switch (n.op) {
            case BinaryOp::Lt:
                if (x.hi != Interval::kMax && y.lo != Interval::kMin && x.hi < y.lo) return known(true);
                if (x.lo != Interval::kMin && y.hi != Interval::kMax && x.lo >= y.hi) return known(false);
                break;
            case BinaryOp::Ge:
                if (x.lo != Interval::kMin && y.hi != Interval::kMax && x.lo >= y.hi) return known(true);
                if (x.hi != Interval::kMax && y.lo != Interval::kMin && x.hi < y.lo) return known(false);
                break;
            default: break;
            }
        }
        // Constant operands fold (binary() folds them): a substitution may
        // have made them constant without rebuilding the node.
        if (a == n.a && b == n.b && !(constInt(a) && constInt(b))) return self;
        return binary(n.op, a, b, n.span);
    }

    Expr mutateSelect(const Expr &self, const Select &n) override {
        Expr c = mutate(n.cond);
        if (std::optional<int64_t> v = constInt(c)) return mutate(*v ? n.thenValue : n.elseValue);
        Expr t = mutate(n.thenValue), f = mutate(n.elseValue);
        if (c == n.cond && t == n.thenValue && f == n.elseValue) return self;
        return std::make_shared<Select>(n.dtype, c, t, f, n.span);
    }

    Expr mutateCast(const Expr &self, const Cast &n) override {
        Expr v = mutate(n.value);
        if (v->dtype == n.dtype) return v;
        if (v == n.value) return self;
        return cast(n.dtype, v);
    }

private:
    Linear linearize(const Expr &e, DType type) {
        Linear lin;
        lin.type = type;
        if (std::optional<int64_t> c = constInt(e)) {
            lin.constant = *c;
            lin.check(*c);
            return lin;
        }
        // A name whose bounds here are one value is that value (a swizzle's
        // `panel` on a grid of one panel).
        if (const VarNode *v = as<VarNode>(e); v && v->dtype == type) {
            Interval r = scope_.var(v);
            if (r.bounded() && r.lo == r.hi) {
                lin.constant = r.lo;
                lin.check(r.lo);
                return lin;
            }
        }
        // -x, as rebuild() writes a lone negative term: `a + -a + 32` is 32.
        if (const Unary *u = as<Unary>(e); u && u->op == UnaryOp::Neg && u->dtype == type) {
            Linear x = linearize(u->a, type);
            x.scale(-1);
            return x;
        }
        if (const Binary *b = as<Binary>(e); b && b->dtype == type) {
            if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) {
                Linear x = linearize(b->a, type), y = linearize(b->b, type);
                x.append(y, b->op == BinaryOp::Add ? 1 : -1);
                return x;
            }
            if (b->op == BinaryOp::Mul) {
                if (std::optional<int64_t> c = constInt(b->b)) {
                    Linear x = linearize(b->a, type);
                    x.scale(*c);
                    return x;
                }
                if (std::optional<int64_t> c = constInt(b->a)) {
                    Linear x = linearize(b->b, type);
                    x.scale(*c);
                    return x;
                }
            }
        }
        lin.addTerm(1, e);
        return lin;
    }

    Expr rebuild(const Linear &lin) {
        Expr sum;
        // Positive terms first, then subtract the negative ones: "a * 4 + b - c".
        for (int pass = 0; pass < 2; ++pass) {
            for (const Term &t : lin.terms) {
                if (t.coef == 0 || (pass == 0) != (t.coef > 0)) continue;
                int64_t mag = t.coef > 0 ? t.coef : -t.coef;
                Expr term = mag == 1 ? t.atom : binary(BinaryOp::Mul, t.atom, intImm(mag, lin.type));
                if (!sum) sum = t.coef > 0 ? term : std::make_shared<Unary>(lin.type, UnaryOp::Neg, term);
                else sum = binary(t.coef > 0 ? BinaryOp::Add : BinaryOp::Sub, sum, term);
            }
        }
        if (!sum) return intImm(lin.constant, lin.type);
        if (lin.constant > 0) sum = binary(BinaryOp::Add, sum, intImm(lin.constant, lin.type));
        if (lin.constant < 0) sum = binary(BinaryOp::Sub, sum, intImm(-lin.constant, lin.type));
        return sum;
    }

    Expr simplifyDivMod(BinaryOp op, const Expr &a, const Expr &b, DType type) {
        std::optional<int64_t> cOpt = constInt(b);
        if (!cOpt || *cOpt <= 0) return nullptr;
        int64_t c = *cOpt;
        // A multiple of c divides exactly, whatever its sign: (x * 64 + 64) / 2 == x * 32 + 32.
        if (Linear lin = linearize(a, type); !lin.overflow && lin.constant % c == 0 &&
                                             std::all_of(lin.terms.begin(), lin.terms.end(), [&](const Term &t) { return t.coef % c == 0; })) {
            if (op == BinaryOp::Mod) return intImm(0, type);
            Linear quotient;
            quotient.type = type;
            quotient.constant = lin.constant / c;
            for (const Term &t : lin.terms) quotient.addTerm(t.coef / c, t.atom);
            return rebuild(quotient);
        }
        if (boundsOf(a, scope_).lo < 0) return nullptr;   // truncation differs from floor for negatives
        // (x / c1) / c2 == x / (c1 * c2) for non-negative x.
        if (const Binary *inner = as<Binary>(a); op == BinaryOp::Div && inner && inner->op == BinaryOp::Div) {
            if (std::optional<int64_t> c1 = constInt(inner->b); c1 && *c1 > 0 && boundsOf(inner->a, scope_).lo >= 0) {
                int64_t prod;
                if (!__builtin_mul_overflow(*c1, c, &prod)) return simplifyDivMod(op, inner->a, intImm(prod, type), type);
            }
        }
        Linear lin = linearize(a, type);
        if (lin.overflow) return nullptr;
        Linear quotient, remainder;
        quotient.type = remainder.type = type;
        int64_t cq = lin.constant / c, cr = lin.constant % c;   // constant >= 0 is not guaranteed; keep it exact
        if (cr < 0) { cr += c; cq -= 1; }
        quotient.constant = cq;
        remainder.constant = cr;
        for (const Term &t : lin.terms) {
            if (t.coef % c == 0) quotient.addTerm(t.coef / c, t.atom);
            else remainder.addTerm(t.coef, t.atom);
        }
        Expr rem = rebuild(remainder);
        Interval rr = boundsOf(rem, scope_);
        if (rr.lo < 0) return nullptr;
        bool below = rr.hi != Interval::kMax && rr.hi < c;
        if (!below) {
            if (Expr r = splitAtDivisor(op, quotient, remainder, c, type)) return r;
        }
        if (op == BinaryOp::Mod) {
            if (below) return rem;
            if (quotient.terms.empty() && quotient.constant == 0) return binary(BinaryOp::Mod, rem, b);
            return binary(BinaryOp::Mod, rem, b);
        }
        Expr q = rebuild(quotient);
        if (below) return q;
        return binary(BinaryOp::Add, q, binary(BinaryOp::Div, rem, b));
    }

    // A remainder M + R with M a non-negative multiple of some d dividing c
    // and 0 <= R < d (`(jj * 4 + j) / 8` with j < 4): M + R stays below the
    // next multiple of c past M, so (q*c + M + R) / c == q + M / c and
    // (M + R) % c == M % c + R. Each d the remainder's coefficients share
    // with c is tried, largest first.
    Expr splitAtDivisor(BinaryOp op, const Linear &quotient, const Linear &remainder, int64_t c, DType type) {
        std::vector<int64_t> divisors;
        for (const Term &t : remainder.terms) {
            int64_t d = std::gcd(t.coef < 0 ? -t.coef : t.coef, c);
            if (d > 1 && std::find(divisors.begin(), divisors.end(), d) == divisors.end()) divisors.push_back(d);
        }
        std::sort(divisors.rbegin(), divisors.rend());
        for (int64_t d : divisors) {
            Linear multiple, rest;
            multiple.type = rest.type = type;
            multiple.constant = remainder.constant - remainder.constant % d;
            rest.constant = remainder.constant % d;
            for (const Term &t : remainder.terms) (t.coef % d == 0 ? multiple : rest).addTerm(t.coef, t.atom);
            Expr m = rebuild(multiple), r = rebuild(rest);
            Interval mr = boundsOf(m, scope_), rr = boundsOf(r, scope_);
            if (mr.lo < 0 || rr.lo < 0 || rr.hi == Interval::kMax || rr.hi >= d) continue;
            // M = d * m' divides by c as m' by c / d: (jj * 4) / 8 == jj / 2.
            Linear reduced;
            reduced.type = type;
            reduced.constant = multiple.constant / d;
            for (const Term &t : multiple.terms) reduced.addTerm(t.coef / d, t.atom);
            Expr m1 = rebuild(reduced), c1 = intImm(c / d, type);
            if (op == BinaryOp::Mod) return binary(BinaryOp::Add, binary(BinaryOp::Mul, binary(BinaryOp::Mod, m1, c1), intImm(d, type)), r);
            return binary(BinaryOp::Add, rebuild(quotient), binary(BinaryOp::Div, m1, c1));
        }
        return nullptr;
    }

    BoundsScope scope_;
};

} // namespace

Expr simplify(const Expr &e, const BoundsScope &scope) { return Simplifier(scope).mutate(e); }
Expr simplify(const Expr &e) { return Simplifier(BoundsScope{}).mutate(e); }
Stmt simplify(const Stmt &s, const BoundsScope &scope) { return Simplifier(scope).mutate(s); }

} // namespace tilet::ir
