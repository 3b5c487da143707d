// SelectCopyInst.cpp -- see SelectCopyInst.h.
//
// 1. Gather facts about the copy: direction, scopes, whether each TMA form,
//    cp.async, ldmatrix/stmatrix and tensor-memory moves are possible, each
//    with the reason when it is not.
// 2. Walk the decision chain in TileLang's order (LowerCopy).
// 3. Record the choice and the rejected stronger options.
#include "passes/SelectCopyInst.h"

#include "ir/Analysis.h"
#include "ir/Effects.h"
#include "ir/MmaLayout.h"
#include "ir/Visitor.h"
#include "passes/CopyFacts.h"
#include "passes/MultiVersion.h"
#include "passes/ScopedMutator.h"
#include "support/InternalError.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

namespace tilet {

namespace {

using ir::CopyInst;

class Selector : public ScopedMutator {
public:
    Selector(const ir::Kernel &k, PassContext &ctx) : ScopedMutator(k), kernel_(k), ctx_(ctx), threads_(k.threads) {
        // Fragments that feed a gemm as its A operand carry the instruction's
        // operand layout, and accumulators its accumulator layout; only those
        // can move with ldmatrix (A) / stmatrix (accumulators).
        ir::forEachStmt(k.body, [&](const ir::Stmt &s) {
            if (const ir::Gemm *g = ir::as<ir::Gemm>(s)) {
                // (ldmatrix fills mma.sync's A layout; a wgmma's register A, or a
                // transposed one, [K, M], is loaded element by element)
                if (g->a.buffer->scope == ir::MemScope::Fragment && g->inst == ir::GemmInst::MMA && !g->transposeA)
                    operandFragments_.insert(g->a.buffer.get());
                else if (g->a.buffer->scope == ir::MemScope::Fragment && g->inst == ir::GemmInst::MMA)
                    notFilledByLdmatrix_.emplace(g->a.buffer.get(), "is a transposed register A operand ([K, M], transpose_A)");
                if (g->b.buffer->scope == ir::MemScope::Fragment) notFilledByLdmatrix_.emplace(g->b.buffer.get(), "is a register B operand");
                // The layout infer-layouts will give the accumulator (the instruction fixes it).
                if (g->c.buffer->scope == ir::MemScope::Fragment && !accumulatorLayouts_.count(g->c.buffer.get())) {
                    if (g->inst == ir::GemmInst::WGMMA) accumulatorLayouts_[g->c.buffer.get()] = ir::wgmmaAccumulatorLayout(ir::mmaTiling(*g));
                    if (ir::isMmaSync(g->inst)) accumulatorLayouts_[g->c.buffer.get()] = ir::mmaAccumulatorLayout(ir::mmaTiling(*g));
                }
            }
        });
    }
    using ScopedMutator::mutate;

protected:
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        if (n.preferAsync) return preferAsync(ScopedMutator::mutateFor(self, n), n);
        if (auto loop = gathers_.find(self.get()); loop != gathers_.end()) return gather(ScopedMutator::mutateFor(self, n), n, *loop->second);
        if (auto early = issuedEarly_.find(self.get()); early != issuedEarly_.end()) {
            Decision d;
            d.where = n.span;
            d.op = "parallel loop (gather)";
            d.choice = "plain loads and stores, in order";
            d.why = early->second;
            ctx_.explain.record(std::move(d));
        }
        // Only copies that are statements of a pipelined loop's body (not
        // nested in a branch or another loop) are pipeline producers.
        if (n.pipeline) {
            // stages = 0 asks for no pipelining: its copies are plain, and say why.
            // (or a copy one `if` guards: predicate-pipeline-branches made it a predicated producer)
            const ir::Seq *seq = ir::as<ir::Seq>(n.body);
            const std::vector<ir::Stmt> statements = seq ? seq->stmts : std::vector<ir::Stmt>{n.body};
            auto add = [&](const ir::Stmt &guarded) {
                const ir::Stmt &st = ir::unguarded(guarded);
                if (n.pipeline->stages == 0) {
                    stageZeroLoops_[st.get()] = n.span;
                } else if (std::string early = readsWhatLoopWrites(st, n); !early.empty()) {
                    issuedEarly_[st.get()] = early;
                } else if (std::string rewritten = fillsTileAhead(st) ? tileRewrittenInLoop(guarded, statements, n) : ""; !rewritten.empty()) {
                    issuedEarly_[st.get()] = rewritten;
                } else if (std::string after = gatherStore(st) ? tileUsedAfter(st, n) : ""; !after.empty()) {
                    issuedEarly_[st.get()] = after;
                } else {
                    if (gatherStore(st)) gathers_[st.get()] = &n;
                    pipelineProducers_.insert(st.get());
                    // pipeline-loops versions the tiles these copies load, a stage each.
                    if (const ir::Copy *c = ir::as<ir::Copy>(st); c && n.pipeline->stages >= 2 && isGlobalToShared(*c))
                        stagedTiles_[c->dst.buffer.get()] = n.pipeline->stages;
                }
            };
            for (const ir::Stmt &st : statements) {
                // Without cp.async a gather is a plain loop, in order (the pipelined loop's remark says why).
                if (gatherStore(st) && !ctx_.target.has(Feature::CpAsync)) continue;
                add(st);
            }
            // stages = 0 runs every copy of the body in order, however deep (after a binding, in a branch).
            if (n.pipeline->stages == 0)
                ir::forEachStmt(n.body, [&](const ir::Stmt &st) {
                    if (ir::as<ir::Copy>(st) || ir::as<ir::Im2Col>(st)) stageZeroLoops_.emplace(st.get(), n.span);
                });
            // Copies deeper in the body (in a branch kept whole, an inner loop) are not producers: said so.
            ir::forEachStmt(n.body, [&](const ir::Stmt &st) {
                if ((ir::as<ir::Copy>(st) || ir::as<ir::Im2Col>(st)) && !pipelineProducers_.count(st.get()) && !stageZeroLoops_.count(st.get()) &&
                    !issuedEarly_.count(st.get()))
                    nestedInPipeline_.emplace(st.get(), n.span);
            });
        }
        return ScopedMutator::mutateFor(self, n);
    }

