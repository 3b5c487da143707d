// InferLayouts.cpp -- see InferLayouts.h.
//
// For each parallel nest, in program order:
//   1. Collect the nest's buffer accesses.
//   2. Pick the loop layout: the layout of a fragment indexed exactly by the
//      nest's variables, if one has a layout; else canonicalLayout(shape,
//      threads, vector) with the widest vector all stride-1 global/shared
//      accesses allow (16 bytes at most, aligned by proof).
//   3. Every fragment access must use distinct loop variables as indices;
//      the fragment's layout is the loop layout projected onto them.
// A reduction gives its destination the source layout with the reduced
// dimension projected away.
#include "passes/InferLayouts.h"

#include "ir/Analysis.h"
#include "ir/BufferEdits.h"
#include "ir/Layout.h"
#include "ir/MmaLayout.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "passes/ParallelNest.h"

#include <map>
#include <numeric>

namespace tilet {

namespace {

struct Access {
    ir::Buffer buffer;
    std::vector<ir::Expr> indices;
    SourceRange span;
};

std::vector<Access> collectAccesses(const ir::Stmt &body) {
    std::vector<Access> out;
    ir::forEachStmt(body, [&](const ir::Stmt &s) {
        if (const ir::Store *st = ir::as<ir::Store>(s)) out.push_back({st->buffer, st->indices, st->span});
    });
    ir::forEachExpr(body, [&](const ir::Expr &e) {
        if (const ir::Load *l = ir::as<ir::Load>(e)) out.push_back({l->buffer, l->indices, l->span});
    });
    return out;
}

std::string describeLayout(const ir::TileLayout &l) {
    std::string shape;
    for (size_t i = 0; i < l.shape.size(); ++i) shape += (i ? "x" : "") + std::to_string(l.shape[i]);
    int64_t perThread = l.localSize();
    int64_t vec = l.vectorWidth();
    std::string s = "[" + shape + "] on " + std::to_string(l.threads) + " threads, " + std::to_string(perThread) +
                    " element" + (perThread == 1 ? "" : "s") + " per thread";
    if (vec > 1) s += " in " + std::to_string(perThread / vec) + " step" + (perThread / vec == 1 ? "" : "s") + " of " + std::to_string(vec);
    if (l.replication() > 1) s += ", replicated on " + std::to_string(l.replication()) + " threads";
    return s;
}

class Inferrer : public ir::Mutator {
public:
    Inferrer(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx), threads_(k.threads) {}
    using ir::Mutator::mutate;

    // The instruction of an MMA gemm fixes its accumulator's layout (and a
    // register A operand's): they are set before any loop is looked at, so a
    // clear or an epilogue loop over the accumulator follows them.
    void fixGemmLayouts(const ir::Stmt &body) {
        ir::forEachStmt(body, [&](const ir::Stmt &s) {
            const ir::Gemm *g = ir::as<ir::Gemm>(s);
            if (!g || (g->inst != ir::GemmInst::MMA && g->inst != ir::GemmInst::WGMMA)) return;
            ir::MmaTiling t = ir::mmaTiling(*g);
            if (g->inst == ir::GemmInst::WGMMA) {
                setLayout({g->c.buffer, {}, g->span}, ir::wgmmaAccumulatorLayout(t), "the wgmma accumulator layout");
                if (g->a.buffer->scope == ir::MemScope::Fragment)
                    setLayout({g->a.buffer, {}, g->span}, ir::wgmmaOperandALayout(t), "the wgmma register A operand layout");
                return;
            }
            setLayout({g->c.buffer, {}, g->span}, ir::mmaAccumulatorLayout(t), "the mma.sync accumulator layout");
            if (g->a.buffer->scope == ir::MemScope::Fragment)
                setLayout({g->a.buffer, {}, g->span}, ir::mmaOperandALayout(t), "the mma.sync A operand layout");
        });
        propagateFixedLayouts(body);
    }

    // What the instructions fix reaches further before program order decides:
    // a reduction of a fixed fragment fixes its result, and fragments that a
    // parallel loop indexes exactly by its variables share one layout. So a
    // statistic first cleared or filled before the loop that reduces into it
    // (the row maximum of an online softmax) gets the reduction's layout.
    void propagateFixedLayouts(const ir::Stmt &body) {
        for (bool changed = true; changed;) {
            changed = false;
            ir::forEachStmt(body, [&](const ir::Stmt &s) {
                if (const ir::Reduce *r = ir::as<ir::Reduce>(s); r && layoutOf(r->src) && !layoutOf(r->dst)) {
                    setLayout({r->dst, {}, r->span}, ir::reduceLayout(*layoutOf(r->src), r->dim), "the layout of the reduction of '" + r->src->name + "'");
                    changed = true;
                }
                const ir::For *f = ir::as<ir::For>(s);
                if (!f || f->forKind != ir::ForKind::Parallel) return;
                ParallelNest nest = parallelNest(*f);
                std::vector<Access> exact;
                const ir::TileLayout *known = nullptr;
                for (const Access &a : collectAccesses(nest.body)) {
                    if (a.buffer->scope != ir::MemScope::Fragment || !isIdentity(a, nest)) continue;
                    exact.push_back(a);
                    if (layoutOf(a.buffer) && !known) known = &*layoutOf(a.buffer);
                }
                if (!known) return;
                ir::TileLayout layout = *known;
                for (const Access &a : exact) {
                    if (layoutOf(a.buffer)) continue;
                    setLayout(a, layout, "the layout of the fragments it is computed with");
                    changed = true;
                }
            });
        }
    }

