// VectorizeAccesses.cpp -- see VectorizeAccesses.h.
//
// For a loop `for v in vectorized(V) { B }`:
//   1. Inline B's let bindings to see each access's indices in terms of v.
//   2. Split every guard condition into lane-independent conjuncts (kept) and
//      lane-dependent comparisons (lifted: they hold for all lanes when they
//      hold for lanes 0 and V-1, since indices are affine in v).
//   3. An access is wide when its last index is base + v with base a proven
//      multiple of V, its other indices do not depend on v, its buffer's rows
//      are multiples of V, and V elements are 4, 8 or 16 bytes. A buffer both
//      read and written in B is made wide only if every access uses the same
//      index (read-modify-write of one element).
//   4. Wide loads are issued before the lane loop into a register array,
//      wide stores after it from one; the lane loop works on the arrays.
#include "passes/VectorizeAccesses.h"

#include "ir/Analysis.h"
#include "ir/BufferEdits.h"
#include "ir/Effects.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "support/Checked.h"

#include <functional>
#include <map>
#include <set>

namespace tilet {

namespace {

struct AccessInfo {
    ir::Buffer buffer;
    std::vector<ir::Expr> indices;   // every let inlined: for proofs
    std::vector<ir::Expr> code;      // only the lane loop's lets inlined: valid before the loop
    bool store = false;
    bool atomic = false;
};

class Vectorizer : public ir::Mutator {
public:
    Vectorizer(const ir::Kernel &k, PassContext &ctx) : ctx_(ctx), scope_(ir::BoundsScope::forKernel(k)) {}
    using ir::Mutator::mutate;
    const ir::BufferEdits &decisions() const { return edits_; }

protected:
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        if (n.forKind == ir::ForKind::Vectorized) return vectorize(n);
        // The loop's range bounds the indices inside it (ir::splitLaneRuns's proofs).
        std::optional<int64_t> lo = ir::constInt(n.min), extent = ir::constInt(n.extent);
        if (lo && extent && *extent > 0) scope_.bind(n.var.get(), ir::Interval::range(*lo, *lo + *extent - 1));
        ir::Stmt out = ir::Mutator::mutateFor(self, n);
        scope_.unbind(n.var.get());
        return out;
    }
    // An external function may read a local array it is given as wider words
    // (TileLang's LOP3 decodes read four int8 as one uint32): align the array
    // to the widest access its size allows, up to 16 bytes.
    ir::Stmt mutateCallExtern(const ir::Stmt &self, const ir::CallExtern &n) override {
        for (size_t i = 0; i < n.args.size(); ++i) {
            const ir::Load *pointee = n.kinds[i] == ir::ExternArgKind::Value ? nullptr : ir::as<ir::Load>(n.args[i]);
            if (!pointee || pointee->buffer->scope != ir::MemScope::Local) continue;
            std::optional<int64_t> elements = pointee->buffer->constElements();
            if (!elements) continue;
            int64_t bytes = *elements * dtypeBits(pointee->buffer->dtype) / 8, align = 1;
            while (align < 16 && bytes % (align * 2) == 0) align *= 2;
            if (align > 1) alignAtLeast(pointee->buffer, align);
        }
        return ir::Mutator::mutateCallExtern(self, n);
    }
    // Lets around the loop matter too: alignment proofs need their values.
    ir::Stmt mutateLetStmt(const ir::Stmt &self, const ir::LetStmt &n) override {
        outerLets_.push_back({n.var, n.value});
        ir::Stmt out = ir::Mutator::mutateLetStmt(self, n);
        outerLets_.pop_back();
        return out;
    }

private:
    // ------------------------------------------------------------ analysis

    ir::Expr inlineLets(const ir::Expr &e) const {
        ir::Expr out = e;
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) out = ir::substitute(out, {{it->first, it->second}});
        return out;
    }

    bool dependsOnLane(const ir::Expr &e) const { return ir::usesVar(inlineLets(e), lane_); }

