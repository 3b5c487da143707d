// IR.h -- tilet's intermediate representation.
//
// Vocabulary (used with these meanings everywhere in tilet):
//
//   kernel      one __global__ function: parameters, launch shape, body.
//   thread      one CUDA thread of a block; `threadIdx.x` ranges over
//               [0, threads). Blocks are one-dimensional in threads.
//   warp        32 consecutive threads; a warp group is 128 (4 warps).
//   buffer      named storage with a dtype, a shape and a memory scope:
//                 global   -- a kernel parameter tensor in device memory;
//                 shared   -- per block, planned into dynamic shared memory;
//                 fragment -- a tile distributed over the block's threads'
//                             registers; its TileLayout says which thread
//                             holds which element;
//                 local    -- per thread, the whole buffer in each thread;
//                 tmem     -- Blackwell tensor memory;
//                 barrier  -- mbarriers in shared memory.
//   region      a static-extent box of a buffer: per-dimension start
//               expressions and constant extents.
//   tile op     a statement over whole regions (Copy, Gemm, Fill, Reduce,
//               AtomicAdd). Passes lower every tile op into loops, stores and
//               instructions before printing.
//   parallel    a For of kind Parallel: its iterations are independent and
//   loop        are spread over the block's threads according to the loop's
//               TileLayout (decided by infer_layouts).
//   lane        one element of a vectorized (Vectorized) loop; lanes become a
//               single 4/8/16-byte memory access where alignment is proven.
//   stage       (pipelined loops) which iteration distance a statement runs
//               ahead at; `order` is its position in the rewritten body.
//   role        (warp specialization) the warp groups that run a region.
//
// Semantics: integer arithmetic is C's (truncating division); narrow floats
// are computed in f32 (DType.h); a Select evaluates only the chosen side; a
// Load outside its buffer is undefined unless guarded, which passes do.
//
// Expressions and statements are immutable and shared (std::shared_ptr to
// const). Buffers are shared and carry the facts passes decide about them
// (layout, shared-memory offset): those fields are typed, never strings.
#pragma once

#include "ir/DType.h"
#include "support/SourceManager.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilet {
struct Instruction;   // target/Catalog.h: a tensor-core instruction of the catalog
}

namespace tilet::ir {

// ------------------------------------------------------------------ kinds

enum class ExprKind {
#define TILET_IR_EXPR(name) name,
#include "ir/Nodes.def"
};

enum class StmtKind {
#define TILET_IR_STMT(name) name,
#include "ir/Nodes.def"
};

const char *exprKindName(ExprKind k);
const char *stmtKindName(StmtKind k);

// ------------------------------------------------------------------ bases

struct ExprNode {
    ExprNode(ExprKind k, DType t, SourceRange s) : kind(k), dtype(t), span(s) {}
    virtual ~ExprNode() = default;
    const ExprKind kind;
    const DType dtype;
    const SourceRange span;
};
using Expr = std::shared_ptr<const ExprNode>;

struct StmtNode {
    StmtNode(StmtKind k, SourceRange s) : kind(k), span(s) {}
    virtual ~StmtNode() = default;
    const StmtKind kind;
    const SourceRange span;
};
using Stmt = std::shared_ptr<const StmtNode>;

// Checked downcasts: as<T>(node) is null when the kind differs.
template <class T> const T *as(const Expr &e) { return e && e->kind == T::kKind ? static_cast<const T *>(e.get()) : nullptr; }
template <class T> const T *as(const Stmt &s) { return s && s->kind == T::kKind ? static_cast<const T *>(s.get()) : nullptr; }

// ------------------------------------------------------------------ scalars

struct VarNode;
using VarRef = std::shared_ptr<const VarNode>;

// ------------------------------------------------------------------ layouts

// One factor of a TileLayout. A thread mode takes `extent` consecutive values
// of its digit of threadIdx.x; a local mode takes a digit of the per-thread
// element index. The digit adds `digit * coordStride` to coordinate `dim`, or,
// for a thread mode with dim == kReplicate, selects one of `extent` threads
// that hold identical copies.
struct LayoutMode {
    static constexpr int kReplicate = -1;
    int64_t extent = 1;
    int dim = 0;
    int64_t coordStride = 1;
};

// How a tile of `shape` is spread over `threads` threads. Used for fragments
// (which registers of which thread hold an element) and for parallel loops
// (which thread runs an iteration, in which order).
//
//   thread digit k of mode k = (t / prod(extent of thread modes before k)) % extent
//   local digit  k of mode k = (l / prod(extent of local modes before k)) % extent
//   coordinate d             = sum over modes on d of digit * coordStride
//
// Every coordinate of the shape is produced exactly once per replica.
struct TileLayout {
    std::vector<int64_t> shape;
    int64_t threads = 1;
    std::vector<LayoutMode> threadModes;   // fastest-varying thread digit first
    std::vector<LayoutMode> localModes;    // fastest-varying local digit first

    int64_t localSize() const;
    int64_t replication() const;           // product of replicate thread modes
    int64_t vectorWidth() const;           // extent of local mode 0 if it is unit-stride on the last dim
    bool operator==(const TileLayout &o) const;
    std::string str() const;               // e.g. "[128x64] t:(32@j*2,4@i) l:(2@j,16@i*4)"
};

// ------------------------------------------------------------------ buffers

enum class MemScope { Global, Shared, Fragment, Local, TMem, Barrier };
const char *memScopeName(MemScope s);

// How a shared tile's 16-byte chunks are permuted within each row to avoid
// bank conflicts: chunk c of row r is stored at chunk (c XOR f(r)) of its 128,
// 64 or 32-byte segment (see Layout.h, swizzledOffset).
enum class SharedSwizzle { None, B32, B64, B128 };
const char *swizzleName(SharedSwizzle s);

struct BufferNode;
// Buffers are immutable once the IR refers to them: a pass that decides a
// fact about a buffer (its layout, offset, alignment...) makes a new version
// and replaces every reference at once (ir/BufferEdits.h), so no pass sees a
// fact change under it and `--dump-ir-after` sees every decision.
using Buffer = std::shared_ptr<const BufferNode>;

struct BufferNode {
    std::string name;
    DType dtype = DType::F32;
    std::vector<Expr> shape;      // constant for all but global tensors (dynamic dims are Vars)
    MemScope scope = MemScope::Local;
    SourceRange span;

    // Barriers: the arrive count of each barrier in the array.
    std::vector<int64_t> arriveCounts;
    bool clusterScope = false;   // barriers other blocks of the cluster arrive on or complete transactions on
    // alloc_cluster_barrier: the program's barriers for other blocks of the
    // cluster; a TMA load on one is the CTA pair's (its bytes count on the
    // pair leader's barrier).
    bool clusterBarrier = false;
    // A view of shared buffer `remoteOf` in block `remoteBlock` of the cluster
    // (distributed shared memory): allocated as a pointer to it, no bytes of its own.
    Buffer remoteOf;
    Expr remoteBlock;
    // A view of global tensor `viewOf`'s memory with this buffer's own shape
    // and dtype (TileLang's T.Tensor(shape, dtype, x.data)), or of a packed
    // tensor's or shared buffer's bytes (bytesView): a pointer into it, no
    // memory of its own. Declared by an Allocate. For a fragment: a reshaped
    // view (reshape(f, shape)), the registers of `viewOf` with another shape.
    Buffer viewOf;
    // alloc_reducer: a fragment that parallel loops update with many
    // iterations per element (`r[i] += x`, `r[i] = max(r[i], x)`); each thread
    // keeps partial results in its copy until finalize_reducer combines them.
    // Also set on such a fragment's register array.
    struct Reducer {
        enum class Op { Sum, Max, Min } op = Op::Sum;
        // `replication = all`: every thread holds every element (TileLang's
        // layout); `none`: one copy of each element; unset: as inferred.
        enum class Replication { Inferred, All, None } replication = Replication::Inferred;
    };
    std::optional<Reducer> reducer;

    // Decided by passes:
    std::optional<TileLayout> layout;   // fragments: infer_layouts
    Buffer registers;                   // fragments: the per-thread register array holding them
    int64_t sharedOffset = -1;          // shared: plan_shared_memory, bytes from the dynamic base
    SharedSwizzle swizzle = SharedSwizzle::None;   // shared: select_gemm_inst, for gemm operands
    int64_t pipelineVersions = 0;       // shared: pipeline_loops; dimension 0 then selects the version
    int64_t alignment = 0;              // bytes the storage must be aligned to (0: natural)
    Expr tmemAddress;                   // tmem: plan_tensor_memory, the address of its lane 0, column 0
    bool readOnly = false;              // global: never stored to (prints `const`)

