// Properties of the tensor-core layouts, checked against the PTX ISA's
// fragment tables written out independently here:
//  - every (instruction, dtype, warp partition) accumulator and register-A
//    layout puts each element in the lane and register the PTX ISA says;
//  - ldmatrix, as the PTX ISA defines it, fed with the row addresses the
//    generator computes, delivers exactly the operand registers mma expects;
//  - every shared-memory swizzle is a bijection that keeps 16-byte chunks
//    whole and lets 8 rows be read at one chunk column without bank conflicts.
#include "ir/Layout.h"
#include "ir/MmaLayout.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include "layout_coordinates.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace tilet;
using namespace tilet::ir;
using tilet::test::coordinate;

namespace {

int64_t value(const Expr &e) {
    Expr s = simplify(e);
    std::optional<int64_t> v = constInt(s);
    EXPECT_TRUE(v.has_value());
    return v.value_or(-1);
}

// --- The PTX ISA tables ("Matrix fragments for mma.m16n8k*"), g = lane / 4, q = lane % 4.

// C/D element i (0..3) of an m16n8 atom: row g (+8 for i >= 2), column 2q + i % 2.
std::array<int64_t, 2> ptxAccumulator(int64_t lane, int64_t i) { return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2}; }

// A element i of an m16 atom with K = k and `bits`-bit elements: {row, k}.
std::array<int64_t, 2> ptxA(int64_t k, int64_t bits, int64_t lane, int64_t i) {
    int64_t g = lane / 4, q = lane % 4;
    if (bits == 16 && k == 16) return {g + 8 * ((i / 2) % 2), 2 * q + i % 2 + 8 * (i / 4)};
    if (bits == 16 && k == 8) return {g + 8 * (i / 2), 2 * q + i % 2};
    if (bits == 32 && k == 8) return {g + 8 * (i % 2), q + 4 * (i / 2)};
    if (bits == 8 && k == 32) return {g + 8 * ((i / 4) % 2), 4 * q + i % 4 + 16 * (i / 8)};
    ADD_FAILURE() << "no table for k" << k << " " << bits << "-bit";
    return {0, 0};
}

// B element i of an n8 atom: {column, k}.
std::array<int64_t, 2> ptxB(int64_t k, int64_t bits, int64_t lane, int64_t i) {
    int64_t g = lane / 4, q = lane % 4;
    if (bits == 16 && k == 16) return {g, 2 * q + i % 2 + 8 * (i / 2)};
    if (bits == 16 && k == 8) return {g, 2 * q + i};
    if (bits == 32 && k == 8) return {g, q + 4 * i};
    if (bits == 8 && k == 32) return {g, 4 * q + i % 4 + 16 * (i / 4)};
    ADD_FAILURE() << "no table for k" << k << " " << bits << "-bit";
    return {0, 0};
}

std::vector<MmaAtom> atoms() {
    return {{16, 8, 16, DType::F16}, {16, 8, 16, DType::BF16}, {16, 8, 8, DType::F16},
            {16, 8, 8, DType::F32},  {16, 8, 32, DType::Int8}, {16, 8, 32, DType::F8E4M3}};
}

std::vector<MmaTiling> tilings(const MmaAtom &atom) {
    std::vector<MmaTiling> out;
    for (auto [M, N, wm, wn] : std::vector<std::array<int64_t, 4>>{{64, 64, 2, 2}, {128, 128, 2, 2}, {32, 40, 2, 1}, {64, 32, 1, 4}, {128, 256, 2, 4}}) {
        MmaTiling t;
        t.M = M;
        t.N = N;
        t.K = 2 * atom.k;
        t.warpM = wm;
        t.warpN = wn;
        t.threads = 32 * wm * wn;
        t.atom = atom;
        out.push_back(t);
    }
    return out;
}

} // namespace