    // The lane-dependent comparisons of a guard, if all of them can be lifted.
    bool splitGuard(const ir::Expr &cond, std::vector<ir::Expr> &laneDependent) const {
        if (const ir::Binary *b = ir::as<ir::Binary>(cond); b && b->op == ir::BinaryOp::And)
            return splitGuard(b->a, laneDependent) && splitGuard(b->b, laneDependent);
        if (!dependsOnLane(cond)) return true;
        const ir::Binary *cmp = ir::as<ir::Binary>(cond);
        if (!cmp || !(cmp->op == ir::BinaryOp::Lt || cmp->op == ir::BinaryOp::Ge || cmp->op == ir::BinaryOp::Le || cmp->op == ir::BinaryOp::Gt))
            return false;
        if (dependsOnLane(cmp->b) || !isAffineInLane(cmp->a)) return false;
        ir::Expr x = inlineLets(cmp->a);
        ir::Expr step = ir::simplify(ir::sub(ir::substitute(x, {{laneRef_, ir::intImm(1)}}), ir::substitute(x, {{laneRef_, ir::intImm(0)}})));
        if (ir::constInt(step).value_or(0) <= 0) return false;
        laneDependent.push_back(cond);
        return true;
    }

    bool isAffineInLane(const ir::Expr &e) const {
        ir::Expr x = inlineLets(e);
        auto at = [&](int64_t k) { return ir::substitute(x, {{laneRef_, ir::intImm(k)}}); };
        ir::Expr d1 = ir::simplify(ir::sub(at(1), at(0)));
        std::optional<int64_t> step = ir::constInt(d1);
        if (!step) return false;
        ir::Expr dLast = ir::simplify(ir::sub(at(width_ - 1), at(0)));
        std::optional<int64_t> span = checkedMul(*step, width_ - 1);   // a stride near 2^63 is not affine in 64 bits
        return span && ir::constInt(dLast) == *span;
    }

    // Removes lifted guards (replaced by true) from the fast path.
    class GuardLifter : public ir::Mutator {
    public:
        explicit GuardLifter(Vectorizer &v) : v_(v) {}
        using ir::Mutator::mutate;
        bool ok = true;

    protected:
        ir::Expr mutateSelect(const ir::Expr &self, const ir::Select &n) override {
            // A select that guards no memory read is an ordinary per-lane value.
            bool guardsMemory = false;
            for (const ir::Expr &branch : {n.thenValue, n.elseValue}) {
                ir::forEachExpr(branch, [&](const ir::Expr &e) {
                    const ir::Load *l = ir::as<ir::Load>(e);
                    if (l && (l->buffer->scope == ir::MemScope::Global || l->buffer->scope == ir::MemScope::Shared)) guardsMemory = true;
                });
            }
            if (!guardsMemory) return ir::Mutator::mutateSelect(self, n);
            ir::Expr cond = lift(n.cond);
            ir::Expr t = mutate(n.thenValue), f = mutate(n.elseValue);
            if (!cond) return t;
            if (cond == n.cond && t == n.thenValue && f == n.elseValue) return self;
            return std::make_shared<ir::Select>(n.dtype, cond, t, f, n.span);
        }
        ir::Stmt mutateIfThenElse(const ir::Stmt &self, const ir::IfThenElse &n) override {
            ir::Expr cond = lift(n.cond);
            ir::Stmt t = mutate(n.thenBody), e = mutate(n.elseBody);
            if (!cond) return t;
            if (cond == n.cond && t == n.thenBody && e == n.elseBody) return self;
            return std::make_shared<ir::IfThenElse>(cond, t, e, n.span);
        }

    private:
        // Every condition is lifted out of the fast path (null: always true
        // there). The fast path only runs when all of them hold for all lanes;
        // otherwise the original loop runs, so this never changes results.
        ir::Expr lift(const ir::Expr &cond) {
            if (const ir::Binary *b = ir::as<ir::Binary>(cond); b && b->op == ir::BinaryOp::And) {
                lift(b->a);
                lift(b->b);
                return nullptr;
            }
            // (A condition already lifted is not tested twice.)
            for (const ir::Expr &done : v_.lifted_)
                if (ir::structurallyEqual(done, cond)) return nullptr;
            std::vector<ir::Expr> deps;
            if (!v_.splitGuard(cond, deps)) ok = false;
            v_.lifted_.push_back(cond);
            return nullptr;
        }
        Vectorizer &v_;
    };

