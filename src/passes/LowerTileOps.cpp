// LowerTileOps.cpp -- see LowerTileOps.h.
//
// A copy between regions of the same tile shape becomes
//   for i, j in parallel(tile) { dst[dmin + (.., i, .., j)] = src[smin + (.., i, .., j)] }
// where the loop runs over the non-unit dimensions, matched in order on both
// sides (unit dimensions stay at their start index).
#include "passes/LowerTileOps.h"

#include "ir/BufferEdits.h"
#include "ir/Printer.h"
#include "ir/Visitor.h"
#include "passes/ParallelNest.h"
#include "passes/RoleMutator.h"
#include "support/InternalError.h"

#include <algorithm>
#include <functional>

namespace tilet {

namespace {

std::vector<int64_t> loopShape(const ir::Region &r) {
    std::vector<int64_t> s = r.tileShape();
    if (s.empty()) s.push_back(1);   // a single element still runs on one thread
    return s;
}

std::vector<ir::Expr> tileVars(const std::vector<ir::Expr> &vars, const ir::Region &r) {
    return r.tileShape().empty() ? std::vector<ir::Expr>{} : vars;
}

// A fragment region that needs the loop over the whole fragment: a part of
// it that is more than one element wide in some dimension but not the whole
// of it (a fragment inside a parallel loop is indexed by a loop variable
// running over its whole dimension, or by something the loop does not
// change). Unit dimensions of the region (a row `x[k, 0:N]`, or a whole
// fragment with a dimension of 1) are indexed by their position directly.
bool needsWholeFragmentLoop(const ir::Region &r) {
    if (r.buffer->scope != ir::MemScope::Fragment) return false;
    std::vector<int64_t> shape = *r.buffer->constShape();
    for (size_t d = 0; d < shape.size(); ++d) {
        if (r.extents[d] != 1 && (ir::constInt(r.mins[d]) != 0 || r.extents[d] != shape[d])) return true;
    }
    return false;
}

// The element loop of a tile operation. Over a local buffer (a whole copy in
// each thread) every thread runs every element: nested unrolled loops, the
// innermost vectorized where its accesses allow (vectorize-accesses); else
// a parallel nest whose iterations layout inference spreads over the threads.
ir::Stmt elementNest(const std::vector<int64_t> &shape, SourceRange span, std::initializer_list<const ir::Region *> regions,
                     const std::function<ir::Stmt(const std::vector<ir::Expr> &)> &makeBody) {
    bool perThread = false;
    for (const ir::Region *r : regions) perThread = perThread || (r && r->buffer->scope == ir::MemScope::Local);
    if (!perThread) return makeParallelNest(shape, span, makeBody);
    static const char *names[] = {"i", "j", "k", "l", "m", "n"};
    std::vector<ir::VarRef> vars;
    std::vector<ir::Expr> exprs;
    for (size_t d = 0; d < shape.size(); ++d) {
        vars.push_back(ir::makeVar(d < 6 ? names[d] : "d" + std::to_string(d), DType::Int32, span));
        exprs.push_back(vars.back());
    }
    ir::Stmt body = makeBody(exprs);
    for (size_t d = shape.size(); d-- > 0;) {
        bool innermost = d + 1 == shape.size();
        auto loop = std::make_shared<ir::For>(vars[d], ir::intImm(0), ir::intImm(shape[d]),
                                              innermost && shape[d] > 1 && shape[d] <= 64 ? ir::ForKind::Vectorized : ir::ForKind::Unrolled,
                                              body, span);
        loop->threadLocal = true;
        body = loop;
    }
    return body;
}

// An element-wise loop over `frag`, a part of a fragment: the nest runs over
// the whole fragment, so that its accesses stay plain loop variables (which
// layout inference needs), and a guard keeps the elements of the part.
// `body(fragIndices, tileVars)` gets the fragment's indices and the tile
// coordinate (one per non-unit dimension of the part) for the other operand.
ir::Stmt fragmentPartLoop(const ir::Region &frag, SourceRange span,
                          const std::function<ir::Stmt(const std::vector<ir::Expr> &, const std::vector<ir::Expr> &)> &body) {
    std::vector<int64_t> shape = *frag.buffer->constShape();
    return makeParallelNest(shape, span, [&](const std::vector<ir::Expr> &vars) {
        ir::Expr guard;
        std::vector<ir::Expr> tile;
        for (size_t d = 0; d < shape.size(); ++d) {
            bool whole = ir::constInt(frag.mins[d]) == 0 && frag.extents[d] == shape[d];
            if (!whole) {
                guard = ir::logicalAnd(guard, ir::ge(vars[d], frag.mins[d]));
                guard = ir::logicalAnd(guard, ir::lt(vars[d], ir::add(frag.mins[d], ir::intImm(frag.extents[d]))));
            }
            if (frag.extents[d] != 1) tile.push_back(ir::sub(vars[d], frag.mins[d]));
        }
        ir::Stmt inner = body(vars, tile);
        return guard ? std::make_shared<ir::IfThenElse>(guard, inner, nullptr, span) : inner;
    });
}

class Lowerer : public RoleMutator {
public:
    Lowerer(const ir::Kernel &k, PassContext &ctx) : RoleMutator(k), ctx_(ctx) {}
    using ir::Mutator::mutate;
    const ir::BufferEdits &decisions() const { return edits_; }

protected:
    ir::Stmt mutateCopy(const ir::Stmt &self, const ir::Copy &c) override {
        if (c.inst == ir::CopyInst::LDSM) return self;   // lower-gemms, with the operand's registers
        if (c.inst == ir::CopyInst::TMemLoad || c.inst == ir::CopyInst::TMemStore) return self;   // lower-tensor-memory, with the fragment's layout
        if (c.inst == ir::CopyInst::STSM) return self;   // lower-fragment-stores, with the accumulator's registers
        if (c.inst == ir::CopyInst::PackedBytes) return self;   // lower-packed-copies, with the fragment's layout
        TILET_ASSERT(c.inst == ir::CopyInst::Normal || c.inst == ir::CopyInst::CPAsync,
                     "copy with " << ir::copyInstName(c.inst) << " reached lower-tile-ops");
        // A cp.async copy is an element loop too; vectorize-accesses issues its wide moves as cp.async.
        ir::StoreOp op = c.inst == ir::CopyInst::CPAsync ? ir::StoreOp::AsyncCopy : ir::StoreOp::Assign;
        if (c.dstBlock) return remoteCopy(c);
        if (isSubByte(c.src.buffer->dtype)) {
            // Packed data (int4, f4e2m1, ...) is copied as the bytes that hold
            // it: the element loop below over uint8 views of both buffers
            // (global or shared: sema checks), which vectorizes like any byte copy.
            ir::Buffer srcBytes = ir::bytesView(c.src.buffer), dstBytes = ir::bytesView(c.dst.buffer);
            auto bytes = std::make_shared<ir::Copy>(c);
            bytes->src = ir::bytesRegion(c.src, srcBytes);
            bytes->dst = ir::bytesRegion(c.dst, dstBytes);
            ir::Stmt loop = mutateCopy(bytes, *bytes);
            return std::make_shared<ir::Allocate>(srcBytes, std::make_shared<ir::Allocate>(dstBytes, loop, c.span), c.span);
        }
        const ir::Region src = c.src, dst = c.dst;
        if (needsWholeFragmentLoop(src) || needsWholeFragmentLoop(dst)) {
            bool fromFragment = needsWholeFragmentLoop(src);
            const ir::Region &frag = fromFragment ? src : dst, &other = fromFragment ? dst : src;
            return fragmentPartLoop(frag, c.span, [&](const std::vector<ir::Expr> &fragIdx, const std::vector<ir::Expr> &tile) {
                std::vector<ir::Expr> otherIdx = ir::regionIndices(other, tileVars(tile, other));
                const std::vector<ir::Expr> &s = fromFragment ? fragIdx : otherIdx, &d = fromFragment ? otherIdx : fragIdx;
                ir::Expr value = std::make_shared<ir::Load>(src.buffer, s, c.span);
                return std::make_shared<ir::Store>(dst.buffer, d, ir::cast(dst.buffer->dtype, value), ir::StoreOp::Assign, c.span);
            });
        }
        return elementNest(loopShape(dst), c.span, {&src, &dst}, [&](const std::vector<ir::Expr> &vars) {
            ir::Expr value = std::make_shared<ir::Load>(src.buffer, ir::regionIndices(src, tileVars(vars, src)), c.span);
            return std::make_shared<ir::Store>(dst.buffer, ir::regionIndices(dst, tileVars(vars, dst)), ir::cast(dst.buffer->dtype, value), op,
                                               c.span);
        });
    }

