#include "ir/IR.h"

#include "ir/Simplify.h"

#include "support/InternalError.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace tilet::ir {

const char *exprKindName(ExprKind k) {
    switch (k) {
#define TILET_IR_EXPR(name) case ExprKind::name: return #name;
#include "ir/Nodes.def"
    }
    return "?";
}

const char *stmtKindName(StmtKind k) {
    switch (k) {
#define TILET_IR_STMT(name) case StmtKind::name: return #name;
#include "ir/Nodes.def"
    }
    return "?";
}

const char *memoryOrderName(MemoryOrder o) {
    switch (o) {
    case MemoryOrder::Relaxed: return "relaxed";
    case MemoryOrder::Acquire: return "acquire";
    case MemoryOrder::Release: return "release";
    case MemoryOrder::AcqRel: return "acq_rel";
    case MemoryOrder::SeqCst: return "seq_cst";
    }
    return "?";
}

const char *externArgKindName(ExternArgKind k) {
    switch (k) {
    case ExternArgKind::Value: return "value";
    case ExternArgKind::ReadPointer: return "r";
    case ExternArgKind::WritePointer: return "w";
    case ExternArgKind::ReadWritePointer: return "rw";
    }
    return "?";
}

Stmt Store::movedTo(Buffer b, std::vector<Expr> i, Expr v) const {
    return std::make_shared<Store>(std::move(b), std::move(i), std::move(v), op, span, order);
}

const char *memScopeName(MemScope s) {
    switch (s) {
    case MemScope::Global: return "global";
    case MemScope::Shared: return "shared";
    case MemScope::Fragment: return "fragment";
    case MemScope::Local: return "local";
    case MemScope::TMem: return "tmem";
    case MemScope::Barrier: return "barrier";
    }
    return "?";
}

const char *copyKindName(CopyKind k) {
    switch (k) {
    case CopyKind::Copy: return "copy";
    case CopyKind::TmaCopy: return "tma_copy";
    case CopyKind::AsyncCopy: return "async_copy";
    case CopyKind::CopyCluster: return "copy_cluster";
    }
    return "?";
}

const char *swizzleName(SharedSwizzle s) {
    switch (s) {
    case SharedSwizzle::None: return "none";
    case SharedSwizzle::B32: return "32B";
    case SharedSwizzle::B64: return "64B";
    case SharedSwizzle::B128: return "128B";
    }
    return "?";
}

const char *unpackingTensorMapType(DType slots) {
    TILET_ASSERT(isUnpacked(slots), "unpackingTensorMapType of " << dtypeName(slots));
    return dtypeBits(valueType(slots)) == 4 ? "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B" : "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B";
}

const char *specialKindName(SpecialKind k) {
    switch (k) {
    case SpecialKind::ThreadIdx: return "threadIdx.x";
    case SpecialKind::BlockIdxX: return "blockIdx.x";
    case SpecialKind::BlockIdxY: return "blockIdx.y";
    case SpecialKind::BlockIdxZ: return "blockIdx.z";
    case SpecialKind::ClusterCtaRank: return "cluster_ctarank";
    }
    return "?";
}

const char *unaryOpName(UnaryOp op) {
    switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Not: return "!";
    case UnaryOp::BitNot: return "~";
    }
    return "?";
}

const char *binaryOpName(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    }
    return "?";
}

bool isComparison(BinaryOp op) {
    return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge || op == BinaryOp::Eq ||
           op == BinaryOp::Ne;
}

const char *mathFuncName(MathFunc f) {
    switch (f) {
    case MathFunc::Abs: return "abs";
    case MathFunc::Exp: return "exp";
    case MathFunc::Exp2: return "exp2";
    case MathFunc::Log: return "log";
    case MathFunc::Log2: return "log2";
    case MathFunc::Sqrt: return "sqrt";
    case MathFunc::Rsqrt: return "rsqrt";
    case MathFunc::FastExp: return "__exp";
    case MathFunc::FastExp2: return "__exp2";
    case MathFunc::Tanh: return "tanh";
    case MathFunc::Erf: return "erf";
    case MathFunc::Sin: return "sin";
    case MathFunc::Cos: return "cos";
    case MathFunc::Floor: return "floor";
    case MathFunc::Ceil: return "ceil";
    case MathFunc::Pow: return "pow";
    case MathFunc::Sigmoid: return "sigmoid";
    case MathFunc::BitCast: return "reinterpret";
    }
    return "?";
}

