// SemaTileOps.cpp -- checking tile operations (copy, gemm, fill, reduce,
// atomic_add) and synchronisation builtins.
//
// Buffer arguments are regions. `A` is the whole buffer; `A[i, j]` names a
// corner whose extents come from the other operand (TileLang's rule, right-
// aligned so a 2-D tile can be cut from a 3-D tensor); `A[i:i+64, j]` gives
// extents explicitly, points then being extent 1; indices cover leading
// dimensions and the trailing ones not mentioned are whole.
#include "sema/SemaImpl.h"

#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "support/Checked.h"
#include "support/InternalError.h"

#include <algorithm>
#include <cctype>
#include <bit>
#include <tuple>

namespace tilet::sema {

namespace {

std::string shapeStr(const std::vector<int64_t> &s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

bool isRegionExpr(const ast::Expr &e) {
    return e.kind == ast::ExprKind::Name || (e.kind == ast::ExprKind::Index && static_cast<const ast::Index &>(e).base->kind == ast::ExprKind::Name);
}

} // namespace

// ------------------------------------------------------------------ regions

namespace {

// block_rank_in_cluster() replaced by one block's rank.
class RankOfBlock : public ir::Mutator {
public:
    explicit RankOfBlock(int64_t rank) : rank_(rank) {}
    using ir::Mutator::mutate;

protected:
    ir::Expr mutateSpecialReg(const ir::Expr &self, const ir::SpecialReg &n) override {
        return n.special == ir::SpecialKind::ClusterCtaRank ? ir::intImm(rank_) : self;
    }

private:
    int64_t rank_;
};

} // namespace

// A multicast's cluster_mask for each block of the cluster: a constant, or
// computed from block_rank_in_cluster() and constants (so that, in a 2-D
// cluster, A goes to the blocks of a row and B to those of a column).
// Every block a multicast reaches must compute the same mask, so that they
// agree on the block that issues it.
std::optional<std::vector<int64_t>> Checker::checkClusterMasks(const ast::Expr &e) {
    std::optional<ir::Expr> mask = checkInteger(e, "cluster_mask");
    if (!mask) return std::nullopt;
    const int64_t blocks = badCluster_ ? 1 : clusterBlocks();
    std::vector<int64_t> masks;
    for (int64_t r = 0; r < blocks; ++r) {
        std::optional<int64_t> m = ir::constInt(ir::simplify(RankOfBlock(r).mutate(*mask)));
        if (!m) {
            // Only the rank and constants, yet no constant: the arithmetic overflowed.
            bool rankOnly = true;
            ir::forEachExpr(*mask, [&](const ir::Expr &x) {
                const ir::SpecialReg *reg = ir::as<ir::SpecialReg>(x);
                bool leaf = x->kind == ir::ExprKind::Var || x->kind == ir::ExprKind::Load || x->kind == ir::ExprKind::SpecialReg;
                if (leaf && !(reg && reg->special == ir::SpecialKind::ClusterCtaRank)) rankOnly = false;
            });
            diags_.error(e.range, rankOnly ? "cluster_mask overflows for block " + std::to_string(r) + " of the cluster"
                                           : "cluster_mask must be a compile-time constant integer, or computed from block_rank_in_cluster() and constants");
            return std::nullopt;
        }
        std::string whose = ir::constInt(*mask) ? "" : " for block " + std::to_string(r);
        if (*m <= 0 || *m >= (1 << 16)) {
            diags_.error(e.range, "cluster_mask must be a non-zero 16-bit mask of block ranks, found " + std::to_string(*m) + whose);
            return std::nullopt;
        }
        if (!badCluster_ && *m >= (int64_t(1) << blocks)) {
            diags_.error(e.range, "cluster_mask " + std::to_string(*m) + whose + " names block " + std::to_string(std::bit_width(uint64_t(*m)) - 1) +
                                      ", but the cluster has " + std::to_string(blocks) + " block" + (blocks == 1 ? "" : "s"));
            return std::nullopt;
        }
        masks.push_back(*m);
    }
    for (int64_t q = 0; q < blocks; ++q) {
        for (int64_t r = 0; r < blocks; ++r) {
            if (!((masks[q] >> r) & 1) || masks[r] == masks[q]) continue;
            diags_.error(e.range, "cluster_mask is " + std::to_string(masks[q]) + " for block " + std::to_string(q) + ", which multicasts to block " +
                                      std::to_string(r) + ", but " + std::to_string(masks[r]) + " for block " + std::to_string(r) +
                                      ": the blocks a multicast reaches must compute the same mask, so that they agree on the block that issues it");
            return std::nullopt;
        }
    }
    return masks;
}

std::optional<RegionRef> Checker::checkRegionArg(const ast::Expr &e, const char *role) {
    const ast::Name *name = nullptr;
    const ast::Index *index = nullptr;
    if (e.kind == ast::ExprKind::Name) name = &static_cast<const ast::Name &>(e);
    else if (e.kind == ast::ExprKind::Index && static_cast<const ast::Index &>(e).base->kind == ast::ExprKind::Name) {
        index = &static_cast<const ast::Index &>(e);
        name = &static_cast<const ast::Name &>(*index->base);
    }
    if (!name) {
        diags_.error(e.range, std::string("the ") + role + " must be a buffer or a region of one");
        return std::nullopt;
    }
    const Symbol *sym = lookup(name->name);
    if (!sym) {
        reportUnknown(name->name, name->range, "buffer");
        return std::nullopt;
    }
    if (sym->invalid) return std::nullopt;
    if (sym->kind != SymbolKind::Tensor && sym->kind != SymbolKind::Buffer) {
        // (TileLang's T.clear / T.fill also take an alloc_var; here a var is assigned.)
        std::string hint = sym->kind == SymbolKind::Mutable ? "; assign a var directly ('" + name->name + " = 0;')" : "";
        diags_.error(name->range, std::string("the ") + role + " must be a buffer, but '" + name->name + "' is a " + symbolKindName(sym->kind) + hint);
        return std::nullopt;
    }
    RegionRef r;
    r.buffer = sym->buffer;
    r.range = e.range;
    int rank = r.buffer->rank();
    if (!index) {
        r.whole = true;
        std::optional<std::vector<int64_t>> shape = r.buffer->constShape();
        if (!shape) {
            diags_.error(e.range, "'" + name->name + "' has dynamic dimensions; name the tile with indices, e.g. " + name->name + "[i, j]");
            return std::nullopt;
        }
        for (int d = 0; d < rank; ++d) {
            r.mins.push_back(ir::intImm(0));
            r.extents.push_back((*shape)[d]);
        }
        return r;
    }
    if (static_cast<int>(index->items.size()) > rank) {
        diags_.error(e.range, "'" + name->name + "' has " + std::to_string(rank) + " dimension" + (rank == 1 ? "" : "s") +
                                  " but is indexed with " + std::to_string(index->items.size()));
        return std::nullopt;
    }
    bool ok = true, allPoints = true;
    for (const ast::IndexItem &item : index->items) {
        std::optional<ir::Expr> begin = checkInteger(*item.begin, "index");
        if (!begin) { ok = false; continue; }
        r.mins.push_back(*begin);
        if (!item.isSlice()) {
            r.extents.push_back(std::nullopt);
            continue;
        }
        allPoints = false;
        // `a:` ends at the dimension's end.
        size_t d = r.mins.size() - 1;
        std::optional<ir::Expr> end = item.end ? checkInteger(*item.end, "slice end") : std::optional<ir::Expr>(r.buffer->shape[d]);
        if (!end) { ok = false; continue; }
        std::optional<int64_t> lo = ir::constInt(*begin), hi = ir::constInt(*end);
        if (lo && hi && !checkedSub(*hi, *lo)) {
            diags_.error(item.range, "the extent of this slice does not fit in 64 bits");
            ok = false;
            continue;
        }
        // Through the `let` bindings either bound uses (each substitution
        // replaces one level of them; a binding refers only to earlier ones).
        ir::Expr extent = ir::sub(*end, *begin);
        for (size_t level = 0; level < letValues_.size(); ++level) {
            ir::Expr inlined = ir::substitute(extent, letValues_);
            if (inlined == extent) break;
            extent = inlined;
        }
        extent = ir::simplify(extent);
        std::optional<int64_t> n = ir::constInt(extent);
        if (!n) {
            diags_.error(item.range, "the extent of a slice must be a compile-time constant (end - start)");
            ok = false;
            continue;
        }
        if (*n <= 0) {
            diags_.error(item.range, "slice is empty or reversed: extent " + std::to_string(*n));
            ok = false;
            continue;
        }
        r.extents.push_back(*n);
    }
    if (!ok) return std::nullopt;
    // Trailing dimensions not mentioned are whole.
    for (int d = static_cast<int>(index->items.size()); d < rank; ++d) {
        std::optional<int64_t> n = ir::constInt(r.buffer->shape[d]);
        if (!n) {
            diags_.error(e.range, "dimension " + std::to_string(d) + " of '" + name->name + "' is dynamic; give it an index");
            return std::nullopt;
        }
        allPoints = false;
        r.mins.push_back(ir::intImm(0));
        r.extents.push_back(*n);
    }
    if (!allPoints) {
        for (auto &x : r.extents) {
            if (!x) x = 1;
        }
    }
    return r;
}

std::optional<ir::Region> Checker::completeRegion(const RegionRef &r, const std::vector<int64_t> &otherExtents) {
    ir::Region out;
    out.buffer = r.buffer;
    out.mins = r.mins;
    out.span = r.range;
    if (!r.hasUnknownExtents()) {
        for (const auto &e : r.extents) out.extents.push_back(*e);
    } else {
        // Right-align the other operand's tile shape; leading dimensions are 1.
        int rank = static_cast<int>(r.extents.size());
        std::vector<int64_t> tile;
        for (int64_t e : otherExtents) {
            if (e != 1) tile.push_back(e);
        }
        if (static_cast<int>(tile.size()) > rank) {
            diags_.error(r.range, "a " + std::to_string(tile.size()) + "-dimensional tile cannot be placed in '" + r.buffer->name +
                                      "', which has " + std::to_string(rank) + " dimension" + (rank == 1 ? "" : "s"));
            return std::nullopt;
        }
        out.extents.assign(rank, 1);
        for (size_t i = 0; i < tile.size(); ++i) out.extents[rank - tile.size() + i] = tile[i];
    }
    // Constant corners must keep the tile inside a shared or local buffer.
    // A tile of a global tensor may reach past its end, as in TileLang: the
    // lowering checks the bounds (loads outside read zero, stores outside are
    // dropped; TMA fills zeros by itself), and --explain names each check.
    // One that starts past the end, or before the start, is a mistake.
    bool global = out.buffer->scope == ir::MemScope::Global;
    for (size_t d = 0; d < out.extents.size(); ++d) {
        std::optional<int64_t> dim = ir::constInt(out.buffer->shape[d]);
        std::optional<int64_t> lo = ir::constInt(out.mins[d]);
        if (global) {
            if (dim && lo && (*lo < 0 || *lo >= *dim)) {
                diags_.error(r.range, "region of dimension " + std::to_string(d) + " starts at " + std::to_string(*lo) +
                                          ", outside '" + out.buffer->name + "' (size " + std::to_string(*dim) + ")");
                return std::nullopt;
            }
            continue;
        }
        if (dim && out.extents[d] > *dim) {
            diags_.error(r.range, "tile extent " + std::to_string(out.extents[d]) + " exceeds dimension " + std::to_string(d) +
                                      " of '" + out.buffer->name + "' (" + std::to_string(*dim) + ")");
            return std::nullopt;
        }
        if (!dim || !lo) continue;
        // The corner is the user's number and may be near 2^63: the end is
        // formed with a checked add, not one that wraps back inside.
        std::optional<int64_t> hi = checkedAdd(*lo, out.extents[d]);
        if (*lo < 0 || !hi || *hi > *dim) {
            std::string end = hi ? std::to_string(*hi) : std::to_string(*lo) + " + " + std::to_string(out.extents[d]);
            diags_.error(r.range, "region [" + std::to_string(*lo) + ", " + end + ") of dimension " +
                                      std::to_string(d) + " lies outside '" + out.buffer->name + "' (size " + std::to_string(*dim) + ")");
            return std::nullopt;
        }
    }
    // Tile operations become parallel loops over the tile, whose counters are
    // `int`s in the generated code.
    std::optional<int64_t> elements = checkedProduct(out.extents);
    if (!elements || *elements > INT32_MAX) {
        diags_.error(r.range, "a tile of " + (elements ? std::to_string(*elements) : std::string("more than 2^63")) +
                                  " elements; at most 2^31 - 1 are supported");
        return std::nullopt;
    }
    return out;
}

bool Checker::resolveCopyRegions(const RegionRef &src, const RegionRef &dst, ir::Region &srcOut, ir::Region &dstOut,
                                 const char *op, SourceRange where) {
    if (src.hasUnknownExtents() && dst.hasUnknownExtents()) {
        diags_.error(where, std::string("cannot infer the extent of this ") + op +
                                ": give one side as a whole buffer or with slices (start:end)");
        return false;
    }
    std::vector<int64_t> srcKnown, dstKnown;
    if (!src.hasUnknownExtents()) for (const auto &e : src.extents) srcKnown.push_back(*e);
    if (!dst.hasUnknownExtents()) for (const auto &e : dst.extents) dstKnown.push_back(*e);
    std::optional<ir::Region> s = completeRegion(src, dstKnown);
    if (!s) return false;
    std::optional<ir::Region> d = completeRegion(dst, s->extents);
    if (!d) return false;
    if (s->tileShape() != d->tileShape()) {
        Diagnostic diag{Severity::Error, dst.range, std::string(op) + " shapes do not match: source " + shapeStr(s->tileShape()) +
                                                         ", destination " + shapeStr(d->tileShape()), {}, {}};
        diag.note(src.range, "source is here");
        diags_.report(std::move(diag));
        return false;
    }
    srcOut = *s;
    dstOut = *d;
    return true;
}

// ------------------------------------------------------------------ dispatch

ir::Stmt Checker::checkCallStmt(const ast::Call &c) {
    if (!c.isBuiltin) {
        if (auto fn = fns_.find(c.callee); fn != fns_.end()) return checkFnCall(c, *fn->second);
        reportUnknown(c.callee, c.calleeRange, "function");
        return nullptr;
    }
    const std::string &n = c.callee;
    bool inParallel = parallelDepth_ > 0;
    auto notInParallel = [&]() {
        diags_.error(c.calleeRange, "'" + n + "' cannot appear inside a parallel loop");
        return nullptr;
    };
    if (n == "atomic_add") return checkAtomicAdd(c);
    if (n == "atomic_store") return checkAtomicStore(c);
    if (n == "atomic_addx2" || n == "atomic_addx4") return checkAtomicAddLanes(c, n == "atomic_addx2" ? 2 : 4);
    if (n == "import_source") return checkImportSource(c);
    // A tile operation's arguments are evaluated once per thread, not per
    // element (TileLang evaluates a fill's value per element): a random draw
    // there would give each thread's share of the tile a number of its own.
    struct Restore {
        DrawBan &slot;
        DrawBan outer;
        ~Restore() { slot = outer; }
    } restore{drawsNotHere_, drawsNotHere_};
    if (n != "call_extern" && n != "thread_allreduce" && n != "rng_init" && n != "dp4a")
        drawsNotHere_ = {"the arguments of a tile operation (evaluated once per thread, not per element)"};
    if (inParallel) return notInParallel();
    if (vectorizedDepth_ > 0) {
        diags_.error(c.calleeRange, "'" + n + "' cannot appear inside a vectorized loop, whose body is element statements");
        return nullptr;
    }
    if (n == "copy") return checkCopy(c, ir::CopyKind::Copy);
    if (n == "tma_copy") return checkCopy(c, ir::CopyKind::TmaCopy);
    if (n == "async_copy") return checkCopy(c, ir::CopyKind::AsyncCopy);
    if (n == "copy_cluster") return checkCopy(c, ir::CopyKind::CopyCluster);
    if (n == "gemm") return checkGemm(c, false);
    if (n == "gemm_blockscaled") return checkGemm(c, true);
    if (n == "clear") return checkFill(c, true);
    if (n == "fill") return checkFill(c, false);
    if (n == "reduce_sum") return checkReduce(c, ir::ReduceOp::Sum);
    if (n == "reduce_max") return checkReduce(c, ir::ReduceOp::Max);
    if (n == "reduce_min") return checkReduce(c, ir::ReduceOp::Min);
    if (n == "reduce_abssum") return checkReduce(c, ir::ReduceOp::AbsSum);
    if (n == "reduce_absmax") return checkReduce(c, ir::ReduceOp::AbsMax);
    if (n == "thread_allreduce") return checkThreadAllReduce(c);
    if (n == "dp4a") return checkDp4a(c);
    if (n == "call_extern") return checkCallExtern(c);
    if (n == "cumsum") return checkCumsum(c);
    if (n == "finalize_reducer") return checkFinalizeReducer(c);
    if (n == "im2col") return checkIm2Col(c);
    if (n == "annotate_layout") return checkAnnotateLayout(c);
    if (n == "barrier_wait") return checkBarrierOp(c, true);
    if (n == "barrier_arrive_expect_tx") return checkBarrierArriveExpectTx(c);
    if (n == "clc_try_cancel" || n == "clc_try_cancel_multicast") return checkClcTryCancel(c);
    if (n == "rng_init") return checkRngInit(c);
    if (n == "barrier_arrive") return checkBarrierOp(c, false);
    // TileLang's T.tcgen05_mma_arrive(b): tcgen05.commit, an arrival on b
    // once every tcgen05.mma the issuing thread has issued completes (PTX
    // ISA, "tcgen05.commit"). store-uniform-once gives it to the thread that
    // issues the role's MMAs.
    // With arrive_2cta = true (a 2-CTA kernel's MMAs), the arrival is on b
    // of both blocks of the pair.
    if (n == "tcgen05_mma_arrive") {
        std::optional<CallArgs> args = matchArgs(c, 1, 1, {"arrive_2cta"});
        if (!args) return nullptr;
        ir::Buffer barrier;
        ir::Expr index;
        if (!checkBarrierRef(*args->positional[0], barrier, index)) return nullptr;
        std::optional<bool> bothBlocks = checkPairFlag(*args, "arrive_2cta", "arrive_2cta");
        if (!bothBlocks) return nullptr;
        return std::make_shared<ir::Tcgen05Commit>(barrier, index, *bothBlocks, false, c.range);
    }
    if (n == "tcgen05_cp_warpx4" || n == "tcgen05_sf_warp_transpose") return checkScaleFactorOp(c);
    // TileLang's T.fence_proxy_async(): the thread's shared-memory writes are
    // ordered before its later async-proxy accesses (and, through a barrier,
    // before other threads' -- tcgen05.cp reading what the thread wrote).
    // TileLang's T.sync_threads(): __syncthreads, met by every thread of the
    // block (insert-syncs adds the barriers the program's accesses need either way).
    // TileLang's T.sync_threads(barrier_id, arrive_count): bar.sync of a
    // named barrier that `arrive_count` threads meet -- a role's own threads
    // (checked where roles are known, sema's ThreadRoles).
    if (n == "sync_threads") {
        std::optional<CallArgs> args = matchArgs(c, 0, 2, {});
        if (!args) return nullptr;
        if (args->positional.empty()) return std::make_shared<ir::SyncThreads>(c.range);
        if (args->positional.size() != 2) {
            diags_.error(c.range, "sync_threads takes no arguments (__syncthreads) or a named barrier and its thread count: sync_threads(id, threads)");
            return nullptr;
        }
        std::optional<int64_t> id = checkConstInt(*args->positional[0], "barrier id");
        std::optional<int64_t> threads = checkConstInt(*args->positional[1], "thread count");
        if (!id || !threads) return nullptr;
        // PTX ISA, bar.sync: 16 barriers per block, 0 the one __syncthreads uses; a count of whole warps.
        if (*id < 1 || *id > 15) {
            diags_.error(args->positional[0]->range, "a named barrier is 1 to 15 (0 is __syncthreads'), found " + std::to_string(*id));
            return nullptr;
        }
        int64_t blockThreads = kernel_ ? kernel_->threads : 0;
        if (*threads < 32 || *threads % 32 != 0 || (blockThreads > 0 && *threads > blockThreads)) {
            diags_.error(args->positional[1]->range, "a named barrier joins whole warps, 32 to the block's " + std::to_string(blockThreads) +
                                                         " threads, found " + std::to_string(*threads));
            return nullptr;
        }
        return std::make_shared<ir::SyncThreads>(c.range, *id, *threads);
    }
    if (n == "fence_proxy_async") {
        if (!matchArgs(c, 0, 0, {})) return nullptr;
        return std::make_shared<ir::FenceProxyAsync>(c.range);
    }
    if (n == "disable_warp_group_reg_alloc") {
        diags_.error(c.range, "disable_warp_group_reg_alloc() keeps the register budgets of the whole kernel: write it as a statement of "
                              "the kernel's body (not inside a loop, branch, role or fn)");
        return nullptr;
    }
    if (n == "use_swizzle") {
        diags_.error(c.range, "use_swizzle renumbers the blocks of the whole kernel: write it once, as a statement of the kernel's body "
                              "(not inside a loop, branch or role)");
        return nullptr;
    }
    if (n == "cluster_sync" || n == "pdl_trigger" || n == "pdl_sync") {
        if (!matchArgs(c, 0, 0, {})) return nullptr;
        if (n == "cluster_sync") {
            if (kernel_ && !kernel_->hasCluster)
                diags_.warning(c.range, "cluster_sync in a kernel without a cluster(...) clause synchronises one block", "cluster");
            return std::make_shared<ir::ClusterSync>(c.range);
        }
        if (kernel_) kernel_->usesPdl = true;
        if (n == "pdl_trigger") return std::make_shared<ir::PdlTrigger>(c.range);
        return std::make_shared<ir::PdlSync>(c.range);
    }
    // The program's own cp.async groups (TileLang's T.ptx_commit_group /
    // T.ptx_wait_group), for parallel(..., prefer_async = true) copies.
    if (n == "cp_async_commit") {
        if (!matchArgs(c, 0, 0, {})) return nullptr;
        return std::make_shared<ir::CpAsyncCommit>(c.range);
    }
    // cp_async_wait(n) and wait_wgmma(n) (TileLang's T.ptx_wait_group and
    // T.wait_wgmma: wgmma.wait_group n, for gemms issued with wg_wait = -1
    // or a positive wg_wait): the groups left in flight, a constant n >= 0.
    if (n == "cp_async_wait" || n == "wait_wgmma") {
        const std::string groups = n == "cp_async_wait" ? "groups" : "wgmma groups";
        std::optional<CallArgs> args = matchArgs(c, 1, 1, {});
        if (!args) return nullptr;
        std::optional<int64_t> pending = checkConstInt(*args->positional[0], n == "cp_async_wait" ? "number of cp.async groups left in flight" : "number of wgmma groups left in flight");
        if (!pending) return nullptr;
        if (*pending < 0) {
            diags_.error(args->positional[0]->range, n + "(n) leaves at most n " + groups + " in flight; n cannot be negative, found " + std::to_string(*pending));
            return nullptr;
        }
        if (n == "cp_async_wait") return std::make_shared<ir::CpAsyncWait>(*pending, c.range);
        if (kernel_) kernel_->waitsForWgmma = true;
        return std::make_shared<ir::WgmmaSync>(ir::WgmmaSyncKind::Wait, *pending, c.range);
    }
    if (n == "set_max_nreg") {
        std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
        if (!args) return nullptr;
        std::optional<int64_t> count = checkConstInt(*args->positional[0], "register count");
        std::optional<std::string> dir = checkWord(*args->positional[1], {"inc", "dec"}, "direction");
        if (!count || !dir) return nullptr;
        if (*count < 24 || *count > 256 || *count % 8 != 0) {
            diags_.error(args->positional[0]->range, "register count must be a multiple of 8 between 24 and 256, found " + std::to_string(*count));
            return nullptr;
        }
        return std::make_shared<ir::SetMaxNReg>(*count, *dir == "inc", c.range);
    }
    // Expression builtins used as statements.
    diags_.error(c.range, "the result of '" + n + "' is unused");
    return nullptr;
}

// ------------------------------------------------------------------ scale factors for tcgen05

// TileLang's tcgen05_cp_warpx4(src, tmem, col_offset = 0, use_2cta = false)
// and tcgen05_sf_warp_transpose(src): src is packed uint32 scale words in
// shared memory, one run of its storage taken in chunks of
// ir::kTcgen05CopyWords words. With use_2cta, the CTA pair's copy (both blocks).
ir::Stmt Checker::checkScaleFactorOp(const ast::Call &c) {
    bool copy = c.callee == "tcgen05_cp_warpx4";
    std::optional<CallArgs> args = copy ? matchArgs(c, 2, 3, {"use_2cta"}) : matchArgs(c, 1, 1, {});
    if (!args) return nullptr;
    std::optional<bool> pair = copy ? checkPairFlag(*args, "use_2cta", "tcgen05_cp_warpx4 with use_2cta") : false;
    if (!pair) return nullptr;
    std::optional<RegionRef> ref = checkRegionArg(*args->positional[0], "scale-factor source");
    if (!ref) return nullptr;
    std::optional<ir::Region> src = completeRegion(*ref, {});
    if (!src) return nullptr;
    const int64_t chunk = ir::kTcgen05CopyWords;
    int64_t words = 1;
    for (int64_t e : src->extents) words *= e;
    // Chunks are whole 128-word runs of the region's rows, one after another in storage.
    if (src->buffer->scope != ir::MemScope::Shared || src->buffer->dtype != DType::UInt32 || !src->contiguous() || src->extents.empty() ||
        src->extents.back() % chunk != 0) {
        diags_.error(ref->range, c.callee + " takes packed scale words: a shared uint32 region, one run of its storage, of rows of a multiple of " +
                                     std::to_string(chunk) + " words (e.g. SF_shared[stage] of a [stages, 128] or [stages, 4, 128] buffer); '" +
                                     src->buffer->name + "' here is " + std::string(ir::memScopeName(src->buffer->scope)) + " " +
                                     std::string(dtypeName(src->buffer->dtype)) + " " + shapeStr(src->extents) +
                                     (src->contiguous() ? "" : ", not one run of its storage"));
        return nullptr;
    }
    int64_t chunks = words / chunk;
    auto chunkStart = [&](int64_t i) { return src->indicesAt(i * chunk); };
    if (!copy) return std::make_shared<ir::ScaleTranspose>(*src, c.range);

    std::optional<RegionRef> dref = checkRegionArg(*args->positional[1], "tensor-memory destination");
    if (!dref) return nullptr;
    std::optional<ir::Region> dst = completeRegion(*dref, {});
    if (!dst) return nullptr;
    const ir::Buffer &tmem = dst->buffer;
    std::optional<std::vector<int64_t>> shape = tmem->constShape();
    if (tmem->scope != ir::MemScope::TMem || tmem->dtype != DType::UInt32 || !shape || shape->size() != 2 || (*shape)[0] != 128 || !dst->coversBuffer()) {
        diags_.error(dref->range, "tcgen05_cp_warpx4 copies into a whole tensor-memory buffer alloc_tmem([128, columns], uint32) (all 128 lanes: "
                                  "warpx4 fills each lane quarter); '" + tmem->name + "' is not one");
        return nullptr;
    }
    int64_t offset = 0;
    if (args->positional.size() == 3) {
        std::optional<int64_t> v = checkConstInt(*args->positional[2], "column offset");
        if (!v) return nullptr;
        offset = *v;
    }
    if (offset < 0 || offset % 4 != 0 || offset + 4 * chunks > (*shape)[1]) {
        diags_.error(args->positional.size() == 3 ? args->positional[2]->range : c.range,
                     "tcgen05_cp_warpx4 writes 4 columns per " + std::to_string(chunk) + " words: columns " + std::to_string(offset) + " to " +
                         std::to_string(offset + 4 * chunks - 1) + ", and '" + tmem->name + "' has " + std::to_string((*shape)[1]) +
                         " (the offset a non-negative multiple of 4)");
        return nullptr;
    }
    std::vector<ir::Stmt> copies;
    for (int64_t i = 0; i < chunks; ++i)
        copies.push_back(std::make_shared<ir::Tcgen05Copy>(src->buffer, chunkStart(i), tmem, ir::intImm(offset + 4 * i), nullptr, *pair, c.range));
    return ir::seq(copies);
}

// ------------------------------------------------------------------ copy

ir::Stmt Checker::checkCopy(const ast::Call &c, ir::CopyKind kind) {
    std::vector<std::string> keywords;
    switch (kind) {
    case ir::CopyKind::Copy: keywords = {"prefer", "disable_tma", "eviction", "barrier"}; break;
    case ir::CopyKind::TmaCopy: keywords = {"barrier", "cluster_mask", "eviction"}; break;
    case ir::CopyKind::AsyncCopy: keywords = {}; break;
    case ir::CopyKind::CopyCluster: keywords = {"cluster_mask", "dst_block", "remote_barrier", "barrier"}; break;
    }
    std::optional<CallArgs> args = matchArgs(c, 2, 2, keywords);
    if (!args) return nullptr;
    std::optional<RegionRef> src = checkRegionArg(*args->positional[0], "source");
    std::optional<RegionRef> dst = checkRegionArg(*args->positional[1], "destination");
    if (!src || !dst) return nullptr;
    ir::Region s, d;
    if (!resolveCopyRegions(*src, *dst, s, d, c.callee.c_str(), c.range)) return nullptr;

    ir::MemScope ss = s.buffer->scope, ds = d.buffer->scope;
    auto scopeError = [&](const std::string &why) {
        diags_.error(c.range, c.callee + " from " + ir::memScopeName(ss) + " '" + s.buffer->name + "' to " + ir::memScopeName(ds) +
                                  " '" + d.buffer->name + "': " + why);
        return nullptr;
    };
    if (ss == ir::MemScope::Barrier || ds == ir::MemScope::Barrier) return scopeError("barriers hold no data");
    if ((ss == ir::MemScope::TMem) != (ds == ir::MemScope::TMem) && ss != ir::MemScope::Fragment && ds != ir::MemScope::Fragment)
        return scopeError("tensor memory is copied to and from fragments only");
    if (ss == ir::MemScope::TMem && ds == ir::MemScope::TMem) return scopeError("tensor memory cannot be copied to itself");
    // Unpacked tiles (f4e2m1_unpacked, TileLang's float4_e2m1_unpacked, and the
    // 6-bit ones) hold their elements in the 8-bit slots tcgen05.mma reads:
    // TMA writes them from the packed type.
    const bool unpacks = isUnpacked(d.buffer->dtype);
    if (unpacks || isUnpacked(s.buffer->dtype)) {
        const DType slots = unpacks ? d.buffer->dtype : s.buffer->dtype;
        if (!unpacks || ss != ir::MemScope::Global || s.buffer->dtype != valueType(slots) || ds != ir::MemScope::Shared)
            return scopeError("an " + std::string(dtypeName(slots)) + " tile is loaded from packed " + std::string(dtypeName(valueType(slots))) +
                              " in global memory (by TMA) and read by tcgen05.mma; nothing else copies it");
    } else if (isSubByte(s.buffer->dtype) != isSubByte(d.buffer->dtype) || (isSubByte(s.buffer->dtype) && s.buffer->dtype != d.buffer->dtype)) {
        return scopeError("packed sub-byte data is copied without conversion only");
    }
    if (isSubByte(s.buffer->dtype) && !unpacks) {
        // Packed elements move in whole bytes (lower-tile-ops copies the bytes).
        auto memory = [](ir::MemScope m) { return m == ir::MemScope::Global || m == ir::MemScope::Shared; };
        // A fragment of f4e2m1 (one element to a register) is packed into
        // memory, or unpacked from it, a byte to two registers.
        bool registers = inRegistersOneByOne(s.buffer->dtype) && ((ss == ir::MemScope::Fragment && memory(ds)) || (ds == ir::MemScope::Fragment && memory(ss)));
        if ((!memory(ss) || !memory(ds)) && !registers)
            return scopeError(inRegistersOneByOne(s.buffer->dtype) ? "packed " + std::string(dtypeName(s.buffer->dtype)) +
                                                                         " data is copied between global and shared memory, or between memory and a fragment"
                                                                   : std::string("packed data is copied between global and shared memory only"));
        DType t = s.buffer->dtype;
        int64_t unit = packingUnit(t);
        std::string whole = "packed " + std::string(dtypeName(t)) + " data is copied in whole bytes, " + std::to_string(unit) + " elements to " +
                            std::to_string(unit * dtypeBits(t) / 8) + (unit * dtypeBits(t) == 8 ? " byte" : " bytes");
        for (const ir::Region *r : {&s, &d}) {
            std::optional<int64_t> last = ir::constInt(r->buffer->shape.back());
            int64_t start = ir::knownDivisor(r->mins.back());
            if (!last) return scopeError(whole + "; the last dimension of '" + r->buffer->name + "' must be a constant");
            if (*last % unit != 0 || r->extents.back() % unit != 0 || (start != 0 && start % unit != 0))
                return scopeError(whole + ": the rows of '" + r->buffer->name + "', and the region's start and extent in them, must be multiples of " +
                                  std::to_string(unit));
        }
    }
    if ((kind == ir::CopyKind::TmaCopy || kind == ir::CopyKind::AsyncCopy) && s.buffer->dtype != d.buffer->dtype && !(unpacks && kind == ir::CopyKind::TmaCopy))
        return scopeError(c.callee + " moves bytes and cannot convert " + std::string(dtypeName(s.buffer->dtype)) + " to " +
                          std::string(dtypeName(d.buffer->dtype)));

    auto copy = std::make_shared<ir::Copy>(s, d, c.range);
    copy->copyKind = kind;
    bool ok = true;
    if (const ast::Expr *p = args->keyword("prefer")) {
        std::optional<std::string> w = checkWord(*p, {"tma", "cp_async", "sync"}, "value for 'prefer'");
        if (!w) ok = false;
        else copy->prefer = *w == "tma" ? ir::CopyPreference::Tma : *w == "cp_async" ? ir::CopyPreference::CpAsync : ir::CopyPreference::Sync;
    }
    if (const ast::Expr *p = args->keyword("disable_tma")) {
        std::optional<bool> b = checkConstBool(*p, "disable_tma");
        if (!b) ok = false;
        else copy->disableTma = *b;
    }
    if (copy->prefer == ir::CopyPreference::Tma && copy->disableTma) {
        diags_.error(c.range, "prefer = tma conflicts with disable_tma = true");
        ok = false;
    }
    if (const ast::Expr *p = args->keyword("eviction")) {
        std::optional<std::string> w = checkWord(*p, {"evict_normal", "evict_first", "evict_last"}, "eviction policy");
        if (!w) ok = false;
        else copy->eviction = *w == "evict_first" ? ir::EvictionPolicy::First : *w == "evict_last" ? ir::EvictionPolicy::Last : ir::EvictionPolicy::Normal;
    }
    if (const ast::Expr *p = args->keyword("barrier")) {
        if (!checkBarrierRef(*p, copy->barrier, copy->barrierIndex)) ok = false;
    }
    if (const ast::Expr *p = args->keyword("cluster_mask")) {
        std::optional<std::vector<int64_t>> masks = checkClusterMasks(*p);
        if (!masks) ok = false;
        else copy->clusterMasks = std::move(*masks);
    }
    if (const ast::Expr *p = args->keyword("dst_block")) {
        std::optional<ir::Expr> b = checkInteger(*p, "dst_block");
        if (!b) ok = false;
        else if (std::optional<int64_t> r = ir::constInt(*b); r && !badCluster_ && (*r < 0 || *r >= clusterBlocks())) {
            diags_.error(p->range, "dst_block " + std::to_string(*r) + " is not a block of the cluster (ranks 0 to " + std::to_string(clusterBlocks() - 1) + ")");
            ok = false;
        } else {
            copy->dstBlock = *b;
        }
    }
    if (const ast::Expr *p = args->keyword("remote_barrier")) {
        ir::Expr unusedIndex;
        if (!checkBarrierRef(*p, copy->remoteBarrier, unusedIndex)) ok = false;
    }
    if (kind == ir::CopyKind::CopyCluster) {
        if (copy->multicast() && copy->dstBlock) {
            diags_.error(c.range, "copy_cluster takes cluster_mask (multicast) or dst_block (SM-to-SM), not both");
            ok = false;
        } else if (!args->keyword("cluster_mask") && !args->keyword("dst_block")) {
            diags_.error(c.range, "copy_cluster needs cluster_mask = <mask> (multicast) or dst_block = <rank> (SM-to-SM)");
            ok = false;
        }
        if (copy->dstBlock && (ss != ir::MemScope::Shared || ds != ir::MemScope::Shared)) {
            diags_.error(c.range, "copy_cluster with dst_block copies shared memory to another block's shared memory");
            ok = false;
        }
    }
    if (copy->multicast() && (ss != ir::MemScope::Global || ds != ir::MemScope::Shared)) {
        diags_.error(c.range, "cluster_mask multicasts a load from global to shared memory; this copy is " + std::string(ir::memScopeName(ss)) +
                                  " to " + ir::memScopeName(ds));
        ok = false;
    }
    if (kind == ir::CopyKind::TmaCopy && ss == ir::MemScope::Global && !copy->barrier) {
        diags_.error(c.range, "tma_copy of a load needs barrier = <mbarrier> to signal its completion");
        ok = false;
    }
    if (!ok) return nullptr;
    return copy;
}

// ------------------------------------------------------------------ gemm

ir::Stmt Checker::checkGemm(const ast::Call &c, bool blockScaled) {
    std::vector<std::string> keywords = {"transpose_A", "transpose_B", "policy", "clear_accum", "mbar", "use_2cta", "inst", "wg_wait"};
    if (blockScaled) keywords = {"transpose_A", "transpose_B", "k_start", "sf_a_granularity_k", "sf_b_granularity_k", "mbar", "sf_layout", "clear_accum",
                                 "use_2cta"};
    std::optional<CallArgs> args = matchArgs(c, blockScaled ? 5 : 3, blockScaled ? 5 : 3, keywords);
    if (!args) return nullptr;
    std::optional<RegionRef> ra = checkRegionArg(*args->positional[0], "A operand");
    std::optional<RegionRef> rb = checkRegionArg(*args->positional[1], "B operand");
    std::optional<RegionRef> rc = checkRegionArg(*args->positional[2], "C operand");
    if (!ra || !rb || !rc) return nullptr;
    std::optional<ir::Region> a = completeRegion(*ra, {}), b = completeRegion(*rb, {}), cc = completeRegion(*rc, {});
    if (!a || !b || !cc) return nullptr;
    bool ok = true;
    bool transA = false, transB = false;
    if (const ast::Expr *p = args->keyword("transpose_A")) {
        std::optional<bool> v = checkConstBool(*p, "transpose_A");
        if (!v) ok = false; else transA = *v;
    }
    if (const ast::Expr *p = args->keyword("transpose_B")) {
        std::optional<bool> v = checkConstBool(*p, "transpose_B");
        if (!v) ok = false; else transB = *v;
    }
    // Scopes.
    auto scopeIs = [](const ir::Region &r, std::initializer_list<ir::MemScope> ss) {
        for (ir::MemScope s : ss) {
            if (r.buffer->scope == s) return true;
        }
        return false;
    };
    if (!scopeIs(*a, {ir::MemScope::Shared, ir::MemScope::Fragment, ir::MemScope::TMem})) {
        diags_.error(ra->range, "gemm's A operand must be in shared memory, a fragment or tensor memory, not " + std::string(ir::memScopeName(a->buffer->scope)));
        ok = false;
    }
    if (!scopeIs(*b, {ir::MemScope::Shared, ir::MemScope::Fragment})) {
        diags_.error(rb->range, "gemm's B operand must be in shared memory or a fragment, not " + std::string(ir::memScopeName(b->buffer->scope)));
        ok = false;
    }
    if (!scopeIs(*cc, {ir::MemScope::Fragment, ir::MemScope::TMem})) {
        diags_.error(rc->range, "gemm's C operand (the accumulator) must be a fragment or tensor memory, not " + std::string(ir::memScopeName(cc->buffer->scope)));
        ok = false;
    }
    // Shapes: A is M x K (K x M transposed), B is K x N (N x K transposed), C is M x N.
    std::vector<int64_t> sa = a->tileShape(), sb = b->tileShape(), sc = cc->tileShape();
    auto twoD = [&](const std::vector<int64_t> &s, const RegionRef &r, const char *which) {
        if (s.size() == 2) return true;
        diags_.error(r.range, std::string("gemm's ") + which + " operand must be a 2-D tile, found " + shapeStr(s));
        return false;
    };
    // A 2-CTA gemm (use_2cta) multiplies by the N columns of B that the two
    // blocks of the pair hold half each: this block's B is K x N / 2.
    bool pair = false;
    if (const ast::Expr *p = args->keyword("use_2cta")) pair = checkConstBool(*p, "use_2cta").value_or(false);
    if (ok && twoD(sa, *ra, "A") && twoD(sb, *rb, "B") && twoD(sc, *rc, "C")) {
        int64_t m = transA ? sa[1] : sa[0], ka = transA ? sa[0] : sa[1];
        int64_t kb = transB ? sb[1] : sb[0], n = (transB ? sb[0] : sb[1]) * (pair ? 2 : 1);
        if (ka != kb && !blockScaled) {
            Diagnostic d{Severity::Error, rb->range, "gemm K mismatch: A has K = " + std::to_string(ka) + ", B has K = " + std::to_string(kb), {}, {}};
            d.note(ra->range, std::string("A is ") + shapeStr(sa) + (transA ? " (transposed)" : ""));
            diags_.report(std::move(d));
            ok = false;
        } else if (sc[0] != m || sc[1] != n) {
            Diagnostic d{Severity::Error, rc->range, "gemm C must be M x N = " + shapeStr({m, n}) + ", found " + shapeStr(sc), {}, {}};
            d.note(ra->range, std::string("A is ") + shapeStr(sa) + (transA ? " (transposed)" : ""));
            d.note(rb->range, std::string("B is ") + shapeStr(sb) + (transB ? " (transposed)" : "") +
                                  (pair ? ", half of the N columns (use_2cta: each block of the pair holds half of B)" : ""));
            diags_.report(std::move(d));
            ok = false;
        }
    } else {
        ok = false;
    }
    // Dtypes.
    DType ta = a->buffer->dtype, tb = b->buffer->dtype, tc = cc->buffer->dtype;
    auto isFp8 = [](DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; };
    auto isLowFloat = [&](DType t) {
        DType v = valueType(t);
        return isFp8(v) || v == DType::F6E2M3 || v == DType::F6E3M2 || v == DType::F4E2M1;
    };
    bool operandsMatch = ta == tb || (isLowFloat(ta) && isLowFloat(tb)) ||
                         ((ta == DType::Int8 || ta == DType::UInt8) && (tb == DType::Int8 || tb == DType::UInt8));
    if (ok && !operandsMatch) {
        diags_.error(c.range, "gemm operands A (" + std::string(dtypeName(ta)) + ") and B (" + std::string(dtypeName(tb)) + ") must have the same dtype");
        ok = false;
    }
    if (ok) {
        bool accOk = false;
        if (ta == DType::F16) accOk = tc == DType::F32 || tc == DType::F16;
        else if (ta == DType::BF16) accOk = tc == DType::F32;
        else if (ta == DType::F32 || ta == DType::TF32) accOk = tc == DType::F32;
        else if (ta == DType::F64) accOk = tc == DType::F64;
        else if (ta == DType::Int8 || ta == DType::UInt8 || ta == DType::Int4 || ta == DType::UInt4) accOk = tc == DType::Int32;
        else if (isLowFloat(ta)) accOk = tc == DType::F32 || tc == DType::F16;
        if (!accOk) {
            diags_.error(rc->range, "a gemm of " + std::string(dtypeName(ta)) + " operands cannot accumulate in " + std::string(dtypeName(tc)));
            ok = false;
        }
    }
    auto g = std::make_shared<ir::Gemm>(*a, *b, *cc, c.range);
    g->transposeA = transA;
    g->transposeB = transB;
    if (const ast::Expr *p = args->keyword("policy")) {
        std::optional<std::string> w = checkWord(*p, {"Square", "FullRow", "FullCol"}, "gemm policy");
        if (!w) ok = false;
        else g->policy = *w == "FullRow" ? ir::GemmPolicy::FullRow : *w == "FullCol" ? ir::GemmPolicy::FullCol : ir::GemmPolicy::Square;
    }
    if (const ast::Expr *p = args->keyword("clear_accum")) {
        if (std::optional<ir::Expr> e = checkCondition(*p, "clear_accum")) g->clearAccum = *e;
        else ok = false;
    }
    if (const ast::Expr *p = args->keyword("mbar")) {
        if (!checkBarrierRef(*p, g->mbar, g->mbarIndex)) ok = false;
    }
    if (const ast::Expr *p = args->keyword("use_2cta")) {
        std::optional<bool> v = checkConstBool(*p, "use_2cta");
        if (!v) ok = false;
        else g->use2cta = *v;
    }
    if (const ast::Expr *p = args->keyword("inst")) {
        std::optional<std::string> w = checkWord(*p, {"mma", "wgmma", "tcgen05", "fma"}, "gemm instruction");
        if (!w) ok = false;
        else g->explicitInst = *w == "mma" ? ir::GemmInst::MMA : *w == "wgmma" ? ir::GemmInst::WGMMA : *w == "tcgen05" ? ir::GemmInst::TCGEN05 : ir::GemmInst::FMA;
    }
    if (const ast::Expr *p = args->keyword("wg_wait")) {
        std::optional<int64_t> v = checkConstInt(*p, "wg_wait");
        if (!v) {
            ok = false;
        } else if (*v < -1) {
            diags_.error(p->range, "wg_wait is the number of wgmma groups left in flight (-1: do not wait); found " + std::to_string(*v));
            ok = false;
        } else {
            g->wgWait = *v;
            if (*v != 0 && kernel_) kernel_->waitsForWgmma = true;
        }
    }
    if (blockScaled) {
        std::optional<RegionRef> sfa = checkRegionArg(*args->positional[3], "SFA scale operand");
        std::optional<RegionRef> sfb = checkRegionArg(*args->positional[4], "SFB scale operand");
        if (!sfa || !sfb) return nullptr;
        g->sfa = completeRegion(*sfa, {});
        g->sfb = completeRegion(*sfb, {});
        if (!g->sfa || !g->sfb) ok = false;
        if (const ast::Expr *p = args->keyword("k_start")) {
            if (std::optional<ir::Expr> e = checkInteger(*p, "k_start")) g->sfKStart = *e;
            else ok = false;
        }
        for (auto [key, field] : {std::pair{"sf_a_granularity_k", &g->sfGranularityA}, std::pair{"sf_b_granularity_k", &g->sfGranularityB}}) {
            const ast::Expr *p = args->keyword(key);
            if (!p) continue;
            std::optional<int64_t> v = checkConstInt(*p, key);
            if (!v) ok = false;
            else if (*v <= 0) {
                diags_.error(p->range, std::string(key) + " must be positive");
                ok = false;
            } else {
                *field = *v;
            }
        }
        if (!args->keyword("sf_a_granularity_k") || !args->keyword("sf_b_granularity_k")) {
            // As TileLang: the factors' spacing decides their format (16: NVFP4's ue4m3, 32: the MX formats' ue8m0).
            diags_.error(c.range, "gemm_blockscaled needs sf_a_granularity_k and sf_b_granularity_k (the K elements each scale factor covers)");
            ok = false;
        }
        if (const ast::Expr *p = args->keyword("sf_layout")) {
            std::optional<std::string> w = checkWord(*p, {"rowmajor", "blockscaled_chunk_kmajor"}, "sf_layout");
            if (!w) ok = false;
            else g->sfLayout = *w == "rowmajor" ? ir::ScaleLayout::RowMajor : ir::ScaleLayout::ChunkKMajor;
        }
        for (const std::optional<ir::Region> *sf : {&g->sfa, &g->sfb}) {
            if (!*sf) continue;
            const ir::Buffer &buf = (*sf)->buffer;
            if (buf->dtype != DType::UInt32 || (*sf)->mins.size() != 2) {
                diags_.error(sf == &g->sfa ? sfa->range : sfb->range,
                             "scale factors are given as a 2-D uint32 region (four 8-bit factors to a word); '" + buf->name + "' is " +
                                 std::to_string((*sf)->mins.size()) + "-D " + std::string(dtypeName(buf->dtype)));
                ok = false;
            }
        }
    }
    if (!ok) return nullptr;
    return g;
}

// ------------------------------------------------------------------ fill, reduce, atomic_add

ir::Stmt Checker::checkFill(const ast::Call &c, bool clear) {
    std::optional<CallArgs> args = matchArgs(c, clear ? 1 : 2, clear ? 1 : 2, {});
    if (!args) return nullptr;
    std::optional<RegionRef> r = checkRegionArg(*args->positional[0], "destination");
    if (!r) return nullptr;
    // One element (`fill(s_num_input[0], 0)`, as TileLang takes a buffer
    // load for a region of extent 1) is a region of extent 1 everywhere.
    bool element = static_cast<int>(r->mins.size()) == r->buffer->rank() &&
                   std::none_of(r->extents.begin(), r->extents.end(), [](const std::optional<int64_t> &e) { return e.has_value(); });
    if (r->hasUnknownExtents() && !element) {
        diags_.error(r->range, "give the region to " + c.callee + " with slices (start:end), or name the whole buffer");
        return nullptr;
    }
    std::optional<ir::Region> region = completeRegion(*r, {});
    if (!region) return nullptr;
    ir::MemScope scope = region->buffer->scope;
    if (scope == ir::MemScope::Barrier || scope == ir::MemScope::TMem) {
        diags_.error(r->range, c.callee + " cannot write " + ir::memScopeName(scope) + " buffer '" + region->buffer->name + "'");
        return nullptr;
    }
    DType t = region->buffer->dtype;
    if (!elementsOneByOne(*region->buffer)) {
        diags_.error(r->range, c.callee + " cannot write packed " + std::string(dtypeName(t)) + " data");
        return nullptr;
    }
    ir::Expr value;
    if (clear) {
        value = t == DType::Bool ? ir::boolImm(false) : isFloat(t) ? ir::floatImm(0, t) : ir::intImm(0, t);
    } else {
        std::optional<Value> v = checkValue(*args->positional[1]);
        if (!v) return nullptr;
        std::optional<ir::Expr> e = convert(*v, t, v->range);
        if (!e) return nullptr;
        value = *e;
    }
    return std::make_shared<ir::Fill>(*region, value, c.range);
}

ir::Stmt Checker::checkReduce(const ast::Call &c, ir::ReduceOp op) {
    std::optional<CallArgs> args = matchArgs(c, 2, 3, {"dim", "clear"});
    if (!args) return nullptr;
    std::optional<RegionRef> src = checkRegionArg(*args->positional[0], "source");
    std::optional<RegionRef> dst = checkRegionArg(*args->positional[1], "destination");
    if (!src || !dst) return nullptr;
    bool ok = true;
    for (const RegionRef *r : {&*src, &*dst}) {
        if (!r->whole) {
            diags_.error(r->range, c.callee + " works on whole buffers; name the buffer without indices");
            ok = false;
        } else if (r->buffer->scope != ir::MemScope::Fragment && r->buffer->scope != ir::MemScope::Shared) {
            diags_.error(r->range, c.callee + " needs fragments (alloc_fragment) or shared buffers; '" + r->buffer->name + "' is " +
                                       ir::memScopeName(r->buffer->scope));
            ok = false;
        }
    }
    if (!ok) return nullptr;
    int rank = src->buffer->rank();
    int64_t dim = -1;
    const ast::Expr *dimExpr = args->positional.size() == 3 ? args->positional[2] : args->keyword("dim");
    if (args->positional.size() == 3 && args->keyword("dim")) {
        diags_.error(c.range, "dim given twice");
        return nullptr;
    }
    if (dimExpr) {
        std::optional<int64_t> d = checkConstInt(*dimExpr, "dim");
        if (!d) return nullptr;
        dim = *d;
        if (dim < -rank || dim >= rank) {
            diags_.error(dimExpr->range, "dim " + std::to_string(dim) + " is out of range for the " + std::to_string(rank) + "-dimensional '" + src->buffer->name + "'");
            return nullptr;
        }
    }
    if (dim < 0) dim += rank;
    // clear = a run-time condition (TileLang's `clear = (k == 0)`): the
    // reduce with and without clearing, chosen by a branch on it.
    ir::Expr clear = ir::boolImm(true);
    SourceRange clearRange = c.range;
    if (const ast::Expr *p = args->keyword("clear")) {
        std::optional<ir::Expr> e = checkCondition(*p, "clear");
        if (!e) return nullptr;
        clear = *e;
        clearRange = p->range;
    }
    std::vector<int64_t> srcShape = *src->buffer->constShape(), dstShape = *dst->buffer->constShape();
    std::vector<int64_t> expected = srcShape;
    expected.erase(expected.begin() + dim);
    if (expected.empty()) expected.push_back(1);
    if (dstShape != expected) {
        Diagnostic d{Severity::Error, dst->range, c.callee + " over dim " + std::to_string(dim) + " of " + shapeStr(srcShape) +
                                                       " produces " + shapeStr(expected) + ", but '" + dst->buffer->name + "' is " + shapeStr(dstShape), {}, {}};
        diags_.report(std::move(d));
        return nullptr;
    }
    DType st = src->buffer->dtype, dt = dst->buffer->dtype;
    if (st == DType::Bool || dt == DType::Bool || isPacked(st) || isPacked(dt)) {
        diags_.error(c.range, c.callee + " needs numeric fragments, found " + std::string(dtypeName(st)) + " and " + std::string(dtypeName(dt)));
        return nullptr;
    }
    // A shared operand is staged through a fragment of its shape, as
    // TileLang's reduce_macro does: the source copied in, the destination
    // copied in (unless cleared) and out again around the reduce.
    // A narrow float destination is staged in f32, where sums accumulate
    // anyway: its old value (clear = false) is added before the one rounding.
    auto staged = [&](const ir::Buffer &b, DType t) {
        return b->scope == ir::MemScope::Shared ? ir::makeBuffer(b->name + "_frag", t, b->shape, ir::MemScope::Fragment, c.range) : b;
    };
    const DType dstType = dst->buffer->dtype;
    const ir::Buffer in = staged(src->buffer, src->buffer->dtype),
                     out = staged(dst->buffer, isFloat(dstType) && dtypeBits(dstType) < 32 ? DType::F32 : dstType);
    auto whole = [&](const ir::Buffer &b) {
        std::vector<int64_t> extents = *b->constShape();
        return ir::Region{b, std::vector<ir::Expr>(extents.size(), ir::intImm(0)), extents, c.range};
    };
    auto copy = [&](const ir::Buffer &from, const ir::Buffer &to) { return std::make_shared<ir::Copy>(whole(from), whole(to), c.range); };
    // A shared destination kept (clear = false) is combined with the
    // reduced values after the reduce, in a parallel loop over it (TileLang
    // copies it into the fragment first; here the reduce fixes the fragment's
    // distribution, which a copy before it would fix otherwise).
    auto combined = [&]() -> ir::Stmt {
        std::vector<int64_t> shape = *out->constShape();
        std::vector<ir::VarRef> vars;
        std::vector<ir::Expr> indices;
        for (size_t d = 0; d < shape.size(); ++d) {
            vars.push_back(ir::makeVar("i" + std::to_string(d), DType::Int32, c.range));
            indices.push_back(vars.back());
        }
        ir::Expr old = std::make_shared<ir::Load>(dst->buffer, indices, c.range), reduced = std::make_shared<ir::Load>(out, indices, c.range);
        if (old->dtype != out->dtype) old = ir::cast(out->dtype, old);   // (f32 staging of a narrow float)
        ir::BinaryOp with = op == ir::ReduceOp::Max || op == ir::ReduceOp::AbsMax ? ir::BinaryOp::Max
                            : op == ir::ReduceOp::Min                             ? ir::BinaryOp::Min
                                                                                  : ir::BinaryOp::Add;
        ir::Expr value = ir::binary(with, old, reduced);
        if (value->dtype != dst->buffer->dtype) value = ir::cast(dst->buffer->dtype, value);
        ir::Stmt loop = std::make_shared<ir::Store>(dst->buffer, indices, value, ir::StoreOp::Assign, c.range);
        for (size_t d = shape.size(); d-- > 0;)
            loop = std::make_shared<ir::For>(vars[d], ir::intImm(0), ir::intImm(shape[d]), ir::ForKind::Parallel, loop, c.range);
        return loop;
    };
    auto reduce = [&](bool clearing) {
        ir::Stmt r = std::make_shared<ir::Reduce>(op, in, out, static_cast<int>(dim), out == dst->buffer ? clearing : true, c.range);
        if (out == dst->buffer) return r;
        return ir::seq({r, clearing ? copy(out, dst->buffer) : combined()});
    };
    ir::Stmt reduction;
    if (std::optional<int64_t> constant = ir::constInt(clear)) reduction = reduce(*constant != 0);
    else reduction = std::make_shared<ir::IfThenElse>(clear, reduce(true), reduce(false), clearRange);
    if (in != src->buffer) reduction = ir::seq({copy(src->buffer, in), reduction});
    for (const ir::Buffer &b : {out, in})
        if (b->scope == ir::MemScope::Fragment && b != src->buffer && b != dst->buffer) reduction = std::make_shared<ir::Allocate>(b, reduction, c.range);
    return reduction;
}

// finalize_reducer(r): the reducer's partial results combined (what each
// state of a reducer allows is checked over the whole kernel, ReducerCheck).
ir::Stmt Checker::checkFinalizeReducer(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 1, 1, {});
    if (!args) return nullptr;
    std::optional<RegionRef> r = checkRegionArg(*args->positional[0], "reducer");
    if (!r) return nullptr;
    if (!r->whole || !r->buffer->reducer) {
        diags_.error(r->range, "finalize_reducer takes a buffer made by alloc_reducer" +
                                   std::string(r->buffer->reducer ? ", named without indices" : "; '" + r->buffer->name + "' is not one"));
        return nullptr;
    }
    return std::make_shared<ir::FinalizeReducer>(r->buffer, c.range);
}

// annotate_layout(x, make_mma_swizzle_layout(x [, is_smooth = b])) naming
// shared buffer `buffer` as x: TileLang's T.annotate_layout with its MMA
// swizzle, which XOR-permutes the 16-byte chunks of rows of a multiple of 64
// bytes in segments of min(128, row bytes) (`is_smooth = true`, or other
// rows: linear); tilet's segments must divide the row, so a 192-byte row
// takes 64-byte ones. Nullopt when `c` is not such an annotation of `name`.
std::optional<ir::SharedSwizzle> annotatedSwizzle(const ast::Call &c, const std::string &name, const ir::BufferNode &buffer) {
    if (c.callee != "annotate_layout" || c.args.size() != 2 || !c.args[0].name.empty() || !c.args[1].name.empty()) return std::nullopt;
    const ast::Expr &target = *c.args[0].value, &layout = *c.args[1].value;
    if (target.kind != ast::ExprKind::Name || static_cast<const ast::Name &>(target).name != name) return std::nullopt;
    if (layout.kind != ast::ExprKind::Call) return std::nullopt;
    const ast::Call &make = static_cast<const ast::Call &>(layout);
    if (make.callee != "make_mma_swizzle_layout" || make.args.empty() || !make.args[0].name.empty() ||
        make.args[0].value->kind != ast::ExprKind::Name || static_cast<const ast::Name &>(*make.args[0].value).name != name)
        return std::nullopt;
    bool smooth = false;
    for (size_t i = 1; i < make.args.size(); ++i) {
        const ast::Arg &a = make.args[i];
        if (a.name != "is_smooth" || a.value->kind != ast::ExprKind::BoolLit) return std::nullopt;
        smooth = static_cast<const ast::BoolLit &>(*a.value).value;
    }
    std::optional<std::vector<int64_t>> shape = buffer.constShape();
    if (!shape || shape->size() < 2) return std::nullopt;
    int64_t rowBits = shape->back() * dtypeBits(buffer.dtype);
    if (smooth || dtypeBits(buffer.dtype) < 8 || rowBits % 512 != 0) return ir::SharedSwizzle::None;
    return rowBits % 1024 == 0 ? ir::SharedSwizzle::B128 : ir::SharedSwizzle::B64;
}

// annotate_layout(x, layout): applied where x is allocated (checkAlloc);
// here it is checked.
ir::Stmt Checker::checkAnnotateLayout(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
    if (!args) return nullptr;
    std::optional<RegionRef> r = checkRegionArg(*args->positional[0], "annotated buffer");
    if (!r) return nullptr;
    const ir::BufferNode &b = *r->buffer;
    if (!r->whole || b.scope != ir::MemScope::Shared || b.rank() < 2) {
        diags_.error(r->range, "annotate_layout sets the bank swizzle of a shared buffer of two or more dimensions, named without indices; '" +
                                   b.name + "' is " + (b.scope != ir::MemScope::Shared ? std::string(ir::memScopeName(b.scope)) + " (its layout is inferred)"
                                                       : !r->whole ? std::string("indexed") : std::string("one-dimensional")));
        return nullptr;
    }
    const ast::Expr &layout = *args->positional[1];
    const ast::Call *make = layout.kind == ast::ExprKind::Call ? static_cast<const ast::Call *>(&layout) : nullptr;
    if (!make || make->callee != "make_mma_swizzle_layout") {
        diags_.error(layout.range, "annotate_layout takes make_mma_swizzle_layout(" + b.name + "); other layouts are not supported yet");
        return nullptr;
    }
    if (!matchArgs(*make, 1, 1, {"is_smooth"})) return nullptr;
    if (const ast::Expr *smooth = make->args.size() > 1 ? make->args[1].value.get() : nullptr; smooth && !checkConstBool(*smooth, "is_smooth"))
        return nullptr;
    const ast::Expr &of = *make->args[0].value;
    if (of.kind != ast::ExprKind::Name || static_cast<const ast::Name &>(of).name != b.name) {
        diags_.error(of.range, "make_mma_swizzle_layout describes the annotated buffer: make_mma_swizzle_layout(" + b.name + ")");
        return nullptr;
    }
    std::optional<ir::SharedSwizzle> sw = annotatedSwizzle(c, b.name, b);
    if (!sw || *sw != b.swizzle) {
        diags_.error(c.range, "annotate_layout(" + b.name + ", ...) must be a statement of the block that allocates '" + b.name +
                                  "', after the allocation: its layout holds from the start");
        return nullptr;
    }
    return ir::seq({});
}

// im2col(image, dst, nhw_step, c_step, kernel, stride, dilation, pad):
// TileLang's T.im2col (ir::Im2Col has the meaning).
ir::Stmt Checker::checkIm2Col(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 8, 8, {});
    if (!args) return nullptr;
    std::optional<RegionRef> image = checkRegionArg(*args->positional[0], "image");
    std::optional<RegionRef> dst = checkRegionArg(*args->positional[1], "destination");
    std::optional<ir::Expr> nhwStep = checkInteger(*args->positional[2], "nhw_step");
    std::optional<ir::Expr> cStep = checkInteger(*args->positional[3], "c_step");
    std::optional<int64_t> kernel = checkConstInt(*args->positional[4], "kernel size");
    std::optional<int64_t> stride = checkConstInt(*args->positional[5], "stride");
    std::optional<int64_t> dilation = checkConstInt(*args->positional[6], "dilation");
    std::optional<int64_t> pad = checkConstInt(*args->positional[7], "padding");
    if (!image || !dst || !nhwStep || !cStep || !kernel || !stride || !dilation || !pad) return nullptr;
    bool ok = true;
    const ir::BufferNode &img = *image->buffer;
    if (!image->whole || img.scope != ir::MemScope::Global || img.rank() != 4 || !img.constShape()) {
        diags_.error(image->range, "im2col reads a whole global NHWC image of constant shape [N, H, W, C], named without indices; '" + img.name +
                                       "' is " + (img.scope != ir::MemScope::Global ? std::string(ir::memScopeName(img.scope))
                                                  : img.rank() != 4 ? std::to_string(img.rank()) + "-dimensional"
                                                  : !image->whole ? std::string("indexed") : std::string("of dynamic shape")));
        ok = false;
    }
    std::optional<ir::Region> d = completeRegion(*dst, {});
    if (!d) return nullptr;
    if (d->buffer->scope != ir::MemScope::Shared || d->tileShape().size() != 2) {
        diags_.error(dst->range, "im2col writes a two-dimensional tile of shared memory (rows: output pixels, columns: kernel taps x channels); '" +
                                     d->buffer->name + "' is " + (d->buffer->scope != ir::MemScope::Shared ? std::string(ir::memScopeName(d->buffer->scope))
                                                                  : "a " + std::to_string(d->tileShape().size()) + "-dimensional tile"));
        ok = false;
    }
    if (ok && (d->buffer->dtype != img.dtype || isSubByte(img.dtype))) {
        diags_.error(c.range, "im2col moves elements without converting them: the image is " + std::string(dtypeName(img.dtype)) + " and '" +
                                  d->buffer->name + "' is " + std::string(dtypeName(d->buffer->dtype)) + (isSubByte(img.dtype) ? " (packed types are not supported)" : ""));
        ok = false;
    }
    for (auto [value, what, index] : {std::tuple{*kernel, "kernel size", 4}, std::tuple{*stride, "stride", 5}, std::tuple{*dilation, "dilation", 6}}) {
        if (value <= 0 || value > 1024) {
            diags_.error(args->positional[index]->range, std::string(what) + " must be between 1 and 1024, found " + std::to_string(value));
            ok = false;
        }
    }
    if (*pad < 0 || *pad > 1024) {
        diags_.error(args->positional[7]->range, "padding must be between 0 and 1024, found " + std::to_string(*pad));
        ok = false;
    }
    if (!ok) return nullptr;
    auto op = std::make_shared<ir::Im2Col>(image->buffer, *d, *nhwStep, *cStep, c.range);
    op->kernel = *kernel;
    op->stride = *stride;
    op->dilation = *dilation;
    op->pad = *pad;
    if (op->outHeight() <= 0 || op->outWidth() <= 0) {
        diags_.error(c.range, "the " + std::to_string(*kernel) + "x" + std::to_string(*kernel) + " kernel (dilation " + std::to_string(*dilation) +
                                  ", padding " + std::to_string(*pad) + ") does not fit the " + std::to_string(*ir::constInt(img.shape[1])) + "x" +
                                  std::to_string(*ir::constInt(img.shape[2])) + " image: no output pixel");
        return nullptr;
    }
    return op;
}

