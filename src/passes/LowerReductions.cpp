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

#include <cmath>
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

class Lowerer : public ir::Mutator {
public:
    Lowerer(const ir::Kernel &k, PassContext &ctx) : ctx_(ctx), threads_(k.threads) {}
    using ir::Mutator::mutate;

protected:
    // Inside ws(...) the layouts number the role's threads from 0.
    ir::Stmt mutateWarpSpecialize(const ir::Stmt &self, const ir::WarpSpecialize &n) override {
        auto outer = std::make_pair(threads_, firstThread_);
        threads_ = n.threads();
        firstThread_ = n.firstThread();
        ir::Stmt out = ir::Mutator::mutateWarpSpecialize(self, n);
        std::tie(threads_, firstThread_) = outer;
        return out;
    }

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
        std::vector<ThreadPart> lanes, warps;
        for (size_t k = 0; k < S.threadModes.size(); ++k) {
            const ir::LayoutMode &m = S.threadModes[k];
            if (m.dim != r.dim || m.extent == 1) continue;
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
        std::vector<std::string> steps;
        ir::VarRef gs = ir::makeVar("g");
        std::vector<ir::Stmt> butterfly;
        for (const ThreadPart &p : lanes) {
            for (int64_t offset = p.stride; offset < p.stride * p.extent; offset *= 2) {
                ir::Expr current = std::make_shared<ir::Load>(red, std::vector<ir::Expr>{gs});
                ir::Expr other = std::make_shared<ir::Shuffle>(current, offset);
                butterfly.push_back(std::make_shared<ir::Store>(red, std::vector<ir::Expr>{gs}, combine(r.op, current, other)));
                steps.push_back(std::to_string(offset));
            }
        }
        if (!butterfly.empty()) body.push_back(localLoop(gs, outputs, ir::seq(std::move(butterfly)), span));
        int64_t workspaceBytes = 0;
        std::string warpNote;
        if (!warps.empty()) {
            int64_t T = threads_;
            ir::Expr thread = firstThread_ ? ir::sub(ir::threadIdx(), ir::intImm(firstThread_)) : ir::threadIdx();
            ir::Buffer ws = ir::makeBuffer(r.dst->name + "_exchange", accT, {ir::intImm(outputs * T)}, ir::MemScope::Shared, span);
            workspaceBytes = outputs * T * dtypeBits(accT) / 8;
            std::vector<ir::Stmt> exchange;
            ir::VarRef gw = ir::makeVar("g");
            exchange.push_back(localLoop(gw, outputs, std::make_shared<ir::Store>(ws, std::vector<ir::Expr>{ir::add(ir::mul(gw, ir::intImm(T)), thread)},
                                                                                  std::make_shared<ir::Load>(red, std::vector<ir::Expr>{gw})), span));
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
            ir::Stmt gather = std::make_shared<ir::Store>(red, std::vector<ir::Expr>{gr},
                                                          combine(r.op, std::make_shared<ir::Load>(red, std::vector<ir::Expr>{gr}),
                                                                  std::make_shared<ir::Load>(ws, std::vector<ir::Expr>{slot})));
            for (size_t m = 0; m < warps.size(); ++m) gather = localLoop(cs[m], warps[m].extent, gather, span);
            ir::Stmt reset = std::make_shared<ir::Store>(red, std::vector<ir::Expr>{gr}, identity(r.op, accT));
            ir::Stmt perOutput = localLoop(gr, outputs, ir::seq({reset, gather}), span);
            exchange.push_back(std::make_shared<ir::LetStmt>(baseVar, base, perOutput, span));
            body.push_back(std::make_shared<ir::Allocate>(ws, ir::seq(std::move(exchange)), span));
            int64_t partners = 1;
            for (const ThreadPart &p : warps) partners *= p.extent;
            warpNote = "then " + std::to_string(partners) + " partial results per output exchanged through " +
                       std::to_string(workspaceBytes) + " bytes of shared memory";
        }

        // 4. result
        ir::VarRef gf = ir::makeVar("g");
        ir::Expr result = std::make_shared<ir::Load>(red, std::vector<ir::Expr>{gf});
        if (!r.clear) result = combine(r.op, ir::cast(accT, std::make_shared<ir::Load>(r.dst->registers, std::vector<ir::Expr>{gf})), result);
        body.push_back(localLoop(gf, outputs, std::make_shared<ir::Store>(r.dst->registers, std::vector<ir::Expr>{gf}, ir::cast(r.dst->dtype, result)), span));

        Decision d;
        d.where = span;
        d.op = std::string("reduce_") + ir::reduceOpName(r.op) + " of '" + r.src->name + "' over dim " + std::to_string(r.dim);
        d.choice = std::to_string(S.localSize() / std::max<int64_t>(outputs, 1)) + " values per output reduced in each thread";
        std::string why;
        if (!steps.empty()) {
            why = "then xor shuffles by";
            for (size_t i = 0; i < steps.size(); ++i) why += (i ? ", " : " ") + steps[i];
        }
        if (!warpNote.empty()) why += (why.empty() ? "" : "; ") + warpNote;
        if (why.empty()) why = "each output is held by one thread";
        d.why = why;
        ctx_.explain.record(std::move(d));
        return std::make_shared<ir::Allocate>(red, ir::seq(std::move(body)), span);
    }

private:
    PassContext &ctx_;
    int64_t threads_;           // the threads the reduction runs on: the block's or the role's
    int64_t firstThread_ = 0;   // threadIdx.x of the first of them
};

} // namespace

ir::Kernel lowerReductions(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    out.body = Lowerer(kernel, ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
