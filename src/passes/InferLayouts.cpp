// InferLayouts.cpp -- see InferLayouts.h.
//
// In TileLang's order of strength (its LayoutInference: floating fragments,
// then strict, common and free levels):
//   0. A fragment accessed outside parallel loops is fully replicated: every
//      thread executes such a statement, so every thread holds every element.
//   1. What instructions fix: gemm accumulators and register operands; then
//      what they fix spreads (reductions, fragments computed together).
//   2. Each parallel nest, in program order:
//      a. Collect the nest's buffer accesses.
//      b. Pick the loop layout: the layout of a fragment indexed exactly by
//         the nest's variables, if one has a layout; else canonicalLayout(
//         shape, threads, vector) with the widest vector all stride-1
//         global/shared accesses allow (16 bytes at most, aligned by proof).
//      c. A fragment with no layout yet gets the loop layout projected onto
//         the loop variables indexing it, with every dimension indexed by
//         something else (a constant, an outer loop's variable) held whole by
//         each thread. A fragment with a layout must hold each element it is
//         read at in the thread that runs the iteration, and each element it
//         is written at in exactly the threads that run such iterations
//         (checked element by element, as TileLang proves containment).
//      A nest that only fills fragments with one value (clear, fill) does not
//      constrain them: it is decided last, with the layout their other uses
//      gave them.
// A reduction gives its destination the source layout with the reduced
// dimension projected away.
#include "passes/InferLayouts.h"

#include "ir/Analysis.h"
#include "ir/BufferEdits.h"
#include "ir/Effects.h"
#include "ir/Layout.h"
#include "ir/MmaLayout.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "passes/ParallelNest.h"

#include <functional>
#include <tuple>
#include <map>
#include <numeric>
#include <set>

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

// Calls `f` on every parallel nest (its outermost loop; the inner loops of a
// nest are part of it, not nests of their own).
void forEachNest(const ir::Stmt &body, const std::function<void(const ir::For &)> &f) {
    std::set<const ir::StmtNode *> inner;
    ir::forEachStmt(body, [&](const ir::Stmt &s) {
        const ir::For *loop = ir::as<ir::For>(s);
        if (!loop || loop->forKind != ir::ForKind::Parallel || inner.count(s.get())) return;
        for (ir::Stmt b = loop->body; ir::as<ir::For>(b) && ir::as<ir::For>(b)->forKind == ir::ForKind::Parallel; b = ir::as<ir::For>(b)->body)
            inner.insert(b.get());
        f(*loop);
    });
}

std::string shapeText(const std::vector<int64_t> &shape) {
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
    return s;
}

std::string describeLayout(const ir::TileLayout &l) {
    std::string shape = shapeText(l.shape);
    int64_t perThread = l.localSize();
    int64_t vec = l.vectorWidth();
    std::string s = "[" + shape + "] on " + std::to_string(l.threads) + " threads, " + std::to_string(perThread) +
                    " element" + (perThread == 1 ? "" : "s") + " per thread";
    if (vec > 1) s += " in " + std::to_string(perThread / vec) + " step" + (perThread / vec == 1 ? "" : "s") + " of " + std::to_string(vec);
    if (l.replication() > 1) s += ", replicated on " + std::to_string(l.replication()) + " threads";
    return s;
}

constexpr int64_t kMaxRegistersPerThread = 255;

// How one fragment dimension is indexed inside a nest: by loop variable
// `loopDim`, or (loopDim < 0) by something the loop variables do not change,
// whose value `value` is known when it is a constant.
// A loop variable may also be divided by a constant (`B_local[i, j / 2]`:
// two iterations read each packed byte, TileLang's dequantize loops):
// element loopVar / divisor; or have an offset added that the loop
// variables do not change (`x[i, jj * 4 + j]`: a window of the dimension
// that an outer loop moves, TileLang's mhc_pre): element loopVar + offset,
// for each value in `offsets` the offset may take with the window inside
// the dimension.
struct IndexUse {
    int loopDim = -1;
    int64_t divisor = 1;
    std::optional<int64_t> value;
    std::optional<ir::Expr> offset;
    std::vector<int64_t> offsets;
};

// `v / c` for a loop variable v of `vars` and a constant c > 1 (loop
// variables are never negative, so it is floordiv too): v's position and c.
std::optional<std::pair<int, int64_t>> dividedLoopVar(const ir::Expr &index, const std::vector<ir::VarRef> &vars) {
    const ir::Binary *b = ir::as<ir::Binary>(index);
    if (!b || b->op != ir::BinaryOp::Div) return std::nullopt;
    std::optional<int64_t> c = ir::constInt(b->b);
    if (!c || *c < 2) return std::nullopt;
    for (size_t v = 0; v < vars.size(); ++v) {
        if (b->a.get() == vars[v].get()) return std::pair<int, int64_t>{static_cast<int>(v), *c};
    }
    return std::nullopt;
}

// `v + offset` or `offset + v` for a loop variable v of `vars` and an
// offset that uses none of them: v's position and the offset.
std::optional<std::pair<int, ir::Expr>> offsetLoopVar(const ir::Expr &index, const std::vector<ir::VarRef> &vars) {
    const ir::Binary *b = ir::as<ir::Binary>(index);
    if (!b || b->op != ir::BinaryOp::Add) return std::nullopt;
    for (size_t v = 0; v < vars.size(); ++v) {
        for (auto [var, other] : {std::pair{b->a, b->b}, std::pair{b->b, b->a}}) {
            if (var.get() != vars[v].get()) continue;
            for (const ir::VarRef &w : vars) {
                if (ir::usesVar(other, w.get())) return std::nullopt;
            }
            return std::pair<int, ir::Expr>{static_cast<int>(v), other};
        }
    }
    return std::nullopt;
}

// The values `offset` may take with [offset, offset + extent) meeting
// [0, size): those of its constant part plus a multiple of what is known to
// divide the rest (every value when nothing is). A window partly outside
// the dimension is one whose outside iterations a branch skips (a
// convolution's edge taps): its inside ones are checked all the same.
std::vector<int64_t> windowOffsets(const ir::Expr &offset, int64_t extent, int64_t size) {
    int64_t constant = 0;
    ir::Expr rest = ir::splitConstant(ir::simplify(offset), constant);
    int64_t step = rest ? ir::knownDivisor(rest) : 0;
    std::vector<int64_t> out;
    for (int64_t o = 1 - extent; o < size; ++o) {
        if (step == 0 ? o == constant : ((o - constant) % step + step) % step == 0) out.push_back(o);
    }
    return out;
}

