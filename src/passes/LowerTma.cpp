// LowerTma.cpp -- see LowerTma.h.
#include "passes/LowerTma.h"

#include "ir/BufferEdits.h"
#include "ir/Layout.h"
#include "ir/Visitor.h"
#include "passes/CopyFacts.h"
#include "target/Target.h"
#include "support/InternalError.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

// TMA needs a swizzled box's shared base aligned to the swizzle's repeat
// (8 rows of its width), and any box to 128 bytes.
int64_t tmaAlignment(ir::SharedSwizzle s) { return s == ir::SharedSwizzle::None ? 128 : 8 * ir::swizzleBytes(s); }

// One multicast of a copy: the blocks of `mask`, for which block `issuer`
// (the lowest) issues.
struct Multicast {
    int64_t mask, issuer;
};

// The distinct masks of the blocks that are in their own mask (sema checked
// that the blocks a mask reaches all compute it), by issuer.
std::vector<Multicast> multicastGroups(const std::vector<int64_t> &masks) {
    std::vector<Multicast> groups;
    for (size_t r = 0; r < masks.size(); ++r) {
        if (!((masks[r] >> r) & 1)) continue;
        int64_t issuer = std::countr_zero(static_cast<uint64_t>(masks[r]));
        if (issuer == static_cast<int64_t>(r)) groups.push_back({masks[r], issuer});
    }
    return groups;
}

class Lowerer : public ir::Mutator {
public:
    Lowerer(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx) {}
    using ir::Mutator::mutate;

    std::vector<ir::TmaDescriptorRef> descriptors;
    bool multicast = false;   // some block writes other blocks' shared memory
    ir::Buffer barriers;   // tilet's mbarriers for plain TMA loads, one per copy
    ir::Buffer phases;     // their phase bits, per thread
    ir::BufferEdits edits;   // alignments TMA needs, barriers completing at cluster scope

protected:
    Stmt mutateWarpSpecialize(const Stmt &self, const ir::WarpSpecialize &n) override {
        int64_t outer = firstThread_;
        firstThread_ = n.firstThread();
        Stmt out = ir::Mutator::mutateWarpSpecialize(self, n);
        firstThread_ = outer;
        return out;
    }

    Stmt mutateElect(const Stmt &self, const ir::Elect &n) override {
        // (An Elect of each warp group still runs in several threads of a role.)
        bool outer = std::exchange(elected_, elected_ || n.unit == ir::Elect::Unit::Scope);
        Stmt out = ir::Mutator::mutateElect(self, n);
        elected_ = outer;
        return out;
    }

