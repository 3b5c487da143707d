// SemaImpl.h -- the checker behind Sema.h (private to src/sema).
//
// The checker walks the AST once, in source order, keeping a stack of scopes.
// Expressions come back as Values: an IR expression plus, when known at
// compile time, its constant. Untyped constants (those made only of literals
// and untyped `const`s) take the type their context asks for, as in Go.
#pragma once

#include "frontend/Ast.h"
#include "ir/IR.h"
#include "sema/ConstValue.h"
#include "sema/Sema.h"

#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace tilet::sema {

// Dimensions of a tensor, a buffer or a parallel loop nest. Lowering builds
// one loop, and offset arithmetic one term, per dimension, so the rank bounds
// how deep those trees grow; TMA itself moves at most 5 dimensions.
constexpr size_t kMaxRank = 16;

struct Value {
    ir::Expr expr;
    std::optional<ConstValue> constant;
    bool untyped = false;
    SourceRange range;
    // A division of integer constants that truncated a nonzero value to 0
    // (`1 / N`): warned about where it becomes a float.
    std::optional<SourceRange> zeroByIntDivision;
    DType type() const { return expr->dtype; }
};

// Whether the program may read and write `b`'s elements one by one: every
// type but the packed ones, and f4e2m1 in a fragment, whose registers hold
// one element each (lower-packed-copies packs them when they are copied).
inline bool elementsOneByOne(const ir::BufferNode &b) {
    return !isPacked(b.dtype) || (b.scope == ir::MemScope::Fragment && inRegistersOneByOne(b.dtype));
}

enum class SymbolKind { Const, DTypeConst, Tensor, Scalar, DynDim, BlockIndex, ThreadIndex, LoopVar, Let, Buffer, Mutable };
const char *symbolKindName(SymbolKind k);

struct Symbol {
    SymbolKind kind = SymbolKind::Const;
    SourceRange def;
    Value constValue;     // Const
    DType dtype = DType::F32;   // DTypeConst: `const dt = f16;`
    ir::Buffer buffer;    // Tensor, Buffer, Mutable (a rank-0 local buffer)
    ir::VarRef var;       // Scalar, DynDim, BlockIndex, ThreadIndex, LoopVar, Let
    bool fromLet = false; // a Const bound by `let` (its value is known at compile time)
    bool invalid = false; // a Const or Buffer whose declaration was reported: uses report nothing more
};

// A buffer argument of a tile operation: a whole buffer (`A`), points
// (`A[i, j]`, extents taken from the other operand) or slices (`A[i:i+4, :]`).
struct RegionRef {
    ir::Buffer buffer;
    std::vector<ir::Expr> mins;
    std::vector<std::optional<int64_t>> extents;   // nullopt: a point whose extent is inferred
    bool whole = false;
    SourceRange range;
    bool hasUnknownExtents() const;
};

// Positional and keyword arguments of a builtin call after arity checks.
struct CallArgs {
    std::vector<const ast::Expr *> positional;
    std::map<std::string, const ast::Arg *> keywords;
    const ast::Expr *keyword(const std::string &name) const {
        auto it = keywords.find(name);
        return it == keywords.end() ? nullptr : it->second->value.get();
    }
};

// The shared-memory swizzle `annotate_layout(name, make_mma_swizzle_layout(name))`
// gives `buffer` (SemaTileOps.cpp), or nullopt when `c` is not one.
std::optional<ir::SharedSwizzle> annotatedSwizzle(const ast::Call &c, const std::string &name, const ir::BufferNode &buffer);

class Checker {
public:
    Checker(const SourceManager &sources, DiagnosticEngine &diags) : sources_(sources), diags_(diags) {}
    std::optional<ir::Module> run(const LoadedProgram &program, const std::vector<Define> &defines);

    // ---- Sema.cpp: declarations
private:
    void declareConsts(const ast::File &file, std::map<std::string, Define> &defines, std::map<std::string, bool> &used);
    std::optional<Value> defineValue(const Define &d, const ast::ConstDecl &decl);
    std::optional<ir::Kernel> checkKernel(const ast::Kernel &k);
    void checkParams(const ast::Kernel &k, ir::Kernel &out);
    void checkThreads(const ast::Launch &launch, ir::Kernel &out);
    void checkLaunch(const ast::Kernel &k, ir::Kernel &out);

