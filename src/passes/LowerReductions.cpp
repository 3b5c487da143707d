// LowerReductions.cpp -- see LowerReductions.h.
//
// With S the source layout and D = reduceLayout(S, dim):
//   1. red[g] = identity for every output register g of D.
//   2. For every source register l (one unrolled loop per local mode of S):
//      red[g(l)] = red[g(l)] op value(src[l]), g(l) keeping only the local
//      digits not on `dim`.
//   3. Thread modes of S on `dim` name the threads that share an output. The
//      part of them inside a warp (power-of-two extents and strides below 32)
//      is combined by xor shuffles; the rest through shared memory: every
//      thread writes red[g] to ws[g][t], then (after a barrier, inserted by
//      insertSyncs) combines the values of all its partners.
//   4. dst[g] = red[g] (or dst[g] op red[g] when clear = false).
#include "passes/LowerReductions.h"

#include "ir/Layout.h"
#include "ir/Visitor.h"
#include "passes/RoleMutator.h"

#include <cmath>
#include <functional>
#include <tuple>

namespace tilet {

namespace {

bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

struct ThreadPart {
    int64_t extent;
    int64_t stride;   // in threadIdx.x
};

DType accumulatorType(DType t) {
    if (isFloat(t)) return t == DType::F64 ? DType::F64 : DType::F32;
    return arithmeticType(t, t);
}

ir::Expr identity(ir::ReduceOp op, DType t) {
    bool isMax = op == ir::ReduceOp::Max, isMin = op == ir::ReduceOp::Min;
    if (!isMax && !isMin) return isFloat(t) ? ir::floatImm(0, t) : ir::intImm(0, t);
    if (isFloat(t)) return ir::floatImm(isMax ? -INFINITY : INFINITY, t);
    int64_t lo = t == DType::Int64 ? INT64_MIN : t == DType::UInt32 || t == DType::UInt64 ? 0 : INT32_MIN;
    int64_t hi = t == DType::Int64 ? INT64_MAX : t == DType::UInt32 ? UINT32_MAX : t == DType::UInt64 ? INT64_MAX : INT32_MAX;
    return ir::intImm(isMax ? lo : hi, t);
}

// How two partial results combine (abs is applied once, to the inputs).
ir::Expr combine(ir::ReduceOp op, ir::Expr a, ir::Expr b) {
    switch (op) {
    case ir::ReduceOp::Sum:
    case ir::ReduceOp::AbsSum: return ir::add(a, b);
    case ir::ReduceOp::Max:
    case ir::ReduceOp::AbsMax: return ir::binary(ir::BinaryOp::Max, a, b);
    case ir::ReduceOp::Min: return ir::binary(ir::BinaryOp::Min, a, b);
    }
    return a;
}

ir::Expr input(ir::ReduceOp op, ir::Expr v) {
    if (op == ir::ReduceOp::AbsSum || op == ir::ReduceOp::AbsMax)
        return std::make_shared<ir::MathCall>(v->dtype, ir::MathFunc::Abs, std::vector<ir::Expr>{v});
    return v;
}

std::shared_ptr<ir::For> localLoop(ir::VarRef var, int64_t extent, ir::Stmt body, SourceRange span) {
    auto f = std::make_shared<ir::For>(var, ir::intImm(0), ir::intImm(extent), ir::ForKind::Unrolled, std::move(body), span);
    f->threadLocal = true;
    return f;
}

// Inside ws(...) the layouts number the role's threads from 0.
class Lowerer : public RoleMutator {
public:
    Lowerer(const ir::Kernel &k, PassContext &ctx) : RoleMutator(k), ctx_(ctx) {}

protected:

    ir::Stmt mutateReduce(const ir::Stmt &self, const ir::Reduce &r) override {
        if (!r.src->layout || !r.dst->layout) return self;   // reported by inferLayouts
        const ir::TileLayout &S = *r.src->layout, &D = *r.dst->layout;
        SourceRange span = r.span;
        DType accT = accumulatorType(r.dst->dtype);
        int64_t outputs = D.localSize();
        ir::Buffer red = ir::makeBuffer(r.dst->name + "_partial", accT, {ir::intImm(outputs)}, ir::MemScope::Local, span);
        std::vector<ir::Stmt> body;

        // 1. identity
        ir::VarRef g0 = ir::makeVar("g");
        body.push_back(localLoop(g0, outputs, std::make_shared<ir::Store>(red, std::vector<ir::Expr>{g0}, identity(r.op, accT)), span));

        // 2. per-thread partial results
        std::vector<int> dims;
        for (int d = 0; d < static_cast<int>(S.shape.size()); ++d) {
            if (d != r.dim) dims.push_back(d);
        }
        std::vector<int> kept = *ir::matchLocalModes(S, D, dims);
        std::vector<ir::VarRef> digits;
        ir::Expr srcIndex = ir::intImm(0), dstIndex = ir::intImm(0);
        for (size_t k = 0; k < S.localModes.size(); ++k) {
            digits.push_back(ir::makeVar("r" + std::to_string(k)));
            srcIndex = ir::add(srcIndex, ir::mul(digits[k], ir::intImm(ir::localStride(S, k))));
        }
        for (size_t m = 0; m < kept.size(); ++m) dstIndex = ir::add(dstIndex, ir::mul(digits[kept[m]], ir::intImm(ir::localStride(D, m))));
        ir::Expr value = input(r.op, ir::cast(accT, std::make_shared<ir::Load>(r.src->registers, std::vector<ir::Expr>{srcIndex})));
        ir::Stmt accumulate = std::make_shared<ir::Store>(
            red, std::vector<ir::Expr>{dstIndex}, combine(r.op, std::make_shared<ir::Load>(red, std::vector<ir::Expr>{dstIndex}), value));
        for (size_t k = 0; k < S.localModes.size(); ++k) accumulate = localLoop(digits[k], S.localModes[k].extent, accumulate, span);
        body.push_back(accumulate);

        // 3. across threads
        Exchange exchange = combineAcrossThreads(S, [&](const ir::LayoutMode &m) { return m.dim == r.dim; }, red, outputs, r.op, r.dst->name, span);
        for (ir::Stmt &x : exchange.stmts) body.push_back(std::move(x));

        // 4. result
        ir::VarRef gf = ir::makeVar("g");
        ir::Expr result = std::make_shared<ir::Load>(red, std::vector<ir::Expr>{gf});
        if (!r.clear) result = combine(r.op, ir::cast(accT, std::make_shared<ir::Load>(r.dst->registers, std::vector<ir::Expr>{gf})), result);
        body.push_back(localLoop(gf, outputs, std::make_shared<ir::Store>(r.dst->registers, std::vector<ir::Expr>{gf}, ir::cast(r.dst->dtype, result)), span));

        Decision d;
        d.where = span;
        d.op = std::string("reduce_") + ir::reduceOpName(r.op) + " of '" + r.src->name + "' over dim " + std::to_string(r.dim);
        d.choice = std::to_string(S.localSize() / std::max<int64_t>(outputs, 1)) + " values per output reduced in each thread";
        d.why = exchange.describe("each output is held by one thread");
        ctx_.explain.record(std::move(d));
        return std::make_shared<ir::Allocate>(red, ir::seq(std::move(body)), span);
    }

