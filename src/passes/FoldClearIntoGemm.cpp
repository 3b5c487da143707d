// FoldClearIntoGemm.cpp -- see FoldClearIntoGemm.h.
#include "passes/FoldClearIntoGemm.h"

#include "ir/Effects.h"
#include "ir/Visitor.h"
#include "passes/Explain.h"

#include <cmath>
#include <functional>

namespace tilet {

namespace {

using ir::Stmt;

bool isZero(const ir::Expr &e) {
    if (const ir::FloatImm *f = ir::as<ir::FloatImm>(e)) return f->value == 0.0 && !std::signbit(f->value);
    if (std::optional<int64_t> i = ir::constInt(e)) return *i == 0;
    return false;
}

// The fill that `s` is, or that ends the branch a constant condition takes;
// with `rebuild`, which makes `s` without that fill.
struct ClearSite {
    const ir::Fill *fill = nullptr;
    std::function<Stmt()> without;
};

ClearSite zeroFill(const Stmt &s) {
    if (const ir::Fill *f = ir::as<ir::Fill>(s); f && isZero(f->value) && f->dst.coversBuffer())
        return {f, [] { return Stmt(); }};
    const ir::IfThenElse *branch = ir::as<ir::IfThenElse>(s);
    std::optional<int64_t> cond = branch ? ir::constInt(branch->cond) : std::nullopt;
    if (!cond) return {};
    const Stmt &taken = *cond ? branch->thenBody : branch->elseBody;
    if (!taken) return {};
    const ir::Seq *seq = ir::as<ir::Seq>(taken);
    const Stmt &last = seq && !seq->stmts.empty() ? seq->stmts.back() : taken;
    ClearSite inner = zeroFill(last);
    if (!inner.fill || ir::as<ir::IfThenElse>(last)) return {};   // (one level: the constant if itself)
    return {inner.fill, [branch, seq, taken, c = *cond] {
                Stmt rest;
                if (seq) {
                    std::vector<Stmt> kept(seq->stmts.begin(), seq->stmts.end() - 1);
                    rest = std::make_shared<ir::Seq>(std::move(kept), seq->span);
                }
                return Stmt(std::make_shared<ir::IfThenElse>(branch->cond, c ? rest : branch->thenBody, c ? branch->elseBody : rest,
                                                             branch->span));
            }};
}

class Folder : public ir::Mutator {
public:
    explicit Folder(PassContext &ctx) : ctx_(ctx) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateSeq(const Stmt &self, const ir::Seq &n) override {
        std::vector<Stmt> out;
        bool changed = false;
        for (const Stmt &s : n.stmts) {
            Stmt m = mutate(s);
            changed |= m != s;
            if (m) out.push_back(m);
        }
        // Each gemm takes the nearest zero fill of its C before it, if nothing between touches C.
        for (size_t g = 0; g < out.size(); ++g) {
            const ir::Gemm *gemm = ir::as<ir::Gemm>(out[g]);
            if (!gemm || !gemm->c.coversBuffer()) continue;
            const ir::BufferNode *c = gemm->c.buffer.get();
            if (gemm->a.buffer.get() == c || gemm->b.buffer.get() == c) continue;   // (it reads the zeros)
            for (size_t f = g; f-- > 0;) {
                ClearSite site = zeroFill(out[f]);
                if (site.fill && site.fill->dst.buffer.get() == c) {
                    fold(out, f, g, site);
                    changed = true;
                    break;
                }
                if (ir::touchesBuffer(out[f], c)) break;
            }
        }
        if (!changed) return self;
        std::vector<Stmt> kept;
        for (Stmt &s : out)
            if (s) kept.push_back(std::move(s));
        return std::make_shared<ir::Seq>(std::move(kept), n.span);
    }

private:
    void fold(std::vector<Stmt> &stmts, size_t fillAt, size_t gemmAt, const ClearSite &site) {
        auto gemm = std::make_shared<ir::Gemm>(*ir::as<ir::Gemm>(stmts[gemmAt]));
        gemm->clearAccum = ir::boolImm(true);
        Decision d;
        d.where = site.fill->span;
        d.op = "clear of '" + site.fill->dst.buffer->name + "'";
        d.choice = "folded into the gemm at " + gemm->span.lineColumn() + " (clear_accum)";
        d.why = "the gemm's first k-step overwrites the accumulator instead of adding to it, and nothing between the two touches it: no zeroing stores";
        ctx_.explain.record(std::move(d));
        stmts[gemmAt] = gemm;
        stmts[fillAt] = site.without();
    }

    PassContext &ctx_;
};

} // namespace

ir::Kernel foldClearIntoGemm(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    if (kernel.body) out.body = Folder(ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