    Stmt mutateCopy(const Stmt &self, const ir::Copy &c) override {
        const bool oneDimensional = c.inst == ir::CopyInst::BulkLoad1D || c.inst == ir::CopyInst::BulkStore1D;
        if (c.inst != ir::CopyInst::BulkLoad && c.inst != ir::CopyInst::BulkStore && !oneDimensional) return self;
        if (isSubByte(c.src.buffer->dtype) && c.src.buffer->dtype == c.dst.buffer->dtype) {
            // Packed data (int4, f4e2m1, ...) moves as the bytes that hold it:
            // a tensor map over the uint8 view of the tensor, boxes of bytes
            // into the uint8 view of the tile (or one run of bytes, 1D). Only
            // the tile's view is declared: the device code reaches the tensor
            // through the map (through its own view, 1D).
            ir::Buffer srcBytes = ir::bytesView(c.src.buffer), dstBytes = ir::bytesView(c.dst.buffer);
            const bool sharedSource = c.src.buffer->scope == ir::MemScope::Shared;
            alignAtLeast(sharedSource ? c.src.buffer : c.dst.buffer, tmaAlignment(edits.current(sharedSource ? c.src.buffer : c.dst.buffer).swizzle));
            alignAtLeast(sharedSource ? c.dst.buffer : c.src.buffer, 16);
            auto bytes = std::make_shared<ir::Copy>(c);
            bytes->src = ir::bytesRegion(c.src, srcBytes);
            bytes->dst = ir::bytesRegion(c.dst, dstBytes);
            Stmt lowered = mutateCopy(bytes, *bytes);
            const ir::Buffer &tileBytes = sharedSource ? srcBytes : dstBytes;
            lowered = std::make_shared<ir::Allocate>(tileBytes, lowered, c.span);
            if (oneDimensional) lowered = std::make_shared<ir::Allocate>(sharedSource ? dstBytes : srcBytes, lowered, c.span);
            return lowered;
        }
        if (oneDimensional) return bulk1D(c);
        bool load = c.inst == ir::CopyInst::BulkLoad;
        const ir::Region &global = load ? c.src : c.dst, &shared = load ? c.dst : c.src;
        const ir::BufferNode &tensor = *global.buffer;
        ir::SharedSwizzle swizzle = edits.current(shared.buffer).swizzle;
        // Packed 4- or 6-bit elements into 8-bit slots (f4e2m1_unpacked, ...): the
        // transactions are the packed bytes read from global memory (TileLang
        // counts them so for e2m1).
        const std::optional<DType> unpacksInto = load && isUnpacked(shared.buffer->dtype) ? std::optional(shared.buffer->dtype) : std::nullopt;
        int64_t rank = static_cast<int64_t>(global.extents.size());

        // The boxes (tmaBoxes): at most 256 elements per dimension, each one
        // contiguous, aligned run of the tile; a swizzled tile in boxes one
        // swizzle segment wide. `box` is innermost first, as the tensor map has it.
        const TmaBoxes plan = tmaBoxes(global, shared, swizzle);
        TILET_ASSERT(plan.reason.empty(), "a TMA copy selected although " << plan.reason);
        std::vector<int64_t> box(plan.box.rbegin(), plan.box.rend());
        const std::vector<int64_t> &sharedDim = plan.sharedDim;
        ir::TmaDescriptorRef desc = descriptor(global.buffer, box, swizzle, std::nullopt, unpacksInto);
        alignAtLeast(shared.buffer, tmaAlignment(swizzle));
        alignAtLeast(global.buffer, 16);

        std::vector<Stmt> issue;
        int64_t bytes = dtypeBits(tensor.dtype);
        for (int64_t e : global.extents) bytes *= e;
        bytes /= 8;
        Expr barrierIndex;
        ir::Buffer barrier;
        bool own = false;
        if (load) std::tie(barrier, barrierIndex) = loadBarrier(c, own);
        // A load on a cluster barrier (alloc_cluster_barrier) is the CTA
        // pair's (TileLang's tma_load_2sm): each block's box lands in its own
        // shared memory and completes on the leader's barrier, which alone
        // expects the bytes of both (PTX ISA, cp.async.bulk.tensor .cta_group::2).
        bool pairLoad = load && !own && barrier->clusterBarrier;
        if (pairLoad) {
            if (!kernel_.pairCluster() || !ctx_.target.has(Feature::Tcgen05) || c.multicast()) {
                ctx_.diags.error(c.span, "a tma_copy on cluster barrier '" + barrier->name + "' is the CTA pair's load (cp.async.bulk.tensor .cta_group::2, "
                                         "its bytes counted on the pair's leader): it needs " + targetsWith(Feature::Tcgen05) +
                                         ", a kernel of cluster(2) or cluster(1, 2), and no cluster_mask");
                return self;
            }
            Expr leader = ir::binary(ir::BinaryOp::Eq, std::make_shared<ir::SpecialReg>(ir::SpecialKind::ClusterCtaRank, c.span), ir::intImm(0));
            issue.push_back(std::make_shared<ir::IfThenElse>(
                leader, std::make_shared<ir::BarrierExpectTx>(barrier, barrierIndex, 2 * bytes, false, c.span), nullptr, c.span));
        } else if (load) {
            issue.push_back(std::make_shared<ir::BarrierExpectTx>(barrier, barrierIndex, bytes, own, c.span));
        }
        // The boxes, each landing in this block (mask 0) or multicast to the blocks in `mask`.
        auto boxes = [&](int64_t mask) {
            std::vector<Stmt> out;
            for (int64_t n = 0; n < plan.count; ++n) {
                // Box n's position: its index in each dimension, innermost fastest.
                std::vector<Expr> coords(static_cast<size_t>(rank));   // innermost first
                std::vector<Expr> sharedAt = shared.mins;
                int64_t rest = n;
                for (int64_t d = rank - 1; d >= 0; --d) {
                    const size_t du = static_cast<size_t>(d);
                    const int64_t chunks = global.extents[du] / plan.box[du], offset = rest % chunks * plan.box[du];
                    rest /= chunks;
                    Expr at = ir::cast(DType::Int32, global.mins[du]);
                    coords[static_cast<size_t>(rank - 1 - d)] = offset != 0 ? ir::add(at, ir::intImm(offset)) : at;
                    if (offset != 0) sharedAt[static_cast<size_t>(sharedDim[du])] = ir::add(sharedAt[static_cast<size_t>(sharedDim[du])], ir::intImm(offset));
                }
                if (load)
                    out.push_back(std::make_shared<ir::TmaLoad>(desc, shared.buffer, sharedAt, coords, barrier, barrierIndex, mask, c.span,
                                                                std::vector<Expr>{}, pairLoad));
                else out.push_back(std::make_shared<ir::TmaStore>(desc, shared.buffer, sharedAt, coords, c.span, c.reduceAdd));
            }
            return ir::seq(std::move(out));
        };
        std::vector<Multicast> groups = multicastGroups(c.clusterMasks);
        if (!groups.empty()) {
            multicast = true;
            // The lowest block of each mask issues for all of them (each still
            // expects the bytes that land in it); blocks outside their own
            // mask load their own copy.
            Expr blockRank = std::make_shared<ir::SpecialReg>(ir::SpecialKind::ClusterCtaRank, c.span);
            auto bitOf = [&](int64_t bits) { return ir::binary(ir::BinaryOp::BitAnd, ir::binary(ir::BinaryOp::Shr, ir::intImm(bits), blockRank), ir::intImm(1)); };
            int64_t outsideBlocks = 0;
            for (size_t r = 0; r < c.clusterMasks.size(); ++r)
                if (!((c.clusterMasks[r] >> r) & 1)) outsideBlocks |= int64_t(1) << r;
            Stmt chain;
            if (groups.size() == 1)   // outside the one mask
                chain = std::make_shared<ir::IfThenElse>(ir::binary(ir::BinaryOp::Eq, bitOf(groups.front().mask), ir::intImm(0)), boxes(0), nullptr, c.span);
            else if (outsideBlocks)
                chain = std::make_shared<ir::IfThenElse>(ir::binary(ir::BinaryOp::Ne, bitOf(outsideBlocks), ir::intImm(0)), boxes(0), nullptr, c.span);
            for (auto g = groups.rbegin(); g != groups.rend(); ++g)
                chain = std::make_shared<ir::IfThenElse>(ir::binary(ir::BinaryOp::Eq, blockRank, ir::intImm(g->issuer)), boxes(g->mask), chain, c.span);
            issue.push_back(chain);
        } else {
            issue.push_back(boxes(0));
        }
        if (!load) issue.push_back(std::make_shared<ir::TmaStoreWait>(c.span));
        Stmt issued = byOneThread(ir::seq(std::move(issue)), c.span);

        Decision d;
        d.where = c.span;
        // (a packed tensor's bytes view is named as the tensor's bytes)
        bool bytesOfPacked = tensor.viewOf && isSubByte(tensor.viewOf->dtype);
        d.op = std::string(load ? "TMA load" : c.reduceAdd ? "TMA reduce-add" : "TMA store") + (c.reduceAdd ? " into " : " of ") + (bytesOfPacked ? "the bytes of '" + tensor.viewOf->name + "'" : "'" + tensor.name + "'");
        d.choice = std::to_string(plan.count) + " box" + (plan.count == 1 ? "" : "es") + " of " + boxText(box) + " through tensor map '" +
                   desc->name + "' (encoded by the host)";
        d.why = swizzle == ir::SharedSwizzle::None ? "'" + shared.buffer->name + "' is linear"
                                                   : "'" + shared.buffer->name + "' is stored with the " + ir::swizzleName(swizzle) +
                                                         " swizzle, which TMA applies per box of that width";
        if (c.multicast() && !c.producerRole)
            d.details.push_back("the blocks of the cluster meet at a cluster barrier before the load (barriers initialised, the tile free "
                                "everywhere) and before they exit");
        bool someOutside = false;   // a block of the cluster that loads its own copy
        for (size_t r = 0; r < c.clusterMasks.size(); ++r) someOutside = someOutside || !((c.clusterMasks[r] >> r) & 1);
        if (groups.size() == 1)
            d.details.push_back("multicast: the block of rank " + std::to_string(groups.front().issuer) + " issues for the blocks of cluster_mask " +
                                std::to_string(groups.front().mask) + ", whose barriers each count the bytes" +
                                (someOutside ? "; a block outside the mask loads its own" : ""));
        if (groups.size() > 1) {
            std::string each;
            for (const Multicast &g : groups)
                each += std::string(each.empty() ? "" : ", ") + "block " + std::to_string(g.issuer) + " for mask " + std::to_string(g.mask);
            d.details.push_back("multicast: cluster_mask differs between blocks; the lowest block of each mask issues for its blocks (" + each +
                                "), whose barriers each count the bytes" + (someOutside ? "; a block outside its own mask loads its own" : ""));
        }
        if (unpacksInto)
            d.details.push_back("'" + tensor.name + "' holds packed " + std::string(dtypeName(tensor.dtype)) + "; the tensor map (" +
                                ir::unpackingTensorMapType(*unpacksInto) + ") puts each 16 elements' " + std::to_string(2 * dtypeBits(tensor.dtype)) +
                                " bytes in 16 bytes of '" + shared.buffer->name + "', the 8-bit slots tcgen05.mma's kind::f8f6f4 and kind::mxf8f6f4 read; "
                                "the transactions count the packed bytes");
        if (pairLoad)
            d.details.push_back("the CTA pair's load (cp.async.bulk.tensor .cta_group::2): the box lands in this block, its bytes complete on '" +
                                barrier->name + "' of the pair's leader (rank 0), where one thread expects " + std::to_string(2 * bytes) +
                                " bytes, both blocks'");
        else if (load)
            d.details.push_back(own ? "one thread arrives on an mbarrier of tilet's expecting " + std::to_string(bytes) +
                                          " bytes; every thread waits for its phase"
                                    : "one thread adds " + std::to_string(bytes) + " bytes to the transactions of '" + barrier->name +
                                          "'; the arrivals and waits on it complete the protocol");
        else
            d.details.push_back("every thread executes fence.proxy.async, so its shared writes are visible to the async proxy; one thread issues and waits until the boxes are read");
        ctx_.explain.record(std::move(d));

        if (own && c.multicast()) {
            // A multicast writes other blocks' shared memory and completes on
            // their barriers: every block must have initialised its barriers
            // and be done with the tile before the issuer starts, and no
            // block may exit while another can still write to it.
            edits.edit(barrier).clusterScope = true;
            return ir::seq({std::make_shared<ir::ClusterSync>(c.span), issued, waitForOwn(barrier, barrierIndex, c.span)});
        }
        if (own) return ir::seq({issued, waitForOwn(barrier, barrierIndex, c.span)});
        if (load) return issued;
        return ir::seq({std::make_shared<ir::FenceProxyAsync>(c.span), issued});
    }