// atomic_addx2 / atomic_addx4(dst, value) (TileLang's T.atomic_addx2 /
// T.atomic_addx4, which take element pointers): `lanes` consecutive elements
// of dst's last dimension from the element named (or the slice of that many)
// each get the element of value at the same offset added atomically, as
// TileLang's half2 / float4 atomics add each element atomically. Anywhere an
// element atomic_add may stand, parallel loops included.
ir::Stmt Checker::checkAtomicAddLanes(const ast::Call &c, int64_t lanes) {
    std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
    if (!args) return nullptr;
    std::optional<RegionRef> dst = checkRegionArg(*args->positional[0], "destination");
    std::optional<RegionRef> src = checkRegionArg(*args->positional[1], "value");
    if (!dst || !src) return nullptr;
    const std::string form = c.callee + "(dst[i, j], value[k, l])";
    auto lanesFrom = [&](const RegionRef &r, const char *what) {
        bool ok = !r.whole && static_cast<int>(r.mins.size()) == r.buffer->rank();
        for (size_t d = 0; ok && d < r.extents.size(); ++d) {
            const bool last = d + 1 == r.extents.size();
            ok = !r.extents[d] || *r.extents[d] == (last ? lanes : 1);
        }
        if (!ok)
            diags_.error(r.range, std::string(what) + " of " + c.callee + " is an element (the first of " + std::to_string(lanes) +
                                      " along the last dimension) or a slice of " + std::to_string(lanes) + " elements of it: " + form);
        return ok;
    };
    if (!lanesFrom(*dst, "the destination") || !lanesFrom(*src, "the value")) return nullptr;
    if (dst->buffer->scope != ir::MemScope::Global && dst->buffer->scope != ir::MemScope::Shared) {
        diags_.error(dst->range, c.callee + " updates global or shared memory; '" + dst->buffer->name + "' is " + ir::memScopeName(dst->buffer->scope));
        return nullptr;
    }
    const DType t = dst->buffer->dtype;
    if (!(t == DType::F32 || t == DType::F16 || t == DType::BF16)) {
        diags_.error(dst->range, c.callee + " adds f32, f16 or bf16 elements; '" + dst->buffer->name + "' is " + std::string(dtypeName(t)));
        return nullptr;
    }
    std::vector<ir::Stmt> adds;
    for (int64_t v = 0; v < lanes; ++v) {
        auto at = [&](const RegionRef &r) {
            std::vector<ir::Expr> indices = r.mins;
            indices.back() = ir::add(indices.back(), ir::intImm(v));
            return indices;
        };
        ir::Expr value = std::make_shared<ir::Load>(src->buffer, at(*src), src->range);
        adds.push_back(std::make_shared<ir::Store>(dst->buffer, at(*dst), ir::cast(t, value), ir::StoreOp::AtomicAdd, c.range, ir::MemoryOrder::Relaxed));
    }
    return ir::seq(std::move(adds));
}

