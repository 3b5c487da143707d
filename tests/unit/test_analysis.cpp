// Value ranges, divisors and simplification of index arithmetic.
#include "ir/Analysis.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <gtest/gtest.h>

#include <vector>

using namespace tilet;
using namespace tilet::ir;

TEST(Analysis, BoundsOfLayoutArithmetic) {
    BoundsScope scope;
    scope.setSpecial(SpecialKind::ThreadIdx, {0, 127});
    VarRef l = makeVar("l");
    scope.bind(l.get(), {0, 3});
    Expr t = threadIdx();
    Interval r = boundsOf(add(mul(mod(t, intImm(64)), intImm(4)), l), scope);
    EXPECT_EQ(r.lo, 0);
    EXPECT_EQ(r.hi, 63 * 4 + 3);
    Interval d = boundsOf(div(t, intImm(64)), scope);
    EXPECT_EQ(d.lo, 0);
    EXPECT_EQ(d.hi, 1);
    VarRef unknown = makeVar("u");
    EXPECT_FALSE(boundsOf(unknown, scope).isPoint());
}

TEST(Analysis, KnownDivisor) {
    VarRef x = makeVar("x"), y = makeVar("y");
    EXPECT_EQ(knownDivisor(mul(x, intImm(8))), 8);
    EXPECT_EQ(knownDivisor(add(mul(x, intImm(8)), mul(y, intImm(12)))), 4);
    EXPECT_EQ(knownDivisor(add(mul(x, intImm(8)), y)), 1);
    EXPECT_EQ(knownDivisor(intImm(0)), 0);
}

TEST(Simplify, DivisionAndRemainderOfSplitIndices) {
    BoundsScope scope;
    scope.setSpecial(SpecialKind::ThreadIdx, {0, 127});
    VarRef l = makeVar("l");
    scope.bind(l.get(), {0, 3});
    Expr t = threadIdx();
    Expr e = add(mul(t, intImm(4)), l);
    EXPECT_EQ(toString(simplify(div(e, intImm(4)), scope)), "threadIdx.x");
    EXPECT_EQ(toString(simplify(mod(e, intImm(4)), scope)), "l");
    // l may reach 7 here: the quotient keeps its remainder part.
    scope.bind(l.get(), {0, 7});
    EXPECT_EQ(toString(simplify(div(e, intImm(4)), scope)), "(threadIdx.x + (l / 4))");
}

TEST(Simplify, LinearTermsCancelAndFold) {
    VarRef b = makeVar("by");
    Expr start = mul(b, intImm(128));
    Expr end = add(mul(b, intImm(128)), intImm(128));
    EXPECT_EQ(constInt(simplify(sub(end, start))), 128);
    EXPECT_EQ(toString(simplify(add(add(b, intImm(3)), sub(b, intImm(1))))), "((by * 2) + 2)");
}

TEST(Simplify, NestedDivisionsMerge) {
    BoundsScope scope;
    scope.setSpecial(SpecialKind::ThreadIdx, {0, 255});
    EXPECT_EQ(toString(simplify(div(div(threadIdx(), intImm(32)), intImm(4)), scope)), "(threadIdx.x / 128)");
}

TEST(Simplify, LowBitMasksDropMultiplesOfTheirModulus) {
    BoundsScope scope;
    VarRef lane = makeVar("lane"), k = makeVar("k");
    scope.bind(lane.get(), {0, 31});
    scope.bind(k.get(), {0, 100});
    auto bitAnd = [](Expr a, int64_t m) { return binary(BinaryOp::BitAnd, std::move(a), intImm(m)); };
    // k * 8 is a multiple of 8: (k * 8 + lane) & 7 == lane & 7.
    EXPECT_EQ(toString(simplify(bitAnd(add(mul(k, intImm(8)), lane), 7), scope)), "(lane & 7)");
    // lane % 4 is below 8: the mask keeps all of it (and is not its % 4).
    EXPECT_EQ(toString(simplify(bitAnd(add(mul(k, intImm(8)), mod(lane, intImm(4))), 7), scope)), "(lane % 4)");
    // A mask that is not 2^k - 1 stays.
    EXPECT_EQ(toString(simplify(bitAnd(add(mul(k, intImm(8)), lane), 5), scope)), "(((k * 8) + lane) & 5)");
}

TEST(Simplify, RemaindersBelowADivisorOfTheModulusDrop) {
    BoundsScope scope;
    VarRef jj = makeVar("jj"), j = makeVar("j");
    scope.bind(jj.get(), {0, 63});
    scope.bind(j.get(), {0, 3});
    // jj * 4 is a multiple of 4 and j < 4: (jj * 4 + j) / 8 never carries j.
    Expr e = add(mul(jj, intImm(4)), j);
    EXPECT_EQ(toString(simplify(div(e, intImm(8)), scope)), "(jj / 2)");
    EXPECT_EQ(toString(simplify(mod(e, intImm(8)), scope)), "(((jj % 2) * 4) + j)");
    // Value by value, the simplified forms agree with the definition.
    for (int64_t a = 0; a < 64; ++a) {
        for (int64_t b = 0; b < 4; ++b) {
            std::vector<std::pair<VarRef, Expr>> at{{jj, intImm(a)}, {j, intImm(b)}};
            EXPECT_EQ(constInt(simplify(substitute(simplify(div(e, intImm(8)), scope), at))), (4 * a + b) / 8);
            EXPECT_EQ(constInt(simplify(substitute(simplify(mod(e, intImm(8)), scope), at))), (4 * a + b) % 8);
        }
    }
    // j may reach 4: it can carry into the quotient, which keeps it.
    scope.bind(j.get(), {0, 4});
    EXPECT_NE(toString(simplify(div(e, intImm(8)), scope)), "(jj / 2)");
}

TEST(Simplify, KeepsDivisionsOfPossiblyNegativeValues) {
    VarRef x = makeVar("x");
    BoundsScope scope;
    scope.bind(x.get(), {-8, 8});
    // C truncates towards zero, so (x*4 + 1) / 4 is not x for negative x.
    Expr e = simplify(div(add(mul(x, intImm(4)), intImm(1)), intImm(4)), scope);
    EXPECT_NE(toString(e), "x");
}

TEST(Simplify, ExactMultiplesDivideWhateverTheirSign) {
    VarRef x = makeVar("x"), y = makeVar("y");   // unbounded: possibly negative
    // (x*64 + y*2 + 64) / 2 is exact for every x and y (a packed tile's byte offset).
    EXPECT_EQ(toString(simplify(div(add(add(mul(x, intImm(64)), mul(y, intImm(2))), intImm(64)), intImm(2)))), "(((x * 32) + y) + 32)");
    EXPECT_EQ(constInt(simplify(mod(add(mul(x, intImm(128)), mul(y, intImm(64))), intImm(8)))), 0);
    EXPECT_EQ(constInt(simplify(binary(BinaryOp::BitAnd, mul(x, intImm(64)), intImm(7)))), 0);
    // x ^ 0 and x | 0 are x.
    EXPECT_EQ(toString(simplify(binary(BinaryOp::BitXor, mul(x, intImm(16)), intImm(0)))), "(x * 16)");
    EXPECT_EQ(toString(simplify(binary(BinaryOp::BitOr, intImm(0), y))), "y");
}