    // A global -> shared copy, an im2col gather or a gather loop: what a pipelined loop fills ahead.
    static bool fillsTileAhead(const ir::Stmt &s) {
        const ir::Copy *c = ir::as<ir::Copy>(s);
        return (c && isGlobalToShared(*c)) || ir::as<ir::Im2Col>(s) || gatherStore(s);
    }

    // The one store of a gather: a parallel loop (nest) whose only statement
    // is an element copy global -> shared, `s[i, d] = g[idx[i], d]`, that
    // fills the whole tile (its indices are the nest's variables, each over
    // its dimension: elements an iteration does not write would not be
    // carried into the next one's version). TileLang's pipeline planner
    // takes such a store as a copy stage, which its pipeline issues ahead as
    // cp.async; null for any other statement.
    static const ir::Store *gatherStore(const ir::Stmt &s) {
        const ir::For *f = ir::as<ir::For>(s);
        if (!f || f->forKind != ir::ForKind::Parallel || f->preferAsync) return nullptr;
        const ir::Store *only = nullptr;
        bool other = false;
        std::map<const ir::VarNode *, const ir::For *> loops;
        ir::forEachStmt(s, [&](const ir::Stmt &x) {
            if (const ir::Store *st = ir::as<ir::Store>(x)) other = other || std::exchange(only, st) != nullptr;
            else if (const ir::For *l = ir::as<ir::For>(x)) loops[l->var.get()] = l;
            else if (!ir::as<ir::LetStmt>(x) && !ir::as<ir::Seq>(x)) other = true;
        });
        if (!only || other || !elementCopySource(*only) || only->indices.size() != only->buffer->shape.size()) return nullptr;
        std::set<const ir::VarNode *> seen;
        for (size_t d = 0; d < only->indices.size(); ++d) {
            const ir::Var *v = ir::as<ir::Var>(only->indices[d]);
            auto loop = v ? loops.find(v) : loops.end();
            if (loop == loops.end() || !seen.insert(v).second || ir::constInt(loop->second->min) != 0 ||
                !ir::constInt(loop->second->extent) || ir::constInt(loop->second->extent) != ir::constInt(only->buffer->shape[d]))
                return nullptr;
        }
        return only;
    }

    // Why gather `g` of pipelined loop `loop` runs in order ("" when it need
    // not): its tile is used after (or before) the loop, where the versions
    // issued ahead do not live.
    std::string tileUsedAfter(const ir::Stmt &g, const ir::For &loop) const {
        const ir::Buffer &tile = gatherStore(g)->buffer;
        std::optional<SourceRange> use = useOutside(kernel_.body, tile.get(), &loop);
        if (!use) return "";
        return "its tile '" + tile->name + "' is also used at " + use->lineColumn() + ", outside the pipelined loop at " + loop.span.lineColumn() +
               ": the versions a load issued ahead fills live in the loop only, so the gather runs in order";
    }

    // A gather of pipelined loop `pipelined`: its stores become cp.async
    // element copies, which pipeline-loops issues with the loop's loads ahead
    // (vectorize-accesses makes them 4-16-byte copies).
    ir::Stmt gather(const ir::Stmt &loop, const ir::For &n, const ir::For &pipelined) {
        const ir::Store &store = *gatherStore(loop);
        Decision d;
        d.where = n.span;
        d.op = "parallel loop (gather)";
        d.choice = "cp.async element copies, issued ahead by the pipelined loop at " + pipelined.span.lineColumn();
        d.promises = "cp.async";
        d.otherwise = "plain loads and stores (no 4-, 8- or 16-byte run), still issued ahead";
        d.why = "its one store copies global elements into shared tile '" + store.buffer->name +
                "' (TileLang's pipeline planner takes such a store as a copy stage): the pipelined loop issues it with its loads, into a "
                "version of the tile per stage";
        ctx_.explain.record(std::move(d));
        const ir::For &f = *ir::as<ir::For>(loop);
        auto out = ir::rebuildFor(f, f.min, f.extent, asyncCopies(f.body));
        out->pipelineProducer = true;
        return out;
    }

