// SelectGemmInst.cpp -- see SelectGemmInst.h.
//
// 1. Gather the gemm's shape (M, N, K from the C and A tiles), dtypes,
//    transposes and scopes.
// 2. Check each candidate instruction (TCGEN05, WGMMA, MMA) and keep the
//    reason when it does not apply.
// 3. Walk the chain; compute the warp partition and instruction shape of the
//    choice; choose the swizzle of each shared operand.
// 4. Record the decision.
#include "passes/SelectGemmInst.h"

#include "ir/Analysis.h"
#include "ir/BufferEdits.h"
#include "ir/Visitor.h"
#include "passes/RoleMutator.h"
#include "target/Catalog.h"

#include <map>
#include <set>
#include <cmath>
#include <numeric>
#include <sstream>
#include <tuple>

namespace tilet {

namespace {

using ir::GemmInst;

struct Shape {
    int64_t M = 0, N = 0, K = 0;
    DType a = DType::F16, b = DType::F16, c = DType::F32;
    bool transA = false, transB = false;
    int64_t contA = 0, contB = 0;   // elements of a shared operand's storage row
    ir::MemScope sa = ir::MemScope::Shared, sb = ir::MemScope::Shared, sc = ir::MemScope::Fragment;
    int64_t sfGranularity = 0;   // gemm_blockscaled: K elements per scale factor (0: not given)
    bool pair = false;           // use_2cta: the CTA pair's MMA (tcgen05 cta_group::2); M is still this CTA's
};

std::string name(DType t) { return std::string(dtypeName(t)); }

std::string str(int64_t v) { return std::to_string(v); }

// The shared buffers a call_extern is given the address of, and the first
// such function: they keep a linear layout, as the function indexes them.
class ExternPointees : public ir::Visitor {
public:
    std::map<const ir::BufferNode *, std::string> functionOf;
    void visitCallExtern(const ir::CallExtern &n) override {
        for (size_t i = 0; i < n.args.size(); ++i)
            if (n.kinds[i] != ir::ExternArgKind::Value) functionOf.emplace(ir::as<ir::Load>(n.args[i])->buffer.get(), n.function);
        ir::Visitor::visitCallExtern(n);
    }
};

class Selector : public RoleMutator {
public:
    Selector(const ir::Kernel &k, PassContext &ctx) : RoleMutator(k), kernel_(k), ctx_(ctx), target_(ctx.target) {
        ExternPointees pointees;
        pointees.visit(k.body);
        externFunctionOf_ = std::move(pointees.functionOf);
    }
    using ir::Mutator::mutate;
    const ir::BufferEdits &decisions() const { return edits_; }

protected:
    // Inside ws(...) a gemm runs on the role's warp groups (RoleMutator).
    ir::Stmt mutateGemm(const ir::Stmt &self, const ir::Gemm &n) override {
        auto g = std::make_shared<ir::Gemm>(n);
        g->threads = roleThreads();
        g->firstThread = roleFirstThread();
        if (!decide(*g)) return self;
        return g;
    }

private:
    // ------------------------------------------------------------ facts

    Shape shapeOf(const ir::Gemm &g) const {
        Shape s;
        std::vector<int64_t> a = g.a.tileShape(), c = g.c.tileShape();
        s.M = c.size() == 2 ? c[0] : 0;
        s.N = c.size() == 2 ? c[1] : 0;
        s.K = a.size() == 2 ? (g.transposeA ? a[0] : a[1]) : 0;
        s.a = g.a.buffer->dtype;
        s.b = g.b.buffer->dtype;
        s.c = g.c.buffer->dtype;
        s.transA = g.transposeA;
        s.transB = g.transposeB;
        s.sa = g.a.buffer->scope;
        s.sb = g.b.buffer->scope;
        s.sc = g.c.buffer->scope;
        if (std::optional<std::vector<int64_t>> a = g.a.buffer->constShape()) s.contA = a->back();
        if (std::optional<std::vector<int64_t>> b = g.b.buffer->constShape()) s.contB = b->back();
        s.sfGranularity = g.sfGranularityA;   // sema requires both; select-gemm-inst checks they agree
        s.pair = g.use2cta;
        return s;
    }

    int64_t warps() const { return roleThreads() / 32; }