    // ------------------------------------------------------------ rewriting

    ir::Stmt vectorize(const ir::For &n) {
        lane_ = n.var.get();
        laneRef_ = n.var;
        width_ = *ir::constInt(n.extent);
        lets_ = outerLets_;
        innerLets_.clear();
        lifted_.clear();
        std::vector<const ir::VarNode *> innerLoopVars;   // accesses using them cannot move out of the lane loop
        ir::forEachStmt(n.body, [&](const ir::Stmt &s) {
            if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
                lets_.push_back({l->var, l->value});
                innerLets_.push_back({l->var, l->value});
            }
            if (const ir::For *f = ir::as<ir::For>(s)) innerLoopVars.push_back(f->var.get());
        });
        auto usesInnerLoop = [&](const std::vector<ir::Expr> &indices) {
            for (const ir::Expr &i : indices) {
                for (const ir::VarNode *v : innerLoopVars) {
                    if (ir::usesVar(i, v)) return true;
                }
            }
            return false;
        };

        auto scalar = std::make_shared<ir::For>(n.var, n.min, n.extent, ir::ForKind::Unrolled, n.body, n.span);
        scalar->threadLocal = true;

        GuardLifter lifter(*this);
        ir::Stmt fastBody = lifter.mutate(n.body);
        if (!lifter.ok) return keepScalar(n, scalar, "a bounds check of its lanes cannot be lifted out of the loop");

        // Decide which accesses are wide.
        // Buffers in order of first access (never by address: output must be deterministic).
        std::vector<std::pair<const ir::BufferNode *, std::vector<AccessInfo>>> byBuffer;
        auto entry = [&](const ir::BufferNode *b) -> std::vector<AccessInfo> & {
            for (auto &[key, list] : byBuffer) {
                if (key == b) return list;
            }
            byBuffer.push_back({b, {}});
            return byBuffer.back().second;
        };
        // Stores first, then loads, as the lanes' code has them.
        bool elementsOnly = true;
        for (bool stores : {true, false}) {
            ir::forEachEffect(fastBody, [&](const ir::Stmt &, const ir::Effects &fx) {
                for (const ir::Access &a : fx.accesses) {
                    // Anything but element accesses (an instruction, a whole buffer) keeps the lanes scalar.
                    if (!a.indices) elementsOnly = false;
                    if (!a.indices || a.writes() != stores) continue;
                    entry(a.buffer).push_back({*a.owner, inlineAll(*a.indices), inlineInner(*a.indices), stores, a.mode == ir::AccessMode::ReadWrite});
                }
            });
        }
        if (!elementsOnly) return keepScalar(n, scalar, "its body does more than read and write buffer elements");
        std::map<const ir::BufferNode *, int64_t> wideBytes;
        std::vector<std::string> notes;
        for (const auto &[buffer, accesses] : byBuffer) {
            const ir::Buffer &b = accesses.front().buffer;
            if (b->scope != ir::MemScope::Global && b->scope != ir::MemScope::Shared) continue;
            int64_t bytes = saturatingProduct({width_, dtypeBits(b->dtype)}) / 8;   // a huge lane loop is simply not 4, 8 or 16k bytes
            bool ok = bytes == 4 || bytes == 8 || bytes % 16 == 0;   // wider than 16: several 16-byte moves
            bool reads = false, writes = false;
            for (const AccessInfo &a : accesses) {
                ok = ok && !a.atomic && !usesInnerLoop(a.indices) && wideIndex(*b, a.indices);
                (a.store ? writes : reads) = true;
                // One register array per buffer: every access must be to the same elements (all indices, not only the last).
                for (size_t d = 0; d < a.indices.size(); ++d)
                    ok = ok && ir::structurallyEqual(ir::simplify(a.indices[d]), ir::simplify(accesses.front().indices[d]));
            }
            (void)reads;
            (void)writes;
            if (ok) {
                wideBytes[buffer] = bytes;
                // The instructions are at most 16 bytes wide: a wider lane run is several of them.
                std::string width = bytes > 16 ? std::to_string(bytes / 16) + " 16-byte " : std::to_string(bytes) + "-byte ";
                notes.push_back(width + (writes ? (reads ? "loads and stores" : "stores") : "loads") + " of '" + b->name + "'");
            }
        }
        if (wideBytes.empty())
            return keepScalar(n, scalar, "no global or shared buffer is accessed at " + std::to_string(width_) +
                                             " consecutive elements of 4, 8 or 16 bytes in all, proven aligned");

