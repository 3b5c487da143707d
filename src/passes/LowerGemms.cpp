// LowerGemms.cpp -- see LowerGemms.h.
//
// For a gemm with tiling T (ir/MmaLayout.h), in the calling warp:
//
//   let lane = threadIdx.x % 32, warp_m = warp % warpM, warp_n = warp / warpM
//   [if clear_accum: C_regs[*] = 0]
//   for ks in unrolled(K / k):
//     A_frag, B_frag: this k-step's operand registers of the warp's atoms
//     for i in unrolled(mAtoms): ldmatrix.x4 A_frag[i]     (A in shared memory)
//     for jg in unrolled(...):   ldmatrix.x4 B_frag[...]   (2 or 4 atoms along N)
//     for i, j in unrolled(mAtoms, nAtoms): mma(C_regs[atom (i, j)], A[i], B[j])
//
// An operand whose 16-byte rows run along K loads with ldmatrix; a 16-bit
// operand whose rows run along M or N with ldmatrix.trans; any other
// operand (tf32 or 8-bit along M/N, no ldmatrix before sm_75, misaligned
// rows) element by element from shared memory.
#include "passes/LowerGemms.h"

#include "ir/Analysis.h"
#include "ir/Layout.h"
#include "ir/MmaLayout.h"
#include "ir/Visitor.h"
#include "target/Catalog.h"
#include "support/InternalError.h"

#include <map>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

// How one operand's registers are filled for a k-step.
struct OperandPlan {
    const ir::Region *region = nullptr;
    bool isA = true;
    bool kContiguous = true;   // storage rows run along K
    bool ldmatrix = false;
    std::string choice;        // for the explanation: "ldmatrix", "ldmatrix.trans" or "element loads"
    std::string why;           // and the reason
};

// The calling thread's place in a gemm's warp grid: lane, warp_m = warp %
// warpM, warp_n = warp / warpM (ir/MmaLayout.h).
struct WarpCoordinates {
    ir::VarRef lane = ir::makeVar("lane"), warpM = ir::makeVar("warp_m"), warpN = ir::makeVar("warp_n");

    // `body` inside their bindings (a coordinate with one value becomes 0).
    Stmt bind(Stmt body, const ir::MmaTiling &t, int64_t firstThread, SourceRange span) const {
        // Warps are numbered within the threads that run the gemm (a ws role's, or the block's).
        Expr warp = ir::div(firstThread ? ir::sub(ir::threadIdx(), ir::intImm(firstThread)) : ir::threadIdx(), ir::intImm(32));
        if (t.warpN > 1) body = std::make_shared<ir::LetStmt>(warpN, ir::div(warp, ir::intImm(t.warpM)), body, span);
        else body = ir::substitute(body, {{warpN, ir::intImm(0)}});
        if (t.warpM > 1) body = std::make_shared<ir::LetStmt>(warpM, ir::mod(warp, ir::intImm(t.warpM)), body, span);
        else body = ir::substitute(body, {{warpM, ir::intImm(0)}});
        return std::make_shared<ir::LetStmt>(lane, ir::mod(ir::threadIdx(), ir::intImm(32)), body, span);
    }
};

// clear_accum: zeroes the accumulator registers (under its condition when
// that is known only at run time); null without clear_accum.
Stmt clearAccumulators(const ir::Gemm &g, const ir::Buffer &regs) {
    if (!g.clearAccum || ir::constInt(g.clearAccum) == 0) return nullptr;
    ir::VarRef r = ir::makeVar("r");
    Expr zero = isFloat(regs->dtype) ? ir::floatImm(0, regs->dtype) : ir::intImm(0, regs->dtype);
    auto clear = std::make_shared<ir::For>(r, ir::intImm(0), regs->shape[0], ir::ForKind::Unrolled,
                                           std::make_shared<ir::Store>(regs, std::vector<Expr>{r}, zero, ir::StoreOp::Assign, g.span), g.span);
    clear->threadLocal = true;
    if (ir::constInt(g.clearAccum)) return clear;
    return std::make_shared<ir::IfThenElse>(g.clearAccum, clear, nullptr, g.span);
}

// Whether an asynchronous MMA (wgmma's scale-d, tcgen05's enable-input-d)
// adds to D or overwrites it: clear_accum makes the first k-step of each
// atom overwrite, so no register or tensor-memory store clears D while an
// earlier group on it may still be in flight (CUTLASS clears the same way).
Expr accumulatesInput(const ir::Gemm &g, const ir::VarRef &ks, SourceRange span) {
    if (!g.clearAccum || ir::constInt(g.clearAccum) == 0) return ir::intImm(1);
    Expr keep = std::make_shared<ir::Select>(DType::Int32, g.clearAccum, ir::intImm(0), ir::intImm(1), span);
    return std::make_shared<ir::Select>(DType::Int32, ir::binary(ir::BinaryOp::Eq, ks, ir::intImm(0)), keep, ir::intImm(1), span);
}

Stmt unrolled(const ir::VarRef &v, int64_t extent, Stmt body, SourceRange span) {
    if (extent == 1) return ir::substitute(body, {{v, ir::intImm(0)}});
    return std::make_shared<ir::For>(v, ir::intImm(0), ir::intImm(extent), ir::ForKind::Unrolled, std::move(body), span);
}

class Lowerer : public ir::Mutator {
public:
    Lowerer(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx) {}
    using ir::Mutator::mutate;

    // The tiling of the MMA gemm each register A operand feeds.
    void findOperands(const Stmt &body) {
        ir::forEachStmt(body, [&](const Stmt &s) {
            const ir::Gemm *g = ir::as<ir::Gemm>(s);
            // (A transposed register operand, [K, M], is filled element by element: no ldmatrix.)
            if (g && g->inst == ir::GemmInst::MMA && g->a.buffer->scope == ir::MemScope::Fragment && !g->transposeA)
                operandTiling_.emplace(g->a.buffer.get(), ir::mmaTiling(*g));
            if (g && g->inst == ir::GemmInst::MMA && g->a.buffer->scope == ir::MemScope::Fragment) operandFirstThread_[g->a.buffer.get()] = g->firstThread;
            if (g && g->inst == ir::GemmInst::WGMMA) issuesWgmma_ = true;
        });
    }

protected:
    Stmt mutateGemm(const Stmt &self, const ir::Gemm &g) override {
        if (g.inst == ir::GemmInst::WGMMA) return lowerWgmma(g);
        if (g.inst == ir::GemmInst::TCGEN05 || g.inst == ir::GemmInst::TCGEN05BlockScaled) return lowerTcgen05(g);
        if (!ir::isMmaSync(g.inst)) return self;
        return lower(g);
    }