// TileLang's memory orders (memory_order = "..."), among `allowed`; consume
// is acquire, as in C++ compilers and libcu++. An absent keyword is
// `absent` (seq_cst, TileLang's default for atomic_load and atomic_store).
std::optional<ir::MemoryOrder> Checker::checkMemoryOrder(const ast::Expr *order, const std::vector<std::string> &allowed, const char *what,
                                                         ir::MemoryOrder absent) {
    if (!order) return absent;
    std::optional<std::string> w = checkWord(*order, allowed, what);
    if (!w) return std::nullopt;
    return *w == "consume" || *w == "acquire" ? ir::MemoryOrder::Acquire
           : *w == "release"                  ? ir::MemoryOrder::Release
           : *w == "acq_rel"                  ? ir::MemoryOrder::AcqRel
           : *w == "seq_cst"                  ? ir::MemoryOrder::SeqCst
                                              : ir::MemoryOrder::Relaxed;
}

// The one element of a global tensor an atomic load or store names
// (`Flag[i]`): single-copy atomic 32- and 64-bit words (PTX ISA, "Memory
// Consistency Model": ld/st .relaxed/.acquire/.release).
bool Checker::checkAtomicElement(const ast::Expr &e, const char *what, ir::Buffer &buffer, std::vector<ir::Expr> &indices) {
    std::optional<RegionRef> r = checkRegionArg(e, what);
    if (!r) return false;
    if (r->buffer->scope != ir::MemScope::Global) {
        diags_.error(r->range, std::string(what) + " is an element of a global tensor; '" + r->buffer->name + "' is " + std::string(ir::memScopeName(r->buffer->scope)));
        return false;
    }
    DType t = r->buffer->dtype;
    if (!(t == DType::Int32 || t == DType::UInt32 || t == DType::Int64 || t == DType::UInt64 || t == DType::F32 || t == DType::F64)) {
        diags_.error(r->range, std::string(what) + " is a 32- or 64-bit element (int32, uint32, int64, uint64, f32, f64); '" + r->buffer->name + "' is " +
                                   std::string(dtypeName(t)));
        return false;
    }
    if (!r->hasUnknownExtents() || static_cast<int>(r->mins.size()) != r->buffer->rank()) {
        diags_.error(r->range, std::string(what) + " is one element: one index per dimension of '" + r->buffer->name + "'");
        return false;
    }
    if (!checkConstIndices(*r->buffer, r->mins, std::vector<SourceRange>(r->mins.size(), r->range))) return false;
    buffer = r->buffer;
    indices = r->mins;
    return true;
}