TEST(MmaLayout, AccumulatorLayoutMatchesThePtxTable) {
    for (const MmaAtom &atom : atoms()) {
        for (const MmaTiling &t : tilings(atom)) {
            TileLayout l = mmaAccumulatorLayout(t);
            ASSERT_EQ(l.localSize(), t.mAtoms() * t.nAtoms() * kMmaAccumulatorsPerLane);
            std::set<std::vector<int64_t>> seen;
            for (int64_t thread = 0; thread < t.threads; ++thread) {
                int64_t warp = thread / 32, lane = thread % 32;
                int64_t rowBase = (warp % t.warpM) * t.warpRows(), colBase = (warp / t.warpM) * t.warpCols();
                for (int64_t i = 0; i < t.mAtoms(); ++i) {
                    for (int64_t j = 0; j < t.nAtoms(); ++j) {
                        int64_t base = value(mmaAccumulatorOffset(t, intImm(i), intImm(j)));
                        for (int64_t e = 0; e < kMmaAccumulatorsPerLane; ++e) {
                            std::array<int64_t, 2> ptx = ptxAccumulator(lane, e);
                            std::vector<int64_t> want{rowBase + i * 16 + ptx[0], colBase + j * 8 + ptx[1]};
                            ASSERT_EQ(coordinate(l, thread, base + e), want) << l.str() << " thread " << thread << " atom " << i << "," << j;
                            seen.insert(want);
                        }
                    }
                }
            }
            EXPECT_EQ(static_cast<int64_t>(seen.size()), t.M * t.N) << "every element of C exactly once: " << l.str();
        }
    }
}

// stmatrix as the PTX ISA defines it ("stmatrix": lane l gives the address
// of row l % 8 of matrix l / 8; thread t's register m lands at row t / 4,
// bytes 4 (t % 4) of matrix m), fed with the row addresses the generator
// computes (stmatrixRow) and each thread's register pairs in order, stores
// every element of the accumulator where its coordinates say.
void expectStmatrixStoresEveryElement(const TileLayout &l) {
    ASSERT_EQ(stmatrixMismatch(l), "") << l.str();
    VarRef thread = makeVar("t");
    int64_t pairs = l.localSize() / 2, count = pairs % 4 == 0 ? 4 : pairs % 2 == 0 ? 2 : 1;
    std::set<std::vector<int64_t>> stored;
    for (int64_t warp = 0; warp < l.threads / 32; ++warp) {
        for (int64_t g = 0; g < pairs / count; ++g) {
            std::array<std::vector<int64_t>, 32> rowOf;   // the row each lane gives
            for (int64_t lane = 0; lane < 32; ++lane) {
                Expr t = intImm(warp * 32 + lane);
                Expr pair = add(intImm(g * count), mod(div(mod(t, intImm(32)), intImm(8)), intImm(count)));
                for (const Expr &c : stmatrixRow(l, thread, pair)) rowOf[lane].push_back(value(substitute(c, {{thread, t}})));
            }
            for (int64_t lane = 0; lane < 32; ++lane) {
                for (int64_t m = 0; m < count; ++m) {
                    for (int64_t e = 0; e < 2; ++e) {
                        std::vector<int64_t> at = rowOf[8 * m + lane / 4];
                        at[1] += 2 * (lane % 4) + e;
                        int64_t local = 2 * (g * count + m) + e;
                        ASSERT_EQ(at, coordinate(l, warp * 32 + lane, local)) << l.str() << " warp " << warp << " lane " << lane << " register " << local;
                        stored.insert(at);
                    }
                }
            }
        }
    }
    EXPECT_EQ(static_cast<int64_t>(stored.size()), l.shape[0] * l.shape[1]) << l.str();
}

TEST(MmaLayout, StmatrixStoresTheAccumulatorRegisters) {
    for (const MmaAtom &atom : atoms())
        for (const MmaTiling &t : tilings(atom)) expectStmatrixStoresEveryElement(mmaAccumulatorLayout(t));
    for (auto [M, N, warpM, warpN, n] : std::vector<std::array<int64_t, 5>>{{64, 64, 4, 1, 64}, {128, 256, 8, 1, 256}, {128, 128, 4, 2, 64}}) {
        MmaTiling t;
        t.M = M;
        t.N = N;
        t.K = 16;
        t.warpM = warpM;
        t.warpN = warpN;
        t.threads = 32 * warpM * warpN;
        t.atom = {64, n, 16, DType::F16};
        expectStmatrixStoresEveryElement(wgmmaAccumulatorLayout(t));
    }
    // A layout of one element per thread and step is not the accumulator pattern.
    EXPECT_NE(stmatrixMismatch(canonicalLayout({64, 64}, 128, 2)), "");
}