    // AllowTcgen5Mma: sm_100 family, A shared or TMEM, B shared, C in TMEM, and
    // the (M, N, K, dtype) whitelist (GetTCGEN5MMAMeta).
    Option tcgen05(const Shape &s, ir::Gemm &g, bool blockScaled) const {
        if (s.sc != ir::MemScope::TMem)
            return Option::no("C '" + g.c.buffer->name + "' is a " + ir::memScopeName(s.sc) +
                              "; tcgen05 accumulates in tensor memory (alloc_tmem)");
        const Instruction *inst = nullptr;
        if (Option o = pick(InstrClass::Tcgen05Mma, s, blockScaled, inst); !o.ok) return o;
        if (s.sa == ir::MemScope::TMem && s.transA) return Option::no("tcgen05 reads A from tensor memory K-major only (transpose_A = false)");
        // An MN-major shared tile is described by its swizzle atoms: rows of
        // a multiple of 32 bytes (the unswizzled MN-major layout is not generated).
        for (const auto &[scope, mnMajor, bits, cont, what] : {std::tuple{s.sa, s.transA, dtypeBits(s.a), s.contA, "A"},
                                                                std::tuple{s.sb, !s.transB, dtypeBits(s.b), s.contB, "B"}}) {
            if (scope == ir::MemScope::Shared && mnMajor && (cont * bits / 8) % 32 != 0)
                return Option::no(std::string(what) + " is " + (std::string(what) == "A" ? "M" : "N") + "-major in shared rows of " + str(cont * bits / 8) +
                                  " bytes, which take no swizzle; tilet's tcgen05 descriptors of an MN-major tile need rows of a multiple of 32 bytes "
                                  "(or store it K-major: " + (std::string(what) == "A" ? "transpose_A = false" : "transpose_B = true") + ")");
        }
        int64_t k = inst->k.lo;
        if (inst->ctaGroup == 2) {
            // One instruction for the pair: each CTA's B half is the N / 2
            // columns its descriptor describes, so N is not split further.
            if (!inst->m.contains(2 * s.M))
                return Option::no("the CTA pair's tcgen05.mma has M = " + str(inst->m.lo) + ", " + str(inst->m.lo / 2) + " rows in each CTA; this CTA's C has " +
                                  str(s.M));
            if (!inst->n.contains(s.N))
                return Option::no("the CTA pair's tcgen05.mma takes N a multiple of " + str(inst->n.step) + " up to " + str(inst->n.hi) +
                                  " in one instruction (each CTA holding half of B); C has N = " + str(s.N));
            // Each CTA reads the factors of its rows of A and of all N columns from its own tensor memory.
            if (blockScaled)
                if (Option o = tcgen05ScaleOperands(g, s, k); !o.ok) return o;
            g.atomM = s.M;
            g.atomN = s.N;
            g.atomK = k;
            g.instruction = inst;
            return Option::yes();
        }
        int64_t atomM = s.M % 128 == 0 ? 128 : s.M % 64 == 0 ? 64 : s.M % 32 == 0 ? 32 : 0;
        if (!atomM) return Option::no("M = " + str(s.M) + " is not a multiple of 32, 64 or 128");
        int64_t atomN = 0;
        for (int64_t n = 256; n >= 8 && !atomN; n -= 8) {
            // PTX ISA (tcgen05.mma shapes, cta_group::1): M = 64 takes N a
            // multiple of 8, M = 128 a multiple of 16; M = 32 exists only as
            // tcgen05.mma.ws, whose N is 64, 128 or 256.
            bool shapeExists = atomM == 64 ? true : atomM == 128 ? n % 16 == 0 : (n == 256 || n == 128 || n == 64);
            if (s.N % n == 0 && shapeExists) atomN = n;
        }
        if (!atomN) return Option::no("no tcgen05 atom divides N = " + str(s.N));
        if (blockScaled && !inst->m.contains(atomM))
            return Option::no("block-scaled tcgen05.mma has M = " + str(inst->m.lo) + " (one CTA); M = " + str(s.M) + " takes atoms of " + str(atomM));
        if (blockScaled) {
            if (Option o = tcgen05ScaleOperands(g, s, k); !o.ok) return o;
            // Each N atom reads B's factor words from its first column's word (column n / 32).
            if (s.N != atomN && atomN % 32 != 0)
                return Option::no("N = " + str(s.N) + " takes tcgen05 atoms of N = " + str(atomN) + ", which do not start on a scale word of B (" +
                                  "one per 32 columns)");
        }
        g.atomM = atomM;
        g.atomN = atomN;
        g.atomK = k;
        g.instruction = inst;
        return Option::yes();
    }

    // ------------------------------------------------------------ the catalog

    static bool inScope(uint8_t locations, ir::MemScope scope) {
        return ((locations & kRegisters) && (scope == ir::MemScope::Fragment || scope == ir::MemScope::Local)) ||
               ((locations & kShared) && scope == ir::MemScope::Shared) || ((locations & kTMem) && scope == ir::MemScope::TMem);
    }

    // How an error names a catalog entry: "wgmma", or for mma.sync, whose
    // shapes differ in what they need, "mma.sync m16n8k32 with f8e4m3 operands".
    static std::string formName(const Instruction &i, const Shape &s) {
        std::string cls = catalog::className(i.cls);
        if (i.cls != InstrClass::MmaSync) return cls;
        return cls + " m" + str(i.m.lo) + "n" + str(i.n.lo) + "k" + str(i.k.lo) + " with " + name(s.a) + " operands";
    }