    // `s` with its element copies global -> shared made asynchronous stores.
    static ir::Stmt asyncCopies(const ir::Stmt &s) {
        class ToAsync : public ir::Mutator {
        protected:
            ir::Stmt mutateStore(const ir::Stmt &self, const ir::Store &st) override {
                if (!elementCopySource(st)) return self;
                return std::make_shared<ir::Store>(st.buffer, st.indices, st.value, ir::StoreOp::AsyncCopy, st.span);
            }
        };
        return ToAsync().mutate(s);
    }

    // Why a copy of pipelined loop `loop` cannot be issued ahead ("" when it
    // can): where it reads or writes depends on a register or memory the
    // loop writes (a `var` stepped in the body), which a load issued
    // iterations early would read before the loop writes it.
    static std::string readsWhatLoopWrites(const ir::Stmt &copy, const ir::For &loop) {
        std::vector<ir::Expr> where;
        if (const ir::Copy *c = ir::as<ir::Copy>(copy)) {
            where.insert(where.end(), c->src.mins.begin(), c->src.mins.end());
            where.insert(where.end(), c->dst.mins.begin(), c->dst.mins.end());
        } else if (const ir::Im2Col *g = ir::as<ir::Im2Col>(copy)) {
            where.insert(where.end(), g->dst.mins.begin(), g->dst.mins.end());
            where.push_back(g->nhwStep);
            where.push_back(g->cStep);
        } else if (gatherStore(copy)) {
            // Everything the nest computes: its bounds, lets, indices and value.
            ir::forEachStmt(copy, [&](const ir::Stmt &x) {
                if (const ir::For *l = ir::as<ir::For>(x)) where.insert(where.end(), {l->min, l->extent});
                if (const ir::LetStmt *l = ir::as<ir::LetStmt>(x)) where.push_back(l->value);
                if (const ir::Store *st = ir::as<ir::Store>(x)) {
                    where.insert(where.end(), st->indices.begin(), st->indices.end());
                    where.push_back(st->value);
                }
            });
        }
        for (const ir::Expr &e : where)
            if (std::optional<ir::Writer> writer = ir::writerOfWhatItReads(e, loop.body))
                return "where it loads reads '" + writer->buffer + "', which the pipelined loop at " + loop.span.lineColumn() + " writes at " +
                       writer->at.lineColumn() + ": a load issued ahead would read it early, so the copy runs in order";
        return "";
    }

    ir::Stmt mutateWarpSpecialize(const ir::Stmt &self, const ir::WarpSpecialize &n) override {
        int64_t outerThreads = std::exchange(threads_, n.threads());
        ir::Stmt out = ScopedMutator::mutateWarpSpecialize(self, n);
        threads_ = outerThreads;
        return out;
    }

    ir::Stmt mutateCopy(const ir::Stmt &self, const ir::Copy &n) override {
        ir::Stmt base = ScopedMutator::mutateCopy(self, n);
        auto copy = std::make_shared<ir::Copy>(*ir::as<ir::Copy>(base));
        copy->inPipeline = pipelineProducers_.count(self.get());
        auto stageZero = stageZeroLoops_.find(self.get());
        stageZeroLoop_ = stageZero == stageZeroLoops_.end() ? std::nullopt : std::optional<SourceRange>(stageZero->second);
        auto nested = nestedInPipeline_.find(self.get());
        nestedLoop_ = nested == nestedInPipeline_.end() ? std::nullopt : std::optional<SourceRange>(nested->second);
        auto early = issuedEarly_.find(self.get());
        issuedEarly_why_ = early == issuedEarly_.end() ? std::string() : early->second;
        copy->inst = select(*copy);
        return copy;
    }