    ir::Stmt mutateFill(const ir::Stmt &, const ir::Fill &f) override {
        const ir::Region dst = f.dst;
        if (needsWholeFragmentLoop(dst)) {
            return fragmentPartLoop(dst, f.span, [&](const std::vector<ir::Expr> &idx, const std::vector<ir::Expr> &) {
                return std::make_shared<ir::Store>(dst.buffer, idx, f.value, ir::StoreOp::Assign, f.span);
            });
        }
        return elementNest(loopShape(dst), f.span, {&dst}, [&](const std::vector<ir::Expr> &vars) {
            return std::make_shared<ir::Store>(dst.buffer, ir::regionIndices(dst, tileVars(vars, dst)), f.value, ir::StoreOp::Assign, f.span);
        });
    }

    ir::Stmt mutateAtomicAdd(const ir::Stmt &, const ir::AtomicAdd &a) override {
        const ir::Region dst = a.dst;
        if (a.src && needsWholeFragmentLoop(*a.src)) {
            const ir::Region src = *a.src;
            return fragmentPartLoop(src, a.span, [&](const std::vector<ir::Expr> &idx, const std::vector<ir::Expr> &tile) {
                ir::Expr value = ir::cast(dst.buffer->dtype, std::make_shared<ir::Load>(src.buffer, idx, a.span));
                return std::make_shared<ir::Store>(dst.buffer, ir::regionIndices(dst, tileVars(tile, dst)), value, ir::StoreOp::AtomicAdd, a.span, a.order);
            });
        }
        return elementNest(loopShape(dst), a.span, {&dst, a.src ? &*a.src : nullptr}, [&](const std::vector<ir::Expr> &vars) {
            ir::Expr value = a.value;
            if (a.src) value = ir::cast(dst.buffer->dtype, std::make_shared<ir::Load>(a.src->buffer, ir::regionIndices(*a.src, tileVars(vars, *a.src)), a.span));
            return std::make_shared<ir::Store>(dst.buffer, ir::regionIndices(dst, tileVars(vars, dst)), value, ir::StoreOp::AtomicAdd, a.span, a.order);
        });
    }