    // The program's wait_wgmma(n) (the only wgmma waits before this pass):
    // where no gemm of the kernel is a wgmma, each gemm completes before it
    // returns and there is nothing to wait for.
    Stmt mutateWgmmaSync(const Stmt &self, const ir::WgmmaSync &w) override {
        if (issuesWgmma_) return self;
        Decision d;
        d.where = w.span;
        d.op = "wait_wgmma";
        d.choice = "removed";
        d.why = "no gemm of '" + kernel_.name + "' is a wgmma on " + ctx_.target.name + ": each completes before it returns";
        ctx_.explain.record(std::move(d));
        return ir::seq({});
    }

    // The program's tcgen05_mma_arrive in a kernel of CTA-pair gemms is the pair's commit too.
    Stmt mutateTcgen05Commit(const Stmt &self, const ir::Tcgen05Commit &c) override {
        if (!kernel_.tcgen05Pair || c.pair) return self;
        return std::make_shared<ir::Tcgen05Commit>(c.barrier, c.index, c.bothBlocks, true, c.span);
    }

    // copy(shared, A operand fragment) selected as LDSM: the operand's
    // registers, atom by atom and k-step by k-step, as the gemm would load them.
    Stmt mutateCopy(const Stmt &self, const ir::Copy &c) override {
        if (c.inst != ir::CopyInst::LDSM) return self;
        auto found = operandTiling_.find(c.dst.buffer.get());
        TILET_ASSERT(found != operandTiling_.end(), "ldmatrix copy into '" << c.dst.buffer->name << "', which feeds no mma.sync gemm");
        const ir::MmaTiling &t = found->second;
        ir::Buffer regs = c.dst.buffer->registers;
        TILET_ASSERT(regs, "operand fragment '" << c.dst.buffer->name << "' has no registers after infer-layouts");
        OperandPlan p = plan(c.src, true, false);
        WarpCoordinates w;
        ir::VarRef i = ir::makeVar("i"), ks = ir::makeVar("ks");
        int64_t aRegs = static_cast<int64_t>(ir::mmaARegisters(t.atom).size());
        Expr rowOrigin = ir::add(ir::mul(w.warpM, ir::intImm(t.warpRows())), ir::mul(i, ir::intImm(t.atom.m)));
        Stmt load = loadRegisters(p, t.atom, aRegs, rowOrigin, ir::mul(ks, ir::intImm(t.atom.k)), regs, ir::mmaOperandAOffset(t, i, ks), w.lane, c.span);
        Stmt out = w.bind(unrolled(i, t.mAtoms(), unrolled(ks, t.kSteps(), load, c.span), c.span), t, operandFirstThread_[c.dst.buffer.get()], c.span);
        Decision d;
        d.where = c.span;
        d.op = "copy shared->fragment (mma A operand)";
        d.choice = p.choice;
        d.why = p.why + "; the registers of " + std::to_string(t.mAtoms() * t.kSteps()) + " atoms per warp, in the order the gemm reads them";
        ctx_.explain.record(std::move(d));
        return out;
    }

private:
    OperandPlan plan(const ir::Region &r, bool isA, bool transposed) const {
        OperandPlan p;
        p.region = &r;
        p.isA = isA;
        // A [M, K] is K-contiguous unless transposed; B [K, N] only when transposed.
        p.kContiguous = isA ? !transposed : transposed;
        const ir::BufferNode &b = *r.buffer;
        int64_t bits = dtypeBits(b.dtype);
        int64_t pitchBytes = *ir::constInt(b.shape.back()) * bits / 8;
        int64_t unit = 128 / bits;   // elements of a 16-byte row
        int64_t minDivisor = ir::knownDivisor(r.mins.back());
        p.choice = "element loads";
        if (!ctx_.target.has(Feature::Ldmatrix)) p.why = "ldmatrix needs " + targetsWith(Feature::Ldmatrix);
        else if (!p.kContiguous && bits != 16)
            p.why = "its rows run along " + std::string(isA ? "M" : "N") + " and ldmatrix.trans moves only 16-bit elements";
        else if (pitchBytes % 16 != 0) p.why = "its " + std::to_string(pitchBytes) + "-byte rows are not 16-byte aligned";
        else if (minDivisor != 0 && minDivisor % unit != 0)
            p.why = "the region does not start on a 16-byte boundary of its rows";
        else {
            p.ldmatrix = true;
            p.choice = p.kContiguous ? "ldmatrix" : "ldmatrix.trans";
            p.why = "16-byte rows along " + std::string(p.kContiguous ? "K" : isA ? "M" : "N");
        }
        return p;
    }

    // The storage indices of operand coordinate (mn, k) of the whole tile.
    static std::vector<Expr> indicesOf(const OperandPlan &p, const Expr &mn, const Expr &k) {
        // A [M, K] or [K, M]; B [K, N] or [N, K]: the storage order is (mn, k) when K is contiguous.
        return ir::regionIndices(*p.region, p.kContiguous ? std::vector<Expr>{mn, k} : std::vector<Expr>{k, mn});
    }

    // Loads `count` registers of `p` starting at the atom whose origin is
    // (mn0, k0) into dst[dstOffset...].
    Stmt loadRegisters(const OperandPlan &p, const ir::MmaAtom &atom, int64_t count, const Expr &mn0, const Expr &k0, const ir::Buffer &dst,
                       const Expr &dstOffset, const Expr &lane, SourceRange span) const {
        if (p.ldmatrix) {
            std::array<Expr, 2> row = ir::mmaLdmatrixRow(atom, p.isA, count, p.kContiguous, lane);
            return std::make_shared<ir::LdMatrix>(dst, dstOffset, p.region->buffer, indicesOf(p, ir::add(mn0, row[0]), ir::add(k0, row[1])), count,
                                                  !p.kContiguous, span);
        }
        std::vector<ir::MmaRegisterBlock> blocks = p.isA ? ir::mmaARegisters(atom) : ir::mmaBRegisters(atom);
        int64_t perRegister = ir::mmaElementsPerRegister(atom.operand);
        std::vector<Stmt> loads;
        for (int64_t r = 0; r < count; ++r) {
            // Registers beyond one atom's (B groups) belong to the next atoms along N.
            int64_t atomIndex = r / static_cast<int64_t>(blocks.size());
            const ir::MmaRegisterBlock &block = blocks[r % blocks.size()];
            for (int64_t e = 0; e < perRegister; ++e) {
                std::array<Expr, 2> c = ir::mmaOperandElement(atom, p.isA, block, lane, e);
                Expr mn = ir::add(ir::add(mn0, ir::intImm(atomIndex * (p.isA ? atom.m : atom.n))), c[0]);
                Expr value = std::make_shared<ir::Load>(p.region->buffer, indicesOf(p, mn, ir::add(k0, c[1])), span);
                loads.push_back(std::make_shared<ir::Store>(dst, std::vector<Expr>{ir::add(dstOffset, ir::intImm(r * perRegister + e))}, value,
                                                            ir::StoreOp::Assign, span));
            }
        }
        return ir::seq(std::move(loads));
    }

