// Analysis.h -- facts about integer expressions: value ranges, known divisors
// and structural equality. Passes use them to prove accesses in bounds and
// aligned, which decides guards and vector widths.
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <map>

namespace tilet::ir {

// A closed range [lo, hi]; kMin/kMax mean "unbounded on that side".
struct Interval {
    static constexpr int64_t kMin = INT64_MIN;
    static constexpr int64_t kMax = INT64_MAX;
    int64_t lo = kMin;
    int64_t hi = kMax;
    static Interval point(int64_t v) { return {v, v}; }
    static Interval range(int64_t lo, int64_t hi) { return {lo, hi}; }
    bool bounded() const { return lo != kMin && hi != kMax; }
    bool isPoint() const { return bounded() && lo == hi; }
};

// Known ranges of the variables and registers an expression may use.
class BoundsScope {
public:
    void bind(const VarNode *v, Interval r) { vars_[v] = r; }
    void unbind(const VarNode *v) { vars_.erase(v); }
    void setSpecial(SpecialKind k, Interval r) { special_[static_cast<int>(k)] = r; }
    Interval var(const VarNode *v) const;
    Interval special(SpecialKind k) const { return special_[static_cast<int>(k)]; }
    // The block's thread and grid ranges for a kernel (grid dims may be dynamic).
    static BoundsScope forKernel(const Kernel &k);

private:
    std::map<const VarNode *, Interval> vars_;
    Interval special_[5];
};

Interval boundsOf(const Expr &e, const BoundsScope &scope);

// The largest known d > 0 with e % d == 0 (1 when nothing is known; for the
// constant 0, returns 0, which divides by everything).
int64_t knownDivisor(const Expr &e);

bool structurallyEqual(const Expr &a, const Expr &b);

// Splits `e` into base + constant: returns the base (null when `e` is a
// constant) and adds the constant to `c`. Looks through + and - of constants.
Expr splitConstant(const Expr &e, int64_t &c);

// The statement an `if` without `else` guards (a predicated pipeline
// producer, predicate-pipeline-branches), or `s` itself.
const Stmt &unguarded(const Stmt &s);

// `e` with each (base + lane) / c and (base + lane) % c whose lanes stay in
// one run of c elements rewritten: base / c, and base % c + lane. They do
// for lane in [0, width) when base is a multiple of `width`, c a positive
// multiple of it, and base >= 0 in `scope` (where C's truncating division is
// the floor). `B[i / 16, i % 16]` with i = tx * 4 + lane is then one row's
// four consecutive elements, as TileLang's vectorizer proves of floordiv /
// floormod.
Expr splitLaneRuns(const Expr &e, const VarRef &lane, int64_t width, const BoundsScope &scope);

// True if `e` provably lies in [0, extent) for every value in scope.
bool provablyInRange(const Expr &e, const Expr &extent, const BoundsScope &scope);

} // namespace tilet::ir