    // The first catalog entry of `cls` that this target has and the gemm's
    // dtypes, operand places, transposes and K fit, in the catalog's order;
    // otherwise why the best candidate does not.
    Option pick(InstrClass cls, const Shape &s, bool blockScaled, const Instruction *&chosen) const {
        std::vector<const Instruction *> forms;
        for (const Instruction &i : catalog::all())
            if (i.cls == cls && i.blockScaled() == blockScaled && i.fits(s.a, s.b, s.c) && (i.ctaGroup == 2) == s.pair) forms.push_back(&i);
        std::string clsName = catalog::className(cls);
        if (forms.empty())
            return Option::no(clsName + " has no " + std::string(s.pair ? "CTA-pair (cta_group::2) " : "") + std::string(blockScaled ? "block-scaled " : "") +
                              name(s.a) + " x " + name(s.b) + " -> " + name(s.c) + " form");
        std::optional<Option> firstReason;
        auto reject = [&](const std::string &why) {
            if (!firstReason) firstReason = Option::no(why);
        };
        for (const Instruction *i : forms) {
            if (!target_.has(i->feature)) {
                reject(formName(*i, s) + " needs " + targetsWith(i->feature) + "; " + target_.name + " has none");
                continue;
            }
            // tilet's lowerings load mma.sync operands from shared memory or fragments and keep C in registers.
            if (!inScope(i->aFrom, s.sa) && !(cls == InstrClass::MmaSync && s.sa == ir::MemScope::Shared)) {
                reject(clsName + " reads A from " + catalog::locationText(i->aFrom) + ", not a " + ir::memScopeName(s.sa));
                continue;
            }
            if (cls == InstrClass::MmaSync ? s.sb != ir::MemScope::Shared && s.sb != ir::MemScope::Fragment : !inScope(i->bFrom, s.sb)) {
                reject(clsName + " reads B from " + (cls == InstrClass::MmaSync ? std::string("shared memory or a fragment") : catalog::locationText(i->bFrom)));
                continue;
            }
            if (!inScope(i->cIn, s.sc)) {
                reject(clsName + " keeps C in " + catalog::locationText(i->cIn) + (i->cIn == kTMem ? "; this C is a " + std::string(ir::memScopeName(s.sc)) : ""));
                continue;
            }
            bool aKMajor = !s.transA, bKMajor = s.transB;
            if ((i->aKMajor && !aKMajor) || (i->bKMajor && !bKMajor)) {
                std::string what = i->aKMajor && i->bKMajor ? "A and B K-major (transpose_A = false, transpose_B = true)" : i->aKMajor ? "A K-major (transpose_A = false)" : "B K-major (transpose_B = true)";
                reject(formName(*i, s) + " needs " + what);
                continue;
            }
            // tcgen05 reads each k-step's factor byte by its scale-factor id, so
            // a multiple of the hardware's spacing spreads a factor over k-steps
            // (TileLang's tcgen05_gemm_blockscaled); mma.sync's byte-id follows the spacing.
            if (blockScaled && cls == InstrClass::Tcgen05Mma && s.sfGranularity % i->scaleVec != 0) {
                reject(formName(*i, s) + " scales every " + str(i->scaleVec) + " elements of K, or a multiple of that; not every " +
                       str(s.sfGranularity) + " (sf_a_granularity_k, sf_b_granularity_k)");
                continue;
            }
            if (cls == InstrClass::Tcgen05Mma && i->subBytePadded && (isSubByte(s.a) || isSubByte(s.b))) {
                DType packed = isSubByte(s.a) ? s.a : s.b;
                reject(std::string(i->ptx) + " reads " + name(packed) + " operands in 8-bit slots; tilet's " + name(packed) + " tiles are packed (a shared tile of " +
                       name(packed) + "_unpacked" + (packed == DType::F4E2M1 ? ", TileLang's float4_e2m1_unpacked," : "") + " is in the slots, loaded by TMA)");
                continue;
            }
            // TMA unpacks into slots along a tensor's rows: an unpacked tile is K-major.
            if ((isUnpacked(s.a) && s.transA) || (isUnpacked(s.b) && !s.transB)) {
                const bool a = isUnpacked(s.a) && s.transA;
                reject("an " + name(a ? s.a : s.b) + " operand is read K-major (" + std::string(a ? "transpose_A = false" : "transpose_B = true") +
                       "): TMA unpacks the rows of a tensor along K");
                continue;
            }
            // A k-step that reads several factors reads consecutive bytes of one word (scale_vec::4X).
            if (blockScaled && cls == InstrClass::Tcgen05Mma && i->k.lo > i->scaleVec && s.sfGranularity != i->scaleVec) {
                reject(std::string(i->ptx) + " reads " + str(i->k.lo / i->scaleVec) + " factors per k-step from consecutive bytes of a word, one for every " +
                       str(i->scaleVec) + " elements of K; not one every " + str(s.sfGranularity) + " (sf_a_granularity_k, sf_b_granularity_k)");
                continue;
            }
            if (blockScaled && cls != InstrClass::Tcgen05Mma && s.sfGranularity && s.sfGranularity != i->scaleVec) {
                reject(formName(*i, s) + " scales every " + str(i->scaleVec) + " elements of K, not every " + str(s.sfGranularity) +
                       " (sf_a_granularity_k, sf_b_granularity_k)");
                continue;
            }
            if (s.K % i->k.lo != 0) {
                reject("K = " + str(s.K) + " is not a multiple of the " + str(i->k.lo) + " one " + (cls == InstrClass::MmaSync ? "m" + str(i->m.lo) + "n" + str(i->n.lo) + "k" + str(i->k.lo) : clsName) + " step consumes");
                continue;
            }
            chosen = i;
            return Option::yes();
        }
        return *firstReason;
    }