    // A block-scaled gemm's scale words for k-step `ks` (docs/language.md,
    // gemm_blockscaled): each lane loads the word of the row (A) or column
    // (B) it supplies to the atoms' thread-id selectors (ir::MmaScales), one
    // register for two atoms along M and one for four along N. A word holds
    // the factors of one k-step (scale_vec::4X) or of four (1X: the k-step's
    // byte is its byte-id).
    struct ScaleRegisters {
        ir::Buffer a, b;
        std::vector<Stmt> loads;
        Expr byteId;
    };
    ScaleRegisters loadScales(const ir::Gemm &g, const ir::MmaTiling &t, const WarpCoordinates &w, const Expr &ks, SourceRange span) const {
        const Instruction &inst = *g.instruction;
        const int64_t wordK = 4 * inst.scaleVec;   // K elements per word
        const int64_t stepsPerWord = wordK / inst.k.lo;
        TILET_ASSERT(stepsPerWord * inst.k.lo == wordK, "a block-scaled mma.sync whose k-steps do not tile a scale word");
        ScaleRegisters out;
        out.byteId = stepsPerWord == 1 ? ir::intImm(0) : ir::mod(ks, ir::intImm(stepsPerWord));
        Expr quadLane = ir::mod(w.lane, ir::intImm(4));
        // The word's index along K: the scale factors of positions k_start + ks * k on (k_start is a multiple of wordK).
        Expr stepWord = stepsPerWord == 1 ? ks : ir::div(ks, ir::intImm(stepsPerWord));
        Expr word = g.sfKStart ? ir::add(ir::div(g.sfKStart, ir::intImm(wordK)), stepWord) : stepWord;
        // Element (row, col) of a scale region: its last two dimensions (a
        // pipelined loop's stage comes first).
        auto at = [&](const ir::Region &r, const Expr &row, const Expr &col) -> Expr {
            std::vector<Expr> indices = r.mins;
            size_t n = indices.size();
            indices[n - 2] = ir::add(indices[n - 2], row);
            indices[n - 1] = ir::add(indices[n - 1], col);
            return std::make_shared<ir::Load>(r.buffer, std::move(indices), span);
        };
        auto load = [&](const ir::Region &r, const Expr &row) -> Expr {
            if (g.sfLayout == ir::ScaleLayout::RowMajor) return at(r, row, word);
            // TileLang's blockscaled_chunk_kmajor: the chunk's words in its rows of 4.
            Expr flat = ir::scaleChunkPosition(row, ir::mod(word, ir::intImm(ir::kScaleChunkWords)));
            return at(r, ir::div(flat, ir::intImm(ir::kScaleChunkWords)), ir::mod(flat, ir::intImm(ir::kScaleChunkWords)));
        };
        // A: the lanes 2t, 2t + 1 of quad g give rows g and g + 8 of atom 2p + t.
        int64_t aWords = (t.mAtoms() + 1) / 2, bWords = (t.nAtoms() + 3) / 4;
        out.a = ir::makeBuffer(g.sfa->buffer->name + "_frag", DType::UInt32, {ir::intImm(aWords)}, ir::MemScope::Local, span);
        out.b = ir::makeBuffer(g.sfb->buffer->name + "_frag", DType::UInt32, {ir::intImm(bWords)}, ir::MemScope::Local, span);
        for (int64_t p = 0; p < aWords; ++p) {
            int64_t atoms = std::min<int64_t>(2, t.mAtoms() - 2 * p);   // a last odd atom: both pairs load it
            Expr atom = ir::add(ir::intImm(2 * p), ir::mod(ir::div(quadLane, ir::intImm(2)), ir::intImm(atoms)));
            Expr row = ir::add(ir::add(ir::mul(w.warpM, ir::intImm(t.warpRows())), ir::mul(atom, ir::intImm(t.atom.m))),
                               ir::add(ir::mul(ir::mod(w.lane, ir::intImm(2)), ir::intImm(8)), ir::div(w.lane, ir::intImm(4))));
            out.loads.push_back(std::make_shared<ir::Store>(out.a, std::vector<Expr>{ir::intImm(p)}, load(*g.sfa, row), ir::StoreOp::Assign, span));
        }
        // B: lane t of quad g gives column g of atom 4p + t.
        for (int64_t p = 0; p < bWords; ++p) {
            int64_t atoms = std::min<int64_t>(4, t.nAtoms() - 4 * p);
            Expr atom = ir::add(ir::intImm(4 * p), ir::mod(quadLane, ir::intImm(atoms)));
            Expr col = ir::add(ir::add(ir::mul(w.warpN, ir::intImm(t.warpCols())), ir::mul(atom, ir::intImm(t.atom.n))), ir::div(w.lane, ir::intImm(4)));
            out.loads.push_back(std::make_shared<ir::Store>(out.b, std::vector<Expr>{ir::intImm(p)}, load(*g.sfb, col), ir::StoreOp::Assign, span));
        }
        return out;
    }

    // A shared operand of a wgmma: the descriptor of its tile starting at
    // storage coordinate (mn, k) of the whole gemm tile.
    static ir::WgmmaOperand wgmmaOperand(const ir::Region &r, bool mnMajor, const Expr &mn, const Expr &k) {
        ir::WgmmaOperand o;
        o.buffer = r.buffer;
        o.mnMajor = mnMajor;
        // Storage order: (mn, k) for K-major tiles, (k, mn) for MN-major ones.
        o.indices = ir::regionIndices(r, mnMajor ? std::vector<Expr>{k, mn} : std::vector<Expr>{mn, k});
        o.swizzle = r.buffer->swizzle;
        int64_t width = ir::swizzleBytes(o.swizzle);
        int64_t rows = 1;
        std::vector<int64_t> shape = *r.buffer->constShape();
        for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
        // Swizzle atoms are 8 rows of the swizzle width; along the strided
        // dimension the next one is 8 rows down. Along the leading dimension
        // a K-major tile has none (the field is unused), an MN-major one has
        // the next column segment (tilet stores segments one after another).
        o.strideBytes = 8 * width;
        o.leadingBytes = mnMajor ? rows * width : 16;
        return o;
    }

