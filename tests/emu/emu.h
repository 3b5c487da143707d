// emu.h -- runs tilet's generated SIMT kernels on the CPU, for tests.
//
// No GPU is available where tilet is developed, so the generated .cu files
// of the SIMT examples are also compiled with g++ against this header and run
// with one std::thread per CUDA thread: __syncthreads is a std::barrier of the
// block, __shfl_xor_sync a barrier of the warp plus an exchange buffer,
// dynamic shared memory one buffer per block. prepare.py rewrites the one
// line g++ cannot take (the extern __shared__ declaration).
//
// This checks the arithmetic, indexing, layouts, guards, vectorized moves,
// shuffles and barrier placement of the generated code -- not timing. The
// inline-PTX helpers of the .cu are replaced (prepare.py) by the models
// below, written from the PTX ISA: ldmatrix, mma.sync's register fragments,
// and cp.async, whose copies land only at the cp.async.wait_group that
// retires their group (so a missing wait reads stale shared memory). The
// asm text itself is only checked by nvcc/ptxas and, on a GPU, gpu-check.
#pragma once

#include <cstring>
inline float __int_as_float(unsigned int bits);
inline double __longlong_as_double(unsigned long long bits);
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda.h>
#include <cudaTypedefs.h>

#include "tf32.h"
#include <math_constants.h>
#include <vector_types.h>

#include <array>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <condition_variable>
#include <map>
#include <mutex>
#include <type_traits>
#include <vector>

#undef __global__
#define __global__
#define __launch_bounds__(...)