    // AllowWgmma: sm_90 family, M >= 64, warps a multiple of 4, CheckWgmma.
    Option wgmma(const Shape &s, const Instruction *&inst) const {
        if (Option o = pick(InstrClass::Wgmma, s, false, inst); !o.ok) return o;
        if (s.M < inst->m.lo) return Option::no("M = " + str(s.M) + " is below the " + str(inst->m.lo) + " rows of a warpgroup MMA");
        if (warps() % 4 != 0) return Option::no(str(roleThreads()) + " threads are not whole warpgroups of 128");
        if (s.sa == ir::MemScope::Fragment) {
            if (s.transA) return Option::no("wgmma reads A from registers K-major only (transpose_A = false)");
            if (dtypeBits(s.a) != 16) return Option::no("tilet generates wgmma with A in registers for f16 and bf16 only");
        }
        // The descriptors describe swizzled tiles: rows of a multiple of 32 bytes.
        for (const auto &[scope, bits, cont, what] : {std::tuple{s.sa, dtypeBits(s.a), s.contA, "A"}, std::tuple{s.sb, dtypeBits(s.b), s.contB, "B"}}) {
            if (scope == ir::MemScope::Shared && (cont * bits / 8) % 32 != 0)
                return Option::no(std::string(what) + "'s shared rows of " + str(cont * bits / 8) +
                                  " bytes take no swizzle; wgmma's descriptors need rows of a multiple of 32 bytes");
        }
        return Option::yes();
    }

    // The mma.sync entry of the catalog for the operand types on this target.
    Option mmaAtom(const Shape &s, const Instruction *&inst, bool blockScaled = false) const {
        if (s.sa == ir::MemScope::TMem || s.sc == ir::MemScope::TMem)
            return Option::no("mma.sync works on registers; tensor memory needs tcgen05");
        if (Option o = pick(InstrClass::MmaSync, s, blockScaled, inst); !o.ok) return o;
        if (isSubByte(s.a)) {
            // Packed operands are moved in bytes by ldmatrix: rows of whole 16-byte runs from shared memory.
            if (s.sa != ir::MemScope::Shared) return Option::no("packed " + name(s.a) + " A operands are read from shared memory");
            for (int64_t cont : {s.contA, s.contB}) {
                if (cont * dtypeBits(s.a) % 128 != 0) return Option::no("the shared rows of packed operands must be whole 16-byte runs; a row of " + str(cont) + " " + name(s.a) + " elements is not");
            }
        }
        return Option::yes();
    }

    // The scale-factor regions a block-scaled mma.sync reads word by word
    // (docs/language.md, gemm_blockscaled): every word the gemm needs lies
    // inside them.
    Option mmaScaleOperands(const ir::Gemm &g, const Shape &s, const Instruction &inst) const {
        int64_t wordK = 4 * inst.scaleVec;   // the K elements one word's four factors cover
        std::optional<int64_t> k0 = g.sfKStart ? ir::constInt(g.sfKStart) : std::optional<int64_t>(0);
        if (g.sfKStart) {
            int64_t divisor = ir::knownDivisor(g.sfKStart);   // 0 for k_start = 0
            if (divisor != 0 && divisor % wordK != 0)
                return Option::no("k_start must be a multiple of " + str(wordK) + " (the K elements of one scale word); it is not known to be");
            if (k0 && *k0 < 0) return Option::no("k_start = " + str(*k0) + " is negative; it is the gemm's first K position in the scale words");
        }
        if (g.sfLayout == ir::ScaleLayout::ChunkKMajor) {
            // A chunk's words per row cover kScaleChunkWords * wordK elements of K; the gemm's must all be in it.
            int64_t chunkK = ir::kScaleChunkWords * wordK;
            int64_t divisor = g.sfKStart ? ir::knownDivisor(g.sfKStart) : 0;
            bool inChunk = k0 ? *k0 % chunkK + s.K <= chunkK : (divisor % chunkK == 0 && s.K <= chunkK);
            if (!inChunk)
                return Option::no("sf_layout = blockscaled_chunk_kmajor: a chunk holds the factors of " + str(chunkK) + " elements of K, and K positions " +
                                  (k0 ? str(*k0) + " to " + str(*k0 + s.K - 1) : "k_start + 0 to k_start + " + str(s.K - 1)) +
                                  (k0 ? " are not within one" : " are not known to be within one (k_start a multiple of " + str(chunkK) + ")"));
        }
        for (bool isA : {true, false}) {
            const ir::Region &r = isA ? *g.sfa : *g.sfb;
            const char *operand = isA ? "SFA" : "SFB";
            int64_t rows = isA ? s.M : s.N;
            if (r.buffer->scope != ir::MemScope::Shared && r.buffer->scope != ir::MemScope::Global)
                return Option::no(std::string(operand) + " '" + r.buffer->name + "' is a " + ir::memScopeName(r.buffer->scope) +
                                  "; the scale words are read from shared or global memory");
            // 2-D (sema), after a pipelined loop's stage dimension
            const std::vector<int64_t> shape(r.extents.end() - 2, r.extents.end());
            if (g.sfLayout == ir::ScaleLayout::ChunkKMajor) {
                // TileLang's blockscaled_chunk_kmajor: one tile's words for chunkK elements of K.
                if (shape != std::vector<int64_t>{ir::kScaleChunkRows, ir::kScaleChunkWords})
                    return Option::no("sf_layout = blockscaled_chunk_kmajor reads one chunk of " + str(ir::kScaleChunkRows) + " rows x " +
                                      str(ir::kScaleChunkWords) + " words; " + std::string(operand) + " is " + str(shape[0]) + " x " + str(shape[1]));
                if (rows > ir::kScaleChunkRows)
                    return Option::no("a chunk of sf_layout = blockscaled_chunk_kmajor holds the factors of " + str(ir::kScaleChunkRows) + " rows; " +
                                      std::string(isA ? "A" : "B") + " has " + str(rows));
                continue;
            }
            if (shape[0] < rows)
                return Option::no(std::string(operand) + " has " + str(shape[0]) + " rows; it needs one for each of the " + str(rows) + " rows of " +
                                  (isA ? "A" : "B"));
            if (!k0 && shape[1] * wordK <= s.K)
                return Option::no(std::string(operand) + "'s " + str(shape[1]) + " words per row hold only this gemm's " + str(s.K) +
                                  " elements of K, and row-major scale words are numbered from k_start, which is not 0 here (give the whole row of words, or no k_start)");
            if (k0 && (*k0 + s.K) / wordK > shape[1])
                return Option::no(std::string(operand) + " has " + str(shape[1]) + " words per row; K positions " + str(*k0) + " to " +
                                  str(*k0 + s.K - 1) + " need " + str((*k0 + s.K) / wordK) + " (one per " + str(wordK) + ")");
        }
        return Option::yes();
    }