    int rank() const { return static_cast<int>(shape.size()); }
    // Constant shape, or nullopt when a dimension is dynamic.
    std::optional<std::vector<int64_t>> constShape() const;
    std::optional<int64_t> constElements() const;
};

// The tensor whose memory a global buffer is: the parameter a view (viewOf)
// looks into, else the buffer itself.
const BufferNode &storageRoot(const BufferNode &b);
Buffer storageRoot(const Buffer &b);

// A new buffer, still private to its creator: set its remaining fields, then
// put it in the IR (where it becomes a `Buffer`, pointer to const).
std::shared_ptr<BufferNode> makeBuffer(std::string name, DType dtype, std::vector<Expr> shape, MemScope scope, SourceRange span);

// A box of a buffer with constant extents.
struct Region {
    Buffer buffer;
    std::vector<Expr> mins;
    std::vector<int64_t> extents;
    SourceRange span;
    // Extents with the unit dimensions removed (the "tile shape").
    std::vector<int64_t> tileShape() const;
    // Whether it is all of a buffer of constant shape.
    bool coversBuffer() const;
    // Whether its elements are one run of the buffer's row-major storage:
    // every dimension after the first of extent > 1 is covered whole.
    bool contiguous() const;
    // The indices of its element at row-major position `offset` (counted
    // over its extents).
    std::vector<Expr> indicesAt(int64_t offset) const;
};

// Tensor memory holds [rows, cols] tiles, or [stages, rows, cols] (TileLang's
// alloc_tmem([2, M, N]) for double buffering): stage s is columns
// s * cols .. (s + 1) * cols - 1 of the same lanes. In 32-bit columns: a
// buffer's width, and where region `r` of one starts.
int64_t tmemWords(const BufferNode &b);
Expr tmemColumn(const Region &r);
// Whether region `r` of one is all the rows (lanes) of one stage: what a
// tcgen05.mma writes and a tcgen05.ld reads, for any run of columns.
bool tmemAllRowsOfOneStage(const Region &r);

// The indices of `r` at tile coordinate `coord` (one entry per non-unit
// dimension, in order); unit dimensions stay at their start index.
std::vector<Expr> regionIndices(const Region &r, const std::vector<Expr> &coord);

// The bytes of a packed buffer (int4, f4e2m1, ...; isSubByte): a uint8 view
// of its memory whose last dimension counts bytes, declared by an Allocate
// around the code that uses it. Packed data is moved through it in whole
// bytes, never element by element.
Buffer bytesView(const Buffer &packed);
// Region `r` of a packed buffer as the same bytes of `view` (its bytesView):
// the last dimension's start and extent scaled. Both are whole bytes (sema
// checks copies, select-gemm-inst gemm operands).
Region bytesRegion(const Region &r, const Buffer &view);

// ------------------------------------------------------------------ expressions

struct IntImm : ExprNode {
    static constexpr ExprKind kKind = ExprKind::IntImm;
    IntImm(DType t, int64_t v, SourceRange s = {}) : ExprNode(kKind, t, s), value(v) {}
    const int64_t value;
};

struct FloatImm : ExprNode {
    static constexpr ExprKind kKind = ExprKind::FloatImm;
    FloatImm(DType t, double v, SourceRange s = {}) : ExprNode(kKind, t, s), value(v) {}
    const double value;
};

struct VarNode : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Var;
    VarNode(DType t, std::string n, SourceRange s = {}, int64_t d = 1, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX)
        : ExprNode(kKind, t, s), name(std::move(n)), divisor(d), promisedLo(lo), promisedHi(hi) {}
    const std::string name;   // identity is the node, not the name
    // Its values are multiples of this: a dynamic dimension's promise (`dyn K % 64`), which the launch checks.
    const int64_t divisor = 1;
    // Its values lie in [promisedLo, promisedHi], whatever the analysis can
    // prove of the value bound to it: a block index use_swizzle renumbers
    // (a permutation of the grid's indices) keeps the grid's range.
    const int64_t promisedLo = INT64_MIN, promisedHi = INT64_MAX;
};
using Var = VarNode;

enum class SpecialKind { ThreadIdx, BlockIdxX, BlockIdxY, BlockIdxZ, ClusterCtaRank };
const char *specialKindName(SpecialKind k);

struct SpecialReg : ExprNode {
    static constexpr ExprKind kKind = ExprKind::SpecialReg;
    SpecialReg(SpecialKind k, SourceRange s = {}) : ExprNode(kKind, DType::Int32, s), special(k) {}
    const SpecialKind special;
};

enum class UnaryOp { Neg, Not, BitNot };
const char *unaryOpName(UnaryOp op);

struct Unary : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Unary;
    Unary(DType t, UnaryOp o, Expr a, SourceRange s = {}) : ExprNode(kKind, t, s), op(o), a(std::move(a)) {}
    const UnaryOp op;
    const Expr a;
};

enum class BinaryOp { Add, Sub, Mul, Div, Mod, Min, Max, Shl, Shr, BitAnd, BitOr, BitXor, And, Or, Lt, Le, Gt, Ge, Eq, Ne };
const char *binaryOpName(BinaryOp op);
bool isComparison(BinaryOp op);

struct Binary : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Binary;
    Binary(DType t, BinaryOp o, Expr a, Expr b, SourceRange s = {})
        : ExprNode(kKind, t, s), op(o), a(std::move(a)), b(std::move(b)) {}
    const BinaryOp op;
    const Expr a, b;
};

struct Select : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Select;
    Select(DType t, Expr c, Expr x, Expr y, SourceRange s = {})
        : ExprNode(kKind, t, s), cond(std::move(c)), thenValue(std::move(x)), elseValue(std::move(y)) {}
    const Expr cond, thenValue, elseValue;
};

struct Cast : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Cast;
    Cast(DType t, Expr v, SourceRange s = {}) : ExprNode(kKind, t, s), value(std::move(v)) {}
    const Expr value;
};

// FastExp and FastExp2 are f32 approximations: TileLang's T.__exp (CUDA's
// __expf), and __exp2, the PTX ISA's ex2.approx.ftz.f32 (FlashAttention-3's
// exponential), which flushes subnormal inputs and results to zero.
// BitCast is TileLang's T.reinterpret: the bits of its argument read as the
// call's dtype, of the same width. (Lowering also reads an f4e2m1 register
// as the uint8 holding it in its low four bits, and back.)
enum class MathFunc { Abs, Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Tanh, Erf, Sin, Cos, Floor, Ceil, Pow, Sigmoid, FastExp, FastExp2, BitCast };
const char *mathFuncName(MathFunc f);

struct MathCall : ExprNode {
    static constexpr ExprKind kKind = ExprKind::MathCall;
    MathCall(DType t, MathFunc f, std::vector<Expr> a, SourceRange s = {})
        : ExprNode(kKind, t, s), func(f), args(std::move(a)) {}
    const MathFunc func;
    const std::vector<Expr> args;
};

struct Load : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Load;
    Load(Buffer b, std::vector<Expr> i, SourceRange s = {})
        : ExprNode(kKind, b->dtype, s), buffer(std::move(b)), indices(std::move(i)) {}
    const Buffer buffer;
    const std::vector<Expr> indices;
};

// dp4a (PTX ISA, "dp4a"; TileLang's T.dp4a): c plus the dot product of the
// four 8-bit integers that start at load `a` and the four that start at load
// `b` (consecutive elements of the last dimension of a local or shared
// buffer, read through their address), in 32 bits: uint32 when both are
// unsigned, int32 otherwise. `a` and `b` are always Loads (the verifier
// checks): passes that rename or re-index a load rewrite them as any other.
struct Dp4a : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Dp4a;
    static constexpr int64_t kElements = 4;   // elements of `a` and of `b` read
    Dp4a(DType t, Expr a, Expr b, Expr c, SourceRange s = {}) : ExprNode(kKind, t, s), a(std::move(a)), b(std::move(b)), c(std::move(c)) {}
    const Expr a, b, c;
};

// A field of the answer of a clc_try_cancel (PTX ISA,
// clusterlaunchcontrol.query_cancel; TileLang's T.clc_is_canceled,
// T.clc_get_first_ctaid_x/y/z): whether a cluster was canceled (int32 1 or
// 0), or the x, y or z index of its first block (uint32, 0 when none
// was). `response` is always the Load of the answer's first element
// (the verifier checks): its 16 bytes are read.
enum class ClcField { IsCanceled, FirstCtaidX, FirstCtaidY, FirstCtaidZ };
struct ClcQuery : ExprNode {
    static constexpr ExprKind kKind = ExprKind::ClcQuery;
    ClcQuery(ClcField f, Expr response, SourceRange s = {})
        : ExprNode(kKind, f == ClcField::IsCanceled ? DType::Int32 : DType::UInt32, s), field(f), response(std::move(response)) {}
    const ClcField field;
    const Expr response;
    const char *fieldName() const;   // is_canceled, first_ctaid_x, ...
};

// A warp shuffle (PTX ISA shfl.sync; all 32 lanes of the warp take part):
// `value` of lane j of the same warp. The warp is cut into segments of
// `width` lanes (a power of two); for lane l of the segment starting at lane
// s, j is l ^ operand (Xor), l + operand (Down), l - operand (Up) or
// s + (operand & (width - 1)) (Index). Where j leaves the segment upwards
// (Xor, Down) or downwards (Up), the lane gets its own value.
enum class ShuffleMode { Xor, Index, Down, Up };
const char *shuffleModeName(ShuffleMode m);   // "xor", "idx", "down", "up"

struct Shuffle : ExprNode {
    static constexpr ExprKind kKind = ExprKind::Shuffle;
    // The butterfly exchange reductions use: xor with a constant, whole warp.
    Shuffle(Expr v, int64_t laneMask, SourceRange s = {});
    Shuffle(ShuffleMode m, Expr v, Expr operand, int64_t width, SourceRange s = {})
        : ExprNode(kKind, v->dtype, s), mode(m), value(std::move(v)), operand(std::move(operand)), width(width) {}
    const ShuffleMode mode = ShuffleMode::Xor;
    const Expr value;
    const Expr operand;        // int32
    const int64_t width = 32;
};

// ------------------------------------------------------------------ statements

struct Seq : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Seq;
    Seq(std::vector<Stmt> b, SourceRange s = {}) : StmtNode(kKind, s), stmts(std::move(b)) {}
    const std::vector<Stmt> stmts;
};

struct LetStmt : StmtNode {
    static constexpr StmtKind kKind = StmtKind::LetStmt;
    LetStmt(VarRef v, Expr val, Stmt b, SourceRange s = {})
        : StmtNode(kKind, s), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
    const VarRef var;
    const Expr value;
    const Stmt body;
};

struct Allocate : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Allocate;
    Allocate(Buffer b, Stmt body, SourceRange s = {}) : StmtNode(kKind, s), buffer(std::move(b)), body(std::move(body)) {}
    const Buffer buffer;
    const Stmt body;
};

enum class ForKind { Serial, Unrolled, Parallel, Vectorized };
const char *forKindName(ForKind k);

