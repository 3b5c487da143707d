// Simplify.h -- algebraic simplification of integer index arithmetic.
//
// Canonicalises sums (constants folded, like terms merged), and removes
// divisions and remainders by constants when value ranges prove them trivial,
// e.g. (t * 4 + l) / 4 -> t and (t * 4 + l) % 4 -> l for l in [0, 4). The
// statement form also drops branches with constant conditions and loops with
// no iterations. It never changes what a program computes.
#pragma once

#include "ir/Analysis.h"

namespace tilet::ir {

Expr simplify(const Expr &e, const BoundsScope &scope);
Expr simplify(const Expr &e);
Stmt simplify(const Stmt &s, const BoundsScope &scope);

} // namespace tilet::ir