    // wgmma: per k-step, one wgmma per m64 x n atom of the calling warp group,
    // then commit and wait (the gemm is complete when it returns).
    Stmt lowerWgmma(const ir::Gemm &g) {
        ir::MmaTiling t = ir::mmaTiling(g);
        SourceRange span = g.span;
        ir::Buffer cRegs = g.c.buffer->registers;
        TILET_ASSERT(cRegs, "gemm accumulator '" << g.c.buffer->name << "' has no registers after infer-layouts");
        ir::VarRef groupM = ir::makeVar("group_m"), groupN = ir::makeVar("group_n"), ks = ir::makeVar("ks"), a = ir::makeVar("a"),
                   jn = ir::makeVar("jn");
        Expr rowOrigin = ir::add(ir::mul(groupM, ir::intImm(ir::wgmmaGroupRows(t))), ir::mul(a, ir::intImm(64)));
        Expr colOrigin = ir::add(ir::mul(groupN, ir::intImm(t.warpCols())), ir::mul(jn, ir::intImm(t.atom.n)));
        Expr kOrigin = ir::mul(ks, ir::intImm(t.atom.k));
        ir::WgmmaOperand aOp;
        bool aInRegisters = g.a.buffer->scope == ir::MemScope::Fragment;
        if (aInRegisters) {
            // The 8 elements of this m-atom and k-step (4 32-bit registers).
            aOp.buffer = g.a.buffer->registers;
            TILET_ASSERT(aOp.buffer, "gemm A operand '" << g.a.buffer->name << "' has no registers after infer-layouts");
            aOp.indices = {ir::wgmmaOperandAOffset(t, a, ks)};
        } else {
            aOp = wgmmaOperand(g.a, g.transposeA, rowOrigin, kOrigin);
        }
        ir::WgmmaOperand bOp = wgmmaOperand(g.b, !g.transposeB, colOrigin, kOrigin);
        Stmt mma = std::make_shared<ir::Wgmma>(*g.instruction, 64, t.atom.n, t.atom.k, cRegs, ir::wgmmaAccumulatorOffset(t, a, jn), aOp, bOp, accumulatesInput(g, ks, span), span);
        Stmt steps = unrolled(ks, t.kSteps(), unrolled(a, ir::wgmmaMAtoms(t), unrolled(jn, ir::wgmmaNAtoms(t), mma, span), span), span);

        std::vector<Stmt> all;
        // The fence orders the accumulators' earlier register writes before the asynchronous MMAs.
        all.push_back(std::make_shared<ir::WgmmaSync>(ir::WgmmaSyncKind::Fence, 0, span));
        all.push_back(steps);
        all.push_back(std::make_shared<ir::WgmmaSync>(ir::WgmmaSyncKind::Commit, 0, span));
        // wg_wait = -1 leaves the group in flight for the program's wait_wgmma.
        if (g.wgWait >= 0) all.push_back(std::make_shared<ir::WgmmaSync>(ir::WgmmaSyncKind::Wait, g.wgWait, span));
        Stmt out = ir::seq(std::move(all));
        Expr group = ir::div(g.firstThread ? ir::sub(ir::threadIdx(), ir::intImm(g.firstThread)) : ir::threadIdx(), ir::intImm(128));
        int64_t groupsM = ir::wgmmaGroupsM(t);
        if (t.warpN > 1) out = std::make_shared<ir::LetStmt>(groupN, ir::div(group, ir::intImm(groupsM)), out, span);
        else out = ir::substitute(out, {{groupN, ir::intImm(0)}});
        if (groupsM > 1) out = std::make_shared<ir::LetStmt>(groupM, ir::mod(group, ir::intImm(groupsM)), out, span);
        else out = ir::substitute(out, {{groupM, ir::intImm(0)}});

        Decision d;
        d.where = span;
        d.op = "gemm wgmma";
        d.choice = std::to_string(t.kSteps() * ir::wgmmaMAtoms(t) * ir::wgmmaNAtoms(t)) + " wgmma.mma_async m64n" + std::to_string(t.atom.n) + "k" +
                   std::to_string(t.atom.k) + " per warp group, then commit" +
                   (g.wgWait < 0    ? " without waiting (wg_wait = -1)"
                    : g.wgWait == 0 ? " and wait"
                                    : " and wait until at most " + std::to_string(g.wgWait) + (g.wgWait == 1 ? " group is" : " groups are") + " in flight (wg_wait)");
        d.why = aInRegisters ? "A from the registers of '" + g.a.buffer->name + "' (8 elements per k-step and thread), B " +
                                   (bOp.mnMajor ? "N" : "K") + "-major through a shared-memory descriptor (" + ir::swizzleName(bOp.swizzle) + " swizzle)"
                             : "A " + std::string(aOp.mnMajor ? "M" : "K") + "-major and B " + (bOp.mnMajor ? "N" : "K") +
                                   "-major through shared-memory descriptors (" + ir::swizzleName(aOp.swizzle) + " / " + ir::swizzleName(bOp.swizzle) +
                                   " swizzle)";
        ctx_.explain.record(std::move(d));
        return out;
    }

