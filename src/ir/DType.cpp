#include "ir/DType.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

namespace tilet {

namespace {
struct Info {
    DType type;
    std::string_view name;
    int bits;
};
constexpr Info kInfo[] = {
#define X(n, spelling, b) {DType::n, spelling, b},
    TILET_DTYPES(X)
#undef X
};
} // namespace

std::string_view dtypeName(DType t) { return kInfo[static_cast<int>(t)].name; }
int dtypeBits(DType t) { return kInfo[static_cast<int>(t)].bits; }

std::optional<DType> dtypeFromName(std::string_view name) {
    for (const Info &i : kInfo) {
        if (i.name == name) return i.type;
    }
    return std::nullopt;
}

bool isInteger(DType t) { return t >= DType::Int4 && t <= DType::UInt64; }
bool isSigned(DType t) { return t >= DType::Int4 && t <= DType::Int64; }
bool isFloat(DType t) { return t >= DType::F16; }
bool isNarrowFloat(DType t) { return isFloat(t) && t != DType::F32 && t != DType::F64 && t != DType::TF32; }
bool isSubByte(DType t) { return dtypeBits(t) < 8; }

std::optional<double> largestFinite(DType t) {
    switch (t) {
    case DType::F16: return 65504.0;
    case DType::BF16: return 3.3895313892515355e38;
    case DType::F8E4M3: return 448.0;
    case DType::F8E5M2: return 57344.0;
    case DType::F6E2M3: return 7.5;
    case DType::F6E3M2: return 28.0;
    case DType::F4E2M1: return 6.0;
    default: return std::nullopt;
    }
}

std::optional<double> halfPrecisionValue(double v, DType t) {
    if (t != DType::F16 && t != DType::BF16) return std::nullopt;
    float f = static_cast<float>(v);
    if (!std::isfinite(f) || f == 0) return f;
    if (t == DType::BF16) {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        bits += 0x7fffu + ((bits >> 16) & 1u);   // to nearest even (a carry may reach infinity)
        bits &= 0xffff0000u;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    // f16: 10 mantissa bits, subnormals from 2^-14 down in steps of 2^-24, 65504 the largest.
    const double a = std::fabs(static_cast<double>(f));
    int e = 0;
    std::frexp(a, &e);
    const double ulp = std::ldexp(1.0, std::max(e - 1, -14) - 10);
    double r = std::nearbyint(a / ulp) * ulp;   // ties to even
    if (r > 65504) r = INFINITY;
    return f < 0 ? -r : r;
}
bool isUnpacked(DType t) { return t == DType::F4E2M1Unpacked || t == DType::F6E2M3Unpacked || t == DType::F6E3M2Unpacked; }
bool isPacked(DType t) { return isSubByte(t) || isUnpacked(t); }
bool inRegistersOneByOne(DType t) { return t == DType::F4E2M1; }
DType valueType(DType t) {
    switch (t) {
    case DType::F4E2M1Unpacked: return DType::F4E2M1;
    case DType::F6E2M3Unpacked: return DType::F6E2M3;
    case DType::F6E3M2Unpacked: return DType::F6E3M2;
    default: return t;
    }
}
int64_t packingUnit(DType t) { return 8 / std::gcd(dtypeBits(t), 8); }

DType arithmeticType(DType a, DType b) {
    if (a == b && !isNarrowFloat(a) && a != DType::Bool) return a;
    if (isFloat(a) || isFloat(b)) {
        if (a == DType::F64 || b == DType::F64) return DType::F64;
        // Narrow floats are promoted, as C promotes char to int: arithmetic on
        // f16/bf16/fp8 values is done in f32 and converted back on store.
        return DType::F32;
    }
    // Integers (bool counts as int32): the wider wins; at equal width, unsigned.
    auto norm = [](DType t) { return t == DType::Bool ? DType::Int32 : t; };
    a = norm(a);
    b = norm(b);
    int wa = std::max(dtypeBits(a), 32), wb = std::max(dtypeBits(b), 32);
    int w = std::max(wa, wb);
    bool unsignedResult = (!isSigned(a) && dtypeBits(a) >= w) || (!isSigned(b) && dtypeBits(b) >= w);
    if (w == 64) return unsignedResult ? DType::UInt64 : DType::Int64;
    return unsignedResult ? DType::UInt32 : DType::Int32;
}

} // namespace tilet
