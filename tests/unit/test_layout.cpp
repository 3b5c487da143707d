// Layout properties: every element of a tile is produced exactly once per
// replica, for every shape, thread count and vector width the passes use.
#include "ir/Layout.h"
#include "ir/Simplify.h"

#include "layout_coordinates.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

using namespace tilet;
using namespace tilet::ir;
using tilet::test::coordinate;

namespace {

// Each coordinate of the shape is held `replication` times, each time by a
// different thread, and nothing outside the shape is produced.
void expectExactCover(const TileLayout &l) {
    std::map<std::vector<int64_t>, int> count;
    for (int64_t t = 0; t < l.threads; ++t) {
        for (int64_t i = 0; i < l.localSize(); ++i) {
            std::vector<int64_t> c = coordinate(l, t, i);
            for (size_t d = 0; d < c.size(); ++d) ASSERT_LT(c[d], l.shape[d]) << l.str();
            ++count[c];
        }
    }
    int64_t elements = 1;
    for (int64_t s : l.shape) elements *= s;
    EXPECT_EQ(static_cast<int64_t>(count.size()), elements) << l.str();
    for (const auto &[c, n] : count) ASSERT_EQ(n, l.replication()) << l.str();
}

} // namespace

TEST(Layout, CanonicalLayoutsCoverTilesExactly) {
    std::vector<std::vector<int64_t>> shapes = {{1024}, {4, 1024}, {128, 64}, {64, 64}, {3, 100}, {1}, {7}, {2, 3, 8}, {256, 256}};
    for (const auto &shape : shapes) {
        for (int64_t threads : {32, 96, 128, 256}) {
            for (int64_t vector : {1, 2, 4, 8}) expectExactCover(canonicalLayout(shape, threads, vector));
        }
    }
}

