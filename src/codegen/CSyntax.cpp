#include "codegen/CSyntax.h"

#include "target/Catalog.h"

#include "support/InternalError.h"

#include <charconv>
#include <cmath>

namespace tilet {

std::string cType(DType t) {
    switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "signed char";
    case DType::Int16: return "short";
    case DType::Int32: return "int";
    case DType::Int64: return "long long";
    case DType::UInt8: return "unsigned char";
    case DType::UInt16: return "unsigned short";
    case DType::UInt32: return "unsigned int";
    case DType::UInt64: return "unsigned long long";
    case DType::F16: return "__half";
    case DType::BF16: return "__nv_bfloat16";
    case DType::F32: return "float";
    case DType::TF32: return "float";
    case DType::F64: return "double";
    case DType::F8E4M3: return "__nv_fp8_e4m3";
    case DType::F8E5M2: return "__nv_fp8_e5m2";
    case DType::E8M0: return "__nv_fp8_e8m0";
    case DType::F6E2M3:
    case DType::F6E3M2:
    case DType::Int4:
    case DType::UInt4:
    case DType::F4E2M1:
    case DType::F4E2M1Unpacked:
    case DType::F6E2M3Unpacked:
    case DType::F6E3M2Unpacked: return "unsigned char";   // packed storage
    }
    return "float";
}

std::string cStorageType(DType t) {
    switch (t) {
    case DType::Bool: return "_Bool";   // C99's bool, without <stdbool.h>
    case DType::F16:
    case DType::BF16: return "unsigned short";
    case DType::F8E4M3:
    case DType::F8E5M2:
    case DType::E8M0: return "unsigned char";
    default: return cType(t);
    }
}

std::string cTypeHeader(DType t) {
    switch (t) {
    case DType::F16: return "cuda_fp16.h";
    case DType::BF16: return "cuda_bf16.h";
    case DType::F8E4M3:
    case DType::F8E5M2:
    case DType::E8M0: return "cuda_fp8.h";
    default: return "";
    }
}

std::string cValueType(DType t) { return t == DType::F4E2M1 ? "__nv_fp4_e2m1" : cType(t); }

std::string cValueTypeHeader(DType t) { return t == DType::F4E2M1 ? "cuda_fp4.h" : cTypeHeader(t); }

std::string ptxTypeName(DType t) {
    switch (t) {
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::Int8: return "s8";
    case DType::Int16: return "s16";
    case DType::Int32: return "s32";
    case DType::Int64: return "s64";
    case DType::UInt8: return "u8";
    case DType::UInt16: return "u16";
    case DType::UInt32: return "u32";
    case DType::UInt64: return "u64";
    default: TILET_INTERNAL_ERROR("no PTX scalar type for " << dtypeName(t));
    }
}

std::string mmaTypeName(DType t, bool operand) { return operand && t == DType::F32 ? "tf32" : catalog::ptxOperandType(t); }

