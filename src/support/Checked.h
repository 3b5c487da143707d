// Checked.h -- integer arithmetic that reports overflow instead of wrapping.
//
// Signed overflow is undefined behaviour in C++, and a wrapped size or index
// would let a wrong program through (a cluster of 2^63 x 2 blocks that
// "multiplies" to 0, a region corner that wraps back inside its tensor). Every
// product of user sizes and every sum of a corner and an extent goes through
// these helpers; nullopt means "does not fit in 64 bits" and the caller
// reports it at the user's number.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

namespace tilet {

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

inline std::optional<int64_t> checkedSub(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
    return r;
}

inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

// -a; INT64_MIN has no negation.
inline std::optional<int64_t> checkedNeg(int64_t a) { return checkedSub(0, a); }

// The product of all factors, or nullopt if any partial product overflows.
inline std::optional<int64_t> checkedProduct(const std::vector<int64_t> &factors) {
    int64_t r = 1;
    for (int64_t f : factors) {
        if (__builtin_mul_overflow(r, f, &r)) return std::nullopt;
    }
    return r;
}

// The product, saturated at INT64_MAX: for callers that only compare the
// result against a limit far below 2^63 (a register budget, a size cap), where
// "too large" is the right answer however large. Factors must be >= 0.
inline int64_t saturatingProduct(std::initializer_list<int64_t> factors) {
    int64_t r = 1;
    for (int64_t f : factors) {
        if (__builtin_mul_overflow(r, f, &r)) return INT64_MAX;
    }
    return r;
}

// C++ truncation of a double to int64_t, which is undefined behaviour for NaN
// and for values outside [-2^63, 2^63); nullopt then.
inline std::optional<int64_t> truncateToInt64(double v) {
    // 2^63 is exactly representable; every double below it in magnitude
    // truncates into range.
    constexpr double kTwo63 = 9223372036854775808.0;
    if (std::isnan(v) || v >= kTwo63 || v < -kTwo63) return std::nullopt;
    return static_cast<int64_t>(v);
}

} // namespace tilet