    // im2col gathers: the producer role of a warp-specialized loop issues
    // them with TMA's im2col mode (as TileLang does on sm_90); a pipeline's
    // producer as cp.async, zero padding included; anywhere else every
    // thread loads and stores.
    ir::Stmt mutateIm2Col(const ir::Stmt &self, const ir::Im2Col &n) override {
        ir::Stmt base = ScopedMutator::mutateIm2Col(self, n);
        auto op = std::make_shared<ir::Im2Col>(*ir::as<ir::Im2Col>(base));
        op->inPipeline = pipelineProducers_.count(self.get());
        Decision d;
        d.where = n.span;
        d.op = "im2col global->shared";
        if (op->producerRole) {
            // specialize-warps checked tmaIm2col before making it a producer.
            op->inst = CopyInst::BulkLoad;
            d.choice = ir::copyInstName(op->inst);
            d.why = "the producer warp group of a warp-specialized loop loads it with TMA's im2col mode, the padding filled with zeros";
            ctx_.explain.record(std::move(d));
            return op;
        }
        if (ctx_.target.has(Feature::Tma)) {
            Option tma = tmaIm2col(n, ctx_.target);
            d.rejected.push_back({"BulkLoad", !tma.ok ? tma.reason : "TMA's im2col mode loads in the producer role of a warp-specialized pipelined loop only"});
        }
        if (op->inPipeline && ctx_.target.has(Feature::CpAsync)) {
            op->inst = CopyInst::CPAsync;
            d.why = "a load in a pipelined loop: each thread gathers runs of channels, zeros where the window lies in the padding";
        } else {
            op->inst = CopyInst::Normal;
            auto early = issuedEarly_.find(self.get());
            d.rejected.push_back({"CPAsync", !ctx_.target.has(Feature::CpAsync) ? lacks(ctx_.target, Feature::CpAsync)
                                             : stageZeroLoops_.count(self.get()) ? "its pipelined loop has stages = 0, which runs its copies in order"
                                             : early != issuedEarly_.end()       ? early->second
                                                                                 : "cp.async is used for loads in pipelined loops"});
            d.why = "SIMT loads and stores by every thread, zeros where the window lies in the padding";
        }
        d.choice = ir::copyInstName(op->inst);
        if (op->inst == CopyInst::CPAsync) {
            d.promises = "cp.async";
            d.otherwise = ir::copyInstName(CopyInst::Normal);
        }
        ctx_.explain.record(std::move(d));
        return op;
    }

    // The program's own cp.async groups (cp_async_commit / cp_async_wait):
    // on a target without cp.async, its prefer_async copies are plain, and
    // there is nothing to commit or wait for.
    ir::Stmt mutateCpAsyncCommit(const ir::Stmt &self, const ir::CpAsyncCommit &n) override { return groupStatement(self, n.span, "cp_async_commit"); }
    ir::Stmt mutateCpAsyncWait(const ir::Stmt &self, const ir::CpAsyncWait &n) override { return groupStatement(self, n.span, "cp_async_wait"); }

private:
    ir::Stmt groupStatement(const ir::Stmt &self, SourceRange span, const char *what) {
        if (ctx_.target.has(Feature::CpAsync)) return self;
        Decision d;
        d.where = span;
        d.op = what;
        d.choice = "removed";
        d.why = lacks(ctx_.target, Feature::CpAsync) + ", so the prefer_async copies are plain loads and stores";
        ctx_.explain.record(std::move(d));
        return ir::seq({});
    }

    // A constant zero, perhaps converted: the zero-fill of `c ? g[i] : 0`.
    static bool isZeroConstant(const ir::Expr &e) {
        if (const ir::Cast *c = ir::as<ir::Cast>(e)) return isZeroConstant(c->value);
        if (const ir::FloatImm *f = ir::as<ir::FloatImm>(e)) return f->value == 0.0;
        std::optional<int64_t> v = ir::constInt(e);
        return v && *v == 0;
    }

    // The global element an element copy global -> shared of one dtype
    // reads: `s[...] = g[...]` or `s[...] = c ? g[...] : 0` (zero-filled
    // where c is false); null for any other statement.
    static const ir::Load *elementCopySource(const ir::Store &st) {
        if (st.op != ir::StoreOp::Assign || st.buffer->scope != ir::MemScope::Shared) return nullptr;
        ir::Expr v = st.value;
        if (const ir::Select *s = ir::as<ir::Select>(v)) {
            if (!isZeroConstant(s->elseValue)) return nullptr;
            v = s->thenValue;
        }
        const ir::Load *l = ir::as<ir::Load>(v);
        if (!l || l->buffer->scope != ir::MemScope::Global || l->buffer->dtype != st.buffer->dtype) return nullptr;
        return l;
    }