namespace emu {

struct Dim {
    unsigned x = 0, y = 0, z = 0;
};

struct Block {
    std::unique_ptr<std::barrier<>> sync;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    std::vector<uint64_t> lanes;   // shuffle and warp-instruction exchange slots, one per thread
    std::vector<uint64_t> aux;     // a second slot per thread (mma's B operand)
    std::vector<unsigned char> shared;
    std::vector<std::unique_ptr<std::barrier<>>> groups;   // one per warp group (wgmma is warp-group wide)
    std::vector<std::array<double, 8>> rsSlots;            // wgmma register A operands, one slot per thread
    std::mutex namedMutex;
    std::map<int, std::unique_ptr<std::barrier<>>> named;   // bar.sync id -> its barrier
};

inline thread_local Dim tid, bid;
inline thread_local Block *block = nullptr;

// cp.async copies of this thread: the open group and the committed ones, oldest first.
struct AsyncCopy {
    void *dst;
    const void *src;
    int bytes;
    bool valid;
};
inline thread_local std::vector<AsyncCopy> openGroup;
inline thread_local std::vector<std::vector<AsyncCopy>> committedGroups;
// wgmma groups not yet retired (see wgmma below).
inline thread_local std::vector<std::function<void()>> openWgmma;
inline thread_local std::vector<std::vector<std::function<void()>>> committedWgmma;

inline unsigned char *sharedBase() { return block->shared.data(); }

// Runs `kernel(args...)` on a grid of blocks, one std::thread per CUDA thread.
inline void clearMBarriers();
// The blocks of one thread block cluster, which run at the same time and
// can reach each other's shared memory.
struct Cluster {
    std::vector<Block *> blocks;            // by rank
    std::unique_ptr<std::barrier<>> sync;   // barrier.cluster: every thread of every block
};
inline thread_local Cluster *cluster = nullptr;
inline thread_local unsigned clusterRank = 0;

// The address `local` (in this block's shared memory) has in block `rank` of the cluster (mapa).
template <class T> T *remote(T *local, int rank) {
    auto offset = reinterpret_cast<const unsigned char *>(local) - block->shared.data();
    return reinterpret_cast<T *>(cluster->blocks.at(static_cast<size_t>(rank))->shared.data() + offset);
}

// Runs the grid cluster by cluster (a block is a cluster of one without a
// cluster dimension); the threads of all blocks of a cluster run at once.
template <class Kernel, class... Args>
void launch(Dim grid, unsigned threads, size_t sharedBytes, Dim clusterDim, Kernel kernel, Args... args) {
    if (threads % 32 != 0) throw std::runtime_error("emu: threads must be whole warps");
    Dim g{std::max(grid.x, 1u), std::max(grid.y, 1u), std::max(grid.z, 1u)};
    Dim c{std::max(clusterDim.x, 1u), std::max(clusterDim.y, 1u), std::max(clusterDim.z, 1u)};
    if (g.x % c.x || g.y % c.y || g.z % c.z) throw std::runtime_error("emu: the grid is not made of whole clusters");
    unsigned size = c.x * c.y * c.z;
    for (unsigned cz = 0; cz < g.z; cz += c.z)
        for (unsigned cy = 0; cy < g.y; cy += c.y)
            for (unsigned cx = 0; cx < g.x; cx += c.x) {
                std::vector<std::unique_ptr<Block>> blocks;
                Cluster cl;
                clearMBarriers();   // a barrier used before this cluster initialises it must not find an old one
                cl.sync = std::make_unique<std::barrier<>>(size * threads);
                for (unsigned r = 0; r < size; ++r) {
                    auto b = std::make_unique<Block>();
                    b->sync = std::make_unique<std::barrier<>>(threads);
                    for (unsigned w = 0; w < threads / 32; ++w) b->warps.push_back(std::make_unique<std::barrier<>>(32));
                    b->lanes.assign(threads, 0);
                    b->aux.assign(threads, 0);
                    for (unsigned g = 0; g < threads / 128; ++g) b->groups.push_back(std::make_unique<std::barrier<>>(128));
                    b->rsSlots.assign(threads, {});
                    // Poison shared memory so a missing initialisation shows up.
                    b->shared.assign(sharedBytes + 16, 0xA5);
                    cl.blocks.push_back(b.get());
                    blocks.push_back(std::move(b));
                }
                std::vector<std::thread> pool;
                for (unsigned r = 0; r < size; ++r)
                    for (unsigned t = 0; t < threads; ++t) {
                        pool.emplace_back([&, r, t] {
                            tid = {t, 0, 0};
                            bid = {cx + r % c.x, cy + (r / c.x) % c.y, cz + r / (c.x * c.y)};
                            block = cl.blocks[r];
                            cluster = &cl;
                            clusterRank = r;
                            openGroup.clear();
                            committedGroups.clear();
                            openWgmma.clear();
                            committedWgmma.clear();
                            kernel(args...);
                        });
                    }
                for (std::thread &th : pool) th.join();
            }
}
template <class Kernel, class... Args> void launch(Dim grid, unsigned threads, size_t sharedBytes, Kernel kernel, Args... args) {
    launch(grid, threads, sharedBytes, Dim{1, 1, 1}, kernel, args...);
}

inline void syncThreads() { block->sync->arrive_and_wait(); }

template <class T> T shuffleXor(unsigned, T value, int laneMask) {
    static_assert(sizeof(T) <= 8, "emu shuffles move at most 8 bytes");
    unsigned t = tid.x, warpBase = t / 32 * 32;
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    block->lanes[t] = bits;
    block->warps[t / 32]->arrive_and_wait();
    uint64_t other = block->lanes[warpBase + ((t % 32) ^ static_cast<unsigned>(laneMask))];
    block->warps[t / 32]->arrive_and_wait();
    T out;
    std::memcpy(&out, &other, sizeof(T));
    return out;
}

// ---- ldmatrix (PTX ISA: "Warp-level matrix load instruction: ldmatrix")

// Lane l gives the address of row l % 8 of matrix l / 8. Per matrix, thread t
// receives the 32 bits at row t / 4, bytes 4 * (t % 4); with .trans, the b16
// elements (row 2 * (t % 4) + e, column t / 4) for e = 0, 1.
template <int Count, bool Trans> void ldmatrix(void *dst, const void *row) {
    unsigned t = tid.x, lane = t % 32, warpBase = t / 32 * 32;
    block->lanes[t] = reinterpret_cast<uint64_t>(row);
    block->warps[t / 32]->arrive_and_wait();
    unsigned regs[Count];
    for (int m = 0; m < Count; ++m) {
        auto rowOf = [&](unsigned r) { return reinterpret_cast<const unsigned char *>(block->lanes[warpBase + 8 * m + r]); };
        if (!Trans) {
            std::memcpy(&regs[m], rowOf(lane / 4) + 4 * (lane % 4), 4);
        } else {
            uint16_t lo, hi;
            std::memcpy(&lo, rowOf(2 * (lane % 4)) + 2 * (lane / 4), 2);
            std::memcpy(&hi, rowOf(2 * (lane % 4) + 1) + 2 * (lane / 4), 2);
            regs[m] = lo | (unsigned(hi) << 16);
        }
    }
    block->warps[t / 32]->arrive_and_wait();
    std::memcpy(dst, regs, sizeof regs);
}

// ---- mma.sync (PTX ISA: "Matrix fragments for mma.m16n8k*"), g = lane / 4, q = lane % 4

inline double toDouble(__half x) { return __half2float(x); }
inline double toDouble(__nv_bfloat16 x) { return __bfloat162float(x); }
inline double toDouble(signed char x) { return x; }
inline double toDouble(unsigned char x) { return x; }
inline double toDouble(__nv_fp8_e4m3 x) { return float(x); }
inline double toDouble(__nv_fp8_e5m2 x) { return float(x); }
inline double toDouble(float x) { return tf32Truncated(x); }   // f32 operands are read as tf32

// Row and column of A element i (16 x K) and of B element i (K x 8) held by a lane.
template <int K, int Bits> void aElement(int i, unsigned g, unsigned q, int &row, int &col) {
    if (Bits == 16 && K == 16) { row = g + 8 * ((i / 2) % 2); col = 2 * q + i % 2 + 8 * (i / 4); }
    else if (Bits == 16 && K == 8) { row = g + 8 * (i / 2); col = 2 * q + i % 2; }
    else if (Bits == 32 && K == 8) { row = g + 8 * (i % 2); col = q + 4 * (i / 2); }
    else if (Bits == 8 && K == 32) { row = g + 8 * ((i / 4) % 2); col = 4 * q + i % 4 + 16 * (i / 8); }
    else throw std::runtime_error("emu: no A fragment for this mma shape");
}
template <int K, int Bits> void bElement(int i, unsigned g, unsigned q, int &k, int &n) {
    n = g;
    if (Bits == 16 && K == 16) k = 2 * q + i % 2 + 8 * (i / 2);
    else if (Bits == 16 && K == 8) k = 2 * q + i;
    else if (Bits == 32 && K == 8) k = q + 4 * i;
    else if (Bits == 8 && K == 32) k = 4 * q + i % 4 + 16 * (i / 4);
    else throw std::runtime_error("emu: no B fragment for this mma shape");
}

template <class D> void accumulate(D &d, double sum) {
    if constexpr (std::is_same_v<D, int>) d = static_cast<int>(d + static_cast<long long>(sum));
    else if constexpr (std::is_same_v<D, __half>) d = __float2half(static_cast<float>(toDouble(d) + sum));
    else d = static_cast<float>(d + sum);
}

// D (M x N, this lane's 4 elements) += A (M x K) * B (K x N), gathered from the warp's lanes.
template <int M, int N, int K, class T, class D> void mma(D *d, const void *a, const void *b) {
    static_assert(M == 16 && N == 8, "emu models the m16n8 shapes");
    constexpr int Bits = 8 * sizeof(T), AElems = M * K / 32, BElems = K * N / 32;
    unsigned t = tid.x, lane = t % 32, warpBase = t / 32 * 32;
    block->lanes[t] = reinterpret_cast<uint64_t>(a);
    block->aux[t] = reinterpret_cast<uint64_t>(b);
    block->warps[t / 32]->arrive_and_wait();
    double A[M][K] = {}, B[K][N] = {};
    for (unsigned l = 0; l < 32; ++l) {
        const T *la = reinterpret_cast<const T *>(block->lanes[warpBase + l]);
        const T *lb = reinterpret_cast<const T *>(block->aux[warpBase + l]);
        for (int i = 0; i < AElems; ++i) {
            int r, c;
            aElement<K, Bits>(i, l / 4, l % 4, r, c);
            A[r][c] = toDouble(la[i]);
        }
        for (int i = 0; i < BElems; ++i) {
            int k, n;
            bElement<K, Bits>(i, l / 4, l % 4, k, n);
            B[k][n] = toDouble(lb[i]);
        }
    }
    block->warps[t / 32]->arrive_and_wait();
    for (int i = 0; i < 4; ++i) {
        int row = lane / 4 + 8 * (i / 2), col = 2 * (lane % 4) + i % 2;
        double sum = 0;
        for (int k = 0; k < K; ++k) sum += A[row][k] * B[k][col];
        accumulate(d[i], sum);
    }
}

// ---- cp.async: copies land when a wait retires their group


template <int Bytes> void cpAsync(void *dst, const void *src, bool valid) { openGroup.push_back({dst, src, Bytes, valid}); }
inline void cpAsyncCommit() {
    committedGroups.push_back(std::move(openGroup));
    openGroup.clear();
}
template <int Pending> void cpAsyncWait() {
    while (committedGroups.size() > static_cast<size_t>(Pending)) {
        for (const AsyncCopy &c : committedGroups.front()) {
            if (c.valid) std::memcpy(c.dst, c.src, c.bytes);
            else std::memset(c.dst, 0, c.bytes);
        }
        committedGroups.erase(committedGroups.begin());
    }
}

// ---- mbarriers (PTX ISA: "Parallel synchronization and communication
// instructions: mbarrier"): a phase completes after `count` arrivals; a wait
// for parity P returns once the number of completed phases has parity != P.

struct MBarrier {
    int expected = 0, pending = 0;
    long long tx = 0;   // TMA transaction bytes the phase still waits for
    unsigned completed = 0;
};
inline std::mutex mbarrierMutex;
inline std::condition_variable mbarrierChanged;
inline std::map<const void *, MBarrier> mbarriers;

inline void clearMBarriers() {
    std::lock_guard<std::mutex> lock(mbarrierMutex);
    mbarriers.clear();
}
} // namespace emu