    // TMA's im2col mode (PTX ISA, "Tensors: im2col mode"), for the producer
    // role of a warp-specialized loop: one load per swizzle segment of
    // channels gathers the tile's pixels, starting at the filter-window
    // corner of its first output pixel, the filter tap as the offsets; the
    // tensor map's bounding box of window corners and traversal stride
    // step through the output pixels in (n, oh, ow) order, and pixels past
    // the last image (rows past the matrix) read as zeros.
    Stmt mutateIm2Col(const Stmt &self, const ir::Im2Col &g) override {
        if (g.inst != ir::CopyInst::BulkLoad) return self;
        TILET_ASSERT(g.barrier && g.barrierIndex, "a TMA im2col without the producer's barrier");
        const ir::BufferNode &image = *g.image;
        const ir::Buffer &tile = g.dst.buffer;
        ir::SharedSwizzle swizzle = edits.current(tile).swizzle;
        const int64_t elementBytes = dtypeBits(image.dtype) / 8, rows = g.dst.extents[g.dst.extents.size() - 2], cols = g.dst.extents.back();
        const int64_t channels = *ir::constInt(image.shape[3]), oh = g.outHeight(), ow = g.outWidth();
        int64_t segment = cols;
        if (swizzle != ir::SharedSwizzle::None) segment = std::min(cols, ir::swizzleBytes(swizzle) / elementBytes);
        TILET_ASSERT(cols % segment == 0, "im2col of " << cols << " channels in " << segment << "-channel segments");
        ir::Im2colBox box = im2colBox(g, segment);
        ir::TmaDescriptorRef desc = descriptor(g.image, {segment, rows}, swizzle, box);
        alignAtLeast(tile, tmaAlignment(swizzle));
        alignAtLeast(g.image, 16);

        // The tile's first row m0 and column k0 of the im2col matrix: output
        // pixel (n, oh, ow) and filter tap (kh, kw) with channel c.
        using ir::intImm;
        Expr m0 = ir::mul(g.nhwStep, intImm(rows)), k0 = ir::mul(g.cStep, intImm(cols));
        Expr n = ir::div(m0, intImm(oh * ow)), y = ir::mod(ir::div(m0, intImm(ow)), intImm(oh)), x = ir::mod(m0, intImm(ow));
        Expr kh = ir::div(k0, intImm(g.kernel * channels)), kw = ir::mod(ir::div(k0, intImm(channels)), intImm(g.kernel)), c = ir::mod(k0, intImm(channels));
        auto corner = [&](const Expr &out) { return ir::sub(ir::mul(out, intImm(g.stride)), intImm(g.pad)); };
        std::vector<Expr> offsets{ir::cast(DType::Int32, ir::mul(kw, intImm(g.dilation))), ir::cast(DType::Int32, ir::mul(kh, intImm(g.dilation)))};
        const int64_t bytes = rows * cols * elementBytes;
        std::vector<Stmt> issue{std::make_shared<ir::BarrierExpectTx>(g.barrier, g.barrierIndex, bytes, false, g.span)};
        for (int64_t s = 0; s < cols / segment; ++s) {
            std::vector<Expr> coords{ir::cast(DType::Int32, ir::add(c, intImm(s * segment))), ir::cast(DType::Int32, corner(x)),
                                     ir::cast(DType::Int32, corner(y)), ir::cast(DType::Int32, n)};
            std::vector<Expr> sharedAt = g.dst.mins;
            sharedAt.back() = ir::add(sharedAt.back(), intImm(s * segment));
            issue.push_back(std::make_shared<ir::TmaLoad>(desc, tile, sharedAt, coords, g.barrier, g.barrierIndex, 0, g.span, offsets));
        }

        Decision d;
        d.where = g.span;
        d.op = "TMA im2col load of '" + image.name + "'";
        d.choice = std::to_string(cols / segment) + " load" + (cols / segment == 1 ? "" : "s") + " of " + std::to_string(rows) + " pixels x " +
                   std::to_string(segment) + " channels through tensor map '" + desc->name + "' (encoded by the host)";
        d.why = "each column tile is one filter tap's run of channels; the tensor map's bounding box of filter-window corners (" +
                std::to_string(box.lowerW) + " to size - 1 + " + std::to_string(box.upperW) + " in H and W) and traversal stride " +
                std::to_string(box.stride) + " walk the tile's output pixels";
        d.details.push_back("one thread adds " + std::to_string(bytes) + " bytes to the transactions of '" + g.barrier->name +
                            "'; the padding and the pixels past the last image read as zeros");
        ctx_.explain.record(std::move(d));
        return byOneThread(ir::seq(std::move(issue)), g.span);
    }

private:
    // The barrier a load completes on: the program's (tma_copy(..., barrier =
    // b)) or a new one of tilet's, whose phase every thread then waits for.
    std::pair<ir::Buffer, Expr> loadBarrier(const ir::Copy &c, bool &own) {
        own = !c.barrier;
        if (!own) return {c.barrier, c.barrierIndex ? c.barrierIndex : ir::intImm(0)};
        Expr index = ir::intImm(static_cast<int64_t>(ownBarriers_++));
        return {ownBarrierBuffer(), index};
    }