ir::Stmt Checker::checkAtomicStore(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 2, 2, {"memory_order"});
    if (!args) return nullptr;
    std::optional<ir::MemoryOrder> order = checkMemoryOrder(args->keyword("memory_order"), {"relaxed", "release", "seq_cst"}, "memory order of a store");
    ir::Buffer buffer;
    std::vector<ir::Expr> indices;
    if (!order || !checkAtomicElement(*args->positional[0], "atomic_store's destination", buffer, indices)) return nullptr;
    if (parallelDepth_ > 0) {
        diags_.error(c.calleeRange, "atomic_store is thread-level code: each thread that runs it stores once (not inside a parallel loop)");
        return nullptr;
    }
    std::optional<Value> v = checkValue(*args->positional[1]);
    if (!v) return nullptr;
    std::optional<ir::Expr> e = convert(*v, buffer->dtype, v->range);
    if (!e) return nullptr;
    return std::make_shared<ir::Store>(buffer, indices, *e, ir::StoreOp::AtomicStore, c.range, *order);
}

ir::Stmt Checker::checkAtomicLoad(const ast::Call &c, const ir::Buffer &into) {
    std::optional<CallArgs> args = matchArgs(c, 1, 1, {"memory_order"});
    if (!args) return nullptr;
    std::optional<ir::MemoryOrder> order =
        checkMemoryOrder(args->keyword("memory_order"), {"relaxed", "consume", "acquire", "seq_cst"}, "memory order of a load");
    ir::Buffer buffer;
    std::vector<ir::Expr> indices;
    if (!order || !checkAtomicElement(*args->positional[0], "atomic_load's source", buffer, indices)) return nullptr;
    if (parallelDepth_ > 0) {
        diags_.error(c.calleeRange, "atomic_load is thread-level code: its var holds one value per thread (not inside a parallel loop)");
        return nullptr;
    }
    if (into->dtype != buffer->dtype) {
        diags_.error(c.range, "atomic_load of " + std::string(dtypeName(buffer->dtype)) + " element '" + buffer->name + "' goes into a var of the same type; '" +
                                  into->name + "' is " + std::string(dtypeName(into->dtype)));
        return nullptr;
    }
    ir::Expr source = std::make_shared<ir::Load>(buffer, indices, args->positional[0]->range);
    ir::Expr destination = std::make_shared<ir::Load>(into, std::vector<ir::Expr>{}, c.range);
    return std::make_shared<ir::AtomicLoad>(source, destination, *order, c.range);
}