// Software pipelining request and plan of a `pipelined` loop.
struct PipelineInfo {
    int64_t stages = 0;
    std::vector<int64_t> order;   // explicit `order = [...]`, empty when not given
    std::vector<int64_t> stage;   // explicit `stage = [...]`, empty when not given
    std::optional<bool> warpSpecialize;   // `warp_specialize = ...`; unset: automatic on TMA targets
};

struct For : StmtNode {
    static constexpr StmtKind kKind = StmtKind::For;
    For(VarRef v, Expr mn, Expr ext, ForKind k, Stmt b, SourceRange s = {})
        : StmtNode(kKind, s), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), forKind(k), body(std::move(b)) {}
    const VarRef var;
    const Expr min, extent;
    const ForKind forKind;
    const Stmt body;
    // Typed scheduling facts.
    std::optional<PipelineInfo> pipeline;   // a `pipelined` loop
    std::optional<TileLayout> threadLayout; // outermost loop of a parallel nest, after infer_layouts
    bool threadLocal = false;               // iterations over one thread's own elements: no
                                            // thread talks to another inside (no sync needed)
    bool requested = false;                 // the program wrote this kind (`vectorized(V)`): a
                                            // scalar fallback is explained
    bool preferAsync = false;               // parallel(..., prefer_async = true): its element copies
                                            // global -> shared may be cp.async (select-copy-inst)
    bool pipelineProducer = false;          // a gather: a parallel loop of cp.async element copies
                                            // global -> shared that its pipelined loop issues ahead
                                            // (select-copy-inst decides, pipeline-loops issues)
    std::optional<bool> pingpong;           // pipelined(..., pingpong = ...): whether its consumer warp
                                            // groups take turns (pingpong-consumers); unset: where they can
    std::optional<bool> overlap;            // pipelined(..., overlap = ...): whether its consumers' two wgmma
                                            // groups overlap the work between them (overlap-intra-warpgroup)
    int64_t consumerStages = 0;             // the consumers' loop of automatic warp specialization:
                                            // the stages of the ring the producer fills
};

// A copy of `f` with new bounds and body, keeping its scheduling facts.
std::shared_ptr<For> rebuildFor(const For &f, Expr min, Expr extent, Stmt body);

struct IfThenElse : StmtNode {
    static constexpr StmtKind kKind = StmtKind::IfThenElse;
    IfThenElse(Expr c, Stmt t, Stmt e, SourceRange s = {})
        : StmtNode(kKind, s), cond(std::move(c)), thenBody(std::move(t)), elseBody(std::move(e)) {}
    const Expr cond;
    const Stmt thenBody;
    const Stmt elseBody;   // may be null
};

// `while (cond) body`: the condition is evaluated before each iteration, in
// every thread that reaches the loop. Passes reason about it as a loop of
// unknown trip count.
struct While : StmtNode {
    static constexpr StmtKind kKind = StmtKind::While;
    While(Expr c, Stmt b, SourceRange s = {}) : StmtNode(kKind, s), cond(std::move(c)), body(std::move(b)) {}
    const Expr cond;
    const Stmt body;
};

// AsyncCopy: an assignment global -> shared that belongs to a cp.async group
// (a pipelined loop's producer); vectorize-accesses issues it as cp.async
// where it can move 4, 8 or 16 bytes at once, and as a plain store otherwise.
// AtomicStore: TileLang's atomic_store(dst[i], value, memory_order), a
// single-copy atomic write with the store's order (st.{relaxed,release}.gpu;
// seq_cst: fence.sc.gpu first).
enum class StoreOp { Assign, AtomicAdd, AsyncCopy, AtomicStore };

// The memory order of an atomic update (PTX ISA, "Memory Consistency Model";
// TileLang's memory_order, C++'s std::memory_order without consume, which
// C++ compilers and libcu++ treat as acquire). Relaxed is CUDA's atomicAdd;
// the others are atom.{acquire,release,acq_rel}.gpu, seq_cst a fence.sc.gpu
// before an acquire atom, as libcu++'s cuda::atomic_ref lowers them.
enum class MemoryOrder { Relaxed, Acquire, Release, AcqRel, SeqCst };
const char *memoryOrderName(MemoryOrder o);   // "relaxed", "acquire", ...

struct Store : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Store;
    Store(Buffer b, std::vector<Expr> i, Expr v, StoreOp o = StoreOp::Assign, SourceRange s = {}, MemoryOrder m = MemoryOrder::Relaxed)
        : StmtNode(kKind, s), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)), op(o), order(m) {}
    // This store (its op, order and span) of `v` to b[i]: what a pass that
    // moves or renames a store builds, so that nothing of it is lost.
    Stmt movedTo(Buffer b, std::vector<Expr> i, Expr v) const;
    const Buffer buffer;
    const std::vector<Expr> indices;
    const Expr value;
    const StoreOp op;
    const MemoryOrder order;   // AtomicAdd and AtomicStore only
};

// `v = atomic_add(dst[i...], value, return_prev = true)` (TileLang's
// return_prev): one atomic read-modify-write of a global or shared element
// whose previous value lands in the register element `previous` (CUDA's
// atomicAdd result, PTX atom.add). Both elements are kept as Loads, as
// call_extern's pointers are, so that the passes that rename and flatten
// buffers rewrite them like any other access; they are no reads of their
// own (Effects: the target read and written, the register written).
struct AtomicFetchAdd : StmtNode {
    static constexpr StmtKind kKind = StmtKind::AtomicFetchAdd;
    AtomicFetchAdd(Expr t, Expr v, Expr p, MemoryOrder o, SourceRange s = {})
        : StmtNode(kKind, s), target(std::move(t)), value(std::move(v)), previous(std::move(p)), order(o) {}
    const Expr target;     // Load of the element added to
    const Expr value;
    const Expr previous;   // Load of the register element that receives the element's value before the add
    const MemoryOrder order;
};

// `v = atomic_load(src[i], memory_order = o)` (TileLang's T.atomic_load):
// one single-copy atomic read of a global element (ld.{relaxed,acquire}.gpu;
// seq_cst: fence.sc.gpu first) into the register element `destination`.
// Both are kept as Loads, as AtomicFetchAdd's are; the element is no read
// of its own (Effects: the element read, the register written).
struct AtomicLoad : StmtNode {
    static constexpr StmtKind kKind = StmtKind::AtomicLoad;
    AtomicLoad(Expr src, Expr dst, MemoryOrder o, SourceRange s = {}) : StmtNode(kKind, s), source(std::move(src)), destination(std::move(dst)), order(o) {}
    const Expr source;        // Load of the element read
    const Expr destination;   // Load of the register element that receives its value
    const MemoryOrder order;
};

// call_extern (TileLang's T.call_extern) as a statement: `function(args...)`,
// a device function the program brings in with import_source (or one of the
// CUDA toolkit's). An argument is a value, or (access_ptr) the address of a
// buffer element, kept as the Load of that element so that the passes that
// rename and flatten buffers rewrite it like any other access. Through a
// pointer the function may read and/or write the whole buffer; it touches
// no other memory (the contract docs/language.md states).
enum class ExternArgKind { Value, ReadPointer, WritePointer, ReadWritePointer };
const char *externArgKindName(ExternArgKind k);   // "value", "r", "w", "rw"

struct CallExtern : StmtNode {
    static constexpr StmtKind kKind = StmtKind::CallExtern;
    CallExtern(std::string f, std::vector<Expr> a, std::vector<ExternArgKind> k, SourceRange s = {})
        : StmtNode(kKind, s), function(std::move(f)), args(std::move(a)), kinds(std::move(k)) {}
    const std::string function;
    const std::vector<Expr> args;
    const std::vector<ExternArgKind> kinds;   // one per argument
};

// TileLang's T.rng_init(seed, seq, off): seeds the thread's random number
// generator, cuRAND's Philox4x32-10 (curand_init: key = seed, counter at
// subsequence `sequence`, then `offset` numbers skipped). The generator's
// state is the per-thread register array `state` (counter, key, the four
// numbers of the current counter and which of them is next), one per
// kernel; every draw reads and advances it, so passes order draws by the
// state's accesses like any other register's.
struct RngInit : StmtNode {
    static constexpr StmtKind kKind = StmtKind::RngInit;
    static constexpr int64_t kStateWords = 11;
    RngInit(Buffer st, Expr seed, Expr seq, Expr off, SourceRange s = {})
        : StmtNode(kKind, s), state(std::move(st)), seed(std::move(seed)), sequence(std::move(seq)), offset(std::move(off)) {}
    const Buffer state;
    const Expr seed, sequence, offset;   // each an integer, read as 64 bits
};

// T.rng_rand() (a uint32, cuRAND's curand) or T.rng_rand_float() (a float
// in (0, 1], curand_uniform): the thread's next number, into the register
// element `result` (a Load, as AtomicFetchAdd's previous value). Sema puts
// the draw before the statement whose expression called it.
enum class RngDistribution { Bits, Uniform };
struct RngDraw : StmtNode {
    static constexpr StmtKind kKind = StmtKind::RngDraw;
    RngDraw(Buffer st, Expr r, RngDistribution d, SourceRange s = {})
        : StmtNode(kKind, s), state(std::move(st)), result(std::move(r)), distribution(d) {}
    const Buffer state;
    const Expr result;
    const RngDistribution distribution;
};

