// MmaLayout.h -- the register fragments of mma.sync, and the fragment
// layouts of gemm operands and accumulators built from them.
//
// PTX ISA, "Matrix fragments for mma.m16n8k*": lane l of a warp has
// g = l / 4 (groupID) and q = l % 4 (threadID_in_group). Every A or B
// register is 32 bits and holds E = 32 / bits(dtype) elements adjacent along
// K; it covers an 8-row x 16-byte block of the operand (8 rows of M for A,
// 8 columns of N for B):
//
//   A register (rowBlock, kBlock): row 8 * rowBlock + g, k = 4E * kBlock + E * q + e
//   B register kBlock:             col g,               k = 4E * kBlock + E * q + e
//   C element c (0..3):            row g + 8 * (c / 2), col 2 * q + c % 2
//
// A's registers come in PTX order: rowBlock fastest, then kBlock.
#pragma once

#include "ir/IR.h"

#include <array>
#include <vector>

namespace tilet::ir {

struct MmaAtom {
    int64_t m = 16, n = 8, k = 16;
    DType operand = DType::F16;   // A's and B's dtype
};

struct MmaRegisterBlock {
    int64_t rowBlock = 0;   // A only: rows 0-7 or 8-15 of the atom
    int64_t kBlock = 0;     // which 16-byte run of K
};

int64_t mmaElementsPerRegister(DType operand);
// K elements one 16-byte register block spans (4 * elements per register).
int64_t mmaKBlockWidth(const MmaAtom &atom);
std::vector<MmaRegisterBlock> mmaARegisters(const MmaAtom &atom);
std::vector<MmaRegisterBlock> mmaBRegisters(const MmaAtom &atom);

// The coordinate within one atom of element e of operand register `block`
// held by `lane`: {mn, k}, where mn is A's row or B's column.
std::array<Expr, 2> mmaOperandElement(const MmaAtom &atom, bool isA, const MmaRegisterBlock &block, const Expr &lane, int64_t e);

// ldmatrix addressing. One ldmatrix.x{count} loads `count` consecutive
// operand registers: for A all registers of one atom, for B the registers of
// count / (B registers per atom) consecutive atoms along N. Lane l gives the
// start of one 16-byte row of shared memory; this returns that row's operand
// coordinate {mn, k} relative to the first atom's origin. With kContiguous
// the rows run along K (plain ldmatrix); otherwise along M or N (.trans,
// 16-bit operands only).
std::array<Expr, 2> mmaLdmatrixRow(const MmaAtom &atom, bool isA, int64_t count, bool kContiguous, const Expr &lane);
// Elements of C per lane and atom.
constexpr int64_t kMmaAccumulatorsPerLane = 4;

// How a gemm's warps and atoms tile C [M, N]: warp w has warp_m = w % warpM,
// warp_n = w / warpM and computes rows [warp_m * M / warpM, ...) and columns
// [warp_n * N / warpN, ...) as (M / warpM / 16) x (N / warpN / 8) atoms.
struct MmaTiling {
    int64_t M = 0, N = 0, K = 0;
    int64_t warpM = 1, warpN = 1;
    int64_t threads = 128;
    MmaAtom atom;
    int64_t warpRows() const { return M / warpM; }
    int64_t warpCols() const { return N / warpN; }
    int64_t mAtoms() const { return warpRows() / atom.m; }
    int64_t nAtoms() const { return warpCols() / atom.n; }
    int64_t kSteps() const { return K / atom.k; }
};

// The tiling select-gemm-inst chose for an MMA or wgmma gemm (on the gemm's threads).
MmaTiling mmaTiling(const Gemm &g);

// The fragment layout of C [M, N]: each lane's accumulators in the PTX
// order, atom by atom. Local modes, fastest first: the column pair, the row
// half, the atom along N, the atom along M.
TileLayout mmaAccumulatorLayout(const MmaTiling &t);
// Register index of element 0 of atom (i, j) of the calling warp.
Expr mmaAccumulatorOffset(const MmaTiling &t, const Expr &i, const Expr &j);

// The fragment layout of an A operand held in registers, A [M, K]: each
// lane's A registers in PTX order, k-step by k-step, atom by atom; the
// warps along N hold copies. Local modes, fastest first: the elements of a
// register, the row half, the K block, the k-step, the atom along M.
TileLayout mmaOperandALayout(const MmaTiling &t);
// Element index of the first A register of atom row i at k-step ks.
Expr mmaOperandAOffset(const MmaTiling &t, const Expr &i, const Expr &ks);

// The layout of a [K, N] fragment that is a gemm's B operand from registers
// (mma.sync only; TileLang's gemm_sr): lane q of each group of four holds
// rows (along K) q * e.., lane group g column g of each 8-column atom; the
// warps along M each hold a copy of their warp column's B. Per thread: the
// B registers of each k-step and N atom, k-step fastest.
TileLayout mmaOperandBLayout(const MmaTiling &t);
// Element offset, in that fragment's registers, of N atom j at k-step ks.
Expr mmaOperandBOffset(const MmaTiling &t, const Expr &j, const Expr &ks);

// ---- wgmma.mma_async (sm_90a): a warp group (4 warps, 128 threads) computes
// m64 x n atoms from shared-memory descriptors. For WGMMA tilings warpM
// counts warps along M (a multiple of 4: the warp groups along M are warpM / 4)
// and warpN warp groups along N; warp w of a group owns rows 16w .. 16w + 15
// of each m64 atom, with the same per-lane accumulator positions as mma.sync.
int64_t wgmmaGroupsM(const MmaTiling &t);
int64_t wgmmaGroupRows(const MmaTiling &t);   // rows of C per warp group
int64_t wgmmaMAtoms(const MmaTiling &t);      // m64 atoms per warp group
int64_t wgmmaNAtoms(const MmaTiling &t);      // n atoms per warp group

// C [M, N]: local modes, fastest first: the column pair, the row half, the
// 8-column block of an atom, the atom along N, the atom along M.
TileLayout wgmmaAccumulatorLayout(const MmaTiling &t);
// Register index of the first accumulator of atom (a, jn) of the calling warp group.
Expr wgmmaAccumulatorOffset(const MmaTiling &t, const Expr &a, const Expr &jn);

// A [M, K] held in registers (wgmma with A from registers; warp groups along
// M only): the accumulator layout of an [M, K] tile, so a converted
// accumulator feeds the next gemm as it is (the FlashAttention P · V).
TileLayout wgmmaOperandALayout(const MmaTiling &t);
// Register index of the first of the 8 A elements of m-atom a, k-step ks.
Expr wgmmaOperandAOffset(const MmaTiling &t, const Expr &a, const Expr &ks);

// stmatrix (m8n8, 16-bit elements) stores a [rows, cols] fragment whose
// every pair of registers (2p, 2p + 1) holds, across a warp's 32 lanes, one
// 8x8 block in the m16n8 accumulator pattern: lane l the elements
// (r + l / 4, c + 2 (l % 4) + e), with c a multiple of 8 (16-byte rows).
// The mma.sync and wgmma accumulator layouts are such. Empty when `l` fits,
// else why not.
std::string stmatrixMismatch(const TileLayout &l);
// The element of the 8x8 block of register pair `pair` of the calling
// thread's warp whose row `thread` (threadIdx.x from the layout's first
// thread) gives to stmatrix: row lane % 8, column 0 of the block.
std::vector<Expr> stmatrixRow(const TileLayout &l, const Expr &thread, const Expr &pair);

} // namespace tilet::ir

