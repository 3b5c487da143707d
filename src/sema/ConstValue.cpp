#include "sema/ConstValue.h"

#include <algorithm>
#include <cmath>
#include <locale>
#include <sstream>

namespace tilet {

std::string ConstValue::str() const {
    switch (kind) {
    case Kind::Int: return std::to_string(i);
    case Kind::Bool: return b ? "true" : "false";
    case Kind::Float: {
        std::ostringstream os;
        os.imbue(std::locale::classic());
        os << f;
        return os.str();
    }
    }
    return "?";
}

bool fitsInType(int64_t v, DType t) {
    switch (t) {
    case DType::Bool: return v == 0 || v == 1;
    case DType::Int4: return v >= -8 && v <= 7;
    case DType::Int8: return v >= INT8_MIN && v <= INT8_MAX;
    case DType::Int16: return v >= INT16_MIN && v <= INT16_MAX;
    case DType::Int32: return v >= INT32_MIN && v <= INT32_MAX;
    case DType::Int64: return true;
    case DType::UInt4: return v >= 0 && v <= 15;
    case DType::UInt8: return v >= 0 && v <= UINT8_MAX;
    case DType::UInt16: return v >= 0 && v <= UINT16_MAX;
    case DType::UInt32: return v >= 0 && v <= UINT32_MAX;
    case DType::UInt64: return v >= 0;
    default: return true;   // floats hold any integer approximately
    }
}

ConstResult foldConst(ConstOp op, const ConstValue &a, const ConstValue &b) {
    using K = ConstValue::Kind;
    auto ok = [](ConstValue v) { return ConstResult{v, {}}; };
    auto fail = [](std::string m) { return ConstResult{std::nullopt, std::move(m)}; };

    if (op == ConstOp::And || op == ConstOp::Or) {
        bool x = a.kind == K::Bool ? a.b : a.asDouble() != 0, y = b.kind == K::Bool ? b.b : b.asDouble() != 0;
        return ok(ConstValue::ofBool(op == ConstOp::And ? (x && y) : (x || y)));
    }
    bool anyFloat = a.kind == K::Float || b.kind == K::Float;
    if (anyFloat) {
        double x = a.asDouble(), y = b.asDouble();
        switch (op) {
        case ConstOp::Add: return ok(ConstValue::ofFloat(x + y));
        case ConstOp::Sub: return ok(ConstValue::ofFloat(x - y));
        case ConstOp::Mul: return ok(ConstValue::ofFloat(x * y));
        case ConstOp::Div:
            if (y == 0) return fail("division by zero in constant expression");
            return ok(ConstValue::ofFloat(x / y));
        case ConstOp::Min: return ok(ConstValue::ofFloat(std::min(x, y)));
        case ConstOp::Max: return ok(ConstValue::ofFloat(std::max(x, y)));
        case ConstOp::Lt: return ok(ConstValue::ofBool(x < y));
        case ConstOp::Le: return ok(ConstValue::ofBool(x <= y));
        case ConstOp::Gt: return ok(ConstValue::ofBool(x > y));
        case ConstOp::Ge: return ok(ConstValue::ofBool(x >= y));
        case ConstOp::Eq: return ok(ConstValue::ofBool(x == y));
        case ConstOp::Ne: return ok(ConstValue::ofBool(x != y));
        default: return fail("operator requires integer operands");
        }
    }
    int64_t x = a.kind == K::Bool ? a.b : a.i, y = b.kind == K::Bool ? b.b : b.i;
    int64_t r = 0;
    const char *overflow = "integer overflow in constant expression";
    switch (op) {
    case ConstOp::Add: if (__builtin_add_overflow(x, y, &r)) return fail(overflow); return ok(ConstValue::ofInt(r));
    case ConstOp::Sub: if (__builtin_sub_overflow(x, y, &r)) return fail(overflow); return ok(ConstValue::ofInt(r));
    case ConstOp::Mul: if (__builtin_mul_overflow(x, y, &r)) return fail(overflow); return ok(ConstValue::ofInt(r));
    case ConstOp::Div:
    case ConstOp::Mod:
    case ConstOp::CeilDiv:
        if (y == 0) return fail("division by zero in constant expression");
        if (x == INT64_MIN && y == -1) return fail(overflow);
        if (op == ConstOp::Div) return ok(ConstValue::ofInt(x / y));
        if (op == ConstOp::Mod) return ok(ConstValue::ofInt(x % y));
        // ceildiv rounds the exact quotient up.
        r = x / y;
        if ((x % y != 0) && ((x < 0) == (y < 0))) ++r;
        return ok(ConstValue::ofInt(r));
    case ConstOp::Shl:
        if (y < 0 || y > 62) return fail("shift amount out of range in constant expression");
        // x * 2^y, as in Python (TileLang's constants) and C++20: -3 << 2 is -12.
        if (__builtin_mul_overflow(x, int64_t{1} << y, &r)) return fail(overflow);
        return ok(ConstValue::ofInt(r));
    case ConstOp::Shr:
        if (y < 0 || y > 63) return fail("shift amount out of range in constant expression");
        return ok(ConstValue::ofInt(x >> y));
    case ConstOp::BitAnd: return ok(ConstValue::ofInt(x & y));
    case ConstOp::BitOr: return ok(ConstValue::ofInt(x | y));
    case ConstOp::BitXor: return ok(ConstValue::ofInt(x ^ y));
    case ConstOp::Min: return ok(ConstValue::ofInt(std::min(x, y)));
    case ConstOp::Max: return ok(ConstValue::ofInt(std::max(x, y)));
    case ConstOp::Lt: return ok(ConstValue::ofBool(x < y));
    case ConstOp::Le: return ok(ConstValue::ofBool(x <= y));
    case ConstOp::Gt: return ok(ConstValue::ofBool(x > y));
    case ConstOp::Ge: return ok(ConstValue::ofBool(x >= y));
    case ConstOp::Eq: return ok(ConstValue::ofBool(x == y));
    case ConstOp::Ne: return ok(ConstValue::ofBool(x != y));
    default: break;
    }
    return fail("unsupported constant operation");
}

} // namespace tilet