// `bytes` bytes from src[srcIndices...] to dst[dstIndices...] as one access;
// both addresses are proven aligned to `bytes`. An async copy is a cp.async
// (global -> shared, 4, 8 or 16 bytes) that completes at a later CpAsyncWait;
// when `srcValid` is false it reads nothing and writes zeros.
struct VectorCopy : StmtNode {
    static constexpr StmtKind kKind = StmtKind::VectorCopy;
    VectorCopy(Buffer d, std::vector<Expr> di, Buffer sb, std::vector<Expr> si, int64_t n, SourceRange s = {}, bool async = false,
               Expr srcValid = nullptr)
        : StmtNode(kKind, s), dst(std::move(d)), dstIndices(std::move(di)), src(std::move(sb)), srcIndices(std::move(si)), bytes(n),
          async(async), srcValid(std::move(srcValid)) {}
    const Buffer dst;
    const std::vector<Expr> dstIndices;
    const Buffer src;
    const std::vector<Expr> srcIndices;
    const int64_t bytes;
    const bool async;
    const Expr srcValid;   // async only; null: always valid
};

// ---- warp-level tensor-core instructions (all 32 lanes of the warp take part)

// ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16: `count` matrices of
// 8 rows x 16 bytes. Lane l gives the address src[srcIndices] of row l % 8 of
// matrix (l / 8) % count. Per matrix m, each lane receives the 32 bits at row
// lane / 4, bytes 4 * (lane % 4) (of the transposed 8x8 b16 matrix with
// `trans`), stored into dst[dstOffset + m * 32 / bits(dst) ...].
struct LdMatrix : StmtNode {
    static constexpr StmtKind kKind = StmtKind::LdMatrix;
    LdMatrix(Buffer d, Expr off, Buffer sb, std::vector<Expr> si, int64_t n, bool t, SourceRange s = {})
        : StmtNode(kKind, s), dst(std::move(d)), dstOffset(std::move(off)), src(std::move(sb)), srcIndices(std::move(si)), count(n),
          trans(t) {}
    const Buffer dst;             // a local register array
    const Expr dstOffset;         // element index into dst
    const Buffer src;             // shared
    const std::vector<Expr> srcIndices;
    const int64_t count;          // 1, 2 or 4
    const bool trans;
};

// stmatrix.sync.aligned.m8n8.x{count}.shared.b16 (sm_90): ldmatrix backwards.
// Lane l gives the address dst[dstIndices] of row l % 8 of matrix
// (l / 8) % count; per matrix m, each lane's 32-bit register
// src[srcOffset + m * 2 ...] (two 16-bit elements) is stored at row lane / 4,
// bytes 4 * (lane % 4) -- the m16n8 accumulator's register pattern.
struct StMatrix : StmtNode {
    static constexpr StmtKind kKind = StmtKind::StMatrix;
    StMatrix(Buffer d, std::vector<Expr> di, Buffer sb, Expr off, int64_t n, SourceRange s = {})
        : StmtNode(kKind, s), dst(std::move(d)), dstIndices(std::move(di)), src(std::move(sb)), srcOffset(std::move(off)), count(n) {}
    const Buffer dst;             // shared, 16-bit elements
    const std::vector<Expr> dstIndices;
    const Buffer src;             // a local register array of the same 16-bit dtype
    const Expr srcOffset;         // element index into src
    const int64_t count;          // 1, 2 or 4
};

// mma.sync.aligned.m{m}n{n}k{k}.row.col: one atom of the warp's product,
// d[dOffset..] += a[aOffset..] * b[bOffset..], with the register fragments of
// the PTX ISA (ir/MmaLayout.h). Operand dtypes are the buffers' dtypes.
// A block-scaled mma.sync's scale factors (PTX ISA, "Block Scaling for
// mma.sync"): each lane's 32-bit word of them for A and for B, which lanes
// of each quad supply this atom's (thread-id-a: the pair 2t, 2t + 1 give
// rows g and g + 8; thread-id-b: lane t gives column g), and the first byte
// of the word it reads (byte-id: 0 where the atom takes all four factors,
// scale_vec::4X; the k-step's factor with one per row, scale_vec::1X). One
// word then serves two atoms along M and four along N.
struct MmaScales {
    Buffer a;
    Expr aOffset;
    Expr aThread;
    Expr aByte;
    Buffer b;
    Expr bOffset;
    Expr bThread;
    Expr bByte;
};

struct Mma : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Mma;
    Mma(const Instruction &inst, DType operand, Buffer d, Expr dOff, Buffer a, Expr aOff, Buffer b, Expr bOff, SourceRange s = {},
        std::optional<MmaScales> sc = std::nullopt)
        : StmtNode(kKind, s), instruction(inst), operand(operand), d(std::move(d)), dOffset(std::move(dOff)), a(std::move(a)),
          aOffset(std::move(aOff)), b(std::move(b)), bOffset(std::move(bOff)), scales(std::move(sc)) {}
    const Instruction &instruction;   // the catalog's mma.sync entry (shape, PTX, helper)
    // A's and B's element type. The registers a and b hold are bytes when it
    // is packed (int4: eight elements to each 32-bit register).
    const DType operand;
    const Buffer d;   // accumulator registers
    const Expr dOffset;
    const Buffer a;
    const Expr aOffset;
    const Buffer b;
    const Expr bOffset;
    const std::optional<MmaScales> scales;   // block-scaled kinds only
};

// ---- TMA (the tensor memory accelerator, sm_90+)

// A tensor map the host encodes (cuTensorMapEncodeTiled) and passes to the
// kernel by value: which tensor, and the box one TMA operation moves.
// TMA's im2col mode over an NHWC image (PTX ISA, "Tensors: im2col mode";
// cuTensorMapEncodeIm2col): a load gathers `pixelsPerColumn` pixels of
// `channelsPerPixel` channels each, the pixels traversed in W, then H, then
// N order with `stride` steps inside the bounding box of filter-window
// corners [lower, size - 1 + upper] of each spatial dimension.
struct Im2colBox {
    int64_t lowerW = 0, lowerH = 0, upperW = 0, upperH = 0;
    int64_t stride = 1;
    int64_t channelsPerPixel = 0, pixelsPerColumn = 0;
    bool operator==(const Im2colBox &) const = default;
};

struct TmaDescriptor {
    std::string name;               // the kernel parameter: "tma_A", ...
    VarRef param;                   // names the parameter in the printed code
    Buffer tensor;                  // the global tensor
    std::vector<int64_t> box;       // elements per dimension, innermost first (tiled mode)
    SharedSwizzle swizzle = SharedSwizzle::None;   // of the shared side
    std::optional<Im2colBox> im2col;   // im2col mode instead of tiled
    // Set: loads the tensor's packed 4- or 6-bit elements into the 8-bit slots
    // of tiles of this unpacked type (f4e2m1_unpacked, ...): each 16 elements'
    // 8 or 12 bytes followed by a gap to 16 (unpackingTensorMapType); the box
    // is counted in elements.
    std::optional<DType> unpacksInto;
};
using TmaDescriptorRef = std::shared_ptr<const TmaDescriptor>;

// The tensor-map data type whose loads fill the slots of an unpacked type:
// CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B (f4e2m1_unpacked) or _16U6_ALIGN16B.
const char *unpackingTensorMapType(DType slots);

// cp.async.bulk.tensor global -> shared: the box at `coords` (elements,
// innermost first) of the descriptor's tensor into dst[dstIndices...],
// completing `bytes` of transactions on the mbarrier (out-of-bounds elements
// read as zeros). Issued by one thread. With an im2col descriptor, `coords`
// are the first pixel's filter-window corner {c, w, h, n} and
// `im2colOffsets` the filter tap {w, h} added to every pixel.
struct TmaLoad : StmtNode {
    static constexpr StmtKind kKind = StmtKind::TmaLoad;
    TmaLoad(TmaDescriptorRef d, Buffer dst, std::vector<Expr> di, std::vector<Expr> c, Buffer bar, Expr bi, int64_t mask, SourceRange s = {},
            std::vector<Expr> offsets = {}, bool leader = false)
        : StmtNode(kKind, s), desc(std::move(d)), dst(std::move(dst)), dstIndices(std::move(di)), coords(std::move(c)), barrier(std::move(bar)),
          barrierIndex(std::move(bi)), multicastMask(mask), im2colOffsets(std::move(offsets)), completesOnLeader(leader) {}
    const TmaDescriptorRef desc;
    const Buffer dst;
    const std::vector<Expr> dstIndices;
    const std::vector<Expr> coords;
    const Buffer barrier;
    const Expr barrierIndex;
    // Nonzero: the box lands in the same shared offsets of every block of the
    // cluster whose rank bit is set, completing on each one's barrier.
    const int64_t multicastMask;
    const std::vector<Expr> im2colOffsets;   // im2col mode only
    // The CTA pair's load (.cta_group::2): the box lands in this block's
    // shared memory, its bytes complete on `barrier` of the pair's leader
    // (the even-rank block), which expects both blocks' bytes.
    const bool completesOnLeader;
};

// cp.async.bulk.tensor shared -> global: src[srcIndices...] into the box at
// `coords` (out-of-bounds elements are not written), in the thread's bulk
// group. Issued by one thread.
struct TmaStore : StmtNode {
    static constexpr StmtKind kKind = StmtKind::TmaStore;
    TmaStore(TmaDescriptorRef d, Buffer src, std::vector<Expr> si, std::vector<Expr> c, SourceRange s = {}, bool add = false)
        : StmtNode(kKind, s), desc(std::move(d)), src(std::move(src)), srcIndices(std::move(si)), coords(std::move(c)), reduceAdd(add) {}
    const TmaDescriptorRef desc;
    const Buffer src;
    const std::vector<Expr> srcIndices;
    const std::vector<Expr> coords;
    // cp.reduce.async.bulk.tensor .add: the box is added into the tensor
    // element by element (atomically with respect to other such adds).
    const bool reduceAdd;
};

