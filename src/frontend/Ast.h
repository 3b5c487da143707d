// Ast.h -- the abstract syntax tree of a .tl file.
//
// Built by ParseTreeToAst.cpp from the ANTLR parse tree, which is then thrown
// away; nothing past the front end sees ANTLR. Every node owns its children
// and carries the source range it was parsed from. The AST is deliberately
// untyped: names, types, shapes and constants are resolved by sema/, which
// turns the AST into IR.
#pragma once

#include "ir/DType.h"
#include "support/SourceManager.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilet::ast {

// ------------------------------------------------------------------ expressions

enum class ExprKind { IntLit, FloatLit, BoolLit, InfLit, StringLit, Name, DTypeRef, List, Index, Unary, Binary, Cond, Call };

enum class UnaryOp { Neg, Not, BitNot };
enum class BinaryOp { Mul, Div, Mod, Add, Sub, Shl, Shr, Lt, Le, Gt, Ge, Eq, Ne, BitAnd, BitXor, BitOr, And, Or };

const char *unaryOpSpelling(UnaryOp op);
const char *binaryOpSpelling(BinaryOp op);

struct Expr {
    explicit Expr(ExprKind k, SourceRange r) : kind(k), range(r) {}
    virtual ~Expr() = default;
    const ExprKind kind;
    SourceRange range;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntLit : Expr {
    IntLit(SourceRange r, uint64_t v, bool overflow) : Expr(ExprKind::IntLit, r), value(v), overflowed(overflow) {}
    uint64_t value;
    bool overflowed;   // the literal does not fit in 64 bits
};

struct FloatLit : Expr {
    FloatLit(SourceRange r, double v) : Expr(ExprKind::FloatLit, r), value(v) {}
    double value;
};

struct BoolLit : Expr {
    BoolLit(SourceRange r, bool v) : Expr(ExprKind::BoolLit, r), value(v) {}
    bool value;
};

struct InfLit : Expr {
    explicit InfLit(SourceRange r) : Expr(ExprKind::InfLit, r) {}
};

struct StringLit : Expr {
    StringLit(SourceRange r, std::string v) : Expr(ExprKind::StringLit, r), value(std::move(v)) {}
    std::string value;
};

struct Name : Expr {
    Name(SourceRange r, std::string n) : Expr(ExprKind::Name, r), name(std::move(n)) {}
    std::string name;
};

struct DTypeRef : Expr {
    DTypeRef(SourceRange r, DType t) : Expr(ExprKind::DTypeRef, r), dtype(t) {}
    DType dtype;
};

struct List : Expr {
    List(SourceRange r, std::vector<ExprPtr> items) : Expr(ExprKind::List, r), items(std::move(items)) {}
    std::vector<ExprPtr> items;
};

// One subscript: a point `i` or a half-open slice `begin:end`.
struct IndexItem {
    ExprPtr begin;          // a slice written `:b` or `:` begins at 0 (an IntLit at the colon)
    ExprPtr end;            // null for a point, and for a slice to the end of the dimension
    bool openEnd = false;   // `a:` or `:`: a slice to the end of the dimension
    SourceRange range;
    bool isSlice() const { return end || openEnd; }
};

struct Index : Expr {
    Index(SourceRange r, ExprPtr b, std::vector<IndexItem> i)
        : Expr(ExprKind::Index, r), base(std::move(b)), items(std::move(i)) {}
    ExprPtr base;
    std::vector<IndexItem> items;
};

struct Unary : Expr {
    Unary(SourceRange r, UnaryOp o, ExprPtr e) : Expr(ExprKind::Unary, r), op(o), operand(std::move(e)) {}
    UnaryOp op;
    ExprPtr operand;
};

struct Binary : Expr {
    Binary(SourceRange r, BinaryOp o, ExprPtr l, ExprPtr rr, SourceRange opr)
        : Expr(ExprKind::Binary, r), op(o), lhs(std::move(l)), rhs(std::move(rr)), opRange(opr) {}
    BinaryOp op;
    ExprPtr lhs, rhs;
    SourceRange opRange;   // the operator token, where errors such as "division by zero" point
};

struct Cond : Expr {
    Cond(SourceRange r, ExprPtr c, ExprPtr t, ExprPtr f)
        : Expr(ExprKind::Cond, r), cond(std::move(c)), thenValue(std::move(t)), elseValue(std::move(f)) {}
    ExprPtr cond, thenValue, elseValue;
};

struct Arg {
    std::string name;        // empty for a positional argument
    SourceRange nameRange;
    ExprPtr value;
};

struct Call : Expr {
    Call(SourceRange r, std::string c, SourceRange cr, bool builtin, std::vector<Arg> a)
        : Expr(ExprKind::Call, r), callee(std::move(c)), calleeRange(cr), isBuiltin(builtin), args(std::move(a)) {}
    std::string callee;
    SourceRange calleeRange;
    bool isBuiltin;          // a reserved builtin name (not a user identifier)
    std::vector<Arg> args;
};

// ------------------------------------------------------------------ statements

enum class StmtKind { Let, Var, Assign, For, If, While, Ws, CallStmt, Break, Continue };

struct Stmt {
    explicit Stmt(StmtKind k, SourceRange r) : kind(k), range(r) {}
    virtual ~Stmt() = default;
    const StmtKind kind;
    SourceRange range;
};
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

struct Ident {
    std::string name;
    SourceRange range;
};

// A type annotation is a dtype keyword (`type`) or, when `typeName` is not
// empty, the name of a dtype constant that sema resolves.
struct Let : Stmt {
    Let(SourceRange r) : Stmt(StmtKind::Let, r) {}
    Ident name;
    std::optional<DType> type;
    std::string typeName;
    SourceRange typeRange;
    ExprPtr init;
};

struct Var : Stmt {
    Var(SourceRange r) : Stmt(StmtKind::Var, r) {}
    Ident name;
    DType type = DType::F32;
    std::string typeName;
    SourceRange typeRange;
    ExprPtr init;   // may be null
};

enum class AssignOp { Assign, Add, Sub, Mul, Div };

struct Assign : Stmt {
    Assign(SourceRange r) : Stmt(StmtKind::Assign, r) {}
    Ident target;
    std::vector<ExprPtr> indices;   // empty: assigns the scalar variable
    SourceRange targetRange;        // the whole left-hand side
    AssignOp op = AssignOp::Assign;
    ExprPtr value;
};

enum class LoopKind { Serial, Unroll, Parallel, Pipelined, Vectorized, Persistent };
const char *loopKindName(LoopKind k);

struct For : Stmt {
    For(SourceRange r) : Stmt(StmtKind::For, r) {}
    std::vector<Ident> vars;
    LoopKind loopKind = LoopKind::Serial;
    SourceRange kindRange;
    std::vector<Arg> args;
    StmtList body;
};

struct If : Stmt {
    If(SourceRange r) : Stmt(StmtKind::If, r) {}
    ExprPtr cond;
    StmtList thenBody;
    StmtList elseBody;
    bool hasElse = false;
};

struct While : Stmt {
    While(SourceRange r) : Stmt(StmtKind::While, r) {}
    ExprPtr cond;
    StmtList body;
};

struct Ws : Stmt {
    Ws(SourceRange r) : Stmt(StmtKind::Ws, r) {}
    std::vector<ExprPtr> roles;
    StmtList body;
};

// break; / continue;: leave the innermost loop, or go on with its next iteration.
struct Jump : Stmt {
    Jump(StmtKind k, SourceRange r) : Stmt(k, r) {}
};

struct CallStmt : Stmt {
    CallStmt(SourceRange r, std::unique_ptr<Call> c) : Stmt(StmtKind::CallStmt, r), call(std::move(c)) {}
    std::unique_ptr<Call> call;
};

// ------------------------------------------------------------------ declarations

struct Import {
    std::string path;      // as written
    SourceRange range;     // the string literal
};

struct TargetDecl {
    std::string name;
    SourceRange range;
};

struct ConstDecl {
    Ident name;
    std::optional<DType> type;
    std::string typeName;
    SourceRange typeRange;
    ExprPtr value;
    SourceRange range;
};

// One dimension of a tensor parameter: an expression, or `dyn name`.
struct Dim {
    ExprPtr value;          // null for a dynamic dimension
    Ident dynName;          // set for a dynamic dimension
    ExprPtr divisor;        // `dyn K % 64`: the promise that K is a multiple of 64 (may be null)
    SourceRange range;
};

struct Param {
    Ident name;
    DType dtype = DType::F32;
    std::string typeName;
    SourceRange typeRange;
    bool isTensor = false;
    std::vector<Dim> dims;
    SourceRange range;
};

struct Launch {
    std::vector<ExprPtr> grid;
    SourceRange gridRange;
    std::vector<Ident> blockNames;    // `as (bx, by)`
    std::vector<ExprPtr> threads;     // 1 to 3 extents, x fastest
    SourceRange threadsRange;
    std::vector<Ident> threadNames;   // `threads(...) as (tx, ty)`
    std::vector<ExprPtr> cluster;
    SourceRange clusterRange;
    ExprPtr minBlocksPerSm;
};

struct Kernel {
    Ident name;
    std::vector<Param> params;
    Launch launch;
    StmtList body;
    SourceRange range;
    SourceRange headerRange;   // `kernel name(...)`
};

// One parsed file. Imports are resolved by ModuleLoader, not here.
// fn name(params) { body }: inlined at each call statement.
struct FnDecl {
    Ident name;
    std::vector<Ident> params;
    StmtList body;
    SourceRange range;
};

struct File {
    FileId id = kNoFile;
    std::vector<Import> imports;
    std::vector<TargetDecl> targets;
    std::vector<ConstDecl> consts;
    std::vector<FnDecl> fns;
    std::vector<Kernel> kernels;
};

// Prints the tree with a location on every node (`tilet --emit=ast`).
void dump(const File &file, const SourceManager &sources, std::ostream &out);

} // namespace tilet::ast