        // Lifted conditions: the wide path runs when they hold for lane 0 and,
        // for the lane-dependent ones, for lane V-1 too.
        ir::Expr allIn = liftedCondition();

        // A plain copy (the lane loop's one store is of a load of the same
        // dtype) moves memory to memory directly, as cp.async for an
        // AsyncCopy store, 4, 8 or 16 bytes per instruction.
        if (ir::Stmt direct = directCopies(fastBody, byBuffer, wideBytes, n.span)) {
            int64_t bytes = std::min<int64_t>(16, saturatingProduct({width_, dtypeBits(direct_->buffer->dtype)}) / 8);
            Decision d;
            d.where = n.span;
            d.op = "vectorized accesses";
            d.choice = direct_->op == ir::StoreOp::AsyncCopy
                           ? "cp.async of " + std::to_string(bytes) + " bytes per instruction"
                           : std::to_string(bytes) + "-byte copies from '" + ir::as<ir::Load>(direct_->value)->buffer->name + "' to '" +
                                 direct_->buffer->name + "'";
            ir::Stmt otherwise = allIn ? scalarUnlessUniform(scalar) : nullptr;
            d.why = otherwise ? "the per-element loop (plain loads and stores) runs where a condition of the lanes (a tensor edge, a branch) does not hold for all of them"
                              : "every lane is in bounds and aligned" + std::string(allIn ? " where the lanes run at all" : "");
            ctx_.explain.record(std::move(d));
            if (!allIn) return direct;
            return std::make_shared<ir::IfThenElse>(allIn, direct, otherwise, n.span);
        }

        // Rewrite: one register array per wide buffer.
        std::vector<ir::Stmt> before, after;
        std::map<const ir::BufferNode *, ir::Buffer> temps;   // lookups only
        std::vector<ir::Buffer> tempOrder;
        const std::set<const ir::BufferNode *> readFirst = readBeforeWritten(fastBody);
        for (const auto &[buffer, accesses] : byBuffer) {
            if (!wideBytes.count(buffer)) continue;
            const AccessInfo &a = accesses.front();
            auto tmp = ir::makeBuffer(a.buffer->name + "_vec", a.buffer->dtype, {ir::intImm(width_)}, ir::MemScope::Local, n.span);
            temps[buffer] = tmp;
            tempOrder.push_back(tmp);
            std::vector<ir::Expr> base;
            for (const ir::Expr &i : a.code) base.push_back(ir::simplify(ir::substitute(i, {{laneRef_, ir::intImm(0)}})));
            bool loaded = false, stored = false;
            for (const AccessInfo &x : accesses) (x.store ? stored : loaded) = true;
            // Each lane reads only what it wrote before in the iteration
            // (`s[i, j] = ..; t[i, j] = s[i, j] * 2`): its register holds
            // that already, and a load before the loop would read what
            // nothing has written yet.
            loaded = loaded && readFirst.count(buffer) > 0;
            int64_t bytes = wideBytes[buffer];
            int64_t chunk = std::min<int64_t>(bytes, 16);
            tmp->alignment = chunk;
            alignAtLeast(a.buffer, chunk);
            std::vector<ir::Expr> local{ir::intImm(0)};
            if (loaded) before.push_back(chunkMoves(tmp, local, a.buffer, base, bytes, false, n.span));
            if (stored) after.push_back(chunkMoves(a.buffer, base, tmp, local, bytes, false, n.span));
        }
        ir::Stmt laneBody = TempRewriter(temps, laneRef_).mutate(fastBody);
        auto laneLoop = std::make_shared<ir::For>(n.var, n.min, n.extent, ir::ForKind::Unrolled, laneBody, n.span);
        laneLoop->threadLocal = true;
        std::vector<ir::Stmt> fast = before;
        fast.push_back(laneLoop);
        for (ir::Stmt &s : after) fast.push_back(s);
        ir::Stmt fastPath = ir::seq(std::move(fast));
        for (auto it = tempOrder.rbegin(); it != tempOrder.rend(); ++it) fastPath = std::make_shared<ir::Allocate>(*it, fastPath, n.span);