// cp.async.bulk (1D TMA, no tensor map): `bytes` contiguous bytes from
// src[srcIndices...] to dst[dstIndices...], global <-> shared. A load
// completes its bytes on the mbarrier; a store joins the thread's bulk group.
// Issued by one thread; both addresses 16-byte aligned.
struct BulkCopy : StmtNode {
    static constexpr StmtKind kKind = StmtKind::BulkCopy;
    BulkCopy(Buffer d, std::vector<Expr> di, Buffer sb, std::vector<Expr> si, int64_t n, Buffer bar, Expr bi, SourceRange s = {})
        : StmtNode(kKind, s), dst(std::move(d)), dstIndices(std::move(di)), src(std::move(sb)), srcIndices(std::move(si)), bytes(n),
          barrier(std::move(bar)), barrierIndex(std::move(bi)) {}
    const Buffer dst;
    const std::vector<Expr> dstIndices;
    const Buffer src;
    const std::vector<Expr> srcIndices;
    const int64_t bytes;
    const Buffer barrier;       // loads only
    const Expr barrierIndex;
};

// mbarrier.expect_tx: the current phase also waits for `bytes` of TMA
// transactions; with `arrive`, the calling thread arrives as well.
struct BarrierExpectTx : StmtNode {
    static constexpr StmtKind kKind = StmtKind::BarrierExpectTx;
    BarrierExpectTx(Buffer b, Expr i, int64_t n, bool a, SourceRange s = {})
        : StmtNode(kKind, s), barrier(std::move(b)), index(std::move(i)), bytes(n), arrive(a) {}
    const Buffer barrier;
    const Expr index;
    const int64_t bytes;
    const bool arrive;
};

// fence.proxy.async.shared::cta: the thread's shared-memory writes (generic
// proxy) are ordered before its later async-proxy accesses (TMA, wgmma's
// shared operands); with `global`, fence.proxy.async of every state space,
// for global memory written by both proxies too.
struct FenceProxyAsync : StmtNode {
    static constexpr StmtKind kKind = StmtKind::FenceProxyAsync;
    explicit FenceProxyAsync(SourceRange s = {}, bool g = false) : StmtNode(kKind, s), global(g) {}
    const bool global;
};

// Cluster launch control (PTX ISA, clusterlaunchcontrol.try_cancel;
// TileLang's T.clc_try_cancel and T.clc_try_cancel_multicast): asks the
// hardware to cancel a cluster of the grid that has not started, whose work
// the asking cluster then does. The 16-byte answer (read by ClcQuery) lands
// in `result` at `resultIndices` through the async proxy and completes 16
// transaction bytes on `barrier`; with `multicast`, in every block of the
// cluster, at the same offsets. Issued by one thread.
struct ClcTryCancel : StmtNode {
    static constexpr StmtKind kKind = StmtKind::ClcTryCancel;
    static constexpr int64_t kBytes = 16;
    ClcTryCancel(Buffer r, std::vector<Expr> ri, Buffer bar, Expr bi, bool mc, SourceRange s = {})
        : StmtNode(kKind, s), result(std::move(r)), resultIndices(std::move(ri)), barrier(std::move(bar)), barrierIndex(std::move(bi)), multicast(mc) {}
    const Buffer result;
    const std::vector<Expr> resultIndices;
    const Buffer barrier;
    const Expr barrierIndex;
    const bool multicast;
};

// Brings a tensor map (a kernel parameter) into the descriptor cache before
// its first TMA, so the first loads do not wait for it. Issued by one thread.
struct TmaPrefetch : StmtNode {
    static constexpr StmtKind kKind = StmtKind::TmaPrefetch;
    explicit TmaPrefetch(TmaDescriptorRef d, SourceRange s = {}) : StmtNode(kKind, s), desc(std::move(d)) {}
    const TmaDescriptorRef desc;
};

// cp.async.bulk.commit_group, then cp.async.bulk.wait_group.read 0: the
// thread's TMA stores have read their shared memory (it may be reused).
struct TmaStoreWait : StmtNode {
    static constexpr StmtKind kKind = StmtKind::TmaStoreWait;
    explicit TmaStoreWait(SourceRange s = {}) : StmtNode(kKind, s) {}
};

// ---- wgmma (sm_90a): warp-group MMA from shared-memory descriptors

// One operand of a wgmma in shared memory: its first element and the matrix
// descriptor's fields (PTX ISA "Matrix Descriptor Format"): the byte offsets
// between swizzle atoms along the leading and the strided dimension, the
// swizzle, and whether the operand is MN-major (the instruction's transpose).
// A wgmma operand: a shared tile read through a matrix descriptor, or (A
// only) a fragment's register array, `indices` naming the first of the 8
// elements (4 32-bit registers) of the atom's k-step.
struct WgmmaOperand {
    Buffer buffer;
    std::vector<Expr> indices;
    int64_t leadingBytes = 16, strideBytes = 0;
    SharedSwizzle swizzle = SharedSwizzle::None;
    bool mnMajor = false;
};

// wgmma.mma_async: one m64 x n x k atom of the calling warp group,
// d[dOffset..] = A * B + (scaleD ? d : 0), asynchronous until WgmmaWait.
struct Wgmma : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Wgmma;
    Wgmma(const Instruction &inst, int64_t m, int64_t n, int64_t k, Buffer d, Expr dOff, WgmmaOperand a, WgmmaOperand b, Expr scale, SourceRange s = {})
        : StmtNode(kKind, s), instruction(inst), m(m), n(n), k(k), d(std::move(d)), dOffset(std::move(dOff)), a(std::move(a)), b(std::move(b)),
          scaleD(std::move(scale)) {}
    const Instruction &instruction;   // the catalog's wgmma entry (its PTX)
    const int64_t m, n, k;
    const Buffer d;
    const Expr dOffset;
    const WgmmaOperand a, b;
    const Expr scaleD;   // 1: accumulate; 0: overwrite
};

// wgmma.fence / commit_group / wait_group: register accesses ordered with the
// asynchronous MMAs, the issued MMAs closed into a group, and a wait until at
// most `pending` groups are in flight. `pinned` (pin-wgmma-registers): the
// accumulator fragments the compiler must not move an access of across this
// fence (before it) or wait (after it) -- the fence orders the hardware, not
// the compiler, which otherwise sinks an accumulator's zeroing past the
// fence and ptxas then serializes the wgmmas (C7519).
enum class WgmmaSyncKind { Fence, Commit, Wait };
struct WgmmaSync : StmtNode {
    static constexpr StmtKind kKind = StmtKind::WgmmaSync;
    WgmmaSync(WgmmaSyncKind k, int64_t p = 0, SourceRange s = {}, std::vector<Buffer> pins = {})
        : StmtNode(kKind, s), sync(k), pending(p), pinned(std::move(pins)) {}
    const WgmmaSyncKind sync;
    const int64_t pending;
    const std::vector<Buffer> pinned;
};

// ---- tcgen05 and tensor memory (sm_100a; PTX ISA, "TensorCore 5th Generation")

// tcgen05.alloc of `columns` columns (a power of two, at least 32) by the
// calling warp, which writes the address to `word` (a shared u32), then
// tcgen05.relinquish_alloc_permit: the block allocates once. With `pair`
// (cta_group::2) the same warp of both blocks of the CTA pair allocates the
// same columns in each.
struct TmemAlloc : StmtNode {
    static constexpr StmtKind kKind = StmtKind::TmemAlloc;
    TmemAlloc(Buffer w, int64_t c, bool p, SourceRange s = {}) : StmtNode(kKind, s), word(std::move(w)), columns(c), pair(p) {}
    const Buffer word;
    const int64_t columns;
    const bool pair;
};

// tcgen05.dealloc of the allocation at `address`, by the warp that allocated it.
struct TmemDealloc : StmtNode {
    static constexpr StmtKind kKind = StmtKind::TmemDealloc;
    TmemDealloc(Expr a, int64_t c, bool p, SourceRange s = {}) : StmtNode(kKind, s), address(std::move(a)), columns(c), pair(p) {}
    const Expr address;
    const int64_t columns;
    const bool pair;
};

// The scale factors of a block-scaled tcgen05.mma (PTX ISA, "tcgen05.mma"
// .block_scale): 32-bit words of four 8-bit factors in tensor memory at
// sfaAddress / sfbAddress, row m's (column n's) in lane m, column m / 32,
// and the instruction descriptor of the k-step with the byte of each word it
// reads (the scale-factor ids), known at run time.
struct Tcgen05Scales {
    Buffer sfa, sfb;
    Expr sfaAddress, sfbAddress;
    Expr descriptor;
};

// tcgen05.mma.cta_group::1, issued by one thread: D (tensor memory at
// dAddress) = A * B + (enableInputD ? D : 0), A and B read through shared
// memory descriptors (the async proxy); asynchronous until a tcgen05.commit's
// mbarrier arrival. `instructionDescriptor` is the 32-bit idesc (PTX ISA,
// "Instruction descriptor": formats, majors, N >> 3, M >> 4).
struct Tcgen05Mma : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Tcgen05Mma;
    Tcgen05Mma(const Instruction &inst, Buffer d, Expr dAddr, WgmmaOperand a, Expr aAddr, WgmmaOperand b, uint32_t idesc, Expr enable,
               Buffer completion, std::optional<Tcgen05Scales> sc = std::nullopt, SourceRange s = {})
        : StmtNode(kKind, s), instruction(inst), d(std::move(d)), dAddress(std::move(dAddr)), a(std::move(a)), aAddress(std::move(aAddr)),
          b(std::move(b)), instructionDescriptor(idesc), enableInputD(std::move(enable)), completesOn(std::move(completion)), scales(std::move(sc)) {}
    const Instruction &instruction;   // the catalog's tcgen05.mma entry
    const Buffer d;                   // the tensor-memory accumulator (for effects and names)
    const Expr dAddress;
    // A is a shared tile read through a descriptor (the SS form) or, when
    // a.buffer is tensor memory, the k-step's columns at aAddress (the TS
    // form; a.indices then name its first element, for effects).
    const WgmmaOperand a;
    const Expr aAddress;   // TS form only
    const WgmmaOperand b;
    bool aInTensorMemory() const { return a.buffer->scope == MemScope::TMem; }
    const uint32_t instructionDescriptor;
    const Expr enableInputD;
    // The mbarrier the issuing thread's tcgen05.commit arrives on: D is
    // written, and A and B read, until a wait on it sees that phase.
    const Buffer completesOn;
    const std::optional<Tcgen05Scales> scales;   // block-scaled kinds only
};