    // A block-scaled tcgen05.mma reads its factors from tensor memory, where
    // tcgen05_cp_warpx4 puts them: word w of row m in lane m, column
    // w * ceil(rows / 32) + m / 32 (docs/language.md, gemm_blockscaled).
    Option tcgen05ScaleOperands(const ir::Gemm &g, const Shape &s, int64_t atomK) const {
        for (bool isA : {true, false}) {
            const ir::Region &r = isA ? *g.sfa : *g.sfb;
            const char *operand = isA ? "SFA" : "SFB";
            int64_t rows = isA ? s.M : s.N;
            if (r.buffer->scope != ir::MemScope::TMem)
                return Option::no(std::string(operand) + " '" + r.buffer->name + "' is a " + ir::memScopeName(r.buffer->scope) +
                                  "; tcgen05.mma reads scale factors from tensor memory (alloc_tmem, filled by tcgen05_cp_warpx4)");
            int64_t columns = r.extents.back();
            if (columns * 32 < rows)
                return Option::no(std::string(operand) + " '" + r.buffer->name + "' has " + str(columns) + " columns; a word set of " + str(rows) +
                                  " rows takes " + str((rows + 31) / 32) + " (word w of row m in column w * " + str((rows + 31) / 32) +
                                  " + m / 32)");
        }
        if (g.sfLayout != ir::ScaleLayout::RowMajor)
            return Option::no("sf_layout = blockscaled_chunk_kmajor describes words in shared or global memory; tensor-memory factors have tcgen05.cp's layout");
        if (g.sfKStart) {
            int64_t divisor = ir::knownDivisor(g.sfKStart);
            std::optional<int64_t> k0 = ir::constInt(g.sfKStart);
            if ((k0 && *k0 < 0) || (divisor != 0 && divisor % atomK != 0))
                return Option::no("k_start must be a non-negative multiple of " + str(atomK) + " (a k-step's first K position)");
        }
        return Option::yes();
    }

    // The end of the chain: mma.sync if it fits, else FMA.
    void fallBackToMma(const Shape &s, const Instruction *&chosen, GemmInst &inst, std::string &why, std::vector<Rejected> &rejected) const {
        Option mma = mmaAtom(s, chosen);
        if (mma.ok) {
            inst = GemmInst::MMA;
            why = "warp-level mma.sync";
            return;
        }
        rejected.push_back({"MMA", mma.reason});
        // Element loads of packed operands would read half bytes: a limit of the FMA lowering.
        if (isPacked(s.a) || isPacked(s.b)) {
            inst = GemmInst::Unselected;
            why = "no tensor-core instruction fits, and tilet's FMA gemm does not read packed " + name(isPacked(s.a) ? s.a : s.b) + " operands";
            return;
        }
        inst = GemmInst::FMA;
        why = "no tensor-core instruction fits; every element is computed with FMA";
    }

