// Checked integer arithmetic (support/Checked.h): overflow is reported, never wrapped.
#include "support/Checked.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tilet;

TEST(Checked, AddSubMulAtTheEdges) {
    EXPECT_EQ(checkedAdd(INT64_MAX - 1, 1), INT64_MAX);
    EXPECT_FALSE(checkedAdd(INT64_MAX, 1));
    EXPECT_FALSE(checkedAdd(INT64_MIN, -1));
    EXPECT_EQ(checkedAdd(INT64_MIN, INT64_MAX), -1);
    EXPECT_EQ(checkedSub(-1, INT64_MAX), INT64_MIN);
    EXPECT_FALSE(checkedSub(-2, INT64_MAX));
    EXPECT_FALSE(checkedSub(0, INT64_MIN));
    EXPECT_EQ(checkedMul(int64_t(1) << 31, int64_t(1) << 31), int64_t(1) << 62);
    EXPECT_FALSE(checkedMul(int64_t(1) << 32, int64_t(1) << 31));
    EXPECT_FALSE(checkedMul(INT64_MAX, 2));
    EXPECT_FALSE(checkedMul(INT64_MIN, -1));
    EXPECT_EQ(checkedMul(INT64_MIN, 1), INT64_MIN);
}

TEST(Checked, NegationOfInt64MinOverflows) {
    EXPECT_EQ(checkedNeg(INT64_MAX), -INT64_MAX);
    EXPECT_EQ(checkedNeg(0), 0);
    EXPECT_FALSE(checkedNeg(INT64_MIN));
}

TEST(Checked, ProductsOfSizes) {
    EXPECT_EQ(checkedProduct({}), 1);
    EXPECT_EQ(checkedProduct({65536, 65536, 2}), int64_t(1) << 33);
    // 2^93: a tensor of three 2^31 - 1 dimensions.
    EXPECT_FALSE(checkedProduct({INT32_MAX, INT32_MAX, INT32_MAX}));
    // A zero does not hide an overflow that happened before it.
    EXPECT_FALSE(checkedProduct({INT64_MAX, 2, 0}));
    // 2^63 - 1 times 2 wraps to -2 in two's complement; it must not pass as small.
    EXPECT_FALSE(checkedProduct({INT64_MAX, 2}));
    EXPECT_EQ(saturatingProduct({8, INT64_MAX}), INT64_MAX);
    EXPECT_EQ(saturatingProduct({8, 32}), 256);
}

TEST(Checked, FloatToIntegerTruncation) {
    EXPECT_EQ(truncateToInt64(1.9), 1);
    EXPECT_EQ(truncateToInt64(-1.9), -1);
    EXPECT_EQ(truncateToInt64(-9223372036854775808.0), INT64_MIN);
    EXPECT_FALSE(truncateToInt64(9223372036854775808.0));   // 2^63
    EXPECT_EQ(truncateToInt64(9223372036854774784.0), 9223372036854774784);   // the largest double below 2^63
    EXPECT_FALSE(truncateToInt64(1e300));
    EXPECT_FALSE(truncateToInt64(-1e300));
    EXPECT_FALSE(truncateToInt64(INFINITY));
    EXPECT_FALSE(truncateToInt64(NAN));
}