    // Each register of the reducer combined with the same register of the
    // threads holding copies of its elements (the layout's replication), into
    // every copy.
    ir::Stmt mutateFinalizeReducer(const ir::Stmt &self, const ir::FinalizeReducer &f) override {
        if (!f.reducer->layout) return self;   // reported by inferLayouts
        const ir::TileLayout &L = *f.reducer->layout;
        SourceRange span = f.span;
        using Op = ir::BufferNode::Reducer::Op;
        Op op = f.reducer->reducer->op;
        ir::ReduceOp combineOp = op == Op::Sum ? ir::ReduceOp::Sum : op == Op::Max ? ir::ReduceOp::Max : ir::ReduceOp::Min;
        DType accT = accumulatorType(f.reducer->dtype);
        int64_t outputs = L.localSize();
        ir::Buffer red = ir::makeBuffer(f.reducer->name + "_partial", accT, {ir::intImm(outputs)}, ir::MemScope::Local, span);
        Exchange exchange = combineAcrossThreads(
            L, [](const ir::LayoutMode &m) { return m.dim == ir::LayoutMode::kReplicate; }, red, outputs, combineOp, f.reducer->name, span);
        Decision d;
        d.where = span;
        d.op = "finalize_reducer of '" + f.reducer->name + "'";
        d.choice = std::to_string(L.replication()) + " copies of each of its " + std::to_string(outputs) + " registers combined";
        d.why = exchange.describe("each element is held by one thread: nothing to combine");
        ctx_.explain.record(std::move(d));
        if (exchange.stmts.empty()) return ir::seq({});
        std::vector<ir::Stmt> body;
        ir::VarRef g0 = ir::makeVar("g"), g1 = ir::makeVar("g");
        body.push_back(localLoop(g0, outputs, std::make_shared<ir::Store>(red, std::vector<ir::Expr>{g0},
                                                                          ir::cast(accT, std::make_shared<ir::Load>(f.reducer->registers, std::vector<ir::Expr>{g0}))), span));
        for (ir::Stmt &x : exchange.stmts) body.push_back(std::move(x));
        body.push_back(localLoop(g1, outputs, std::make_shared<ir::Store>(f.reducer->registers, std::vector<ir::Expr>{g1},
                                                                          ir::cast(f.reducer->dtype, std::make_shared<ir::Load>(red, std::vector<ir::Expr>{g1}))), span));
        return std::make_shared<ir::Allocate>(red, ir::seq(std::move(body)), span);
    }

private:
    // How the copies of a value spread over threads were combined.
    struct Exchange {
        std::vector<ir::Stmt> stmts;
        std::vector<std::string> shuffles;   // xor offsets
        std::string sharedNote;              // the exchange through shared memory, if any
        std::string describe(const std::string &nothing) const {
            std::string why;
            if (!shuffles.empty()) {
                why = "then xor shuffles by";
                for (size_t i = 0; i < shuffles.size(); ++i) why += (i ? ", " : " ") + shuffles[i];
            }
            if (!sharedNote.empty()) why += (why.empty() ? "" : "; ") + sharedNote;
            return why.empty() ? nothing : why;
        }
    };

    // Workspace for the exchange across warps, per pass: larger exchanges go
    // in passes over the registers (a barrier between passes), as TileLang's
    // AllReduce reuses one workspace per element.
    static constexpr int64_t kMaxExchangeBytes = 16 * 1024;