    // The wgmma warp partition and atom: warp groups along M and N, an
    // N-major B atom starting on a swizzle segment (64 f16 for 128B).
    bool wgmmaShape(const Shape &s, const Instruction &inst, ir::Gemm &g, int64_t &wm, int64_t &wn, std::string &error) const {
        int64_t step = 8;
        if (!s.transB) {
            int64_t rowBytes = s.contB * dtypeBits(s.b) / 8;
            step = (rowBytes % 128 == 0 ? 128 : rowBytes % 64 == 0 ? 64 : 32) * 8 / dtypeBits(s.b);
        }
        if (!partition(GemmInst::WGMMA, s, g.policy, 16, step, wm, wn, error)) return false;
        if (s.sa == ir::MemScope::Fragment && wn != 1) {
            error = "with A in registers every warp group needs whole rows of C (a " + str(wm) + " x " + str(wn) +
                    " partition splits N); policy = FullRow stacks the warp groups along M";
            return false;
        }
        int64_t perGroupN = s.N / wn;
        int64_t n = 0;
        for (int64_t cand = std::min<int64_t>(inst.n.hi, perGroupN); cand >= inst.n.lo && !n; cand -= inst.n.step) {
            // N a multiple of 16 when the columns allow it (N = 8 mod 16 is TileLang #2593's trap).
            if (perGroupN % cand == 0 && cand % step == 0 && (cand % 16 == 0 || perGroupN % 16 != 0)) n = cand;
        }
        if (!n) {
            error = "no wgmma width divides the " + str(perGroupN) + " columns of a warp group in whole " + str(step) + "-column swizzle segments of B";
            return false;
        }
        g.atomM = inst.m.lo, g.atomN = n, g.atomK = inst.k.lo;
        return true;
    }

    // ComputeDefaultWarpPartition / ComputeWgmmaWarpPartition.
    bool partition(GemmInst inst, const Shape &s, ir::GemmPolicy policy, int64_t minRows, int64_t minCols, int64_t &wm,
                   int64_t &wn, std::string &error) const {
        int64_t W = warps();
        if (W == 0) {
            error = "its " + str(roleThreads()) + (roleThreads() == 1 ? " thread is" : " threads are") + " not a whole warp, and a gemm is spread over whole warps";
            return false;
        }
        if (inst == GemmInst::FMA || inst == GemmInst::TCGEN05) {
            wm = 1;
            wn = W;
            return true;
        }
        bool group = inst == GemmInst::WGMMA;
        auto valid = [&](int64_t m, int64_t n) {
            return m * n == W && s.M % (minRows * m) == 0 && s.N % (minCols * n) == 0 && (!group || m % 4 == 0);
        };
        wm = wn = 0;
        if (policy == ir::GemmPolicy::FullRow) {
            for (int64_t m = W; m >= 1 && !wm; --m) {
                if (W % m == 0 && valid(m, W / m)) wm = m, wn = W / m;
            }
        } else if (policy == ir::GemmPolicy::FullCol) {
            for (int64_t n = W; n >= 1 && !wm; --n) {
                if (W % n == 0 && valid(W / n, n)) wm = W / n, wn = n;
            }
        } else {
            double best = 1e300;
            for (int64_t m = 1; m <= W; ++m) {
                if (W % m != 0 || !valid(m, W / m)) continue;
                double score = std::abs(double(s.M) / (minRows * m) / (double(s.N) / (8.0 * (W / m))) - double(s.M) / s.N);
                if (score < best) best = score, wm = m, wn = W / m;
            }
        }
        if (wm) return true;
        error = "no warp partition covers M = " + str(s.M) + ", N = " + str(s.N) + " with " + str(W) + " warps (policy " +
                ir::gemmPolicyName(policy) + "): each warp must own a multiple of " + str(minRows) + " rows and " + str(minCols) +
                " columns" + (group ? ", with warps along M a multiple of 4" : "") + "; change threads or the tile shape";
        return false;
    }

    // MakeGemmABLayout: the widest swizzle the contiguous extent allows.
    void chooseSwizzle(const ir::Region &r, bool kContiguous, const std::string &role, Decision &d) {
        const ir::BufferNode &b = edits_.current(r.buffer);
        if (b.scope != ir::MemScope::Shared) return;
        std::vector<int64_t> shape = *b.constShape();
        int64_t cont = shape.back();
        // In bytes: packed sub-byte tiles are swizzled as the bytes that hold
        // them (every access of a packed buffer goes through its uint8 view).
        int64_t rowBytes = cont * dtypeBits(b.dtype) / 8;
        ir::SharedSwizzle sw = rowBytes % 128 == 0 ? ir::SharedSwizzle::B128
                             : rowBytes % 64 == 0  ? ir::SharedSwizzle::B64
                             : rowBytes % 32 == 0  ? ir::SharedSwizzle::B32
                                                   : ir::SharedSwizzle::None;
        if (b.swizzle != ir::SharedSwizzle::None && b.swizzle != sw) sw = b.swizzle;   // a buffer keeps its first layout
        auto external = externFunctionOf_.find(r.buffer.get());
        if (external != externFunctionOf_.end()) sw = ir::SharedSwizzle::None;
        edits_.edit(r.buffer).swizzle = sw;
        std::string shapeText;
        for (size_t i = 0; i < shape.size(); ++i) shapeText += (i ? ", " : "") + str(shape[i]);
        std::string text = role + " '" + b.name + "' [" + shapeText + "] " + name(b.dtype) + " (" + (kContiguous ? "K" : "MN") +
                           "-contiguous): ";
        if (external != externFunctionOf_.end())
            text += "linear layout, unswizzled: call_extern '" + external->second + "' is given its address and indexes it in order";
        else if (sw == ir::SharedSwizzle::None)
            text += "no swizzle fits a " + str(cont * dtypeBits(b.dtype) / 8) + "-byte row; linear layout";
        else
            text += std::string(ir::swizzleName(sw)) + " swizzle of its " + str(cont * dtypeBits(b.dtype) / 8) + "-byte rows";
        d.details.push_back(text);
    }