// Where two distributions of one fragment first part: a concrete thread and
// the elements it holds first in each.
std::string firstDifference(const ir::TileLayout &fixed, const ir::TileLayout &needed, const std::string &name) {
    if (fixed.threads != needed.threads)
        return "; it is spread over " + std::to_string(fixed.threads) + " threads but needed on " + std::to_string(needed.threads);
    auto show = [&](const std::vector<int64_t> &e) {
        std::string out = name + "[";
        for (size_t d = 0; d < e.size(); ++d) out += (d ? ", " : "") + std::to_string(e[d]);
        return out + "]";
    };
    int64_t locals = std::min(fixed.localSize(), needed.localSize());
    for (int64_t t = 0; t < fixed.threads; ++t) {
        for (int64_t l = 0; l < locals; ++l) {
            std::vector<int64_t> a = ir::elementAt(fixed, t, l), b = ir::elementAt(needed, t, l);
            if (a != b)
                return "; thread " + std::to_string(t) + "'s register " + std::to_string(l) + " holds " + show(a) + " as fixed but " + show(b) + " here";
        }
    }
    return "; they hold " + std::to_string(fixed.localSize()) + " and " + std::to_string(needed.localSize()) + " elements per thread";
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
            if (!g || (!ir::isMmaSync(g->inst) && g->inst != ir::GemmInst::WGMMA)) return;
            ir::MmaTiling t = ir::mmaTiling(*g);
            if (g->inst == ir::GemmInst::WGMMA) {
                setLayout({g->c.buffer, {}, g->span}, ir::wgmmaAccumulatorLayout(t), "the wgmma accumulator layout");
                if (g->a.buffer->scope == ir::MemScope::Fragment)
                    setLayout({g->a.buffer, {}, g->span}, ir::wgmmaOperandALayout(t), "the wgmma register A operand layout");
                return;
            }
            setLayout({g->c.buffer, {}, g->span}, ir::mmaAccumulatorLayout(t), "the mma.sync accumulator layout");
            // A transposed register A, [K, M] (transpose_A), holds the same elements in the same registers.
            if (g->a.buffer->scope == ir::MemScope::Fragment && g->transposeA)
                setLayout({g->a.buffer, {}, g->span}, ir::projectLayout(ir::mmaOperandALayout(t), {1, 0}), "the mma.sync A operand layout, transposed");
            else if (g->a.buffer->scope == ir::MemScope::Fragment)
                setLayout({g->a.buffer, {}, g->span}, ir::mmaOperandALayout(t), "the mma.sync A operand layout");
            // A register B, [K, N] (or [N, K] with transpose_B), likewise.
            if (g->b.buffer->scope == ir::MemScope::Fragment)
                setLayout({g->b.buffer, {}, g->span}, g->transposeB ? ir::projectLayout(ir::mmaOperandBLayout(t), {1, 0}) : ir::mmaOperandBLayout(t),
                          g->transposeB ? "the mma.sync B operand layout, transposed" : "the mma.sync B operand layout");
        });
        fixTmemLoadLayouts(body);
        propagateFixedLayouts(body);
    }

    // What the instructions fix reaches further before program order decides:
    // a reduction of a fixed fragment fixes its result, and fragments that a
    // parallel loop indexes exactly by its variables share one layout. So a
    // statistic first cleared or filled before the loop that reduces into it
    // (the row maximum of an online softmax) gets the reduction's layout.
    // A copy out of tensor memory gives its fragment the layout of the
    // tcgen05.ld that reads it (ir/MmaLayout.h); shapes lower-tensor-memory does not
    // generate are left to the loops (and reported there).
    void fixTmemLoadLayouts(const ir::Stmt &body) {
        class Finder : public ir::Visitor {
        public:
            Finder(Inferrer &in, int64_t threads) : in_(in), threads_(threads) {}
            void visitWarpSpecialize(const ir::WarpSpecialize &n) override {
                int64_t outer = threads_;
                threads_ = n.threads();
                ir::Visitor::visitWarpSpecialize(n);
                threads_ = outer;
            }
            void visitCopy(const ir::Copy &c) override {
                // tcgen05.st moves the registers of the tcgen05.ld of the same shape.
                bool store = c.inst == ir::CopyInst::TMemStore;
                const ir::Region &cells = store ? c.dst : c.src, &fragment = store ? c.src : c.dst;
                std::vector<int64_t> tile = cells.tileShape();
                if ((c.inst != ir::CopyInst::TMemLoad && !store) || tile.size() != 2 || fragment.tileShape() != tile) return;
                ir::TmemTiling t{tile[0], tile[1], threads_};
                if (!t.fits() || fragment.buffer->scope != ir::MemScope::Fragment) return;
                in_.setLayout({fragment.buffer, {}, c.span}, ir::tmemLoadLayout(t),
                              t.shape() == ir::TmemLoadShape::Lanes32x32b ? "the tcgen05.ld 32x32b layout: a row per thread"
                                                                          : "the tcgen05.ld 16x256b layout: the m16n8 accumulator's, 16 rows per warp");
            }

        private:
            Inferrer &in_;
            int64_t threads_;
        };
        Finder finder(*this, threads_);
        finder.visit(body);
    }

    void propagateFixedLayouts(const ir::Stmt &body) {
        for (bool changed = true; changed;) {
            changed = false;
            ir::forEachStmt(body, [&](const ir::Stmt &s) {
                if (const ir::Reduce *r = ir::as<ir::Reduce>(s); r && layoutOf(r->src) && !layoutOf(r->dst)) {
                    // A layout refused (beyond a thread's local memory) stays
                    // unset: only a layout set is progress, or this would never end.
                    changed |= setLayout({r->dst, {}, r->span}, ir::reduceLayout(*layoutOf(r->src), r->dim), "the layout of the reduction of '" + r->src->name + "'");
                }
            });
            forEachNest(body, [&](const ir::For &f) {
                ParallelNest nest = parallelNest(f);
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
                    changed |= setLayout(a, layout, "the layout of the fragments it is computed with");
                }
                // A vector broadcast against them (`acc[i, j] * scale[i]`) is
                // held where the loop needs it: the loop's layout projected
                // onto the variables indexing it.
                for (const Access &a : collectAccesses(nest.body)) {
                    if (a.buffer->scope != ir::MemScope::Fragment || layoutOf(a.buffer) || isWrite(a, nest)) continue;
                    std::optional<std::vector<int>> dims = loopDimsOf(a, nest);
                    if (!dims) continue;
                    changed |= setLayout(a, ir::withWholeDimensions(layout, *dims, *a.buffer->constShape()),
                                         "the layout of the loop over '" + exact.front().buffer->name + "' it is read in");
                }
            });
        }
    }

    // Step 0: fragments that statements outside parallel loops read or write.
    void replicateFloatingFragments(const ir::Stmt &body) {
        FloatingFinder finder(threads_);
        finder.visit(body);
        for (const auto &[buffer, where] : finder.found) {
            const ir::BufferNode &b = *buffer;
            bool asked = b.reducer && b.reducer->replication == ir::BufferNode::Reducer::Replication::All;
            setLayout({buffer, {}, where.span}, ir::fullyReplicatedLayout(*b.constShape(), where.threads),
                      asked ? "alloc_reducer(..., replication = all) gives every thread a copy of every element, as TileLang does"
                            : "it is accessed outside parallel loops, where every thread executes the statement; "
                              "TileLang makes such 'floating' fragments fully replicated too");
        }
    }

    // Loops that only fill fragments, decided after every other use: their
    // fragments' layouts, or the canonical layout for a fragment nothing else
    // distributes.
    ir::Stmt decideFills(const ir::Stmt &body) {
        if (deferred_.empty()) return body;
        FillDecider decider(*this);
        return decider.mutate(body);
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
        if (isFill(nest) && !allHaveLayouts(accesses)) {
            deferred_[&n] = threads_;
            return self;
        }
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
        // Else a fragment with a layout that the loop variables index (each
        // once, all of them), its other dimensions held whole: the loop runs
        // each iteration where its element is (`lse[k, i]` in a loop over i).
        std::string vectorWhy;
        for (const Access &a : accesses) {
            if (layout) break;
            if (a.buffer->scope != ir::MemScope::Fragment || !layoutOf(a.buffer)) continue;
            std::optional<Covering> covering = coveringDims(a, nest);
            if (covering) layout = ir::loopLayoutFrom(*layoutOf(a.buffer), covering->dims, covering->factors, covering->windows);
            // A window's layout is its place at offset 0: taken only if the
            // same threads hold it at every other place.
            bool window = covering && std::any_of(covering->windows.begin(), covering->windows.end(), [](int64_t w) { return w > 0; });
            if (layout && window) {
                if (ownershipProblem(a, *layout, *indexUses(a, nest), isWrite(a, nest)).empty())
                    vectorWhy = "the threads that hold the window of '" + a.buffer->name + "' it reads, the same wherever the window is";
                else
                    layout.reset();
            }
        }
        int64_t vector = 1;
        if (!layout) {
            vector = chooseVector(nest, accesses, vectorWhy);
            layout = ir::canonicalLayout(nest.extents, threads_, vector, wholeLoopDims(nest, accesses));
            if (layout->replication() > 1 && touchesMemoryOnly(nest, accesses)) {
                ir::TileLayout padded = ir::paddedLayout(nest.extents, threads_, vector);
                if (padded.localSize() < layout->localSize()) {
                    layout = padded;
                    vectorWhy += std::string(vectorWhy.empty() ? "" : "; ") + "the " + std::to_string(threads_) + " threads do not divide [" +
                                 shapeText(nest.extents) + "]: padded to [" + shapeText(padded.shape) + "], the iterations past the end skipped";
                }
            }
        }
        // A fragment the loop writes, laid out already where the loop's
        // threads would not hold what they write (a gemm's register operand
        // written transposed, `Q_t[k, i] = Q[i, k]`): the loop takes that
        // fragment's layout instead, as TileLang takes a written fragment's
        // layout for the loop first; what it reads elsewhere is converted below.
        for (const Access &a : accesses) {
            if (a.buffer->scope != ir::MemScope::Fragment || !layoutOf(a.buffer) || a.buffer->reducer || !isWrite(a, nest)) continue;
            // (Read elsewhere in the loop too, the fragment cannot be converted for the reads.)
            bool readOtherwise = std::any_of(accesses.begin(), accesses.end(),
                                             [&](const Access &o) { return o.buffer == a.buffer && !sameIndices(o.indices, a.indices); });
            if (readOtherwise) continue;
            std::optional<std::vector<IndexUse>> uses = indexUses(a, nest);
            if (!uses || ownershipProblem(a, *layout, *uses, true).empty()) continue;
            std::optional<Covering> covering = coveringDims(a, nest);
            if (!covering || std::any_of(covering->windows.begin(), covering->windows.end(), [](int64_t w) { return w > 0; })) continue;
            std::optional<ir::TileLayout> written = ir::loopLayoutFrom(*layoutOf(a.buffer), covering->dims, covering->factors, covering->windows);
            if (!written || !ownershipProblem(a, *written, *uses, true).empty()) continue;
            layout = written;
            vectorWhy = "the layout of '" + a.buffer->name + "', which the loop writes where its other fragments would put the element elsewhere";
            break;
        }
        // A fragment the loop only reads, laid out where its threads do not
        // hold what they read, goes through shared memory first.
        std::vector<ir::Buffer> converted;
        for (const Access &a : accesses) {
            if (a.buffer->scope != ir::MemScope::Fragment || !layoutOf(a.buffer) || readsInPlace(a, nest, *layout)) continue;
            if (std::find(converted.begin(), converted.end(), a.buffer) == converted.end()) converted.push_back(a.buffer);
        }
        bool ok = true;
        std::vector<const Access *> done;   // `acc[i] += v` reads and writes one element: one check
        for (const Access &a : accesses) {
            if (a.buffer->scope != ir::MemScope::Fragment) continue;
            if (std::find(converted.begin(), converted.end(), a.buffer) != converted.end()) continue;
            bool same = false;
            for (const Access *d : done) same = same || (d->buffer == a.buffer && sameIndices(d->indices, a.indices));
            if (same) continue;
            done.push_back(&a);
            ok = assignFragment(a, nest, *layout) && ok;
        }
        lets_.resize(outerLets);
        (void)ok;
        if (converted.empty()) return annotate(n, *layout, vectorWhy);
        return convertThroughShared(n, *layout, vectorWhy, converted);
    }

    // Whether the loop may read `a` where it is: true unless `a` is only
    // read in the nest, and some thread would read an element it does not hold.
    bool readsInPlace(const Access &a, const ParallelNest &nest, const ir::TileLayout &loop) {
        for (const Access &other : collectAccesses(nest.body)) {
            if (other.buffer == a.buffer && isWrite(other, nest)) return true;
        }
        std::optional<std::vector<IndexUse>> uses = indexUses(a, nest);
        if (!uses) return true;   // assignFragment reports it
        for (size_t d = 0; d < uses->size(); ++d) {
            const IndexUse &u = (*uses)[d];
            if (u.loopDim >= 0 && !u.offset && loop.shape[u.loopDim] != *ir::constInt(a.buffer->shape[d]) * u.divisor) return true;
            if (u.offset && u.offsets.empty()) return true;
        }
        return ownershipProblem(a, loop, *uses, false).empty();
    }

    // How each index of `a` uses the nest's variables; nullopt for an index
    // of another form (its dimension in `*unsupported`).
    std::optional<std::vector<IndexUse>> indexUses(const Access &a, const ParallelNest &nest, size_t *unsupported = nullptr) const {
        std::vector<IndexUse> uses;
        std::vector<int> dims;
        std::vector<int64_t> shape = *a.buffer->constShape();
        for (size_t d = 0; d < a.indices.size(); ++d) {
            if (unsupported) *unsupported = d;
            IndexUse use;
            for (size_t v = 0; v < nest.vars.size(); ++v) {
                if (a.indices[d].get() == nest.vars[v].get()) use.loopDim = static_cast<int>(v);
            }
            if (use.loopDim == -1) {
                if (std::optional<std::pair<int, int64_t>> divided = dividedLoopVar(a.indices[d], nest.vars))
                    std::tie(use.loopDim, use.divisor) = *divided;
            }
            if (use.loopDim == -1) {
                if (std::optional<std::pair<int, ir::Expr>> shifted = offsetLoopVar(a.indices[d], nest.vars)) {
                    // The offset's lets may use the loop variables.
                    ir::Expr offset = inlineLets(shifted->second);
                    for (const ir::VarRef &v : nest.vars) {
                        if (ir::usesVar(offset, v.get())) return std::nullopt;
                    }
                    use.loopDim = shifted->first;
                    use.offset = offset;
                    use.offsets = windowOffsets(offset, nest.extents[static_cast<size_t>(use.loopDim)], shape[d]);
                }
            }
            if (use.loopDim >= 0 && std::find(dims.begin(), dims.end(), use.loopDim) != dims.end()) return std::nullopt;
            if (use.loopDim == -1) {
                ir::Expr index = inlineLets(a.indices[d]);
                for (const ir::VarRef &v : nest.vars) {
                    if (ir::usesVar(index, v.get())) return std::nullopt;
                }
                use.value = ir::constInt(ir::simplify(index));
            }
            uses.push_back(use);
            dims.push_back(use.loopDim);
        }
        return uses;
    }

    // The layout conversion: before the loop, the fragment's owners write it
    // to a shared tile (a loop with the fragment's own layout; the barrier
    // before the reads is insert-syncs'), and the loop reads the tile.
    ir::Stmt convertThroughShared(const ir::For &n, const ir::TileLayout &layout, const std::string &why, const std::vector<ir::Buffer> &fragments) {
        ir::BufferReplacement replacement;
        std::map<const ir::BufferNode *, ir::Buffer> byteTiles;
        std::vector<std::pair<ir::Buffer, ir::Stmt>> copies;
        for (const ir::Buffer &frag : fragments) {
            std::vector<int64_t> shape = *frag->constShape();
            std::vector<ir::Expr> dims;
            for (int64_t e : shape) dims.push_back(ir::intImm(e));
            // Shared memory has no element of a packed type: a register's byte each (f4e2m1).
            const bool asBytes = inRegistersOneByOne(frag->dtype);
            ir::Buffer tile = ir::makeBuffer(frag->name + "_converted", asBytes ? DType::UInt8 : frag->dtype, dims, ir::MemScope::Shared, frag->span);
            (asBytes ? byteTiles[frag.get()] : replacement[frag.get()]) = tile;
            ir::Stmt nest = makeParallelNest(shape, n.span, [&](const std::vector<ir::Expr> &vars) {
                ir::Expr value = std::make_shared<ir::Load>(frag, vars, n.span);
                if (asBytes) value = std::make_shared<ir::MathCall>(DType::UInt8, ir::MathFunc::BitCast, std::vector<ir::Expr>{value}, n.span);
                return std::make_shared<ir::Store>(tile, vars, value, ir::StoreOp::Assign, n.span);
            });
            const ir::For &outer = *ir::as<ir::For>(nest);
            auto copy = ir::rebuildFor(outer, outer.min, outer.extent, outer.body);
            copy->threadLayout = *layoutOf(frag);
            copies.push_back({tile, copy});
            int64_t bytes = dtypeBits(tile->dtype) / 8;
            for (int64_t e : shape) bytes *= e;
            Decision d;
            d.where = n.span;
            d.op = "fragment '" + frag->name + "'";
            d.choice = "converted through " + std::to_string(bytes) + " bytes of shared memory for this loop";
            d.why = "the loop runs its iterations where elements of '" + frag->name + "' are not held (its layout: " +
                    describeLayout(*layoutOf(frag)) + "); its owners store it, a block barrier, then the loop reads it";
            ctx_.explain.record(std::move(d));
        }
        // Reads of a byte tile reinterpret the byte as the fragment's element.
        class ByteReads : public ir::Mutator {
        public:
            explicit ByteReads(const std::map<const ir::BufferNode *, ir::Buffer> &tiles) : tiles_(tiles) {}
            using ir::Mutator::mutate;

        protected:
            ir::Expr mutateLoad(const ir::Expr &self, const ir::Load &l) override {
                auto it = tiles_.find(l.buffer.get());
                if (it == tiles_.end()) return ir::Mutator::mutateLoad(self, l);
                std::vector<ir::Expr> indices;
                for (const ir::Expr &i : l.indices) indices.push_back(mutate(i));
                ir::Expr byte = std::make_shared<ir::Load>(it->second, indices, l.span);
                return std::make_shared<ir::MathCall>(l.dtype, ir::MathFunc::BitCast, std::vector<ir::Expr>{byte}, l.span);
            }

        private:
            const std::map<const ir::BufferNode *, ir::Buffer> &tiles_;
        };
        ir::Stmt body = ir::replaceBuffers(n.body, replacement);
        if (!byteTiles.empty()) body = ByteReads(byteTiles).mutate(body);
        auto loop = ir::rebuildFor(n, n.min, n.extent, body);
        ir::Stmt out = annotate(*loop, layout, why);
        std::vector<ir::Stmt> seq;
        for (const auto &c : copies) seq.push_back(c.second);
        seq.push_back(out);
        out = ir::seq(std::move(seq));
        for (const auto &c : copies) out = std::make_shared<ir::Allocate>(c.first, out, n.span);
        return out;
    }

    ir::Stmt annotate(const ir::For &n, const ir::TileLayout &layout, const std::string &why) {
        auto loop = ir::rebuildFor(n, n.min, n.extent, n.body);
        loop->threadLayout = layout;
        Decision d;
        d.where = n.span;
        d.op = "parallel loop";
        d.choice = describeLayout(layout);
        d.why = why;
        d.details.push_back("layout " + layout.str());
        ctx_.explain.record(std::move(d));
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

    // A packed copy (lower-packed-copies) runs where its fragment is. One
    // that fills the fragment lays it out, as any copy into a fragment does
    // in program order (later loops that read it elsewhere convert it); one
    // that packs it waits for the loops that compute it (decidePackedCopies).
    ir::Stmt mutateCopy(const ir::Stmt &self, const ir::Copy &c) override {
        if (c.inst != ir::CopyInst::PackedBytes) return self;
        const bool unpacks = c.dst.buffer->scope == ir::MemScope::Fragment;
        packedCopies_.push_back({{unpacks ? c.dst.buffer : c.src.buffer, {}, c.span}, threads_});
        if (unpacks) decidePackedCopies();
        return self;
    }

public:
    // A fragment only packed copies (and fills, decided after this) use gets
    // the canonical layout, eight elements (a 32-bit word of memory) of a row
    // per thread and step where the row allows, so that each byte's pair is
    // in one thread.
    void decidePackedCopies() {
        for (const auto &[access, threads] : packedCopies_) {
            if (layoutOf(access.buffer)) continue;
            std::vector<int64_t> shape = *access.buffer->constShape();
            int64_t vector = shape.back() % 8 == 0 ? 8 : 2;   // sema: rows of whole bytes
            setLayout(access, ir::canonicalLayout(shape, threads, vector),
                      "a packed copy, which moves the two " + std::string(dtypeName(access.buffer->dtype)) + " elements of each byte in one thread");
        }
        packedCopies_.clear();
    }

protected:

    ir::Stmt mutateReduce(const ir::Stmt &self, const ir::Reduce &r) override {
        if (!layoutOf(r.src)) {
            // Only filled so far (fill loops are decided last, and take this).
            setLayout({r.src, {}, r.span}, ir::canonicalLayout(*r.src->constShape(), threads_, 1),
                      "nothing distributes it before this reduction");
        }
        ir::TileLayout dst = ir::reduceLayout(*layoutOf(r.src), r.dim);
        Access a{r.dst, {}, r.span};
        setLayout(a, dst);
        return self;
    }

private:
    const std::optional<ir::TileLayout> &layoutOf(const ir::Buffer &b) const { return edits_.current(b).layout; }

    // The nest reads and writes shared and global memory only, and no
    // register of its own: its iterations may run anywhere, and a padded
    // layout's extra ones skipped (a fragment's layout has the fragment's shape).
    static bool touchesMemoryOnly(const ParallelNest &nest, const std::vector<Access> &accesses) {
        for (const Access &a : accesses) {
            if (a.buffer->scope == ir::MemScope::Fragment) return false;
        }
        bool registerWrites = false;
        ir::forEachEffect(nest.body, [&](const ir::Stmt &, const ir::Effects &fx) {
            for (const ir::Access &a : fx.accesses) {
                bool memory = a.buffer->scope == ir::MemScope::Global || a.buffer->scope == ir::MemScope::Shared;
                registerWrites = registerWrites || (a.writes() && !memory);
            }
        });
        return !registerWrites;
    }

    // Every statement of the nest stores one value, the same in every
    // iteration, to a fragment indexed by the loop variables: clear, fill.
    static bool isFill(const ParallelNest &nest) {
        bool fill = true;
        auto check = [&](const ir::Stmt &s) {
            const ir::Store *st = ir::as<ir::Store>(s);
            if (!st || st->buffer->scope != ir::MemScope::Fragment || st->op != ir::StoreOp::Assign) {
                fill = false;
                return;
            }
            if (st->indices.size() != nest.vars.size()) fill = false;
            for (size_t d = 0; fill && d < st->indices.size(); ++d) fill = st->indices[d].get() == nest.vars[d].get();
            ir::forEachExpr(st->value, [&](const ir::Expr &e) {
                if (ir::as<ir::Load>(e) || ir::as<ir::VarNode>(e)) fill = false;
            });
        };
        if (const ir::Seq *seq = ir::as<ir::Seq>(nest.body)) {
            for (const ir::Stmt &s : seq->stmts) check(s);
        } else {
            check(nest.body);
        }
        return fill;
    }

    bool allHaveLayouts(const std::vector<Access> &accesses) const {
        for (const Access &a : accesses) {
            if (a.buffer->scope == ir::MemScope::Fragment && !layoutOf(a.buffer)) return false;
        }
        return true;
    }

    // Fragment accesses outside parallel loops, with the threads that execute them.
    struct Floating {
        SourceRange span;
        int64_t threads;
    };
    class FloatingFinder : public ir::Visitor {
    public:
        explicit FloatingFinder(int64_t threads) : threads_(threads) {}
        std::map<ir::Buffer, Floating> found;
        using ir::Visitor::visit;

    protected:
        void visitFor(const ir::For &n) override {
            if (n.forKind != ir::ForKind::Parallel) ir::Visitor::visitFor(n);
        }
        void visitWarpSpecialize(const ir::WarpSpecialize &n) override {
            int64_t outer = threads_;
            threads_ = n.threads();
            ir::Visitor::visitWarpSpecialize(n);
            threads_ = outer;
        }
        void visitLoad(const ir::Load &n) override {
            note(n.buffer, n.span);
            ir::Visitor::visitLoad(n);
        }
        void visitStore(const ir::Store &n) override {
            note(n.buffer, n.span);
            ir::Visitor::visitStore(n);
        }
        // TileLang's `replication = all`: every thread holds every element of the reducer.
        void visitAllocate(const ir::Allocate &n) override {
            if (n.buffer->reducer && n.buffer->reducer->replication == ir::BufferNode::Reducer::Replication::All) note(n.buffer, n.span);
            ir::Visitor::visitAllocate(n);
        }

    private:
        void note(const ir::Buffer &b, SourceRange span) {
            if (b->scope == ir::MemScope::Fragment && !found.count(b)) found[b] = {span, threads_};
        }
        int64_t threads_;
    };

    class FillDecider : public ir::Mutator {
    public:
        explicit FillDecider(Inferrer &inferrer) : inferrer_(inferrer) {}
        using ir::Mutator::mutate;

    protected:
        ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
            auto it = inferrer_.deferred_.find(&n);
            if (it == inferrer_.deferred_.end()) return ir::Mutator::mutateFor(self, n);
            ParallelNest nest = parallelNest(n);
            std::optional<ir::TileLayout> layout;
            std::vector<Access> accesses = collectAccesses(nest.body);
            for (const Access &a : accesses) {
                if (!layout && inferrer_.layoutOf(a.buffer)) layout = inferrer_.layoutOf(a.buffer);
            }
            std::string why = "the layout its fragments have where they are computed";
            if (!layout) {
                layout = ir::canonicalLayout(nest.extents, it->second, 1);
                why = "nothing else distributes its fragments";
            }
            for (const Access &a : accesses) inferrer_.assignFragment(a, nest, *layout);
            return inferrer_.annotate(n, *layout, why);
        }

    private:
        Inferrer &inferrer_;
    };

    // For each dimension of `a`, the loop variable indexing it (-1: an index
    // the loop variables do not change), when the extents agree and no
    // variable indexes two dimensions; nullopt for any other index.
    std::optional<std::vector<int>> loopDimsOf(const Access &a, const ParallelNest &nest) const {
        std::vector<int> dims;
        std::vector<int64_t> shape = *a.buffer->constShape();
        for (size_t d = 0; d < a.indices.size(); ++d) {
            int found = -1;
            for (size_t v = 0; v < nest.vars.size(); ++v) {
                if (a.indices[d].get() == nest.vars[v].get()) found = static_cast<int>(v);
            }
            if (found >= 0 && (shape[d] != nest.extents[found] || std::find(dims.begin(), dims.end(), found) != dims.end())) return std::nullopt;
            if (found < 0) {
                for (const ir::VarRef &v : nest.vars) {
                    if (ir::usesVar(a.indices[d], v.get())) return std::nullopt;
                }
            }
            dims.push_back(found);
        }
        return dims;
    }

    // For each loop variable, the fragment dimension it indexes, when every
    // loop variable indexes exactly one dimension of `a` with the same extent.
    // Each loop variable indexes one dimension of `a` (dims[v]), whole, or
    // divided by a constant that many times larger (factors[v]), or a window
    // of windows[v] elements of it that an offset moves.
    struct Covering {
        std::vector<int> dims;
        std::vector<int64_t> factors;
        std::vector<int64_t> windows;
    };
    std::optional<Covering> coveringDims(const Access &a, const ParallelNest &nest) const {
        Covering out{std::vector<int>(nest.vars.size(), -1), std::vector<int64_t>(nest.vars.size(), 1), std::vector<int64_t>(nest.vars.size(), 0)};
        std::optional<std::vector<IndexUse>> uses = indexUses(a, nest);
        if (!uses) return std::nullopt;
        std::vector<int64_t> shape = *a.buffer->constShape();
        for (size_t d = 0; d < uses->size(); ++d) {
            const IndexUse &u = (*uses)[d];
            if (u.loopDim < 0) continue;
            const size_t v = static_cast<size_t>(u.loopDim);
            if (u.offset ? u.offsets.empty() : shape[d] * u.divisor != nest.extents[v]) return std::nullopt;
            out.dims[v] = static_cast<int>(d);
            out.factors[v] = u.divisor;
            if (u.offset) out.windows[v] = nest.extents[v];
        }
        for (int d : out.dims) {
            if (d < 0) return std::nullopt;
        }
        return out;
    }

    // Dimensions of the loop that must not be spread over threads: those
    // indexing a fragment (with no layout yet) that some access, anywhere in
    // the kernel, indexes by something other than a loop variable -- every
    // thread must then hold that dimension whole.
    std::vector<int> wholeLoopDims(const ParallelNest &nest, const std::vector<Access> &accesses) const {
        std::vector<int> out;
        for (const Access &a : accesses) {
            if (a.buffer->scope != ir::MemScope::Fragment || layoutOf(a.buffer)) continue;
            auto it = wholeDims_.find(a.buffer.get());
            if (it == wholeDims_.end()) continue;
            for (size_t d = 0; d < a.indices.size(); ++d) {
                if (!it->second.count(static_cast<int>(d))) continue;
                for (size_t v = 0; v < nest.vars.size(); ++v) {
                    if (a.indices[d].get() == nest.vars[v].get()) out.push_back(static_cast<int>(v));
                }
            }
        }
        return out;
    }