    // Combines red[g] (g < outputs) of every thread with red[g] of the
    // threads that differ from it only in the digits of the thread modes of
    // `S` that `across` selects, leaving the result in all of them: the part
    // of those digits inside a warp (power-of-two extents and strides below
    // 32) by xor shuffles, the rest through shared memory: every thread
    // writes red[g] to ws[g][t], then (after a barrier, inserted by
    // insertSyncs) combines the values of all its partners.
    Exchange combineAcrossThreads(const ir::TileLayout &S, const std::function<bool(const ir::LayoutMode &)> &across, const ir::Buffer &red,
                                  int64_t outputs, ir::ReduceOp op, const std::string &name, SourceRange span) {
        Exchange out;
        DType accT = red->dtype;
        std::vector<ThreadPart> lanes, warps;
        for (size_t k = 0; k < S.threadModes.size(); ++k) {
            const ir::LayoutMode &m = S.threadModes[k];
            if (!across(m) || m.extent == 1) continue;
            int64_t stride = ir::threadStride(S, k);
            if (isPow2(m.extent) && isPow2(stride) && stride < 32) {
                int64_t inWarp = std::min(m.extent, 32 / stride);
                lanes.push_back({inWarp, stride});
                if (m.extent > inWarp) warps.push_back({m.extent / inWarp, 32});
            } else {
                warps.push_back({m.extent, stride});
            }
        }
        // One loop over the outputs, each combined with its xor partners in turn.
        ir::VarRef gs = ir::makeVar("g");
        std::vector<ir::Stmt> butterfly;
        for (const ThreadPart &p : lanes) {
            for (int64_t offset = p.stride; offset < p.stride * p.extent; offset *= 2) {
                ir::Expr current = std::make_shared<ir::Load>(red, std::vector<ir::Expr>{gs});
                ir::Expr other = std::make_shared<ir::Shuffle>(current, offset);
                butterfly.push_back(std::make_shared<ir::Store>(red, std::vector<ir::Expr>{gs}, combine(op, current, other)));
                out.shuffles.push_back(std::to_string(offset));
            }
        }
        if (!butterfly.empty()) out.stmts.push_back(localLoop(gs, outputs, ir::seq(std::move(butterfly)), span));
        if (warps.empty()) return out;

        int64_t T = roleThreads();
        int64_t perOutputBytes = T * dtypeBits(accT) / 8;
        int64_t chunk = outputs;
        while (chunk > 1 && (chunk * perOutputBytes > kMaxExchangeBytes || outputs % chunk != 0)) --chunk;
        ir::Expr thread = roleThread();
        ir::Buffer ws = ir::makeBuffer(name + "_exchange", accT, {ir::intImm(chunk * T)}, ir::MemScope::Shared, span);
        ir::VarRef pass = ir::makeVar("pass");
        auto output = [&](const ir::VarRef &g) { return chunk == outputs ? ir::Expr(g) : ir::add(ir::mul(pass, ir::intImm(chunk)), g); };
        std::vector<ir::Stmt> exchange;
        ir::VarRef gw = ir::makeVar("g");
        exchange.push_back(localLoop(gw, chunk, std::make_shared<ir::Store>(ws, std::vector<ir::Expr>{ir::add(ir::mul(gw, ir::intImm(T)), thread)},
                                                                            std::make_shared<ir::Load>(red, std::vector<ir::Expr>{output(gw)})), span));
        // Partner threads differ from this one only in the exchanged digits.
        ir::VarRef gr = ir::makeVar("g");
        ir::Expr base = thread;
        for (const ThreadPart &p : warps) {
            ir::Expr digit = ir::mod(ir::div(thread, ir::intImm(p.stride)), ir::intImm(p.extent));
            base = ir::sub(base, ir::mul(digit, ir::intImm(p.stride)));
        }
        ir::VarRef baseVar = ir::makeVar("partner_base");
        std::vector<ir::VarRef> cs;
        ir::Expr partner = baseVar;
        for (size_t m = 0; m < warps.size(); ++m) {
            cs.push_back(ir::makeVar("w" + std::to_string(m)));
            partner = ir::add(partner, ir::mul(cs[m], ir::intImm(warps[m].stride)));
        }
        ir::Expr slot = ir::add(ir::mul(gr, ir::intImm(T)), partner);
        ir::Stmt gather = std::make_shared<ir::Store>(red, std::vector<ir::Expr>{output(gr)},
                                                      combine(op, std::make_shared<ir::Load>(red, std::vector<ir::Expr>{output(gr)}),
                                                              std::make_shared<ir::Load>(ws, std::vector<ir::Expr>{slot})));
        for (size_t m = 0; m < warps.size(); ++m) gather = localLoop(cs[m], warps[m].extent, gather, span);
        ir::Stmt reset = std::make_shared<ir::Store>(red, std::vector<ir::Expr>{output(gr)}, identity(op, accT));
        ir::Stmt perOutput = localLoop(gr, chunk, ir::seq({reset, gather}), span);
        exchange.push_back(std::make_shared<ir::LetStmt>(baseVar, base, perOutput, span));
        ir::Stmt passes = ir::seq(std::move(exchange));
        if (chunk != outputs)
            passes = std::make_shared<ir::For>(pass, ir::intImm(0), ir::intImm(outputs / chunk), ir::ForKind::Unrolled, passes, span);
        out.stmts.push_back(std::make_shared<ir::Allocate>(ws, passes, span));
        int64_t partners = 1;
        for (const ThreadPart &p : warps) partners *= p.extent;
        out.sharedNote = "then " + std::to_string(partners) + " partial results per output exchanged through " +
                         std::to_string(chunk * perOutputBytes) + " bytes of shared memory" +
                         (chunk == outputs ? "" : ", in " + std::to_string(outputs / chunk) + " passes of " + std::to_string(chunk) + " outputs");
        return out;
    }

    PassContext &ctx_;
};

} // namespace

ir::Kernel lowerReductions(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    out.body = Lowerer(kernel, ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