ir::Stmt Checker::checkAtomicAdd(const ast::Call &c, const ir::Buffer *previousInto) {
    std::optional<CallArgs> args = matchArgs(c, 2, 2, {"memory_order", "use_tma", "return_prev"});
    if (!args) return nullptr;
    bool useTma = false;
    if (const ast::Expr *tma = args->keyword("use_tma")) {
        std::optional<bool> b = checkConstBool(*tma, "use_tma");
        if (!b) return nullptr;
        useTma = *b;
    }
    // TileLang's return_prev: the element's value before the add, which
    // only an assignment to a var takes.
    bool returnPrev = false;
    if (const ast::Expr *prev = args->keyword("return_prev")) {
        std::optional<bool> b = checkConstBool(*prev, "return_prev");
        if (!b) return nullptr;
        returnPrev = *b;
        if (returnPrev && !previousInto) {
            diags_.error(prev->range, "atomic_add(..., return_prev = true) gives the element's previous value: assign it to a var, `v = atomic_add(...)`");
            return nullptr;
        }
    }
    if (previousInto && !returnPrev) {
        diags_.error(c.calleeRange, "atomic_add has a value only with return_prev = true: `v = atomic_add(dst[i], value, return_prev = true)`");
        return nullptr;
    }
    // TileLang's atomic_add is relaxed unless told otherwise.
    std::optional<ir::MemoryOrder> order = checkMemoryOrder(args->keyword("memory_order"), {"relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst"},
                                                            "memory order", ir::MemoryOrder::Relaxed);
    if (!order) return nullptr;
    const ir::MemoryOrder memoryOrder = *order;
    std::optional<RegionRef> dst = checkRegionArg(*args->positional[0], "destination");
    if (!dst) return nullptr;
    if (dst->buffer->scope != ir::MemScope::Global && dst->buffer->scope != ir::MemScope::Shared) {
        diags_.error(dst->range, "atomic_add updates global or shared memory; '" + dst->buffer->name + "' is " + ir::memScopeName(dst->buffer->scope));
        return nullptr;
    }
    DType t = dst->buffer->dtype;
    if (!(t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16 || t == DType::Int32 || t == DType::UInt32 ||
          t == DType::UInt64 || t == DType::Int64)) {
        diags_.error(dst->range, "atomic_add does not support " + std::string(dtypeName(t)) + " elements");
        return nullptr;
    }
    const ast::Expr &srcExpr = *args->positional[1];
    bool srcIsBuffer = false;
    if (isRegionExpr(srcExpr)) {
        const ast::Name &n = srcExpr.kind == ast::ExprKind::Name ? static_cast<const ast::Name &>(srcExpr)
                                                                  : static_cast<const ast::Name &>(*static_cast<const ast::Index &>(srcExpr).base);
        const Symbol *sym = lookup(n.name);
        // An element read (A[i, j] of the right rank) inside a parallel loop is
        // a scalar value. So it is anywhere when the destination is one
        // element too: neither side has an extent, as TileLang's atomic_add
        // tells its scalar form from the tile form (`atomic_add(C_shared[tn],
        // C_accum[0])`, every thread adding its own value).
        bool elementRead = false;
        if (srcExpr.kind == ast::ExprKind::Index && sym && sym->buffer) {
            const auto &items = static_cast<const ast::Index &>(srcExpr).items;
            elementRead = static_cast<int>(items.size()) == sym->buffer->rank() &&
                          std::all_of(items.begin(), items.end(), [](const ast::IndexItem &i) { return !i.isSlice(); });
        }
        srcIsBuffer = sym && (sym->kind == SymbolKind::Tensor || sym->kind == SymbolKind::Buffer) &&
                      (srcExpr.kind == ast::ExprKind::Name || (parallelDepth_ == 0 && !(elementRead && dst->hasUnknownExtents())));
    }
    if (useTma && !srcIsBuffer) {
        diags_.error(args->keyword("use_tma")->range, "use_tma = true adds a shared tile into a global tensor: atomic_add(C[...], C_shared, use_tma = true)");
        return nullptr;
    }
    if (returnPrev && !(dst->hasUnknownExtents() && !srcIsBuffer)) {
        diags_.error(dst->range, "return_prev = true gives the previous value of one element: atomic_add(dst[i, j], value, return_prev = true)");
        return nullptr;
    }
    if (dst->hasUnknownExtents() && !srcIsBuffer) {
        // atomic_add(C[i, j], value): one element.
        if (static_cast<int>(dst->mins.size()) != dst->buffer->rank()) {
            diags_.error(dst->range, "an element update needs one index per dimension of '" + dst->buffer->name + "'");
            return nullptr;
        }
        if (!checkConstIndices(*dst->buffer, dst->mins, std::vector<SourceRange>(dst->mins.size(), dst->range))) return nullptr;
        std::optional<Value> v = checkValue(srcExpr);
        if (!v) return nullptr;
        std::optional<ir::Expr> e = convert(*v, t, v->range);
        if (!e) return nullptr;
        if (previousInto) {
            // A var inside a parallel loop is one register of each thread, not one per element.
            if (parallelDepth_ > 0) {
                diags_.error(c.calleeRange, "return_prev = true is not supported inside a parallel loop (its var holds one value per thread, not per element)");
                return nullptr;
            }
            if ((*previousInto)->dtype != t) {
                diags_.error(c.range, "the previous value of " + std::string(dtypeName(t)) + " element '" + dst->buffer->name + "' goes into a var of the same type; '" +
                                          (*previousInto)->name + "' is " + std::string(dtypeName((*previousInto)->dtype)));
                return nullptr;
            }
            ir::Expr target = std::make_shared<ir::Load>(dst->buffer, dst->mins, dst->range);
            ir::Expr previous = std::make_shared<ir::Load>(*previousInto, std::vector<ir::Expr>{}, c.range);
            return std::make_shared<ir::AtomicFetchAdd>(target, *e, previous, memoryOrder, c.range);
        }
        return std::make_shared<ir::Store>(dst->buffer, dst->mins, *e, ir::StoreOp::AtomicAdd, c.range, memoryOrder);
    }
    if (parallelDepth_ > 0) {
        diags_.error(c.calleeRange, "inside a parallel loop, atomic_add updates one element: atomic_add(C[i, j], value)");
        return nullptr;
    }
    if (srcIsBuffer) {
        std::optional<RegionRef> src = checkRegionArg(srcExpr, "source");
        if (!src) return nullptr;
        ir::Region s, d;
        if (!resolveCopyRegions(*src, *dst, s, d, "atomic_add", c.range)) return nullptr;
        if (useTma) return tmaReduceAdd(c, *args, s, d);
        return std::make_shared<ir::AtomicAdd>(d, s, nullptr, memoryOrder, c.range);
    }
    std::optional<ir::Region> d = completeRegion(*dst, {});
    if (!d) return nullptr;
    std::optional<Value> v = checkValue(srcExpr);
    if (!v) return nullptr;
    std::optional<ir::Expr> e = convert(*v, t, v->range);
    if (!e) return nullptr;
    return std::make_shared<ir::AtomicAdd>(*d, std::nullopt, *e, memoryOrder, c.range);
}