    // tcgen05: the gemm's first thread issues, per k-step and N atom, one
    // tcgen05.mma for all M rows into tensor memory, then commits to the
    // gemm's mbarrier (the program waits on it: TileLang's asynchronous
    // tcgen05_gemm). The descriptors are wgmma's with tcgen05's swizzle codes.
    Stmt lowerTcgen05(const ir::Gemm &g) {
        const Instruction &inst = *g.instruction;
        SourceRange span = g.span;
        std::vector<int64_t> c = g.c.tileShape(), a = g.a.tileShape();
        int64_t N = c[1], K = g.transposeA ? a[0] : a[1];
        ir::VarRef ks = ir::makeVar("ks"), jn = ir::makeVar("jn");
        Expr kOrigin = ir::mul(ks, ir::intImm(g.atomK));
        bool aInTensorMemory = g.a.buffer->scope == ir::MemScope::TMem;
        // The TS form reads the k-step's A from tensor memory: row r in lane
        // r, K packed along the 32-bit columns as tcgen05.st left it.
        ir::WgmmaOperand aOp;
        Expr aAddress;
        int64_t aStepColumns = g.atomK * dtypeBits(g.a.buffer->dtype) / 32;
        if (aInTensorMemory) {
            aOp.buffer = g.a.buffer;
            aOp.indices = g.a.mins;
            aOp.indices.back() = ir::add(aOp.indices.back(), kOrigin);
            aAddress = ir::add(g.a.buffer->tmemAddress, ir::cast(DType::UInt32, ir::add(ir::tmemColumn(g.a), ir::mul(ks, ir::intImm(aStepColumns)))));
        }
        // Packed operands (kind::mxf4nvf4's e2m1, K-major) are described as the
        // bytes that hold them: a k-step of 64 4-bit elements is 32 bytes of a
        // row, as one of 32 8-bit ones (PTX ISA, "Shared memory descriptor").
        ir::Buffer aBytes, bBytes;
        auto storedOperand = [&](const ir::Region &r, bool mnMajor, const Expr &mn, ir::Buffer &bytes) {
            if (!isSubByte(r.buffer->dtype)) return wgmmaOperand(r, mnMajor, mn, kOrigin);
            bytes = ir::bytesView(r.buffer);
            return wgmmaOperand(ir::bytesRegion(r, bytes), mnMajor, mn, ir::mul(ks, ir::intImm(g.atomK * dtypeBits(r.buffer->dtype) / 8)));
        };
        if (!aInTensorMemory) aOp = storedOperand(g.a, g.transposeA, ir::intImm(0), aBytes);
        ir::WgmmaOperand bOp = storedOperand(g.b, !g.transposeB, ir::mul(jn, ir::intImm(g.atomN)), bBytes);
        // An N atom's accumulators start atomN * bits / 32 columns further.
        int64_t atomColumns = g.atomN * dtypeBits(g.c.buffer->dtype) / 32;
        Expr dColumn = ir::add(ir::tmemColumn(g.c), ir::mul(jn, ir::intImm(atomColumns)));
        Expr dAddress = ir::add(g.c.buffer->tmemAddress, ir::cast(DType::UInt32, dColumn));
        Expr enable = accumulatesInput(g, ks, span);
        DType ab = g.a.buffer->dtype;
        bool scaled = g.inst == ir::GemmInst::TCGEN05BlockScaled;
        // The CTA pair's instruction (cta_group::2) names the pair's M, twice this CTA's rows.
        bool pair = inst.ctaGroup == 2;
        int64_t instructionM = pair ? 2 * g.atomM : g.atomM;
        // PTX ISA, "Instruction descriptor": formats, majors (1: MN-major), N >> 3, M >> 4;
        // D's format at bit 4, except for the block-scaled kinds (always f32), which
        // keep B's scale-factor id there and the factors' type at bit 23 (1: ue8m0).
        uint32_t idesc = static_cast<uint32_t>(inst.aCodes[static_cast<size_t>(ab)]) << 7 |
                         static_cast<uint32_t>(inst.aCodes[static_cast<size_t>(g.b.buffer->dtype)]) << 10 | uint32_t(aOp.mnMajor) << 15 |
                         uint32_t(bOp.mnMajor) << 16 | static_cast<uint32_t>(g.atomN >> 3) << 17 | static_cast<uint32_t>(instructionM >> 4) << 24;
        if (!scaled) idesc |= static_cast<uint32_t>(inst.cCodes[static_cast<size_t>(g.c.buffer->dtype)]) << 4;
        if (scaled && !inst.takes(inst.scale, DType::F8E4M3)) idesc |= 1u << 23;
        std::optional<ir::Tcgen05Scales> scales;
        Expr scaleByte;
        int64_t wordsA = 0, wordsB = 0;   // the word sets of SFA and SFB
        if (scaled) {
            // Each 32-bit word holds the factors of 4 runs of `granularity`
            // elements of K; the k-step reads the byte of its (first) run: its
            // scale-factor id, A's at bit 29 and B's at bit 4 of the descriptor
            // (0 for scale_vec::4X, whose k-step reads all four).
            Expr kAt = g.sfKStart ? ir::add(g.sfKStart, kOrigin) : kOrigin;
            scaleByte = ir::mod(ir::div(kAt, ir::intImm(g.sfGranularityA)), ir::intImm(4));
            Expr descriptor = ir::binary(ir::BinaryOp::BitOr, ir::intImm(idesc),
                                         ir::binary(ir::BinaryOp::BitOr, ir::binary(ir::BinaryOp::Shl, scaleByte, ir::intImm(29)),
                                                    ir::binary(ir::BinaryOp::Shl, scaleByte, ir::intImm(4))));
            // Word w of row m is in lane m, column w * ceil(rows / 32) + m / 32
            // (tcgen05.cp 32x128b.warpx4 per 128 words); the k-step reads word
            // (k / 4g) mod W of the W the buffer holds. An N atom's columns of B
            // start atomN / 32 further (select-gemm-inst: whole words).
            int64_t wordK = 4 * g.sfGranularityA, columnsA = (g.atomM + 31) / 32, columnsB = (N + 31) / 32;
            wordsA = g.sfa->extents.back() / columnsA;
            wordsB = g.sfb->extents.back() / columnsB;
            auto wordColumn = [&](int64_t words, int64_t columnsPerWord) {
                if (words == 1) return ir::intImm(0);
                return ir::mul(ir::mod(ir::div(kAt, ir::intImm(wordK)), ir::intImm(words)), ir::intImm(columnsPerWord));
            };
            auto address = [](const ir::Region &r, const Expr &words) {
                return ir::add(r.buffer->tmemAddress, ir::cast(DType::UInt32, ir::add(ir::tmemColumn(r), words)));
            };
            scales = ir::Tcgen05Scales{g.sfa->buffer, g.sfb->buffer, address(*g.sfa, wordColumn(wordsA, columnsA)),
                                       address(*g.sfb, ir::add(wordColumn(wordsB, columnsB), ir::mul(jn, ir::intImm(g.atomN / 32)))), descriptor};
        }
        // Without mbar the MMAs complete at the thread's next commit, a tcgen05_mma_arrive the program makes (completesOn).
        const ir::Buffer completion = g.mbar ? g.mbar : g.completesOn;
        Stmt mma = std::make_shared<ir::Tcgen05Mma>(inst, g.c.buffer, dAddress, aOp, aAddress, bOp, idesc, enable, completion, scales, span);
        Stmt steps = unrolled(ks, K / g.atomK, unrolled(jn, N / g.atomN, mma, span), span);
        std::vector<Stmt> issued{std::make_shared<ir::Tcgen05Sync>(ir::Tcgen05SyncKind::FenceAfter, span), steps};
        if (g.mbar) issued.push_back(std::make_shared<ir::Tcgen05Commit>(g.mbar, g.mbarIndex ? g.mbarIndex : ir::intImm(0), pair, pair, span));
        Stmt issue = ir::seq(std::move(issued));
        if (aBytes) issue = std::make_shared<ir::Allocate>(aBytes, issue, span);
        if (bBytes) issue = std::make_shared<ir::Allocate>(bBytes, issue, span);

        Decision d;
        d.where = span;
        d.op = "gemm tcgen05";
        d.choice = std::to_string(K / g.atomK * (N / g.atomN)) + " " + inst.ptx + " m" + std::to_string(instructionM) + "n" + std::to_string(g.atomN) + "k" +
                   std::to_string(g.atomK) + " issued by thread " + std::to_string(g.firstThread) +
                   (g.mbar ? ", then tcgen05.commit to '" + g.mbar->name + "'" + (pair ? " of both blocks (.multicast::cluster)" : "")
                           : ", completed by a later tcgen05.commit of that thread (the one on '" + g.completesOn->name + "' after it, or an earlier one)");
        d.why = aInTensorMemory ? "A in tensor memory (the TS form: '" + g.a.buffer->name + "', " + std::to_string(aStepColumns) +
                                      " columns per k-step, K packed along each row's lane) and B " + (bOp.mnMajor ? "N" : "K") +
                                      "-major through a shared-memory descriptor (" + ir::swizzleName(bOp.swizzle) + " swizzle); D in tensor memory, "
                                : "A " + std::string(aOp.mnMajor ? "M" : "K") + "-major and B " + (bOp.mnMajor ? "N" : "K") +
                                      "-major through shared-memory descriptors (" + ir::swizzleName(aOp.swizzle) + " / " +
                                      ir::swizzleName(bOp.swizzle) + " swizzle); D in tensor memory, ";
        d.why += std::to_string(atomColumns * (N / g.atomN)) + " columns of '" + g.c.buffer->name + "'" +
                 (g.atomM == 64 ? ", rows 16w..16w+15 in lanes 32w..32w+15 (PTX data-path layout F)" : "");
        if (pair)
            d.details.push_back("the CTA pair (use_2cta): the leader's thread issues for both blocks; each reads its own " + std::to_string(g.atomM) +
                                " rows of A and its " + std::to_string(g.atomN / 2) + " columns of B at the same shared addresses, and receives its " +
                                std::to_string(g.atomM) + " rows of D in its own tensor memory" +
                                (scaled ? ", scaled by the factors in its own tensor memory (of its rows of A, and of all " + std::to_string(g.atomN) +
                                              " columns of B)"
                                        : ""));
        std::ostringstream hex;
        hex << std::hex << idesc;
        d.details.push_back("instruction descriptor 0x" + hex.str() + (scaled ? " | the k-step's scale-factor byte << 29 (A) and << 4 (B)" : ""));
        if (scaled) {
            std::optional<int64_t> k0 = g.sfKStart ? ir::constInt(g.sfKStart) : std::optional<int64_t>(0);
            std::string kAtText = "(" + (k0 && *k0 == 0 ? std::string("") : "k_start + ") + "ks * " + std::to_string(g.atomK) + ")";
            int64_t factorsPerStep = g.atomK / inst.scaleVec;
            std::string firstByte = factorsPerStep == 4 ? "0" : "s to s + " + std::to_string(factorsPerStep - 1) + ", s = (" + kAtText + " / " +
                                                                   std::to_string(g.sfGranularityA) + ") mod 4 its scale-factor id,";
            std::string which = factorsPerStep > 1 ? "bytes " + (factorsPerStep == 4 ? "0 to 3" : firstByte) + " of its word (" +
                                                         std::to_string(factorsPerStep) + " " + (inst.takes(inst.scale, DType::F8E4M3) ? "ue4m3" : "ue8m0") +
                                                         " factors, one for every " + std::to_string(inst.scaleVec) + " elements of K)"
                                                   : "byte (" + kAtText + " / " + std::to_string(g.sfGranularityA) + ") mod 4 of its word, one " +
                                                         (inst.takes(inst.scale, DType::F8E4M3) ? "ue4m3" : "ue8m0") + " factor for " +
                                                         std::to_string(inst.scaleVec) + " elements of K (" +
                                                         std::to_string(g.sfGranularityA / inst.scaleVec) + " k-step" +
                                                         (g.sfGranularityA / inst.scaleVec == 1 ? "" : "s") + " share a byte)";
            auto wordText = [&](const ir::Region &r, int64_t words) {
                return "'" + r.buffer->name + "' holds " + std::to_string(words) + " word" + (words == 1 ? "" : "s") + " per row" +
                       (words == 1 ? "" : " (the k-step's is word (" + kAtText + " / " + std::to_string(4 * g.sfGranularityA) + ") mod " +
                                              std::to_string(words) + ")");
            };
            d.details.push_back("scale factors in tensor memory as tcgen05.cp 32x128b.warpx4 leaves them (word w of row m in lane m, column w * rows / 32 + m / 32): " +
                                wordText(*g.sfa, wordsA) + ", " + wordText(*g.sfb, wordsB) + "; each k-step reads " + which);
        }
        ctx_.explain.record(std::move(d));
        return std::make_shared<ir::IfThenElse>(ir::isThread(g.firstThread), issue, nullptr, span);
    }

