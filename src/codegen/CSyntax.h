// CSyntax.h -- how IR types and expressions are spelled in CUDA C++.
#pragma once

#include "codegen/Emitter.h"
#include "ir/IR.h"

#include <set>
#include <string>

namespace tilet {

// The C++ type of one element: float, __half, __nv_bfloat16, int, ...
std::string cType(DType t);
// The C type that holds an element where C has no type for it (the
// launch header for C callers): a 16-bit float's bits are unsigned short,
// an 8-bit float's unsigned char, bool is _Bool; cType otherwise.
std::string cStorageType(DType t);
// The CUDA header that declares it, or "" for builtin types.
std::string cTypeHeader(DType t);
// The C++ type of one element as a value (a register, a conversion): cType,
// except for the packed types whose fragments hold an element to a register
// (f4e2m1: __nv_fp4_e2m1, where memory holds unsigned char bytes of two).
std::string cValueType(DType t);
std::string cValueTypeHeader(DType t);
// The PTX ISA's name of a scalar type: f16, f32, s32, u64, ...
std::string ptxTypeName(DType t);
// The PTX type name of an mma accumulator (f32, f16, s32) or operand (f16,
// bf16, tf32 for f32 data, s8, u8, e4m3, e5m2), as the helper names use them.
std::string mmaTypeName(DType t, bool operand);

// Prints expressions with the fewest parentheses C's precedence allows.
// Records which headers the printed text needs.
class ExprPrinter {
public:
    explicit ExprPrinter(NameTable &names) : names_(names) {}
    std::string print(const ir::Expr &e);
    const std::set<std::string> &headers() const { return headers_; }
    void needHeader(const std::string &h) { if (!h.empty()) headers_.insert(h); }
    // Sections of templates/cuda/ptx_helpers.cu the printed text calls.
    const std::set<std::string> &helpers() const { return helpers_; }
    void needHelper(const std::string &key) { helpers_.insert(key); }

private:
    std::string print(const ir::Expr &e, int &precedence);
    std::string operand(const ir::Expr &e, int maxPrecedence);
    std::string literal(const ir::Expr &e);
    std::string castTo(DType to, const ir::Expr &value);

    NameTable &names_;
    std::set<std::string> headers_, helpers_;
};

} // namespace tilet