    // parallel(..., prefer_async = true) (TileLang's T.Parallel(prefer_async
    // = True)): a loop whose one store is an element copy global -> shared
    // makes it an asynchronous store, which vectorize-accesses issues as
    // 4-16-byte cp.async (per element, it stays a plain store); the program
    // commits and waits for the copies itself (cp_async_commit, cp_async_wait).
    ir::Stmt preferAsync(const ir::Stmt &loop, const ir::For &n) {
        Decision d;
        d.where = n.span;
        d.op = "parallel loop (prefer_async)";
        int64_t copies = 0, stores = 0;
        std::string other;
        ir::forEachStmt(loop, [&](const ir::Stmt &s) {
            if (const ir::Store *st = ir::as<ir::Store>(s)) {
                ++stores;
                if (elementCopySource(*st)) ++copies;
                else if (other.empty()) other = st->buffer->name;
            }
        });
        std::string reason = !ctx_.target.has(Feature::CpAsync) ? lacks(ctx_.target, Feature::CpAsync)
                             : stores != 1 || copies != 1
                                 ? "an asynchronous copy is the loop's one store, s[...] = g[...] or s[...] = c ? g[...] : 0 (global -> shared, one dtype); " +
                                       (other.empty() ? "this loop has " + std::to_string(stores) + " stores" : "this loop also stores to '" + other + "'")
                                 : "";
        if (!reason.empty()) {
            d.choice = "plain loads and stores";
            d.why = reason;
            ctx_.explain.record(std::move(d));
            return loop;
        }
        d.choice = "asynchronous element copies";
        d.promises = "cp.async";
        d.otherwise = "plain loads and stores";
        d.why = "prefer_async: issued without waiting, they land at the program's cp_async_wait that retires their group";
        ctx_.explain.record(std::move(d));
        return asyncCopies(loop);
    }

    // ------------------------------------------------------------ facts

    // Whether `r` is one contiguous run of its buffer (IsContiguousGlobalRegion).
    bool contiguous(const ir::Region &r) const {
        bool outerMustBeUnit = false;
        for (int d = r.buffer->rank() - 1; d >= 0; --d) {
            if (outerMustBeUnit) {
                if (r.extents[d] != 1) return false;
                continue;
            }
            std::optional<int64_t> dim = ir::constInt(r.buffer->shape[d]);
            bool full = dim && r.extents[d] == *dim;
            if (!full) outerMustBeUnit = true;
        }
        return true;
    }

    // Whether the region's first element is 16-byte aligned from the buffer's
    // start (each start index times its dimension's stride in bytes).
    bool startsOn16Bytes(const ir::Region &r) const {
        int64_t strideBits = dtypeBits(r.buffer->dtype);
        for (int d = r.buffer->rank() - 1; d >= 0; --d) {
            int64_t divisor = ir::knownDivisor(r.mins[d]);
            if (divisor != 0 && (divisor * strideBits) % 128 != 0) return false;
            std::optional<int64_t> dim = ir::constInt(r.buffer->shape[d]);
            if (!dim) return d == 0 || divisor == 0;
            strideBits *= *dim;
        }
        return true;
    }

    bool inBounds(const ir::Region &r) const {
        for (size_t d = 0; d < r.mins.size(); ++d) {
            ir::Interval lo = ir::boundsOf(r.mins[d], scope());
            std::optional<int64_t> dim = ir::constInt(r.buffer->shape[d]);
            if (lo.lo < 0 || !dim || lo.hi == ir::Interval::kMax || lo.hi + r.extents[d] > *dim) return false;
        }
        return true;
    }

    // CheckBulkCopy1D: a plain cp.async.bulk without a descriptor.
    Option bulk1D(const ir::Copy &c, bool load) const {
        Option base = tmaCopy(c, load, /*descriptor=*/false);
        if (!base.ok) return base;
        if (isUnpacked(c.dst.buffer->dtype))
            return Option::no("cp.async.bulk copies bytes as they are; " + std::string(dtypeName(c.src.buffer->dtype)) +
                              " is unpacked into 8-bit slots through a tensor map");
        const ir::Region &global = load ? c.src : c.dst;
        const ir::Region &shared = load ? c.dst : c.src;
        if (!inBounds(c.src) || !inBounds(c.dst)) return Option::no("the regions cannot be proven to lie inside their buffers");
        // The CTA pair's load (bytes counted on the leader's barrier) is a cp.async.bulk.tensor form only.
        if (load && c.barrier && c.barrier->clusterBarrier)
            return Option::no("'" + c.barrier->name + "' is a cluster barrier: the CTA pair's load is cp.async.bulk.tensor .cta_group::2");
        if (!contiguous(global)) return Option::no("the region of '" + global.buffer->name + "' is not one contiguous run of memory");
        if (!contiguous(shared)) return Option::no("the region of '" + shared.buffer->name + "' is not one contiguous run of shared memory");
        if (shared.buffer->swizzle != ir::SharedSwizzle::None)
            return Option::no("'" + shared.buffer->name + "' is stored swizzled (" + ir::swizzleName(shared.buffer->swizzle) +
                              ", for a gemm), not linearly");
        int64_t elements = 1;
        for (int64_t e : global.extents) elements *= e;
        if ((elements * dtypeBits(global.buffer->dtype)) % 128 != 0)
            return Option::no("the copy moves " + bytesOf(elements, global.buffer->dtype) + ", not a multiple of 16 bytes");
        for (const ir::Region *r : {&global, &shared}) {
            if (!startsOn16Bytes(*r)) return Option::no("the region of '" + r->buffer->name + "' cannot be proven to start on a 16-byte boundary");
        }
        return Option::yes();
    }