// tcgen05.commit.mbarrier::arrive::one: barrier[index] gets one arrival
// when every tcgen05.mma this thread issued before has completed; with
// `bothBlocks`, barrier[index] of both blocks of the CTA pair does
// (.multicast::cluster). `pair`: the kernel's tcgen05 instructions are
// cta_group::2 (lower-gemms sets it from Kernel::tcgen05Pair).
struct Tcgen05Commit : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Tcgen05Commit;
    Tcgen05Commit(Buffer b, Expr i, bool both, bool p = false, SourceRange s = {})
        : StmtNode(kKind, s), barrier(std::move(b)), index(std::move(i)), bothBlocks(both), pair(p) {}
    const Buffer barrier;
    const Expr index;
    const bool bothBlocks;
    const bool pair;
};

// tcgen05.cp.32x128b.warpx4 (cta_group::1, or ::2: `pair`), issued by one thread (PTX ISA,
// "tcgen05.cp"): a 32-row x 16-byte tile of shared memory -- the 512
// contiguous bytes from src[srcIndices], read by the async proxy through a
// descriptor -- into 4 columns of tensor memory from `column` of `tmem`,
// row r into lane r of each of the four lane quarters (warpx4). The tensor
// core runs it before the thread's later tcgen05.mma; its reads of shared
// memory complete at the thread's next tcgen05.commit (on `completesOn`,
// filled in by lower-gemms from the gemm that follows; null before).
// The CTA pair's copy (`pair`, TileLang's use_2cta; tcgen05.cp.cta_group::2):
// issued by the pair's leader, the same copy runs in both blocks, each from
// its own shared memory into its own tensor memory.
struct Tcgen05Copy : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Tcgen05Copy;
    Tcgen05Copy(Buffer src, std::vector<Expr> idx, Buffer t, Expr col, Buffer completion, bool pair, SourceRange s = {})
        : StmtNode(kKind, s), src(std::move(src)), srcIndices(std::move(idx)), tmem(std::move(t)), column(std::move(col)),
          completesOn(std::move(completion)), pair(pair) {}
    const Buffer src;
    const std::vector<Expr> srcIndices;
    const Buffer tmem;
    const Expr column;   // counted from tmem's first column
    const Buffer completesOn;
    const bool pair;
};
constexpr int64_t kTcgen05CopyWords = 128;   // 32 rows x 16 bytes: the words of one tcgen05.cp 32x128b
// Its source descriptor (PTX ISA, "Shared memory descriptor"): no swizzle,
// 8-row groups of 16-byte rows 128 bytes apart -- the 512 bytes in order.
constexpr int64_t kTcgen05CopyLeadingBytes = 0, kTcgen05CopyStrideBytes = 128;

// The shapes of tcgen05.ld tilet issues (PTX ISA, "tcgen05.ld"). A warp
// reaches only the 32 tensor-memory lanes of its quarter (warp id % 4).
//   32x32b: lane l of the warp reads lane (address >> 16) + l, one 32-bit
//           column per repetition (a row per thread).
//   16x256b: the warp reads 16 lanes from (address >> 16), 8 columns per
//           repetition, 4 registers per thread: register i of lane l holds
//           lane l / 4 + 8 * (i / 2 % 2), column 2 * (l % 4) + i % 2 +
//           8 * (i / 4) -- the m16n8 mma.sync accumulator layout.
enum class TmemLoadShape { Lanes32x32b, Lanes16x256b };
const char *tmemLoadShapeName(TmemLoadShape s);        // "32x32b"
int64_t tmemLoadColumnsPerRepeat(TmemLoadShape s);     // 1, 8
int64_t tmemLoadRegistersPerRepeat(TmemLoadShape s);   // 1, 4

// Which thread moves which cells of a tensor-memory tile: its rows by lane
// and each warp group's share of its columns, fixed by the tile's shape, the
// threads moving it and its first column (ir::TmemTiling). The moves of one
// buffer with the same partition (the same constant first column, or any
// for one warp group over 128 rows), made by the same threads, reach each
// cell from one thread only -- a thread's own moves are ordered by its
// program and tcgen05's waits, so they need no barrier between them.
struct TmemPartition {
    int64_t rows = 0, cols = 0, threads = 0;
    Expr firstColumn;
};
bool samePartition(const TmemPartition &a, const TmemPartition &b);

// tcgen05.ld.sync.aligned.<shape>.x<repeat>.b32 by a whole warp, from column
// address & 0xffff of the lanes from address >> 16, into regs[regOffset ...]
// (repeat * tmemLoadRegistersPerRepeat(shape) registers), complete after
// tcgen05.wait::ld; with `store`, tcgen05.st of the same registers to the
// same cells (the same shapes and register order), complete after
// tcgen05.wait::st.
struct TmemMove : StmtNode {
    static constexpr StmtKind kKind = StmtKind::TmemMove;
    TmemMove(TmemLoadShape sh, bool st, Buffer t, Expr addr, Buffer r, Expr off, int64_t n, TmemPartition p, SourceRange s = {})
        : StmtNode(kKind, s), shape(sh), store(st), tmem(std::move(t)), address(std::move(addr)), regs(std::move(r)), regOffset(std::move(off)),
          repeat(n), partition(std::move(p)) {}
    const TmemLoadShape shape;
    const bool store;    // tcgen05.st (registers -> tensor memory); else tcgen05.ld
    const Buffer tmem;   // the tensor-memory buffer (for effects and names)
    const Expr address;  // the warp's lane base << 16 | column
    const Buffer regs;
    const Expr regOffset;
    const int64_t repeat;
    const TmemPartition partition;   // the copy's, for insert-syncs
};

// tcgen05.wait::ld: this thread's tensor-memory loads have landed in its
// registers; tcgen05.wait::st: its stores are in tensor memory. fence::before_thread_sync / after_thread_sync: order this
// thread's tcgen05 operations before / after the thread synchronisation
// (barrier, mbarrier) that follows / precedes it.
enum class Tcgen05SyncKind { WaitLoad, WaitStore, FenceBefore, FenceAfter };
const char *tcgen05SyncKindName(Tcgen05SyncKind k);
struct Tcgen05Sync : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Tcgen05Sync;
    Tcgen05Sync(Tcgen05SyncKind k, SourceRange s = {}) : StmtNode(kKind, s), sync(k) {}
    const Tcgen05SyncKind sync;
};

// Closes the thread's current group of cp.async copies.
struct CpAsyncCommit : StmtNode {
    static constexpr StmtKind kKind = StmtKind::CpAsyncCommit;
    explicit CpAsyncCommit(SourceRange s = {}) : StmtNode(kKind, s) {}
};

// Waits until at most `pending` of the thread's committed groups are incomplete.
struct CpAsyncWait : StmtNode {
    static constexpr StmtKind kKind = StmtKind::CpAsyncWait;
    explicit CpAsyncWait(int64_t n, SourceRange s = {}) : StmtNode(kKind, s), pending(n) {}
    const int64_t pending;
};

// ---- tile operations

// The instruction a copy becomes (TileLang's CopyInst names).
// PackedBytes: a copy between an f4e2m1 fragment (an element to a register)
// and packed memory, each thread moving the bytes whose two elements it holds.
enum class CopyInst { Unselected, Normal, LDSM, STSM, BulkLoad, BulkStore, BulkLoad1D, BulkStore1D, CPAsync, TMemLoad, TMemStore, PackedBytes };
const char *copyInstName(CopyInst i);

enum class CopyKind { Copy, TmaCopy, AsyncCopy, CopyCluster };
const char *copyKindName(CopyKind k);   // the builtin's name: copy, tma_copy, ...
enum class CopyPreference { None, Tma, CpAsync, Sync };
enum class EvictionPolicy { Normal, First, Last };

struct Copy : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Copy;
    Copy(Region sr, Region dr, SourceRange s = {}) : StmtNode(kKind, s), src(std::move(sr)), dst(std::move(dr)) {}
    // Not const: a Copy is rebuilt by copying it and changing fields. Nodes
    // are only ever reached through pointers to const, so they stay immutable.
    Region src, dst;
    CopyKind copyKind = CopyKind::Copy;
    CopyPreference prefer = CopyPreference::None;
    bool disableTma = false;
    EvictionPolicy eviction = EvictionPolicy::Normal;
    Buffer barrier;           // barrier=, may be null
    Expr barrierIndex;
    // copy_cluster / tma_copy multicast: the cluster_mask of each block rank
    // of the cluster (empty: no multicast). A mask computed from
    // block_rank_in_cluster() differs between blocks.
    std::vector<int64_t> clusterMasks;
    bool multicast() const { return !clusterMasks.empty(); }
    Expr dstBlock;            // copy_cluster SM-to-SM
    Buffer remoteBarrier;
    bool inPipeline = false;  // inside a (non warp-specialized) pipelined loop
    bool producerRole = false; // issued by the producer warp group of automatic warp specialization
    // atomic_add(dst, src, use_tma = true): the shared tile is added into the
    // global region by TMA (cp.reduce.async.bulk.tensor .add), not stored.
    bool reduceAdd = false;
    // Decided by select_copy_inst:
    CopyInst inst = CopyInst::Unselected;
};