    Stmt waitForOwn(const ir::Buffer &barrier, const Expr &index, SourceRange span) {
        Expr phase = std::make_shared<ir::Load>(phases, std::vector<Expr>{index}, span);
        return ir::seq({std::make_shared<ir::BarrierWait>(barrier, index, phase, span),
                        std::make_shared<ir::Store>(phases, std::vector<Expr>{index}, ir::binary(ir::BinaryOp::BitXor, phase, ir::intImm(1)),
                                                    ir::StoreOp::Assign, span)});
    }

    // cp.async.bulk: one contiguous run, no tensor map.
    Stmt bulk1D(const ir::Copy &c) {
        bool load = c.inst == ir::CopyInst::BulkLoad1D;
        const ir::Region &global = load ? c.src : c.dst;
        int64_t bytes = dtypeBits(global.buffer->dtype) / 8;
        for (int64_t e : global.extents) bytes *= e;
        alignAtLeast(global.buffer, 16);
        Decision d;
        d.where = c.span;
        const ir::BufferNode &tensor = *global.buffer;
        const bool bytesOfPacked = tensor.viewOf && isSubByte(tensor.viewOf->dtype);
        d.op = std::string(load ? "1D bulk load" : "1D bulk store") + " of " + (bytesOfPacked ? "the bytes of '" + tensor.viewOf->name + "'" : "'" + tensor.name + "'");
        d.choice = std::to_string(bytes) + " contiguous bytes in one cp.async.bulk";
        d.why = "both sides are one contiguous, 16-byte aligned run: no tensor map is needed";
        if (!load)
            d.details.push_back("every thread executes fence.proxy.async, so its shared writes are visible to the async proxy; one thread issues "
                                "and waits until the bytes are read");
        ctx_.explain.record(std::move(d));
        if (!load) {
            Stmt issue = ir::seq({std::make_shared<ir::BulkCopy>(c.dst.buffer, c.dst.mins, c.src.buffer, c.src.mins, bytes, nullptr, nullptr, c.span),
                                  std::make_shared<ir::TmaStoreWait>(c.span)});
            return ir::seq({std::make_shared<ir::FenceProxyAsync>(c.span), byOneThread(issue, c.span)});
        }
        bool own = false;
        auto [barrier, index] = loadBarrier(c, own);
        Stmt issue = ir::seq({std::make_shared<ir::BarrierExpectTx>(barrier, index, bytes, own, c.span),
                              std::make_shared<ir::BulkCopy>(c.dst.buffer, c.dst.mins, c.src.buffer, c.src.mins, bytes, barrier, index, c.span)});
        Stmt issued = byOneThread(issue, c.span);
        return own ? ir::seq({issued, waitForOwn(barrier, index, c.span)}) : issued;
    }