    Stmt lower(const ir::Gemm &g) {
        ir::MmaTiling t = ir::mmaTiling(g);
        // Packed operands (int4) are loaded as the bytes that hold them: the
        // registers of an 8-bit gemm with K counted in bytes (PTX ISA: the
        // m16n8k64 .s4 fragments hold the bytes the m16n8k32 .s8 ones do).
        // Select-gemm-inst takes them only K-major from shared memory.
        const DType operand = t.atom.operand;
        ir::Region ga = g.a, gb = g.b;
        ir::Buffer aBytes, bBytes;
        if (isSubByte(operand)) {
            int64_t bits = dtypeBits(operand);
            t.K = t.K * bits / 8;
            t.atom.k = t.atom.k * bits / 8;
            t.atom.operand = DType::UInt8;
            aBytes = ir::bytesView(g.a.buffer);
            bBytes = ir::bytesView(g.b.buffer);
            ga = ir::bytesRegion(g.a, aBytes);
            gb = ir::bytesRegion(g.b, bBytes);
        }
        const ir::MmaAtom &atom = t.atom;
        SourceRange span = g.span;
        ir::Buffer cRegs = g.c.buffer->registers;
        TILET_ASSERT(cRegs, "gemm accumulator '" << g.c.buffer->name << "' has no registers after infer-layouts");
        bool aInRegisters = g.a.buffer->scope == ir::MemScope::Fragment;

        WarpCoordinates w;
        const ir::VarRef &lane = w.lane, &warpM = w.warpM, &warpN = w.warpN;
        ir::VarRef ks = ir::makeVar("ks"), i = ir::makeVar("i"), j = ir::makeVar("j"), jg = ir::makeVar("jg");

        bool bInRegisters = g.b.buffer->scope == ir::MemScope::Fragment;
        OperandPlan bPlan = bInRegisters ? OperandPlan{} : plan(gb, false, g.transposeB);
        OperandPlan aPlan = aInRegisters ? OperandPlan{} : plan(ga, true, g.transposeA);
        int64_t aRegs = static_cast<int64_t>(ir::mmaARegisters(atom).size());
        int64_t bRegs = static_cast<int64_t>(ir::mmaBRegisters(atom).size());
        int64_t perRegister = ir::mmaElementsPerRegister(atom.operand);
        int64_t aElems = aRegs * perRegister, bElems = bRegs * perRegister;

        Expr kOrigin = ir::mul(ks, ir::intImm(atom.k));
        Expr rowOrigin = ir::add(ir::mul(warpM, ir::intImm(t.warpRows())), ir::mul(i, ir::intImm(atom.m)));
        Expr colBase = ir::mul(warpN, ir::intImm(t.warpCols()));
        std::vector<Stmt> step;

        // The k-step's B registers, in groups of up to four 8x8 matrices.
        ir::Buffer bFrag;
        if (!bInRegisters) bFrag = ir::makeBuffer(g.b.buffer->name + "_frag", atom.operand, {ir::intImm(t.nAtoms() * bElems)}, ir::MemScope::Local, span);
        int64_t atomsPerGroup = std::max<int64_t>(1, 4 / bRegs);
        if (!bPlan.ldmatrix) atomsPerGroup = 1;
        int64_t fullGroups = bInRegisters ? 0 : t.nAtoms() / atomsPerGroup;
        if (fullGroups > 0) {
            Expr firstAtom = ir::mul(jg, ir::intImm(atomsPerGroup));
            step.push_back(unrolled(jg, fullGroups,
                                    loadRegisters(bPlan, atom, atomsPerGroup * bRegs, ir::add(colBase, ir::mul(firstAtom, ir::intImm(atom.n))), kOrigin,
                                                  bFrag, ir::mul(firstAtom, ir::intImm(bElems)), lane, span),
                                    span));
        }
        for (int64_t a = fullGroups * atomsPerGroup; !bInRegisters && a < t.nAtoms();) {
            int64_t atoms = (bPlan.ldmatrix && bRegs == 1 && t.nAtoms() - a >= 2) ? 2 : 1;   // ldmatrix.x2 or .x1
            step.push_back(loadRegisters(bPlan, atom, atoms * bRegs, ir::add(colBase, ir::intImm(a * atom.n)), kOrigin, bFrag,
                                         ir::intImm(a * bElems), lane, span));
            a += atoms;
        }

        // The k-step's A registers, one ldmatrix per atom along M.
        ir::Buffer aFrag;
        if (!aInRegisters) {
            aFrag = ir::makeBuffer(g.a.buffer->name + "_frag", atom.operand, {ir::intImm(t.mAtoms() * aElems)}, ir::MemScope::Local, span);
            step.insert(step.begin(),
                        unrolled(i, t.mAtoms(), loadRegisters(aPlan, atom, aRegs, rowOrigin, kOrigin, aFrag, ir::mul(i, ir::intImm(aElems)), lane, span),
                                 span));
        }

        // The k-step's scale words (block-scaled kinds).
        std::optional<ir::MmaScales> scales;
        ScaleRegisters scaleRegs;
        if (g.inst == ir::GemmInst::MMABlockScaled) {
            scaleRegs = loadScales(g, t, w, ks, span);
            for (Stmt &s : scaleRegs.loads) step.push_back(std::move(s));
            scales = ir::MmaScales{scaleRegs.a, ir::div(i, ir::intImm(2)), ir::mod(i, ir::intImm(2)), scaleRegs.byteId,
                                   scaleRegs.b, ir::div(j, ir::intImm(4)), ir::mod(j, ir::intImm(4)), scaleRegs.byteId};
        }

        // One mma per atom of the warp's part of C.
        ir::Buffer aSource = aInRegisters ? g.a.buffer->registers : aFrag;
        Expr aOffset = aInRegisters ? ir::mmaOperandAOffset(t, i, ks) : ir::mul(i, ir::intImm(aElems));
        ir::Buffer bSource = bInRegisters ? g.b.buffer->registers : bFrag;
        TILET_ASSERT(bSource, "gemm B operand '" << g.b.buffer->name << "' has no registers after infer-layouts");
        Expr bOffset = bInRegisters ? ir::mmaOperandBOffset(t, j, ks) : ir::mul(j, ir::intImm(bElems));
        Stmt mma = std::make_shared<ir::Mma>(*g.instruction, operand, cRegs, ir::mmaAccumulatorOffset(t, i, j), aSource, aOffset, bSource,
                                             bOffset, span, scales);
        step.push_back(unrolled(i, t.mAtoms(), unrolled(j, t.nAtoms(), mma, span), span));

        Stmt body = ir::seq(std::move(step));
        if (bFrag) body = std::make_shared<ir::Allocate>(bFrag, body, span);
        if (scales) body = std::make_shared<ir::Allocate>(scaleRegs.a, std::make_shared<ir::Allocate>(scaleRegs.b, body, span), span);
        if (aFrag) body = std::make_shared<ir::Allocate>(aFrag, body, span);
        body = unrolled(ks, t.kSteps(), body, span);

        std::vector<Stmt> all;
        if (Stmt clear = clearAccumulators(g, cRegs)) all.push_back(clear);
        all.push_back(body);
        Stmt out = w.bind(ir::seq(std::move(all)), t, g.firstThread, span);
        if (aBytes) out = std::make_shared<ir::Allocate>(aBytes, std::make_shared<ir::Allocate>(bBytes, out, span), span);

        Decision d;
        d.where = span;
        d.op = "gemm operand loads";
        d.choice = "A: " + (aInRegisters ? std::string("already in registers (fragment '") + g.a.buffer->name + "')" : aPlan.choice) +
                   "; B: " + (bInRegisters ? std::string("already in registers (fragment '") + g.b.buffer->name + "')" : bPlan.choice);
        d.why = (aInRegisters ? std::string() : "A: " + aPlan.why + "; ") + (bInRegisters ? std::string() : "B: " + bPlan.why + "; ") +
                std::to_string(t.kSteps()) + " k-step" +
                (t.kSteps() == 1 ? "" : "s") + " of " + std::to_string(t.mAtoms() * t.nAtoms()) + " mma.sync per warp";
        if (scales)
            d.choice += "; scale factors: " + std::to_string(*ir::constInt(scaleRegs.a->shape[0])) + " word(s) of '" +
                        g.sfa->buffer->name + "' and " + std::to_string(*ir::constInt(scaleRegs.b->shape[0])) + " of '" + g.sfb->buffer->name +
                        "' per lane and k-step (one for two atoms along M, one for four along N; the mma's thread-id selectors pick the lanes)";
        ctx_.explain.record(std::move(d));
        return out;
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    std::map<const ir::BufferNode *, ir::MmaTiling> operandTiling_;
    std::map<const ir::BufferNode *, int64_t> operandFirstThread_;
    bool issuesWgmma_ = false;   // a gemm of the kernel is a wgmma
};

} // namespace