    // ---- SemaExpr.cpp: expressions
public:
    std::optional<Value> checkValue(const ast::Expr &e);
    std::optional<ir::Expr> checkInteger(const ast::Expr &e, const char *what);
    std::optional<ir::Expr> checkCondition(const ast::Expr &e, const char *what);
    std::optional<int64_t> checkConstInt(const ast::Expr &e, const char *what);
    std::optional<std::vector<int64_t>> checkClusterMasks(const ast::Expr &e);
    // Blocks in a cluster of the kernel being checked (1 without cluster(...));
    // at most 16, as checkLaunch records only a valid cluster.
    int64_t clusterBlocks() const { return kernel_ ? kernel_->cluster[0] * kernel_->cluster[1] * kernel_->cluster[2] : 1; }
    std::optional<bool> checkConstBool(const ast::Expr &e, const char *what);
    // The kernel runs in CTA pairs (cluster(2) or cluster(1, 2)); otherwise an error naming `what`.
    bool requirePairCluster(SourceRange where, const char *what);
    // A constant bool keyword that asks for the CTA pair (arrive_2cta, use_2cta): false when
    // absent, nullopt after an error (not a constant, or true outside a pair cluster).
    std::optional<bool> checkPairFlag(const CallArgs &args, const char *keyword, const char *what);
    std::optional<DType> checkDType(const ast::Expr &e);
    // A bare identifier naming one of `allowed` (hint values such as `tma`).
    std::optional<std::string> checkWord(const ast::Expr &e, const std::vector<std::string> &allowed, const char *what);
    // Converts to `t` (implicitly, as C does); untyped constants must fit.
    std::optional<ir::Expr> convert(const Value &v, DType t, SourceRange where);
    Value materialize(const Value &v);
    bool fitsNarrowFloat(const Value &v, DType t, SourceRange where);   // an untyped constant at its default type

private:
    std::optional<Value> checkName(const ast::Name &n);
    std::optional<Value> checkIndexLoad(const ast::Index &ix);
    std::optional<Value> checkUnary(const ast::Unary &u);
    std::optional<Value> checkBinary(const ast::Binary &b);
    std::optional<Value> checkCond(const ast::Cond &c);
    std::optional<Value> selectValues(const ir::Expr &cond, const Value &t, const Value &f, SourceRange range);
    std::optional<Value> floorDivMod(const std::string &name, const Value &a, const Value &b, SourceRange range);
    std::optional<Value> checkExprCall(const ast::Call &c);
    // min(a, b) or max(a, b); `callee` names the call in messages when it is not `name` (clamp).
    std::optional<Value> minMax(const std::string &name, const Value &a, const Value &b, SourceRange range, const std::string &callee = {});
    std::optional<Value> binaryValues(ast::BinaryOp op, Value a, Value b, SourceRange opRange, SourceRange whole);
    std::optional<Value> power(const ast::Call &c);
    std::optional<Value> mathCall(const ast::Call &c, ir::MathFunc f, const CallArgs &args);
    std::optional<Value> mathCall(const ast::Call &c, ir::MathFunc f, const std::vector<Value> &values);
    std::optional<Value> warpShuffle(const ast::Call &c);
public:
    // Reports the constant indices of an element access that fall outside
    // the buffer's constant dimensions (`ranges` holds each index's place).
    bool checkConstIndices(const ir::BufferNode &buffer, const std::vector<ir::Expr> &indices, const std::vector<SourceRange> &ranges);
private:

    // ---- SemaStmt.cpp: statements
public:
    ir::Stmt checkBlock(const ast::StmtList &stmts);
    // `use_swizzle(panel [, order = row|col])` as a kernel's first statement:
    // the block indices it maps the launch order to, or nullopt (reported).
    struct Swizzle {
        std::vector<std::pair<ir::VarRef, ir::Expr>> steps;   // named steps, bound before the block indices
        std::vector<ir::Expr> blockIndices;                   // bx, by (, bz)
    };
    std::optional<Swizzle> checkSwizzle(const ast::Call &c, const ir::Kernel &kernel);

private:
    ir::Stmt checkStmtsFrom(const ast::StmtList &stmts, size_t index);
    ir::Stmt checkLet(const ast::Let &s, const ast::StmtList &stmts, size_t index);
    ir::Stmt checkVar(const ast::Var &s, const ast::StmtList &stmts, size_t index);
    ir::Stmt checkAlloc(const ast::Let &s, const ast::Call &call, const ast::StmtList &stmts, size_t index);
    std::optional<std::vector<ir::Expr>> checkConstShape(const ast::Expr &shapeExpr, const std::string &what, const std::string &name,
                                                         const std::string &article);
    ir::Stmt declareBuffer(const ast::Let &s, const ir::Buffer &buffer, ir::MemScope scope, const ast::StmtList &stmts, size_t index);
    ir::Stmt checkTensorView(const ast::Let &s, const ast::Call &call, const ast::StmtList &stmts, size_t index);
    ir::Stmt checkReshape(const ast::Let &s, const ast::Call &call, const ast::StmtList &stmts, size_t index);
    ir::Stmt checkAssign(const ast::Assign &s);
    ir::Stmt checkFor(const ast::For &s);
    ir::Stmt checkParallelFor(const ast::For &s);
    ir::Stmt checkPersistentFor(const ast::For &s);
    std::optional<CallArgs> loopArgs(const ast::For &s, const std::vector<std::string> &keywords);
    std::vector<ir::VarRef> declareLoopVars(const ast::For &s);
    ir::Stmt checkWhile(const ast::While &s);
    ir::Stmt checkJump(const ast::Stmt &s);
    ir::Stmt checkIf(const ast::If &s);
    ir::Stmt checkWs(const ast::Ws &s);

