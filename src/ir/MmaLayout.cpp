// MmaLayout.cpp -- see MmaLayout.h.
#include "ir/MmaLayout.h"

#include "ir/Layout.h"
#include "ir/Simplify.h"

namespace tilet::ir {

int64_t mmaElementsPerRegister(DType operand) { return 32 / dtypeBits(operand); }

int64_t mmaKBlockWidth(const MmaAtom &atom) { return 4 * mmaElementsPerRegister(atom.operand); }

namespace {

int64_t kBlockWidth(const MmaAtom &atom) { return mmaKBlockWidth(atom); }

void addMode(std::vector<LayoutMode> &modes, int64_t extent, int dim, int64_t stride) {
    if (extent > 1) modes.push_back({extent, dim, stride});
}

} // namespace

std::vector<MmaRegisterBlock> mmaARegisters(const MmaAtom &atom) {
    std::vector<MmaRegisterBlock> out;
    for (int64_t kb = 0; kb < atom.k / kBlockWidth(atom); ++kb) {
        for (int64_t rb = 0; rb < atom.m / 8; ++rb) out.push_back({rb, kb});
    }
    return out;
}

std::vector<MmaRegisterBlock> mmaBRegisters(const MmaAtom &atom) {
    std::vector<MmaRegisterBlock> out;
    for (int64_t kb = 0; kb < atom.k / kBlockWidth(atom); ++kb) out.push_back({0, kb});
    return out;
}

std::array<Expr, 2> mmaOperandElement(const MmaAtom &atom, bool isA, const MmaRegisterBlock &block, const Expr &lane, int64_t e) {
    Expr g = div(lane, intImm(4)), q = mod(lane, intImm(4));
    int64_t perRegister = mmaElementsPerRegister(atom.operand);
    Expr k = add(intImm(block.kBlock * kBlockWidth(atom) + e), mul(q, intImm(perRegister)));
    return {isA ? add(intImm(block.rowBlock * 8), g) : g, k};
}

std::array<Expr, 2> mmaLdmatrixRow(const MmaAtom &atom, bool isA, int64_t count, bool kContiguous, const Expr &lane) {
    Expr matrix = mod(div(lane, intImm(8)), intImm(count));
    Expr row = mod(lane, intImm(8));
    // Matrix q is register q of the loaded sequence: its 8-row block along M
    // or N, and its 16-byte block along K.
    Expr mnBlock, kBlock;
    if (isA) {
        int64_t rowBlocks = atom.m / 8;   // A registers: row block fastest
        mnBlock = mod(matrix, intImm(rowBlocks));
        kBlock = div(matrix, intImm(rowBlocks));
    } else {
        int64_t perAtom = static_cast<int64_t>(mmaBRegisters(atom).size());   // B: atom by atom
        mnBlock = div(matrix, intImm(perAtom));
        kBlock = mod(matrix, intImm(perAtom));
    }
    Expr mn = mul(mnBlock, intImm(8)), k = mul(kBlock, intImm(kBlockWidth(atom)));
    // A storage row is 16 bytes: along K it holds one register's worth for 8
    // lanes; along M/N (.trans) it holds 8 elements of one k.
    if (kContiguous) mn = add(mn, row);
    else k = add(k, row);
    return {mn, k};
}

MmaTiling mmaTiling(const Gemm &g) {
    MmaTiling t;
    std::vector<int64_t> c = g.c.tileShape(), a = g.a.tileShape();
    t.M = c[0];
    t.N = c[1];
    t.K = g.transposeA ? a[0] : a[1];
    t.warpM = g.warpM;
    t.warpN = g.warpN;
    t.threads = g.threads;
    t.atom = {g.atomM, g.atomN, g.atomK, g.a.buffer->dtype};
    return t;
}

TileLayout mmaAccumulatorLayout(const MmaTiling &t) {
    TileLayout l;
    l.shape = {t.M, t.N};
    l.threads = t.threads;
    addMode(l.threadModes, 4, 1, 2);                // q: column pair
    addMode(l.threadModes, 8, 0, 1);                // g: row
    addMode(l.threadModes, t.warpM, 0, t.warpRows());
    addMode(l.threadModes, t.warpN, 1, t.warpCols());
    addMode(l.localModes, 2, 1, 1);                 // c % 2
    addMode(l.localModes, 2, 0, 8);                 // c / 2
    addMode(l.localModes, t.nAtoms(), 1, t.atom.n);
    addMode(l.localModes, t.mAtoms(), 0, t.atom.m);
    return l;
}

Expr mmaAccumulatorOffset(const MmaTiling &t, const Expr &i, const Expr &j) {
    return mul(intImm(kMmaAccumulatorsPerLane), add(j, mul(intImm(t.nAtoms()), i)));
}

TileLayout mmaOperandALayout(const MmaTiling &t) {
    int64_t e = mmaElementsPerRegister(t.atom.operand);
    TileLayout l;
    l.shape = {t.M, t.K};
    l.threads = t.threads;
    addMode(l.threadModes, 4, 1, e);                // q
    addMode(l.threadModes, 8, 0, 1);                // g
    addMode(l.threadModes, t.warpM, 0, t.warpRows());
    if (t.warpN > 1) l.threadModes.push_back({t.warpN, LayoutMode::kReplicate, 0});
    addMode(l.localModes, e, 1, 1);
    addMode(l.localModes, t.atom.m / 8, 0, 8);
    addMode(l.localModes, t.atom.k / kBlockWidth(t.atom), 1, kBlockWidth(t.atom));
    addMode(l.localModes, t.kSteps(), 1, t.atom.k);
    addMode(l.localModes, t.mAtoms(), 0, t.atom.m);
    return l;
}

Expr mmaOperandAOffset(const MmaTiling &t, const Expr &i, const Expr &ks) {
    int64_t perStep = t.atom.m * t.atom.k / 32;   // elements of A per lane and atom
    return mul(intImm(perStep), add(ks, mul(intImm(t.kSteps()), i)));
}

TileLayout mmaOperandBLayout(const MmaTiling &t) {
    int64_t e = mmaElementsPerRegister(t.atom.operand);
    TileLayout l;
    l.shape = {t.K, t.N};
    l.threads = t.threads;
    addMode(l.threadModes, 4, 0, e);                // q
    addMode(l.threadModes, 8, 1, 1);                // g
    if (t.warpM > 1) l.threadModes.push_back({t.warpM, LayoutMode::kReplicate, 0});
    addMode(l.threadModes, t.warpN, 1, t.warpCols());
    addMode(l.localModes, e, 0, 1);
    addMode(l.localModes, t.atom.k / kBlockWidth(t.atom), 0, kBlockWidth(t.atom));
    addMode(l.localModes, t.kSteps(), 0, t.atom.k);
    addMode(l.localModes, t.nAtoms(), 1, t.atom.n);
    return l;
}

Expr mmaOperandBOffset(const MmaTiling &t, const Expr &j, const Expr &ks) {
    int64_t perStep = t.atom.n * t.atom.k / 32;   // elements of B per lane and atom
    return mul(intImm(perStep), add(ks, mul(intImm(t.kSteps()), j)));
}

int64_t wgmmaGroupsM(const MmaTiling &t) { return t.warpM / 4; }
int64_t wgmmaGroupRows(const MmaTiling &t) { return t.M / wgmmaGroupsM(t); }
int64_t wgmmaMAtoms(const MmaTiling &t) { return wgmmaGroupRows(t) / 64; }
int64_t wgmmaNAtoms(const MmaTiling &t) { return t.warpCols() / t.atom.n; }

TileLayout wgmmaAccumulatorLayout(const MmaTiling &t) {
    TileLayout l;
    l.shape = {t.M, t.N};
    l.threads = t.threads;
    addMode(l.threadModes, 4, 1, 2);                // q: column pair
    addMode(l.threadModes, 8, 0, 1);                // g: row
    addMode(l.threadModes, 4, 0, 16);               // warp in its group: 16 rows
    addMode(l.threadModes, wgmmaGroupsM(t), 0, wgmmaGroupRows(t));
    addMode(l.threadModes, t.warpN, 1, t.warpCols());
    addMode(l.localModes, 2, 1, 1);                 // c % 2
    addMode(l.localModes, 2, 0, 8);                 // c / 2
    addMode(l.localModes, t.atom.n / 8, 1, 8);
    addMode(l.localModes, wgmmaNAtoms(t), 1, t.atom.n);
    addMode(l.localModes, wgmmaMAtoms(t), 0, 64);
    return l;
}

Expr wgmmaAccumulatorOffset(const MmaTiling &t, const Expr &a, const Expr &jn) {
    return mul(intImm(t.atom.n / 2), add(jn, mul(intImm(wgmmaNAtoms(t)), a)));
}

// A [M, K] in registers is laid out as an accumulator [M, K] would be: per
// k16 step, a thread's 8 elements are those of an m64n16 accumulator.
TileLayout wgmmaOperandALayout(const MmaTiling &t) {
    TileLayout l;
    l.shape = {t.M, t.K};
    l.threads = t.threads;
    addMode(l.threadModes, 4, 1, 2);
    addMode(l.threadModes, 8, 0, 1);
    addMode(l.threadModes, 4, 0, 16);
    addMode(l.threadModes, wgmmaGroupsM(t), 0, wgmmaGroupRows(t));
    addMode(l.localModes, 2, 1, 1);
    addMode(l.localModes, 2, 0, 8);
    addMode(l.localModes, t.K / 8, 1, 8);
    addMode(l.localModes, wgmmaMAtoms(t), 0, 64);
    return l;
}

Expr wgmmaOperandAOffset(const MmaTiling &t, const Expr &a, const Expr &ks) {
    return add(mul(a, intImm(t.K / 2)), mul(ks, intImm(t.atom.k / 2)));
}

} // namespace tilet::ir