TEST(MmaLayout, RegisterALayoutMatchesThePtxTable) {
    for (const MmaAtom &atom : atoms()) {
        int64_t bits = dtypeBits(atom.operand);
        for (const MmaTiling &t : tilings(atom)) {
            TileLayout l = mmaOperandALayout(t);
            int64_t perAtom = atom.m * atom.k / 32;
            ASSERT_EQ(l.localSize(), t.mAtoms() * t.kSteps() * perAtom);
            std::map<std::vector<int64_t>, int> holders;
            for (int64_t thread = 0; thread < t.threads; ++thread) {
                int64_t warp = thread / 32, lane = thread % 32;
                int64_t rowBase = (warp % t.warpM) * t.warpRows();
                for (int64_t i = 0; i < t.mAtoms(); ++i) {
                    for (int64_t ks = 0; ks < t.kSteps(); ++ks) {
                        int64_t base = value(mmaOperandAOffset(t, intImm(i), intImm(ks)));
                        for (int64_t e = 0; e < perAtom; ++e) {
                            std::array<int64_t, 2> ptx = ptxA(atom.k, bits, lane, e);
                            std::vector<int64_t> want{rowBase + i * 16 + ptx[0], ks * atom.k + ptx[1]};
                            ASSERT_EQ(coordinate(l, thread, base + e), want) << l.str();
                            ++holders[want];
                        }
                    }
                }
            }
            // Every element of A, held once by each warp along N.
            EXPECT_EQ(static_cast<int64_t>(holders.size()), t.M * t.K);
            for (const auto &[c, n] : holders) ASSERT_EQ(n, t.warpN);
        }
    }
}

// ldmatrix as the PTX ISA defines it, on an operand tile stored row-major
// with rows along K (kContiguous) or along M/N: returns, per lane and
// matrix, the operand coordinates {mn, k} of the elements it receives.
std::vector<std::vector<std::array<int64_t, 2>>> modelLdmatrix(const MmaAtom &atom, bool isA, int64_t count, bool kContiguous) {
    int64_t bits = dtypeBits(atom.operand), perRegister = 32 / bits;
    VarRef lane = makeVar("lane");
    std::array<Expr, 2> row = mmaLdmatrixRow(atom, isA, count, kContiguous, lane);
    auto rowStart = [&](int64_t l) {
        return std::array<int64_t, 2>{value(substitute(row[0], {{lane, intImm(l)}})), value(substitute(row[1], {{lane, intImm(l)}}))};
    };
    std::vector<std::vector<std::array<int64_t, 2>>> got(32);
    for (int64_t t = 0; t < 32; ++t) {
        for (int64_t m = 0; m < count; ++m) {
            for (int64_t e = 0; e < perRegister; ++e) {
                std::array<int64_t, 2> c;
                if (kContiguous) {
                    // Row t / 4 of matrix m, bytes 4 (t % 4) ...: elements along K.
                    std::array<int64_t, 2> start = rowStart(8 * m + t / 4);
                    c = {start[0], start[1] + (4 * (t % 4)) * 8 / bits + e};
                } else {
                    // .trans (b16): element (row 2 (t % 4) + e, column t / 4) of the stored 8x8 matrix.
                    std::array<int64_t, 2> start = rowStart(8 * m + 2 * (t % 4) + e);
                    c = {start[0] + t / 4, start[1]};
                }
                got[t].push_back(c);
            }
        }
    }
    return got;
}

TEST(MmaLayout, LdmatrixDeliversTheOperandRegisters) {
    for (const MmaAtom &atom : atoms()) {
        int64_t bits = dtypeBits(atom.operand), perRegister = 32 / bits;
        for (bool kContiguous : {true, false}) {
            if (!kContiguous && bits != 16) continue;   // .trans moves 16-bit elements only
            // A: one ldmatrix per atom, all of its registers.
            int64_t aRegs = static_cast<int64_t>(mmaARegisters(atom).size());
            auto a = modelLdmatrix(atom, true, aRegs, kContiguous);
            for (int64_t t = 0; t < 32; ++t) {
                for (int64_t i = 0; i < aRegs * perRegister; ++i) {
                    std::array<int64_t, 2> want = ptxA(atom.k, bits, t, i);
                    EXPECT_EQ(a[t][i], want) << "A lane " << t << " element " << i << (kContiguous ? "" : " trans");
                }
            }
            // B: groups of up to four matrices over consecutive atoms along N.
            int64_t bRegs = static_cast<int64_t>(mmaBRegisters(atom).size());
            for (int64_t count = bRegs; count <= 4; count *= 2) {
                auto b = modelLdmatrix(atom, false, count, kContiguous);
                for (int64_t t = 0; t < 32; ++t) {
                    for (int64_t i = 0; i < count * perRegister; ++i) {
                        int64_t atomIndex = i / (bRegs * perRegister);
                        std::array<int64_t, 2> want = ptxB(atom.k, bits, t, i % (bRegs * perRegister));
                        want[0] += 8 * atomIndex;
                        EXPECT_EQ(b[t][i], want) << "B lane " << t << " element " << i << " of x" << count << (kContiguous ? "" : " trans");
                    }
                }
            }
        }
    }
}