enum class GemmInst { Unselected, MMA, WGMMA, TCGEN05, FMA, MMABlockScaled, TCGEN05BlockScaled };
const char *gemmInstName(GemmInst i);
// mma.sync, plain or block-scaled: C in a warp's registers, the m16n8 fragments.
inline bool isMmaSync(GemmInst i) { return i == GemmInst::MMA || i == GemmInst::MMABlockScaled; }
enum class GemmPolicy { Square, FullRow, FullCol };
// How gemm_blockscaled's scale words are stored (TileLang's sf_layout):
// RowMajor, word [row, (k_start + k) / (4 g)]; ChunkKMajor, the 128-row x
// 4-word chunks of TileLang's blockscaled_chunk_kmajor.
enum class ScaleLayout { RowMajor, ChunkKMajor };
constexpr int64_t kScaleChunkRows = 128, kScaleChunkWords = 4;
// ChunkKMajor: the position of word `word` (< 4) of row `row` (< 128) in
// its chunk, counted in words row by row: word * 128 + (row % 32) * 4 + row / 32.
Expr scaleChunkPosition(const Expr &row, const Expr &word);
const char *gemmPolicyName(GemmPolicy p);

struct Gemm : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Gemm;
    Gemm(Region a, Region b, Region c, SourceRange s = {}) : StmtNode(kKind, s), a(std::move(a)), b(std::move(b)), c(std::move(c)) {}
    Region a, b, c;   // not const, as in Copy
    bool transposeA = false, transposeB = false;
    GemmPolicy policy = GemmPolicy::Square;
    Expr clearAccum;              // may be null (false)
    Buffer mbar;                  // may be null
    Expr mbarIndex;
    // A tcgen05 gemm without mbar (TileLang's tcgen05_gemm(..., mbar=None)):
    // its MMAs read and write until the issuing thread's next tcgen05.commit
    // -- a tcgen05_mma_arrive, or a later gemm's own -- arrives on this
    // barrier and that phase completes. Bound by sema (bindCommits).
    Buffer completesOn;
    bool use2cta = false;
    GemmInst explicitInst = GemmInst::Unselected;   // inst= given by the user
    // wg_wait (TileLang's): on wgmma, the wgmma groups left in flight when
    // the gemm returns; -1: none waited for (a later wait_wgmma(n) does).
    // Other instructions complete before the gemm returns.
    int64_t wgWait = 0;
    // gemm_blockscaled: the scale factors, 32-bit words of four 8-bit
    // factors each (docs/language.md).
    std::optional<Region> sfa, sfb;
    Expr sfKStart;                                   // k_start: A's first column's K position in the factors (null: 0)
    int64_t sfGranularityA = 0, sfGranularityB = 0;  // K elements per factor (0: not given)
    ScaleLayout sfLayout = ScaleLayout::RowMajor;
    // Decided by select_gemm_inst:
    GemmInst inst = GemmInst::Unselected;
    int64_t threads = 0;                // the threads that run it: the block's, or inside ws(...) the role's
    int64_t firstThread = 0;            // threadIdx.x of the first of them
    int64_t warpM = 0, warpN = 0;       // warps along M and N
    int64_t atomM = 0, atomN = 0, atomK = 0;   // the instruction's shape (m16n8k16, ...)
    const Instruction *instruction = nullptr;  // the catalog entry (MMA, WGMMA, TCGEN05; none for FMA)
};

struct Fill : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Fill;
    Fill(Region d, Expr v, SourceRange s = {}) : StmtNode(kKind, s), dst(std::move(d)), value(std::move(v)) {}
    const Region dst;
    const Expr value;
};

// cumsum(src, dst, dim, reverse) of a shared or local buffer (TileLang's
// T.cumsum): the running sums of each line along a dimension, from its last
// element with `reverse`. The dimension is counted from the last
// (`dimFromEnd` 1 is the last), which stays true when a pipelined loop
// gives the regions a leading version dimension. lower-tile-ops gives each
// line of a shared buffer to one thread of the block or of the role that
// runs it; a local buffer's lines are all its thread's.
struct Cumsum : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Cumsum;
    Cumsum(Region sr, Region dr, int64_t d, bool r, SourceRange s = {})
        : StmtNode(kKind, s), src(std::move(sr)), dst(std::move(dr)), dimFromEnd(d), reverse(r) {}
    const Region src, dst;
    const int64_t dimFromEnd;
    const bool reverse;
};

enum class ReduceOp { Sum, Max, Min, AbsSum, AbsMax };
const char *reduceOpName(ReduceOp op);

struct Reduce : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Reduce;
    Reduce(ReduceOp o, Buffer sb, Buffer db, int d, bool c, SourceRange s = {})
        : StmtNode(kKind, s), op(o), src(std::move(sb)), dst(std::move(db)), dim(d), clear(c) {}
    const ReduceOp op;
    const Buffer src, dst;
    const int dim;
    const bool clear;   // false: combine with dst's current value
};

// Combines the partial results that the threads holding copies of each
// element of reducer fragment `reducer` keep (alloc_reducer), with its op;
// afterwards every copy holds the combined value.
struct FinalizeReducer : StmtNode {
    static constexpr StmtKind kKind = StmtKind::FinalizeReducer;
    FinalizeReducer(Buffer r, SourceRange s = {}) : StmtNode(kKind, s), reducer(std::move(r)) {}
    const Buffer reducer;
};

// TileLang's tcgen05_sf_warp_transpose: the 32 threads of one warp reorder
// each chunk of kTcgen05CopyWords words of a shared uint32 region in place,
// word 32 j + l to 4 l + j (l < 32, j < 4) -- per-row words become the
// 32 x 128-bit tile tcgen05.cp's 32x128b shape copies, row l holding the
// words of rows l, l + 32, l + 64, l + 96. Lower-tile-ops writes the loads,
// a __syncwarp and the stores.
struct ScaleTranspose : StmtNode {
    static constexpr StmtKind kKind = StmtKind::ScaleTranspose;
    ScaleTranspose(Region r, SourceRange s = {}) : StmtNode(kKind, s), region(std::move(r)) {}
    const Region region;
};

// dst += src over a region; src is a region or (when srcRegion is empty) a scalar.
struct AtomicAdd : StmtNode {
    static constexpr StmtKind kKind = StmtKind::AtomicAdd;
    AtomicAdd(Region d, std::optional<Region> sr, Expr v, MemoryOrder o, SourceRange s = {})
        : StmtNode(kKind, s), dst(std::move(d)), src(std::move(sr)), value(std::move(v)), order(o) {}
    const Region dst;
    const std::optional<Region> src;
    const Expr value;
    const MemoryOrder order;
};

// im2col(image, dst, nhw_step, c_step, kernel, stride, dilation, pad):
// TileLang's T.im2col. `dst` (a [rows, cols] shared tile) receives rows
// nhw_step * rows ... and columns c_step * cols ... of the im2col matrix of
// the NHWC `image` [N, H, W, C] for a square kernel: row m is output pixel
// (n, oh, ow) in that order, column k is (kh, kw, c) in that order, and the
// element is image[n, oh * stride + kh * dilation - pad, ow * stride +
// kw * dilation - pad, c], or 0 where that lies in the padding (or m, k lie
// past the matrix).
struct Im2Col : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Im2Col;
    Im2Col(Buffer img, Region d, Expr nhw, Expr c, SourceRange s = {})
        : StmtNode(kKind, s), image(std::move(img)), dst(std::move(d)), nhwStep(std::move(nhw)), cStep(std::move(c)) {}
    // Not const, as in Copy.
    Buffer image;
    Region dst;
    Expr nhwStep, cStep;
    int64_t kernel = 1, stride = 1, dilation = 1, pad = 0;
    int64_t outHeight() const;   // OH = (H + 2 pad - dilation (kernel - 1) - 1) / stride + 1
    int64_t outWidth() const;
    bool inPipeline = false;     // a statement of a pipelined loop's body (not warp-specialized)
    // The producer role of automatic warp specialization issues it with TMA's
    // im2col mode, completing on barrier[barrierIndex].
    bool producerRole = false;
    Buffer barrier;
    Expr barrierIndex;
    // Decided by select_copy_inst: BulkLoad (a warp-specialized producer),
    // CPAsync (a pipeline's producer) or Normal.
    CopyInst inst = CopyInst::Unselected;
};

// ---- synchronisation

// A barrier of the whole block (__syncthreads), or, with a nonzero
// `barrierId`, the named barrier of the `threads` threads of one warp-group
// role (bar.sync id, threads): inside ws(...) only that role's threads arrive.
// barrierId 0: __syncthreads; > 0: named barrier (bar.sync id, threads);
// -1: the 32 threads of one warp (__syncwarp).
struct SyncThreads : StmtNode {
    static constexpr StmtKind kKind = StmtKind::SyncThreads;
    explicit SyncThreads(SourceRange s = {}, int64_t id = 0, int64_t n = 0) : StmtNode(kKind, s), barrierId(id), threads(n) {}
    const int64_t barrierId;
    const int64_t threads;
};

// FlashAttention-3's warp-scheduler barrier: two consumer warp groups take
// turns at issuing their tensor-core work, so that one's softmax runs while
// the other's GEMMs do (ping-pong). `Take` waits for this warp group's turn
// (bar.sync id, threads); `Pass` hands the turn to the other warp group
// (bar.arrive id, threads) without waiting. The id is computed from the
// warp group. It orders when instructions are issued, not memory: no pass
// relies on it for a read or a write, so it has no effects.
struct IssueTurn : StmtNode {
    enum class Action { Take, Pass };
    static constexpr StmtKind kKind = StmtKind::IssueTurn;
    IssueTurn(Action a, Expr id, int64_t n, SourceRange s = {}) : StmtNode(kKind, s), action(a), barrierId(std::move(id)), threads(n) {}
    const Action action;
    const Expr barrierId;
    const int64_t threads;
};

// Initialises every mbarrier of `barrier` with its arrive count, then fences
// so that the async proxy sees it. The thread that runs it does all of them:
// lower-tile-ops puts it under `threadIdx.x == 0`.
struct BarrierInit : StmtNode {
    static constexpr StmtKind kKind = StmtKind::BarrierInit;
    // The barriers allocated together, initialised by one thread behind one
    // fence.mbarrier_init.
    explicit BarrierInit(std::vector<Buffer> b, SourceRange s = {}) : StmtNode(kKind, s), barriers(std::move(b)) {}
    const std::vector<Buffer> barriers;
};