    // ---- SemaTileOps.cpp: tile operations and synchronisation
    ir::Stmt checkCallStmt(const ast::Call &c);
    std::optional<RegionRef> checkRegionArg(const ast::Expr &e, const char *role);
    std::optional<ir::Region> completeRegion(const RegionRef &r, const std::vector<int64_t> &otherExtents);
    bool resolveCopyRegions(const RegionRef &src, const RegionRef &dst, ir::Region &srcOut, ir::Region &dstOut,
                            const char *op, SourceRange where);
    ir::Stmt checkScaleFactorOp(const ast::Call &c);
    ir::Stmt checkCopy(const ast::Call &c, ir::CopyKind kind);
    ir::Stmt checkGemm(const ast::Call &c, bool blockScaled);
    ir::Stmt checkFill(const ast::Call &c, bool clear);
    ir::Stmt checkReduce(const ast::Call &c, ir::ReduceOp op);
    // `previousInto`: the var of `v = atomic_add(..., return_prev = true)`.
    ir::Stmt checkAtomicAdd(const ast::Call &c, const ir::Buffer *previousInto = nullptr);
    // atomic_store(dst[i], value [, memory_order]) and `v = atomic_load(src[i] [, memory_order])`.
    ir::Stmt checkAtomicStore(const ast::Call &c);
    ir::Stmt checkAtomicLoad(const ast::Call &c, const ir::Buffer &into);
    std::optional<ir::MemoryOrder> checkMemoryOrder(const ast::Expr *order, const std::vector<std::string> &allowed, const char *what,
                                                    ir::MemoryOrder absent = ir::MemoryOrder::SeqCst);
    bool checkAtomicElement(const ast::Expr &e, const char *what, ir::Buffer &buffer, std::vector<ir::Expr> &indices);
    ir::Stmt checkAtomicAddLanes(const ast::Call &c, int64_t lanes);
    ir::Stmt tmaReduceAdd(const ast::Call &c, const CallArgs &args, const ir::Region &src, const ir::Region &dst);
    ir::Stmt checkDp4a(const ast::Call &c);
    ir::Stmt checkClcTryCancel(const ast::Call &c);
    ir::Stmt checkBarrierArriveExpectTx(const ast::Call &c);
    ir::Expr checkClcAnswer(const ast::Expr &e, const std::string &op);
    ir::Stmt checkImportSource(const ast::Call &c);
    ir::Stmt checkCallExtern(const ast::Call &c);
    // rng_init(seed [, seq [, off]]) and the draws rng_rand() / rng_rand_float()
    // (TileLang's T.rng_*): a draw is a statement (ir::RngDraw) into a
    // register of its own, placed before the statement whose expression made
    // it (placeDraws), so no pass sees a value with a side effect.
    ir::Stmt checkRngInit(const ast::Call &c);
    std::optional<Value> checkRngDraw(const ast::Call &c);
    ir::Stmt placeDraws(ir::Stmt s, size_t from);
    // A call of a user `fn`: its body, checked in a scope of the file's
    // constants and its parameters bound to the arguments, in place of the call.
    ir::Stmt checkFnCall(const ast::Call &c, const ast::FnDecl &fn);
    // A type annotation: `keyword`, or the dtype constant `name` names (an
    // error at `range` if it names something else).
    std::optional<DType> typeAnnotation(std::optional<DType> keyword, const std::string &name, SourceRange range);
    // Whether `e` is a dtype: a keyword or a dtype constant.
    bool namesDType(const ast::Expr &e);
    // The element `e` names (buffer[indices] of the right rank, or a var),
    // for a builtin that takes an element's address or updates it in place.
    std::optional<std::pair<ir::Buffer, std::vector<ir::Expr>>> checkElementRef(const ast::Expr &e, const char *what);
    ir::Stmt checkBarrierOp(const ast::Call &c, bool wait);
    ir::Stmt checkThreadAllReduce(const ast::Call &c);
    ir::Stmt checkCumsum(const ast::Call &c);
    ir::Stmt checkFinalizeReducer(const ast::Call &c);
    ir::Stmt checkIm2Col(const ast::Call &c);
    ir::Stmt checkAnnotateLayout(const ast::Call &c);
    bool checkBarrierRef(const ast::Expr &e, ir::Buffer &buffer, ir::Expr &index);

public:
    // Arity and keyword checks shared by every builtin.
    std::optional<CallArgs> matchArgs(const ast::Call &c, size_t minPositional, size_t maxPositional,
                                      const std::vector<std::string> &keywords);
    // "'callee' has no keyword argument", with TileLang's spelling, a near
    // miss or the keywords it takes.
    void reportUnknownKeyword(const std::string &callee, const ast::Arg &a, const std::vector<std::string> &keywords);