    // What one thread issues: the block's or role's first, unless the code
    // already runs in one elected thread alone.
    Stmt byOneThread(Stmt issue, SourceRange span) const {
        if (elected_) return issue;
        return std::make_shared<ir::IfThenElse>(ir::isThread(firstThread_), std::move(issue), nullptr, span);
    }

    void alignAtLeast(const ir::Buffer &b, int64_t bytes) { edits.alignAtLeast(b, bytes); }

    static std::string boxText(const std::vector<int64_t> &box) {
        std::string s;
        for (size_t i = box.size(); i-- > 0;) s += std::to_string(box[i]) + (i ? " x " : "");
        return s;
    }

    ir::TmaDescriptorRef descriptor(const ir::Buffer &tensor, const std::vector<int64_t> &box, ir::SharedSwizzle swizzle,
                                    std::optional<ir::Im2colBox> im2col = std::nullopt, std::optional<DType> unpacksInto = std::nullopt) {
        int sameTensor = 0;
        for (const ir::TmaDescriptorRef &d : descriptors) {
            if (d->tensor != tensor) continue;
            if (d->box == box && d->swizzle == swizzle && d->im2col == im2col && d->unpacksInto == unpacksInto) return d;
            ++sameTensor;
        }
        auto d = std::make_shared<ir::TmaDescriptor>();
        d->name = "tma_" + tensor->name + (sameTensor ? "_" + std::to_string(sameTensor) : "");
        d->param = ir::makeVar(d->name, DType::UInt64);
        d->tensor = tensor;
        d->box = box;
        d->swizzle = swizzle;
        d->im2col = im2col;
        d->unpacksInto = unpacksInto;
        descriptors.push_back(d);
        return d;
    }