        Decision d;
        d.where = n.span;
        d.op = "vectorized accesses";
        for (size_t i = 0; i < notes.size(); ++i) d.choice += (i ? ", " : "") + notes[i];
        ir::Stmt otherwise = allIn ? scalarUnlessUniform(scalar) : nullptr;
        d.why = otherwise ? "the per-element loop runs where a condition of the lanes (a tensor edge, a branch) does not hold for all of them"
                          : "every lane is in bounds and aligned" + std::string(allIn ? " where the lanes run at all" : "");
        ctx_.explain.record(std::move(d));
        if (!allIn) return fastPath;
        return std::make_shared<ir::IfThenElse>(allIn, fastPath, otherwise, n.span);
    }

    // The buffers the lanes' code reads at an element it has not written
    // before in the same iteration (at the same indices, in a statement of
    // the body itself: not in an inner loop or branch).
    static std::set<const ir::BufferNode *> readBeforeWritten(const ir::Stmt &body) {
        std::set<const ir::BufferNode *> readFirst;
        std::vector<std::pair<const ir::BufferNode *, const std::vector<ir::Expr> *>> written;
        auto covered = [&](const ir::Access &a) {
            return a.indices && std::any_of(written.begin(), written.end(), [&](const auto &w) {
                       return w.first == a.buffer && w.second->size() == a.indices->size() &&
                              std::equal(w.second->begin(), w.second->end(), a.indices->begin(),
                                         [](const ir::Expr &x, const ir::Expr &y) { return ir::structurallyEqual(x, y); });
                   });
        };
        std::function<void(const ir::Stmt &)> walk = [&](const ir::Stmt &s) {
            if (!s) return;
            if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
                for (const ir::Stmt &x : q->stmts) walk(x);
                return;
            }
            if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
                for (const ir::Access &a : ir::ownEffects(s).accesses)
                    if (a.reads() && !covered(a)) readFirst.insert(a.buffer);
                walk(l->body);
                return;
            }
            if (ir::as<ir::For>(s) || ir::as<ir::IfThenElse>(s) || ir::as<ir::Allocate>(s)) {
                ir::forEachEffect(s, [&](const ir::Stmt &, const ir::Effects &fx) {
                    for (const ir::Access &a : fx.accesses)
                        if (a.reads() && !covered(a)) readFirst.insert(a.buffer);
                });
                return;
            }
            const ir::Effects fx = ir::ownEffects(s);
            for (const ir::Access &a : fx.accesses)
                if (a.reads() && !covered(a)) readFirst.insert(a.buffer);
            const ir::Store *store = ir::as<ir::Store>(s);
            if (store && store->op == ir::StoreOp::Assign) written.push_back({store->buffer.get(), &store->indices});
        };
        walk(body);
        return readFirst;
    }

    // A loop the program wrote as vectorized(V) that stays per element says why.
    ir::Stmt keepScalar(const ir::For &n, const ir::Stmt &scalar, const std::string &why) {
        if (!n.requested) return scalar;
        Decision d;
        d.where = n.span;
        d.op = "vectorized loop";
        d.choice = "kept per element: " + std::to_string(width_) + " unrolled iterations";
        d.why = why;
        ctx_.explain.record(std::move(d));
        return scalar;
    }

    // The per-element path for when the lifted conditions fail. It does
    // nothing, and is left out, when a single lane-independent condition was
    // lifted and it guards every store of the loop (a replica guard).
    ir::Stmt scalarUnlessUniform(const ir::Stmt &scalar) const {
        if (lifted_.size() != 1 || dependsOnLane(lifted_[0])) return scalar;
        bool allGuarded = true;
        std::function<void(const ir::Stmt &, bool)> walk = [&](const ir::Stmt &s, bool guarded) {
            if (!s) return;
            if (const ir::IfThenElse *i = ir::as<ir::IfThenElse>(s)) {
                walk(i->thenBody, guarded || ir::structurallyEqual(i->cond, lifted_[0]));
                walk(i->elseBody, guarded);
                return;
            }
            if (ir::as<ir::Store>(s) || ir::as<ir::VectorCopy>(s)) {
                allGuarded = allGuarded && guarded;
                return;
            }
            if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
                for (const ir::Stmt &x : q->stmts) walk(x, guarded);
            } else if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
                walk(l->body, guarded);
            } else if (const ir::For *f = ir::as<ir::For>(s)) {
                walk(f->body, guarded);
            } else if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) {
                walk(a->body, guarded);
            } else {
                allGuarded = false;   // anything else: keep the per-element path
            }
        };
        walk(scalar, false);
        return allGuarded ? nullptr : scalar;
    }

    // The conjunction of the lifted guard conditions, evaluated at the lanes
    // where each binds (null when nothing was lifted).
    ir::Expr liftedCondition() const {
        ir::Expr allIn;
        for (const ir::Expr &g : lifted_) {
            ir::Expr code = inlineInner({g}).front();
            auto at = [&](int64_t lane) { return ir::simplify(ir::substitute(code, {{laneRef_, ir::intImm(lane)}})); };
            if (!dependsOnLane(g)) {
                allIn = ir::logicalAnd(allIn, at(0));
                continue;
            }
            // An index growing with the lane: `< bound` binds at the last lane,
            // `>= bound` at the first.
            const ir::Binary *cmp = ir::as<ir::Binary>(g);
            bool upper = cmp->op == ir::BinaryOp::Lt || cmp->op == ir::BinaryOp::Le;
            allIn = ir::logicalAnd(allIn, at(upper ? width_ - 1 : 0));
        }
        return allIn;
    }

    // The direct form of a lane loop whose only write is a memory store of a
    // plain load of the same dtype, both wide (cp.async for an AsyncCopy
    // store); null otherwise.
    ir::Stmt directCopies(const ir::Stmt &fastBody, const std::vector<std::pair<const ir::BufferNode *, std::vector<AccessInfo>>> &byBuffer,
                         const std::map<const ir::BufferNode *, int64_t> &wideBytes, SourceRange span) {
        direct_ = nullptr;
        int stores = 0;
        ir::forEachStmt(fastBody, [&](const ir::Stmt &s) {
            if (const ir::Store *st = ir::as<ir::Store>(s)) {
                ++stores;
                if (st->op == ir::StoreOp::Assign || st->op == ir::StoreOp::AsyncCopy) direct_ = st;   // not an atomic add or store
            }
        });
        if (!direct_ || stores != 1) return nullptr;
        bool async = direct_->op == ir::StoreOp::AsyncCopy;
        const ir::Load *src = ir::as<ir::Load>(direct_->value);
        if (!src || src->buffer->dtype != direct_->buffer->dtype) return nullptr;
        if (!wideBytes.count(direct_->buffer.get()) || !wideBytes.count(src->buffer.get())) return nullptr;
        int64_t bytes = wideBytes.at(direct_->buffer.get());
        if (bytes < 4) return nullptr;
        auto baseOf = [&](const ir::BufferNode *b) {
            std::vector<ir::Expr> base;
            for (const auto &[key, list] : byBuffer) {
                if (key != b) continue;
                for (const ir::Expr &i : list.front().code) base.push_back(ir::simplify(ir::substitute(i, {{laneRef_, ir::intImm(0)}})));
            }
            return base;
        };
        std::vector<ir::Expr> dstBase = baseOf(direct_->buffer.get()), srcBase = baseOf(src->buffer.get());
        int64_t chunk = std::min<int64_t>(bytes, 16);
        alignAtLeast(direct_->buffer, chunk);
        alignAtLeast(src->buffer, chunk);
        return chunkMoves(direct_->buffer, dstBase, src->buffer, srcBase, bytes, async, span);
    }

    // `bytes` bytes from src[srcBase...] to dst[dstBase...] in moves of at
    // most 16 bytes, each the next run along the last index on both sides.
    // Several are an unrolled loop over this thread's own elements, which
    // insert-syncs takes as one unit, as it took the lane loop.
    static ir::Stmt chunkMoves(const ir::Buffer &dst, const std::vector<ir::Expr> &dstBase, const ir::Buffer &src,
                               const std::vector<ir::Expr> &srcBase, int64_t bytes, bool async, SourceRange span) {
        int64_t chunk = std::min<int64_t>(bytes, 16), perChunk = chunk * 8 / dtypeBits(src->dtype), count = bytes / chunk;
        ir::VarRef c = ir::makeVar("c");
        auto at = [&](const std::vector<ir::Expr> &base) {
            std::vector<ir::Expr> out = base;
            if (count > 1) out.back() = ir::simplify(ir::add(out.back(), ir::cast(out.back()->dtype, ir::mul(c, ir::intImm(perChunk)))));
            return out;
        };
        ir::Stmt move = std::make_shared<ir::VectorCopy>(dst, at(dstBase), src, at(srcBase), chunk, span, async);
        if (count == 1) return move;
        auto loop = std::make_shared<ir::For>(c, ir::intImm(0), ir::intImm(count), ir::ForKind::Unrolled, move, span);
        loop->threadLocal = true;
        return loop;
    }

    std::vector<ir::Expr> inlineInner(const std::vector<ir::Expr> &idx) const {
        std::vector<ir::Expr> out;
        for (const ir::Expr &i : idx) {
            ir::Expr x = i;
            for (auto it = innerLets_.rbegin(); it != innerLets_.rend(); ++it) x = ir::substitute(x, {{it->first, it->second}});
            out.push_back(x);
        }
        return out;
    }

    std::vector<ir::Expr> inlineAll(const std::vector<ir::Expr> &idx) const {
        std::vector<ir::Expr> out;
        for (const ir::Expr &i : idx) out.push_back(inlineLets(i));
        return out;
    }

    bool wideIndex(const ir::BufferNode &b, const std::vector<ir::Expr> &given) const {
        if (given.empty()) return false;
        std::vector<ir::Expr> indices;
        // (lanes that stay in one run of a division's rows: `B[i / 16, i % 16]`)
        for (const ir::Expr &i : given) indices.push_back(ir::splitLaneRuns(i, laneRef_, width_, scope_));
        for (size_t d = 0; d + 1 < indices.size(); ++d) {
            if (ir::usesVar(indices[d], lane_)) return false;
        }
        const ir::Expr &last = indices.back();
        ir::Expr base = ir::simplify(ir::substitute(last, {{laneRef_, ir::intImm(0)}}));
        ir::Expr step = ir::simplify(ir::sub(ir::substitute(last, {{laneRef_, ir::intImm(1)}}), base));
        if (ir::constInt(step) != 1 || !isAffineInLane(last)) return false;
        int64_t d = ir::knownDivisor(base);
        if (d != 0 && d % width_ != 0) return false;
        // Rows a multiple of the width: a constant, or a dynamic dimension's promise (`dyn K % 8`).
        if (b.rank() > 1 && ir::knownDivisor(b.shape.back()) % width_ != 0) return false;
        return true;
    }

    class TempRewriter : public ir::Mutator {
    public:
        TempRewriter(const std::map<const ir::BufferNode *, ir::Buffer> &temps, ir::VarRef lane) : temps_(temps), lane_(std::move(lane)) {}
        using ir::Mutator::mutate;

    protected:
        ir::Expr mutateLoad(const ir::Expr &self, const ir::Load &n) override {
            auto it = temps_.find(n.buffer.get());
            if (it == temps_.end()) return ir::Mutator::mutateLoad(self, n);
            return std::make_shared<ir::Load>(it->second, std::vector<ir::Expr>{lane_}, n.span);
        }
        ir::Stmt mutateStore(const ir::Stmt &self, const ir::Store &n) override {
            auto it = temps_.find(n.buffer.get());
            if (it == temps_.end()) return ir::Mutator::mutateStore(self, n);
            return std::make_shared<ir::Store>(it->second, std::vector<ir::Expr>{lane_}, mutate(n.value), ir::StoreOp::Assign, n.span);
        }

    private:
        const std::map<const ir::BufferNode *, ir::Buffer> &temps_;
        ir::VarRef lane_;
    };

    // A buffer accessed in `bytes`-wide vectors must be allocated that aligned.
    void alignAtLeast(const ir::Buffer &b, int64_t bytes) { edits_.alignAtLeast(b, bytes); }

    PassContext &ctx_;
    ir::BufferEdits edits_;   // the alignments vector accesses need
    const ir::VarNode *lane_ = nullptr;
    ir::VarRef laneRef_;
    int64_t width_ = 1;
    std::vector<std::pair<ir::VarRef, ir::Expr>> lets_;
    std::vector<std::pair<ir::VarRef, ir::Expr>> outerLets_;
    std::vector<std::pair<ir::VarRef, ir::Expr>> innerLets_;
    std::vector<ir::Expr> lifted_;
    const ir::Store *direct_ = nullptr;
    ir::BoundsScope scope_;   // the block's thread range and the enclosing loops' ranges
};

} // namespace