std::string gemmNotGeneratedYet(const ir::Gemm &g) {
    std::string inst = ir::gemmInstName(g.inst);
    if (g.inst == ir::GemmInst::WGMMA) {
        if (!g.c.coversBuffer()) return "a gemm into part of a fragment is";
        return "";
    }
    if (g.inst == ir::GemmInst::TCGEN05 || g.inst == ir::GemmInst::TCGEN05BlockScaled) {
        if (g.inst == ir::GemmInst::TCGEN05BlockScaled && g.a.buffer->scope == ir::MemScope::TMem)
            return "a block-scaled tcgen05 gemm with A in tensor memory (the TS form) is";
        if ((g.atomM != 128 && g.atomM != 64) || g.c.tileShape()[0] != g.atomM)
            return "a tcgen05 gemm of " + std::to_string(g.c.tileShape()[0]) + " rows (cta_group::1 without .ws: one instruction of M = 128 or 64) is";
        if (!ir::tmemAllRowsOfOneStage(g.c)) return "a gemm into part of a tensor-memory tile's rows is";
        // PTX ISA, "Packing format for matrix D in Tensor Memory": a 16-bit D
        // keeps one value per 32-bit column, unlike the packed pairs tensor
        // memory holds for A (and tcgen05.ld/st move here).
        if (dtypeBits(g.c.buffer->dtype) != 32)
            return "a tcgen05 gemm into a " + std::string(dtypeName(g.c.buffer->dtype)) + " accumulator (one value per 32-bit column) is";
        if (g.a.buffer->scope == ir::MemScope::TMem) {
            // Layout F (M = 64) keeps a row's lanes apart; the TS form here reads row r from lane r.
            if (g.atomM != 128) return "a tcgen05 gemm of 64 rows with A in tensor memory (the TS form) is";
            if (!ir::tmemAllRowsOfOneStage(g.a)) return "a tcgen05 gemm reading part of a tensor-memory A tile's rows is";
            std::optional<int64_t> k0 = ir::constInt(g.a.mins.back());
            if (!k0 || *k0 % g.atomK != 0) return "a tcgen05 gemm whose tensor-memory A starts inside a k-step is";
        }
        return "";
    }
    // kind::mxf8f6f4 reads 4- and 6-bit operands one to a byte, unlike tilet's packed tiles.
    if (g.inst == ir::GemmInst::MMABlockScaled && g.instruction->subBytePadded && dtypeBits(g.a.buffer->dtype) != 8)
        return "a block-scaled mma.sync of " + std::string(dtypeName(g.a.buffer->dtype)) + " operands with one factor per 32 elements (" +
               std::string(g.instruction->name) + ", one element to a byte) is";
    if (!ir::isMmaSync(g.inst) && g.inst != ir::GemmInst::FMA)
        return "gemm code generation (" + inst + ") is";
    if (g.c.buffer->scope == ir::MemScope::Fragment && !g.c.coversBuffer()) return "a gemm into part of a fragment is";
    if (g.inst == ir::GemmInst::FMA) {
        if (g.a.buffer->scope == ir::MemScope::Fragment) return "a gemm computed with FMA from a fragment A operand is";
        if (g.b.buffer->scope == ir::MemScope::Fragment) return "a gemm computed with FMA from a fragment B operand is";
        return "";
    }
    // The fragments built here are the m16n8 ones (ir/MmaLayout.h).
    if (g.instruction->layout != FragmentLayout::MmaM16N8) return "gemm code generation (" + std::string(g.instruction->name) + ") is";
    if (g.a.buffer->dtype != g.b.buffer->dtype) return "an mma.sync gemm with A and B of different dtypes is";
    if (g.a.buffer->scope == ir::MemScope::Fragment && !g.a.coversBuffer()) return "an mma.sync gemm reading part of a register A operand is";
    if (g.b.buffer->scope == ir::MemScope::Fragment) {
        if (!g.b.coversBuffer()) return "an mma.sync gemm reading part of a register B operand is";
        if (g.inst == ir::GemmInst::MMABlockScaled) return "a block-scaled mma.sync with B in registers is";
        if (dtypeBits(g.b.buffer->dtype) < 8) return "an mma.sync gemm with a register B operand of sub-byte elements is";
    }
    return "";
}

ir::Kernel lowerGemms(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Lowerer lowerer(kernel, ctx);
    lowerer.findOperands(kernel.body);
    out.body = lowerer.mutate(kernel.body);
    return out;
}

} // namespace tilet