    ir::Buffer ownBarrierBuffer() {
        if (!barriers) {
            barriers = ir::makeBuffer("tma_barrier", DType::UInt64, {ir::intImm(1)}, ir::MemScope::Barrier, kernel_.span);
            phases = ir::makeBuffer("tma_phase", DType::Int32, {ir::intImm(1)}, ir::MemScope::Local, kernel_.span);
        }
        return barriers;
    }

public:
    size_t ownBarriers() const { return ownBarriers_; }

private:
    const ir::Kernel &kernel_;
    PassContext &ctx_;
    int64_t firstThread_ = 0;   // the thread that issues TMA here: the block's or the role's first
    bool elected_ = false;      // inside an Elect: one thread runs the code already
    size_t ownBarriers_ = 0;
};

// Whether `s` names `buffer` anywhere but in a tensor map (where the device
// code does not reach it).
bool referencesBuffer(const Stmt &s, const ir::BufferNode *buffer) {
    struct Finder : ir::Mutator {
        const ir::BufferNode *wanted;
        bool found = false;
        explicit Finder(const ir::BufferNode *b) : wanted(b) {}
        ir::Buffer mutateBuffer(const ir::Buffer &b) override {
            found = found || b.get() == wanted;
            return b;
        }
    } finder(buffer);
    finder.mutate(s);
    return finder.found;
}