const char *forKindName(ForKind k) {
    switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    }
    return "?";
}

const char *copyInstName(CopyInst i) {
    switch (i) {
    case CopyInst::Unselected: return "Unselected";
    case CopyInst::Normal: return "Normal";
    case CopyInst::LDSM: return "LDSM";
    case CopyInst::STSM: return "STSM";
    case CopyInst::BulkLoad: return "BulkLoad";
    case CopyInst::BulkStore: return "BulkStore";
    case CopyInst::BulkLoad1D: return "BulkLoad1D";
    case CopyInst::BulkStore1D: return "BulkStore1D";
    case CopyInst::CPAsync: return "CPAsync";
    case CopyInst::TMemLoad: return "TMemLoad";
    case CopyInst::TMemStore: return "TMemStore";
    case CopyInst::PackedBytes: return "PackedBytes";
    }
    return "?";
}

const char *tmemLoadShapeName(TmemLoadShape s) { return s == TmemLoadShape::Lanes16x256b ? "16x256b" : "32x32b"; }
int64_t tmemLoadColumnsPerRepeat(TmemLoadShape s) { return s == TmemLoadShape::Lanes16x256b ? 8 : 1; }
int64_t tmemLoadRegistersPerRepeat(TmemLoadShape s) { return s == TmemLoadShape::Lanes16x256b ? 4 : 1; }

const char *tcgen05SyncKindName(Tcgen05SyncKind k) {
    switch (k) {
    case Tcgen05SyncKind::WaitLoad: return "tcgen05.wait::ld";
    case Tcgen05SyncKind::WaitStore: return "tcgen05.wait::st";
    case Tcgen05SyncKind::FenceBefore: return "tcgen05.fence::before_thread_sync";
    case Tcgen05SyncKind::FenceAfter: return "tcgen05.fence::after_thread_sync";
    }
    return "?";
}

const char *gemmInstName(GemmInst i) {
    switch (i) {
    case GemmInst::Unselected: return "Unselected";
    case GemmInst::MMA: return "MMA";
    case GemmInst::WGMMA: return "WGMMA";
    case GemmInst::TCGEN05: return "TCGEN05";
    case GemmInst::FMA: return "FMA";
    case GemmInst::MMABlockScaled: return "MMABlockScaled";
    case GemmInst::TCGEN05BlockScaled: return "TCGEN05BlockScaled";
    }
    return "?";
}

const char *gemmPolicyName(GemmPolicy p) {
    switch (p) {
    case GemmPolicy::Square: return "Square";
    case GemmPolicy::FullRow: return "FullRow";
    case GemmPolicy::FullCol: return "FullCol";
    }
    return "?";
}

const char *reduceOpName(ReduceOp op) {
    switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::AbsSum: return "abssum";
    case ReduceOp::AbsMax: return "absmax";
    }
    return "?";
}

// ------------------------------------------------------------------ TileLayout

int64_t TileLayout::localSize() const {
    // Saturates: callers compare it with register budgets, and a layout of a
    // rejected 2^63-element loop may still be asked (no wrap, no UB).
    int64_t n = 1;
    for (const LayoutMode &m : localModes) {
        if (__builtin_mul_overflow(n, m.extent, &n)) return INT64_MAX;
    }
    return n;
}

int64_t TileLayout::replication() const {
    int64_t n = 1;
    for (const LayoutMode &m : threadModes) {
        if (m.dim == LayoutMode::kReplicate) n *= m.extent;
    }
    return n;
}

int64_t TileLayout::vectorWidth() const {
    if (localModes.empty() || shape.empty()) return 1;
    const LayoutMode &m = localModes.front();
    if (m.dim == static_cast<int>(shape.size()) - 1 && m.coordStride == 1) return m.extent;
    return 1;
}

bool TileLayout::operator==(const TileLayout &o) const {
    auto same = [](const std::vector<LayoutMode> &a, const std::vector<LayoutMode> &b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            if (a[i].extent != b[i].extent || a[i].dim != b[i].dim || a[i].coordStride != b[i].coordStride) return false;
        }
        return true;
    };
    return shape == o.shape && threads == o.threads && same(threadModes, o.threadModes) && same(localModes, o.localModes);
}

