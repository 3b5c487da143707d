// ConstValue.h -- compile-time values and checked constant arithmetic.
//
// Integer constants are folded in 64 bits; an overflow or a division by zero
// is a user error at the operator, never a silent wrap.
#pragma once

#include "ir/DType.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tilet {

struct ConstValue {
    enum class Kind { Int, Float, Bool };
    Kind kind = Kind::Int;
    int64_t i = 0;
    double f = 0;
    bool b = false;

    static ConstValue ofInt(int64_t v) { return {Kind::Int, v, 0, false}; }
    static ConstValue ofFloat(double v) { return {Kind::Float, 0, v, false}; }
    static ConstValue ofBool(bool v) { return {Kind::Bool, 0, 0, v}; }
    double asDouble() const { return kind == Kind::Float ? f : kind == Kind::Int ? double(i) : (b ? 1.0 : 0.0); }
    std::string str() const;
};

enum class ConstOp { Add, Sub, Mul, Div, Mod, Shl, Shr, BitAnd, BitOr, BitXor, Lt, Le, Gt, Ge, Eq, Ne, And, Or, Min, Max, CeilDiv };

// Result or an error message ("integer overflow in constant expression").
struct ConstResult {
    std::optional<ConstValue> value;
    std::string error;
};

ConstResult foldConst(ConstOp op, const ConstValue &a, const ConstValue &b);

// Whether an integer value can be represented in `t`.
bool fitsInType(int64_t v, DType t);

} // namespace tilet