// atomic_add(C[...], C_shared, use_tma = true): TileLang's TMA reduction, a
// copy whose shared tile TMA adds into the global region
// (cp.reduce.async.bulk.tensor .add, PTX ISA 8.0, sm_90).
ir::Stmt Checker::tmaReduceAdd(const ast::Call &c, const CallArgs &args, const ir::Region &src, const ir::Region &dst) {
    // cp.reduce.async.bulk is relaxed: memory_order = relaxed says so
    // (TileLang ignores the order there); another order is an error.
    if (const ast::Expr *order = args.keyword("memory_order")) {
        const bool relaxed = order->kind == ast::ExprKind::Name && static_cast<const ast::Name &>(*order).name == "relaxed";
        if (!relaxed) {
            diags_.error(order->range, "a TMA reduction (cp.reduce.async.bulk) is relaxed: memory_order other than relaxed cannot be given with use_tma = true");
            return nullptr;
        }
    }
    if (src.buffer->scope != ir::MemScope::Shared || dst.buffer->scope != ir::MemScope::Global) {
        diags_.error(c.calleeRange, "use_tma = true adds a shared tile into a global tensor; this adds " + std::string(ir::memScopeName(src.buffer->scope)) +
                                        " '" + src.buffer->name + "' into " + ir::memScopeName(dst.buffer->scope) + " '" + dst.buffer->name + "'");
        return nullptr;
    }
    DType t = dst.buffer->dtype;
    if (src.buffer->dtype != t) {
        diags_.error(c.calleeRange, "a TMA reduction does not convert: '" + src.buffer->name + "' holds " + std::string(dtypeName(src.buffer->dtype)) + ", '" +
                                        dst.buffer->name + "' " + std::string(dtypeName(t)));
        return nullptr;
    }
    if (!(t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::Int32 || t == DType::UInt32 || t == DType::UInt64)) {
        diags_.error(c.calleeRange, "a TMA reduction adds f32, f16, bf16, int32, uint32 or uint64 elements, not " + std::string(dtypeName(t)));
        return nullptr;
    }
    auto copy = std::make_shared<ir::Copy>(src, dst, c.range);
    copy->reduceAdd = true;
    return copy;
}

std::optional<std::pair<ir::Buffer, std::vector<ir::Expr>>> Checker::checkElementRef(const ast::Expr &e, const char *what) {
    const ast::Expr *base = e.kind == ast::ExprKind::Index ? static_cast<const ast::Index &>(e).base.get() : &e;
    if (base->kind != ast::ExprKind::Name) {
        diags_.error(e.range, std::string("the ") + what + " is an element of a buffer");
        return std::nullopt;
    }
    const auto &name = static_cast<const ast::Name &>(*base);
    const Symbol *sym = lookup(name.name);
    if (!sym) {
        reportUnknown(name.name, name.range, "identifier");
        return std::nullopt;
    }
    if (sym->invalid) return std::nullopt;
    if (sym->kind == SymbolKind::Mutable && e.kind == ast::ExprKind::Name) return std::pair{sym->buffer, std::vector<ir::Expr>{}};
    if ((sym->kind != SymbolKind::Buffer && sym->kind != SymbolKind::Tensor) || e.kind != ast::ExprKind::Index) {
        diags_.error(e.range, std::string("the ") + what + " is an element of a buffer, such as " + name.name + "[i]");
        return std::nullopt;
    }
    const ir::Buffer &buffer = sym->buffer;
    const auto &items = static_cast<const ast::Index &>(e).items;
    if (static_cast<int>(items.size()) != buffer->rank()) {
        diags_.error(e.range, "'" + buffer->name + "' has " + std::to_string(buffer->rank()) + " dimension" + (buffer->rank() == 1 ? "" : "s") +
                                  " but is indexed with " + std::to_string(items.size()));
        return std::nullopt;
    }
    std::vector<ir::Expr> indices;
    std::vector<SourceRange> ranges;
    bool ok = true;
    for (const auto &item : items) {
        if (item.isSlice()) {
            diags_.error(item.range, std::string("the ") + what + " is one element, not a slice");
            ok = false;
            continue;
        }
        std::optional<ir::Expr> i = checkInteger(*item.begin, "index");
        if (!i) {
            ok = false;
            continue;
        }
        indices.push_back(*i);
        ranges.push_back(item.range);
    }
    if (!ok || !checkConstIndices(*buffer, indices, ranges)) return std::nullopt;
    return std::pair{buffer, indices};
}

// dp4a(a, b, c): TileLang's T.dp4a. c (an int32 or uint32 element of a local
// buffer, or a var) += the dot product of the four 8-bit integers from
// element a on and the four from element b on (consecutive elements of the
// last dimension of a local or shared buffer), in 32-bit wrapping
// arithmetic: PTX's dp4a, one instruction (sm_61 and newer).
ir::Stmt Checker::checkDp4a(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 3, 3, {});
    if (!args) return nullptr;
    auto operand = [&](const ast::Expr &e, const char *what) -> ir::Expr {
        auto ref = checkElementRef(e, what);
        if (!ref) return nullptr;
        const ir::Buffer &b = ref->first;
        if (b->scope != ir::MemScope::Local && b->scope != ir::MemScope::Shared) {
            diags_.error(e.range, std::string("dp4a reads its operands from local or shared buffers; '") + b->name + "' is " +
                                      ir::memScopeName(b->scope) + (b->scope == ir::MemScope::Global ? "; copy the bytes into an alloc_local buffer first" : ""));
            return nullptr;
        }
        if (b->dtype != DType::Int8 && b->dtype != DType::UInt8) {
            diags_.error(e.range, std::string("dp4a multiplies int8 or uint8 elements; '") + b->name + "' holds " + std::string(dtypeName(b->dtype)));
            return nullptr;
        }
        if (ref->second.empty()) {
            diags_.error(e.range, std::string("dp4a reads four consecutive elements; '") + b->name + "' holds one");
            return nullptr;
        }
        std::optional<int64_t> last = ir::constInt(ref->second.back()), extent = ir::constInt(b->shape.back());
        if (last && extent && *last + ir::Dp4a::kElements > *extent) {
            diags_.error(e.range, "dp4a reads elements " + std::to_string(*last) + " to " + std::to_string(*last + ir::Dp4a::kElements - 1) +
                                      " of the last dimension of '" + b->name + "', which has " + std::to_string(*extent));
            return nullptr;
        }
        return std::make_shared<ir::Load>(b, ref->second, e.range);
    };
    ir::Expr a = operand(*args->positional[0], "first operand of dp4a");
    ir::Expr b = operand(*args->positional[1], "second operand of dp4a");
    auto acc = checkElementRef(*args->positional[2], "accumulator of dp4a");
    if (!a || !b || !acc) return nullptr;
    const ir::Buffer &cb = acc->first;
    if (cb->scope != ir::MemScope::Local || (cb->dtype != DType::Int32 && cb->dtype != DType::UInt32)) {
        diags_.error(args->positional[2]->range, "dp4a accumulates into an int32 or uint32 element of an alloc_local buffer or a var; '" + cb->name +
                                                     "' is " + (cb->scope == ir::MemScope::Local ? std::string(dtypeName(cb->dtype)) : ir::memScopeName(cb->scope)));
        return nullptr;
    }
    DType result = a->dtype == DType::UInt8 && b->dtype == DType::UInt8 ? DType::UInt32 : DType::Int32;
    ir::Expr current = std::make_shared<ir::Load>(cb, acc->second, args->positional[2]->range);
    ir::Expr dot = std::make_shared<ir::Dp4a>(result, a, b, ir::cast(result, current), c.range);
    return std::make_shared<ir::Store>(cb, acc->second, ir::cast(cb->dtype, dot), ir::StoreOp::Assign, c.range);
}

// import_source("file.cuh") (TileLang's T.import_source): the .cu holds the
// file's CUDA source verbatim, once, before the kernels. ModuleLoader found
// the file; this statement itself does nothing where it stands.
ir::Stmt Checker::checkImportSource(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 1, 1, {});
    if (!args) return nullptr;
    if (auto failed = program_->sourceImportFailures.find(&c); failed != program_->sourceImportFailures.end()) {
        diags_.report(failed->second);
        return nullptr;
    }
    auto found = program_->sourceImportOf.find(&c);
    if (found == program_->sourceImportOf.end()) {
        if (args->positional[0]->kind != ast::ExprKind::StringLit)
            diags_.error(args->positional[0]->range, "import_source takes the name of a CUDA source file, as a string literal: import_source(\"decode.cuh\")");
        return nullptr;
    }
    if (std::find(usedSourceImports_.begin(), usedSourceImports_.end(), found->second) == usedSourceImports_.end())
        usedSourceImports_.push_back(found->second);
    return nullptr;
}