inline void tilet_mbarrier_init(unsigned long long *bar, int count) {
    std::lock_guard<std::mutex> lock(emu::mbarrierMutex);
    emu::mbarriers[bar] = {count, count, 0, 0};
}
namespace emu {
// A phase completes when its arrivals and its transaction bytes are both done.
inline void settle(MBarrier &b) {
    if (b.pending == 0 && b.tx == 0) {
        ++b.completed;
        b.pending = b.expected;
        mbarrierChanged.notify_all();
    }
}
inline void transact(unsigned long long *bar, long long bytes, int arrivals) {
    std::lock_guard<std::mutex> lock(mbarrierMutex);
    MBarrier &b = mbarriers.at(bar);
    b.tx += bytes;
    b.pending -= arrivals;
    settle(b);
}
} // namespace emu
inline void tilet_mbarrier_arrive_expect_tx(unsigned long long *bar, int bytes) { emu::transact(bar, bytes, 1); }
inline void tilet_mbarrier_expect_tx(unsigned long long *bar, int bytes) { emu::transact(bar, bytes, 0); }
inline void tilet_fence_barrier_init() {}
inline void tilet_mbarrier_arrive(unsigned long long *bar) {
    std::lock_guard<std::mutex> lock(emu::mbarrierMutex);
    emu::MBarrier &b = emu::mbarriers.at(bar);
    --b.pending;
    emu::settle(b);
}
inline void tilet_mbarrier_wait(unsigned long long *bar, int parity) {
    std::unique_lock<std::mutex> lock(emu::mbarrierMutex);
    emu::mbarrierChanged.wait(lock, [&] { return static_cast<int>(emu::mbarriers.at(bar).completed & 1) != parity; });
}
inline void tilet_mbarrier_arrive_cluster(unsigned long long *bar, int rank) { tilet_mbarrier_arrive(emu::remote(bar, rank)); }
template <class T> T *tilet_map_shared_rank(T *local, int rank) { return emu::remote(local, rank); }
inline void tilet_cluster_sync() { emu::cluster->sync->arrive_and_wait(); }
inline int tilet_cluster_ctarank() { return static_cast<int>(emu::clusterRank); }
// bar.sync id, threads: a barrier of `threads` threads, one per id and block.
inline void tilet_named_barrier(int id, int threads) {
    std::barrier<> *b;
    {
        std::lock_guard<std::mutex> lock(emu::block->namedMutex);
        auto &slot = emu::block->named[id];
        if (!slot) slot = std::make_unique<std::barrier<>>(threads);
        b = slot.get();
    }
    b->arrive_and_wait();
}
// ---- TMA (PTX ISA: "cp.async.bulk.tensor"; CUDA driver API:
// cuTensorMapEncodeTiled). The host's encoding call is routed here
// (prepare.py) and keeps the map's fields in its opaque words; a load copies
// the box at once (zeros outside the tensor) into shared memory with the
// map's swizzle -- 16-byte chunk c of each 128-byte line XOR (line % 8) for
// 128B, within 64/32-byte spans for 64B/32B -- and completes its bytes on the
// mbarrier; a store writes the in-bounds part of the box back.
namespace emu {
struct TensorMapView {
    unsigned char *base;
    unsigned rank, elementBytes, swizzleBytes;
    unsigned long long sizes[5], strides[5];   // strides in bytes, strides[0] = element size
    unsigned box[5];
};
inline TensorMapView view(const CUtensorMap *map) {
    const cuuint64_t *w = map->opaque;
    TensorMapView v{};
    v.base = reinterpret_cast<unsigned char *>(w[0]);
    v.rank = unsigned(w[1] & 0xff);
    v.elementBytes = unsigned((w[1] >> 8) & 0xff);
    v.swizzleBytes = unsigned((w[1] >> 16) & 0xffff);
    for (unsigned d = 0; d < 5; ++d) v.sizes[d] = w[2 + d];
    v.strides[0] = v.elementBytes;
    for (unsigned d = 1; d < 5; ++d) v.strides[d] = w[6 + d];
    for (unsigned d = 0; d < 5; ++d) v.box[d] = unsigned(w[12 + d / 2] >> (32 * (d % 2)));
    return v;
}
inline unsigned elementBytesOf(CUtensorMapDataType t) {
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 4;
    }
}
inline CUresult encodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *base, const cuuint64_t *sizes, const cuuint64_t *strides,
                            const cuuint32_t *box, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion,
                            CUtensorMapFloatOOBfill) {
    cuuint64_t *w = map->opaque;
    std::memset(w, 0, sizeof(map->opaque));
    unsigned elementBytes = elementBytesOf(type);
    unsigned swizzleBytes = swizzle == CU_TENSOR_MAP_SWIZZLE_128B ? 128 : swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64 : swizzle == CU_TENSOR_MAP_SWIZZLE_32B ? 32 : 0;
    w[0] = reinterpret_cast<unsigned long long>(base);
    w[1] = rank | (elementBytes << 8) | (swizzleBytes << 16);
    for (unsigned d = 0; d < rank; ++d) w[2 + d] = sizes[d];
    for (unsigned d = 1; d < rank; ++d) w[6 + d] = strides[d - 1];
    for (unsigned d = 0; d < rank; ++d) w[12 + d / 2] |= static_cast<unsigned long long>(box[d]) << (32 * (d % 2));
    return CUDA_SUCCESS;
}
inline cudaError_t getDriverEntryPoint(const char *, void **fn, unsigned, unsigned long long, cudaDriverEntryPointQueryResult *found) {
    *fn = reinterpret_cast<void *>(&encodeTiled);
    *found = cudaDriverEntryPointSuccess;
    return cudaSuccess;
}
// Byte offset in shared memory of box byte `b` under the swizzle.
inline unsigned long long swizzled(unsigned long long b, unsigned swizzleBytes) {
    if (!swizzleBytes) return b;
    unsigned long long mask = swizzleBytes / 16 - 1;
    return b ^ (((b >> 7) & mask) << 4);
}
// Calls f(shared byte offset, global address or null if outside) for every element of the box at `coords`.
template <class F> void forEachBoxElement(const TensorMapView &v, const int *coords, F f) {
    unsigned long long count = 1;
    for (unsigned d = 0; d < v.rank; ++d) count *= v.box[d];
    for (unsigned long long i = 0; i < count; ++i) {
        unsigned long long rest = i, offset = 0;
        bool inside = true;
        for (unsigned d = 0; d < v.rank; ++d) {
            long long c = coords[d] + static_cast<long long>(rest % v.box[d]);
            rest /= v.box[d];
            if (c < 0 || static_cast<unsigned long long>(c) >= v.sizes[d]) inside = false;
            else offset += static_cast<unsigned long long>(c) * v.strides[d];
        }
        f(swizzled(i * v.elementBytes, v.swizzleBytes), inside ? v.base + offset : nullptr);
    }
}
template <class... C> void tmaLoad(void *dst, const CUtensorMap *map, unsigned long long *bar, C... c) {
    TensorMapView v = view(map);
    int coords[] = {static_cast<int>(c)...};
    unsigned long long bytes = 0;
    forEachBoxElement(v, coords, [&](unsigned long long at, const unsigned char *src) {
        unsigned char *out = static_cast<unsigned char *>(dst) + at;
        if (src) std::memcpy(out, src, v.elementBytes);
        else std::memset(out, 0, v.elementBytes);
        bytes += v.elementBytes;
    });
    transact(bar, -static_cast<long long>(bytes), 0);
}
// Multicast: the same box into every block of the cluster in `mask`, at the
// same offsets, completing on each block's barrier.
template <class... C> void tmaLoadMulticast(void *dst, const CUtensorMap *map, unsigned long long *bar, int mask, C... c) {
    for (int r = 0; r < 16; ++r)
        if ((mask >> r) & 1) tmaLoad(remote(dst, r), map, remote(bar, r), c...);
}
template <class... C> void tmaStore(const CUtensorMap *map, const void *src, C... c) {
    TensorMapView v = view(map);
    int coords[] = {static_cast<int>(c)...};
    forEachBoxElement(v, coords, [&](unsigned long long at, const unsigned char *dst) {
        if (dst) std::memcpy(const_cast<unsigned char *>(dst), static_cast<const unsigned char *>(src) + at, v.elementBytes);
    });
}
} // namespace emu
inline void tilet_bulk_load(void *dst, const void *src, int bytes, unsigned long long *bar) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    emu::transact(bar, -bytes, 0);
}
inline void tilet_bulk_store(void *dst, const void *src, int bytes) { std::memcpy(dst, src, static_cast<size_t>(bytes)); }
// ---- wgmma (PTX ISA: "Asynchronous Warpgroup Level Matrix Multiply-Accumulate",
// "Shared Memory Matrix Layout", "Matrix Descriptor Format"). The emulated
// descriptor keeps the operand's offset from the block's shared memory and
// the byte offsets; the MMA runs at once. Operand element (mn, k) lies at
//   K-major:  start + (mn / 8) * SBO + (mn % 8) * W + k * size
//   MN-major: start + (mn / (W / size)) * LBO + (k / 8) * SBO + (k % 8) * W + (mn % (W / size)) * size
// before the swizzle of width W (16-byte chunk XOR the 128-byte line within
// each W-byte span) is applied to the shared-memory offset.
namespace emu {
inline unsigned long long wgmmaDesc(const void *smem, unsigned leadingBytes, unsigned strideBytes, unsigned mode) {
    unsigned long long offset = static_cast<unsigned long long>(static_cast<const unsigned char *>(smem) - sharedBase());
    return offset | (static_cast<unsigned long long>(leadingBytes >> 4) << 32) | (static_cast<unsigned long long>(strideBytes >> 4) << 46) |
           (static_cast<unsigned long long>(mode) << 60);
}
template <class T> double wgmmaOperand(unsigned long long desc, bool mnMajor, int mn, int k) {
    unsigned long long start = desc & 0xffffffffull, lbo = ((desc >> 32) & 0x3fff) << 4, sbo = ((desc >> 46) & 0x3fff) << 4;
    unsigned mode = unsigned(desc >> 60) & 3;
    unsigned long long width = mode == 1 ? 128 : mode == 2 ? 64 : 32, size = sizeof(T), segment = width / size;
    unsigned long long at = mnMajor ? start + (mn / segment) * lbo + (k / 8) * sbo + (k % 8) * width + (mn % segment) * size
                                    : start + (mn / 8) * sbo + (mn % 8) * width + k * size;
    at ^= ((at >> 7) & (width / 16 - 1)) << 4;
    T value;
    std::memcpy(&value, sharedBase() + at, sizeof(T));
    return toDouble(value);
}
// wgmma is asynchronous: the MMAs of a group read shared memory and write
// the accumulators at some point before the wait_group that retires the
// group. The model runs them exactly there, so a stage released (and
// refilled) before its MMAs are waited for, or accumulators read too early,
// give wrong results.
template <int M, int N, int K, class TA, class TB, int TransA, int TransB, class D>
void wgmma(D *d, unsigned long long a, unsigned long long b, int scaleD) {
    openWgmma.push_back([=] {
        unsigned warp = (tid.x / 32) % 4, lane = tid.x % 32;
        for (int j = 0; j < N / 8; ++j) {
            for (int e = 0; e < 4; ++e) {
                int row = int(16 * warp + lane / 4 + 8 * (e / 2)), col = 8 * j + int(2 * (lane % 4)) + e % 2;
                double sum = 0;
                for (int k = 0; k < K; ++k) sum += wgmmaOperand<TA>(a, TransA, row, k) * wgmmaOperand<TB>(b, TransB, col, k);
                if (!scaleD) d[4 * j + e] = D(0);
                accumulate(d[4 * j + e], sum);
            }
        }
    });
}
// A from registers: the warp group's threads hold A (64 x K) in the
// accumulator layout, 8 elements each. The instruction is warp-group wide,
// so the model meets the group at issue, gathers the tile from the threads'
// slots and meets again before a slot can be reused.
template <int M, int N, int K, class TA, class TB, int TransA, int TransB, class D>
void wgmmaRS(D *d, const void *aRegs, unsigned long long b, int scaleD) {
    static_assert(K == 16 && TransA == 0, "emu: wgmma from registers models 16-bit k16 operands");
    std::barrier<> &group = *block->groups.at(tid.x / 128);
    const TA *mine = static_cast<const TA *>(aRegs);
    for (int e = 0; e < 8; ++e) block->rsSlots[tid.x][size_t(e)] = toDouble(mine[e]);
    group.arrive_and_wait();
    std::array<double, 64 * 16> a{};
    unsigned first = tid.x / 128 * 128;
    for (unsigned t = 0; t < 128; ++t) {
        unsigned warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
        for (int e = 0; e < 8; ++e) {
            unsigned row = 16 * warp + g + 8 * ((e / 2) % 2), k = 2 * q + e % 2 + 8 * (e / 4);
            a[row * 16 + k] = block->rsSlots[first + t][size_t(e)];
        }
    }
    group.arrive_and_wait();
    openWgmma.push_back([=] {
        unsigned warp = (tid.x / 32) % 4, lane = tid.x % 32;
        for (int j = 0; j < N / 8; ++j) {
            for (int e = 0; e < 4; ++e) {
                int row = int(16 * warp + lane / 4 + 8 * (e / 2)), col = 8 * j + int(2 * (lane % 4)) + e % 2;
                double sum = 0;
                for (int k = 0; k < K; ++k) sum += a[size_t(row * 16 + k)] * wgmmaOperand<TB>(b, TransB, col, k);
                if (!scaleD) d[4 * j + e] = D(0);
                accumulate(d[4 * j + e], sum);
            }
        }
    });
}
} // namespace emu
inline void tilet_wgmma_fence() {}
inline void tilet_wgmma_commit() {
    emu::committedWgmma.push_back(std::move(emu::openWgmma));
    emu::openWgmma.clear();
}
template <int N> void tilet_wgmma_wait() {
    while (emu::committedWgmma.size() > size_t(N)) {
        for (auto &mma : emu::committedWgmma.front()) mma();
        emu::committedWgmma.erase(emu::committedWgmma.begin());
    }
}
inline void tilet_fence_proxy_async() {}
inline void tilet_fence_proxy_async_all() {}
inline void tilet_tma_store_wait() {}
inline void tilet_tma_prefetch(const CUtensorMap *) {}   // a cache hint: nothing to model
inline void tilet_pdl_trigger() {}
inline void tilet_pdl_sync() {}
template <int N> void tilet_setmaxnreg_inc() {}   // registers are not a resource here
template <int N> void tilet_setmaxnreg_dec() {}