    // ---- scopes
    void pushScope() { scopes_.emplace_back(); }
    void popScope() { scopes_.pop_back(); }
    bool declare(const ast::Ident &name, Symbol sym);
    const Symbol *lookup(const std::string &name) const;
    void reportUnknown(const std::string &name, SourceRange where, const char *what);
    // Reports `what` ("tensor 'A'") when it has more than kMaxRank dimensions.
    bool checkRank(size_t rank, SourceRange where, const std::string &what);

    DiagnosticEngine &diags() { return diags_; }

private:
    const SourceManager &sources_;
    DiagnosticEngine &diags_;
    std::vector<std::map<std::string, Symbol>> scopes_;
    int parallelDepth_ = 0;
    // The loops around the statement being checked, innermost last, by kind
    // ("serial", "while", ...); an inlined fn's body starts after a null
    // entry: a break in a fn cannot leave a loop of its caller.
    std::vector<const char *> enclosingLoops_;
    int vectorizedDepth_ = 0;   // inside vectorized(V): element statements only
    // Each thread index name: the stride of its digit of threadIdx.x and its extent.
    std::map<const ir::VarNode *, std::pair<int64_t, int64_t>> threadIndexDigits_;
    // The first statement of each thread_allreduce: work of every thread of the block.
    std::set<const ir::StmtNode *> threadCollectives_;
    std::set<const ir::StmtNode *> programBranches_;   // the program's own `if` statements (not sema's lowerings)
    ir::Kernel *kernel_ = nullptr;
    ir::Buffer rngState_;   // the kernel's generator state, from its first rng_init
    struct PendingDraw {
        ir::Buffer value;
        ir::Stmt draw;
    };
    std::vector<PendingDraw> pendingDraws_;   // draws of the statement being checked, in evaluation order
    // Where the expression being checked is evaluated conditionally or
    // repeatedly, so it may not draw (it would draw once, before the statement).
    // The host evaluates the launch configuration, so no var can take a draw
    // there; the message then offers no such advice.
    struct DrawBan {
        const char *place = nullptr;
        bool onHost = false;
    };
    DrawBan drawsNotHere_;
    // The value of every `let` binding (its variable is a node of its own):
    // a slice's extent is worked out through them (`let h1 = h0 + 64;
    // A[h0:h1]` spans 64, as the same names do in TileLang's Python).
    std::vector<std::pair<ir::VarRef, ir::Expr>> letValues_;
    bool checkingParams_ = false;   // checking the kernel's parameter list
    const LoadedProgram *program_ = nullptr;
    // The import_source files the kernels use, in first-use order (indices into program_->sourceImports).
    std::vector<size_t> usedSourceImports_;
    std::map<std::string, const ast::FnDecl *> fns_;   // every file's fns
    std::vector<const ast::FnDecl *> inlining_;       // the fns being inlined, outermost first
    std::map<std::string, Symbol> launchNames_;       // the kernel's block and thread index names
    const ast::Stmt *swizzleStmt_ = nullptr;   // the kernel's use_swizzle, checked with the launch shape, skipped in the body
    std::set<const ast::Stmt *> registerBudgetStmts_;   // the kernel's disable_warp_group_reg_alloc(), skipped in the body
    bool badCluster_ = false;   // the kernel's cluster(...) was reported: block ranks are not checked against it
};

// Levenshtein distance, for "did you mean" notes.
size_t editDistance(const std::string &a, const std::string &b);

} // namespace tilet::sema
