// tf32.h -- the value a tensor core reads from an f32 in tf32 mode: the top
// 19 bits (sign, 8-bit exponent, 10-bit mantissa), the rest cut off.
#pragma once

#include <cstring>

inline float tf32Truncated(float x) {
    unsigned bits;
    std::memcpy(&bits, &x, 4);
    bits &= 0xffffe000u;
    float y;
    std::memcpy(&y, &bits, 4);
    return y;
}