#define threadIdx emu::tid
#define blockIdx emu::bid
#define __syncthreads() emu::syncThreads()
#define __shfl_xor_sync(mask, value, laneMask) emu::shuffleXor(mask, value, laneMask)

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
template <class T> T atomicAdd(T *address, T value) { return std::atomic_ref<T>(*address).fetch_add(value); }

#include <cuda_runtime.h>

namespace emu {
// Stands in for cudaLaunchKernelEx in the generated host code.
template <class... Params, class... Args>
cudaError_t launchEx(const cudaLaunchConfig_t *config, void (*kernel)(Params...), Args &&...args) {
    if (config->blockDim.y != 1 || config->blockDim.z != 1) return cudaErrorInvalidConfiguration;
    Dim clusterDim{1, 1, 1};
    for (unsigned i = 0; i < config->numAttrs; ++i) {
        const cudaLaunchAttribute &a = config->attrs[i];
        if (a.id == cudaLaunchAttributeClusterDimension) clusterDim = {a.val.clusterDim.x, a.val.clusterDim.y, a.val.clusterDim.z};
    }
    launch(Dim{config->gridDim.x, config->gridDim.y, config->gridDim.z}, config->blockDim.x, config->dynamicSmemBytes, clusterDim, kernel,
           static_cast<Params>(args)...);
    return cudaSuccess;
}
} // namespace emu

// Device intrinsics the CUDA headers' constants expand to.
inline float __int_as_float(unsigned int bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
inline double __longlong_as_double(unsigned long long bits) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}