public:
    // Which dimensions of each fragment some parallel loop indexes by
    // something other than one of its variables (a constant, an outer loop's
    // variable): looked at before any layout is chosen.
    // Reshaped views of fragments (reshape(f, shape)): a fragment and its
    // views are laid out together, each the others' layout reshaped.
    void findReshapes(const ir::Stmt &body) {
        ir::forEachStmt(body, [&](const ir::Stmt &s) {
            const ir::Allocate *a = ir::as<ir::Allocate>(s);
            if (!a || a->buffer->scope != ir::MemScope::Fragment || !a->buffer->viewOf) return;
            ir::Buffer root = a->buffer->viewOf;
            while (root->viewOf) root = root->viewOf;
            std::vector<ir::Buffer> &group = reshapeGroups_[root.get()];
            if (group.empty()) group.push_back(root);
            group.push_back(a->buffer);
            reshapeRoot_[a->buffer.get()] = root.get();
        });
    }

    void findWholeDimensions(const ir::Stmt &body) {
        forEachNest(body, [&](const ir::For &f) {
            ParallelNest nest = parallelNest(f);
            for (const Access &a : collectAccesses(nest.body)) {
                if (a.buffer->scope != ir::MemScope::Fragment) continue;
                for (size_t d = 0; d < a.indices.size(); ++d) {
                    bool dependent = false;
                    for (const ir::VarRef &v : nest.vars) dependent = dependent || ir::usesVar(a.indices[d], v.get());
                    if (!dependent) wholeDims_[a.buffer.get()].insert(static_cast<int>(d));
                }
            }
        });
    }