    // im2col: a parallel nest over the tile's rows and its columns in runs of
    // `run` channels of one kernel tap (C is a multiple of `run`), so that
    // each run is contiguous in the image and in the tile: infer-layouts gives
    // a thread whole runs, and vectorize-accesses moves a run with one
    // (cp.async) access. Elements in the padding, or past the im2col matrix,
    // are zeros: the select's condition is the same for a whole run.
    ir::Stmt mutateIm2Col(const ir::Stmt &, const ir::Im2Col &g) override {
        TILET_ASSERT(g.inst == ir::CopyInst::Normal || g.inst == ir::CopyInst::CPAsync,
                     "im2col with " << ir::copyInstName(g.inst) << " reached lower-tile-ops");
        std::vector<int64_t> image = *g.image->constShape(), tile = g.dst.tileShape();
        const int64_t N = image[0], H = image[1], W = image[2], C = image[3], rows = tile[0], cols = tile[1];
        const int64_t OH = g.outHeight(), OW = g.outWidth(), K = g.kernel;
        int64_t run = 128 / dtypeBits(g.image->dtype);   // 16 bytes
        while (run > 1 && (C % run != 0 || cols % run != 0)) run /= 2;
        ir::StoreOp op = g.inst == ir::CopyInst::CPAsync ? ir::StoreOp::AsyncCopy : ir::StoreOp::Assign;
        auto c64 = [](int64_t v) { return ir::intImm(v); };
        return makeParallelNest({rows, cols / run, run}, g.span, [&](const std::vector<ir::Expr> &vars) {
            const ir::Expr &i = vars[0], &r = vars[1], &lane = vars[2];
            ir::Expr m = ir::add(ir::mul(g.nhwStep, c64(rows)), i);                     // output pixel (n, oh, ow)
            ir::Expr k = ir::add(ir::mul(g.cStep, c64(cols)), ir::mul(r, c64(run)));    // first column of the run: (kh, kw, c)
            ir::Expr n = ir::div(m, c64(OH * OW)), oh = ir::mod(ir::div(m, c64(OW)), c64(OH)), ow = ir::mod(m, c64(OW));
            ir::Expr kh = ir::div(k, c64(K * C)), kw = ir::mod(ir::div(k, c64(C)), c64(K)), ch = ir::mod(k, c64(C));
            ir::Expr h = ir::sub(ir::add(ir::mul(oh, c64(g.stride)), ir::mul(kh, c64(g.dilation))), c64(g.pad));
            ir::Expr w = ir::sub(ir::add(ir::mul(ow, c64(g.stride)), ir::mul(kw, c64(g.dilation))), c64(g.pad));
            ir::Expr inside = ir::logicalAnd(ir::lt(n, c64(N)), ir::lt(k, c64(K * K * C)));   // n < N: m inside the matrix
            inside = ir::logicalAnd(inside, ir::logicalAnd(ir::ge(h, c64(0)), ir::lt(h, c64(H))));
            inside = ir::logicalAnd(inside, ir::logicalAnd(ir::ge(w, c64(0)), ir::lt(w, c64(W))));
            DType t = g.image->dtype;
            ir::Expr pixel = std::make_shared<ir::Load>(g.image, std::vector<ir::Expr>{n, h, w, ir::add(ch, lane)}, g.span);
            ir::Expr zero = isFloat(t) ? ir::floatImm(0, t) : ir::intImm(0, t);
            ir::Expr value = std::make_shared<ir::Select>(t, inside, pixel, zero, g.span);
            std::vector<ir::Expr> at = ir::regionIndices(g.dst, {i, ir::add(ir::mul(r, c64(run)), lane)});
            return std::make_shared<ir::Store>(g.dst.buffer, at, value, op, g.span);
        });
    }

