// SemaExpr.cpp -- checking expressions: names, element reads, operators,
// conversions and expression builtins, with checked constant folding.
#include "sema/SemaImpl.h"

#include "frontend/TileLangSpellings.h"

#include "support/Checked.h"
#include "support/InternalError.h"

#include <algorithm>
#include <utility>
#include <cmath>
#include <limits>

namespace tilet::sema {

namespace {

DType defaultType(const ConstValue &c) {
    switch (c.kind) {
    case ConstValue::Kind::Int: return fitsInType(c.i, DType::Int32) ? DType::Int32 : DType::Int64;
    case ConstValue::Kind::Float: return DType::F32;
    case ConstValue::Kind::Bool: return DType::Bool;
    }
    return DType::Int32;
}

ir::Expr constExpr(const ConstValue &c, DType t) {
    if (t == DType::Bool) return ir::boolImm(c.kind == ConstValue::Kind::Bool ? c.b : c.asDouble() != 0);
    if (isFloat(t)) return ir::floatImm(c.asDouble(), t);
    return ir::intImm(c.kind == ConstValue::Kind::Bool ? c.b : c.i, t);
}

// The type an untyped constant takes next to a value of type `other`.
DType adoptType(const ConstValue &c, DType other) {
    if (c.kind == ConstValue::Kind::Bool) return DType::Bool;
    if (c.kind == ConstValue::Kind::Float) return isFloat(other) ? other : DType::F32;
    if (isFloat(other)) return other;
    if (other == DType::Bool) return defaultType(c);
    return fitsInType(c.i, other) ? other : DType::Int64;
}

std::string typeName(DType t) { return std::string(dtypeName(t)); }

ConstOp constOpFor(ast::BinaryOp op) {
    switch (op) {
    case ast::BinaryOp::Mul: return ConstOp::Mul;
    case ast::BinaryOp::Div: return ConstOp::Div;
    case ast::BinaryOp::Mod: return ConstOp::Mod;
    case ast::BinaryOp::Add: return ConstOp::Add;
    case ast::BinaryOp::Sub: return ConstOp::Sub;
    case ast::BinaryOp::Shl: return ConstOp::Shl;
    case ast::BinaryOp::Shr: return ConstOp::Shr;
    case ast::BinaryOp::Lt: return ConstOp::Lt;
    case ast::BinaryOp::Le: return ConstOp::Le;
    case ast::BinaryOp::Gt: return ConstOp::Gt;
    case ast::BinaryOp::Ge: return ConstOp::Ge;
    case ast::BinaryOp::Eq: return ConstOp::Eq;
    case ast::BinaryOp::Ne: return ConstOp::Ne;
    case ast::BinaryOp::BitAnd: return ConstOp::BitAnd;
    case ast::BinaryOp::BitXor: return ConstOp::BitXor;
    case ast::BinaryOp::BitOr: return ConstOp::BitOr;
    case ast::BinaryOp::And: return ConstOp::And;
    case ast::BinaryOp::Or: return ConstOp::Or;
    }
    return ConstOp::Add;
}

ir::BinaryOp irOpFor(ast::BinaryOp op) {
    switch (op) {
    case ast::BinaryOp::Mul: return ir::BinaryOp::Mul;
    case ast::BinaryOp::Div: return ir::BinaryOp::Div;
    case ast::BinaryOp::Mod: return ir::BinaryOp::Mod;
    case ast::BinaryOp::Add: return ir::BinaryOp::Add;
    case ast::BinaryOp::Sub: return ir::BinaryOp::Sub;
    case ast::BinaryOp::Shl: return ir::BinaryOp::Shl;
    case ast::BinaryOp::Shr: return ir::BinaryOp::Shr;
    case ast::BinaryOp::Lt: return ir::BinaryOp::Lt;
    case ast::BinaryOp::Le: return ir::BinaryOp::Le;
    case ast::BinaryOp::Gt: return ir::BinaryOp::Gt;
    case ast::BinaryOp::Ge: return ir::BinaryOp::Ge;
    case ast::BinaryOp::Eq: return ir::BinaryOp::Eq;
    case ast::BinaryOp::Ne: return ir::BinaryOp::Ne;
    case ast::BinaryOp::BitAnd: return ir::BinaryOp::BitAnd;
    case ast::BinaryOp::BitXor: return ir::BinaryOp::BitXor;
    case ast::BinaryOp::BitOr: return ir::BinaryOp::BitOr;
    case ast::BinaryOp::And: return ir::BinaryOp::And;
    case ast::BinaryOp::Or: return ir::BinaryOp::Or;
    }
    return ir::BinaryOp::Add;
}

enum class OpClass { Arithmetic, Remainder, Bitwise, Comparison, Equality, Logical };

OpClass classify(ast::BinaryOp op) {
    switch (op) {
    case ast::BinaryOp::Mul:
    case ast::BinaryOp::Div:
    case ast::BinaryOp::Add:
    case ast::BinaryOp::Sub: return OpClass::Arithmetic;
    case ast::BinaryOp::Mod: return OpClass::Remainder;
    case ast::BinaryOp::Shl:
    case ast::BinaryOp::Shr:
    case ast::BinaryOp::BitAnd:
    case ast::BinaryOp::BitXor:
    case ast::BinaryOp::BitOr: return OpClass::Bitwise;
    case ast::BinaryOp::Lt:
    case ast::BinaryOp::Le:
    case ast::BinaryOp::Gt:
    case ast::BinaryOp::Ge: return OpClass::Comparison;
    case ast::BinaryOp::Eq:
    case ast::BinaryOp::Ne: return OpClass::Equality;
    case ast::BinaryOp::And:
    case ast::BinaryOp::Or: return OpClass::Logical;
    }
    return OpClass::Arithmetic;
}

bool isNumeric(DType t) { return t != DType::Bool; }

struct MathBuiltin {
    const char *name;
    ir::MathFunc func;
    size_t arity;
    double (*fold)(double);
};

double sigmoidD(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double rsqrtD(double x) { return 1.0 / std::sqrt(x); }
// ex2.approx.ftz.f32: an f32 result below the smallest normal is zero.
double fastExp2D(double x) {
    double r = std::exp2(x);
    return r < std::numeric_limits<float>::min() ? 0.0 : r;
}

const MathBuiltin kMath[] = {
    {"exp", ir::MathFunc::Exp, 1, [](double x) { return std::exp(x); }},
    {"exp2", ir::MathFunc::Exp2, 1, [](double x) { return std::exp2(x); }},
    {"log", ir::MathFunc::Log, 1, [](double x) { return std::log(x); }},
    {"log2", ir::MathFunc::Log2, 1, [](double x) { return std::log2(x); }},
    {"sqrt", ir::MathFunc::Sqrt, 1, [](double x) { return std::sqrt(x); }},
    {"rsqrt", ir::MathFunc::Rsqrt, 1, rsqrtD},
    {"tanh", ir::MathFunc::Tanh, 1, [](double x) { return std::tanh(x); }},
    {"erf", ir::MathFunc::Erf, 1, [](double x) { return std::erf(x); }},
    {"sin", ir::MathFunc::Sin, 1, [](double x) { return std::sin(x); }},
    {"cos", ir::MathFunc::Cos, 1, [](double x) { return std::cos(x); }},
    {"floor", ir::MathFunc::Floor, 1, [](double x) { return std::floor(x); }},
    {"ceil", ir::MathFunc::Ceil, 1, [](double x) { return std::ceil(x); }},
    {"sigmoid", ir::MathFunc::Sigmoid, 1, sigmoidD},
    {"pow", ir::MathFunc::Pow, 2, nullptr},
    {"__exp", ir::MathFunc::FastExp, 1, [](double x) { return std::exp(x); }},
    {"__exp2", ir::MathFunc::FastExp2, 1, fastExp2D},
};

bool isStatementBuiltin(const std::string &name) {
    static const char *names[] = {"copy", "tma_copy", "async_copy", "copy_cluster", "gemm", "gemm_blockscaled", "clear",
                                  "fill", "reduce_sum", "reduce_max", "reduce_min", "reduce_abssum", "reduce_absmax",
                                  "atomic_add", "atomic_addx2", "atomic_addx4", "atomic_store", "barrier_wait", "barrier_arrive", "cluster_sync", "set_max_nreg", "disable_warp_group_reg_alloc",
                                  "pdl_trigger", "pdl_sync", "thread_allreduce", "cumsum", "finalize_reducer", "im2col", "annotate_layout", "dp4a",
                                  "import_source", "call_extern", "cp_async_commit", "cp_async_wait", "wait_wgmma", "tcgen05_mma_arrive",
                                  "tcgen05_cp_warpx4", "tcgen05_sf_warp_transpose", "fence_proxy_async", "sync_threads",
                                  "barrier_arrive_expect_tx", "clc_try_cancel", "clc_try_cancel_multicast", "rng_init"};
    for (const char *n : names) {
        if (name == n) return true;
    }
    return false;
}

} // namespace

// An untyped constant that takes a narrow float type, or a typed constant
// of one, must fit it: past its largest finite value it would be infinity
// (f16) or saturate (fp8), as TVM's constant checks refuse. (An explicit
// cast converts whatever it is given.)
bool Checker::fitsNarrowFloat(const Value &v, DType t, SourceRange where) {
    std::optional<double> largest = largestFinite(t);
    if (!v.constant || !largest || !std::isfinite(v.constant->asDouble())) return true;
    const double d = v.constant->asDouble();
    if (std::fabs(halfPrecisionValue(d, t).value_or(d)) <= *largest) return true;
    diags_.error(where, "constant " + v.constant->str() + " does not fit in " + typeName(t) + " (largest finite " + ConstValue::ofFloat(*largest).str() + ")");
    return false;
}

Value Checker::materialize(const Value &v) {
    if (!v.untyped || !v.constant) return v;
    Value out = v;
    out.expr = constExpr(*v.constant, defaultType(*v.constant));
    out.untyped = false;
    return out;
}

std::optional<ir::Expr> Checker::convert(const Value &v, DType t, SourceRange where) {
    if (v.zeroByIntDivision && isFloat(t)) {
        diags_.warning(*v.zeroByIntDivision, "integer division truncates to 0 here, which becomes " + typeName(t) +
                                                 " 0.0; write a float operand (1.0 / N) for a fraction", "int-division");
    }
    if (v.untyped && v.constant) {
        const ConstValue &c = *v.constant;
        if (t == DType::Bool) {
            if (c.kind != ConstValue::Kind::Bool) {
                diags_.error(where, "cannot convert " + c.str() + " to bool; compare it with 0");
                return std::nullopt;
            }
            return ir::boolImm(c.b);
        }
        if (c.kind == ConstValue::Kind::Float && !isFloat(t)) {
            diags_.error(where, "floating-point constant " + c.str() + " where " + typeName(t) + " is expected");
            return std::nullopt;
        }
        if (c.kind == ConstValue::Kind::Int && !isFloat(t) && !fitsInType(c.i, t)) {
            diags_.error(where, "constant " + c.str() + " does not fit in " + typeName(t));
            return std::nullopt;
        }
        return constExpr(c, t);
    }
    if (v.type() == t) return v.expr;
    if (t == DType::Bool) {
        diags_.error(where, "cannot convert " + typeName(v.type()) + " to bool implicitly; compare it with 0");
        return std::nullopt;
    }
    return ir::cast(t, v.expr);
}

// ------------------------------------------------------------------ entry points

std::optional<Value> Checker::checkValue(const ast::Expr &e) {
    Value v;
    v.range = e.range;
    switch (e.kind) {
    case ast::ExprKind::IntLit: {
        auto &lit = static_cast<const ast::IntLit &>(e);
        if (lit.overflowed || lit.value > static_cast<uint64_t>(INT64_MAX)) {
            diags_.error(e.range, "integer literal is too large for 64 bits");
            return std::nullopt;
        }
        v.constant = ConstValue::ofInt(static_cast<int64_t>(lit.value));
        v.untyped = true;
        v.expr = constExpr(*v.constant, defaultType(*v.constant));
        return v;
    }
    case ast::ExprKind::FloatLit:
        v.constant = ConstValue::ofFloat(static_cast<const ast::FloatLit &>(e).value);
        v.untyped = true;
        v.expr = ir::floatImm(v.constant->f);
        return v;
    case ast::ExprKind::InfLit:
        v.constant = ConstValue::ofFloat(INFINITY);
        v.untyped = true;
        v.expr = ir::floatImm(INFINITY);
        return v;
    case ast::ExprKind::BoolLit:
        v.constant = ConstValue::ofBool(static_cast<const ast::BoolLit &>(e).value);
        v.expr = ir::boolImm(v.constant->b);
        return v;
    case ast::ExprKind::StringLit:
        diags_.error(e.range, "a string is not a value; strings only name imported files");
        return std::nullopt;
    case ast::ExprKind::DTypeRef:
        diags_.error(e.range, "'" + typeName(static_cast<const ast::DTypeRef &>(e).dtype) + "' is a dtype, not a value");
        return std::nullopt;
    case ast::ExprKind::List:
        diags_.error(e.range, "a list is not a value here");
        return std::nullopt;
    case ast::ExprKind::Name: return checkName(static_cast<const ast::Name &>(e));
    case ast::ExprKind::Index: return checkIndexLoad(static_cast<const ast::Index &>(e));
    case ast::ExprKind::Unary: return checkUnary(static_cast<const ast::Unary &>(e));
    case ast::ExprKind::Binary: return checkBinary(static_cast<const ast::Binary &>(e));
    case ast::ExprKind::Cond: return checkCond(static_cast<const ast::Cond &>(e));
    case ast::ExprKind::Call: return checkExprCall(static_cast<const ast::Call &>(e));
    }
    TILET_INTERNAL_ERROR("unhandled expression kind");
}

std::optional<ir::Expr> Checker::checkInteger(const ast::Expr &e, const char *what) {
    std::optional<Value> v = checkValue(e);
    if (!v) return std::nullopt;
    if (!isInteger(v->type())) {
        diags_.error(e.range, std::string(what) + " must be an integer, found " + typeName(v->type()));
        return std::nullopt;
    }
    return materialize(*v).expr;
}

std::optional<ir::Expr> Checker::checkCondition(const ast::Expr &e, const char *what) {
    std::optional<Value> v = checkValue(e);
    if (!v) return std::nullopt;
    if (v->type() != DType::Bool) {
        diags_.error(e.range, std::string(what) + " must be bool, found " + typeName(v->type()));
        return std::nullopt;
    }
    return v->expr;
}

std::optional<int64_t> Checker::checkConstInt(const ast::Expr &e, const char *what) {
    std::optional<Value> v = checkValue(e);
    if (!v) return std::nullopt;
    if (!v->constant || v->constant->kind != ConstValue::Kind::Int) {
        diags_.error(e.range, std::string(what) + " must be a compile-time constant integer");
        return std::nullopt;
    }
    return v->constant->i;
}

std::optional<bool> Checker::checkConstBool(const ast::Expr &e, const char *what) {
    std::optional<Value> v = checkValue(e);
    if (!v) return std::nullopt;
    if (!v->constant || v->constant->kind != ConstValue::Kind::Bool) {
        diags_.error(e.range, std::string(what) + " must be true or false");
        return std::nullopt;
    }
    return v->constant->b;
}

std::optional<DType> Checker::checkDType(const ast::Expr &e) {
    if (e.kind == ast::ExprKind::DTypeRef) return static_cast<const ast::DTypeRef &>(e).dtype;
    if (e.kind == ast::ExprKind::Name) return typeAnnotation(std::nullopt, static_cast<const ast::Name &>(e).name, e.range);
    diags_.error(e.range, "expected a dtype such as f32 or bf16");
    return std::nullopt;
}

std::optional<DType> Checker::typeAnnotation(std::optional<DType> keyword, const std::string &name, SourceRange range) {
    if (name.empty()) return keyword;
    const Symbol *sym = lookup(name);
    if (sym && sym->kind == SymbolKind::DTypeConst) return sym->dtype;
    if (sym && sym->invalid) return std::nullopt;   // its declaration was reported
    Diagnostic d{Severity::Error, range, "expected a dtype, found '" + name + "'", {}, {}};
    if (std::optional<std::string> dtype = tiletDtypeOf(name))
        d.note({}, "'" + name + "' is TileLang's name of the dtype tilet calls '" + *dtype + "'");
    else if (sym)
        d.note(sym->def, "'" + name + "' is a " + (sym->fromLet ? "let binding" : symbolKindName(sym->kind)) + ", declared here");
    else
        d.note({}, "'" + name + "' is not declared: a dtype is a keyword such as f16, bf16, f32 or int8, or a dtype constant (const " + name + " = f16;)");
    diags_.report(std::move(d));
    return std::nullopt;
}

bool Checker::namesDType(const ast::Expr &e) {
    if (e.kind == ast::ExprKind::DTypeRef) return true;
    if (e.kind != ast::ExprKind::Name) return false;
    const Symbol *sym = lookup(static_cast<const ast::Name &>(e).name);
    return sym && sym->kind == SymbolKind::DTypeConst;
}

std::optional<std::string> Checker::checkWord(const ast::Expr &e, const std::vector<std::string> &allowed, const char *what) {
    if (e.kind == ast::ExprKind::Name) {
        const std::string &n = static_cast<const ast::Name &>(e).name;
        for (const std::string &a : allowed) {
            if (a == n) return n;
        }
    }
    std::string list;
    for (size_t i = 0; i < allowed.size(); ++i) list += (i ? (i + 1 == allowed.size() ? " or " : ", ") : "") + allowed[i];
    diags_.error(e.range, std::string("invalid ") + what + ": expected " + list);
    return std::nullopt;
}

// ------------------------------------------------------------------ names and loads

std::optional<Value> Checker::checkName(const ast::Name &n) {
    const Symbol *sym = lookup(n.name);
    if (!sym) {
        reportUnknown(n.name, n.range, "identifier");
        return std::nullopt;
    }
    Value v;
    v.range = n.range;
    if (sym->invalid) return std::nullopt;   // its declaration was reported
    switch (sym->kind) {
    case SymbolKind::Const:
        v = sym->constValue;
        v.range = n.range;
        return v;
    case SymbolKind::DTypeConst:
        diags_.error(n.range, "'" + n.name + "' is a dtype (" + std::string(dtypeName(sym->dtype)) + "), not a value");
        return std::nullopt;
    case SymbolKind::Scalar:
    case SymbolKind::DynDim:
    case SymbolKind::BlockIndex:
    case SymbolKind::ThreadIndex:
    case SymbolKind::LoopVar:
    case SymbolKind::Let:
        v.expr = sym->var;
        return v;
    case SymbolKind::Mutable:
        v.expr = std::make_shared<ir::Load>(sym->buffer, std::vector<ir::Expr>{}, n.range);
        return v;
    case SymbolKind::Tensor:
    case SymbolKind::Buffer: {
        const ir::BufferNode &b = *sym->buffer;
        diags_.error(n.range, "'" + n.name + "' is a " + ir::memScopeName(b.scope) + " buffer; index it to read an element");
        return std::nullopt;
    }
    }
    return std::nullopt;
}

std::optional<Value> Checker::checkIndexLoad(const ast::Index &ix) {
    if (ix.base->kind != ast::ExprKind::Name) {
        diags_.error(ix.base->range, "only buffers can be indexed");
        return std::nullopt;
    }
    const std::string &name = static_cast<const ast::Name &>(*ix.base).name;
    const Symbol *sym = lookup(name);
    if (!sym) {
        reportUnknown(name, ix.base->range, "identifier");
        return std::nullopt;
    }
    if (sym->invalid) return std::nullopt;
    if (sym->kind != SymbolKind::Tensor && sym->kind != SymbolKind::Buffer) {
        diags_.error(ix.base->range, "'" + name + "' is a " + symbolKindName(sym->kind) + ", not a buffer; it cannot be indexed");
        return std::nullopt;
    }
    ir::Buffer buffer = sym->buffer;
    if (buffer->scope == ir::MemScope::Barrier) {
        diags_.error(ix.range, "'" + name + "' is a barrier; use barrier_wait or barrier_arrive");
        return std::nullopt;
    }
    if (buffer->scope == ir::MemScope::TMem) {
        diags_.error(ix.range, "tensor memory '" + name + "' cannot be read element by element; copy it to a fragment first");
        return std::nullopt;
    }
    if (!elementsOneByOne(*buffer)) {
        diags_.error(ix.range, "elements of packed " + std::string(dtypeName(buffer->dtype)) + " buffer '" + name +
                                   "' cannot be read one by one; copy and gemm move packed data, and a Tensor view reads its bytes" +
                                   (inRegistersOneByOne(buffer->dtype) ? " (a fragment's elements can be read)" : ""));
        return std::nullopt;
    }
    if (static_cast<int>(ix.items.size()) != buffer->rank()) {
        diags_.error(ix.range, "'" + name + "' has " + std::to_string(buffer->rank()) + " dimension" +
                                   (buffer->rank() == 1 ? "" : "s") + " but is indexed with " + std::to_string(ix.items.size()));
        return std::nullopt;
    }
    std::vector<ir::Expr> indices;
    std::vector<SourceRange> ranges;
    bool ok = true;
    for (const ast::IndexItem &item : ix.items) {
        if (item.isSlice()) {
            diags_.error(item.range, "a slice is not a value; slices only appear in tile operation arguments");
            ok = false;
            continue;
        }
        std::optional<ir::Expr> i = checkInteger(*item.begin, "index");
        if (!i) { ok = false; continue; }
        indices.push_back(*i);
        ranges.push_back(item.begin->range);
    }
    if (!ok || !checkConstIndices(*buffer, indices, ranges)) return std::nullopt;
    Value v;
    v.range = ix.range;
    v.expr = std::make_shared<ir::Load>(buffer, std::move(indices), ix.range);
    return v;
}

bool Checker::checkConstIndices(const ir::BufferNode &buffer, const std::vector<ir::Expr> &indices, const std::vector<SourceRange> &ranges) {
    bool ok = true;
    for (size_t d = 0; d < indices.size() && d < buffer.shape.size(); ++d) {
        std::optional<int64_t> i = ir::constInt(indices[d]), n = ir::constInt(buffer.shape[d]);
        if (i && n && (*i < 0 || *i >= *n)) {
            diags_.error(ranges[d], "index " + std::to_string(*i) + " is out of bounds for dimension " + std::to_string(d) + " of '" +
                                        buffer.name + "' (size " + std::to_string(*n) + ")");
            ok = false;
        }
    }
    return ok;
}

// ------------------------------------------------------------------ operators

std::optional<Value> Checker::checkUnary(const ast::Unary &u) {
    std::optional<Value> a = checkValue(*u.operand);
    if (!a) return std::nullopt;
    Value v;
    v.range = u.range;
    switch (u.op) {
    case ast::UnaryOp::Neg:
        if (!isNumeric(a->type())) {
            diags_.error(u.range, "invalid operand of type bool to unary '-'");
            return std::nullopt;
        }
        if (a->constant) {
            ConstResult r = foldConst(ConstOp::Sub, a->constant->kind == ConstValue::Kind::Float ? ConstValue::ofFloat(0) : ConstValue::ofInt(0), *a->constant);
            if (!r.value) {
                diags_.error(u.range, r.error);
                return std::nullopt;
            }
            if (!a->untyped && r.value->kind == ConstValue::Kind::Int && !fitsInType(r.value->i, a->type())) {
                diags_.error(u.range, "integer overflow in constant expression of type " + typeName(a->type()));
                return std::nullopt;
            }
            v.constant = r.value;
            v.untyped = a->untyped;
            v.expr = constExpr(*r.value, a->untyped ? defaultType(*r.value) : a->type());
            return v;
        }
        {
            DType t = isNarrowFloat(a->type()) ? DType::F32 : arithmeticType(a->type(), a->type());
            v.expr = std::make_shared<ir::Unary>(t, ir::UnaryOp::Neg, ir::cast(t, a->expr), u.range);
        }
        return v;
    case ast::UnaryOp::Not:
        if (a->type() != DType::Bool) {
            diags_.error(u.range, "operand of '!' must be bool, found " + typeName(a->type()));
            return std::nullopt;
        }
        if (a->constant) {
            v.constant = ConstValue::ofBool(!a->constant->b);
            v.expr = ir::boolImm(v.constant->b);
            return v;
        }
        v.expr = std::make_shared<ir::Unary>(DType::Bool, ir::UnaryOp::Not, a->expr, u.range);
        return v;
    case ast::UnaryOp::BitNot:
        if (!isInteger(a->type())) {
            diags_.error(u.range, "operand of '~' must be an integer, found " + typeName(a->type()));
            return std::nullopt;
        }
        if (a->constant) {
            v.constant = ConstValue::ofInt(~a->constant->i);
            v.untyped = a->untyped;
            v.expr = constExpr(*v.constant, a->untyped ? defaultType(*v.constant) : a->type());
            return v;
        }
        v.expr = std::make_shared<ir::Unary>(arithmeticType(a->type(), a->type()), ir::UnaryOp::BitNot, a->expr, u.range);
        return v;
    }
    return std::nullopt;
}

std::optional<Value> Checker::checkBinary(const ast::Binary &b) {
    std::optional<Value> a = checkValue(*b.lhs);
    const bool shortCircuit = b.op == ast::BinaryOp::And || b.op == ast::BinaryOp::Or;
    const DrawBan outer = shortCircuit ? std::exchange(drawsNotHere_, {"the right operand of '&&' or '||' (evaluated only when needed)"}) : drawsNotHere_;
    std::optional<Value> c = checkValue(*b.rhs);
    drawsNotHere_ = outer;
    if (!a || !c) return std::nullopt;
    return binaryValues(b.op, *a, *c, b.opRange, b.range);
}

std::optional<Value> Checker::binaryValues(ast::BinaryOp op, Value a, Value b, SourceRange opRange, SourceRange whole) {
    const char *spelling = ast::binaryOpSpelling(op);
    OpClass cls = classify(op);
    auto operandError = [&](const Value &bad, const char *need) -> std::optional<Value> {
        diags_.error(bad.range, std::string("invalid operand of type ") + typeName(bad.type()) + " to '" + spelling +
                                    "' (" + need + ")");
        return std::nullopt;
    };
    switch (cls) {
    case OpClass::Arithmetic:
    case OpClass::Comparison:
        if (!isNumeric(a.type())) return operandError(a, "expected a number");
        if (!isNumeric(b.type())) return operandError(b, "expected a number");
        break;
    case OpClass::Remainder:
    case OpClass::Bitwise:
        if (!isInteger(a.type()) && !(a.untyped && a.constant && a.constant->kind == ConstValue::Kind::Int))
            return operandError(a, "expected an integer");
        if (!isInteger(b.type()) && !(b.untyped && b.constant && b.constant->kind == ConstValue::Kind::Int))
            return operandError(b, "expected an integer");
        break;
    case OpClass::Equality:
        if ((a.type() == DType::Bool) != (b.type() == DType::Bool)) return operandError(b, "both sides must be bool or both numbers");
        break;
    case OpClass::Logical:
        if (a.type() != DType::Bool) return operandError(a, "expected bool");
        if (b.type() != DType::Bool) return operandError(b, "expected bool");
        break;
    }

    // Operand types: an untyped constant takes the other side's type.
    DType ta = a.type(), tb = b.type();
    if (a.untyped && a.constant && !b.untyped) ta = adoptType(*a.constant, b.type());
    if (b.untyped && b.constant && !a.untyped) tb = adoptType(*b.constant, a.type());
    DType opType = (cls == OpClass::Logical) ? DType::Bool
                 : (ta == DType::Bool && tb == DType::Bool) ? DType::Bool
                 : (op == ast::BinaryOp::Shl || op == ast::BinaryOp::Shr) ? arithmeticType(ta, ta)
                                                                          : arithmeticType(ta, tb);
    DType resultType = (cls == OpClass::Comparison || cls == OpClass::Equality || cls == OpClass::Logical) ? DType::Bool : opType;

    Value out;
    out.range = whole;
    if (a.constant && b.constant) {
        // An untyped constant next to a typed f16/bf16 one is that type's value too.
        auto adopted = [&](const Value &v, DType t) -> std::optional<ConstValue> {
            if (!v.untyped || a.untyped == b.untyped) return *v.constant;
            if (!isNarrowFloat(t)) return *v.constant;
            if (!fitsNarrowFloat(v, t, v.range)) return std::nullopt;
            std::optional<double> rounded = halfPrecisionValue(v.constant->asDouble(), t);
            return rounded ? ConstValue::ofFloat(*rounded) : *v.constant;
        };
        std::optional<ConstValue> ca = adopted(a, ta), cb = adopted(b, tb);
        if (!ca || !cb) return std::nullopt;
        ConstResult r = foldConst(constOpFor(op), *ca, *cb);
        if (!r.value) {
            diags_.error(opRange, r.error);
            return std::nullopt;
        }
        out.constant = r.value;
        out.untyped = a.untyped && b.untyped;
        if (op == ast::BinaryOp::Div && a.constant->kind == ConstValue::Kind::Int && b.constant->kind == ConstValue::Kind::Int &&
            a.constant->i != 0 && r.value->kind == ConstValue::Kind::Int && r.value->i == 0)
            out.zeroByIntDivision = whole;
        if (out.untyped) {
            out.expr = constExpr(*r.value, defaultType(*r.value));
        } else {
            if (r.value->kind == ConstValue::Kind::Int && !fitsInType(r.value->i, resultType)) {
                diags_.error(opRange, "integer overflow in constant expression of type " + typeName(resultType));
                return std::nullopt;
            }
            out.expr = constExpr(*r.value, resultType);
        }
        return out;
    }
    if ((op == ast::BinaryOp::Div || op == ast::BinaryOp::Mod) && b.constant && !isFloat(opType) &&
        b.constant->asDouble() == 0) {
        diags_.error(opRange, "division by zero");
        return std::nullopt;
    }
    bool shift = op == ast::BinaryOp::Shl || op == ast::BinaryOp::Shr;
    // An untyped constant next to a narrow float is a constant of that type
    // (TVM makes `x * 0.088` with x: bf16 a bf16 constant), then computed in
    // f32 with the other side: its value is rounded to the narrow type first.
    auto operand = [&](const Value &v, DType adopted, DType to) -> std::optional<ir::Expr> {
        if (v.untyped && v.constant && isNarrowFloat(adopted) && adopted != to) {
            if (!fitsNarrowFloat(v, adopted, v.range)) return std::nullopt;
            std::optional<ir::Expr> narrow = convert(v, adopted, v.range);
            if (!narrow) return std::nullopt;
            // (f16 and bf16 values are worked out here, so that the code shows the number.)
            if (std::optional<double> rounded = halfPrecisionValue(v.constant->asDouble(), adopted); rounded && isFloat(to))
                return ir::floatImm(*rounded, to);
            return ir::cast(to, *narrow);
        }
        return convert(v, to, v.range);
    };
    std::optional<ir::Expr> x = operand(a, ta, opType);
    std::optional<ir::Expr> y = operand(b, tb, shift ? arithmeticType(tb, tb) : opType);
    if (!x || !y) return std::nullopt;
    out.expr = ir::binary(irOpFor(op), *x, *y, whole);
    TILET_ASSERT(out.expr->dtype == resultType || cls == OpClass::Bitwise, "binary result type mismatch");
    return out;
}

std::optional<Value> Checker::checkCond(const ast::Cond &c) {
    std::optional<ir::Expr> cond = checkCondition(*c.cond, "condition of '?:'");
    const DrawBan outer = std::exchange(drawsNotHere_, {"a branch of '?:' (evaluated only when chosen)"});
    std::optional<Value> t = checkValue(*c.thenValue);
    std::optional<Value> f = checkValue(*c.elseValue);
    drawsNotHere_ = outer;
    if (!cond || !t || !f) return std::nullopt;
    return selectValues(*cond, *t, *f, c.range);
}

// cond ? t : f of checked operands: the chosen one when cond is constant.
std::optional<Value> Checker::selectValues(const ir::Expr &cond, const Value &t0, const Value &f0, SourceRange range) {
    const Value *t = &t0, *f = &f0;
    DType type;
    if (t->type() == DType::Bool && f->type() == DType::Bool) type = DType::Bool;
    else if (t->type() == DType::Bool || f->type() == DType::Bool) {
        diags_.error(range, "the branches of '?:' must both be bool or both be numbers");
        return std::nullopt;
    } else {
        DType tt = t->untyped && t->constant && !f->untyped ? adoptType(*t->constant, f->type()) : t->type();
        DType ft = f->untyped && f->constant && !t->untyped ? adoptType(*f->constant, t->type()) : f->type();
        type = (tt == ft) ? tt : arithmeticType(tt, ft);
    }
    if (std::optional<int64_t> k = ir::constInt(cond)) {
        Value chosen = *k ? *t : *f;
        chosen.range = range;
        return chosen;
    }
    std::optional<ir::Expr> x = convert(*t, type, t->range), y = convert(*f, type, f->range);
    if (!x || !y) return std::nullopt;
    Value v;
    v.range = range;
    v.expr = std::make_shared<ir::Select>(type, cond, *x, *y, range);
    return v;
}

// floordiv(a, b) / floormod(a, b): integer division rounding towards
// negative infinity and its remainder, with the divisor's sign -- Python's
// `//` and `%`, which TileLang keeps (TIR's floordiv/floormod). From C's
// truncating quotient q and remainder r: when r is nonzero and its sign
// differs from b's, floordiv is q - 1 and floormod r + b.
std::optional<Value> Checker::floorDivMod(const std::string &name, const Value &a, const Value &b, SourceRange range) {
    for (const Value *x : {&a, &b}) {
        if (!isInteger(x->type()) && !(x->untyped && x->constant && x->constant->kind == ConstValue::Kind::Int)) {
            diags_.error(x->range, "'" + name + "' takes integers, found " + typeName(x->type()) + "; for numbers use floor(a / b)");
            return std::nullopt;
        }
    }
    std::optional<Value> q = binaryValues(ast::BinaryOp::Div, a, b, range, range);
    if (!q) return std::nullopt;   // a zero divisor, said once
    std::optional<Value> r = binaryValues(ast::BinaryOp::Mod, a, b, range, range);
    if (!r) return std::nullopt;
    auto constant = [&](int64_t k) {
        Value v;
        v.constant = ConstValue::ofInt(k);
        v.untyped = true;
        v.expr = ir::intImm(k);
        v.range = range;
        return v;
    };
    std::optional<Value> adjust;
    if (b.constant) {
        // A constant divisor (nonzero: the division checked it): r < 0 for b > 0, r > 0 for b < 0.
        adjust = binaryValues(b.constant->i > 0 ? ast::BinaryOp::Lt : ast::BinaryOp::Gt, *r, constant(0), range, range);
    } else {
        std::optional<Value> rNonZero = binaryValues(ast::BinaryOp::Ne, *r, constant(0), range, range);
        std::optional<Value> rNegative = binaryValues(ast::BinaryOp::Lt, *r, constant(0), range, range);
        std::optional<Value> bNegative = binaryValues(ast::BinaryOp::Lt, b, constant(0), range, range);
        if (!rNonZero || !rNegative || !bNegative) return std::nullopt;
        std::optional<Value> signsDiffer = binaryValues(ast::BinaryOp::Ne, *rNegative, *bNegative, range, range);
        if (signsDiffer) adjust = binaryValues(ast::BinaryOp::And, *rNonZero, *signsDiffer, range, range);
    }
    if (!adjust) return std::nullopt;
    bool div = name == "floordiv";
    std::optional<Value> adjusted = div ? binaryValues(ast::BinaryOp::Sub, *q, constant(1), range, range)
                                        : binaryValues(ast::BinaryOp::Add, *r, b, range, range);
    if (!adjusted) return std::nullopt;
    return selectValues(adjust->expr, *adjusted, div ? *q : *r, range);
}

// min(a, b) or max(a, b) of two checked values (also clamp's two steps).
std::optional<Value> Checker::minMax(const std::string &name, const Value &a0, const Value &b0, SourceRange range,
                                     const std::string &callee) {
    std::optional<Value> a = a0, b = b0;
    Value v;
    v.range = range;
    for (const Value *x : {&*a, &*b}) {
        if (!isNumeric(x->type())) {
            diags_.error(x->range, "'" + (callee.empty() ? name : callee) + "' takes numbers, found bool");
            return std::nullopt;
        }
    }
    if (a->constant && b->constant) {
        ConstResult r = foldConst(name == "min" ? ConstOp::Min : ConstOp::Max, *a->constant, *b->constant);
        v.constant = r.value;
        v.untyped = a->untyped && b->untyped;
        DType t = v.untyped ? defaultType(*r.value) : arithmeticType(a->untyped ? adoptType(*a->constant, b->type()) : a->type(),
                                                                       b->untyped ? adoptType(*b->constant, a->type()) : b->type());
        v.expr = constExpr(*r.value, t);
        return v;
    }
    DType ta = a->untyped && a->constant ? adoptType(*a->constant, b->type()) : a->type();
    DType tb = b->untyped && b->constant ? adoptType(*b->constant, a->type()) : b->type();
    DType t = arithmeticType(ta, tb);
    std::optional<ir::Expr> x = convert(*a, t, a->range), y = convert(*b, t, b->range);
    if (!x || !y) return std::nullopt;
    v.expr = ir::binary(name == "min" ? ir::BinaryOp::Min : ir::BinaryOp::Max, *x, *y, range);
    return v;
}

// ------------------------------------------------------------------ calls

std::optional<Value> Checker::checkExprCall(const ast::Call &c) {
    if (!c.isBuiltin) {
        if (auto fn = fns_.find(c.callee); fn != fns_.end()) {
            Diagnostic d{Severity::Error, c.range, "fn '" + c.callee + "' returns no value; call it as a statement: " + c.callee + "(...);", {}, {}};
            d.note(fn->second->name.range, "'" + c.callee + "' is declared here");
            diags_.report(std::move(d));
            return std::nullopt;
        }
        reportUnknown(c.callee, c.calleeRange, "function");
        return std::nullopt;
    }
    const std::string &name = c.callee;
    if (name.rfind("alloc_", 0) == 0 || name == "Tensor") {
        diags_.error(c.range, "'" + name + "' must be the initializer of a let: let buf = " + name + "(...);");
        return std::nullopt;
    }
    if (isStatementBuiltin(name)) {
        diags_.error(c.range, "'" + name + "' is a statement, not a value");
        return std::nullopt;
    }
    if (name == "atomic_load") {
        diags_.error(c.range, "atomic_load gives the element's value to a var: `v = atomic_load(src[i])` or `var v: T = atomic_load(src[i])`");
        return std::nullopt;
    }
    if (name == "access_ptr") {
        diags_.error(c.range, "access_ptr is an argument of call_extern: call_extern(\"f\", access_ptr(buf, \"r\"))");
        return std::nullopt;
    }
    Value v;
    v.range = c.range;
    if (name == "shfl_sync" || name == "shfl_xor" || name == "shfl_down" || name == "shfl_up") return warpShuffle(c);
    if (name == "**") return power(c);
    if (name.rfind("clc_", 0) == 0) {
        // clc_is_canceled(answer), clc_get_first_ctaid_x(answer), ...
        std::optional<CallArgs> args = matchArgs(c, 1, 1, {});
        if (!args) return std::nullopt;
        ir::Expr answer = checkClcAnswer(*args->positional[0], c.callee);
        if (!answer) return std::nullopt;
        ir::ClcField field = name == "clc_is_canceled"         ? ir::ClcField::IsCanceled
                             : name == "clc_get_first_ctaid_x" ? ir::ClcField::FirstCtaidX
                             : name == "clc_get_first_ctaid_y" ? ir::ClcField::FirstCtaidY
                                                               : ir::ClcField::FirstCtaidZ;
        v.expr = std::make_shared<ir::ClcQuery>(field, answer, c.range);
        return v;
    }
    if (name == "rng_rand" || name == "rng_rand_float") return checkRngDraw(c);
    if (name == "block_rank_in_cluster") {
        if (!matchArgs(c, 0, 0, {})) return std::nullopt;
        v.expr = std::make_shared<ir::SpecialReg>(ir::SpecialKind::ClusterCtaRank, c.range);
        return v;
    }
    if (name == "num_sms") {
        // The device's SM count, known at launch: a kernel parameter the
        // launch function fills in (a persistent kernel's grid and wave size).
        if (!matchArgs(c, 0, 0, {})) return std::nullopt;
        if (!kernel_) {
            diags_.error(c.range, "num_sms() is the SM count of the device a kernel is launched on; it has no value outside a kernel");
            return std::nullopt;
        }
        if (checkingParams_) {
            diags_.error(c.range, "num_sms() is known only when the kernel is launched; a tensor's shape takes constants and dynamic dimensions");
            return std::nullopt;
        }
        auto known = std::find_if(kernel_->params.begin(), kernel_->params.end(), [](const ir::Param &p) { return p.kind == ir::ParamKind::SmCount; });
        if (known == kernel_->params.end()) {
            kernel_->params.push_back(ir::Param{ir::ParamKind::SmCount, nullptr, ir::makeVar("num_sms", DType::Int32, c.range), c.range});
            known = kernel_->params.end() - 1;
        }
        v.expr = known->var;
        return v;
    }
    if (name == "cast" || name == "reinterpret") {
        std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
        if (!args) return std::nullopt;
        std::optional<Value> x = checkValue(*args->positional[0]);
        std::optional<DType> t = checkDType(*args->positional[1]);
        if (!x || !t) return std::nullopt;
        // reinterpret is TileLang's T.reinterpret(value, dtype): the same bits
        // read as another type of the same width (a float's exponent as an integer).
        if (name == "reinterpret") {
            Value value = materialize(*x);
            DType from = value.type();
            for (DType d : {from, *t}) {
                if (isPacked(d) || d == DType::Bool || d == DType::TF32) {
                    diags_.error(d == *t ? args->positional[1]->range : x->range,
                                 "reinterpret reads the bits of an integer or float of 8 to 64 bits, not of " + typeName(d));
                    return std::nullopt;
                }
            }
            if (dtypeBits(from) != dtypeBits(*t)) {
                diags_.error(c.range, "reinterpret keeps the bits: " + typeName(from) + " (" + std::to_string(dtypeBits(from)) + " bits) cannot be read as " +
                                          typeName(*t) + " (" + std::to_string(dtypeBits(*t)) + " bits); cast converts the value");
                return std::nullopt;
            }
            v.expr = from == *t ? value.expr : std::make_shared<ir::MathCall>(*t, ir::MathFunc::BitCast, std::vector<ir::Expr>{value.expr}, c.range);
            return v;
        }
        if (isPacked(*t)) {
            diags_.error(args->positional[1]->range, "cannot cast to the packed type " + typeName(*t));
            return std::nullopt;
        }
        if (x->constant && x->untyped) {
            // cast(1.5, int32) is an explicit conversion: truncate as C does.
            ConstValue cv = *x->constant;
            if (!isFloat(*t) && *t != DType::Bool && cv.kind == ConstValue::Kind::Float) {
                // Truncation of a value no integer type holds is undefined in
                // C++ (and in CUDA); say so rather than fold some number.
                std::optional<int64_t> truncated = truncateToInt64(cv.f);
                if (!truncated) {
                    diags_.error(c.range, "constant " + cv.str() + " is out of range for " + typeName(*t));
                    return std::nullopt;
                }
                cv = ConstValue::ofInt(*truncated);
            }
            Value tmp = *x;
            tmp.constant = cv;
            if (*t == DType::Bool) {
                v.expr = ir::boolImm(cv.asDouble() != 0);
                v.constant = ConstValue::ofBool(cv.asDouble() != 0);
                return v;
            }
            std::optional<ir::Expr> e = convert(tmp, *t, c.range);
            if (!e) return std::nullopt;
            v.expr = *e;
            v.constant = cv;
            return v;
        }
        if (*t == DType::Bool && x->type() != DType::Bool) {
            // cast(x, bool) means x != 0.
            Value zero;
            zero.constant = ConstValue::ofInt(0);
            zero.untyped = true;
            zero.expr = ir::intImm(0);
            zero.range = c.range;
            return binaryValues(ast::BinaryOp::Ne, *x, zero, c.range, c.range);
        }
        v.expr = ir::cast(*t, x->expr);
        return v;
    }
    if (name == "ceildiv") {
        std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
        if (!args) return std::nullopt;
        std::optional<Value> a = checkValue(*args->positional[0]), b = checkValue(*args->positional[1]);
        if (!a || !b) return std::nullopt;
        for (const Value *x : {&*a, &*b}) {
            if (!isInteger(x->type())) {
                diags_.error(x->range, "ceildiv takes integers, found " + typeName(x->type()));
                return std::nullopt;
            }
        }
        if (a->constant && b->constant) {
            ConstResult r = foldConst(ConstOp::CeilDiv, *a->constant, *b->constant);
            if (!r.value) {
                diags_.error(c.range, r.error);
                return std::nullopt;
            }
            v.constant = r.value;
            v.untyped = a->untyped && b->untyped;
            v.expr = constExpr(*r.value, v.untyped ? defaultType(*r.value) : arithmeticType(a->type(), b->type()));
            return v;
        }
        if (b->constant && b->constant->i == 0) {
            diags_.error(args->positional[1]->range, "division by zero");
            return std::nullopt;
        }
        // (a + b - 1) / b, for the non-negative sizes ceildiv is used with.
        std::optional<Value> sum = binaryValues(ast::BinaryOp::Add, *a, *b, c.range, c.range);
        if (!sum) return std::nullopt;
        Value one;
        one.constant = ConstValue::ofInt(1);
        one.untyped = true;
        one.expr = ir::intImm(1);
        one.range = c.range;
        std::optional<Value> minus = binaryValues(ast::BinaryOp::Sub, *sum, one, c.range, c.range);
        if (!minus) return std::nullopt;
        return binaryValues(ast::BinaryOp::Div, *minus, *b, c.range, c.range);
    }
    if (name == "floordiv" || name == "floormod") {
        std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
        if (!args) return std::nullopt;
        std::optional<Value> a = checkValue(*args->positional[0]), b = checkValue(*args->positional[1]);
        if (!a || !b) return std::nullopt;
        return floorDivMod(name, *a, *b, c.range);
    }
    if (name == "min" || name == "max") {
        std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
        if (!args) return std::nullopt;
        std::optional<Value> a = checkValue(*args->positional[0]), b = checkValue(*args->positional[1]);
        if (!a || !b) return std::nullopt;
        return minMax(name, *a, *b, c.range);
    }
    // clamp(x, lo, hi) is min(max(x, lo), hi), as TileLang's T.clamp.
    if (name == "clamp") {
        std::optional<CallArgs> args = matchArgs(c, 3, 3, {});
        if (!args) return std::nullopt;
        std::optional<Value> x = checkValue(*args->positional[0]), lo = checkValue(*args->positional[1]),
                             hi = checkValue(*args->positional[2]);
        if (!x || !lo || !hi) return std::nullopt;
        std::optional<Value> low = minMax("max", *x, *lo, c.range, name);
        if (!low) return std::nullopt;
        return minMax("min", *low, *hi, c.range, name);
    }
    if (name == "abs") {
        std::optional<CallArgs> args = matchArgs(c, 1, 1, {});
        if (!args) return std::nullopt;
        std::optional<Value> a = checkValue(*args->positional[0]);
        if (!a) return std::nullopt;
        if (!isNumeric(a->type())) {
            diags_.error(a->range, "'abs' takes a number, found bool");
            return std::nullopt;
        }
        if (a->constant) {
            if (a->constant->kind == ConstValue::Kind::Int && a->constant->i < 0) {
                std::optional<int64_t> negated = checkedNeg(a->constant->i);
                if (!negated || (!a->untyped && !fitsInType(*negated, a->type()))) {
                    diags_.error(c.range, "integer overflow in constant expression");
                    return std::nullopt;
                }
            }
            v.constant = a->constant->kind == ConstValue::Kind::Float ? ConstValue::ofFloat(std::fabs(a->constant->f))
                                                                       : ConstValue::ofInt(a->constant->i < 0 ? -a->constant->i : a->constant->i);
            v.untyped = a->untyped;
            v.expr = constExpr(*v.constant, a->untyped ? defaultType(*v.constant) : a->type());
            return v;
        }
        DType t = isNarrowFloat(a->type()) ? DType::F32 : arithmeticType(a->type(), a->type());
        v.expr = std::make_shared<ir::MathCall>(t, ir::MathFunc::Abs, std::vector<ir::Expr>{ir::cast(t, a->expr)}, c.range);
        return v;
    }
    for (const MathBuiltin &m : kMath) {
        if (name == m.name) {
            std::optional<CallArgs> args = matchArgs(c, m.arity, m.arity, {});
            if (!args) return std::nullopt;
            return mathCall(c, m.func, *args);
        }
    }
    TILET_INTERNAL_ERROR("builtin '" << name << "' has no checker");
}

// shfl_sync(value, lane), shfl_xor(value, mask), shfl_down(value, delta),
// shfl_up(value, delta), each with `width = W` (TileLang's T.shfl_sync ...,
// CUDA's __shfl_*_sync over the whole warp): ir::Shuffle has the meaning.
// Thread-level code: every lane of the warp must run it (DivergentWorkCheck).
std::optional<Value> Checker::warpShuffle(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 2, 2, {"width"});
    if (!args) return std::nullopt;
    if (parallelDepth_ > 0) {
        diags_.error(c.calleeRange, "'" + c.callee + "' exchanges values between the lanes of a warp: thread-level code, not inside a parallel loop "
                                    "(whose iterations are not tied to lanes)");
        return std::nullopt;
    }
    std::optional<Value> value = checkValue(*args->positional[0]);
    std::optional<ir::Expr> operand = checkInteger(*args->positional[1], c.callee == "shfl_sync" ? "source lane" : c.callee == "shfl_xor" ? "lane mask" : "lane delta");
    int64_t width = 32;
    if (const ast::Expr *w = args->keyword("width")) {
        std::optional<int64_t> n = checkConstInt(*w, "shuffle width");
        if (!n) return std::nullopt;
        if (*n < 1 || *n > 32 || (*n & (*n - 1)) != 0) {
            diags_.error(w->range, "a shuffle's width is a power of two from 1 to 32 (lanes per segment of the warp), found " + std::to_string(*n));
            return std::nullopt;
        }
        width = *n;
    }
    if (!value || !operand) return std::nullopt;
    Value v = materialize(*value);
    DType t = v.type();
    if (!(t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16 || t == DType::Int32 || t == DType::UInt32 ||
          t == DType::Int64 || t == DType::UInt64)) {
        diags_.error(value->range, "'" + c.callee + "' moves a 16-bit float or a 32- or 64-bit number, found " + typeName(t));
        return std::nullopt;
    }
    ir::ShuffleMode mode = c.callee == "shfl_sync" ? ir::ShuffleMode::Index
                         : c.callee == "shfl_xor"  ? ir::ShuffleMode::Xor
                         : c.callee == "shfl_down" ? ir::ShuffleMode::Down
                                                   : ir::ShuffleMode::Up;
    Value out;
    out.range = c.range;
    out.expr = std::make_shared<ir::Shuffle>(mode, v.expr, ir::cast(DType::Int32, *operand), width, c.range);
    return out;
}

// a ** b. As in Python, an integer to a constant integer power >= 0 is an
// integer (products of the base, exact where they fit its type; powf would
// round above 2^24); anything else is pow(a, b), a float.
std::optional<Value> Checker::power(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
    if (!args) return std::nullopt;
    std::optional<Value> base = checkValue(*args->positional[0]), exponent = checkValue(*args->positional[1]);
    if (!base || !exponent) return std::nullopt;
    bool integerBase = base->constant ? base->constant->kind == ConstValue::Kind::Int : isInteger(base->type());
    bool constantExponent = exponent->untyped && exponent->constant && exponent->constant->kind == ConstValue::Kind::Int && exponent->constant->i >= 0;
    if (!integerBase || !constantExponent) return mathCall(c, ir::MathFunc::Pow, std::vector<Value>{*base, *exponent});
    int64_t e = exponent->constant->i;
    if (e > 64) {
        diags_.error(exponent->range, "an integer power's exponent is at most 64 (found " + std::to_string(e) + "); write a float base for pow");
        return std::nullopt;
    }
    Value out;
    out.range = c.range;
    if (base->untyped) {
        int64_t r = 1;
        for (int64_t i = 0; i < e; ++i) {
            if (__builtin_mul_overflow(r, base->constant->i, &r)) {
                diags_.error(c.range, "the constant " + std::to_string(base->constant->i) + " ** " + std::to_string(e) + " overflows 64 bits");
                return std::nullopt;
            }
        }
        out.constant = ConstValue::ofInt(r);
        out.untyped = true;
        out.expr = constExpr(*out.constant, defaultType(*out.constant));
        return out;
    }
    DType t = arithmeticType(base->type(), base->type());
    ir::Expr x = ir::cast(t, base->expr), product = ir::intImm(1, t);
    // Square and multiply: x ** 5 = (x * x) * (x * x) * x.
    for (ir::Expr square = x; e > 0; e /= 2, square = ir::mul(square, square)) {
        if (e % 2) product = ir::constInt(product) == 1 ? square : ir::mul(product, square);
    }
    out.expr = product;
    return out;
}

std::optional<Value> Checker::mathCall(const ast::Call &c, ir::MathFunc f, const CallArgs &args) {
    std::vector<Value> values;
    for (const ast::Expr *a : args.positional) {
        std::optional<Value> v = checkValue(*a);
        if (!v) return std::nullopt;
        values.push_back(*v);
    }
    return mathCall(c, f, values);
}

// Of checked arguments: an argument is checked once (a random draw in it is made once).
std::optional<Value> Checker::mathCall(const ast::Call &c, ir::MathFunc f, const std::vector<Value> &values) {
    for (const Value &v : values) {
        if (!isNumeric(v.type())) {
            diags_.error(v.range, "'" + c.callee + "' takes a number, found bool");
            return std::nullopt;
        }
    }
    bool allConst = true;
    DType t = DType::F32;
    for (const Value &v : values) {
        allConst = allConst && v.constant.has_value();
        if (!v.untyped && v.type() == DType::F64) t = DType::F64;
    }
    // The approximations exist in f32 only.
    if (f == ir::MathFunc::FastExp || f == ir::MathFunc::FastExp2) t = DType::F32;
    Value out;
    out.range = c.range;
    if (allConst) {
        double r = 0;
        if (f == ir::MathFunc::Pow) r = std::pow(values[0].constant->asDouble(), values[1].constant->asDouble());
        else {
            for (const MathBuiltin &m : kMath) {
                if (m.func == f) r = m.fold(values[0].constant->asDouble());
            }
        }
        out.constant = ConstValue::ofFloat(r);
        out.untyped = true;
        for (const Value &v : values) out.untyped = out.untyped && v.untyped;
        out.expr = ir::floatImm(r, out.untyped ? DType::F32 : t);
        return out;
    }
    std::vector<ir::Expr> irArgs;
    for (const Value &v : values) irArgs.push_back(v.untyped ? ir::floatImm(v.constant->asDouble(), t) : ir::cast(t, v.expr));
    out.expr = std::make_shared<ir::MathCall>(t, f, std::move(irArgs), c.range);
    return out;
}

} // namespace tilet::sema
