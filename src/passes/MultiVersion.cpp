// MultiVersion.cpp -- see MultiVersion.h.
#include "passes/MultiVersion.h"

#include "ir/Analysis.h"

#include "ir/Effects.h"
#include "ir/Visitor.h"
#include "support/InternalError.h"

#include <algorithm>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

// Rewrites accesses of versioned buffers to select `version`.
class Versioner : public ir::Mutator {
public:
    Versioner(const std::map<const ir::BufferNode *, ir::Buffer> &versioned, Expr version) : versioned_(versioned), version_(std::move(version)) {}
    using ir::Mutator::mutate;

    ir::Region mutateRegion(const ir::Region &r) override {
        ir::Region out = ir::Mutator::mutateRegion(r);
        auto it = versioned_.find(r.buffer.get());
        if (it == versioned_.end()) return out;
        out.buffer = it->second;
        out.mins.insert(out.mins.begin(), version_);
        out.extents.insert(out.extents.begin(), 1);
        return out;
    }

protected:
    Expr mutateLoad(const Expr &self, const ir::Load &n) override {
        Expr base = ir::Mutator::mutateLoad(self, n);
        auto it = versioned_.find(n.buffer.get());
        if (it == versioned_.end()) return base;
        std::vector<Expr> indices = ir::as<ir::Load>(base)->indices;
        indices.insert(indices.begin(), version_);
        return std::make_shared<ir::Load>(it->second, std::move(indices), n.span);
    }
    Stmt mutateStore(const Stmt &self, const ir::Store &n) override {
        Stmt base = ir::Mutator::mutateStore(self, n);
        auto it = versioned_.find(n.buffer.get());
        if (it == versioned_.end()) return base;
        const ir::Store &s = *ir::as<ir::Store>(base);
        std::vector<Expr> indices = s.indices;
        indices.insert(indices.begin(), version_);
        return s.movedTo(it->second, std::move(indices), s.value);
    }

private:
    const std::map<const ir::BufferNode *, ir::Buffer> &versioned_;
    Expr version_;
};

// Replaces the allocations of versioned buffers by their versioned form.
class AllocationReplacer : public ir::Mutator {
public:
    explicit AllocationReplacer(const std::map<const ir::BufferNode *, ir::Buffer> &versioned) : versioned_(versioned) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateAllocate(const Stmt &self, const ir::Allocate &n) override {
        Stmt base = ir::Mutator::mutateAllocate(self, n);
        auto it = versioned_.find(n.buffer.get());
        if (it == versioned_.end()) return base;
        return std::make_shared<ir::Allocate>(it->second, ir::as<ir::Allocate>(base)->body, n.span);
    }

private:
    const std::map<const ir::BufferNode *, ir::Buffer> &versioned_;
};

// Where a statement accesses buffer `b`, and where it writes it; the
// statements `skip` (loops) are left out.
struct Uses {
    std::vector<SourceRange> all, writes;
};

class UseCollector : public ir::Visitor {
public:
    UseCollector(const ir::BufferNode *b, std::vector<const ir::StmtNode *> skip) : b_(b), skip_(std::move(skip)) {}
    Uses uses;
    using ir::Visitor::visit;

    void visit(const Stmt &s) override {
        if (!s || std::find(skip_.begin(), skip_.end(), s.get()) != skip_.end()) return;
        for (const ir::Access &a : ir::ownEffects(s).accesses) {
            if (a.buffer != b_) continue;
            uses.all.push_back(a.span);
            if (a.writes()) uses.writes.push_back(a.span);
        }
        ir::Visitor::visit(s);
    }

private:
    const ir::BufferNode *b_;
    std::vector<const ir::StmtNode *> skip_;
};

Uses usesOf(const Stmt &s, const ir::BufferNode *b, std::vector<const ir::StmtNode *> skip = {}) {
    UseCollector c(b, std::move(skip));
    c.visit(s);
    return c.uses;
}

} // namespace