    // cumsum (TileLang's T.cumsum): each line along `dim` is one thread's
    // serial scan -- of the block or of the role that runs it, lines dealt
    // out in rounds of its threads; a local buffer's lines all the thread's own.
    ir::Stmt mutateCumsum(const ir::Stmt &, const ir::Cumsum &c) override {
        const ir::Region &src = c.src, &dst = c.dst;
        const SourceRange span = c.span;
        // The regions' dimensions, counted from the last: a pipelined loop may
        // have given either a leading version dimension (extent 1) of its own.
        const int64_t rank = static_cast<int64_t>(std::min(src.extents.size(), dst.extents.size()));
        const int64_t dim = rank - c.dimFromEnd;   // among the last `rank`
        const int64_t n = src.extents[src.extents.size() - c.dimFromEnd];
        const DType t = src.buffer->dtype;
        // One thread's scan of the line through `coords` (dimension `dim` left out).
        std::vector<ir::VarRef> coords;
        for (int64_t d = 0; d < rank; ++d) coords.push_back(d == dim ? nullptr : ir::makeVar("c" + std::to_string(d), DType::Int32, span));
        ir::VarRef k = ir::makeVar("k", DType::Int32, span);
        ir::Buffer acc = ir::makeBuffer(src.buffer->name + "_running", t, {}, ir::MemScope::Local, span);
        ir::Expr at = c.reverse ? ir::sub(ir::intImm(n - 1), k) : ir::Expr(k);
        auto indices = [&](const ir::Region &r) {
            const int64_t lead = static_cast<int64_t>(r.mins.size()) - rank;
            std::vector<ir::Expr> idx(r.mins.begin(), r.mins.begin() + lead);
            for (int64_t d = 0; d < rank; ++d) idx.push_back(ir::add(r.mins[lead + d], d == dim ? at : ir::Expr(coords[d])));
            return idx;
        };
        ir::Expr zero = isFloat(t) ? ir::floatImm(0, t) : ir::intImm(0, t);
        auto accLoad = std::make_shared<ir::Load>(acc, std::vector<ir::Expr>{}, span);
        // Narrow floats add in f32 (docs/language.md section 7); the running sum
        // is rounded to the source's dtype at each step, then converted to the destination's.
        auto as = [](DType type, ir::Expr e) { return e->dtype == type ? e : ir::cast(type, std::move(e)); };
        ir::Stmt step = ir::seq(
            {std::make_shared<ir::Store>(acc, std::vector<ir::Expr>{}, as(t, ir::add(accLoad, std::make_shared<ir::Load>(src.buffer, indices(src), span))),
                                         ir::StoreOp::Assign, span),
             std::make_shared<ir::Store>(dst.buffer, indices(dst), as(dst.buffer->dtype, accLoad), ir::StoreOp::Assign, span)});
        ir::Stmt line = std::make_shared<ir::Allocate>(
            acc, ir::seq({std::make_shared<ir::Store>(acc, std::vector<ir::Expr>{}, zero, ir::StoreOp::Assign, span),
                          std::make_shared<ir::For>(k, ir::intImm(0), ir::intImm(n), ir::ForKind::Serial, step, span)}),
            span);
        // Line l's coordinates, the last dimension fastest.
        ir::VarRef l = ir::makeVar("line", DType::Int32, span);
        int64_t lines = 1;
        for (int64_t d = rank; d-- > 0;) {
            if (d == dim) continue;
            const int64_t extent = src.extents[src.extents.size() - rank + d];
            ir::Expr coord = extent == 1 ? ir::intImm(0) : ir::mod(ir::div(l, ir::intImm(lines)), ir::intImm(extent));
            line = std::make_shared<ir::LetStmt>(coords[d], coord, line, span);
            lines *= extent;
        }
        if (src.buffer->scope == ir::MemScope::Local) return std::make_shared<ir::For>(l, ir::intImm(0), ir::intImm(lines), ir::ForKind::Serial, line, span);
        const int64_t threads = roleThreads();
        ir::VarRef round = ir::makeVar("round", DType::Int32, span);
        const int64_t rounds = (lines + threads - 1) / threads;
        ir::Expr mine = rounds == 1 ? roleThread() : ir::add(ir::mul(round, ir::intImm(threads)), roleThread());
        line = std::make_shared<ir::IfThenElse>(ir::lt(l, ir::intImm(lines)), line, nullptr, span);
        line = std::make_shared<ir::LetStmt>(l, mine, line, span);
        if (rounds == 1) return line;
        return std::make_shared<ir::For>(round, ir::intImm(0), ir::intImm(rounds), ir::ForKind::Serial, line, span);
    }