TEST(MmaLayout, ElementLoadsFollowThePtxTable) {
    for (const MmaAtom &atom : atoms()) {
        int64_t bits = dtypeBits(atom.operand), perRegister = 32 / bits;
        for (bool isA : {true, false}) {
            std::vector<MmaRegisterBlock> blocks = isA ? mmaARegisters(atom) : mmaBRegisters(atom);
            for (int64_t lane = 0; lane < 32; ++lane) {
                for (size_t r = 0; r < blocks.size(); ++r) {
                    for (int64_t e = 0; e < perRegister; ++e) {
                        std::array<Expr, 2> c = mmaOperandElement(atom, isA, blocks[r], intImm(lane), e);
                        int64_t i = static_cast<int64_t>(r) * perRegister + e;
                        std::array<int64_t, 2> want = isA ? ptxA(atom.k, bits, lane, i) : ptxB(atom.k, bits, lane, i);
                        EXPECT_EQ((std::array<int64_t, 2>{value(c[0]), value(c[1])}), want) << (isA ? "A" : "B") << " lane " << lane << " element " << i;
                    }
                }
            }
        }
    }
}

TEST(SharedSwizzle, BijectiveChunkPreservingAndConflictFree) {
    struct Tile {
        int64_t rows, cols;
        DType dtype;
    };
    for (SharedSwizzle s : {SharedSwizzle::B32, SharedSwizzle::B64, SharedSwizzle::B128}) {
        int64_t width = swizzleBytes(s);
        for (Tile tile : {Tile{64, 32, DType::F16}, Tile{32, 128, DType::F16}, Tile{128, 64, DType::F16}, Tile{64, 64, DType::F32},
                          Tile{64, 128, DType::Int8}, Tile{3 * 32, 64, DType::BF16}}) {
            int64_t bytes = dtypeBits(tile.dtype) / 8;
            if (tile.cols * bytes % width != 0) continue;
            BufferNode b;
            b.dtype = tile.dtype;
            b.scope = MemScope::Shared;
            b.swizzle = s;
            b.shape = {intImm(tile.rows), intImm(tile.cols)};
            std::vector<int64_t> offsetOf(tile.rows * tile.cols);
            std::set<int64_t> used;
            for (int64_t r = 0; r < tile.rows; ++r) {
                for (int64_t c = 0; c < tile.cols; ++c) {
                    int64_t o = value(bufferOffset(b, {intImm(r), intImm(c)}, DType::Int32));
                    ASSERT_GE(o, 0);
                    ASSERT_LT(o, tile.rows * tile.cols);
                    offsetOf[r * tile.cols + c] = o;
                    used.insert(o);
                }
            }
            ASSERT_EQ(static_cast<int64_t>(used.size()), tile.rows * tile.cols) << swizzleName(s) << ": a bijection";
            int64_t chunk = 16 / bytes;
            for (int64_t r = 0; r < tile.rows; ++r) {
                for (int64_t c = 0; c < tile.cols; c += chunk) {
                    int64_t first = offsetOf[r * tile.cols + c];
                    ASSERT_EQ(first % chunk, 0) << "chunks stay 16-byte aligned";
                    for (int64_t e = 1; e < chunk; ++e) ASSERT_EQ(offsetOf[r * tile.cols + c + e], first + e) << "chunks stay whole";
                }
            }
            // One ldmatrix phase reads 8 consecutive rows at one chunk column:
            // the 8 chunks must fall in 8 different 16-byte bank groups, with
            // the widest swizzle the row allows (the one select-gemm-inst picks).
            int64_t rowBytes = tile.cols * bytes;
            int64_t widest = rowBytes % 128 == 0 ? 128 : rowBytes % 64 == 0 ? 64 : 32;
            if (width != widest) continue;
            for (int64_t r0 = 0; r0 + 8 <= tile.rows; r0 += 8) {
                for (int64_t c = 0; c < tile.cols; c += chunk) {
                    std::set<int64_t> groups;
                    for (int64_t r = r0; r < r0 + 8; ++r) groups.insert(offsetOf[r * tile.cols + c] * bytes / 16 % 8);
                    EXPECT_EQ(groups.size(), 8u) << swizzleName(s) << " rows " << r0 << "+8, column " << c << " of a " << tile.rows << "x"
                                                 << tile.cols << " tile";
                }
            }
        }
    }
}