    // SelectTmaInst: BulkLoad1D > BulkStore1D > BulkLoad > BulkStore.
    // tmaTensorCopy, with the stages a pipelined loop versions the shared tile into.
    Option tmaCopy(const ir::Copy &c, bool load, bool descriptor) const {
        Option o = tmaTensorCopy(c, load, descriptor, ctx_.target);
        if (!o.ok) return o;
        const ir::BufferNode *tile = (load ? c.dst : c.src).buffer.get();
        auto staged = stagedTiles_.find(tile);
        return staged == stagedTiles_.end() ? o : tmaStages(*tile, staged->second);
    }

    CopyInst selectTma(const ir::Copy &c, bool allowLoad, bool allowStore, std::vector<Rejected> &rejected, std::string &why) const {
        struct Candidate {
            CopyInst inst;
            bool allowed;
            Option option;
        };
        std::vector<Candidate> candidates;
        if (!isGlobalToShared(c) && !isSharedToGlobal(c)) {
            why = ctx_.target.has(Feature::Tma) ? "TMA moves data between global and shared memory; this copy is " + copyDirection(c)
                                  : lacks(ctx_.target, Feature::Tma);
            return CopyInst::Unselected;
        }
        if (isGlobalToShared(c)) {
            candidates.push_back({CopyInst::BulkLoad1D, allowLoad, allowLoad ? bulk1D(c, true) : Option{}});
            candidates.push_back({CopyInst::BulkLoad, allowLoad, allowLoad ? tmaCopy(c, true, true) : Option{}});
        }
        if (isSharedToGlobal(c)) {
            candidates.push_back({CopyInst::BulkStore1D, allowStore, allowStore ? bulk1D(c, false) : Option{}});
            candidates.push_back({CopyInst::BulkStore, allowStore, allowStore ? tmaCopy(c, false, true) : Option{}});
        }
        for (const Candidate &cand : candidates) {
            if (cand.allowed && cand.option.ok) return cand.inst;
            if (cand.allowed) {
                rejected.push_back({ir::copyInstName(cand.inst), cand.option.reason});
                why = cand.option.reason;
            }
        }
        return CopyInst::Unselected;
    }

    Option cpAsync(const ir::Copy &c) const {
        if (!ctx_.target.has(Feature::CpAsync)) return Option::no(lacks(ctx_.target, Feature::CpAsync));
        if (!isGlobalToShared(c)) return Option::no("cp.async moves global to shared memory, this copy is " + copyDirection(c));
        if (c.src.buffer->dtype != c.dst.buffer->dtype)
            return Option::no("cp.async copies bytes and cannot convert " + std::string(dtypeName(c.src.buffer->dtype)) + " to " +
                              std::string(dtypeName(c.dst.buffer->dtype)));
        return Option::yes();
    }

    // SelectSyncLikeInst: LDSM > STSM > TMemLoad > TMemStore > Normal; and
    // PackedBytes, the one way between f4e2m1 registers and packed memory.
    CopyInst selectSync(const ir::Copy &c, std::vector<Rejected> &rejected) const {
        ir::MemScope s = c.src.buffer->scope, d = c.dst.buffer->scope;
        const Target &t = ctx_.target;
        if ((s == ir::MemScope::Fragment) != (d == ir::MemScope::Fragment) && inRegistersOneByOne(c.src.buffer->dtype)) return CopyInst::PackedBytes;
        if (s == ir::MemScope::Shared && d == ir::MemScope::Fragment) {
            if (!t.has(Feature::Ldmatrix)) rejected.push_back({"LDSM", lacks(t, Feature::Ldmatrix)});
            else if (auto why = notFilledByLdmatrix_.find(c.dst.buffer.get()); why != notFilledByLdmatrix_.end())
                rejected.push_back({"LDSM", "fragment '" + c.dst.buffer->name + "' " + why->second + ", which ldmatrix does not fill"});
            else if (!operandFragments_.count(c.dst.buffer.get()))
                rejected.push_back({"LDSM", "fragment '" + c.dst.buffer->name + "' does not have an MMA operand layout (it is not a gemm operand)"});
            else if (dtypeBits(c.src.buffer->dtype) != 16 || c.src.buffer->dtype != c.dst.buffer->dtype)
                rejected.push_back({"LDSM", "ldmatrix moves 16-bit elements without conversion"});
            else if (c.dst.tileShape() != *c.dst.buffer->constShape())
                rejected.push_back({"LDSM", "ldmatrix fills a whole operand fragment; this copy writes part of '" + c.dst.buffer->name + "'"});
            else return CopyInst::LDSM;
        }
        if (s == ir::MemScope::Fragment && d == ir::MemScope::Shared) {
            std::optional<std::string> no = stmatrixObstacle(c);
            if (!no) return CopyInst::STSM;
            rejected.push_back({"STSM", *no});
        }
        if (s == ir::MemScope::TMem && d == ir::MemScope::Fragment) return CopyInst::TMemLoad;
        if (s == ir::MemScope::Fragment && d == ir::MemScope::TMem) return CopyInst::TMemStore;
        return CopyInst::Normal;
    }