std::string TileLayout::str() const {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < shape.size(); ++i) os << (i ? "x" : "") << shape[i];
    os << "]";
    auto modes = [&](const char *label, const std::vector<LayoutMode> &ms) {
        os << " " << label << ":(";
        for (size_t i = 0; i < ms.size(); ++i) {
            if (i) os << ",";
            os << ms[i].extent << "@";
            if (ms[i].dim == LayoutMode::kReplicate) os << "rep";
            else os << "d" << ms[i].dim;
            if (ms[i].coordStride != 1) os << "*" << ms[i].coordStride;
        }
        os << ")";
    };
    modes("t", threadModes);
    modes("l", localModes);
    return os.str();
}

// ------------------------------------------------------------------ buffers

std::optional<std::vector<int64_t>> BufferNode::constShape() const {
    std::vector<int64_t> out;
    for (const Expr &e : shape) {
        std::optional<int64_t> v = constInt(e);
        if (!v) return std::nullopt;
        out.push_back(*v);
    }
    return out;
}

std::optional<int64_t> BufferNode::constElements() const {
    std::optional<std::vector<int64_t>> s = constShape();
    if (!s) return std::nullopt;
    // Sema bounds every constant shape's size; saturate rather than wrap all the same.
    int64_t n = 1;
    for (int64_t d : *s) {
        if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
    }
    return n;
}

std::shared_ptr<BufferNode> makeBuffer(std::string name, DType dtype, std::vector<Expr> shape, MemScope scope, SourceRange span) {
    auto b = std::make_shared<BufferNode>();
    b->name = std::move(name);
    b->dtype = dtype;
    b->shape = std::move(shape);
    b->scope = scope;
    b->span = span;
    return b;
}

std::vector<Expr> regionIndices(const Region &r, const std::vector<Expr> &coord) {
    std::vector<Expr> out;
    size_t next = 0;
    for (size_t d = 0; d < r.extents.size(); ++d) {
        if (r.extents[d] == 1) out.push_back(r.mins[d]);
        else out.push_back(add(r.mins[d], coord[next++]));
    }
    return out;
}

Shuffle::Shuffle(Expr v, int64_t laneMask, SourceRange s)
    : ExprNode(kKind, v->dtype, s), value(std::move(v)), operand(intImm(laneMask)) {}

const char *shuffleModeName(ShuffleMode m) {
    switch (m) {
    case ShuffleMode::Xor: return "xor";
    case ShuffleMode::Index: return "idx";
    case ShuffleMode::Down: return "down";
    case ShuffleMode::Up: return "up";
    }
    return "?";
}

const BufferNode &storageRoot(const BufferNode &b) { return b.viewOf ? storageRoot(*b.viewOf) : b; }
Buffer storageRoot(const Buffer &b) { return b && b->viewOf ? storageRoot(b->viewOf) : b; }

Buffer bytesView(const Buffer &packed) {
    TILET_ASSERT(isSubByte(packed->dtype), "bytesView of '" << packed->name << "', which is not packed");
    int64_t unit = packingUnit(packed->dtype), unitBytes = unit * dtypeBits(packed->dtype) / 8;
    auto view = std::make_shared<BufferNode>(*packed);   // scope, swizzle and pipeline versions as the buffer's
    view->name = packed->name + "_bytes";
    view->dtype = DType::UInt8;
    std::optional<int64_t> last = constInt(packed->shape.back());
    TILET_ASSERT(last && *last % unit == 0, "packed buffer '" << packed->name << "' has no whole bytes per row");
    view->shape.back() = intImm(*last / unit * unitBytes);
    view->viewOf = packed;
    view->registers = nullptr;
    view->sharedOffset = -1;
    return view;
}

Expr scaleChunkPosition(const Expr &row, const Expr &word) {
    return add(add(mul(word, intImm(kScaleChunkRows)), mul(mod(row, intImm(32)), intImm(kScaleChunkRows / 32))), div(row, intImm(32)));
}