    // ------------------------------------------------------------ the chain

    bool decide(ir::Gemm &g) {
        Shape s = shapeOf(g);
        Decision d;
        d.where = g.span;
        d.op = "gemm " + std::string(ir::memScopeName(s.sa)) + " x " + ir::memScopeName(s.sb) + " -> " + ir::memScopeName(s.sc);
        std::vector<Rejected> &rejected = d.rejected;
        auto fail = [&](const std::string &what, const std::string &reason) {
            ctx_.diags.error(g.span, what + ": " + reason);
            return false;
        };
        const Instruction *mma = nullptr, *wg = nullptr;   // the catalog entries chosen
        GemmInst inst = GemmInst::Unselected;
        std::string why;
        bool blockScaled = g.sfa.has_value();
        if (g.sfGranularityA && g.sfGranularityB && g.sfGranularityA != g.sfGranularityB)
            return fail("gemm_blockscaled cannot be lowered", "A's and B's scale factors cover " + str(g.sfGranularityA) + " and " +
                                                                      str(g.sfGranularityB) + " elements of K; the instructions scale both alike");
        if (g.use2cta && !kernel_.pairCluster())
            return fail("use_2cta cannot be honoured", "the CTA pair's MMA needs the kernel to run in pairs of blocks: cluster(2) or cluster(1, 2)");

        Option tc = tcgen05(s, g, blockScaled);
        const Instruction *tcInst = g.instruction;
        if (g.explicitInst != GemmInst::Unselected) {
            switch (g.explicitInst) {
            case GemmInst::TCGEN05:
                if (!tc.ok) return fail("inst = tcgen05 cannot be honoured", tc.reason);
                inst = GemmInst::TCGEN05;
                break;
            case GemmInst::WGMMA: {
                Option o = wgmma(s, wg);
                if (!o.ok) return fail("inst = wgmma cannot be honoured", o.reason);
                inst = GemmInst::WGMMA;
                break;
            }
            case GemmInst::MMA: {
                Option o = mmaAtom(s, mma);
                if (!o.ok) return fail("inst = mma cannot be honoured", o.reason);
                inst = GemmInst::MMA;
                break;
            }
            default:
                if (isPacked(s.a) || isPacked(s.b))
                    return fail("inst = fma cannot be honoured", "tilet's FMA gemm does not read packed " + name(isPacked(s.a) ? s.a : s.b) + " operands");
                inst = GemmInst::FMA;
                break;
            }
            why = std::string("inst = ") + (inst == GemmInst::FMA ? "fma" : ir::gemmInstName(inst)) + " asks for it";
        } else if (g.use2cta) {
            if (!tc.ok) return fail("use_2cta needs Blackwell tcgen05 (there is no one-CTA fallback: each CTA holds half of B's N range)", tc.reason);
            inst = blockScaled ? GemmInst::TCGEN05BlockScaled : GemmInst::TCGEN05;
            why = std::string("use_2cta: the CTA pair's ") + (blockScaled ? "block-scaled " : "") + "tcgen05.mma (cta_group::2)";
        } else if (blockScaled) {
            Option scaledMma = mmaAtom(s, mma, true);
            if (tc.ok) {
                inst = GemmInst::TCGEN05BlockScaled;
                why = "block-scaled " + std::string(tcInst->name) + ", C in tensor memory";
            } else if (scaledMma.ok) {
                if (Option o = mmaScaleOperands(g, s, *mma); !o.ok) return fail("gemm_blockscaled cannot be lowered", o.reason);
                inst = GemmInst::MMABlockScaled;
                why = "block-scaled " + std::string(mma->name) + ", C in a fragment";
            } else {
                return fail("gemm_blockscaled cannot be lowered", "tcgen05: " + tc.reason + "; mma.sync: " + scaledMma.reason);
            }
        } else if (tc.ok) {
            inst = GemmInst::TCGEN05;
            why = "sm_100 tensor cores, C in tensor memory";
        } else if (s.sc == ir::MemScope::TMem) {
            // Only tcgen05.mma accumulates in tensor memory: its reason is the one that matters.
            return fail("gemm cannot be lowered", "tcgen05: " + tc.reason);
        } else {
            rejected.push_back({"TCGEN05", tc.reason});
            Option wgOption = wgmma(s, wg);
            if (wgOption.ok) {
                inst = GemmInst::WGMMA;
                why = g.a.buffer->scope == ir::MemScope::Fragment ? "warpgroup MMA, A from registers and B from shared memory"
                                                                  : "warpgroup MMA from shared memory";
            } else {
                rejected.push_back({"WGMMA", wgOption.reason});
                fallBackToMma(s, mma, inst, why, rejected);
            }
        }

        // Instruction shape and warp partition. A wgmma the warps or B's
        // swizzle segments cannot be arranged for falls back to mma.sync
        // (an explicit inst = wgmma is an error instead).
        int64_t wm = 0, wn = 0;
        std::string error;
        if (inst == GemmInst::WGMMA && !wgmmaShape(s, *wg, g, wm, wn, error)) {
            if (g.explicitInst == GemmInst::WGMMA) return fail("inst = wgmma cannot be honoured", error);
            rejected.push_back({"WGMMA", error});
            fallBackToMma(s, mma, inst, why, rejected);
        }
        if (inst == GemmInst::Unselected) return fail("gemm cannot be lowered", why + "; mma.sync: " + rejected.back().reason);
        if (ir::isMmaSync(inst)) {
            if (!partition(inst, s, g.policy, mma->warpRows, mma->warpCols, wm, wn, error)) return fail("gemm cannot be spread over the warps", error);
            g.atomM = mma->m.lo, g.atomN = mma->n.lo, g.atomK = mma->k.lo;
        } else if (inst != GemmInst::WGMMA) {   // wgmmaShape set the partition and the atom
            partition(inst, s, g.policy, 1, 1, wm, wn, error);
        }
        g.instruction = ir::isMmaSync(inst)                                        ? mma
                      : inst == GemmInst::WGMMA                                   ? wg
                      : inst == GemmInst::FMA                                     ? nullptr
                                                                                  : tcInst;
        // TileLang's tcgen05 gemm completes on an mbarrier: its own (mbar), or
        // that of the thread's next tcgen05_mma_arrive (sema's bindCommits).
        if ((inst == GemmInst::TCGEN05 || inst == GemmInst::TCGEN05BlockScaled) && !g.mbar && !g.completesOn)
            return fail("gemm on tcgen05 needs mbar = <barrier>, or a tcgen05_mma_arrive that follows it on every path in its role or block",
                        "its MMAs complete asynchronously, when a tcgen05.commit of the issuing thread arrives on an mbarrier; one under a branch "
                        "or in a loop after it may not run, one in another role is another thread's");
        g.inst = inst;
        g.warpM = wm;
        g.warpN = wn;

        d.choice = ir::gemmInstName(inst);
        d.why = why;
        std::ostringstream shape;
        shape << "M x N x K = " << s.M << " x " << s.N << " x " << s.K << ", " << name(s.a) << " x " << name(s.b) << " -> " << name(s.c);
        d.details.push_back(shape.str());
        if (g.atomM)
            d.details.push_back("instruction shape m" + str(g.atomM) + "n" + str(g.atomN) + "k" + str(g.atomK) +
                                (ir::isMmaSync(inst) ? ", " + str(s.M / wm / g.atomM) + " x " + str(s.N / wn / g.atomN) + " atoms per warp, " +
                                                             str(s.K / g.atomK) + (s.K / g.atomK == 1 ? " k-step" : " k-steps") + " per tile"
                                                       : ""));
        if (inst == GemmInst::FMA)
            d.details.push_back("a parallel loop over the " + str(s.M) + " x " + str(s.N) + " elements of C, " + str(s.K) +
                                " multiply-adds each; C keeps the layout its other loops give it");
        else if (inst == GemmInst::TCGEN05 || inst == GemmInst::TCGEN05BlockScaled)
            d.details.push_back(g.use2cta ? "one thread of the pair's leader issues the MMAs for both blocks; C stays in each block's tensor memory"
                                          : "one thread issues the MMAs for the block; C stays in tensor memory");
        else
            d.details.push_back("warp partition " + str(wm) + " x " + str(wn) + " (" + ir::gemmPolicyName(g.policy) + "): each warp computes " +
                                str(s.M / std::max<int64_t>(wm, 1)) + " x " + str(s.N / std::max<int64_t>(wn, 1)));
        if (inst != GemmInst::FMA) {
            chooseSwizzle(g.a, !s.transA, "A", d);
            chooseSwizzle(g.b, s.transB, "B", d);
        }
        ctx_.explain.record(std::move(d));
        return true;
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    const Target &target_;
    ir::BufferEdits edits_;    // the swizzles chosen so far
    std::map<const ir::BufferNode *, std::string> externFunctionOf_;
};

} // namespace

ir::Kernel selectGemmInst(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Selector selector(kernel, ctx);
    out.body = selector.mutate(kernel.body);
    selector.decisions().applyTo(out);
    // PTX ISA, "tcgen05 instructions": all of a kernel's tcgen05
    // instructions name the same .cta_group, so a pair gemm makes the
    // kernel's allocation, commits and copies the pair's too.
    const ir::Gemm *pairGemm = nullptr, *ctaGemm = nullptr;
    ir::forEachStmt(out.body, [&](const ir::Stmt &s) {
        const ir::Gemm *g = ir::as<ir::Gemm>(s);
        if (!g || (g->inst != ir::GemmInst::TCGEN05 && g->inst != ir::GemmInst::TCGEN05BlockScaled)) return;
        const ir::Gemm *&first = g->use2cta ? pairGemm : ctaGemm;
        if (!first) first = g;
    });
    if (pairGemm && ctaGemm) {
        Diagnostic d{Severity::Error, ctaGemm->span,
                     "this tcgen05 gemm is one CTA's, but the kernel has a CTA-pair gemm (use_2cta): all tcgen05 instructions of a kernel use the same "
                     ".cta_group (PTX ISA)",
                     {}, {}};
        d.note(pairGemm->span, "the CTA-pair gemm");
        ctx.diags.report(std::move(d));
    }
    out.tcgen05Pair = pairGemm != nullptr;
    return out;
}

} // namespace tilet