    // tcgen05_sf_warp_transpose: for each chunk, lane l reads the words
    // 32 j + l (j < 4: a row of 32 words per j, no bank conflict) into
    // registers; the warp meets once (__syncwarp); lane l writes each chunk's
    // four to 4 l .. 4 l + 3 with one 16-byte store (512 bytes in four
    // conflict-free waves).
    ir::Stmt mutateScaleTranspose(const ir::Stmt &self, const ir::ScaleTranspose &t) override {
        if (roleThreads() != 32) {
            ctx_.diags.error(t.span, "tcgen05_sf_warp_transpose is one warp's work; " + std::to_string(roleThreads()) +
                                         " threads run it here (write it in a branch of one warp, such as `else if (tx < 96)`)");
            return self;
        }
        SourceRange span = t.span;
        ir::Expr lane = ir::mod(ir::threadIdx(), ir::intImm(32));
        int64_t regionWords = 1;
        for (int64_t e : t.region.extents) regionWords *= e;
        int64_t chunks = regionWords / ir::kTcgen05CopyWords;
        // Sema: the region is one run of storage of rows of a multiple of 128 words.
        auto at = [&](int64_t chunk, const ir::Expr &word) {
            std::vector<ir::Expr> idx = t.region.indicesAt(chunk * ir::kTcgen05CopyWords);
            idx.back() = ir::add(idx.back(), word);
            return idx;
        };
        ir::Buffer words = ir::makeBuffer("sf_words", DType::UInt32, {ir::intImm(4 * chunks)}, ir::MemScope::Local, span);
        std::vector<ir::Stmt> out;
        for (int64_t c = 0; c < chunks; ++c)
            for (int64_t j = 0; j < 4; ++j) {
                ir::Expr load = std::make_shared<ir::Load>(t.region.buffer, at(c, ir::add(ir::intImm(32 * j), lane)), span);
                out.push_back(std::make_shared<ir::Store>(words, std::vector<ir::Expr>{ir::intImm(4 * c + j)}, load, ir::StoreOp::Assign, span));
            }
        out.push_back(std::make_shared<ir::SyncThreads>(span, -1));
        for (int64_t c = 0; c < chunks; ++c)
            out.push_back(std::make_shared<ir::VectorCopy>(t.region.buffer, at(c, ir::mul(lane, ir::intImm(4))), words,
                                                           std::vector<ir::Expr>{ir::intImm(4 * c)}, 16, span));
        Decision d;
        d.where = span;
        d.op = "tcgen05_sf_warp_transpose of '" + t.region.buffer->name + "'";
        d.choice = std::to_string(chunks) + " chunk" + (chunks == 1 ? "" : "s") + " of " + std::to_string(ir::kTcgen05CopyWords) +
                   " words: per lane 4 loads a chunk, one __syncwarp, one 16-byte store a chunk";
        d.why = "lane l moves words 32j + l to 4l + j, so that tcgen05.cp 32x128b reads row l as the words of rows l, l + 32, l + 64, l + 96";
        ctx_.explain.record(std::move(d));
        return std::make_shared<ir::Allocate>(words, ir::seq(out), span);
    }