Region bytesRegion(const Region &r, const Buffer &view) {
    int64_t unit = packingUnit(r.buffer->dtype), unitBytes = unit * dtypeBits(r.buffer->dtype) / 8;
    TILET_ASSERT(r.extents.back() % unit == 0, "a region of packed '" << r.buffer->name << "' is not whole bytes");
    Region out = r;
    out.buffer = view;
    out.mins.back() = simplify(div(mul(r.mins.back(), intImm(unitBytes)), intImm(unit)));
    out.extents.back() = r.extents.back() / unit * unitBytes;
    return out;
}

// The image's shape is constant (Sema checks it).
int64_t Im2Col::outHeight() const { return (*constInt(image->shape[1]) + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1; }
int64_t Im2Col::outWidth() const { return (*constInt(image->shape[2]) + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1; }

int64_t tmemWords(const BufferNode &b) {
    std::optional<std::vector<int64_t>> shape = b.constShape();
    if (!shape || shape->empty()) return 0;
    int64_t stages = shape->size() == 3 ? (*shape)[0] : 1;
    return stages * ((shape->back() * dtypeBits(b.dtype) + 31) / 32);
}

Expr tmemColumn(const Region &r) {
    const BufferNode &b = *r.buffer;
    Expr column = r.mins.back();
    if (r.mins.size() == 3) column = add(mul(r.mins[0], b.shape.back()), column);
    // Elements of a 32-bit dtype are columns; narrower ones pack (16-bit: two per column).
    int64_t bits = dtypeBits(b.dtype);
    if (bits != 32) column = bits < 32 ? div(column, intImm(32 / bits)) : mul(column, intImm(bits / 32));
    return column;
}

bool samePartition(const TmemPartition &a, const TmemPartition &b) {
    if (a.rows != b.rows || a.cols != b.cols || a.threads != b.threads) return false;
    // One warp group over a 128-row tile: thread r has lane r whatever the
    // columns. Otherwise the columns decide which thread has a cell, so
    // the first columns must be the same number (the same expression may
    // take another value in another iteration: a sliding window).
    if (a.rows == 128 && a.threads == 128) return true;
    std::optional<int64_t> x = a.firstColumn ? constInt(a.firstColumn) : std::nullopt, y = b.firstColumn ? constInt(b.firstColumn) : std::nullopt;
    return x && y && *x == *y;
}

bool tmemAllRowsOfOneStage(const Region &r) {
    std::optional<std::vector<int64_t>> shape = r.buffer->constShape();
    if (!shape || shape->size() < 2 || r.extents.size() != shape->size()) return false;
    size_t rowDim = shape->size() - 2;
    return constInt(r.mins[rowDim]) == 0 && r.extents[rowDim] == (*shape)[rowDim] && (rowDim == 0 || r.extents[0] == 1);
}

bool Region::coversBuffer() const {
    std::optional<std::vector<int64_t>> shape = buffer->constShape();
    if (!shape || shape->size() != extents.size()) return false;
    for (size_t d = 0; d < shape->size(); ++d)
        if (constInt(mins[d]) != 0 || extents[d] != (*shape)[d]) return false;
    return true;
}

bool Region::contiguous() const {
    std::optional<std::vector<int64_t>> shape = buffer->constShape();
    if (!shape || shape->size() != extents.size()) return false;
    size_t d = 0;
    while (d < extents.size() && extents[d] == 1) ++d;
    for (++d; d < extents.size(); ++d)
        if (constInt(mins[d]) != 0 || extents[d] != (*shape)[d]) return false;
    return true;
}

std::vector<Expr> Region::indicesAt(int64_t offset) const {
    std::vector<Expr> out = mins;
    for (size_t d = extents.size(); d-- > 0;) {
        if (int64_t at = offset % extents[d]) out[d] = simplify(add(mins[d], intImm(at)));
        offset /= extents[d];
    }
    return out;
}

std::vector<int64_t> Region::tileShape() const {
    std::vector<int64_t> out;
    for (int64_t e : extents) {
        if (e != 1) out.push_back(e);
    }
    return out;
}

// ------------------------------------------------------------------ constructors

std::optional<int64_t> constInt(const Expr &e) {
    if (const IntImm *i = as<IntImm>(e)) return i->value;
    return std::nullopt;
}

Expr intImm(int64_t v, DType t) { return std::make_shared<IntImm>(t, v); }
Expr floatImm(double v, DType t) { return std::make_shared<FloatImm>(t, v); }
Expr boolImm(bool v) { return std::make_shared<IntImm>(DType::Bool, v ? 1 : 0); }

namespace {

DType resultType(BinaryOp op, DType a, DType b) {
    if (isComparison(op) || op == BinaryOp::And || op == BinaryOp::Or) return DType::Bool;
    if (op == BinaryOp::Shl || op == BinaryOp::Shr) return arithmeticType(a, a);
    return arithmeticType(a, b);
}

// Folds two integer constants; nullopt when the result would overflow or is
// undefined (division by zero), in which case the node is kept as is.
std::optional<int64_t> foldInt(BinaryOp op, int64_t x, int64_t y) {
    int64_t r = 0;
    switch (op) {
    case BinaryOp::Add: if (__builtin_add_overflow(x, y, &r)) return std::nullopt; return r;
    case BinaryOp::Sub: if (__builtin_sub_overflow(x, y, &r)) return std::nullopt; return r;
    case BinaryOp::Mul: if (__builtin_mul_overflow(x, y, &r)) return std::nullopt; return r;
    case BinaryOp::Div: if (y == 0 || (x == INT64_MIN && y == -1)) return std::nullopt; return x / y;
    case BinaryOp::Mod: if (y == 0 || (x == INT64_MIN && y == -1)) return std::nullopt; return x % y;
    case BinaryOp::Min: return std::min(x, y);
    case BinaryOp::Max: return std::max(x, y);
    case BinaryOp::BitAnd: return x & y;
    case BinaryOp::BitOr: return x | y;
    case BinaryOp::BitXor: return x ^ y;
    case BinaryOp::Shl: if (y < 0 || y >= 63) return std::nullopt; return x << y;
    case BinaryOp::Shr: if (y < 0 || y >= 64) return std::nullopt; return x >> y;
    case BinaryOp::And: return (x && y) ? 1 : 0;
    case BinaryOp::Or: return (x || y) ? 1 : 0;
    case BinaryOp::Lt: return x < y;
    case BinaryOp::Le: return x <= y;
    case BinaryOp::Gt: return x > y;
    case BinaryOp::Ge: return x >= y;
    case BinaryOp::Eq: return x == y;
    case BinaryOp::Ne: return x != y;
    }
    return std::nullopt;
}

bool fitsIn(DType t, int64_t v) {
    switch (t) {
    case DType::Bool: return v == 0 || v == 1;
    case DType::Int32: return v >= INT32_MIN && v <= INT32_MAX;
    case DType::UInt32: return v >= 0 && v <= UINT32_MAX;
    default: return true;
    }
}

} // namespace

std::optional<int64_t> foldBinary(BinaryOp op, int64_t x, int64_t y, DType result) {
    std::optional<int64_t> r = foldInt(op, x, y);
    if (!r || !fitsIn(result, *r)) return std::nullopt;
    return r;
}

Expr binary(BinaryOp op, Expr a, Expr b, SourceRange s) {
    TILET_ASSERT(a && b, "null operand to " << binaryOpName(op));
    DType t = resultType(op, a->dtype, b->dtype);
    // min and max print as calls, which C++ does not resolve for mixed
    // integer operands (max(long long, int) is ambiguous): convert them, as
    // the operators' usual arithmetic conversions would.
    if ((op == BinaryOp::Min || op == BinaryOp::Max) && !isFloat(t)) {
        a = cast(t, std::move(a));
        b = cast(t, std::move(b));
    }
    std::optional<int64_t> ca = constInt(a), cb = constInt(b);
    if (ca && cb) {
        if (std::optional<int64_t> r = foldInt(op, *ca, *cb); r && fitsIn(t, *r)) return std::make_shared<IntImm>(t, *r, s);
    }
    // Identities that keep generated index arithmetic short.
    if (!isFloat(t)) {
        if (op == BinaryOp::Add && cb == 0 && a->dtype == t) return a;
        if (op == BinaryOp::Add && ca == 0 && b->dtype == t) return b;
        if (op == BinaryOp::Sub && cb == 0 && a->dtype == t) return a;
        if (op == BinaryOp::Mul && cb == 1 && a->dtype == t) return a;
        if (op == BinaryOp::Mul && ca == 1 && b->dtype == t) return b;
        if (op == BinaryOp::Mul && (ca == 0 || cb == 0)) return std::make_shared<IntImm>(t, 0, s);
        if (op == BinaryOp::Div && cb == 1 && a->dtype == t) return a;
        if (op == BinaryOp::Mod && cb == 1) return std::make_shared<IntImm>(t, 0, s);
    }
    if (op == BinaryOp::And && t == DType::Bool) {
        if (ca == 1 && b->dtype == DType::Bool) return b;
        if (cb == 1 && a->dtype == DType::Bool) return a;
    }
    return std::make_shared<Binary>(t, op, std::move(a), std::move(b), s);
}

Expr add(Expr a, Expr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return binary(BinaryOp::Sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return binary(BinaryOp::Div, std::move(a), std::move(b)); }
Expr mod(Expr a, Expr b) { return binary(BinaryOp::Mod, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return binary(BinaryOp::Lt, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return binary(BinaryOp::Ge, std::move(a), std::move(b)); }
Expr logicalAnd(Expr a, Expr b) {
    if (!a) return b;
    if (!b) return a;
    return binary(BinaryOp::And, std::move(a), std::move(b));
}

Expr cast(DType t, Expr v) {
    if (v->dtype == t) return v;
    if (const IntImm *i = as<IntImm>(v); i && !isFloat(t) && fitsIn(t, i->value)) return std::make_shared<IntImm>(t, i->value, v->span);
    SourceRange span = v->span;
    return std::make_shared<Cast>(t, std::move(v), span);
}

std::shared_ptr<For> rebuildFor(const For &f, Expr min, Expr extent, Stmt body) {
    auto out = std::make_shared<For>(f.var, std::move(min), std::move(extent), f.forKind, std::move(body), f.span);
    out->pipeline = f.pipeline;
    out->threadLayout = f.threadLayout;
    out->threadLocal = f.threadLocal;
    out->requested = f.requested;
    out->preferAsync = f.preferAsync;
    out->pipelineProducer = f.pipelineProducer;
    out->pingpong = f.pingpong;
    out->overlap = f.overlap;
    out->consumerStages = f.consumerStages;
    return out;
}

Expr threadIdx() { return std::make_shared<SpecialReg>(SpecialKind::ThreadIdx); }
Expr isThread(int64_t t) { return binary(BinaryOp::Eq, threadIdx(), intImm(t)); }

VarRef makeVar(std::string name, DType t, SourceRange s) { return std::make_shared<VarNode>(t, std::move(name), s); }

Stmt seq(std::vector<Stmt> stmts) {
    std::vector<Stmt> flat;
    for (Stmt &s : stmts) {
        if (!s) continue;
        if (const Seq *inner = as<Seq>(s)) {
            for (const Stmt &x : inner->stmts) flat.push_back(x);
        } else {
            flat.push_back(std::move(s));
        }
    }
    if (flat.size() == 1) return flat.front();
    return std::make_shared<Seq>(std::move(flat));
}

std::vector<int64_t> WarpSpecialize::warpsOfGroups(const std::vector<int64_t> &groups) {
    std::vector<int64_t> out;
    for (int64_t g : groups)
        for (int64_t w = 0; w < kGroupThreads / kWarpThreads; ++w) out.push_back(g * (kGroupThreads / kWarpThreads) + w);
    return out;
}

std::vector<int64_t> WarpSpecialize::warpGroups() const {
    std::vector<int64_t> out;
    for (int64_t w : warps)
        if (out.empty() || out.back() != w / 4) out.push_back(w / 4);
    return out;
}

int64_t WarpSpecialize::namedBarrierId() const {
    if (warps.size() == 1) return -1;
    if (warps.front() % 4 == 0) return 1 + warps.front() / 4;
    return 0;
}

const char *ClcQuery::fieldName() const {
    switch (field) {
    case ClcField::IsCanceled: return "is_canceled";
    case ClcField::FirstCtaidX: return "first_ctaid_x";
    case ClcField::FirstCtaidY: return "first_ctaid_y";
    case ClcField::FirstCtaidZ: return "first_ctaid_z";
    }
    return "?";
}

} // namespace tilet::ir