private:
    bool isIdentity(const Access &a, const ParallelNest &nest) const {
        if (a.indices.size() != nest.vars.size()) return false;
        if (layoutOf(a.buffer) && layoutOf(a.buffer)->shape != nest.extents) return false;
        for (size_t d = 0; d < a.indices.size(); ++d) {
            if (a.indices[d].get() != nest.vars[d].get()) return false;
        }
        return true;
    }

    bool assignFragment(const Access &a, const ParallelNest &nest, const ir::TileLayout &loop) {
        size_t unsupported = 0;
        std::optional<std::vector<IndexUse>> parsed = indexUses(a, nest, &unsupported);
        if (!parsed) {
            ctx_.diags.error(a.span, "fragment '" + a.buffer->name + "' is indexed by '" + ir::toString(a.indices[unsupported]) +
                                         "'; inside a parallel loop each fragment index must be a different loop variable (or one "
                                         "divided by a constant, or one plus an offset the loop does not change), or not depend on "
                                         "the loop variables");
            return false;
        }
        const std::vector<IndexUse> &uses = *parsed;
        std::vector<int> dims;
        bool identityLike = true;   // every index a different loop variable
        bool divided = false;       // some index a loop variable divided by a constant
        bool shifted = false;       // some index a loop variable plus an offset
        for (const IndexUse &use : uses) {
            identityLike = identityLike && use.loopDim >= 0 && use.divisor == 1 && !use.offset;
            divided = divided || use.divisor > 1;
            shifted = shifted || use.offset;
            dims.push_back(use.loopDim);
        }
        // Iterations of a parallel loop are independent: two that write one
        // element (or update it, as `acc[i] += x[i, j]` does) have no order,
        // and each thread's copy would keep only what its iterations wrote.
        // A reducer's update is the exception: each thread combines its
        // iterations into its own copy, and finalize_reducer the copies.
        bool write = isWrite(a, nest) && !a.buffer->reducer;
        if ((divided || shifted) && (write || !layoutOf(a.buffer))) {
            // c iterations share each element: a write would be unordered, and
            // a layout taken from such a read would hold each element c times.
            // A window's elements depend on where the loop around moved it,
            // which one layout of the loop cannot follow for a write.
            ctx_.diags.error(a.span, std::string("fragment '") + a.buffer->name + "' is " + (write ? "written" : "first laid out by a read") +
                                         " at a loop variable " + (divided ? "divided by a constant" : "plus an offset") +
                                         "; tilet supports such an index only where the loop reads a "
                                         "fragment an earlier statement laid out (copy into it first)");
            return false;
        }
        if (write) {
            for (size_t v = 0; v < nest.vars.size(); ++v) {
                if (nest.extents[v] == 1 || std::find(dims.begin(), dims.end(), static_cast<int>(v)) != dims.end()) continue;
                ctx_.diags.error(a.span, "every iteration of '" + nest.vars[v]->name + "' writes the same element of fragment '" +
                                             a.buffer->name + "': the iterations of a parallel loop must write different elements; "
                                             "to combine values along '" + nest.vars[v]->name + "' use a reduce_* operation, or a serial loop");
                return false;
            }
        }
        std::vector<int64_t> shape = *a.buffer->constShape();
        for (size_t d = 0; d < shape.size(); ++d) {
            if (uses[d].offset && uses[d].offsets.empty()) {
                ctx_.diags.error(a.span, "dimension " + std::to_string(d) + " of fragment '" + a.buffer->name + "' has " + std::to_string(shape[d]) +
                                             " elements, but loop variable '" + nest.vars[dims[d]]->name + "' runs over " +
                                             std::to_string(loop.shape[dims[d]]) + " from offset '" + ir::toString(*uses[d].offset) +
                                             "', which cannot take a value that puts any of them inside it");
                return false;
            }
            if (uses[d].offset) continue;
            if (dims[d] >= 0 && loop.shape[dims[d]] != shape[d] * uses[d].divisor) {
                ctx_.diags.error(a.span, "dimension " + std::to_string(d) + " of fragment '" + a.buffer->name + "' has " +
                                             std::to_string(shape[d]) + " elements but loop variable '" + nest.vars[dims[d]]->name + "' " +
                                             (uses[d].divisor > 1 ? "/ " + std::to_string(uses[d].divisor) + " runs over " +
                                                                        std::to_string(loop.shape[dims[d]] / uses[d].divisor) + " (of " +
                                                                        std::to_string(loop.shape[dims[d]]) + ")"
                                                                  : "runs over " + std::to_string(loop.shape[dims[d]])));
                return false;
            }
        }
        if (divided || shifted) return checkOwnership(a, nest, loop, uses, write);
        ir::TileLayout derived = identityLike ? ir::projectLayout(loop, dims) : ir::withWholeDimensions(loop, dims, shape);
        if (!layoutOf(a.buffer) || ir::sameDistribution(*layoutOf(a.buffer), derived)) return setLayout(a, derived);
        return checkOwnership(a, nest, loop, uses, write);
    }

    static bool sameIndices(const std::vector<ir::Expr> &a, const std::vector<ir::Expr> &b) {
        if (a.size() != b.size()) return false;
        for (size_t d = 0; d < a.size(); ++d) {
            if (a[d] != b[d] && !ir::structurallyEqual(a[d], b[d])) return false;
        }
        return true;
    }

    static bool isWrite(const Access &a, const ParallelNest &nest) {
        bool write = false;
        ir::forEachStmt(nest.body, [&](const ir::Stmt &s) {
            const ir::Store *st = ir::as<ir::Store>(s);
            write = write || (st && st->buffer == a.buffer && sameIndices(st->indices, a.indices));
        });
        return write;
    }

    // The fragment keeps the layout it has; the loop's threads must hold
    // what they read, and a write must reach every copy of the element it
    // writes (the fragment's owners of it are exactly the loop's threads that
    // run such an iteration). Element by element, as TileLang proves that a
    // fragment's layout contains a loop's.
    bool checkOwnership(const Access &a, const ParallelNest &nest, const ir::TileLayout &loop, const std::vector<IndexUse> &uses, bool write) {
        std::string problem = ownershipProblem(a, loop, uses, write);
        if (problem.empty()) return true;
        const ir::TileLayout &held = *layoutOf(a.buffer);
        Diagnostic diag{Severity::Error, a.span, "fragment '" + a.buffer->name + "' is distributed over the threads differently "
                                                  "here than where its layout was fixed", {}, {}};
        diag.note(firstUse_[a.buffer.get()], "layout of '" + a.buffer->name + "' fixed here: " + describeLayout(held) + " (" + firstWhy_[a.buffer.get()] + ")");
        diag.note(a.span, "this loop spreads its iterations as " + describeLayout(loop) + ": " + problem);
        diag.note(a.span, "to give a fragment another distribution, copy it through shared memory");
        ctx_.diags.report(std::move(diag));
        (void)nest;
        return false;
    }

    // Why the threads of `loop` cannot access `a` in place ("" when they can).
    std::string ownershipProblem(const Access &a, const ir::TileLayout &loop, const std::vector<IndexUse> &uses, bool write) const {
        const ir::TileLayout &held = *layoutOf(a.buffer);
        // The loop spreads its iterations as the fragment its elements, and
        // iteration (i, j, ...) accesses element (i, j, ...): each thread runs
        // exactly the iterations of the elements it holds (the common case,
        // decided without visiting every element).
        bool identity = uses.size() == held.shape.size();
        for (size_t d = 0; identity && d < uses.size(); ++d)
            identity = uses[d].loopDim == static_cast<int>(d) && uses[d].divisor == 1 && !uses[d].value && !uses[d].offset;
        if (identity && loop == held) return "";
        // The same pair of distributions recurs (each softmax loop reads a row
        // vector the same way): one that holds is checked once.
        std::string key = held.str() + "|" + loop.str() + "|" + (write ? "w" : "r");
        for (const IndexUse &u : uses) {
            key += "|" + std::to_string(u.loopDim) + "/" + std::to_string(u.divisor) + ":" + (u.value ? std::to_string(*u.value) : "-");
            for (int64_t o : u.offsets) key += "+" + std::to_string(o);
        }
        if (holding_.count(key)) return "";
        std::string problem = elementwiseProblem(a, held, loop, uses, write);
        if (problem.empty()) holding_.insert(key);
        return problem;
    }

    std::string elementwiseProblem(const Access &a, const ir::TileLayout &held, const ir::TileLayout &loop, const std::vector<IndexUse> &uses,
                                   bool write) const {
        constexpr int64_t kMaxChecked = int64_t(1) << 22;   // iterations checked one by one
        // A window (an index plus an offset) is checked at every place it may be.
        int64_t places = 1;
        for (const IndexUse &u : uses) {
            if (u.offset) places *= std::max<int64_t>(static_cast<int64_t>(u.offsets.size()), 1);
            if (places > kMaxChecked) break;
        }
        if (loop.localSize() > kMaxChecked / std::max<int64_t>(loop.threads, 1) / places)
            return "the loop has more than " + std::to_string(kMaxChecked) + " iterations per block" + (places > 1 ? " over the places of its window" : "") +
                   ", too many to check which thread holds each element";
        std::vector<int64_t> iteration;
        std::vector<int64_t> shift(uses.size(), 0);
        std::vector<std::optional<int64_t>> coords(uses.size());
        auto elementOf = [&](int64_t t, int64_t l) -> const std::vector<std::optional<int64_t>> & {
            ir::elementAt(loop, t, l, iteration);
            for (size_t d = 0; d < uses.size(); ++d)
                coords[d] = uses[d].loopDim >= 0 ? std::optional<int64_t>(iteration[static_cast<size_t>(uses[d].loopDim)] / uses[d].divisor + shift[d])
                                                 : uses[d].value;
            return coords;
        };
        auto show = [&](const std::vector<std::optional<int64_t>> &coords) {
            std::string out = a.buffer->name + "[";
            for (size_t d = 0; d < coords.size(); ++d) out += (d ? ", " : "") + (coords[d] ? std::to_string(*coords[d]) : ir::toString(a.indices[d]));
            out += "]";
            for (size_t d = 0; d < uses.size(); ++d) {
                if (uses[d].offset) out += " ('" + ir::toString(*uses[d].offset) + "' = " + std::to_string(shift[d]) + ")";
            }
            return out;
        };
        std::set<std::pair<int64_t, std::vector<int64_t>>> written;   // (thread, element; -1 where not a loop variable)
        std::string problem;
        if (held.threads != loop.threads) {
            problem = "the loop runs on " + std::to_string(loop.threads) + " threads but the fragment is spread over " + std::to_string(held.threads);
        }
        auto insideShifted = [&](const std::vector<std::optional<int64_t>> &c) {
            for (size_t d = 0; d < uses.size(); ++d) {
                if (uses[d].offset && (*c[d] < 0 || *c[d] >= held.shape[d])) return false;
            }
            return true;
        };
        auto movePlace = [&](int64_t place) {
            for (size_t d = 0; d < uses.size(); ++d) {
                if (!uses[d].offset) continue;
                const int64_t n = static_cast<int64_t>(uses[d].offsets.size());
                shift[d] = uses[d].offsets[static_cast<size_t>(place % n)];
                place /= n;
            }
        };
        for (int64_t place = 0; problem.empty() && place < places; ++place) {
            movePlace(place);
            for (int64_t t = 0; problem.empty() && t < loop.threads; ++t) {
                for (int64_t l = 0; problem.empty() && l < loop.localSize(); ++l) {
                    elementOf(t, l);
                    if (!insideShifted(coords)) continue;   // past the dimension: out of bounds, so a branch keeps it from running
                    if (!ir::holds(held, t, coords)) {
                        problem = "thread " + std::to_string(t) + " runs the iteration that " + (write ? "writes " : "reads ") + show(coords) +
                                  " but does not hold that element";
                    }
                    if (write) {
                        std::vector<int64_t> key;
                        for (const std::optional<int64_t> &c : coords) key.push_back(c ? *c : -1);
                        written.insert({t, key});
                    }
                }
            }
        }
        for (int64_t t = 0; write && problem.empty() && t < held.threads; ++t) {
            for (int64_t l = 0; problem.empty() && l < held.localSize(); ++l) {
                std::vector<int64_t> e = ir::elementAt(held, t, l);
                std::vector<int64_t> key;
                std::vector<std::optional<int64_t>> coords;
                for (size_t d = 0; d < uses.size(); ++d) {
                    bool known = uses[d].loopDim >= 0 || uses[d].value;
                    if (uses[d].value && *uses[d].value != e[d]) key.clear(), coords.clear(), d = uses.size();
                    else {
                        key.push_back(known ? e[d] : -1);
                        coords.push_back(e[d]);
                    }
                }
                if (key.size() != uses.size()) continue;   // an element this access never writes
                bool reached = written.count({t, key}) > 0;
                if (!reached) {
                    problem = "thread " + std::to_string(t) + " holds a copy of " + show(coords) +
                              " but runs no iteration that writes it, so its copy would go stale";
                }
            }
        }
        return problem;
    }

    bool setLayout(const Access &a, const ir::TileLayout &layout, const std::string &why = "first distributed here") {
        const ir::BufferNode &b = edits_.current(a.buffer);
        if (!b.layout) {
            // A thread has at most 255 registers (PTX ISA, "Register state");
            // a fragment that alone needs more may spill to local memory
            // (unless ptxas can shorten the lives of its elements, as it
            // does for a 128x256 f32 epilogue converted to bf16 as it is
            // stored): said here, with the numbers, rather than found in
            // ptxas' report. TileLang compiles such kernels as they are
            // (e.g. its persistent 2-CTA block-scaled GEMM's epilogue).
            // (An f4e2m1 element has a register of its own.)
            int64_t bits = inRegistersOneByOne(b.dtype) ? 32 : dtypeBits(b.dtype);
            int64_t registers = layout.localSize() >= (INT64_MAX / 64) ? INT64_MAX : (layout.localSize() * bits + 31) / 32;
            // Beyond the 512 KiB of local memory a thread may have (CUDA C++
            // Programming Guide, "Technical Specifications per Compute
            // Capability") the kernel could not even launch.
            constexpr int64_t kMaxLocalBytesPerThread = 512 * 1024;
            if (registers > kMaxLocalBytesPerThread / 4) {
                if (!refused_.insert(a.buffer.get()).second) return false;   // said once
                ctx_.diags.error(a.span, "fragment '" + b.name + "' needs " + std::to_string(registers) + " registers per thread as " +
                                             describeLayout(layout) + " (" + why + "): more than the 512 KiB of local memory a thread may have, " +
                                             "let alone its 255 registers: use a smaller tile or more threads");
                return false;
            }
            if (registers > kMaxRegistersPerThread && warnedSpill_.insert(a.buffer.get()).second)
                ctx_.diags.warning(a.span, "fragment '" + b.name + "' needs " + std::to_string(registers) + " registers per thread as " +
                                               describeLayout(layout) + " (" + why + "); a thread has at most " +
                                               std::to_string(kMaxRegistersPerThread) +
                                               ", so part of it may spill to local memory (ptxas -v tells): use a smaller tile or more threads",
                                   "spill");
            if (b.reducer && b.reducer->replication == ir::BufferNode::Reducer::Replication::None && layout.replication() > 1) {
                if (!refused_.insert(a.buffer.get()).second) return false;   // said once
                ctx_.diags.error(a.span, "reducer '" + b.name + "' asks for replication = none, but here " + std::to_string(layout.replication()) +
                                             " threads hold each element (" + describeLayout(layout) + ", " + why +
                                             "); without 'replication', each keeps a partial result that finalize_reducer combines");
                return false;
            }
            // A fragment's reshaped views (or the fragment a view reshapes,
            // and its other views) hold the same registers.
            std::vector<std::pair<ir::Buffer, ir::TileLayout>> together;
            for (const ir::Buffer &other : reshapeGroupOf(a.buffer)) {
                if (other == a.buffer) continue;
                std::optional<ir::TileLayout> reshaped = ir::reshapeLayout(layout, *other->constShape());
                if (!reshaped) {
                    if (!refused_.insert(a.buffer.get()).second) return false;   // said once
                    ctx_.diags.error(a.span, "fragment '" + b.name + "' and its reshaped view '" + other->name + "' cannot share the layout " +
                                                 layout.str() + " (" + why + "): a run of threads or registers it gives one dimension would be split "
                                                 "unevenly across the view's dimensions [" + shapeText(*other->constShape()) + "]");
                    return false;
                }
                together.push_back({other, *reshaped});
            }
            ir::BufferNode &decided = edits_.edit(a.buffer);
            decided.layout = layout;
            auto registerArray = ir::makeBuffer(b.name, b.dtype, {ir::intImm(layout.localSize())}, ir::MemScope::Local, b.span);
            registerArray->reducer = b.reducer;   // its updates stay one replica's (lower-parallel-loops)
            decided.registers = registerArray;
            for (const auto &[other, reshaped] : together) {
                ir::BufferNode &view = edits_.edit(other);
                view.layout = reshaped;
                view.registers = registerArray;
                firstUse_[other.get()] = a.span;
                firstWhy_[other.get()] = "laid out with '" + b.name + "', which it reshapes or is reshaped by: " + why;
                Decision v;
                v.where = other->span;
                v.op = "fragment '" + other->name + "'";
                v.choice = describeLayout(reshaped);
                v.why = "the registers of '" + b.name + "' (" + describeLayout(layout) + "), reshaped";
                v.details.push_back("layout " + reshaped.str());
                ctx_.explain.record(std::move(v));
            }
            firstUse_[a.buffer.get()] = a.span;
            firstWhy_[a.buffer.get()] = why;
            Decision d;
            d.where = a.span;
            d.op = "fragment '" + b.name + "'";
            d.choice = describeLayout(layout);
            d.why = why;
            d.details.push_back("layout " + layout.str());
            ctx_.explain.record(std::move(d));
            return true;
        }
        if (ir::sameDistribution(*b.layout, layout)) return true;
        Diagnostic diag{Severity::Error, a.span, "fragment '" + b.name + "' needs another distribution over the threads here "
                                                      "than the one fixed where it was first used", {}, {}};
        diag.note(firstUse_[a.buffer.get()], "layout of '" + b.name + "' fixed here: " + describeLayout(*b.layout) + " (" + firstWhy_[a.buffer.get()] + ")");
        diag.note(a.span, "needed here: " + describeLayout(layout) + " (" + why + ")" + firstDifference(*b.layout, layout, b.name));
        diag.note(a.span, "to give a fragment another distribution, copy it through shared memory");
        ctx_.diags.report(std::move(diag));
        return false;
    }

    ir::Expr inlineLets(const ir::Expr &e) const {
        ir::Expr out = e;
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) out = ir::substitute(out, {{it->first, it->second}});
        return out;
    }

    // The widest w (at most `widest`, dividing the last extent) for which
    // access `a`, with the nest's last variable j = w * jo + lane, moves its
    // w lanes as one aligned run of its last dimension: the lane only in the
    // last index, one element per lane, where j is divided (`S[j / 16, j %
    // 16]`) staying in one row of the division (ir::splitLaneRuns). 1 when
    // none is.
    int64_t laneRunWidth(const ParallelNest &nest, const Access &a, int64_t widest) const {
        const ir::VarRef &j = nest.vars.back();
        const int64_t extent = nest.extents.back();
        for (int64_t w = widest; w >= 2; w /= 2) {
            if (extent % w != 0) continue;
            ir::VarRef jo = ir::makeVar(j->name + "_run", j->dtype), lane = ir::makeVar(j->name + "_lane", j->dtype);
            ir::BoundsScope scope;
            for (size_t d = 0; d + 1 < nest.vars.size(); ++d) scope.bind(nest.vars[d].get(), ir::Interval::range(0, nest.extents[d] - 1));
            scope.bind(jo.get(), ir::Interval::range(0, extent / w - 1));
            scope.bind(lane.get(), ir::Interval::range(0, w - 1));
            const ir::Expr split = ir::add(ir::mul(jo, ir::intImm(w, j->dtype)), lane);
            std::vector<ir::Expr> indices;
            for (const ir::Expr &i : a.indices) indices.push_back(ir::splitLaneRuns(ir::simplify(ir::substitute(inlineLets(i), {{j, split}})), lane, w, scope));
            bool ok = true;
            for (size_t d = 0; d + 1 < indices.size(); ++d) ok = ok && !ir::usesVar(indices[d], lane.get());
            const ir::Expr &last = indices.back();
            ir::Expr base = ir::simplify(ir::substitute(last, {{lane, ir::intImm(0, lane->dtype)}}));
            ir::Expr step = ir::simplify(ir::sub(ir::substitute(last, {{lane, ir::intImm(1, lane->dtype)}}), base));
            int64_t divisor = ir::knownDivisor(base);
            ok = ok && ir::constInt(step) == 1 && (divisor == 0 || divisor % w == 0) &&
                 (a.indices.size() == 1 || ir::knownDivisor(a.buffer->shape.back()) % w == 0);
            if (ok) return w;
        }
        return 1;
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
            int64_t widest = 16 / (dtypeBits(a.buffer->dtype) / 8), v = widest;
            if (elsewhere || ir::constInt(step) != 1) {
                // `S[j / 16, j % 16]`: runs of consecutive elements as long as the division's rows.
                int64_t run = laneRunWidth(nest, a, widest);
                if (run < best) {
                    best = run;
                    limit = run == 1 ? "'" + a.buffer->name + "' is not accessed with unit stride along '" + j->name + "'"
                                     : "'" + a.buffer->name + "' is accessed in runs of " + std::to_string(run) + " consecutive aligned elements along '" +
                                           j->name + "' (its indices divide '" + j->name + "')";
                }
                any = true;
                continue;
            }
            int64_t d = ir::knownDivisor(base);
            if (d != 0) v = std::gcd(v, d);
            // Rows of a dynamic length are as aligned as its promise (`dyn K % 8`) makes them.
            const ir::Var *dynamicRow = nullptr;
            if (a.indices.size() > 1) {
                const ir::Expr &row = a.buffer->shape.back();
                int64_t before = v;
                v = std::gcd(v, ir::knownDivisor(row));
                if (v < before) dynamicRow = ir::as<ir::Var>(row);
            }
            if (v < best) {
                best = v;
                limit = "'" + a.buffer->name + "' allows " + std::to_string(v) + "-element aligned accesses";
                if (dynamicRow)
                    limit += ": its rows have " + dynamicRow->name + " elements, a dynamic dimension (promise 'dyn " + dynamicRow->name + " % " +
                             std::to_string(widest) + "' in its shape for " + std::to_string(widest) + "-element vectors; the launch checks it)";
            }
            any = true;
        }
        // A fragment holding an element to a register is copied to packed
        // memory a byte -- two elements of a row -- per thread (pairedLayout).
        const ir::BufferNode *paired = nullptr;
        for (const Access &a : accesses) {
            if (a.buffer->scope == ir::MemScope::Fragment && inRegistersOneByOne(a.buffer->dtype) && !a.indices.empty() && a.indices.back().get() == j.get())
                paired = a.buffer.get();
        }
        auto keepPairs = [&](int64_t vector) {
            if (!paired || vector >= 2 || extent % 2 != 0) return vector;
            why = "2-element vectors (" + std::string(dtypeName(paired->dtype)) + " fragment '" + paired->name +
                  "' keeps the two elements of each byte in one thread)";
            return int64_t(2);
        };
        if (!any) {
            why = "no global or shared access to vectorize";
            return keepPairs(1);
        }
        while (best > 1 && extent % best != 0) best /= 2;
        // No limit: 16 one-byte elements, the widest access.
        why = best > 1 ? std::to_string(best) + "-element vectors" + (limit.empty() ? "" : " (" + limit + ")")
                       : "not vectorized: " + (limit.empty() ? "extent" : limit);
        return keepPairs(best);
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    ir::BufferEdits edits_;   // the layouts decided so far
    int64_t threads_;   // the threads a parallel loop here is spread over
    mutable std::set<std::string> holding_;   // ownership checks that held (ownershipProblem's keys)
    std::vector<std::pair<Access, int64_t>> packedCopies_;   // the fragment of each packed copy, and the threads it runs on
    std::map<const ir::BufferNode *, SourceRange> firstUse_;
    std::map<const ir::BufferNode *, std::string> firstWhy_;
    std::set<const ir::BufferNode *> refused_;   // fragments whose layout was refused (said once): beyond a thread's local memory, a reducer with replication = none
    std::set<const ir::BufferNode *> warnedSpill_;
    std::map<const ir::BufferNode *, std::vector<ir::Buffer>> reshapeGroups_;   // a fragment (the root) and its reshaped views
    std::map<const ir::BufferNode *, const ir::BufferNode *> reshapeRoot_;       // each view's root

    const std::vector<ir::Buffer> &reshapeGroupOf(const ir::Buffer &b) const {
        static const std::vector<ir::Buffer> none;
        auto root = reshapeRoot_.find(b.get());
        auto group = reshapeGroups_.find(root == reshapeRoot_.end() ? b.get() : root->second);
        return group == reshapeGroups_.end() ? none : group->second;
    }   // fragments said to need more registers than a thread has
    std::map<const ir::For *, int64_t> deferred_;
    std::map<const ir::BufferNode *, std::set<int>> wholeDims_;   // fill nests decided last, with their threads
    std::vector<std::pair<ir::VarRef, ir::Expr>> lets_;
};

} // namespace

ir::Kernel inferLayouts(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Inferrer inferrer(kernel, ctx);
    inferrer.findWholeDimensions(kernel.body);
    inferrer.findReshapes(kernel.body);
    inferrer.replicateFloatingFragments(kernel.body);
    inferrer.fixGemmLayouts(kernel.body);
    ir::Stmt body = inferrer.mutate(kernel.body);
    inferrer.decidePackedCopies();
    out.body = inferrer.decideFills(body);
    inferrer.decisions().applyTo(out);
    return out;
}

} // namespace tilet