struct BarrierArrive : StmtNode {
    static constexpr StmtKind kKind = StmtKind::BarrierArrive;
    BarrierArrive(Buffer b, Expr i, Expr r, SourceRange s = {}) : StmtNode(kKind, s), barrier(std::move(b)), index(std::move(i)), remoteRank(std::move(r)) {}
    const Buffer barrier;
    const Expr index;
    const Expr remoteRank;   // null: this block's barrier; else the barrier at the same offset in that block of the cluster
};

struct BarrierWait : StmtNode {
    static constexpr StmtKind kKind = StmtKind::BarrierWait;
    BarrierWait(Buffer b, Expr i, Expr p, SourceRange s = {})
        : StmtNode(kKind, s), barrier(std::move(b)), index(std::move(i)), parity(std::move(p)) {}
    const Buffer barrier;
    const Expr index;
    const Expr parity;
};

struct ClusterSync : StmtNode {
    static constexpr StmtKind kKind = StmtKind::ClusterSync;
    explicit ClusterSync(SourceRange s = {}) : StmtNode(kKind, s) {}
};

// The body runs only in the listed warps: a role. `ws(g, ...)` lists warp
// groups (four warps each); a branch on the thread index that hands tile
// work to whole warps (TileLang's `if tx < 32:`) lists its warps.
struct WarpSpecialize : StmtNode {
    static constexpr StmtKind kKind = StmtKind::WarpSpecialize;
    WarpSpecialize(std::vector<int64_t> w, Stmt b, SourceRange s = {}) : StmtNode(kKind, s), warps(std::move(w)), body(std::move(b)) {}
    static constexpr int64_t kWarpThreads = 32;
    static constexpr int64_t kGroupThreads = 128;
    // The warps of warp groups `groups` (sorted).
    static std::vector<int64_t> warpsOfGroups(const std::vector<int64_t> &groups);
    const std::vector<int64_t> warps;   // sorted warp indices
    // The role's threads (consecutive warps): how many, and the first threadIdx.x.
    int64_t threads() const { return kWarpThreads * static_cast<int64_t>(warps.size()); }
    int64_t firstThread() const { return kWarpThreads * warps.front(); }
    bool consecutive() const { return warps.back() - warps.front() + 1 == static_cast<int64_t>(warps.size()); }
    // Whole warp groups: the unit of wgmma, setmaxnreg and a role's named barrier.
    bool wholeWarpGroups() const { return warps.front() % 4 == 0 && warps.size() % 4 == 0 && consecutive(); }
    // The warp groups of a role of whole warp groups.
    std::vector<int64_t> warpGroups() const;
    // The barrier a role's threads meet at (PTX ISA, "bar.sync"): -1 for one
    // warp (__syncwarp), the named barrier 1 + its first warp group for a
    // role starting at one (ids 1..8; 0 is __syncthreads), else 0: none fixed
    // (insert-syncs gives such a role a free id from 9 to 15).
    int64_t namedBarrierId() const;
    const Stmt body;
};

// The body runs in one thread, the others skip it (CUTLASS's elect_one_sync):
// the first thread of the enclosing role or block (`firstThread`), or the
// first of each of its warp groups. Specialize-warps makes the producer's
// loop one thread's (it alone waits, issues the TMA loads and arrives) and
// a wgmma consumer's release one arrival per warp group, made after the
// group met at its wgmma.commit_group: the arrive counts CUTLASS's
// pipelines use, instead of one per thread.
struct Elect : StmtNode {
    enum class Unit { Scope, WarpGroup };
    static constexpr StmtKind kKind = StmtKind::Elect;
    Elect(Unit u, int64_t first, Stmt b, SourceRange s = {}) : StmtNode(kKind, s), unit(u), firstThread(first), body(std::move(b)) {}
    const Unit unit;
    const int64_t firstThread;   // Unit::Scope: threadIdx.x of the one thread
    const Stmt body;
};

struct SetMaxNReg : StmtNode {
    static constexpr StmtKind kKind = StmtKind::SetMaxNReg;
    SetMaxNReg(int64_t c, bool inc, SourceRange s = {}) : StmtNode(kKind, s), count(c), increase(inc) {}
    const int64_t count;
    const bool increase;
};

// break / continue: leaves the innermost For or While around it, or ends its
// current iteration. Sema lets only serial and unrolled loops and while
// loops hold one; a pass that restructures a loop (rotates, peels, splits
// it into roles) leaves alone a loop whose body jumps (ir::jumpsOutOf).
enum class JumpKind { Break, Continue };
struct Jump : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Jump;
    Jump(JumpKind jump, SourceRange s = {}) : StmtNode(kKind, s), jump(jump) {}
    const JumpKind jump;
    const char *keyword() const { return jump == JumpKind::Break ? "break" : "continue"; }
};

struct PdlTrigger : StmtNode {
    static constexpr StmtKind kKind = StmtKind::PdlTrigger;
    explicit PdlTrigger(SourceRange s = {}) : StmtNode(kKind, s) {}
};

struct PdlSync : StmtNode {
    static constexpr StmtKind kKind = StmtKind::PdlSync;
    explicit PdlSync(SourceRange s = {}) : StmtNode(kKind, s) {}
};

// ------------------------------------------------------------------ kernels

// SmCount: num_sms(), the streaming multiprocessors of the device the
// kernel runs on; a kernel parameter that the launch function queries
// (cudaDevAttrMultiProcessorCount) and passes, not one its caller gives.
enum class ParamKind { Tensor, Scalar, DynDim, SmCount };

struct Param {
    ParamKind kind = ParamKind::Tensor;
    Buffer tensor;   // Tensor
    VarRef var;      // Scalar, DynDim
    SourceRange span;
    const std::string &name() const { return kind == ParamKind::Tensor ? tensor->name : var->name; }
};

struct Kernel {
    std::string name;
    SourceRange span;
    std::vector<Param> params;
    std::vector<Expr> grid;            // 1 to 3 dimensions; may use dynamic dims
    int64_t threads = 128;
    std::array<int64_t, 3> threadExtents{128, 1, 1};   // threads(X, Y, Z): the block's shape, x fastest
    bool bindsThreadIndices = false;   // threads(...) as (tx, ...): the program computes with thread indices
    std::array<int64_t, 3> cluster{1, 1, 1};
    bool hasCluster = false;
    // cluster(2) or cluster(1, 2): the blocks run in pairs, as the CTA pair
    // of tcgen05's cta_group::2 needs.
    bool pairCluster() const { return cluster[0] * cluster[1] * cluster[2] == 2 && cluster[2] == 1; }
    int64_t minBlocksPerSm = 1;
    // disable_warp_group_reg_alloc() (TileLang's T.disable_warp_group_reg_alloc,
    // no_set_max_nreg): no setmaxnreg split between warp groups, automatic or
    // for hand-written roles; every warp group keeps the launch's budget.
    bool keepsRegisterBudgets = false;
    // The program waits for its wgmmas itself: a gemm with wg_wait other
    // than 0, or wait_wgmma(n) (TileLang's T.gemm(..., wg_wait) and
    // T.wait_wgmma). The passes that move wgmma waits leave such a kernel's
    // alone, and check-wgmma-groups blames a missing wait on the program.
    bool waitsForWgmma = false;
    Stmt body;

    // Decided by passes:
    int64_t dynamicSharedBytes = 0;    // plan_shared_memory
    int64_t sharedAlignment = 16;      // plan_shared_memory
    bool usesPdl = false;              // pdl_trigger / pdl_sync present
    std::vector<TmaDescriptorRef> tmaDescriptors;   // lower_tma: extra kernel parameters, encoded by the host
    // select_gemm_inst: a CTA-pair gemm (use_2cta) makes every tcgen05
    // instruction of the kernel cta_group::2 (PTX ISA: one kernel's tcgen05
    // instructions all name the same .cta_group).
    bool tcgen05Pair = false;
};

// A file of CUDA source brought in with import_source; the .cu holds it
// verbatim, before the kernels.
struct ImportedSource {
    std::string name;   // as the import_source call spells it
    std::string path;   // as opened
    std::string text;
};

struct Module {
    std::string sourceName;   // the main .tl file as named on the command line
    std::string targetName;   // e.g. "sm_90a"
    std::vector<Kernel> kernels;
    std::vector<ImportedSource> importedSources;   // in first-use order, each file once
    std::map<FileId, std::string> fileNames;       // every .tl file a span may name, as diagnostics spell it
};

// ------------------------------------------------------------------ constructors

// Small helpers that fold constants and pick result types, so passes can write
// add(x, 1) instead of spelling nodes out.
Expr intImm(int64_t v, DType t = DType::Int32);
Expr floatImm(double v, DType t = DType::F32);
Expr boolImm(bool v);
Expr binary(BinaryOp op, Expr a, Expr b, SourceRange s = {});
// x op y as binary() folds two constants into a `result` node; nullopt where
// it keeps the node (overflow, division by zero, a value `result` cannot hold).
std::optional<int64_t> foldBinary(BinaryOp op, int64_t x, int64_t y, DType result);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr mod(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr logicalAnd(Expr a, Expr b);
Expr cast(DType t, Expr v);
Expr threadIdx();
Expr isThread(int64_t t);   // threadIdx.x == t: the one thread that does something for the block or role
VarRef makeVar(std::string name, DType t = DType::Int32, SourceRange s = {});
Stmt seq(std::vector<Stmt> stmts);   // flattens nested Seqs and drops nulls

// Reads: constant value of an IntImm, if it is one.
std::optional<int64_t> constInt(const Expr &e);

} // namespace tilet::ir