namespace tilet::ir {

TileLayout tmemLoadLayout(const TmemTiling &t) {
    TileLayout l;
    l.shape = {t.rows, t.cols};
    l.threads = t.threads;
    if (t.shape() == TmemLoadShape::Lanes32x32b) {
        l.threadModes.push_back({t.rows, 0, 1});
        addMode(l.threadModes, t.groups(), 1, t.groupCols());
        l.localModes.push_back({t.groupCols(), 1, 1});
        return l;
    }
    addMode(l.threadModes, 4, 1, 2);                 // lane % 4: column pair
    addMode(l.threadModes, 8, 0, 1);                 // lane / 4: row
    addMode(l.threadModes, 4, 0, 16);                // warp % 4: its 16 rows
    addMode(l.threadModes, t.groups(), 1, t.groupCols());
    addMode(l.localModes, 2, 1, 1);                  // register % 2
    addMode(l.localModes, 2, 0, 8);                  // register / 2 % 2: rows + 8
    addMode(l.localModes, t.groupCols() / 8, 1, 8);  // repetition: 8 columns further
    return l;
}

std::string stmatrixMismatch(const TileLayout &l) {
    if (l.shape.size() != 2) return "stmatrix stores 2-D tiles; the fragment has " + std::to_string(l.shape.size()) + " dimensions";
    if (l.replication() != 1) return "the fragment is replicated over threads (stmatrix stores each element once)";
    if (l.threads % 32 != 0 || l.localSize() % 2 != 0) return "stmatrix moves whole warps' register pairs";
    // An element's coordinates are its thread's part plus its register's
    // (elementAt sums the digits of each): each part is worked out once,
    // and every register pair of every thread is checked from them.
    const int64_t locals = l.localSize();
    std::vector<std::vector<int64_t>> ofThread(static_cast<size_t>(l.threads)), ofLocal(static_cast<size_t>(locals));
    for (int64_t t = 0; t < l.threads; ++t) elementAt(l, t, 0, ofThread[static_cast<size_t>(t)]);
    for (int64_t p = 0; p < locals; ++p) elementAt(l, 0, p, ofLocal[static_cast<size_t>(p)]);
    auto at = [&](int64_t t, int64_t p, size_t d) { return ofThread[static_cast<size_t>(t)][d] + ofLocal[static_cast<size_t>(p)][d]; };
    for (int64_t t = 0; t < l.threads; ++t) {
        const int64_t lane = t % 32, warp = t - lane;
        for (int64_t p = 0; p < locals; p += 2) {
            const int64_t blockRow = at(warp, p, 0), blockColumn = at(warp, p, 1);
            const int64_t row = at(t, p, 0), column = at(t, p, 1);
            if (blockColumn % 8 != 0 || row != blockRow + lane / 4 || column != blockColumn + 2 * (lane % 4) || at(t, p + 1, 0) != row ||
                at(t, p + 1, 1) != column + 1)
                return "registers " + std::to_string(p) + " and " + std::to_string(p + 1) + " of thread " + std::to_string(t) +
                       " are not in the m16n8 accumulator pattern of an 8x8 block";
        }
    }
    return "";
}

std::vector<Expr> stmatrixRow(const TileLayout &l, const Expr &thread, const Expr &pair) {
    // Lane 4 r of the warp holds column 0 of row r = lane % 8 of the block:
    // its thread digits below the warp are those of 4 r, the others the
    // calling thread's; register 2 pair's local digits (the lowest, the
    // column within the pair, is 0).
    std::vector<Expr> coords(l.shape.size(), intImm(0));
    Expr fourR = mul(mod(thread, intImm(8)), intImm(4));
    for (size_t k = 0; k < l.threadModes.size(); ++k) {
        const LayoutMode &m = l.threadModes[k];
        if (m.dim == LayoutMode::kReplicate) continue;
        int64_t stride = threadStride(l, k);
        Expr digit;
        if (stride % 32 == 0) digit = threadDigit(l, k, thread);
        else if (stride * m.extent <= 32) digit = mod(div(fourR, intImm(stride)), intImm(m.extent));
        else digit = threadDigit(l, k, add(sub(thread, mod(thread, intImm(32))), fourR));
        coords[m.dim] = add(coords[m.dim], mul(digit, intImm(m.coordStride)));
    }
    for (size_t k = 0; k < l.localModes.size(); ++k) {
        const LayoutMode &m = l.localModes[k];
        int64_t stride = localStride(l, k);
        if (stride == 1) continue;   // the element within the pair: 0 (stmatrixMismatch: pairs are extent-2 column steps)
        Expr digit = mod(div(pair, intImm(stride / 2)), intImm(m.extent));
        coords[m.dim] = add(coords[m.dim], mul(digit, intImm(m.coordStride)));
    }
    for (Expr &c : coords) c = simplify(c);
    return coords;
}

} // namespace tilet::ir