    // mbarriers are initialised where they are allocated, before any thread
    // uses them; ones other blocks of the cluster use, before any block does.
    // The barriers allocated in one run of allocations and bindings (no
    // statement between them) are initialised together, at the first: one
    // fence and one block (or cluster) barrier for all.
    ir::Stmt mutateAllocate(const ir::Stmt &self, const ir::Allocate &a) override {
        if (a.buffer->scope != ir::MemScope::Barrier) return ir::Mutator::mutateAllocate(self, a);
        std::vector<const ir::Allocate *> barriers;
        std::vector<const ir::StmtNode *> others;   // the allocations and bindings between them, outermost first
        ir::Stmt s = self;
        for (;;) {
            if (const ir::Allocate *in = ir::as<ir::Allocate>(s)) {
                if (in->buffer->scope == ir::MemScope::Barrier) barriers.push_back(in);
                else others.push_back(in);
                s = in->body;
            } else if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
                others.push_back(l);
                s = l->body;
            } else {
                break;
            }
        }
        ir::Stmt body = mutate(s);
        for (auto o = others.rbegin(); o != others.rend(); ++o) {
            if ((*o)->kind == ir::StmtKind::LetStmt) {
                const auto *l = static_cast<const ir::LetStmt *>(*o);
                body = std::make_shared<ir::LetStmt>(l->var, mutate(l->value), body, l->span);
            } else {
                body = std::make_shared<ir::Allocate>(static_cast<const ir::Allocate *>(*o)->buffer, body, (*o)->span);
            }
        }
        // After the body: a copy_cluster in it may have found a barrier to be cluster-scoped.
        bool clusterScope = false;
        std::vector<ir::Buffer> buffers;
        for (const ir::Allocate *b : barriers) {
            clusterScope = clusterScope || edits_.current(b->buffer).clusterScope;
            buffers.push_back(b->buffer);
        }
        ir::Stmt visible = clusterScope ? ir::Stmt(std::make_shared<ir::ClusterSync>(a.span)) : std::make_shared<ir::SyncThreads>(a.span);
        // Thread 0 initialises (the first thread of every role, and the one that issues TMA).
        ir::Stmt init = std::make_shared<ir::IfThenElse>(ir::isThread(0), std::make_shared<ir::BarrierInit>(std::move(buffers), a.span), nullptr, a.span);
        body = ir::seq({init, visible, body});
        for (auto b = barriers.rbegin(); b != barriers.rend(); ++b) body = std::make_shared<ir::Allocate>((*b)->buffer, body, (*b)->span);
        return body;
    }

    // Barriers another block arrives on (barrier_arrive(b, rank), the CTA
    // pair's commits to both blocks) complete at cluster scope: each block
    // initialises its own before a cluster barrier, so no arrival comes first.
    ir::Stmt mutateBarrierArrive(const ir::Stmt &self, const ir::BarrierArrive &a) override {
        if (a.remoteRank) edits_.edit(a.barrier).clusterScope = true;
        return self;
    }
    ir::Stmt mutateTcgen05Commit(const ir::Stmt &self, const ir::Tcgen05Commit &c) override {
        if (c.bothBlocks) edits_.edit(c.barrier).clusterScope = true;
        return self;
    }