    const ir::BufferEdits &decisions() const { return edits_; }

protected:
    ir::Stmt mutateLetStmt(const ir::Stmt &self, const ir::LetStmt &n) override {
        lets_.push_back({n.var, n.value});
        ir::Stmt out = ir::Mutator::mutateLetStmt(self, n);
        lets_.pop_back();
        return out;
    }

    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        if (n.forKind != ir::ForKind::Parallel) return ir::Mutator::mutateFor(self, n);
        ParallelNest nest = parallelNest(n);
        std::vector<Access> accesses = collectAccesses(nest.body);
        size_t outerLets = lets_.size();
        ir::forEachStmt(nest.body, [&](const ir::Stmt &s) {
            if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) lets_.push_back({l->var, l->value});
        });

        std::optional<ir::TileLayout> layout;
        for (const Access &a : accesses) {
            if (a.buffer->scope == ir::MemScope::Fragment && layoutOf(a.buffer) && isIdentity(a, nest)) {
                layout = layoutOf(a.buffer);
                break;
            }
        }
        int64_t vector = 1;
        std::string vectorWhy;
        if (!layout) {
            vector = chooseVector(nest, accesses, vectorWhy);
            layout = ir::canonicalLayout(nest.extents, threads_, vector);
        }
        bool ok = true;
        for (const Access &a : accesses) {
            if (a.buffer->scope != ir::MemScope::Fragment) continue;
            ok = assignFragment(a, nest, *layout) && ok;
        }
        lets_.resize(outerLets);
        auto loop = ir::rebuildFor(n, n.min, n.extent, n.body);
        loop->threadLayout = layout;

        Decision d;
        d.where = n.span;
        d.op = "parallel loop";
        d.choice = describeLayout(*layout);
        d.why = vectorWhy;
        d.details.push_back("layout " + layout->str());
        ctx_.explain.record(std::move(d));
        (void)ok;
        return loop;
    }

    // Inside ws(...) a parallel loop runs on the role's warp groups only.
    ir::Stmt mutateWarpSpecialize(const ir::Stmt &self, const ir::WarpSpecialize &n) override {
        int64_t outer = threads_;
        threads_ = n.threads();
        ir::Stmt out = ir::Mutator::mutateWarpSpecialize(self, n);
        threads_ = outer;
        return out;
    }

    ir::Stmt mutateReduce(const ir::Stmt &self, const ir::Reduce &r) override {
        if (!layoutOf(r.src)) {
            ctx_.diags.error(r.span, "fragment '" + r.src->name + "' is reduced before any parallel loop or copy writes it");
            return self;
        }
        ir::TileLayout dst = ir::reduceLayout(*layoutOf(r.src), r.dim);
        Access a{r.dst, {}, r.span};
        setLayout(a, dst);
        return self;
    }

private:
    const std::optional<ir::TileLayout> &layoutOf(const ir::Buffer &b) const { return edits_.current(b).layout; }

    bool isIdentity(const Access &a, const ParallelNest &nest) const {
        if (a.indices.size() != nest.vars.size()) return false;
        if (layoutOf(a.buffer) && layoutOf(a.buffer)->shape != nest.extents) return false;
        for (size_t d = 0; d < a.indices.size(); ++d) {
            if (a.indices[d].get() != nest.vars[d].get()) return false;
        }
        return true;
    }

    bool assignFragment(const Access &a, const ParallelNest &nest, const ir::TileLayout &loop) {
        std::vector<int> dims;
        for (size_t d = 0; d < a.indices.size(); ++d) {
            int found = -1;
            for (size_t v = 0; v < nest.vars.size(); ++v) {
                if (a.indices[d].get() == nest.vars[v].get()) found = static_cast<int>(v);
            }
            if (found < 0 || std::find(dims.begin(), dims.end(), found) != dims.end()) {
                ctx_.diags.error(a.span, "fragment '" + a.buffer->name + "' is indexed by '" + ir::toString(a.indices[d]) +
                                             "'; inside a parallel loop each fragment index must be a different loop variable");
                return false;
            }
            dims.push_back(found);
        }
        ir::TileLayout derived = ir::projectLayout(loop, dims);
        std::vector<int64_t> shape = *a.buffer->constShape();
        if (derived.shape != shape) {
            for (size_t d = 0; d < shape.size(); ++d) {
                if (derived.shape[d] != shape[d]) {
                    ctx_.diags.error(a.span, "dimension " + std::to_string(d) + " of fragment '" + a.buffer->name + "' has " +
                                                 std::to_string(shape[d]) + " elements but loop variable '" + nest.vars[dims[d]]->name +
                                                 "' runs over " + std::to_string(derived.shape[d]));
                    return false;
                }
            }
        }
        return setLayout(a, derived);
    }