// call_extern("f", args..., dtype = T) (TileLang's T.call_extern) as a
// statement: calls device function f, which an import_source file (or a
// CUDA toolkit header) defines; its result, of type T, is unused. An
// argument is a value or access_ptr(buf, mode) / access_ptr(buf[i, ...],
// mode): the address of the buffer's first (or that) element, through which
// f may read ("r"), write ("w") or both ("rw") the buffer.
ir::Stmt Checker::checkCallExtern(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 1, SIZE_MAX, {"dtype"});
    if (!args) return nullptr;
    const ast::Expr &nameArg = *args->positional[0];
    std::string function;
    if (nameArg.kind == ast::ExprKind::StringLit) function = static_cast<const ast::StringLit &>(nameArg).value;
    bool identifier = !function.empty() && !std::isdigit(static_cast<unsigned char>(function[0]));
    for (size_t i = 0; i < function.size(); ++i) {
        char ch = function[i];
        bool scope = ch == ':' && i + 1 < function.size() && function[i + 1] == ':' && i > 0;
        if (scope) ++i;
        else if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') identifier = false;
    }
    if (!identifier) {
        diags_.error(nameArg.range, "call_extern takes the function's name first, as a string literal naming a C++ identifier: call_extern(\"f\", ...)");
        return nullptr;
    }
    bool ok = true;
    if (const ast::Expr *dtype = args->keyword("dtype")) ok = checkDType(*dtype).has_value();
    std::vector<ir::Expr> values;
    std::vector<ir::ExternArgKind> kinds;
    for (size_t i = 1; i < args->positional.size(); ++i) {
        const ast::Expr &arg = *args->positional[i];
        if (arg.kind != ast::ExprKind::Call || static_cast<const ast::Call &>(arg).callee != "access_ptr") {
            std::optional<Value> v = checkValue(arg);
            if (!v) {
                ok = false;
                continue;
            }
            values.push_back(materialize(*v).expr);
            kinds.push_back(ir::ExternArgKind::Value);
            continue;
        }
        const auto &ptr = static_cast<const ast::Call &>(arg);
        std::optional<CallArgs> ptrArgs = matchArgs(ptr, 2, 2, {});
        if (!ptrArgs) {
            ok = false;
            continue;
        }
        const ast::Expr &target = *ptrArgs->positional[0];
        std::optional<std::pair<ir::Buffer, std::vector<ir::Expr>>> ref;
        if (target.kind == ast::ExprKind::Name) {
            const auto &name = static_cast<const ast::Name &>(target);
            const Symbol *sym = lookup(name.name);
            if (!sym) reportUnknown(name.name, name.range, "identifier");
            else if (sym->invalid) {
            } else if (sym->kind == SymbolKind::Buffer || sym->kind == SymbolKind::Tensor || sym->kind == SymbolKind::Mutable) {
                std::vector<ir::Expr> zeros(static_cast<size_t>(sym->buffer->rank()), ir::intImm(0));
                ref = std::pair{sym->buffer, zeros};
            } else {
                diags_.error(target.range, "access_ptr takes a buffer or an element of one; '" + name.name + "' is a " + symbolKindName(sym->kind));
            }
        } else {
            ref = checkElementRef(target, "first argument of access_ptr");
        }
        const ast::Expr &modeArg = *ptrArgs->positional[1];
        std::string mode = modeArg.kind == ast::ExprKind::StringLit ? static_cast<const ast::StringLit &>(modeArg).value : "";
        ir::ExternArgKind kind = mode == "r" ? ir::ExternArgKind::ReadPointer : mode == "w" ? ir::ExternArgKind::WritePointer
                                                                           : ir::ExternArgKind::ReadWritePointer;
        if (mode != "r" && mode != "w" && mode != "rw") {
            diags_.error(modeArg.range, "access_ptr's mode says what the function does with the buffer: \"r\", \"w\" or \"rw\"");
            ok = false;
        }
        if (!ref) {
            ok = false;
            continue;
        }
        const ir::Buffer &b = ref->first;
        if (b->scope != ir::MemScope::Local && b->scope != ir::MemScope::Shared && b->scope != ir::MemScope::Global) {
            diags_.error(target.range, std::string("access_ptr points into a tensor, a shared buffer or an alloc_local buffer; '") + b->name + "' is " +
                                           (b->scope == ir::MemScope::Fragment ? std::string("a fragment, whose elements are spread over the threads' registers")
                                                                               : std::string("in ") + ir::memScopeName(b->scope) + " memory"));
            ok = false;
            continue;
        }
        if (dtypeBits(b->dtype) < 8) {
            diags_.error(target.range, "access_ptr points at a whole byte; '" + b->name + "' holds " + std::string(dtypeName(b->dtype)) +
                                           ", packed below a byte (point into a Tensor(shape, uint8, " + b->name + ") view)");
            ok = false;
            continue;
        }
        values.push_back(std::make_shared<ir::Load>(b, ref->second, target.range));
        kinds.push_back(kind);
    }
    if (!ok) return nullptr;
    return std::make_shared<ir::CallExtern>(function, std::move(values), std::move(kinds), c.range);
}

// fn calls (TileLang's T.macro). A parameter stands for its argument: a
// name (a buffer, variable, index, constant, ...) is the same thing under
// the parameter's name, so the body reads and writes the caller's buffers;
// any other expression is evaluated once, before the body (a let). The body
// sees the file's constants, the kernel's block and thread index names (as
// a macro calls T.get_thread_binding) and its parameters, as a macro sees
// what it is passed; it is checked at each call, in the caller's context
// (inside a parallel loop, its statements are element statements).
ir::Stmt Checker::checkFnCall(const ast::Call &c, const ast::FnDecl &fn) {
    const std::string &name = fn.name.name;
    if (std::find(inlining_.begin(), inlining_.end(), &fn) != inlining_.end()) {
        Diagnostic d{Severity::Error, c.calleeRange, "fn '" + name + "' calls itself; a fn is inlined at its calls, so it cannot recurse", {}, {}};
        d.note(fn.name.range, "'" + name + "' is declared here");
        diags_.report(std::move(d));
        return nullptr;
    }
    bool ok = true;
    for (const ast::Arg &a : c.args) {
        if (!a.name.empty()) {
            diags_.error(a.nameRange, "fn '" + name + "' takes positional arguments only");
            ok = false;
        }
    }
    if (!ok) return nullptr;
    if (c.args.size() != fn.params.size()) {
        Diagnostic d{Severity::Error, c.calleeRange, "fn '" + name + "' takes " + std::to_string(fn.params.size()) + " argument" +
                                                         (fn.params.size() == 1 ? "" : "s") + ", found " + std::to_string(c.args.size()), {}, {}};
        d.note(fn.name.range, "'" + name + "' is declared here");
        diags_.report(std::move(d));
        return nullptr;
    }
    std::map<std::string, Symbol> bound;
    std::vector<std::pair<ir::VarRef, ir::Expr>> lets;
    for (size_t i = 0; i < c.args.size(); ++i) {
        const ast::Expr &arg = *c.args[i].value;
        const ast::Ident &param = fn.params[i];
        Symbol sym;
        if (arg.kind == ast::ExprKind::Name) {
            const std::string &argName = static_cast<const ast::Name &>(arg).name;
            const Symbol *s = lookup(argName);
            if (!s) {
                reportUnknown(argName, arg.range, "identifier");
                ok = false;
                continue;
            }
            sym = *s;
        } else {
            std::optional<Value> v = checkValue(arg);
            if (!v) {
                ok = false;
                continue;
            }
            if (v->constant) {
                sym.kind = SymbolKind::Const;
                sym.constValue = *v;
                sym.fromLet = true;
            } else {
                sym.kind = SymbolKind::Let;
                sym.var = ir::makeVar(param.name, v->type(), param.range);
                lets.push_back({sym.var, v->expr});
            }
        }
        sym.def = param.range;
        bound[param.name] = sym;
    }
    if (!ok) return nullptr;
    std::vector<std::map<std::string, Symbol>> callerScopes = std::move(scopes_);
    // A parameter hides a constant or launch name it shares a name with, as a
    // macro's parameter hides the script's variable (TileLang's MMA0(..., bx, by, bz)).
    scopes_ = {callerScopes.front(), launchNames_};
    for (auto &scope : scopes_)
        for (const ast::Ident &p : fn.params) scope.erase(p.name);
    pushScope();
    for (auto &[paramName, sym] : bound) declare(ast::Ident{paramName, sym.def}, sym);
    inlining_.push_back(&fn);
    enclosingLoops_.push_back(nullptr);
    diags_.pushContext(c.range, "in the call of fn '" + name + "' here");
    ir::Stmt body = checkBlock(fn.body);
    diags_.popContext();
    enclosingLoops_.pop_back();
    inlining_.pop_back();
    scopes_ = std::move(callerScopes);
    if (!body) return nullptr;
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) body = std::make_shared<ir::LetStmt>(it->first, it->second, body, c.range);
    return body;
}

// ------------------------------------------------------------------ barriers

bool Checker::checkBarrierRef(const ast::Expr &e, ir::Buffer &buffer, ir::Expr &index) {
    const ast::Name *name = nullptr;
    const ast::Index *ix = nullptr;
    if (e.kind == ast::ExprKind::Name) name = &static_cast<const ast::Name &>(e);
    else if (e.kind == ast::ExprKind::Index && static_cast<const ast::Index &>(e).base->kind == ast::ExprKind::Name) {
        ix = &static_cast<const ast::Index &>(e);
        name = &static_cast<const ast::Name &>(*ix->base);
    }
    if (!name) {
        diags_.error(e.range, "expected a barrier (from alloc_barrier)");
        return false;
    }
    const Symbol *sym = lookup(name->name);
    if (!sym) {
        reportUnknown(name->name, name->range, "barrier");
        return false;
    }
    if (sym->invalid) return false;
    if (sym->kind != SymbolKind::Buffer || sym->buffer->scope != ir::MemScope::Barrier) {
        diags_.error(e.range, "'" + name->name + "' is not a barrier; allocate one with alloc_barrier(arrive_count = N)");
        return false;
    }
    buffer = sym->buffer;
    int64_t count = static_cast<int64_t>(buffer->arriveCounts.size());
    if (!ix) {
        if (count != 1) {
            diags_.error(e.range, "'" + name->name + "' holds " + std::to_string(count) + " barriers; pick one: " + name->name + "[i]");
            return false;
        }
        index = ir::intImm(0);
        return true;
    }
    if (ix->items.size() != 1 || ix->items[0].isSlice()) {
        diags_.error(e.range, "a barrier array takes one index");
        return false;
    }
    std::optional<ir::Expr> i = checkInteger(*ix->items[0].begin, "barrier index");
    if (!i) return false;
    if (std::optional<int64_t> k = ir::constInt(*i); k && (*k < 0 || *k >= count)) {
        diags_.error(ix->items[0].range, "barrier index " + std::to_string(*k) + " is out of range for '" + name->name + "' (" +
                                              std::to_string(count) + " barrier" + (count == 1 ? "" : "s") + ")");
        return false;
    }
    index = *i;
    return true;
}

bool Checker::requirePairCluster(SourceRange where, const char *what) {
    if (kernel_ && kernel_->pairCluster()) return true;
    diags_.error(where, std::string(what) + " needs the kernel to run in pairs of blocks, the CTA pair of tcgen05's cta_group::2: cluster(2) or cluster(1, 2)");
    return false;
}

std::optional<bool> Checker::checkPairFlag(const CallArgs &args, const char *keyword, const char *what) {
    const ast::Expr *p = args.keyword(keyword);
    if (!p) return false;
    std::optional<bool> v = checkConstBool(*p, keyword);
    if (!v || (*v && !requirePairCluster(p->range, what))) return std::nullopt;
    return v;
}

// barrier_wait(b, parity); barrier_arrive(b [, rank]): with a rank, every
// thread arrives on b of that block of the cluster (TileLang's
// T.mbarrier_arrive(b, cta_id)).
ir::Stmt Checker::checkBarrierOp(const ast::Call &c, bool wait) {
    std::optional<CallArgs> args = matchArgs(c, wait ? 2 : 1, 2, {});
    if (!args) return nullptr;
    ir::Buffer barrier;
    ir::Expr index;
    if (!checkBarrierRef(*args->positional[0], barrier, index)) return nullptr;
    if (!wait) {
        ir::Expr rank;
        if (args->positional.size() == 2) {
            const ast::Expr &r = *args->positional[1];
            if (kernel_ && !kernel_->hasCluster) {
                diags_.error(r.range, "barrier_arrive on another block of the cluster (a block rank) needs a kernel with cluster(...)");
                return nullptr;
            }
            std::optional<ir::Expr> e = checkInteger(r, "block rank");
            if (!e) return nullptr;
            if (std::optional<int64_t> k = ir::constInt(*e); k && !badCluster_ && (*k < 0 || *k >= clusterBlocks())) {
                diags_.error(r.range, "block " + std::to_string(*k) + " is not a block of the cluster (ranks 0 to " + std::to_string(clusterBlocks() - 1) + ")");
                return nullptr;
            }
            rank = *e;
        }
        return std::make_shared<ir::BarrierArrive>(barrier, index, rank, c.range);
    }
    std::optional<ir::Expr> parity = checkInteger(*args->positional[1], "parity");
    if (!parity) return nullptr;
    if (std::optional<int64_t> p = ir::constInt(*parity); p && *p != 0 && *p != 1) {
        diags_.error(args->positional[1]->range, "parity is 0 or 1, found " + std::to_string(*p));
        return nullptr;
    }
    return std::make_shared<ir::BarrierWait>(barrier, index, *parity, c.range);
}

// barrier_arrive_expect_tx(b, bytes) (TileLang's T.mbarrier_arrive_expect_tx):
// one arrival on b whose phase also waits for `bytes` transaction bytes --
// the answer of a clc_try_cancel (16), or bulk copies the program issues.
ir::Stmt Checker::checkBarrierArriveExpectTx(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
    if (!args) return nullptr;
    ir::Buffer barrier;
    ir::Expr index;
    if (!checkBarrierRef(*args->positional[0], barrier, index)) return nullptr;
    std::optional<int64_t> bytes = checkConstInt(*args->positional[1], "transaction bytes");
    if (!bytes) return nullptr;
    // mbarrier's tx-count range (PTX ISA, "Contents of the mbarrier object": 2^20 - 1).
    if (*bytes < 0 || *bytes > (1 << 20) - 1) {
        diags_.error(args->positional[1]->range, "an mbarrier's phase waits for 0 to 1048575 transaction bytes, found " + std::to_string(*bytes));
        return nullptr;
    }
    return std::make_shared<ir::BarrierExpectTx>(barrier, index, *bytes, true, c.range);
}

// The answer of a cluster-launch-control request: 16 bytes of shared
// memory, four uint32 (or int32) elements, the last dimension of the buffer
// (`clc_result` of shape [4], or `clc_result[s, :]` of [stages, 4]).
ir::Expr Checker::checkClcAnswer(const ast::Expr &e, const std::string &op) {
    const ast::Expr *base = e.kind == ast::ExprKind::Index ? static_cast<const ast::Index &>(e).base.get() : &e;
    const Symbol *sym = base->kind == ast::ExprKind::Name ? lookup(static_cast<const ast::Name &>(*base).name) : nullptr;
    if (sym && sym->invalid) return nullptr;
    const std::string form = "a shared buffer of four uint32 (alloc_shared([4], uint32), or a row r[s, :] of alloc_shared([S, 4], uint32))";
    if (!sym || sym->kind != SymbolKind::Buffer || sym->buffer->scope != ir::MemScope::Shared) {
        diags_.error(e.range, "the answer of " + op + " is " + form);
        return nullptr;
    }
    const ir::Buffer &b = sym->buffer;
    std::optional<int64_t> last = ir::constInt(b->shape.back());
    if ((b->dtype != DType::UInt32 && b->dtype != DType::Int32) || !last || *last != 4) {
        diags_.error(e.range, "the answer of " + op + " is 16 bytes, " + form + "; '" + b->name + "' is " + std::string(dtypeName(b->dtype)) +
                                  " with a last dimension of " + (last ? std::to_string(*last) : std::string("run-time length")));
        return nullptr;
    }
    std::vector<ir::Expr> indices;
    if (e.kind == ast::ExprKind::Name) {
        if (b->rank() != 1) {
            diags_.error(e.range, "'" + b->name + "' holds several answers; pick one: " + b->name + "[s, :]");
            return nullptr;
        }
        indices.push_back(ir::intImm(0));
    } else {
        const auto &items = static_cast<const ast::Index &>(e).items;
        if (static_cast<int>(items.size()) != b->rank()) {
            diags_.error(e.range, "'" + b->name + "' has " + std::to_string(b->rank()) + " dimensions but is indexed with " + std::to_string(items.size()));
            return nullptr;
        }
        for (size_t d = 0; d + 1 < items.size(); ++d) {
            if (items[d].isSlice()) {
                diags_.error(items[d].range, "the answer of " + op + " is one row: index every dimension but the last");
                return nullptr;
            }
            std::optional<ir::Expr> i = checkInteger(*items[d].begin, "index");
            if (!i) return nullptr;
            indices.push_back(*i);
        }
        // `:`, `0:4` or the first element, 0.
        const auto &lastItem = items.back();
        std::optional<ir::Expr> first = checkInteger(*lastItem.begin, "index");
        if (!first) return nullptr;
        std::optional<int64_t> k = ir::constInt(*first), end;
        if (lastItem.end) {
            std::optional<ir::Expr> e = checkInteger(*lastItem.end, "index");
            if (!e) return nullptr;
            end = ir::constInt(*e);
        }
        bool whole = k && *k == 0 && (!lastItem.isSlice() || lastItem.openEnd || (end && *end == 4));
        if (!whole) {
            diags_.error(lastItem.range, "the answer of " + op + " is the whole last dimension: " + b->name + "[..., :]");
            return nullptr;
        }
        indices.push_back(ir::intImm(0));
    }
    return std::make_shared<ir::Load>(b, indices, e.range);
}