    // FMA gemms: a parallel loop over C, each element summing over K.
    ir::Stmt mutateGemm(const ir::Stmt &self, const ir::Gemm &g) override {
        if (g.use2cta && g.mbar) edits_.edit(g.mbar).clusterScope = true;
        if (g.inst != ir::GemmInst::FMA) return self;
        const ir::Region a = g.a, b = g.b, c = g.c;
        std::vector<int64_t> shape = c.tileShape();
        int64_t K = g.transposeA ? a.tileShape()[0] : a.tileShape()[1];
        DType acc = c.buffer->dtype;
        return makeParallelNest(shape, g.span, [&](const std::vector<ir::Expr> &vars) {
            const ir::Expr &i = vars[0], &j = vars[1];
            std::vector<ir::Expr> cIdx = ir::regionIndices(c, vars);
            ir::VarRef k = ir::makeVar("k");
            ir::Expr aVal = std::make_shared<ir::Load>(a.buffer, ir::regionIndices(a, g.transposeA ? std::vector<ir::Expr>{k, i} : std::vector<ir::Expr>{i, k}), g.span);
            ir::Expr bVal = std::make_shared<ir::Load>(b.buffer, ir::regionIndices(b, g.transposeB ? std::vector<ir::Expr>{j, k} : std::vector<ir::Expr>{k, j}), g.span);
            ir::Expr sum = ir::add(std::make_shared<ir::Load>(c.buffer, cIdx, g.span), ir::mul(ir::cast(acc, aVal), ir::cast(acc, bVal)));
            ir::Stmt update = std::make_shared<ir::Store>(c.buffer, cIdx, ir::cast(acc, sum), ir::StoreOp::Assign, g.span);
            std::vector<ir::Stmt> body;
            if (g.clearAccum && ir::constInt(g.clearAccum) != 0) {
                ir::Expr zero = isFloat(acc) ? ir::floatImm(0, acc) : ir::intImm(0, acc);
                ir::Stmt clear = std::make_shared<ir::Store>(c.buffer, cIdx, zero, ir::StoreOp::Assign, g.span);
                body.push_back(ir::constInt(g.clearAccum) ? clear : std::make_shared<ir::IfThenElse>(g.clearAccum, clear, nullptr, g.span));
            }
            body.push_back(std::make_shared<ir::For>(k, ir::intImm(0), ir::intImm(K), ir::ForKind::Serial, update, g.span));
            return ir::seq(std::move(body));
        });
    }

private:
    // copy_cluster(src, dst, dst_block = r): every thread stores its
    // elements through a view of `dst` in block r (mapa); with a
    // remote_barrier, the block then passes a barrier and one thread arrives
    // on that barrier in block r, whose threads wait on it for the data.
    ir::Stmt remoteCopy(const ir::Copy &c) {
        auto view = std::make_shared<ir::BufferNode>(*c.dst.buffer);
        view->name = c.dst.buffer->name + "_in_block";
        view->remoteOf = c.dst.buffer;
        view->remoteBlock = c.dstBlock;
        ir::Region src = c.src, dst = c.dst;
        dst.buffer = view;
        ir::Stmt stores = makeParallelNest(loopShape(dst), c.span, [&](const std::vector<ir::Expr> &vars) {
            ir::Expr value = std::make_shared<ir::Load>(src.buffer, ir::regionIndices(src, tileVars(vars, src)), c.span);
            return std::make_shared<ir::Store>(view, ir::regionIndices(dst, tileVars(vars, dst)), ir::cast(view->dtype, value), ir::StoreOp::Assign,
                                               c.span);
        });
        std::vector<ir::Stmt> body{stores};
        if (c.remoteBarrier) {
            // Another block arrives on it: it completes at cluster scope.
            edits_.edit(c.remoteBarrier).clusterScope = true;
            ir::Expr first = ir::isThread(0);
            body.push_back(std::make_shared<ir::SyncThreads>(c.span));
            body.push_back(std::make_shared<ir::IfThenElse>(
                first, std::make_shared<ir::BarrierArrive>(c.remoteBarrier, ir::intImm(0), c.dstBlock, c.span), nullptr, c.span));
        }
        Decision d;
        d.where = c.span;
        d.op = "copy_cluster into block " + ir::toString(c.dstBlock);
        d.choice = "SIMT stores through a view of '" + c.dst.buffer->name + "' in that block (mapa)";
        d.why = c.remoteBarrier ? "then a block barrier, and one thread arrives on '" + c.remoteBarrier->name + "' of that block"
                                : "no remote_barrier: the program orders the receiving block's reads (cluster_sync)";
        ctx_.explain.record(std::move(d));
        return std::make_shared<ir::Allocate>(view, ir::seq(std::move(body)), c.span);
    }

    PassContext &ctx_;
    ir::BufferEdits edits_;   // barriers found to complete at cluster scope
};

} // namespace

ir::Kernel lowerTileOps(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Lowerer lowerer(kernel, ctx);
    out.body = lowerer.mutate(kernel.body);
    lowerer.decisions().applyTo(out);
    return out;
}

} // namespace tilet