namespace {

// The constant [lo, hi) of each dimension a copy writes in its destination; nullopt when a corner is not constant.
std::optional<std::vector<std::pair<int64_t, int64_t>>> constantBox(const ir::Region &r) {
    if (r.extents.size() != r.mins.size()) return std::nullopt;
    std::vector<std::pair<int64_t, int64_t>> box;
    for (size_t d = 0; d < r.mins.size(); ++d) {
        std::optional<int64_t> lo = ir::constInt(r.mins[d]);
        if (!lo) return std::nullopt;
        box.push_back({*lo, *lo + r.extents[d]});
    }
    return box;
}

// Whether two global -> shared copies write provably different elements of one tile (halves of a row).
bool fillApart(const Stmt &a, const Stmt &b) {
    const ir::Copy *x = ir::as<ir::Copy>(a), *y = ir::as<ir::Copy>(b);
    if (!x || !y || x->dst.buffer != y->dst.buffer || x->dst.mins.size() != y->dst.mins.size()) return false;
    std::optional<std::vector<std::pair<int64_t, int64_t>>> p = constantBox(x->dst), q = constantBox(y->dst);
    if (!p || !q) return false;
    for (size_t d = 0; d < p->size(); ++d)
        if ((*p)[d].second <= (*q)[d].first || (*q)[d].second <= (*p)[d].first) return true;
    return false;
}

// The destination a copy or an im2col gather writes (null for a gather loop, which fills its whole tile).
const ir::Region *destination(const Stmt &producer) {
    if (const ir::Copy *c = ir::as<ir::Copy>(producer)) return &c->dst;
    if (const ir::Im2Col *g = ir::as<ir::Im2Col>(producer)) return &g->dst;
    return nullptr;
}

int64_t elementCount(const std::vector<std::pair<int64_t, int64_t>> &box) {
    int64_t n = 1;
    for (const auto &[lo, hi] : box) n *= hi - lo;
    return n;
}

// Why the loads `fills` (producers of one iteration) leave
// part of their tile unwritten ("" when together they fill all of it).
// Each version of a tile loaded ahead holds one iteration's elements only:
// an element no load of the iteration writes keeps what an iteration
// stages earlier wrote there, not what the previous one did.
std::string partlyFilled(const std::vector<Stmt> &fills, const ir::Buffer &tile) {
    int64_t filled = 0;
    for (size_t i = 0; i < fills.size(); ++i)
        for (size_t j = i + 1; j < fills.size(); ++j)
            if (!fillApart(fills[i], fills[j])) return "two of the loop's loads of '" + tile->name + "' may write the same elements";
    for (const Stmt &f : fills) {
        const ir::Region *dst = destination(f);
        if (!dst || dst->coversBuffer()) return "";
        std::optional<std::vector<std::pair<int64_t, int64_t>>> box = constantBox(*dst);
        if (!box) return "the region of '" + tile->name + "' it fills, at " + dst->span.lineColumn() + ", is not the whole tile and not at a constant place";
        filled += elementCount(*box);
    }
    std::optional<std::vector<int64_t>> shape = tile->constShape();
    int64_t all = 1;
    for (int64_t e : shape.value_or(std::vector<int64_t>{})) all *= e;
    if (shape && filled == all) return "";
    return "the loop's loads fill " + std::to_string(filled) + " of the " + std::to_string(all) + " elements of '" + tile->name + "'";
}

} // namespace

std::optional<ir::Writer> sourceWrittenBy(const Stmt &producer, const Stmt &other) {
    std::set<const ir::BufferNode *> sources;
    ir::forEachEffect(producer, [&](const Stmt &, const ir::Effects &fx) {
        for (const ir::Access &a : fx.accesses)
            if (a.reads() && a.buffer->scope == ir::MemScope::Global) sources.insert(&ir::storageRoot(*a.buffer));
    });
    std::optional<ir::Writer> writer;
    ir::forEachEffect(other, [&](const Stmt &t, const ir::Effects &fx) {
        for (const ir::Access &a : fx.accesses)
            if (!writer && a.writes() && sources.count(&ir::storageRoot(*a.buffer))) writer = ir::Writer{a.buffer->name, t->span};
    });
    return writer;
}

// The condition of a predicated statement (an `if` without `else`
// around it, as predicate-pipeline-branches makes them); null for another.
const ir::ExprNode *guardOf(const Stmt &s) {
    const ir::IfThenElse *branch = ir::as<ir::IfThenElse>(s);
    return branch && !branch->elseBody ? branch->cond.get() : nullptr;
}