    // Why stmatrix cannot store this copy (lower-fragment-stores' conditions,
    // TileLang's LowerLDSM's for stores), if it cannot.
    std::optional<std::string> stmatrixObstacle(const ir::Copy &c) const {
        const ir::BufferNode &fragment = *c.src.buffer, &shared = *c.dst.buffer;
        if (!ctx_.target.has(Feature::Stmatrix)) return lacks(ctx_.target, Feature::Stmatrix);
        auto found = accumulatorLayouts_.find(&fragment);
        if (found == accumulatorLayouts_.end())
            return "fragment '" + fragment.name + "' is not the accumulator of an mma.sync or wgmma gemm (whose register pattern stmatrix stores)";
        const ir::TileLayout &layout = found->second;
        if (dtypeBits(shared.dtype) != 16) return "stmatrix stores 16-bit elements; '" + shared.name + "' holds " + std::string(dtypeName(shared.dtype));
        if (!c.src.coversBuffer()) return "stmatrix stores a whole accumulator; this copy reads part of '" + fragment.name + "'";
        std::optional<int64_t> rowLength = ir::constInt(shared.shape.back());
        if (c.dst.tileShape() != layout.shape || c.dst.extents.back() != layout.shape.back() || !rowLength)
            return "the destination is not a tile of '" + fragment.name + "''s shape with its rows along the last dimension of '" + shared.name + "'";
        if (*rowLength % 8 != 0 || ir::knownDivisor(c.dst.mins.back()) % 8 != 0)
            return "the rows of the destination in '" + shared.name + "' are not 16-byte aligned (stmatrix stores 16-byte rows)";
        if (layout.threads != threads_)
            return "the copy runs on " + std::to_string(threads_) + " threads and the accumulator's layout spans " + std::to_string(layout.threads);
        std::string mismatch = ir::stmatrixMismatch(layout);
        if (!mismatch.empty()) return mismatch;
        return std::nullopt;
    }

    // ------------------------------------------------------------ the chain

