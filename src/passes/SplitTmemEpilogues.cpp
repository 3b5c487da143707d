// SplitTmemEpilogues.cpp -- see SplitTmemEpilogues.h.
#include "passes/SplitTmemEpilogues.h"

#include "ir/BufferEdits.h"
#include "ir/Effects.h"
#include "ir/MmaLayout.h"
#include "passes/RoleMutator.h"

#include <map>
#include <set>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

// A chunk keeps at most this many accumulator values per thread: half the
// 255 registers a thread has, the rest for addresses and the store's staging.
constexpr int64_t kChunkRegisters = 128;

// How many statements touch each buffer.
std::map<const ir::BufferNode *, int> usesOf(const Stmt &body) {
    std::map<const ir::BufferNode *, int> uses;
    ir::forEachEffect(body, [&](const Stmt &, const ir::Effects &fx) {
        std::set<const ir::BufferNode *> here;
        for (const ir::Access &a : fx.accesses) here.insert(a.buffer);
        for (const ir::BufferNode *b : here) ++uses[b];
    });
    // A reshaped view's statements touch its fragment too.
    ir::forEachStmt(body, [&](const Stmt &s) {
        const ir::Allocate *a = ir::as<ir::Allocate>(s);
        if (!a || a->buffer->scope != ir::MemScope::Fragment || !a->buffer->viewOf) return;
        const ir::BufferNode *root = a->buffer->viewOf.get();
        while (root->viewOf) root = root->viewOf.get();
        uses[root] += uses[a->buffer.get()] + 1;
    });
    return uses;
}

Expr plus(const Expr &a, const Expr &b) { return ir::constInt(a) == 0 ? b : ir::add(a, b); }

class Splitter : public RoleMutator {
public:
    Splitter(const ir::Kernel &k, PassContext &ctx) : RoleMutator(k), uses_(usesOf(k.body)), ctx_(ctx) {}
    ir::BufferEdits edits;

protected:
    Stmt mutateSeq(const Stmt &self, const ir::Seq &n) override {
        Stmt base = ir::Mutator::mutateSeq(self, n);
        const ir::Seq *q = ir::as<ir::Seq>(base);
        if (!q) return base;
        std::vector<Stmt> out;
        bool changed = false;
        for (size_t i = 0; i < q->stmts.size(); ++i) {
            if (i + 1 < q->stmts.size()) {
                if (Stmt split = pair(q->stmts[i], q->stmts[i + 1])) {
                    out.push_back(split);
                    ++i;
                    changed = true;
                    continue;
                }
            }
            out.push_back(q->stmts[i]);
        }
        return changed ? ir::seq(std::move(out)) : base;
    }

private:
    Stmt pair(const Stmt &first, const Stmt &second) {
        const ir::Copy *load = ir::as<ir::Copy>(first), *store = ir::as<ir::Copy>(second);
        if (!load || !store || load->inst != ir::CopyInst::TMemLoad) return nullptr;
        const ir::Buffer &fragment = load->dst.buffer;
        if (store->src.buffer != fragment || !load->dst.coversBuffer() || !store->src.coversBuffer() || uses_[fragment.get()] != 2) return nullptr;
        // Columns are the last dimension of each region (a tensor-memory tile may have a stage in front).
        std::vector<int64_t> tile = load->src.tileShape();
        if (tile.size() != 2 || load->dst.extents != tile || store->dst.tileShape() != tile || load->src.extents.back() != tile[1] ||
            store->dst.extents.back() != tile[1])
            return nullptr;
        int64_t rows = tile[0], cols = tile[1], threads = roleThreads();
        int64_t perThread = rows * cols / threads;
        if (perThread <= kChunkRegisters) return nullptr;
        int64_t width = cols;
        while (width % 2 == 0 && rows * width / threads > kChunkRegisters) width /= 2;
        if (rows * width / threads > kChunkRegisters || !ir::TmemTiling{rows, width, threads}.fits()) return nullptr;
        int64_t chunks = cols / width;

        ir::BufferNode &narrow = edits.edit(fragment);
        narrow.shape = {ir::intImm(rows), ir::intImm(width)};
        ir::VarRef j = ir::makeVar("chunk");
        Expr offset = ir::mul(j, ir::intImm(width));
        ir::Copy l = *load, s = *store;
        l.src.mins.back() = plus(l.src.mins.back(), offset);
        l.src.extents.back() = width;
        l.dst.extents.back() = width;
        s.src.extents.back() = width;
        s.dst.mins.back() = plus(s.dst.mins.back(), offset);
        s.dst.extents.back() = width;
        Stmt body = ir::seq({std::make_shared<ir::Copy>(l), std::make_shared<ir::Copy>(s)});

        Decision d;
        d.where = load->span;
        d.op = "copy tmem->fragment '" + fragment->name + "'";
        d.choice = std::to_string(chunks) + " column chunks of " + std::to_string(width) + ", each stored by the next copy before the following is read";
        d.why = "'" + fragment->name + "' is used by these two copies only, and as [" + std::to_string(rows) + "x" + std::to_string(cols) + "] on " +
                std::to_string(threads) + " threads it would need " + std::to_string(perThread) + " registers per thread (a thread has at most 255); " +
                "a chunk needs " + std::to_string(rows * width / threads);
        ctx_.explain.record(std::move(d));
        return std::make_shared<ir::For>(j, ir::intImm(0), ir::intImm(chunks), ir::ForKind::Unrolled, body, load->span);
    }

    std::map<const ir::BufferNode *, int> uses_;
    PassContext &ctx_;
};

} // namespace

ir::Kernel splitTmemEpilogues(const ir::Kernel &kernel, PassContext &ctx) {
    Splitter s(kernel, ctx);
    ir::Kernel out = kernel;
    out.body = s.mutate(kernel.body);
    s.edits.applyTo(out);
    return out;
}

} // namespace tilet