TEST(Layout, CanonicalLayoutIsCoalescedAndVectorized) {
    TileLayout l = canonicalLayout({4, 1024}, 128, 4);
    EXPECT_EQ(l.vectorWidth(), 4);
    EXPECT_EQ(l.localSize(), 32);
    // Consecutive threads take consecutive 4-element vectors of a row.
    EXPECT_EQ(coordinate(l, 0, 0), (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(coordinate(l, 1, 0), (std::vector<int64_t>{0, 4}));
    EXPECT_EQ(coordinate(l, 0, 1), (std::vector<int64_t>{0, 1}));
}

TEST(Layout, SmallTilesReplicateOverSpareThreads) {
    TileLayout l = canonicalLayout({4}, 128, 1);
    EXPECT_EQ(l.replication(), 32);
    expectExactCover(l);
}

// A padded layout covers its padded shape exactly, which holds the loop's
// extents, each dimension a multiple of the vector it was given.
TEST(Layout, PaddedLayoutsCoverTheirPaddedShapesExactly) {
    std::vector<std::vector<int64_t>> shapes = {{257}, {3, 100}, {127, 32}, {24, 64}, {7}, {2, 3, 8}, {1000}, {1}};
    for (const auto &shape : shapes) {
        for (int64_t threads : {32, 96, 128, 256, 1024}) {
            for (int64_t vector : {1, 2, 4, 8}) {
                TileLayout l = paddedLayout(shape, threads, vector);
                expectExactCover(l);
                ASSERT_EQ(l.shape.size(), shape.size());
                for (size_t d = 0; d < shape.size(); ++d) EXPECT_GE(l.shape[d], shape[d]) << l.str();
            }
        }
    }
}

TEST(Layout, PaddedLayoutSpreadsWhatTheThreadsDoNotDivide) {
    // 257 on 256 threads: two steps of 256, not 257 steps of one thread.
    TileLayout l = paddedLayout({257}, 256, 1);
    EXPECT_EQ(l.shape, (std::vector<int64_t>{512}));
    EXPECT_EQ(l.localSize(), 2);
    EXPECT_EQ(l.replication(), 1);
    EXPECT_EQ(coordinate(l, 1, 1), (std::vector<int64_t>{257}));
    // 3x100 in 4-element vectors on 128 threads: 25 vectors a row take 32
    // threads, the 3 rows the other 4; one step each.
    TileLayout v = paddedLayout({3, 100}, 128, 4);
    EXPECT_EQ(v.shape, (std::vector<int64_t>{4, 128}));
    EXPECT_EQ(v.vectorWidth(), 4);
    EXPECT_EQ(v.localSize(), 4);
    EXPECT_EQ(v.replication(), 1);
}

TEST(Layout, ReductionLayoutKeepsTheOtherDimensionsLocalDigits) {
    TileLayout x = canonicalLayout({4, 1024}, 128, 4);
    TileLayout r = reduceLayout(x, 1);
    EXPECT_EQ(r.shape, (std::vector<int64_t>{4}));
    EXPECT_EQ(r.localSize(), 4);
    EXPECT_EQ(r.replication(), 128);
    expectExactCover(r);
    // The reduced layout is what a loop over (i, j) projects onto i.
    EXPECT_TRUE(projectLayout(x, {0}) == r);
    std::optional<std::vector<int>> pos = matchLocalModes(x, r, {0});
    ASSERT_TRUE(pos);
    EXPECT_EQ(pos->size(), r.localModes.size());
    // For every thread and register of x, the projected register holds the same row.
    for (int64_t t = 0; t < 128; ++t) {
        for (int64_t i = 0; i < x.localSize(); ++i) {
            int64_t sub = 0, stride = 1, s2 = 1;
            for (size_t k = 0, m = 0; k < x.localModes.size(); ++k) {
                int64_t digit = (i / stride) % x.localModes[k].extent;
                stride *= x.localModes[k].extent;
                if (m < pos->size() && (*pos)[m] == static_cast<int>(k)) {
                    sub += digit * s2;
                    s2 *= r.localModes[m].extent;
                    ++m;
                }
            }
            EXPECT_EQ(coordinate(x, t, i)[0], coordinate(r, t, sub)[0]);
        }
    }
}

TEST(Layout, ReducingOneDimensionalTilesGivesOneElement) {
    TileLayout x = canonicalLayout({256}, 128, 2);
    TileLayout r = reduceLayout(x, 0);
    EXPECT_EQ(r.shape, (std::vector<int64_t>{1}));
    EXPECT_EQ(r.localSize(), 1);
    expectExactCover(r);
}

TEST(Layout, TransposedProjection) {
    TileLayout loop = canonicalLayout({32, 64}, 128, 4);
    TileLayout t = projectLayout(loop, {1, 0});
    EXPECT_EQ(t.shape, (std::vector<int64_t>{64, 32}));
    expectExactCover(t);
}

// ------------------------------------------------------------------ whole-kernel inference helpers

TEST(Layout, FullyReplicatedLayoutGivesEveryThreadEveryElement) {
    TileLayout l = fullyReplicatedLayout({4, 3}, 128);
    expectExactCover(l);
    EXPECT_EQ(l.replication(), 128);
    EXPECT_EQ(l.localSize(), 12);
    // Row-major registers.
    EXPECT_EQ(coordinate(l, 77, 5), (std::vector<int64_t>{1, 2}));
}

TEST(Layout, WholeDimensionsAreHeldByEveryOwner) {
    // lse[k, j] read in a loop over j: dimension 0 is held whole.
    TileLayout loop = canonicalLayout({128}, 128, 1);
    TileLayout frag = withWholeDimensions(loop, {-1, 0}, {4, 128});
    expectExactCover(frag);
    for (int64_t t = 0; t < 128; ++t) {
        for (int64_t k = 0; k < 4; ++k) EXPECT_TRUE(holds(frag, t, {k, t})) << t;
        EXPECT_TRUE(holds(frag, t, {std::nullopt, t}));
        EXPECT_FALSE(holds(frag, t, {0, (t + 1) % 128}));
    }
}

TEST(Layout, LoopLayoutFromRunsEachIterationWhereItsElementIs) {
    TileLayout frag = canonicalLayout({4, 128}, 128, 4, {0});
    std::optional<TileLayout> loop = loopLayoutFrom(frag, {1});
    ASSERT_TRUE(loop);
    EXPECT_EQ(loop->shape, (std::vector<int64_t>{128}));
    expectExactCover(*loop);
    for (int64_t t = 0; t < loop->threads; ++t) {
        for (int64_t i = 0; i < loop->localSize(); ++i) {
            int64_t j = coordinate(*loop, t, i)[0];
            for (int64_t k = 0; k < 4; ++k) EXPECT_TRUE(holds(frag, t, {k, j}));
        }
    }
    // A dimension spread over threads cannot be left out.
    EXPECT_FALSE(loopLayoutFrom(canonicalLayout({4, 32}, 128, 1), {1}));
}

TEST(Layout, LoopLayoutFromAWindowHoldsItAtEveryPlace) {
    // 16 threads along dimension 1, its higher columns each thread's registers.
    TileLayout frag = canonicalLayout({4, 64}, 16, 1);
    std::optional<TileLayout> loop = loopLayoutFrom(frag, {0, 1}, {}, {0, 16});
    ASSERT_TRUE(loop);
    EXPECT_EQ(loop->shape, (std::vector<int64_t>{4, 16}));
    expectExactCover(*loop);
    for (int64_t offset = 0; offset < 64; offset += 16) {
        for (int64_t t = 0; t < loop->threads; ++t) {
            for (int64_t l = 0; l < loop->localSize(); ++l) {
                std::vector<int64_t> c = coordinate(*loop, t, l);
                EXPECT_TRUE(holds(frag, t, {c[0], c[1] + offset})) << offset << " " << t << " " << l;
            }
        }
    }
    // A window narrower than the threads' columns has no single layout.
    EXPECT_FALSE(loopLayoutFrom(frag, {0, 1}, {}, {0, 8}));
    // Nor one whose place moves the columns over threads.
    TileLayout spread = canonicalLayout({4, 64}, 64, 1);
    EXPECT_FALSE(loopLayoutFrom(spread, {0, 1}, {}, {0, 16}));
}

TEST(Layout, ReshapedLayoutHoldsTheSameElementsInTheSameRegisters) {
    auto flat = [](const std::vector<int64_t> &c, const std::vector<int64_t> &shape) {
        int64_t f = 0;
        for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + c[d];
        return f;
    };
    struct Case {
        TileLayout layout;
        std::vector<int64_t> shape;
    };
    for (const Case &c : {Case{canonicalLayout({64, 128}, 128, 4), {64, 4, 32}}, Case{canonicalLayout({64, 128}, 128, 4), {16, 4, 128}},
                          Case{canonicalLayout({32, 16}, 256, 2), {32, 2, 8}}, Case{canonicalLayout({8, 64}, 32, 1), {512}}}) {
        std::optional<TileLayout> r = reshapeLayout(c.layout, c.shape);
        ASSERT_TRUE(r) << c.layout.str();
        EXPECT_EQ(r->localSize(), c.layout.localSize());
        expectExactCover(*r);
        for (int64_t t = 0; t < c.layout.threads; ++t) {
            for (int64_t l = 0; l < c.layout.localSize(); ++l)
                EXPECT_EQ(flat(coordinate(*r, t, l), c.shape), flat(coordinate(c.layout, t, l), c.layout.shape)) << r->str() << " " << t << " " << l;
        }
    }
    // Three threads' pairs of columns cannot be split into rows of 3.
    TileLayout threeThreads;
    threeThreads.shape = {16, 6};
    threeThreads.threads = 3;
    threeThreads.threadModes = {{3, 1, 2}};
    threeThreads.localModes = {{2, 1, 1}, {16, 0, 1}};
    expectExactCover(threeThreads);
    EXPECT_FALSE(reshapeLayout(threeThreads, {16, 2, 3}));
    // Another number of elements is no reshape.
    EXPECT_FALSE(reshapeLayout(canonicalLayout({8, 16}, 32, 1), {8, 8}));
    // A fully replicated fragment reshaped is the view's fully replicated
    // layout, its split local modes merged (2@d0 then 4@d0*2 is 8@d0).
    std::optional<TileLayout> replicated = reshapeLayout(fullyReplicatedLayout({8, 16}, 128), {2, 4, 16});
    ASSERT_TRUE(replicated);
    EXPECT_TRUE(sameDistribution(*reshapeLayout(*replicated, {8, 16}), fullyReplicatedLayout({8, 16}, 128)));
    EXPECT_TRUE(sameDistribution(*replicated, fullyReplicatedLayout({2, 4, 16}, 128)));
}

TEST(Layout, PairedLayoutRunsEachPairWhereBothElementsAre) {
    // Pair p of a row of a fragment laid out as `held` runs on the thread
    // holding elements 2p and 2p + 1 of that row (f4e2m1 bytes).
    for (const TileLayout &held : {canonicalLayout({32, 64}, 128, 4), canonicalLayout({32, 32}, 128, 8), canonicalLayout({8, 16}, 256, 2),
                                   fullyReplicatedLayout({4, 8}, 32)}) {
        std::optional<TileLayout> pairs = pairedLayout(held);
        ASSERT_TRUE(pairs) << held.str();
        EXPECT_EQ(pairs->shape.back() * 2, held.shape.back());
        EXPECT_EQ(pairs->localSize() * 2, held.localSize());
        expectExactCover(*pairs);
        for (int64_t t = 0; t < held.threads; ++t) {
            for (int64_t l = 0; l < pairs->localSize(); ++l) {
                std::vector<int64_t> c = coordinate(*pairs, t, l);
                int64_t p = c.back();
                c.back() = 2 * p;
                EXPECT_TRUE(holds(held, t, {c[0], c[1]})) << held.str() << " " << t << " " << l;
                EXPECT_TRUE(holds(held, t, {c[0], c[1] + 1})) << held.str() << " " << t << " " << l;
            }
        }
    }
    // A pair split over two threads, or columns held one at a time, cannot be paired.
    EXPECT_FALSE(pairedLayout(canonicalLayout({8, 16}, 128, 1)));
    TileLayout odd;
    odd.shape = {4, 6};
    odd.threads = 4;
    odd.threadModes = {{4, 0, 1}};
    odd.localModes = {{3, 1, 1}, {2, 1, 3}};
    expectExactCover(odd);
    EXPECT_FALSE(pairedLayout(odd));
}

TEST(Layout, ElementAtAndHoldsAgreeWithTheDefinition) {
    for (const TileLayout &l : {canonicalLayout({64, 64}, 128, 4), canonicalLayout({8}, 128, 1), canonicalLayout({3, 100}, 96, 2)}) {
        for (int64_t t = 0; t < l.threads; ++t) {
            for (int64_t i = 0; i < l.localSize(); ++i) {
                std::vector<int64_t> c = coordinate(l, t, i);
                EXPECT_EQ(elementAt(l, t, i), c);
                std::vector<std::optional<int64_t>> known(c.begin(), c.end());
                EXPECT_TRUE(holds(l, t, known));
            }
        }
    }
}

TEST(Layout, LocalIndexOfFindsTheRegisterOfAnElement) {
    for (const TileLayout &l : {canonicalLayout({64, 64}, 128, 4), canonicalLayout({4, 128}, 128, 4, {0}), fullyReplicatedLayout({2, 5}, 64)}) {
        for (int64_t t = 0; t < l.threads; t += 7) {
            for (int64_t i = 0; i < l.localSize(); ++i) {
                std::vector<Expr> coords;
                for (int64_t c : coordinate(l, t, i)) coords.push_back(intImm(c));
                EXPECT_EQ(constInt(simplify(localIndexOf(l, coords))), i) << l.str();
            }
        }
    }
}

TEST(Layout, SameDistributionIgnoresHowReplicationIsWritten) {
    TileLayout one = fullyReplicatedLayout({1}, 128);
    TileLayout split = one;
    split.threadModes = {{32, LayoutMode::kReplicate, 0}, {4, LayoutMode::kReplicate, 0}};
    EXPECT_FALSE(one == split);
    EXPECT_TRUE(sameDistribution(one, split));
    EXPECT_FALSE(sameDistribution(canonicalLayout({64}, 128, 1), canonicalLayout({64}, 128, 2)));
}