// An asynchronous store left per element where the statement it came from
// issues no cp.async at all (no vector path whose range holds it): cp.async
// moves 4, 8 or 16 bytes, so it is a plain store, and the decisions that
// promised cp.async say so.
class PlainLeftovers : public ir::Mutator {
public:
    PlainLeftovers(PassContext &ctx, const ir::Stmt &body) : ctx_(ctx) {
        ir::forEachStmt(body, [&](const ir::Stmt &s) {
            if (const ir::VectorCopy *v = ir::as<ir::VectorCopy>(s); v && v->async) issued_.push_back(v->span);
        });
    }
    using ir::Mutator::mutate;

protected:
    ir::Stmt mutateStore(const ir::Stmt &self, const ir::Store &n) override {
        if (n.op != ir::StoreOp::AsyncCopy) return self;
        // The per-element path beside a cp.async vector path: printed as a plain
        // store, it stays in the copy's group for insert-syncs (the wait that
        // lands the vectors comes after it too).
        if (std::any_of(issued_.begin(), issued_.end(), [&](const SourceRange &r) { return r.contains(n.span.begin); })) return self;
        ctx_.explain.breakPromise("cp.async", n.span, issued_,
                                  "cp.async moves 4, 8 or 16 bytes, and no such vector of '" + n.buffer->name +
                                      "' is proven aligned here (see the parallel loop's remark): plain loads and stores");
        return std::make_shared<ir::Store>(n.buffer, n.indices, n.value, ir::StoreOp::Assign, n.span);
    }

private:
    PassContext &ctx_;
    std::vector<SourceRange> issued_;   // where cp.async VectorCopies came from
};

ir::Kernel vectorizeAccesses(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Vectorizer vectorizer(kernel, ctx);
    ir::Stmt body = vectorizer.mutate(kernel.body);
    out.body = PlainLeftovers(ctx, body).mutate(body);
    vectorizer.decisions().applyTo(out);
    return out;
}

} // namespace tilet