// A view of a global tensor that every access now reaches through a tensor
// map is declared no more (nvcc warns of an unused variable).
class DropMappedViews : public ir::Mutator {
public:
    explicit DropMappedViews(const std::vector<ir::TmaDescriptorRef> &descriptors) {
        for (const ir::TmaDescriptorRef &d : descriptors)
            if (d->tensor->scope == ir::MemScope::Global && d->tensor->viewOf) mapped_.insert(d->tensor.get());
    }
    using ir::Mutator::mutate;

protected:
    Stmt mutateAllocate(const Stmt &self, const ir::Allocate &a) override {
        Stmt out = ir::Mutator::mutateAllocate(self, a);
        const ir::Allocate &kept = *ir::as<ir::Allocate>(out);
        if (mapped_.count(kept.buffer.get()) && !referencesBuffer(kept.body, kept.buffer.get())) return kept.body;
        return out;
    }

private:
    std::set<const ir::BufferNode *> mapped_;
};

} // namespace

ir::Kernel lowerTma(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Lowerer lowerer(kernel, ctx);
    out.body = lowerer.mutate(kernel.body);
    out.body = DropMappedViews(lowerer.descriptors).mutate(out.body);
    if (lowerer.barriers) {
        // One mbarrier and one phase bit per plain TMA load, for the whole kernel.
        int64_t n = static_cast<int64_t>(lowerer.ownBarriers());
        ir::BufferNode &barriers = lowerer.edits.edit(lowerer.barriers), &phases = lowerer.edits.edit(lowerer.phases);
        barriers.shape = {ir::intImm(n)};
        barriers.arriveCounts.assign(static_cast<size_t>(n), 1);
        phases.shape = {ir::intImm(n)};
        ir::VarRef i = ir::makeVar("i");
        auto clear = std::make_shared<ir::For>(i, ir::intImm(0), ir::intImm(n), ir::ForKind::Unrolled,
                                               std::make_shared<ir::Store>(lowerer.phases, std::vector<ir::Expr>{i}, ir::intImm(0), ir::StoreOp::Assign,
                                                                           kernel.span),
                                               kernel.span);
        clear->threadLocal = true;
        out.body = std::make_shared<ir::Allocate>(lowerer.barriers,
                                                  std::make_shared<ir::Allocate>(lowerer.phases, ir::seq({clear, out.body}), kernel.span), kernel.span);
    }
    // No block may exit while another can still write its shared memory or
    // arrive on its barriers (a warp-specialized multicast releases stages
    // in every block).
    if (lowerer.multicast) out.body = ir::seq({out.body, std::make_shared<ir::ClusterSync>(kernel.span)});
    if (!lowerer.descriptors.empty()) {
        // Thread 0 issues the first TMA of every kernel tilet warp-specializes
        // and of most others; its prefetches overlap the barrier setup.
        std::vector<ir::Stmt> prefetches;
        for (const ir::TmaDescriptorRef &d : lowerer.descriptors) prefetches.push_back(std::make_shared<ir::TmaPrefetch>(d, kernel.span));
        ir::Expr first = ir::isThread(0);
        out.body = ir::seq({std::make_shared<ir::IfThenElse>(first, ir::seq(std::move(prefetches)), nullptr, kernel.span), out.body});
    }
    out.tmaDescriptors = lowerer.descriptors;
    lowerer.edits.applyTo(out);
    return out;
}

} // namespace tilet