    bool setLayout(const Access &a, const ir::TileLayout &layout, const std::string &why = "first distributed here") {
        const ir::BufferNode &b = edits_.current(a.buffer);
        if (!b.layout) {
            ir::BufferNode &decided = edits_.edit(a.buffer);
            decided.layout = layout;
            decided.registers = ir::makeBuffer(b.name, b.dtype, {ir::intImm(layout.localSize())}, ir::MemScope::Local, b.span);
            firstUse_[a.buffer.get()] = a.span;
            Decision d;
            d.where = a.span;
            d.op = "fragment '" + b.name + "'";
            d.choice = describeLayout(layout);
            d.why = why;
            d.details.push_back("layout " + layout.str());
            ctx_.explain.record(std::move(d));
            return true;
        }
        if (*b.layout == layout) return true;
        Diagnostic diag{Severity::Error, a.span, "fragment '" + b.name + "' needs another distribution over the threads here "
                                                      "than the one fixed where it was first used", {}, {}};
        diag.note(firstUse_[a.buffer.get()], "layout of '" + b.name + "' fixed here");
        diag.note({}, "needed here: " + layout.str() + "; fixed: " + b.layout->str() +
                          " (to transpose or reshape a fragment, copy it through shared memory)");
        ctx_.diags.report(std::move(diag));
        return false;
    }

    ir::Expr inlineLets(const ir::Expr &e) const {
        ir::Expr out = e;
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) out = ir::substitute(out, {{it->first, it->second}});
        return out;
    }

    // The widest vector (elements per thread step along the last dimension)
    // that every stride-1 global or shared access of the nest can move in one
    // aligned access of at most 16 bytes.
    int64_t chooseVector(const ParallelNest &nest, const std::vector<Access> &accesses, std::string &why) const {
        const ir::VarRef &j = nest.vars.back();
        int64_t extent = nest.extents.back();
        int64_t best = 16;   // elements; reduced by every access
        bool any = false;
        std::string limit;
        for (const Access &a : accesses) {
            if (a.buffer->scope != ir::MemScope::Global && a.buffer->scope != ir::MemScope::Shared) continue;
            if (a.indices.empty() || isSubByte(a.buffer->dtype)) continue;
            bool elsewhere = false;
            for (size_t d = 0; d + 1 < a.indices.size(); ++d) elsewhere = elsewhere || ir::usesVar(inlineLets(a.indices[d]), j.get());
            ir::Expr last = inlineLets(a.indices.back());
            if (!ir::usesVar(last, j.get())) continue;
            ir::Expr base = ir::simplify(ir::substitute(last, {{j, ir::intImm(0)}}));
            ir::Expr step = ir::simplify(ir::sub(ir::substitute(last, {{j, ir::intImm(1)}}), ir::substitute(last, {{j, ir::intImm(0)}})));
            if (elsewhere || ir::constInt(step) != 1) {
                limit = "'" + a.buffer->name + "' is not accessed with unit stride along '" + j->name + "'";
                best = 1;
                any = true;
                continue;
            }
            int64_t v = 16 / (dtypeBits(a.buffer->dtype) / 8);
            int64_t d = ir::knownDivisor(base);
            if (d != 0) v = std::gcd(v, d);
            if (a.indices.size() > 1) {
                std::optional<int64_t> row = ir::constInt(a.buffer->shape.back());
                v = row ? std::gcd(v, *row) : 1;
            }
            if (v < best) {
                best = v;
                limit = "'" + a.buffer->name + "' allows " + std::to_string(v) + "-element aligned accesses";
            }
            any = true;
        }
        if (!any) {
            why = "no global or shared access to vectorize";
            return 1;
        }
        while (best > 1 && extent % best != 0) best /= 2;
        why = best > 1 ? std::to_string(best) + "-element vectors (" + limit + ")" : "not vectorized: " + (limit.empty() ? "extent" : limit);
        return best;
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    ir::BufferEdits edits_;   // the layouts decided so far
    int64_t threads_;   // the threads a parallel loop here is spread over
    std::map<const ir::BufferNode *, SourceRange> firstUse_;
    std::vector<std::pair<ir::VarRef, ir::Expr>> lets_;
};

} // namespace

ir::Kernel inferLayouts(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Inferrer inferrer(kernel, ctx);
    inferrer.fixGemmLayouts(kernel.body);
    out.body = inferrer.mutate(kernel.body);
    inferrer.decisions().applyTo(out);
    return out;
}

} // namespace tilet
