// Checked constant folding: overflow and division by zero are errors, never wraps.
#include "sema/ConstValue.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tilet;

namespace {
ConstResult fold(ConstOp op, int64_t a, int64_t b) { return foldConst(op, ConstValue::ofInt(a), ConstValue::ofInt(b)); }
} // namespace

TEST(ConstValue, IntegerArithmetic) {
    EXPECT_EQ(fold(ConstOp::Add, 2, 3).value->i, 5);
    EXPECT_EQ(fold(ConstOp::Mul, -4, 3).value->i, -12);
    EXPECT_EQ(fold(ConstOp::Div, -7, 2).value->i, -3);   // C truncation
    EXPECT_EQ(fold(ConstOp::Mod, -7, 2).value->i, -1);
    EXPECT_EQ(fold(ConstOp::Shl, -3, 2).value->i, -12);   // x * 2^y, as Python and C++20
    EXPECT_EQ(fold(ConstOp::Shl, -1, 62).value->i, INT64_MIN / 2);
}

TEST(ConstValue, OverflowIsAnError) {
    ConstResult r = fold(ConstOp::Mul, INT64_MAX / 2 + 1, 2);
    EXPECT_FALSE(r.value.has_value());
    EXPECT_EQ(r.error, "integer overflow in constant expression");
    EXPECT_FALSE(fold(ConstOp::Add, INT64_MAX, 1).value);
    EXPECT_FALSE(fold(ConstOp::Sub, INT64_MIN, 1).value);
    EXPECT_FALSE(fold(ConstOp::Div, INT64_MIN, -1).value);
    EXPECT_FALSE(fold(ConstOp::Shl, 1, 63).value);
    EXPECT_FALSE(fold(ConstOp::Shl, -3, 62).value);
    EXPECT_FALSE(fold(ConstOp::Shl, INT64_MAX / 2 + 1, 1).value);
}

TEST(ConstValue, DivisionByZeroIsAnError) {
    for (ConstOp op : {ConstOp::Div, ConstOp::Mod, ConstOp::CeilDiv}) {
        ConstResult r = fold(op, 5, 0);
        EXPECT_FALSE(r.value.has_value());
        EXPECT_EQ(r.error, "division by zero in constant expression");
    }
    ConstResult f = foldConst(ConstOp::Div, ConstValue::ofFloat(1.0), ConstValue::ofFloat(0.0));
    EXPECT_FALSE(f.value.has_value());
}

TEST(ConstValue, CeilDivRoundsTheExactQuotientUp) {
    EXPECT_EQ(fold(ConstOp::CeilDiv, 4096, 128).value->i, 32);
    EXPECT_EQ(fold(ConstOp::CeilDiv, 4097, 128).value->i, 33);
    EXPECT_EQ(fold(ConstOp::CeilDiv, -5, 2).value->i, -2);
    EXPECT_EQ(fold(ConstOp::CeilDiv, 5, -2).value->i, -2);
    EXPECT_EQ(fold(ConstOp::CeilDiv, -5, -2).value->i, 3);
}

TEST(ConstValue, MixedFloatAndComparisons) {
    ConstResult r = foldConst(ConstOp::Mul, ConstValue::ofInt(3), ConstValue::ofFloat(0.5));
    ASSERT_TRUE(r.value);
    EXPECT_EQ(r.value->kind, ConstValue::Kind::Float);
    EXPECT_DOUBLE_EQ(r.value->f, 1.5);
    EXPECT_TRUE(fold(ConstOp::Lt, 1, 2).value->b);
    EXPECT_FALSE(foldConst(ConstOp::Mod, ConstValue::ofFloat(1), ConstValue::ofFloat(2)).value);
}

TEST(ConstValue, FitsInType) {
    EXPECT_TRUE(fitsInType(127, DType::Int8));
    EXPECT_FALSE(fitsInType(128, DType::Int8));
    EXPECT_FALSE(fitsInType(-1, DType::UInt32));
    EXPECT_TRUE(fitsInType(INT32_MAX, DType::Int32));
    EXPECT_FALSE(fitsInType(int64_t(INT32_MAX) + 1, DType::Int32));
}

// An untyped constant next to an f16 or bf16 value is that type's value
// (sema folds it): rounded to float, then to nearest even, as CUDA's
// __float2half and __float2bfloat16 do.
TEST(ConstValue, HalfPrecisionValues) {
    EXPECT_EQ(*halfPrecisionValue(128.0 / 1448.1546878700492, DType::BF16), 0.08837890625);   // 128 ** -0.5 in bf16
    EXPECT_EQ(*halfPrecisionValue(0.1, DType::F16), 0.0999755859375);
    EXPECT_EQ(*halfPrecisionValue(1.0 + 1.0 / 256, DType::BF16), 1.0);                        // a tie: to even
    EXPECT_EQ(*halfPrecisionValue(1.0 + 3.0 / 256, DType::BF16), 1.015625);                   // a tie: to even, upwards
    EXPECT_EQ(*halfPrecisionValue(65519.0, DType::F16), 65504.0);
    EXPECT_TRUE(std::isinf(*halfPrecisionValue(65520.0, DType::F16)));
    EXPECT_EQ(*halfPrecisionValue(-6e-8, DType::F16), -std::ldexp(1.0, -24));                  // the smallest subnormal
    EXPECT_EQ(*halfPrecisionValue(2e-8, DType::F16), 0.0);
    EXPECT_EQ(*halfPrecisionValue(257.0, DType::BF16), 256.0);
    EXPECT_FALSE(halfPrecisionValue(0.1, DType::F32));
}