namespace {

// C precedence levels (smaller binds tighter).
constexpr int kPrimary = 0, kUnary = 3, kMul = 5, kAdd = 6, kShift = 7, kRel = 9, kEq = 10, kBitAnd = 11, kBitXor = 12,
              kBitOr = 13, kLogAnd = 14, kLogOr = 15, kCond = 16;

int precedenceOf(ir::BinaryOp op) {
    switch (op) {
    case ir::BinaryOp::Mul:
    case ir::BinaryOp::Div:
    case ir::BinaryOp::Mod: return kMul;
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub: return kAdd;
    case ir::BinaryOp::Shl:
    case ir::BinaryOp::Shr: return kShift;
    case ir::BinaryOp::Lt:
    case ir::BinaryOp::Le:
    case ir::BinaryOp::Gt:
    case ir::BinaryOp::Ge: return kRel;
    case ir::BinaryOp::Eq:
    case ir::BinaryOp::Ne: return kEq;
    case ir::BinaryOp::BitAnd: return kBitAnd;
    case ir::BinaryOp::BitXor: return kBitXor;
    case ir::BinaryOp::BitOr: return kBitOr;
    case ir::BinaryOp::And: return kLogAnd;
    case ir::BinaryOp::Or: return kLogOr;
    default: return kPrimary;   // min/max are calls
    }
}

std::string shortest(double v, bool asFloat) {
    char buf[64];
    std::to_chars_result r = asFloat ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                                     : std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, r.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

} // namespace

std::string ExprPrinter::print(const ir::Expr &e) {
    int p;
    return print(e, p);
}

std::string ExprPrinter::operand(const ir::Expr &e, int maxPrecedence) {
    int p;
    std::string s = print(e, p);
    return p > maxPrecedence ? "(" + s + ")" : s;
}

std::string ExprPrinter::literal(const ir::Expr &e) {
    if (const ir::IntImm *i = ir::as<ir::IntImm>(e)) {
        int64_t v = i->value;
        switch (i->dtype) {
        case DType::Bool: return v ? "true" : "false";
        case DType::Int32: return v == INT32_MIN ? "(-2147483647 - 1)" : std::to_string(v);
        case DType::Int64: return v == INT64_MIN ? "(-9223372036854775807LL - 1)" : std::to_string(v) + "LL";
        case DType::UInt32: return std::to_string(v) + "u";
        case DType::UInt64: return std::to_string(static_cast<uint64_t>(v)) + "ull";
        default: return "static_cast<" + cType(i->dtype) + ">(" + std::to_string(v) + ")";
        }
    }
    const ir::FloatImm &f = static_cast<const ir::FloatImm &>(*e);
    bool isDouble = f.dtype == DType::F64;
    // A constant beyond float's range (1e39 as an f32) is written as the
    // float it becomes, +-infinity, not as digits nvcc would round itself.
    double value = f.value;
    if (!isDouble && std::isfinite(value) && std::isinf(static_cast<float>(value))) value = value < 0 ? -INFINITY : INFINITY;
    std::string text;
    if (std::isinf(value)) {
        needHeader("math_constants.h");
        text = std::string(value < 0 ? "-" : "") + (isDouble ? "CUDART_INF" : "CUDART_INF_F");
    } else if (std::isnan(value)) {
        needHeader("math_constants.h");
        text = isDouble ? "CUDART_NAN" : "CUDART_NAN_F";
    } else {
        text = shortest(value, !isDouble) + (isDouble ? "" : "f");
    }
    if (f.dtype == DType::F32 || f.dtype == DType::F64 || f.dtype == DType::TF32) return text;
    needHeader(cTypeHeader(f.dtype));
    return "static_cast<" + cValueType(f.dtype) + ">(" + text + ")";
}

std::string ExprPrinter::castTo(DType to, const ir::Expr &value) {
    needHeader(cValueTypeHeader(to));
    std::string v = print(value);   // static_cast<T>(...) brings its own parentheses
    DType from = value->dtype;
    // Narrow float types convert through float: their constructors from
    // integers and to integers are not all available on every toolkit.
    if ((isNarrowFloat(to) && !isFloat(from)) || (isNarrowFloat(from) && !isFloat(to)) || (isNarrowFloat(from) && isNarrowFloat(to)))
        v = "static_cast<float>(" + v + ")";
    return "static_cast<" + cValueType(to) + ">(" + v + ")";
}

std::string ExprPrinter::print(const ir::Expr &e, int &precedence) {
    precedence = kPrimary;
    switch (e->kind) {
    case ir::ExprKind::IntImm:
    case ir::ExprKind::FloatImm: {
        std::string s = literal(e);
        if (!s.empty() && s[0] == '-') precedence = kUnary;
        return s;
    }
    case ir::ExprKind::Var: return names_.var(static_cast<const ir::Var *>(e.get()));
    case ir::ExprKind::SpecialReg:
        switch (static_cast<const ir::SpecialReg &>(*e).special) {
        case ir::SpecialKind::ThreadIdx: return "static_cast<int>(threadIdx.x)";
        case ir::SpecialKind::BlockIdxX: return "static_cast<int>(blockIdx.x)";
        case ir::SpecialKind::BlockIdxY: return "static_cast<int>(blockIdx.y)";
        case ir::SpecialKind::BlockIdxZ: return "static_cast<int>(blockIdx.z)";
        case ir::SpecialKind::ClusterCtaRank:
            needHelper("cluster_ctarank");
            return "tilet_cluster_ctarank()";
        }
        break;
    case ir::ExprKind::Unary: {
        auto &u = static_cast<const ir::Unary &>(*e);
        precedence = kUnary;
        std::string inner = operand(u.a, kUnary);
        if (!inner.empty() && inner[0] == '-') inner = "(" + inner + ")";   // not "--x"
        return std::string(ir::unaryOpName(u.op)) + inner;
    }
    case ir::ExprKind::Binary: {
        auto &b = static_cast<const ir::Binary &>(*e);
        if (b.op == ir::BinaryOp::Min || b.op == ir::BinaryOp::Max) {
            bool isMin = b.op == ir::BinaryOp::Min;
            std::string fn = b.dtype == DType::F32 ? (isMin ? "fminf" : "fmaxf") : b.dtype == DType::F64 ? (isMin ? "fmin" : "fmax") : (isMin ? "min" : "max");
            return fn + "(" + print(b.a) + ", " + print(b.b) + ")";
        }
        int p = precedenceOf(b.op);
        precedence = p;
        // Operands of a bitwise operator that are arithmetic or shifts are
        // parenthesised although C does not need it: (a + b) ^ c reads as
        // meant, and compilers warn about the bare form.
        bool bitwise = b.op == ir::BinaryOp::BitAnd || b.op == ir::BinaryOp::BitXor || b.op == ir::BinaryOp::BitOr;
        int limit = bitwise ? kMul - 1 : p;
        // Left-associative: the right operand needs parentheses at equal precedence.
        return operand(b.a, std::min(limit, p)) + " " + ir::binaryOpName(b.op) + " " + operand(b.b, std::min(limit, p - 1));
    }
    case ir::ExprKind::Select: {
        auto &s = static_cast<const ir::Select &>(*e);
        precedence = kCond;
        return operand(s.cond, kLogOr) + " ? " + operand(s.thenValue, kCond - 1) + " : " + operand(s.elseValue, kCond);
    }
    case ir::ExprKind::Cast: {
        auto &c = static_cast<const ir::Cast &>(*e);
        return castTo(c.dtype, c.value);
    }
    case ir::ExprKind::MathCall: {
        auto &m = static_cast<const ir::MathCall &>(*e);
        bool f32 = m.dtype == DType::F32;
        auto arg = [&](size_t i) { return print(m.args[i]); };
        auto fn = [&](const char *base) { return std::string(base) + (f32 ? "f" : ""); };
        switch (m.func) {
        case ir::MathFunc::Abs:
            if (isFloat(m.dtype)) return fn("fabs") + "(" + arg(0) + ")";
            return std::string(m.dtype == DType::Int64 ? "llabs" : "abs") + "(" + arg(0) + ")";
        case ir::MathFunc::Exp: return fn("exp") + "(" + arg(0) + ")";
        case ir::MathFunc::Exp2: return fn("exp2") + "(" + arg(0) + ")";
        case ir::MathFunc::Log: return fn("log") + "(" + arg(0) + ")";
        case ir::MathFunc::Log2: return fn("log2") + "(" + arg(0) + ")";
        case ir::MathFunc::Sqrt: return fn("sqrt") + "(" + arg(0) + ")";
        case ir::MathFunc::Rsqrt: return fn("rsqrt") + "(" + arg(0) + ")";
        case ir::MathFunc::Tanh: return fn("tanh") + "(" + arg(0) + ")";
        case ir::MathFunc::Erf: return fn("erf") + "(" + arg(0) + ")";
        case ir::MathFunc::Sin: return fn("sin") + "(" + arg(0) + ")";
        case ir::MathFunc::Cos: return fn("cos") + "(" + arg(0) + ")";
        case ir::MathFunc::Floor: return fn("floor") + "(" + arg(0) + ")";
        case ir::MathFunc::Ceil: return fn("ceil") + "(" + arg(0) + ")";
        case ir::MathFunc::Pow: return fn("pow") + "(" + arg(0) + ", " + arg(1) + ")";
        case ir::MathFunc::FastExp: return "__expf(" + arg(0) + ")";
        case ir::MathFunc::FastExp2: needHelper("ex2_approx_ftz"); return "tilet_ex2_approx_ftz(" + arg(0) + ")";
        case ir::MathFunc::BitCast:
            // From named: C promotes a narrow integer expression (hb ^ 0x8000) to int.
            needHelper("bitcast");
            return "tilet_bitcast<" + cValueType(m.dtype) + ", " + cValueType(m.args[0]->dtype) + ">(" + arg(0) + ")";
        case ir::MathFunc::Sigmoid: {
            precedence = kMul;
            std::string inner = operand(m.args[0], kUnary);
            if (!inner.empty() && inner[0] == '-') inner = "(" + inner + ")";   // not "exp(--x)"
            return std::string(f32 ? "1.0f / (1.0f + expf(-" : "1.0 / (1.0 + exp(-") + inner + "))";
        }
        }
        break;
    }
    case ir::ExprKind::Load: {
        auto &l = static_cast<const ir::Load &>(*e);
        const std::string &name = names_.buffer(l.buffer.get());
        if (l.indices.empty()) return name;
        TILET_ASSERT(l.indices.size() == 1, "multi-dimensional access of '" << l.buffer->name << "' reached the printer");
        return name + "[" + print(l.indices[0]) + "]";
    }
    case ir::ExprKind::ClcQuery: {
        // tilet_clc_is_canceled(&answer[i]), tilet_clc_first_ctaid(&answer[i], dim): the
        // helper reads the 16-byte answer at the address.
        auto &q = static_cast<const ir::ClcQuery &>(*e);
        if (q.field == ir::ClcField::IsCanceled) {
            needHelper("clc_is_canceled");
            return "tilet_clc_is_canceled(&" + print(q.response) + ")";
        }
        needHelper("clc_first_ctaid");
        int dim = q.field == ir::ClcField::FirstCtaidX ? 0 : q.field == ir::ClcField::FirstCtaidY ? 1 : 2;
        return "tilet_clc_first_ctaid(&" + print(q.response) + ", " + std::to_string(dim) + ")";
    }
    case ir::ExprKind::Dp4a: {
        // tilet_dp4a_s8_u8(&a[i], &b[j], c): the helper reads the four bytes at each address.
        auto &d = static_cast<const ir::Dp4a &>(*e);
        auto sign = [](const ir::Expr &x) { return x->dtype == DType::UInt8 ? std::string("u8") : std::string("s8"); };
        std::string key = "dp4a_" + sign(d.a) + "_" + sign(d.b);
        needHelper(key);
        return "tilet_" + key + "(&" + print(d.a) + ", &" + print(d.b) + ", " + print(d.c) + ")";
    }
    case ir::ExprKind::Shuffle: {
        auto &s = static_cast<const ir::Shuffle &>(*e);
        static const char *const names[] = {"__shfl_xor_sync", "__shfl_sync", "__shfl_down_sync", "__shfl_up_sync"};   // ShuffleMode order
        return std::string(names[static_cast<int>(s.mode)]) + "(0xffffffffu, " + print(s.value) + ", " + print(s.operand) +
               (s.width == 32 ? std::string() : ", " + std::to_string(s.width)) + ")";
    }
    }
    TILET_INTERNAL_ERROR("unprintable expression " << ir::exprKindName(e->kind));
}

} // namespace tilet