// clc_try_cancel(answer, b) / clc_try_cancel_multicast(answer, b) (TileLang's
// T.clc_try_cancel[_multicast]; PTX ISA, clusterlaunchcontrol.try_cancel,
// sm_100 and newer): one thread asks to cancel a cluster of the grid that
// has not started; the 16-byte answer lands in `answer` and completes 16
// transaction bytes on barrier b (the multicast form: in every block of the
// cluster). The program expects the bytes (barrier_arrive_expect_tx(b, 16))
// and reads the answer with clc_is_canceled / clc_get_first_ctaid_x after
// waiting on b.
ir::Stmt Checker::checkClcTryCancel(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 2, 2, {});
    if (!args) return nullptr;
    bool multicast = c.callee == "clc_try_cancel_multicast";
    ir::Expr answer = checkClcAnswer(*args->positional[0], c.callee);
    ir::Buffer barrier;
    ir::Expr index;
    if (!checkBarrierRef(*args->positional[1], barrier, index) || !answer) return nullptr;
    if (multicast && kernel_ && !kernel_->hasCluster) {
        diags_.error(c.range, "clc_try_cancel_multicast answers every block of the cluster; a kernel without cluster(...) takes clc_try_cancel");
        return nullptr;
    }
    const ir::Load &at = *ir::as<ir::Load>(answer);
    return std::make_shared<ir::ClcTryCancel>(at.buffer, at.indices, barrier, index, multicast, c.range);
}

// rng_init(seed [, seq [, off]]): TileLang's T.rng_init with its default
// subsequence, the thread's index in the grid's x dimension (threadIdx.x +
// blockIdx.x * threads), and offset 0.
ir::Stmt Checker::checkRngInit(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 1, 3, {"seq", "off"});
    if (!args || !kernel_) return nullptr;
    auto argument = [&](size_t position, const char *keyword) -> const ast::Expr * {
        if (args->positional.size() > position) return args->positional[position];
        return args->keyword(keyword);
    };
    std::optional<ir::Expr> seed = checkInteger(*args->positional[0], "rng_init seed");
    std::optional<ir::Expr> sequence, offset;
    if (const ast::Expr *e = argument(1, "seq")) sequence = checkInteger(*e, "rng_init subsequence (seq)");
    else sequence = ir::add(std::make_shared<ir::SpecialReg>(ir::SpecialKind::ThreadIdx, c.range),
                            ir::mul(std::make_shared<ir::SpecialReg>(ir::SpecialKind::BlockIdxX, c.range), ir::intImm(kernel_->threads)));
    if (const ast::Expr *e = argument(2, "off")) offset = checkInteger(*e, "rng_init offset (off)");
    else offset = ir::intImm(0);
    if (!seed || !sequence || !offset) return nullptr;
    if (!rngState_) rngState_ = ir::makeBuffer("rng_state", DType::UInt32, {ir::intImm(ir::RngInit::kStateWords)}, ir::MemScope::Local, c.range);
    return std::make_shared<ir::RngInit>(rngState_, *seed, *sequence, *offset, c.range);
}

// rng_rand() (uint32, cuRAND's curand) or rng_rand_float() (f32 in (0, 1],
// curand_uniform): the thread's next number, drawn before the statement.
std::optional<Value> Checker::checkRngDraw(const ast::Call &c) {
    if (!matchArgs(c, 0, 0, {})) return std::nullopt;
    if (!kernel_) {
        diags_.error(c.range, c.callee + "() draws from a thread's generator; it has no value outside a kernel");
        return std::nullopt;
    }
    if (drawsNotHere_.place) {
        diags_.error(c.range, c.callee + "() cannot be drawn in " + std::string(drawsNotHere_.place) +
                                  (drawsNotHere_.onHost ? "" : "; draw into a var before the statement"));
        return std::nullopt;
    }
    if (!rngState_) {
        diags_.error(c.range, c.callee + "() needs the thread's generator seeded first: rng_init(seed) before it in the kernel");
        return std::nullopt;
    }
    const bool bits = c.callee == "rng_rand";
    ir::Buffer value = ir::makeBuffer("random", bits ? DType::UInt32 : DType::F32, {}, ir::MemScope::Local, c.range);
    ir::Expr result = std::make_shared<ir::Load>(value, std::vector<ir::Expr>{}, c.range);
    pendingDraws_.push_back({value, std::make_shared<ir::RngDraw>(rngState_, result, bits ? ir::RngDistribution::Bits : ir::RngDistribution::Uniform, c.range)});
    Value v;
    v.range = c.range;
    v.expr = result;
    return v;
}

// thread_allreduce(value, dst, over = t [, op = sum | max | min]): every
// thread contributes `value`; afterwards each holds in `dst` (an element of
// an alloc_local buffer, or a var) the sum (maximum, minimum) over the threads that
// differ from it only in thread index `t` (TVM's tvm_thread_allreduce, which
// TileLang's GEMV calls through a comm_reducer). A group inside one warp
// whose size is a power of two reduces by xor shuffles (every lane ends
// with the same value: each step adds the same two partial sums); any other
// group exchanges through a shared workspace of one element per thread,
// which insert-syncs fences with barriers.
ir::Stmt Checker::checkThreadAllReduce(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 2, 2, {"over", "op"});
    if (!args) return nullptr;
    ir::BinaryOp combineOp = ir::BinaryOp::Add;
    if (const ast::Expr *op = args->keyword("op")) {
        std::optional<std::string> word = checkWord(*op, {"sum", "max", "min"}, "thread_allreduce op");
        if (!word) return nullptr;
        combineOp = *word == "sum" ? ir::BinaryOp::Add : *word == "max" ? ir::BinaryOp::Max : ir::BinaryOp::Min;
    }
    std::optional<Value> value = checkValue(*args->positional[0]);
    const ast::Expr &target = *args->positional[1];
    ir::Buffer dst;
    std::vector<ir::Expr> indices;
    const ast::Expr *base = target.kind == ast::ExprKind::Index ? static_cast<const ast::Index &>(target).base.get() : &target;
    const Symbol *sym = base->kind == ast::ExprKind::Name ? lookup(static_cast<const ast::Name &>(*base).name) : nullptr;
    bool ok = value.has_value();
    if (sym && target.kind == ast::ExprKind::Name && sym->kind == SymbolKind::Mutable) {
        dst = sym->buffer;
    } else if (sym && target.kind == ast::ExprKind::Index && sym->kind == SymbolKind::Buffer && sym->buffer->scope == ir::MemScope::Local) {
        dst = sym->buffer;
        const auto &items = static_cast<const ast::Index &>(target).items;
        if (static_cast<int>(items.size()) != dst->rank()) {
            diags_.error(target.range, "'" + dst->name + "' has " + std::to_string(dst->rank()) + " dimension" + (dst->rank() == 1 ? "" : "s") +
                                           " but is indexed with " + std::to_string(items.size()));
            ok = false;
        }
        for (const auto &item : items) {
            if (item.isSlice()) {
                diags_.error(item.range, "the destination of thread_allreduce is one element");
                ok = false;
                continue;
            }
            std::optional<ir::Expr> e = checkInteger(*item.begin, "index");
            if (e) indices.push_back(*e);
            else ok = false;
        }
    } else {
        diags_.error(target.range, "the destination of thread_allreduce is an element of an alloc_local buffer or a var");
        ok = false;
    }
    if (dst && dst->dtype == DType::Bool) {
        diags_.error(target.range, "thread_allreduce reduces numbers; '" + dst->name + "' holds bool");
        ok = false;
    }
    std::pair<int64_t, int64_t> digit{1, 1};   // stride, extent
    const ast::Expr *over = args->keyword("over");
    if (!over) {
        diags_.error(c.range, "thread_allreduce needs 'over = t', a thread index of the kernel (threads(...) as (...))");
        ok = false;
    } else {
        const Symbol *t = over->kind == ast::ExprKind::Name ? lookup(static_cast<const ast::Name &>(*over).name) : nullptr;
        auto it = t && t->kind == SymbolKind::ThreadIndex ? threadIndexDigits_.find(t->var.get()) : threadIndexDigits_.end();
        if (it == threadIndexDigits_.end()) {
            diags_.error(over->range, "'over' names a thread index of the kernel (threads(X, Y) as (tx, ty))");
            ok = false;
        } else {
            digit = it->second;
        }
    }
    if (!ok) return nullptr;
    std::optional<ir::Expr> converted = convert(*value, dst->dtype, value->range);
    if (!converted) return nullptr;

    auto [stride, extent] = digit;
    auto load = [&] { return std::make_shared<ir::Load>(dst, indices, c.range); };
    // Narrow types add in f32 or int32 (section 7): each partial sum is converted back.
    auto store = [&](ir::Expr v) {
        if (v->dtype != dst->dtype) v = ir::cast(dst->dtype, std::move(v));
        return std::make_shared<ir::Store>(dst, indices, std::move(v), ir::StoreOp::Assign, c.range);
    };
    auto combine = [&](ir::Expr a, ir::Expr b) { return ir::binary(combineOp, std::move(a), std::move(b)); };
    std::vector<ir::Stmt> steps{store(*converted)};
    bool powerOfTwo = (extent & (extent - 1)) == 0;
    bool shuffles = stride * extent <= 32 && powerOfTwo && (dst->dtype == DType::F32 || dst->dtype == DType::Int32);
    if (shuffles) {
        for (int64_t lanes = stride; lanes < stride * extent; lanes *= 2)
            steps.push_back(store(combine(load(), std::make_shared<ir::Shuffle>(load(), lanes, c.range))));
        threadCollectives_.insert(steps.front().get());   // its first statement survives flattening
        return ir::seq(std::move(steps));
    }
    int64_t threads = kernel_ ? kernel_->threads : 128;
    ir::Buffer ws = ir::makeBuffer(dst->name + "_allreduce", dst->dtype, {ir::intImm(threads)}, ir::MemScope::Shared, c.range);
    ir::Expr tid = ir::threadIdx();
    // The group's first thread: this thread with digit `over` = 0.
    ir::Expr first = ir::add(ir::mod(tid, ir::intImm(stride)), ir::mul(ir::div(tid, ir::intImm(stride * extent)), ir::intImm(stride * extent)));
    if (stride == 1) first = ir::mul(ir::div(tid, ir::intImm(extent)), ir::intImm(extent));
    auto member = [&](ir::Expr j) { return std::make_shared<ir::Load>(ws, std::vector<ir::Expr>{ir::add(first, ir::mul(j, ir::intImm(stride)))}, c.range); };
    ir::VarRef j = ir::makeVar("j", DType::Int32, c.range);
    std::vector<ir::Stmt> body{std::make_shared<ir::Store>(ws, std::vector<ir::Expr>{tid}, load(), ir::StoreOp::Assign, c.range),
                               store(member(ir::intImm(0))),
                               std::make_shared<ir::For>(j, ir::intImm(1), ir::intImm(extent - 1), ir::ForKind::Serial,
                                                         store(combine(load(), member(j))), c.range)};
    steps.push_back(std::make_shared<ir::Allocate>(ws, ir::seq(std::move(body)), c.range));
    threadCollectives_.insert(steps.front().get());   // its first statement survives flattening
    return ir::seq(std::move(steps));
}

// cumsum(src [, dst], dim = d, reverse = r): TileLang's T.cumsum, the
// inclusive running sum along dimension d (from the end with reverse =
// true) of a shared or local buffer, into dst (src itself by default).
// Lowered to element statements: each line along d is scanned in order by
// one thread -- line l of a shared buffer by thread l % threads (a branch on
// the thread index, which insert-syncs orders as a whole), every line of a
// local buffer by its own thread.
ir::Stmt Checker::checkCumsum(const ast::Call &c) {
    std::optional<CallArgs> args = matchArgs(c, 1, 2, {"dim", "reverse"});
    if (!args) return nullptr;
    auto wholeBuffer = [&](const ast::Expr &e, const char *what) -> ir::Buffer {
        std::optional<RegionRef> r = checkRegionArg(e, what);
        if (!r) return nullptr;
        if (!r->whole) {
            diags_.error(r->range, std::string("the ") + what + " of cumsum is a whole buffer");
            return nullptr;
        }
        if (r->buffer->scope != ir::MemScope::Shared && r->buffer->scope != ir::MemScope::Local) {
            diags_.error(r->range, "cumsum of " + std::string(ir::memScopeName(r->buffer->scope)) + " buffer '" + r->buffer->name +
                                       "' is not implemented yet; it scans shared and local buffers (copy a fragment to shared memory first)");
            return nullptr;
        }
        if (r->buffer->dtype == DType::Bool || isPacked(r->buffer->dtype)) {
            diags_.error(r->range, "cumsum adds numbers; '" + r->buffer->name + "' holds " + std::string(dtypeName(r->buffer->dtype)));
            return nullptr;
        }
        return r->buffer;
    };
    ir::Buffer src = wholeBuffer(*args->positional[0], "source");
    ir::Buffer dst = args->positional.size() > 1 ? wholeBuffer(*args->positional[1], "destination") : src;
    if (!src || !dst) return nullptr;
    if (src->shape.size() != dst->shape.size() || src->scope != dst->scope ||
        !std::equal(src->shape.begin(), src->shape.end(), dst->shape.begin(), [](const ir::Expr &a, const ir::Expr &b) { return ir::constInt(a) == ir::constInt(b); })) {
        diags_.error(c.range, "cumsum's source '" + src->name + "' and destination '" + dst->name + "' must have the same shape and memory");
        return nullptr;
    }
    int64_t rank = static_cast<int64_t>(src->shape.size());
    int64_t dim = 0;
    bool reverse = false, ok = true;
    if (const ast::Expr *d = args->keyword("dim")) {
        std::optional<int64_t> v = checkConstInt(*d, "dim");
        if (!v) ok = false;
        else if (*v < -rank || *v >= rank) { diags_.error(d->range, "dim " + std::to_string(*v) + " is outside the buffer's " + std::to_string(rank) + " dimensions"); ok = false; }
        else dim = *v < 0 ? *v + rank : *v;
    }
    if (const ast::Expr *r = args->keyword("reverse")) {
        std::optional<bool> v = checkConstBool(*r, "reverse");
        if (!v) ok = false;
        else reverse = *v;
    }
    if (!ok) return nullptr;
    auto whole = [&](const ir::Buffer &b) {
        std::vector<int64_t> extents;
        for (const ir::Expr &e : b->shape) extents.push_back(*ir::constInt(e));
        return ir::Region{b, std::vector<ir::Expr>(extents.size(), ir::intImm(0)), extents, c.range};
    };
    return std::make_shared<ir::Cumsum>(whole(src), whole(dst), rank - dim, reverse, c.range);
}

} // namespace tilet::sema