    CopyInst select(const ir::Copy &c) {
        Decision decision;
        decision.where = c.span;
        decision.op = std::string(ir::copyKindName(c.copyKind)) + " " + copyDirection(c);
        std::vector<Rejected> &rejected = decision.rejected;
        CopyInst inst = CopyInst::Unselected;
        std::string why;
        auto fail = [&](const std::string &what, const std::string &reason) {
            ctx_.diags.error(c.span, what + ": " + reason);
            return CopyInst::Unselected;
        };

        if (c.reduceAdd) {
            // Only the tensor form adds; a plain store would overwrite.
            Option o = tmaCopy(c, false, true);
            if (!o.ok) return fail("atomic_add(..., use_tma = true) cannot add with TMA", o.reason);
            inst = CopyInst::BulkStore;
            why = "atomic_add with use_tma = true: TMA adds the shared tile into global memory (cp.reduce.async.bulk.tensor .add)";
        } else if (c.multicast()) {
            Option o = tmaCopy(c, true, true);
            if (!o.ok) return fail("cluster_mask needs a descriptor TMA load (BulkLoad)", o.reason);
            inst = CopyInst::BulkLoad;
            why = "cluster_mask multicasts with a descriptor TMA load";
        } else if (c.copyKind == ir::CopyKind::TmaCopy) {
            std::string reason;
            inst = selectTma(c, true, true, rejected, reason);
            if (inst == CopyInst::Unselected) return fail("tma_copy cannot use TMA", reason);
            why = "tma_copy asks for TMA";
        } else if (c.producerRole) {
            std::string reason;
            inst = selectTma(c, true, false, rejected, reason);
            // specialize-warps made it a producer only after the same check passed.
            if (inst == CopyInst::Unselected) TILET_INTERNAL_ERROR("the producer warp group's load cannot use TMA: " << reason);
            why = "the producer warp group of a warp-specialized loop loads with TMA";
        } else if (c.copyKind == ir::CopyKind::AsyncCopy) {
            Option o = cpAsync(c);
            if (!o.ok) return fail("async_copy cannot use cp.async", o.reason);
            inst = CopyInst::CPAsync;
            why = "async_copy asks for cp.async";
        } else if (c.prefer == ir::CopyPreference::Tma) {
            std::string reason;
            inst = selectTma(c, true, true, rejected, reason);
            if (inst == CopyInst::Unselected) return fail("prefer = tma cannot be honoured", reason);
            why = "prefer = tma";
        } else if (c.prefer == ir::CopyPreference::CpAsync) {
            Option o = cpAsync(c);
            if (!o.ok) return fail("prefer = cp_async cannot be honoured", o.reason);
            inst = CopyInst::CPAsync;
            why = "prefer = cp_async";
        } else if (isUnpacked(c.dst.buffer->dtype)) {
            // (prefer = sync included: a SIMT copy cannot fill the slots either)
            std::string reason;
            const std::string slots(dtypeName(c.dst.buffer->dtype));
            inst = selectTma(c, true, true, rejected, reason);
            if (inst == CopyInst::Unselected)
                return fail("the copy into " + slots + " tile '" + c.dst.buffer->name + "' needs TMA, which alone puts " +
                                std::string(dtypeName(c.src.buffer->dtype)) + " in its 8-bit slots", reason);
            why = "only TMA writes " + slots + " tiles (" + ir::unpackingTensorMapType(c.dst.buffer->dtype) + ")";
        } else if (c.prefer == ir::CopyPreference::Sync) {
            inst = selectSync(c, rejected);
            why = "prefer = sync";
        } else if (c.inPipeline && cpAsync(c).ok) {
            if (isGlobalToShared(c)) rejected.push_back({"BulkLoad", noTma().value_or("loads in a pipelined loop that is not warp-specialized use cp.async")});
            inst = CopyInst::CPAsync;
            why = "a load in a pipelined loop";
        } else {
            // The default path: only stores try TMA.
            if (isGlobalToShared(c)) {
                rejected.push_back({"BulkLoad", noTma().value_or("a plain copy never loads with TMA; ask with prefer = tma or tma_copy")});
                Option o = cpAsync(c);
                std::string notHere = stageZeroLoop_ ? "the pipelined loop at " + stageZeroLoop_->lineColumn() + " has stages = 0, which runs its copies in order"
                                      : nestedLoop_ ? "it is nested in a branch or loop of the pipelined loop at " + nestedLoop_->lineColumn() +
                                                          ", not one of the loop's statements (which are what the pipeline issues ahead)"
                                      : !issuedEarly_why_.empty() ? issuedEarly_why_
                                                                  : "cp.async is used for copies in pipelined loops or with async_copy";
                rejected.push_back({"CPAsync", o.ok ? notHere : o.reason});
            }
            if (isSharedToGlobal(c)) {
                if (c.disableTma) rejected.push_back({"BulkStore", "disable_tma = true"});
                else {
                    std::string reason;
                    inst = selectTma(c, false, true, rejected, reason);
                    if (inst != CopyInst::Unselected) why = "shared->global stores use TMA by default";
                }
            }
            if (inst == CopyInst::Unselected) {
                inst = selectSync(c, rejected);
                why = inst == CopyInst::Normal        ? "SIMT loads and stores by every thread"
                      : inst == CopyInst::PackedBytes ? "the fragment holds one " + std::string(dtypeName(c.src.buffer->dtype)) +
                                                            " element to a register, memory two to a byte: each thread packs (or unpacks) the bytes of its pairs"
                                                      : "synchronous copy";
            }
        }
        decision.choice = ir::copyInstName(inst);
        decision.why = why;
        if (inst == CopyInst::CPAsync) {
            decision.promises = "cp.async";
            decision.otherwise = ir::copyInstName(CopyInst::Normal);
        }
        ctx_.explain.record(std::move(decision));
        return inst;
    }

    // Why TMA is out of the question on this target, if it is.
    std::optional<std::string> noTma() const {
        if (ctx_.target.has(Feature::Tma)) return std::nullopt;
        return lacks(ctx_.target, Feature::Tma);
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    std::set<const ir::BufferNode *> operandFragments_;
    std::map<const ir::BufferNode *, std::string> notFilledByLdmatrix_;   // other register operands of mma.sync gemms, and what they are
    std::map<const ir::BufferNode *, ir::TileLayout> accumulatorLayouts_;   // mma.sync and wgmma accumulators
    int64_t threads_;   // of the block, or of the ws(...) role around the copy
    std::set<const ir::StmtNode *> pipelineProducers_;
    std::map<const ir::StmtNode *, const ir::For *> gathers_;   // gathers a pipelined loop issues ahead, and that loop
    std::map<const ir::BufferNode *, int64_t> stagedTiles_;   // shared tiles a pipelined loop versions, and into how many stages
    std::map<const ir::StmtNode *, SourceRange> stageZeroLoops_;   // statements of pipelined loops with stages = 0
    std::optional<SourceRange> stageZeroLoop_;                       // the copy being selected is one of them
    std::map<const ir::StmtNode *, SourceRange> nestedInPipeline_;   // copies inside a pipelined loop, not its statements
    std::map<const ir::StmtNode *, std::string> issuedEarly_;   // a pipelined loop's copies that read what it writes, and why
    std::string issuedEarly_why_;                               // the copy being selected is one of them
    std::optional<SourceRange> nestedLoop_;                          // the copy being selected is one of them
};

} // namespace

ir::Kernel selectCopyInst(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    out.body = Selector(kernel, ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