std::string tileRewrittenInLoop(const Stmt &producer, const std::vector<Stmt> &others, const ir::For &loop) {
    const Stmt &op = ir::unguarded(producer);
    const ir::Buffer &tile = producedTile(op);
    const ir::ExprNode *guard = guardOf(producer);
    std::vector<Stmt> fills{op};
    for (const Stmt &o : others) {
        if (o.get() == producer.get()) continue;
        if (std::optional<ir::Writer> writer = sourceWrittenBy(op, o))
            return "what it loads from '" + writer->buffer + "' is written at " + writer->at.lineColumn() + " in the pipelined loop at " +
                   loop.span.lineColumn() + ": a load issued ahead would read it before that write, so the copy runs in order";
        // Another load into other elements of the tile is issued ahead with it
        // (into the same version) -- under the same condition, or the
        // version holds only part of the tile where one holds and not the other.
        if (fillApart(op, ir::unguarded(o))) {
            if (guardOf(o) != guard)
                return "its tile '" + tile->name + "' is also filled at " + o->span.lineColumn() + " under another condition: a version loaded ahead "
                       "would hold only part of an iteration's tile, so the copy runs in order";
            fills.push_back(ir::unguarded(o));
            continue;
        }
        Uses u = usesOf(o, tile.get());
        if (!u.writes.empty())
            return "its tile '" + tile->name + "' is also written at " + u.writes.front().lineColumn() + " in the pipelined loop at " + loop.span.lineColumn() +
                   ": a load issued ahead would overwrite it while an iteration still uses it, so the copy runs in order";
        // A load made only where its condition holds: an iteration where it
        // does not may not read the tile, whose version then holds an older
        // iteration's, not the previous one's.
        if (guard && !u.all.empty() && guardOf(o) != guard)
            return "it loads only where its condition holds, and '" + tile->name + "' is used at " + u.all.front().lineColumn() +
                   " whatever the condition: there a version loaded ahead would hold an older iteration's tile, not the previous one's, so the "
                   "copy runs in order";
    }
    if (std::string part = partlyFilled(fills, tile); !part.empty())
        return part + ": a load issued ahead fills its own version of the tile, where the elements no load of the iteration writes are not the previous "
                      "iteration's, so the copy runs in order";
    return "";
}

std::optional<VersionedBuffers> versionBuffers(const Stmt &kernelBody, const ir::For &loop, const std::vector<Stmt> &producers,
                                               const std::vector<Stmt> &consumers, int64_t versions, const std::string &producerName,
                                               DiagnosticEngine &diags, const SharedTiles &shared) {
    VersionedBuffers out;
    for (const Stmt &p : producers) {
        const Stmt &op = ir::unguarded(p);
        const ir::Buffer &b = producedTile(op);
        if (out.replacement.count(b.get())) continue;
        for (const Stmt &c : consumers) {
            Uses u = usesOf(c, b.get());
            if (!u.writes.empty()) {
                Diagnostic d{Severity::Error, u.writes.front(), "shared buffer '" + b->name + "' is loaded ahead by the " + producerName + " at " +
                                                                    op->span.lineColumn() + ", so no other statement of the loop may write it", {}, {}};
                d.note(op->span, "the " + producerName);
                diags.report(std::move(d));
                return std::nullopt;
            }
        }
        auto sharedTile = shared.find(b.get());
        std::vector<const ir::StmtNode *> loops{&loop};
        if (sharedTile != shared.end()) loops = sharedTile->second.loops;
        Uses outside = usesOf(kernelBody, b.get(), loops);
        if (!outside.all.empty()) {
            const bool several = loops.size() > 1;
            Diagnostic d{Severity::Error, outside.all.front(), "shared buffer '" + b->name + "' is loaded ahead by the " + producerName + " at " +
                                                                    op->span.lineColumn() + " into " + std::to_string(versions) +
                                                                    " versions, so it can only be used inside " +
                                                                    (several ? "the pipelined loops that load it" : "that loop"),
                         {}, {}};
            d.note(op->span, "the " + producerName);
            diags.report(std::move(d));
            return std::nullopt;
        }
        ir::Buffer v = sharedTile != shared.end() ? sharedTile->second.versioned : versionedBuffer(b, versions);
        out.replacement[b.get()] = v;
        out.order.push_back(v);
    }
    return out;
}