namespace tilet::ir {

// ---- tcgen05.ld (sm_100a): a tcgen05.mma accumulator of `rows` rows read
// into registers by whole warp groups (PTX ISA, "Data path layout
// organization"). Warp w reaches the lanes of its quarter, 32 * (w % 4).
//   rows 128 (M = 128, layout D): row r is lane r. Warp w reads its 32 lanes
//     with 32x32b: a row per thread.
//   rows 64 (M = 64, layout F): row r is lane 32 * (r / 16) + r % 16. Warp w
//     reads its quarter's first 16 lanes (rows 16 * (w % 4) ...) with
//     16x256b, whose registers are the m16n8 accumulator's.
// With several warp groups the columns are split: group g holds columns
// [g * cols / groups, (g + 1) * cols / groups) (TileLang's
// num_useful_warpgroups).
struct TmemTiling {
    int64_t rows = 128, cols = 0, threads = 128;
    int64_t groups() const { return threads / 128; }
    int64_t groupCols() const { return cols / groups(); }
    // The rows one tcgen05.mma writes (cta_group::1): 128 or 64.
    bool knownRows() const { return rows == 128 || rows == 64; }
    TmemLoadShape shape() const { return rows == 64 ? TmemLoadShape::Lanes16x256b : TmemLoadShape::Lanes32x32b; }
    // Whole warp groups, each a whole number of repetitions of the load.
    bool fits() const {
        return knownRows() && threads % 128 == 0 && cols % groups() == 0 && groupCols() % tmemLoadColumnsPerRepeat(shape()) == 0;
    }
};
// The fragment a thread holds after its warp group's loads.
TileLayout tmemLoadLayout(const TmemTiling &t);

} // namespace tilet::ir