Stmt selectVersion(const VersionedBuffers &buffers, const Expr &version, const Stmt &s) { return Versioner(buffers.replacement, version).mutate(s); }

Stmt replaceAllocations(const Stmt &body, const std::map<const ir::BufferNode *, ir::Buffer> &replacement) {
    return AllocationReplacer(replacement).mutate(body);
}

bool usesBuffer(const Stmt &s, const ir::BufferNode *b) { return !usesOf(s, b).all.empty(); }

std::optional<SourceRange> useOutside(const Stmt &kernelBody, const ir::BufferNode *b, const ir::StmtNode *loop) {
    Uses u = usesOf(kernelBody, b, {loop});
    if (u.all.empty()) return std::nullopt;
    return u.all.front();
}

ir::Buffer versionedBuffer(const ir::Buffer &b, int64_t versions) {
    auto v = std::make_shared<ir::BufferNode>(*b);
    v->shape.insert(v->shape.begin(), ir::intImm(versions));
    v->pipelineVersions = versions;
    return v;
}

const ir::Buffer &producedTile(const Stmt &producer) {
    if (const ir::Im2Col *g = ir::as<ir::Im2Col>(producer)) return g->dst.buffer;
    if (ir::as<ir::For>(producer)) {   // a gather: its one store's
        const ir::Store *store = nullptr;
        ir::forEachStmt(producer, [&](const Stmt &s) {
            if (!store) store = ir::as<ir::Store>(s);
        });
        TILET_ASSERT(store, "a gather loop without a store");
        return store->buffer;
    }
    return ir::as<ir::Copy>(producer)->dst.buffer;
}

std::pair<size_t, SourceRange> wgmmaGroupRetired(const std::vector<Stmt> &consumers, size_t from) {
    int64_t newer = 0;   // groups surely committed after the gemm's
    for (size_t j = from; j < consumers.size(); ++j) {
        std::optional<SourceRange> at;
        ir::forEachStmt(consumers[j], [&](const Stmt &s) {
            if (at) return;
            if (const ir::Gemm *g = ir::as<ir::Gemm>(s); g && (g->explicitInst == ir::GemmInst::WGMMA || g->inst == ir::GemmInst::WGMMA)) {
                ++newer;
                if (g->wgWait >= 0 && newer >= g->wgWait) at = s->span;
            } else if (const ir::WgmmaSync *w = ir::as<ir::WgmmaSync>(s); w && w->sync == ir::WgmmaSyncKind::Wait && newer >= w->pending) {
                at = s->span;
            }
        });
        if (at) return {j, *at};
    }
    return {consumers.size(), SourceRange{}};
}

std::string wgmmaGroupPastIteration(const std::vector<Stmt> &producers, const std::vector<Stmt> &consumers) {
    std::string late;
    for (size_t i = 0; i < consumers.size() && late.empty(); ++i) {
        ir::forEachStmt(consumers[i], [&](const Stmt &x) {
            const ir::Gemm *g = ir::as<ir::Gemm>(x);
            // (Once instructions are selected, only a wgmma leaves a group in flight.)
            bool mayBeWgmma = g && (g->inst == ir::GemmInst::Unselected || g->inst == ir::GemmInst::WGMMA);
            if (!mayBeWgmma || g->wgWait == 0 || !late.empty() || wgmmaGroupRetired(consumers, i + 1).first < consumers.size()) return;
            for (const Stmt &p : producers)
                if (producedTile(p) == g->a.buffer || producedTile(p) == g->b.buffer)
                    late = "the gemm at " + x->span.lineColumn() + " (wg_wait = " + std::to_string(g->wgWait) +
                           ") leaves the wgmma group reading its pipelined tiles in flight past the end of the iteration, where their stage is "
                           "handed back to the loads";
        });
    }
    return late;
}

} // namespace tilet
