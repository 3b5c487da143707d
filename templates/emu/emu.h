// emu.h -- runs tilet's generated SIMT kernels on the CPU, for tests.
//
// No GPU is available where tilet is developed, so the generated .cu files
// of the SIMT examples are also compiled with g++ against this header and run
// with one std::thread per CUDA thread: __syncthreads is a barrier of the
// block, __shfl_xor_sync a barrier of the warp plus an exchange buffer,
// dynamic shared memory one buffer per block. prepare.py rewrites what g++
// cannot take (the extern __shared__ declaration) and makes every shared
// buffer a SharedPtr, through which each access is checked by the race
// detector (racecheck.h; docs/emulator.md).
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
#include <cuda_fp4.h>
#include <cuda.h>
#include <cudaTypedefs.h>

#include "racecheck.h"
#include "tf32.h"
#include <math_constants.h>
#include <vector_types.h>

#include <array>
#include <atomic>
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

// Agent slots (mbarriers) per block in the vector clocks.
constexpr unsigned kMBarriersPerBlock = 64;

struct Block {
    unsigned rank = 0;
    std::string name;   // "(x,y,z)", for reports
    std::unique_ptr<rc::Barrier> sync;
    std::vector<std::unique_ptr<rc::Barrier>> warps;
    std::vector<uint64_t> lanes;   // shuffle and warp-instruction exchange slots, one per thread
    std::vector<uint64_t> aux;     // a second slot per thread (mma's B operand)
    std::vector<uint64_t> scaleWords;   // a block-scaled mma's scale words per thread: A's low, B's high
    std::vector<unsigned char> shared;
    size_t sharedBytes = 0;
    std::unique_ptr<rc::Shadow> shadow;
    std::vector<std::unique_ptr<rc::Barrier>> groups;      // one per warp group (wgmma is warp-group wide)
    std::vector<std::array<double, 8>> rsSlots;            // wgmma register A operands, one slot per thread
    // Tensor memory (sm_100a): 128 lanes x 512 columns of 32 bits, and the columns allocated.
    std::vector<uint32_t> tmem;
    unsigned tmemColumns = 0;
    bool tmemAllocated = false;
    unsigned tmemGroup = 0;   // the .cta_group of the tcgen05.alloc (1, or 2: allocated for the CTA pair)
    std::unique_ptr<rc::Shadow> tmemShadow;   // the race detector's record of each 32-bit cell
    // Each thread's clocks at the issue of each wgmma of the group it commits
    // (two sets: a commit's are read while the next commit's are written).
    std::array<std::vector<std::vector<std::shared_ptr<const rc::Clocks>>>, 2> groupClocks;
    // The wgmma groups each warp group committed, by commit count: the
    // first wait_group of any of its threads that retires one runs the MMAs
    // of all 128 threads (see tilet_wgmma_wait).
    struct WgmmaGroup {
        std::mutex mutex;
        std::vector<std::function<void()>> mmas;
        rc::Clocks progress;   // the join of the threads' progress at their first issue of the group
        unsigned joined = 0;
        bool retired = false;
    };
    std::mutex wgmmaMutex;
    std::map<std::pair<unsigned, unsigned>, std::shared_ptr<WgmmaGroup>> wgmmaGroups;   // (warp group, commit) -> group
    std::mutex namedMutex;
    std::map<int, std::unique_ptr<rc::Barrier>> named;   // bar.sync id -> its barrier
    // Distributed shared memory: the latest access to this block's shared
    // memory by each slot of another block, and the join of the clocks of
    // this block's exited threads (a block's shared memory is gone once all
    // of them have exited).
    std::mutex remoteMutex;
    std::map<uint32_t, rc::Access> remoteAccesses;
    rc::Clocks exitClocks;
    unsigned exited = 0;
    // A cluster-launch-control answer of this block canceled nothing: the
    // PTX ISA leaves a later request of the block undefined.
    std::atomic<bool> clcAnsweredNone{false};
};

inline thread_local Dim tid, bid;
inline thread_local Block *block = nullptr;

// The blocks of one thread block cluster, which run at the same time and
// can reach each other's shared memory.
struct Cluster {
    std::vector<Block *> blocks;            // by rank
    std::unique_ptr<rc::Barrier> sync;      // barrier.cluster: every thread of every block
    unsigned agents = 0;                    // mbarriers initialised so far
    // The .cta_group of the cluster's first tcgen05 instruction (0 before
    // it): every tcgen05 instruction of a kernel has the same (tcgen05Group).
    std::atomic<unsigned> ctaGroup{0};
    // Per CTA pair (ranks 2p, 2p + 1): tcgen05.alloc / dealloc .cta_group::2
    // are collective, the first warp waiting for its peer's (tilet_tmem_alloc_2cta).
    std::vector<std::unique_ptr<rc::Barrier>> pairAlloc, pairDealloc;
};
inline thread_local Cluster *cluster = nullptr;
inline thread_local unsigned clusterRank = 0;

// ---- shared memory through checked pointers

// An index, with the .cu line of the expression that indexes (prepare.py's
// #line directives make __builtin_LINE() a line of the .cu).
struct At {
    long long i;
    unsigned line;
    At(long long i, unsigned line = __builtin_LINE()) : i(i), line(line) {}
};

// Checks an access of `bytes` at `offset` of block `blk`'s shared memory
// against the shadow and records it; false if it is outside the block's
// shared memory (reported; the access is not performed).
inline bool sharedAccess(Block *blk, long long offset, size_t bytes, unsigned line, bool write, const char *buffer, long long base);

template <class T> struct SharedPtr;
// A reference to a shared-memory element: reading it or assigning to it is
// an access the detector checks.
template <class T> struct SharedRef {
    Block *blk;
    long long off;
    unsigned line;
    const char *buffer;
    long long base;

    unsigned char *raw() const { return blk->shared.data() + off; }
    operator T() const {
        T v{};
        if (sharedAccess(blk, off, sizeof(T), line, false, buffer, base)) std::memcpy(static_cast<void *>(&v), raw(), sizeof(T));
        return v;
    }
    // static_cast<float>(an __half element): through T, as the CUDA code converts.
    template <class U, class = std::enable_if_t<!std::is_same_v<U, T>>> explicit operator U() const { return static_cast<U>(static_cast<T>(*this)); }
    const SharedRef &operator=(const T &v) const {
        if (sharedAccess(blk, off, sizeof(T), line, true, buffer, base)) std::memcpy(static_cast<void *>(raw()), &v, sizeof(T));
        return *this;
    }
    const SharedRef &operator=(const SharedRef &other) const { return *this = static_cast<T>(other); }
    template <class U> const SharedRef &operator+=(const U &u) const { return *this = static_cast<T>(static_cast<T>(*this) + u); }
    template <class U> const SharedRef &operator-=(const U &u) const { return *this = static_cast<T>(static_cast<T>(*this) - u); }
    template <class U> const SharedRef &operator*=(const U &u) const { return *this = static_cast<T>(static_cast<T>(*this) * u); }
    template <class U> const SharedRef &operator/=(const U &u) const { return *this = static_cast<T>(static_cast<T>(*this) / u); }
    SharedPtr<T> operator&() const { return {blk, off, line, buffer, base}; }
};

// A pointer into a block's shared memory (the generated code's T* views of
// tilet_smem). `line` is the line of the expression it came from.
template <class T> struct SharedPtr {
    Block *blk = nullptr;
    long long off = 0;
    unsigned line = 0;
    const char *buffer = "shared memory";
    long long base = 0;   // the buffer's offset, for messages

    SharedRef<T> operator[](At i) const { return {blk, off + i.i * static_cast<long long>(sizeof(T)), i.line, buffer, base}; }
    SharedRef<T> operator*() const { return {blk, off, line, buffer, base}; }
    SharedPtr operator+(At i) const { return {blk, off + i.i * static_cast<long long>(sizeof(T)), i.line, buffer, base}; }
    T *raw() const { return reinterpret_cast<T *>(blk->shared.data() + off); }
    // A typed view of the dynamic shared memory at `offset` (a buffer's declaration).
    template <class U> SharedPtr<U> as(long long offset, const char *name) const;
};
// The buffers this thread has declared (offset, name), so that a wgmma
// descriptor's bytes can be named in reports.
using View = std::pair<long long, const char *>;
inline thread_local std::vector<View> views;
inline View viewAt(long long offset) {
    View best{0, "shared memory"};
    for (const View &v : views)
        if (v.first <= offset && v.first >= best.first) best = v;
    return best;
}
template <class T> template <class U> SharedPtr<U> SharedPtr<T>::as(long long offset, const char *name) const {
    View v{off + offset, name};
    if (std::find(views.begin(), views.end(), v) == views.end()) views.push_back(v);
    return {blk, off + offset, 0, name, off + offset};
}
// reinterpret_cast<U*>(&buffer[i]) of the generated code (a vector move).
template <class U, class T> SharedPtr<U> sharedCast(SharedPtr<T> p) { return {p.blk, p.off, p.line, p.buffer, p.base}; }
inline SharedPtr<unsigned char> sharedBase() { return {block, 0, 0, "shared memory", 0}; }

// The same offset in block `rank` of the cluster (mapa).
template <class T> SharedPtr<T> remote(SharedPtr<T> local, int rank) {
    local.blk = cluster->blocks.at(static_cast<size_t>(rank));
    return local;
}

inline rc::Actor actorOf(const char *verb, unsigned line, const char *prefix = "") {
    return {rc::self->slot, rc::self->now(), &rc::self->vc, line, false, verb, prefix};
}

// Distributed shared memory (CUDA programming guide, "Distributed Shared
// Memory"): a block may touch another block's shared memory only once that
// block is known to have started (a cluster barrier after the start orders
// it), and the access must be ordered before that block exits.
inline thread_local uint64_t startedBlocks = 0;   // ranks known to have started
inline void remoteAccess(Block *target, uint32_t slot, rc::Clock clock, unsigned line) {
    rc::Run &r = *rc::run;
    if (!(startedBlocks >> target->rank & 1)) {
        bool started = false;
        for (unsigned t = 0; t < r.threadsPerBlock && !started; ++t) started = rc::self->vc[target->rank * r.threadsPerBlock + t] >= 1;
        if (started) startedBlocks |= uint64_t(1) << target->rank;
        else
            rc::report("dsmem", line,
                       r.who(rc::self->slot) + " accesses the shared memory of block " + target->name +
                           " before anything orders it after that block's start (a cluster barrier, barrier.cluster, must come first)");
    }
    std::lock_guard<std::mutex> lock(target->remoteMutex);
    if (target->exited == r.threadsPerBlock)
        rc::report("dsmem", line, r.who(slot) + " accesses the shared memory of block " + target->name + ", whose threads have all exited");
    target->remoteAccesses[slot] = {clock, slot, line};
}

inline bool sharedAccess(Block *blk, long long offset, size_t bytes, unsigned line, bool write, const char *buffer, long long base) {
    if (offset < 0 || static_cast<size_t>(offset) + bytes > blk->sharedBytes) {
        rc::report("bounds", line,
                   rc::run->who(rc::self->slot) + (write ? " writes " : " reads ") + std::to_string(bytes) + " bytes at shared offset " + std::to_string(offset) +
                       " (" + buffer + "), outside the block's " + std::to_string(blk->sharedBytes) + " bytes of shared memory",
                   0, "", true);
        return false;
    }
    if (blk != block) remoteAccess(blk, rc::self->slot, rc::self->now(), line);
    rc::Actor a = actorOf(write ? "writes" : "reads", line);
    rc::Where where{&blk->name, buffer, base};
    if (write) blk->shadow->write(static_cast<size_t>(offset), bytes, a, where);
    else blk->shadow->read(static_cast<size_t>(offset), bytes, a, where);
    return true;
}

// ---- mutation testing (tests/scripts/emu_mutations.py)

// prepare.py wraps every synchronisation statement of the .cu in
// `if (emu::keep(__LINE__))`; EMU_DELETE_LINE=N removes the one at line N,
// as if it were deleted from the .cu, and says at exit how often it was
// reached (a deletion never reached shows nothing).
struct Deletion {
    unsigned line = 0;
    std::atomic<unsigned long> reached{0};
    Deletion() {
        if (const char *l = std::getenv("EMU_DELETE_LINE")) line = static_cast<unsigned>(std::strtoul(l, nullptr, 10));
        if (line) std::atexit([] { std::fprintf(stderr, "emu: deleted line %u, reached %lu times\n", deletion().line, deletion().reached.load()); });
    }
    static Deletion &deletion();
};
inline Deletion &Deletion::deletion() {
    static Deletion d;
    return d;
}
inline const bool deletionReady = (Deletion::deletion(), true);
inline bool keep(unsigned line) {
    Deletion &d = Deletion::deletion();
    if (line != d.line) return true;
    d.reached.fetch_add(1);
    return false;
}

// ---- asynchronous operations a thread has in flight

// cp.async copies of this thread: the open group and the committed ones, oldest first.
struct AsyncCopy {
    SharedPtr<unsigned char> dst;
    const void *src;
    int bytes;
    bool valid;
};
inline thread_local std::vector<AsyncCopy> openGroup;
inline thread_local std::vector<std::vector<AsyncCopy>> committedGroups;
// wgmma groups not yet retired (see wgmma below), and, in the first thread
// of each warp group, their shared-memory operands.
struct WgmmaRead {
    unsigned long long descA = 0, descB = 0;
    bool aShared = false, transA = false, transB = false;
    int n = 0, k = 0;
    unsigned sizeA = 0, sizeB = 0;
    std::shared_ptr<const rc::Clocks> issued;   // the meet of the warp group's clocks at the issue
    unsigned line = 0;
};
inline thread_local std::vector<std::function<void()>> openWgmma;
inline thread_local std::vector<std::shared_ptr<Block::WgmmaGroup>> committedWgmma;
inline thread_local std::vector<WgmmaRead> openWgmmaReads;
inline thread_local std::vector<std::shared_ptr<const rc::Clocks>> openWgmmaClocks;   // this thread's clocks at each open wgmma's issue
inline thread_local rc::Clocks openWgmmaProgress;   // this thread's progress clocks at the open group's first issue
inline thread_local unsigned wgmmaCommits = 0;
// tcgen05.mma issued by this thread and not yet committed (see tcgen05Mma).
inline thread_local std::vector<std::function<void(const rc::Actor &)>> openTcgen05;
// The agents (slot, clock) of this thread's earlier tcgen05.commits: the
// tensor core runs one thread's MMAs in issue order, so each later MMA is
// ordered after them (their accumulators' writes included).
inline thread_local std::vector<std::pair<uint32_t, rc::Clock>> committedTcgen05;
inline thread_local std::vector<std::vector<WgmmaRead>> committedWgmmaReads;
// The registers of a wgmma's A operand (the RS form) as the thread held them
// at the issue: the PTX ISA leaves changing them before the wgmma.wait_group
// that retires the wgmma undefined, and the model, which gathers them at the
// issue, would not see the change, so each thread compares its own at that wait.
struct RegisterOperand {
    const void *registers;
    std::array<unsigned char, 32> atIssue;
    size_t bytes;
    unsigned line;
};
inline thread_local std::vector<RegisterOperand> openRegisterOperands;
inline thread_local std::vector<std::vector<RegisterOperand>> committedRegisterOperands;
// TMA and bulk stores (async-proxy reads of shared memory) until
// cp.async.bulk.wait_group.read retires them.
struct BulkRead {
    Block *blk;
    std::vector<std::pair<size_t, size_t>> ranges;   // offset, bytes
    std::shared_ptr<const rc::Clocks> issued;
    unsigned line;
    const char *buffer;
    long long base;
};
inline thread_local std::vector<BulkRead> pendingBulk;
inline thread_local std::vector<unsigned long long *> unfencedInits;   // mbarriers this thread initialised, no fence.mbarrier_init since

inline unsigned char *sharedBaseRaw() { return block->shared.data(); }

inline void clearMBarriers();
inline void threadExit();

// The grid's clusters in the order launch runs them (one after another),
// and those a cluster-launch-control request took, which then never run
// (PTX ISA, clusterlaunchcontrol.try_cancel: a cluster that has not started).
struct LaunchOrder {
    std::vector<Dim> origins;   // each cluster's first block
    std::vector<char> taken;
    size_t running = 0;
    std::mutex mutex;
};
inline LaunchOrder *launchOrder = nullptr;

// Runs the grid cluster by cluster (a block is a cluster of one without a
// cluster dimension); the threads of all blocks of a cluster run at once.
template <class Kernel, class... Args>
void launch(Dim grid, unsigned threads, size_t sharedBytes, Dim clusterDim, Kernel kernel, Args... args) {
    if (threads == 0) throw std::runtime_error("emu: a block of no threads");
    Dim g{std::max(grid.x, 1u), std::max(grid.y, 1u), std::max(grid.z, 1u)};
    Dim c{std::max(clusterDim.x, 1u), std::max(clusterDim.y, 1u), std::max(clusterDim.z, 1u)};
    if (g.x % c.x || g.y % c.y || g.z % c.z) throw std::runtime_error("emu: the grid is not made of whole clusters");
    unsigned size = c.x * c.y * c.z;
    if (size > 64) throw std::runtime_error("emu: clusters of at most 64 blocks");
    LaunchOrder order;
    for (unsigned cz = 0; cz < g.z; cz += c.z)
        for (unsigned cy = 0; cy < g.y; cy += c.y)
            for (unsigned cx = 0; cx < g.x; cx += c.x) order.origins.push_back({cx, cy, cz});
    order.taken.assign(order.origins.size(), 0);
    launchOrder = &order;
    for (size_t at = 0; at < order.origins.size(); ++at) {
        if (order.taken[at]) continue;   // canceled by a try_cancel: its work was done by the cluster that took it
        order.running = at;
        const unsigned cx = order.origins[at].x, cy = order.origins[at].y, cz = order.origins[at].z;
            {
                rc::Run run;
                run.threadsPerBlock = threads;
                run.blocks = size;
                run.threads = size * threads;
                run.slots = run.threads + size * kMBarriersPerBlock;
                run.live = static_cast<int>(run.threads);
                run.agents.resize(run.slots - run.threads);   // never reallocated: reports read it unlocked
                for (uint32_t s = 0; s < run.threads; ++s) {
                    auto ts = std::make_unique<rc::ThreadState>();
                    ts->slot = s;
                    ts->vc.assign(run.slots, 0);
                    ts->vc[s] = 1;   // epoch 1: the thread's start (see remoteAccess)
                    ts->progress = ts->vc;
                    run.states.push_back(std::move(ts));
                }
                std::vector<std::unique_ptr<Block>> blocks;
                Cluster cl;
                clearMBarriers();   // a barrier used before this cluster initialises it must not find an old one
                cl.sync = std::make_unique<rc::Barrier>(size * threads, rc::Orders::Memory, "a cluster barrier (barrier.cluster)");
                for (unsigned p = 0; p + 1 < size; p += 2) {
                    // Lane 0 of the allocating warp of each block (the model's tcgen05.alloc is lane 0's).
                    cl.pairAlloc.push_back(std::make_unique<rc::Barrier>(2, rc::Orders::Nothing, "tcgen05.alloc.cta_group::2 of the peer block"));
                    cl.pairDealloc.push_back(std::make_unique<rc::Barrier>(2, rc::Orders::Nothing, "tcgen05.dealloc.cta_group::2 of the peer block"));
                }
                for (unsigned r = 0; r < size; ++r) {
                    auto b = std::make_unique<Block>();
                    b->rank = r;
                    Dim id{cx + r % c.x, cy + (r / c.x) % c.y, cz + r / (c.x * c.y)};
                    b->name = "(" + std::to_string(id.x) + "," + std::to_string(id.y) + "," + std::to_string(id.z) + ")";
                    run.blockNames.push_back(b->name);
                    b->sync = std::make_unique<rc::Barrier>(threads, rc::Orders::Memory, "__syncthreads() of block " + b->name);
                    // The last warp of a block whose threads are not whole warps is partial (tilet emits no
                    // warp-wide instruction for such a block).
                    for (unsigned w = 0; w * 32 < threads; ++w)
                        b->warps.push_back(std::make_unique<rc::Barrier>(std::min(32u, threads - w * 32), rc::Orders::Nothing, "a warp-wide instruction"));
                    b->lanes.assign(threads, 0);
                    b->aux.assign(threads, 0);
                    b->scaleWords.assign(threads, 0);
                    for (unsigned gr = 0; gr < threads / 128; ++gr)
                        b->groups.push_back(std::make_unique<rc::Barrier>(128, rc::Orders::Nothing, "a warp group's wgmma"));
                    b->rsSlots.assign(threads, {});
                    b->groupClocks[0].assign(threads, {});
                    b->groupClocks[1].assign(threads, {});
                    // Poison shared memory so a missing initialisation shows up
                    // in the results too, not only in the detector's reports.
                    b->shared.assign(sharedBytes + 16, 0xA5);
                    b->sharedBytes = sharedBytes;
                    b->shadow = std::make_unique<rc::Shadow>(sharedBytes);
                    b->exitClocks.assign(run.slots, 0);
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
                            rc::run = &run;
                            rc::self = run.states[r * threads + t].get();
                            rc::self->tid = t;
                            rc::self->rank = r;
                            startedBlocks = uint64_t(1) << r;
                            openGroup.clear();
                            committedGroups.clear();
                            openWgmma.clear();
                            openTcgen05.clear();
                            committedTcgen05.clear();
                            committedWgmma.clear();
                            openWgmmaReads.clear();
                            committedWgmmaReads.clear();
                            openRegisterOperands.clear();
                            committedRegisterOperands.clear();
                            openWgmmaClocks.clear();
                            openWgmmaProgress.clear();
                            wgmmaCommits = 0;
                            pendingBulk.clear();
                            unfencedInits.clear();
                            views.clear();
                            kernel(args...);
                            threadExit();
                        });
                    }
                for (std::thread &th : pool) th.join();
                // A named barrier left with arrivals when the block exits: a
                // bar.arrive that no bar.sync met (the turns of ping-pong warp
                // groups out of balance).
                for (const auto &b : blocks)
                    for (const auto &[id, barrier] : b->named)
                        if (id >= 0 && barrier->pending())
                            rc::report("barrier", barrier->lastArrival(),
                                       barrier->what() + " is left with " + std::to_string(barrier->pending()) + " of its " + std::to_string(barrier->count()) +
                                           " threads arrived when the block exits: an arrival no bar.sync met");
            }
    }
    launchOrder = nullptr;
}
template <class Kernel, class... Args> void launch(Dim grid, unsigned threads, size_t sharedBytes, Kernel kernel, Args... args) {
    launch(grid, threads, sharedBytes, Dim{1, 1, 1}, kernel, args...);
}

inline void syncThreads(unsigned line = __builtin_LINE()) { block->sync->arriveAndWait(line); }

// shfl.sync (PTX ISA): lane j of the warp's segment of `width` lanes, as
// PTX computes it (minLane, maxLane of the segment); out of the segment,
// the lane's own value.
enum class ShuffleMode { Xor, Index, Down, Up };
template <class T> T shuffle(ShuffleMode mode, T value, int operand, int width) {
    static_assert(sizeof(T) <= 8, "emu shuffles move at most 8 bytes");
    unsigned t = tid.x, warpBase = t / 32 * 32, lane = t % 32;
    unsigned minLane = lane & ~static_cast<unsigned>(width - 1), maxLane = minLane + static_cast<unsigned>(width) - 1;
    long j = 0;
    bool valid = true;
    switch (mode) {
    case ShuffleMode::Xor: j = lane ^ (static_cast<unsigned>(operand) & 31u); valid = j <= static_cast<long>(maxLane); break;
    case ShuffleMode::Index: j = minLane + (static_cast<unsigned>(operand) & static_cast<unsigned>(width - 1)); break;
    case ShuffleMode::Down: j = static_cast<long>(lane) + operand; valid = j <= static_cast<long>(maxLane); break;
    case ShuffleMode::Up: j = static_cast<long>(lane) - operand; valid = j >= static_cast<long>(minLane); break;
    }
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    block->lanes[t] = bits;
    block->warps[t / 32]->arriveAndWait();
    uint64_t other = valid ? block->lanes[warpBase + static_cast<unsigned>(j)] : bits;
    block->warps[t / 32]->arriveAndWait();
    T out;
    std::memcpy(&out, &other, sizeof(T));
    return out;
}
template <class T> T shuffleXor(unsigned, T value, int laneMask, int width = 32) { return shuffle(ShuffleMode::Xor, value, laneMask, width); }
template <class T> T shuffleIdx(unsigned, T value, int lane, int width = 32) { return shuffle(ShuffleMode::Index, value, lane, width); }
template <class T> T shuffleDown(unsigned, T value, int delta, int width = 32) { return shuffle(ShuffleMode::Down, value, delta, width); }
template <class T> T shuffleUp(unsigned, T value, int delta, int width = 32) { return shuffle(ShuffleMode::Up, value, delta, width); }

// ---- dp4a (PTX ISA: "dp4a"): c + the four byte products, in 32 bits (wrapping)

template <bool SignedA, bool SignedB, class P, class Q, class C> C dp4a(P a, Q b, C c) {
    uint32_t sum = static_cast<uint32_t>(c);
    for (int t = 0; t < 4; ++t) {
        int x = SignedA ? int(static_cast<signed char>(a[t])) : int(static_cast<unsigned char>(a[t]));
        int y = SignedB ? int(static_cast<signed char>(b[t])) : int(static_cast<unsigned char>(b[t]));
        sum += static_cast<uint32_t>(x * y);
    }
    return static_cast<C>(sum);
}

// ---- instructions of a program's own inline asm (import_source; prepare.py
// turns each single-instruction asm statement into a call of its model here,
// destinations first, by reference). Written from the PTX ISA.
namespace ptx {
// lop3.b32 d, a, b, c, immLut: bit i of d is bit (a_i << 2 | b_i << 1 | c_i) of
// immLut ("Logic Operations: lop3", where ta = 0xF0, tb = 0xCC, tc = 0xAA).
inline void lop3_b32(unsigned &d, unsigned a, unsigned b, unsigned c, unsigned immLut) {
    unsigned r = 0;
    for (int bit = 0; bit < 32; ++bit) {
        unsigned index = ((a >> bit) & 1u) << 2 | ((b >> bit) & 1u) << 1 | ((c >> bit) & 1u);
        r |= ((immLut >> index) & 1u) << bit;
    }
    d = r;
}

// prmt.b32 d, a, b, c (default mode): byte k of d is byte (c >> 4k) & 7 of the
// eight bytes b:a, sign-replicated when bit 3 of that selector is set.
inline void prmt_b32(unsigned &d, unsigned a, unsigned b, unsigned c) {
    uint64_t bytes = uint64_t(b) << 32 | a;
    unsigned r = 0;
    for (int k = 0; k < 4; ++k) {
        unsigned sel = (c >> (4 * k)) & 0xF;
        unsigned byte = unsigned(bytes >> (8 * (sel & 7))) & 0xFF;
        if (sel & 8) byte = (byte & 0x80) ? 0xFF : 0;
        r |= byte << (8 * k);
    }
    d = r;
}

// The f16x2 arithmetic: each half of the 32-bit registers separately, worked
// out in double (exact for these operands: products of 11-bit significands,
// sums within double's range of exponents) and rounded once to f16, to
// nearest even (.rn, the default).
template <class F> unsigned f16x2(unsigned a, unsigned b, unsigned c, F op) {
    unsigned r = 0;
    for (int h = 0; h < 2; ++h) {
        auto half = [&](unsigned x) { return __half2float(__ushort_as_half(static_cast<unsigned short>(x >> (16 * h)))); };
        double v = op(half(a), half(b), half(c));
        r |= unsigned(__half_as_ushort(__double2half(v))) << (16 * h);
    }
    return r;
}
inline void add_f16x2(unsigned &d, unsigned a, unsigned b) { d = f16x2(a, b, 0, [](double x, double y, double) { return x + y; }); }
inline void sub_f16x2(unsigned &d, unsigned a, unsigned b) { d = f16x2(a, b, 0, [](double x, double y, double) { return x - y; }); }
inline void mul_f16x2(unsigned &d, unsigned a, unsigned b) { d = f16x2(a, b, 0, [](double x, double y, double) { return x * y; }); }
inline void fma_rn_f16x2(unsigned &d, unsigned a, unsigned b, unsigned c) { d = f16x2(a, b, c, [](double x, double y, double z) { return x * y + z; }); }
} // namespace ptx

// ---- ldmatrix (PTX ISA: "Warp-level matrix load instruction: ldmatrix")

// Lane l gives the address of row l % 8 of matrix l / 8. Per matrix, thread t
// receives the 32 bits at row t / 4, bytes 4 * (t % 4); with .trans, the b16
// elements (row 2 * (t % 4) + e, column t / 4) for e = 0, 1. The 16 bytes of
// a row count as read by the lane that gives its address.
template <int Count, bool Trans, class T> void ldmatrix(void *dst, SharedPtr<T> row) {
    unsigned t = tid.x, lane = t % 32, warpBase = t / 32 * 32;
    if (lane < 8 * Count) sharedAccess(row.blk, row.off, 16, row.line, false, row.buffer, row.base);
    block->lanes[t] = reinterpret_cast<uint64_t>(row.raw());
    block->warps[t / 32]->arriveAndWait();
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
    block->warps[t / 32]->arriveAndWait();
    std::memcpy(dst, regs, sizeof regs);
}

// ---- stmatrix (PTX ISA: "Warp-level matrix store instruction: stmatrix")

// ldmatrix backwards: lane l gives the address of row l % 8 of matrix l / 8;
// per matrix m, thread t's register m goes to row t / 4, bytes 4 * (t % 4).
// The 16 bytes of a row count as written by the lane that gives its address.
template <int Count, class T> void stmatrix(SharedPtr<T> row, const void *src) {
    unsigned t = tid.x, lane = t % 32, warpBase = t / 32 * 32;
    bool ok = lane < 8 * Count && sharedAccess(row.blk, row.off, 16, row.line, true, row.buffer, row.base);
    block->lanes[t] = ok ? reinterpret_cast<uint64_t>(row.raw()) : 0;
    block->warps[t / 32]->arriveAndWait();
    unsigned regs[Count];
    std::memcpy(regs, src, sizeof regs);
    for (int m = 0; m < Count; ++m) {
        auto *rowStart = reinterpret_cast<unsigned char *>(block->lanes[warpBase + 8 * m + lane / 4]);
        if (rowStart) std::memcpy(rowStart + 4 * (lane % 4), &regs[m], 4);
    }
    block->warps[t / 32]->arriveAndWait();
}

// ---- mma.sync (PTX ISA: "Matrix fragments for mma.m16n8k*"), g = lane / 4, q = lane % 4

inline double toDouble(__half x) { return __half2float(x); }
inline double toDouble(__nv_bfloat16 x) { return __bfloat162float(x); }
inline double toDouble(signed char x) { return x; }
inline double toDouble(unsigned char x) { return x; }
inline double toDouble(__nv_fp8_e4m3 x) { return float(x); }
inline double toDouble(__nv_fp8_e5m2 x) { return float(x); }
inline double toDouble(float x) { return tf32Truncated(x); }   // f32 operands are read as tf32

// Packed 4-bit operands of mma .s4 / .u4: eight to a 32-bit register,
// element 0 in the low nibble (PTX ISA, "Matrix fragments for mma.m16n8k64").
struct S4 {};
struct U4 {};
template <class T> constexpr int operandBits = 8 * sizeof(T);
template <> constexpr int operandBits<S4> = 4;
template <> constexpr int operandBits<U4> = 4;
// Element i of a lane's operand registers.
template <class T> double operandElement(const void *regs, int i) {
    if constexpr (operandBits<T> == 4) {
        int nibble = (static_cast<const unsigned char *>(regs)[i / 2] >> (4 * (i % 2))) & 0xF;
        return std::is_same_v<T, S4> && nibble >= 8 ? nibble - 16 : nibble;
    } else {
        return toDouble(static_cast<const T *>(regs)[i]);
    }
}

// Row and column of A element i (16 x K) and of B element i (K x 8) held by a lane.
template <int K, int Bits> void aElement(int i, unsigned g, unsigned q, int &row, int &col) {
    if (Bits == 16 && K == 16) { row = g + 8 * ((i / 2) % 2); col = 2 * q + i % 2 + 8 * (i / 4); }
    else if (Bits == 16 && K == 8) { row = g + 8 * (i / 2); col = 2 * q + i % 2; }
    else if (Bits == 32 && K == 8) { row = g + 8 * (i % 2); col = q + 4 * (i / 2); }
    else if (Bits == 8 && K == 32) { row = g + 8 * ((i / 4) % 2); col = 4 * q + i % 4 + 16 * (i / 8); }
    else if (Bits == 4 && K == 64) { row = g + 8 * ((i / 8) % 2); col = 8 * q + i % 8 + 32 * (i / 16); }
    else throw std::runtime_error("emu: no A fragment for this mma shape");
}
template <int K, int Bits> void bElement(int i, unsigned g, unsigned q, int &k, int &n) {
    n = g;
    if (Bits == 16 && K == 16) k = 2 * q + i % 2 + 8 * (i / 2);
    else if (Bits == 16 && K == 8) k = 2 * q + i;
    else if (Bits == 32 && K == 8) k = q + 4 * i;
    else if (Bits == 8 && K == 32) k = 4 * q + i % 4 + 16 * (i / 4);
    else if (Bits == 4 && K == 64) k = 8 * q + i % 8 + 32 * (i / 8);
    else throw std::runtime_error("emu: no B fragment for this mma shape");
}

template <class D> void accumulate(D &d, double sum) {
    if constexpr (std::is_same_v<D, int>) d = static_cast<int>(d + static_cast<long long>(sum));
    else if constexpr (std::is_same_v<D, __half>) d = __float2half(static_cast<float>(toDouble(d) + sum));
    else d = static_cast<float>(d + sum);
}

// A (M x K) and B (K x N) from the operand registers the warp's lanes
// published in block->lanes and block->aux.
template <int M, int N, int K, class T> void gatherOperands(unsigned warpBase, double (&A)[M][K], double (&B)[K][N]) {
    constexpr int Bits = operandBits<T>, AElems = M * K / 32, BElems = K * N / 32;
    for (unsigned l = 0; l < 32; ++l) {
        const void *la = reinterpret_cast<const void *>(block->lanes[warpBase + l]);
        const void *lb = reinterpret_cast<const void *>(block->aux[warpBase + l]);
        for (int i = 0; i < AElems; ++i) {
            int r, c;
            aElement<K, Bits>(i, l / 4, l % 4, r, c);
            A[r][c] = operandElement<T>(la, i);
        }
        for (int i = 0; i < BElems; ++i) {
            int k, n;
            bElement<K, Bits>(i, l / 4, l % 4, k, n);
            B[k][n] = operandElement<T>(lb, i);
        }
    }
}

// This lane's 4 elements of the m16n8 accumulator += their elements of A B.
template <int M, int N, int K, class D> void accumulateProduct(D *d, unsigned lane, const double (&A)[M][K], const double (&B)[K][N]) {
    for (int i = 0; i < 4; ++i) {
        int row = lane / 4 + 8 * (i / 2), col = 2 * (lane % 4) + i % 2;
        double sum = 0;
        for (int k = 0; k < K; ++k) sum += A[row][k] * B[k][col];
        accumulate(d[i], sum);
    }
}

// D (M x N, this lane's 4 elements) += A (M x K) * B (K x N), gathered from the warp's lanes.
template <int M, int N, int K, class T, class D> void mma(D *d, const void *a, const void *b) {
    static_assert(M == 16 && N == 8, "emu models the m16n8 shapes");
    unsigned t = tid.x, lane = t % 32, warpBase = t / 32 * 32;
    block->lanes[t] = reinterpret_cast<uint64_t>(a);
    block->aux[t] = reinterpret_cast<uint64_t>(b);
    block->warps[t / 32]->arriveAndWait();
    double A[M][K] = {}, B[K][N] = {};
    gatherOperands<M, N, K, T>(warpBase, A, B);
    block->warps[t / 32]->arriveAndWait();
    accumulateProduct<M, N, K>(d, lane, A, B);
}

// ---- block-scaled mma.sync (PTX ISA, "Block Scaling for mma.sync"):
// D += (A * scale_A) (B * scale_B). kind::mxf4nvf4 (scale_vec::4X): e2m1
// operands (eight to a register, element 0 in the low nibble, the .s4
// fragments) and ue4m3 factors, bytes byteA.. of a lane's 32-bit word (byte
// byteA + j: K elements 16j to 16j + 15 of the atom); kind::mxf8f6f4
// (scale_vec::1X): 8-bit operands (the .e4m3 fragments) and one ue8m0
// factor, byte byteA. Row r of A takes its factors from lane
// 4 (r % 8) + 2 threadA + r / 8, column n of B from lane 4 n + threadB.
struct E2M1 {};
template <> constexpr int operandBits<E2M1> = 4;
template <> inline double operandElement<E2M1>(const void *regs, int i) {
    static const double magnitude[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    int nibble = (static_cast<const unsigned char *>(regs)[i / 2] >> (4 * (i % 2))) & 0xF;
    return nibble & 8 ? -magnitude[nibble & 7] : magnitude[nibble & 7];
}
// The 6-bit floats (OCP MX): e2m3, 2 exponent bits (bias 1) and 3 mantissa
// bits; e3m2, 3 exponent bits (bias 3) and 2 mantissa bits; the sign in bit
// 5; no infinities or NaNs.
inline double sixBitFloat(unsigned v, int mantissaBits, int bias) {
    const unsigned magnitude = v & 0x1F, exponent = magnitude >> mantissaBits, mantissa = magnitude & ((1u << mantissaBits) - 1);
    double x = exponent == 0 ? std::ldexp(double(mantissa), 1 - bias - mantissaBits)
                             : std::ldexp(double((1u << mantissaBits) + mantissa), int(exponent) - bias - mantissaBits);
    return v & 0x20 ? -x : x;
}
inline double e2m3(unsigned v) { return sixBitFloat(v, 3, 1); }
inline double e3m2(unsigned v) { return sixBitFloat(v, 2, 3); }
// An unsigned e4m3 factor: 4 exponent bits (bias 7), 3 mantissa bits; 0x7F is NaN.
inline double ue4m3(unsigned byte) {
    byte &= 0x7F;
    if (byte == 0x7F) return std::nan("");
    unsigned exponent = byte >> 3, mantissa = byte & 7;
    return exponent == 0 ? std::ldexp(double(mantissa), -9) : std::ldexp(double(8 + mantissa), int(exponent) - 10);
}
// A ue8m0 factor: 2^(byte - 127); 0xFF is NaN.
inline double ue8m0(unsigned byte) { return byte == 0xFF ? std::nan("") : std::ldexp(1.0, int(byte) - 127); }
template <int M, int N, int K, class T, int Vec>
void mmaBlockScaled(float *d, const void *a, const void *b, unsigned sfa, unsigned short byteA, unsigned short threadA, unsigned sfb,
                    unsigned short byteB, unsigned short threadB) {
    static_assert(M == 16 && N == 8 && ((K == 64 && Vec == 16) || (K == 32 && Vec == 32)),
                  "emu models kind::mxf4nvf4 m16n8k64 scale_vec::4X and kind::mxf8f6f4 m16n8k32 scale_vec::1X");
    constexpr int Factors = K / Vec;
    unsigned t = tid.x, lane = t % 32, warpBase = t / 32 * 32;
    if (threadA > 1 || threadB > 3 || byteA + Factors > 4 || byteB + Factors > 4)
        throw std::runtime_error("emu: block-scaled mma selector out of range");
    auto factor = [](uint64_t word, int byte) { return Vec == 16 ? ue4m3(unsigned(word >> (8 * byte)) & 0xFF) : ue8m0(unsigned(word >> (8 * byte)) & 0xFF); };
    block->lanes[t] = reinterpret_cast<uint64_t>(a);
    block->aux[t] = reinterpret_cast<uint64_t>(b);
    block->scaleWords[t] = sfa | uint64_t(sfb) << 32;
    block->warps[t / 32]->arriveAndWait();
    double A[M][K] = {}, B[K][N] = {};
    gatherOperands<M, N, K, T>(warpBase, A, B);
    for (int r = 0; r < M; ++r) {
        uint64_t word = block->scaleWords[warpBase + 4 * (r % 8) + 2 * threadA + r / 8] & 0xFFFFFFFFu;
        for (int k = 0; k < K; ++k) A[r][k] *= factor(word, byteA + k / Vec);
    }
    for (int n = 0; n < N; ++n) {
        uint64_t word = block->scaleWords[warpBase + 4 * n + threadB] >> 32;
        for (int k = 0; k < K; ++k) B[k][n] *= factor(word, byteB + k / Vec);
    }
    block->warps[t / 32]->arriveAndWait();
    accumulateProduct<M, N, K>(d, lane, A, B);
}

// ---- cp.async: copies land when a wait retires their group. The generic
// proxy writes them (PTX ISA, "Memory Consistency Model", "Proxies"); until
// they land, any access to their bytes -- the issuing thread's own too --
// is a race.

template <int Bytes, class T> void cpAsync(SharedPtr<T> dst, const void *src, bool valid) {
    if (dst.off < 0 || static_cast<size_t>(dst.off) + Bytes > dst.blk->sharedBytes) {
        sharedAccess(dst.blk, dst.off, Bytes, dst.line, true, dst.buffer, dst.base);   // reports
        return;
    }
    rc::Where where{&dst.blk->name, dst.buffer, dst.base};
    dst.blk->shadow->issueCopy(static_cast<size_t>(dst.off), Bytes, actorOf("issues a cp.async to", dst.line), where);
    openGroup.push_back({sharedCast<unsigned char>(dst), src, Bytes, valid});
}
inline void cpAsyncCommit() {
    committedGroups.push_back(std::move(openGroup));
    openGroup.clear();
}
template <int Pending> void cpAsyncWait(unsigned = __builtin_LINE()) {
    while (committedGroups.size() > static_cast<size_t>(Pending)) {
        for (const AsyncCopy &c : committedGroups.front()) {
            if (c.valid) std::memcpy(c.dst.raw(), c.src, static_cast<size_t>(c.bytes));
            else std::memset(c.dst.raw(), 0, static_cast<size_t>(c.bytes));
            rc::Where where{&c.dst.blk->name, c.dst.buffer, c.dst.base};
            c.dst.blk->shadow->write(static_cast<size_t>(c.dst.off), static_cast<size_t>(c.bytes), actorOf("writes", c.dst.line, "the cp.async of "), where,
                                     true);
        }
        committedGroups.erase(committedGroups.begin());
    }
}

// ---- mbarriers (PTX ISA: "Parallel synchronization and communication
// instructions: mbarrier"): a phase completes after `count` arrivals and
// its transaction bytes; a wait for parity P returns once the number of
// completed phases has parity != P. Arrivals release (their clocks join the
// phase), a wait that sees its phase complete acquires the phase's clocks;
// TMA bytes completing on the barrier are writes of its agent slot, so only
// a waiter of the phase is ordered after them.

struct MBarrier {
    int expected = 0, pending = 0;
    long long tx = 0;   // TMA transaction bytes the phase still waits for
    unsigned completed = 0;
    uint32_t agent = 0;
    rc::Clock agentClock = 0;
    rc::Clocks acc, byParity[2];   // the current phase's clocks; those of the last completed phase of each parity
    rc::Clocks progress, progressByParity[2];   // the same of the threads' progress (ThreadState::progress)
    rc::Access init;
    bool initFenced = false;
    std::string name;
    struct Waiter {
        int parity;
        bool woken;
        long long phase = 0;   // the phase whose completion woke it
    };
    std::vector<Waiter *> waiters;
    // Waits that have returned, each having seen phase `phase` complete (-1:
    // a wait for the parity before the first phase). A parity wait cannot
    // tell phase k from k + 2 (PTX ISA, mbarrier.try_wait.parity), so the
    // next phase must complete after each of them: some arrival of it (or
    // the issue of its transactions) ordered after the wait. Otherwise a
    // run in which the thread reached its wait later would find the parity
    // come round again and wait for ever.
    struct Seen {
        uint32_t slot;
        rc::Clock epoch;   // the waiter's epoch right after the wait
        long long phase;
        unsigned line;
    };
    std::vector<Seen> seen;
    std::map<uint32_t, long long> lastSeen;   // by thread slot: the phase its last wait saw complete
};
inline std::mutex mbarrierMutex;
inline std::condition_variable mbarrierChanged;
inline std::map<const void *, MBarrier> mbarriers;

inline void clearMBarriers() {
    std::lock_guard<std::mutex> lock(mbarrierMutex);
    mbarriers.clear();
}
inline std::string barrierName(SharedPtr<unsigned long long> bar) {
    return std::string(bar.buffer) + "[" + std::to_string((bar.off - bar.base) / 8) + "] (shared offset " + std::to_string(bar.off) + " of block " +
           bar.blk->name + ")";
}
// The barrier at `bar` (mbarrierMutex held): it must exist, and its
// initialisation be ordered before this use; `crossing`: the use is by the
// async proxy (TMA) or another block, which also needs fence.mbarrier_init
// after the initialisation.
inline MBarrier &mbarrierAt(SharedPtr<unsigned long long> bar, unsigned line, bool crossing = false) {
    auto it = mbarriers.find(bar.raw());
    if (it == mbarriers.end())
        rc::report("uninit", line, rc::run->who(rc::self->slot) + " uses " + barrierName(bar) + ", which no mbarrier.init has initialised", 0, "", true);
    MBarrier &b = it->second;
    if (b.init.slot != rc::self->slot && rc::self->vc[b.init.slot] < b.init.clock)
        rc::report("race", line,
                   rc::run->who(rc::self->slot) + " uses " + b.name + ", but its mbarrier.init by " + rc::run->who(b.init.slot) +
                       " is not ordered before this use (no barrier between them)",
                   b.init.line, "the mbarrier.init");
    if (crossing && !b.initFenced)
        rc::report("fence-init", line,
                   b.name + " is used by the TMA unit or another block, but no fence.mbarrier_init followed its mbarrier.init",
                   b.init.line, "the mbarrier.init");
    return b;
}
// A wait that returned having seen phase `s.phase`, while phase s.phase + 1
// completed without anything ordered after it (see MBarrier::seen).
inline void reportLostPhase(const MBarrier &b, const MBarrier::Seen &s) {
    rc::report("lost-phase", s.line,
               rc::run->who(s.slot) + " waited here for a phase of " + b.name +
                   ", and the next phase completed with no arrival ordered after that wait: had the thread reached the wait later, it "
                   "would have found the parity come round again and waited for ever (mbarrier.try_wait.parity cannot tell a phase "
                   "from the one two later); the threads that arrive must wait for the waiting ones (a barrier before the one thread "
                   "that arrives)");
}
// A phase completes when its arrivals and its transaction bytes are both done.
inline void settle(MBarrier &b) {
    if (b.pending == 0 && b.tx == 0) {
        long long phase = b.completed;
        for (const MBarrier::Seen &s : b.seen)
            if (s.phase + 1 == phase && b.progress[s.slot] < s.epoch) reportLostPhase(b, s);
        b.seen.erase(std::remove_if(b.seen.begin(), b.seen.end(), [&](const MBarrier::Seen &s) { return s.phase + 1 <= phase; }), b.seen.end());
        ++b.completed;
        b.byParity[(b.completed - 1) & 1].swap(b.acc);
        b.acc.assign(rc::run->slots, 0);
        b.progressByParity[(b.completed - 1) & 1].swap(b.progress);
        b.progress.assign(rc::run->slots, 0);
        b.pending = b.expected;
        int woken = 0;
        for (auto it = b.waiters.begin(); it != b.waiters.end();) {
            if (static_cast<int>(b.completed & 1) != (*it)->parity) {
                (*it)->woken = true;
                (*it)->phase = phase;
                ++woken;
                it = b.waiters.erase(it);
            } else {
                ++it;
            }
        }
        rc::run->blocked.fetch_sub(woken);
        mbarrierChanged.notify_all();
    }
}
// An arrival of the calling thread (mbarrierMutex held): releases its clocks into the phase.
inline void arriveLocked(MBarrier &b, int arrivals) {
    if (arrivals) {
        rc::joinInto(b.acc, rc::self->vc);
        rc::joinInto(b.progress, rc::self->progress);
        rc::self->tick();
    }
    b.pending -= arrivals;
}
inline void transact(SharedPtr<unsigned long long> bar, long long bytes, int arrivals, unsigned line) {
    std::lock_guard<std::mutex> lock(mbarrierMutex);
    MBarrier &b = mbarrierAt(bar, line);
    b.tx += bytes;
    arriveLocked(b, arrivals);
    settle(b);
}
// TMA bytes written to shared memory complete on `bar`: returns the epoch of
// the barrier's agent the writes carry; complete() then adds them to the phase.
inline std::pair<uint32_t, rc::Clock> tmaAgent(SharedPtr<unsigned long long> bar, unsigned line) {
    std::lock_guard<std::mutex> lock(mbarrierMutex);
    MBarrier &b = mbarrierAt(bar, line, true);
    return {b.agent, ++b.agentClock};
}
inline void tmaComplete(SharedPtr<unsigned long long> bar, const rc::Clocks &issued, std::pair<uint32_t, rc::Clock> agent, long long bytes,
                        unsigned line) {
    std::lock_guard<std::mutex> lock(mbarrierMutex);
    MBarrier &b = mbarrierAt(bar, line, true);
    // The TMA writes follow their issue: a waiter of the phase is ordered after both.
    rc::joinInto(b.acc, issued);
    rc::joinInto(b.progress, issued);
    b.acc[agent.first] = std::max(b.acc[agent.first], agent.second);
    b.tx -= bytes;
    settle(b);
}
} // namespace emu

inline void tilet_mbarrier_init(emu::SharedPtr<unsigned long long> bar, int count) {
    std::lock_guard<std::mutex> lock(emu::mbarrierMutex);
    emu::MBarrier &b = emu::mbarriers[bar.raw()];
    if (emu::cluster->agents >= emu::kMBarriersPerBlock * emu::cluster->blocks.size()) throw std::runtime_error("emu: too many mbarriers");
    b = {};
    b.expected = b.pending = count;
    b.agent = emu::rc::run->threads + emu::cluster->agents++;
    b.acc.assign(emu::rc::run->slots, 0);
    b.byParity[0].assign(emu::rc::run->slots, 0);
    b.byParity[1].assign(emu::rc::run->slots, 0);
    b.progress = b.progressByParity[0] = b.progressByParity[1] = b.acc;
    b.init = {emu::rc::self->now(), emu::rc::self->slot, bar.line};
    b.name = "mbarrier " + emu::barrierName(bar);
    emu::rc::run->agents[b.agent - emu::rc::run->threads] = b.name;
    emu::unfencedInits.push_back(bar.raw());
}
inline void tilet_mbarrier_arrive_expect_tx(emu::SharedPtr<unsigned long long> bar, int bytes) { emu::transact(bar, bytes, 1, bar.line); }
inline void tilet_mbarrier_expect_tx(emu::SharedPtr<unsigned long long> bar, int bytes) { emu::transact(bar, bytes, 0, bar.line); }

// ---- cluster launch control (PTX ISA, clusterlaunchcontrol). A request
// takes the first cluster of the launch order that has neither run nor been
// taken. The answer's 16 bytes are the model's own (the hardware's are
// opaque to programs): word 0 is 1 when a cluster was canceled, words 1 to 3
// the x, y, z index of its first block. It is written like a TMA load's
// bytes (through the async proxy, completing on the mbarrier), in this
// block or, multicast, in every block of the cluster.
namespace emu {
template <class T> void clcTryCancel(SharedPtr<T> answer, SharedPtr<unsigned long long> bar, bool multicast) {
    static_assert(sizeof(T) == 4, "a cluster-launch-control answer is four 32-bit words");
    if (block->clcAnsweredNone)
        rc::report("clc", answer.line,
                   rc::run->who(rc::self->slot) + " asks for another cluster after an answer of its block canceled none (clusterlaunchcontrol.try_cancel: undefined "
                                                  "after a failed request)");
    uint32_t words[4] = {0, 0, 0, 0};
    {
        std::lock_guard<std::mutex> lock(launchOrder->mutex);
        for (size_t j = launchOrder->running + 1; j < launchOrder->origins.size(); ++j) {
            if (launchOrder->taken[j]) continue;
            launchOrder->taken[j] = 1;
            const Dim &o = launchOrder->origins[j];
            words[0] = 1, words[1] = o.x, words[2] = o.y, words[3] = o.z;
            break;
        }
    }
    if (answer.off % 16 != 0)
        rc::report("clc", answer.line, rc::run->who(rc::self->slot) + " asks for a cluster-launch-control answer at shared offset " + std::to_string(answer.off) +
                                           ", not a multiple of 16 bytes", 0, "", true);
    const int blocks = multicast ? static_cast<int>(cluster->blocks.size()) : 1;
    for (int r = 0; r < blocks; ++r) {
        SharedPtr<T> dst = multicast ? remote(answer, r) : answer;
        SharedPtr<unsigned long long> b = multicast ? remote(bar, r) : bar;
        if (!words[0]) dst.blk->clcAnsweredNone = true;
        if (static_cast<size_t>(dst.off) + 16 <= dst.blk->sharedBytes) std::memcpy(static_cast<void *>(dst.raw()), words, 16);
        bulkWrite(dst, b, {{static_cast<size_t>(dst.off), 16}}, "writes");
    }
}
// A field of the answer at `answer` (read whole, as ld.shared.b128 does).
template <class T> uint32_t clcField(SharedPtr<T> answer, int word) {
    uint32_t words[4] = {0, 0, 0, 0};
    if (sharedAccess(answer.blk, answer.off, 16, answer.line, false, answer.buffer, answer.base)) std::memcpy(words, static_cast<const void *>(answer.raw()), 16);
    return words[word];
}
} // namespace emu
template <class T> void tilet_clc_try_cancel(emu::SharedPtr<T> answer, emu::SharedPtr<unsigned long long> bar) { emu::clcTryCancel(answer, bar, false); }
template <class T> void tilet_clc_try_cancel_multicast(emu::SharedPtr<T> answer, emu::SharedPtr<unsigned long long> bar) { emu::clcTryCancel(answer, bar, true); }
template <class T> int tilet_clc_is_canceled(emu::SharedPtr<T> answer) { return static_cast<int>(emu::clcField(answer, 0)); }
// The hardware's first_ctaid of an answer that canceled nothing is undefined: the model's is 0.
template <class T> unsigned tilet_clc_first_ctaid(emu::SharedPtr<T> answer, int dim) { return emu::clcField(answer, 1 + dim); }
// fence.mbarrier_init: this thread's initialisations become visible to the
// async proxy and the cluster.
inline void tilet_fence_barrier_init() {
    std::lock_guard<std::mutex> lock(emu::mbarrierMutex);
    for (unsigned long long *bar : emu::unfencedInits) {
        auto it = emu::mbarriers.find(bar);
        if (it != emu::mbarriers.end()) it->second.initFenced = true;
    }
    emu::unfencedInits.clear();
}
inline void tilet_mbarrier_arrive(emu::SharedPtr<unsigned long long> bar) { emu::transact(bar, 0, 1, bar.line); }
inline void tilet_mbarrier_wait(emu::SharedPtr<unsigned long long> bar, int parity) {
    std::unique_lock<std::mutex> lock(emu::mbarrierMutex);
    emu::MBarrier &b = emu::mbarrierAt(bar, bar.line);
    long long phase = static_cast<long long>(b.completed) - 1;
    if (static_cast<int>(b.completed & 1) == parity) {
        // The phase of this parity after the last one this thread saw: if
        // it has completed, the parity came round again and the thread
        // would wait for ever (the run would end as a deadlock).
        auto last = b.lastSeen.find(emu::rc::self->slot);
        long long next = (last == b.lastSeen.end() ? -1 : last->second) + 1;
        if ((next & 1) != parity) ++next;
        if (next < static_cast<long long>(b.completed))
            emu::rc::report("lost-phase", bar.line,
                            emu::rc::run->who(emu::rc::self->slot) + " waits for phase " + std::to_string(next) + " (parity " + std::to_string(parity) +
                                ") of " + b.name + ", which completed " + std::to_string(b.completed - next) +
                                " phases ago: the parity came round again and the thread would wait for ever; the threads that arrive must "
                                "wait for the waiting ones (a barrier before the one thread that arrives)",
                            0, "", true);
        emu::MBarrier::Waiter w{parity, false};
        b.waiters.push_back(&w);
        emu::rc::run->blocking(*emu::rc::self, "the phase of parity " + std::to_string(parity) + " of " + b.name, bar.line);
        emu::mbarrierChanged.wait(lock, [&] { return w.woken; });
        phase = w.phase;
    }
    emu::rc::self->acquire(b.byParity[parity & 1]);
    emu::rc::self->acquireProgress(b.progressByParity[parity & 1]);
    // What this thread does from here on is ordered after the wait.
    emu::rc::self->tick();
    emu::MBarrier::Seen seen{emu::rc::self->slot, emu::rc::self->now(), phase, bar.line};
    b.lastSeen[seen.slot] = phase;
    if (static_cast<long long>(b.completed) > phase + 1) emu::reportLostPhase(b, seen);   // the next phase completed before the wait returned
    else b.seen.push_back(seen);
}
// Waiting at cluster scope: the emulator's clocks order every block of the cluster alike.
inline void tilet_mbarrier_wait_cluster(emu::SharedPtr<unsigned long long> bar, int parity) { tilet_mbarrier_wait(bar, parity); }
// An arrival on the barrier at the same offset in block `rank` (mapa +
// mbarrier.arrive.release.cluster).
inline void tilet_mbarrier_arrive_cluster(emu::SharedPtr<unsigned long long> bar, int rank) {
    emu::SharedPtr<unsigned long long> target = emu::remote(bar, rank);
    std::lock_guard<std::mutex> lock(emu::mbarrierMutex);
    emu::MBarrier &b = emu::mbarrierAt(target, bar.line, target.blk != emu::block);
    if (target.blk != emu::block) emu::remoteAccess(target.blk, emu::rc::self->slot, emu::rc::self->now(), bar.line);
    emu::arriveLocked(b, 1);
    emu::settle(b);
}
template <class T> emu::SharedPtr<T> tilet_map_shared_rank(emu::SharedPtr<T> local, int rank) { return emu::remote(local, rank); }
inline void tilet_cluster_sync(unsigned line = __builtin_LINE()) { emu::cluster->sync->arriveAndWait(line); }
inline int tilet_cluster_ctarank() { return static_cast<int>(emu::clusterRank); }
// bar.sync id, threads: a barrier of `threads` threads, one per id and block.
namespace emu {
inline rc::Barrier &namedBarrier(int id, int threads, unsigned line) {
    std::lock_guard<std::mutex> lock(block->namedMutex);
    auto &slot = block->named[id];
    if (!slot)
        slot = std::make_unique<rc::Barrier>(static_cast<unsigned>(threads), rc::Orders::Memory,
                                             "bar.sync " + std::to_string(id) + ", " + std::to_string(threads) + " of block " + block->name);
    else if (slot->count() != static_cast<unsigned>(threads))
        rc::report("race", line, "bar.sync " + std::to_string(id) + " used with " + std::to_string(threads) + " threads and with " + std::to_string(slot->count()));
    return *slot;
}
} // namespace emu
inline void tilet_named_barrier(int id, int threads, unsigned line = __builtin_LINE()) { emu::namedBarrier(id, threads, line).arriveAndWait(line); }
// Ping-pong turns: bar.sync, and bar.arrive (the calling thread counts
// toward the barrier's phase and goes on).
inline void tilet_issue_turn_wait(int id, int threads, unsigned line = __builtin_LINE()) { emu::namedBarrier(id, threads, line).arriveAndWait(line); }
inline void tilet_issue_turn_pass(int id, int threads, unsigned line = __builtin_LINE()) { emu::namedBarrier(id, threads, line).arrive(line); }
// __syncwarp(): a barrier of the 32 lanes of the calling thread's warp (a
// role of one warp meets there), one per warp and block.
inline void tilet_syncwarp(unsigned line = __builtin_LINE()) {
    emu::rc::Barrier *b;
    {
        std::lock_guard<std::mutex> lock(emu::block->namedMutex);
        int warp = static_cast<int>(emu::tid.x / 32);
        auto &slot = emu::block->named[-1 - warp];   // below the bar.sync ids
        if (!slot) slot = std::make_unique<emu::rc::Barrier>(32u, emu::rc::Orders::Memory, "__syncwarp() of warp " + std::to_string(warp) + " of block " + emu::block->name);
        b = slot.get();
    }
    b->arriveAndWait(line);
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
    // CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B (4) and 16U6_ALIGN16B (6): 4- or
    // 6-bit elements, packed in global memory; in shared memory each 16 take
    // 16 bytes, their 8 or 12 packed bytes and then a gap (elementBytes is
    // the slot: 1). 0 for the other types.
    unsigned unpackBits;
};
inline TensorMapView view(const CUtensorMap *map) {
    const cuuint64_t *w = map->opaque;
    TensorMapView v{};
    v.base = reinterpret_cast<unsigned char *>(w[0]);
    v.rank = unsigned(w[1] & 0xff);
    v.elementBytes = unsigned((w[1] >> 8) & 0xff);
    v.swizzleBytes = unsigned((w[1] >> 16) & 0xffff);
    v.unpackBits = unsigned((w[1] >> 40) & 0xf);
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
    const unsigned unpackBits = type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B ? 4 : type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B ? 6 : 0;
    unsigned elementBytes = unpackBits ? 1 : elementBytesOf(type);
    unsigned swizzleBytes = swizzle == CU_TENSOR_MAP_SWIZZLE_128B ? 128 : swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64 : swizzle == CU_TENSOR_MAP_SWIZZLE_32B ? 32 : 0;
    // cuTensorMapEncodeTiled's rules for 16U4_ALIGN16B and 16U6_ALIGN16B: a
    // 32-byte aligned base, rows of a multiple of 128 elements, strides of 32
    // bytes, boxes 128 elements wide, no swizzle or the 128-byte one.
    if (unpackBits) {
        if (reinterpret_cast<unsigned long long>(base) % 32 != 0 || rank < 1 || sizes[0] % 128 != 0 || box[0] != 128 ||
            (swizzleBytes != 0 && swizzleBytes != 128))
            return CUDA_ERROR_INVALID_VALUE;
        for (unsigned d = 0; d + 1 < rank; ++d)
            if (strides[d] % 32 != 0) return CUDA_ERROR_INVALID_VALUE;
    }
    // What the driver refuses (cuTensorMapEncodeTiled): a box dimension of
    // 0 or over 256, an innermost box not whole 16-byte units or wider than
    // the swizzle.
    if (rank == 0 || rank > 5) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned d = 0; d < rank; ++d)
        if (box[d] == 0 || box[d] > 256) return CUDA_ERROR_INVALID_VALUE;
    if ((box[0] * elementBytes) % 16 != 0 || (swizzleBytes && box[0] * elementBytes > swizzleBytes)) return CUDA_ERROR_INVALID_VALUE;
    w[0] = reinterpret_cast<unsigned long long>(base);
    w[1] = rank | (elementBytes << 8) | (swizzleBytes << 16) | (static_cast<unsigned long long>(unpackBits) << 40);
    for (unsigned d = 0; d < rank; ++d) w[2 + d] = sizes[d];
    for (unsigned d = 1; d < rank; ++d) w[6 + d] = strides[d - 1];
    for (unsigned d = 0; d < rank; ++d) w[12 + d / 2] |= static_cast<unsigned long long>(box[d]) << (32 * (d % 2));
    return CUDA_SUCCESS;
}
// TMA's im2col mode (PTX ISA, "Tensors: im2col mode"; cuTensorMapEncodeIm2col),
// for 4-D NHWC tensors: the tiled fields, plus a flag (w[1] bit 32), the
// bounding box's corners (w[14]: lower W, lower H, upper W, upper H, 16 bits
// each) and the traversal strides, channels per pixel and pixels per column
// (w[15]). The encoding refuses what the driver documents as invalid.
inline CUresult encodeIm2col(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *base, const cuuint64_t *sizes, const cuuint64_t *strides,
                             const int *lower, const int *upper, cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn, const cuuint32_t *elementStrides,
                             CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill) {
    if (rank != 4) return CUDA_ERROR_INVALID_VALUE;   // the model covers NHWC
    for (int d = 0; d < 2; ++d) {
        if (lower[d] < -128 || lower[d] > 127 || upper[d] < -128 || upper[d] > 127) return CUDA_ERROR_INVALID_VALUE;
        if (static_cast<long long>(sizes[1 + d]) - 1 + upper[d] < lower[d]) return CUDA_ERROR_INVALID_VALUE;   // an empty bounding box
    }
    for (int d = 1; d < 3; ++d)
        if (elementStrides[d] < 1 || elementStrides[d] > 8) return CUDA_ERROR_INVALID_VALUE;
    if (channelsPerPixel == 0 || channelsPerPixel > 256 || pixelsPerColumn == 0 || pixelsPerColumn > 1024) return CUDA_ERROR_INVALID_VALUE;
    unsigned swizzleBytes = swizzle == CU_TENSOR_MAP_SWIZZLE_128B ? 128 : swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64 : swizzle == CU_TENSOR_MAP_SWIZZLE_32B ? 32 : 0;
    if (swizzleBytes && channelsPerPixel * elementBytesOf(type) > swizzleBytes) return CUDA_ERROR_INVALID_VALUE;
    const cuuint32_t box[4] = {channelsPerPixel, 1, 1, 1};
    const cuuint32_t unit[4] = {1, 1, 1, 1};
    encodeTiled(map, type, rank, base, sizes, strides, box, unit, interleave, swizzle, l2, fill);
    cuuint64_t *w = map->opaque;
    w[1] |= 1ull << 32;
    auto bits16 = [](int v) { return static_cast<unsigned long long>(static_cast<unsigned short>(static_cast<short>(v))); };
    w[14] = bits16(lower[0]) | bits16(lower[1]) << 16 | bits16(upper[0]) << 32 | bits16(upper[1]) << 48;
    w[15] = static_cast<unsigned long long>(elementStrides[1]) | static_cast<unsigned long long>(elementStrides[2]) << 8 |
            static_cast<unsigned long long>(channelsPerPixel) << 16 | static_cast<unsigned long long>(pixelsPerColumn) << 32;
    return CUDA_SUCCESS;
}
inline cudaError_t getDriverEntryPoint(const char *symbol, void **fn, unsigned, unsigned long long, cudaDriverEntryPointQueryResult *found) {
    if (std::string(symbol) == "cuTensorMapEncodeIm2col") *fn = reinterpret_cast<void *>(&encodeIm2col);
    else *fn = reinterpret_cast<void *>(&encodeTiled);
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
// A TMA load writes through the async proxy: its bytes are writes of the
// mbarrier's agent, ordered after the issuing thread's accesses (and, for
// bytes the generic proxy wrote, after a fence.proxy.async of the writer),
// and visible to the threads that wait for the phase they complete.
template <class T> void bulkWrite(SharedPtr<T> dst, SharedPtr<unsigned long long> bar, const std::vector<std::pair<size_t, size_t>> &ranges,
                                  const char *verb) {
    auto issued = rc::self->snapshot();
    auto agent = tmaAgent(bar, dst.line);
    if (dst.blk != block) remoteAccess(dst.blk, agent.first, agent.second, dst.line);
    rc::Actor a{agent.first, agent.second, issued.get(), dst.line, true, verb, ""};
    rc::Where where{&dst.blk->name, dst.buffer, dst.base};
    long long bytes = 0;
    for (auto [offset, n] : ranges) {
        if (static_cast<long long>(offset) < 0 || offset + n > dst.blk->sharedBytes) {
            sharedAccess(dst.blk, static_cast<long long>(offset), n, dst.line, true, dst.buffer, dst.base);   // reports
            return;
        }
        dst.blk->shadow->write(offset, n, a, where);
        bytes += static_cast<long long>(n);
    }
    tmaComplete(bar, *issued, agent, bytes, dst.line);
}
// cp.async.bulk.tensor's shared-memory address: 128-byte aligned (PTX ISA),
// and a swizzled box on the swizzle's 8-row atom, where its pattern starts.
inline void checkTmaShared(long long off, const TensorMapView &v, unsigned line) {
    const long long align = v.swizzleBytes ? 8ll * v.swizzleBytes : 128;
    if (off % align != 0)
        rc::report("tma", line,
                   rc::run->who(rc::self->slot) + " issues a TMA box at shared offset " + std::to_string(off) + ", not a multiple of " + std::to_string(align) +
                       " bytes" + (v.swizzleBytes ? " (the swizzle's 8-row atom)" : ""),
                   0, "", true);
}
// A 16U4_ALIGN16B or 16U6_ALIGN16B box: for each 16 elements of a row
// (box[0] = 128), their packed bits (element j at bit j * bits of the group,
// as of the row; zero outside the tensor) into the first 8 or 12 of their 16
// bytes; the gap is not written, and the transactions are the packed bytes.
inline void forEachUnpackedGroup(const TensorMapView &v, const int *coords,
                                 const std::function<void(unsigned long long, const unsigned char (&)[12])> &f) {
    const unsigned bits = v.unpackBits, mask = (1u << bits) - 1;
    unsigned long long count = 1;
    for (unsigned d = 0; d < v.rank; ++d) count *= v.box[d];
    for (unsigned long long i = 0; i < count; i += 16) {
        unsigned char bytes[12] = {};
        for (unsigned e = 0; e < 16; ++e) {
            unsigned long long rest = i + e, offset = 0;
            bool inside = true;
            long long inner = 0;
            for (unsigned d = 0; d < v.rank; ++d) {
                long long at = coords[d] + static_cast<long long>(rest % v.box[d]);
                rest /= v.box[d];
                if (at < 0 || static_cast<unsigned long long>(at) >= v.sizes[d]) inside = false;
                else if (d == 0) inner = at;
                else offset += static_cast<unsigned long long>(at) * v.strides[d];
            }
            if (!inside) continue;
            const unsigned long long bit = static_cast<unsigned long long>(inner) * bits;
            const unsigned char *at = v.base + offset + bit / 8;
            unsigned word = at[0] | (bit % 8 + bits > 8 ? unsigned(at[1]) << 8 : 0u);   // (no byte past the element's own)
            unsigned value = (word >> (bit % 8)) & mask, to = e * bits;
            bytes[to / 8] |= static_cast<unsigned char>(value << (to % 8));
            if (to % 8 + bits > 8) bytes[to / 8 + 1] |= static_cast<unsigned char>(value >> (8 - to % 8));
        }
        f(i, bytes);
    }
}
template <class T, class... C> void tmaLoad(SharedPtr<T> dst, const CUtensorMap *map, SharedPtr<unsigned long long> bar, C... c) {
    TensorMapView v = view(map);
    checkTmaShared(dst.off, v, dst.line);
    int coords[] = {static_cast<int>(c)...};
    std::vector<std::pair<size_t, size_t>> ranges;
    if (v.unpackBits) {
        const size_t packed = 2 * v.unpackBits;   // the bytes of 16 elements
        forEachUnpackedGroup(v, coords, [&](unsigned long long slot, const unsigned char (&bytes)[12]) {
            unsigned long long at = swizzled(slot, v.swizzleBytes);   // (a 16-byte group stays whole under a swizzle)
            if (static_cast<size_t>(dst.off) + at + packed <= dst.blk->sharedBytes)
                std::memcpy(reinterpret_cast<unsigned char *>(dst.raw()) + at, bytes, packed);
            ranges.push_back({static_cast<size_t>(dst.off) + at, packed});
        });
        bulkWrite(dst, bar, ranges, "writes");
        return;
    }
    forEachBoxElement(v, coords, [&](unsigned long long at, const unsigned char *src) {
        unsigned char *out = reinterpret_cast<unsigned char *>(dst.raw()) + at;
        if (static_cast<size_t>(dst.off) + at + v.elementBytes <= dst.blk->sharedBytes) {
            if (src) std::memcpy(out, src, v.elementBytes);
            else std::memset(out, 0, v.elementBytes);
        }
        ranges.push_back({static_cast<size_t>(dst.off) + at, v.elementBytes});
    });
    bulkWrite(dst, bar, ranges, "writes");
}
// TMA's im2col mode: pixel p of the load is the traversal's p-th filter-window
// corner (w, h, n) -- from the instruction's coordinates, w stepping by its
// traversal stride up to the bounding box's upper W corner, then back to its
// lower W corner with h one stride on, then to the next image -- and its
// channels [c, c + channelsPerPixel) are read at (n, h + offH, w + offW):
// zeros outside the tensor. Pixel p fills row p of the box in shared memory
// (under the map's swizzle); the whole box completes on the mbarrier.
template <class T>
void tmaLoadIm2col(SharedPtr<T> dst, const CUtensorMap *map, SharedPtr<unsigned long long> bar, int c, int w, int h, int n, unsigned short offW,
                   unsigned short offH) {
    TensorMapView v = view(map);
    const cuuint64_t *words = map->opaque;
    if (!((words[1] >> 32) & 1)) {
        rc::report("tma", dst.line, "an im2col load through a tensor map not encoded in im2col mode", 0, "", true);
        return;
    }
    auto corner = [&](int shift) { return static_cast<long long>(static_cast<short>(static_cast<unsigned short>(words[14] >> shift))); };
    const long long wLo = corner(0), hLo = corner(16), wHi = static_cast<long long>(v.sizes[1]) - 1 + corner(32),
                    hHi = static_cast<long long>(v.sizes[2]) - 1 + corner(48);
    const long long strideW = static_cast<long long>(words[15] & 0xff), strideH = static_cast<long long>((words[15] >> 8) & 0xff);
    const unsigned channels = unsigned((words[15] >> 16) & 0xffff), pixels = unsigned(words[15] >> 32);
    if (w < wLo || w > wHi || h < hLo || h > hHi)
        rc::report("tma", dst.line,
                   "im2col load from filter corner (w " + std::to_string(w) + ", h " + std::to_string(h) + ") outside the bounding box [" + std::to_string(wLo) +
                       ", " + std::to_string(wHi) + "] x [" + std::to_string(hLo) + ", " + std::to_string(hHi) + "]",
                   0, "", true);
    std::vector<std::pair<size_t, size_t>> ranges;
    long long x = w, y = h, image = n;
    for (unsigned p = 0; p < pixels; ++p) {
        for (unsigned ch = 0; ch < channels; ++ch) {
            const long long at[4] = {c + static_cast<long long>(ch), x + offW, y + offH, image};
            bool inside = true;
            unsigned long long offset = 0;
            for (unsigned d = 0; d < 4; ++d) {
                if (at[d] < 0 || static_cast<unsigned long long>(at[d]) >= v.sizes[d]) inside = false;
                else offset += static_cast<unsigned long long>(at[d]) * v.strides[d];
            }
            unsigned long long b = swizzled((static_cast<unsigned long long>(p) * channels + ch) * v.elementBytes, v.swizzleBytes);
            unsigned char *out = reinterpret_cast<unsigned char *>(dst.raw()) + b;
            if (static_cast<size_t>(dst.off) + b + v.elementBytes <= dst.blk->sharedBytes) {
                if (inside) std::memcpy(out, v.base + offset, v.elementBytes);
                else std::memset(out, 0, v.elementBytes);
            }
            ranges.push_back({static_cast<size_t>(dst.off) + b, v.elementBytes});
        }
        x += strideW;
        if (x > wHi) {
            x = wLo;
            y += strideH;
            if (y > hHi) {
                y = hLo;
                ++image;
            }
        }
    }
    bulkWrite(dst, bar, ranges, "writes");
}
// Multicast: the same box into every block of the cluster in `mask`, at the
// same offsets, completing on each block's barrier.
template <class T, class... C> void tmaLoadMulticast(SharedPtr<T> dst, const CUtensorMap *map, SharedPtr<unsigned long long> bar, int mask, C... c) {
    for (int r = 0; r < 16; ++r)
        if ((mask >> r) & 1) tmaLoad(remote(dst, r), map, remote(bar, r), c...);
}
// A TMA or bulk store reads shared memory through the async proxy from its
// issue until cp.async.bulk.wait_group.read: checked at the issue (the
// generic writes it reads must be fenced and ordered before it), and again
// at the wait, where the reads are recorded (a write before the wait races
// with them).
inline void bulkRead(BulkRead r) {
    rc::Actor a{rc::self->slot, rc::self->now(), r.issued.get(), r.line, true, "reads", "the TMA/bulk store of "};
    rc::Where where{&r.blk->name, r.buffer, r.base};
    for (auto [offset, n] : r.ranges) {
        if (static_cast<long long>(offset) < 0 || offset + n > r.blk->sharedBytes) {
            sharedAccess(r.blk, static_cast<long long>(offset), n, r.line, false, r.buffer, r.base);   // reports
            return;
        }
        r.blk->shadow->read(offset, n, a, where, false);
    }
    pendingBulk.push_back(std::move(r));
    rc::self->tick();   // this thread's later writes are not ordered before the store
}
// The box at `coords` of the tensor map written from `src` (a TMA store or
// reduction): the bulk read of the tile is recorded, then `write(dst, from,
// bytes)` runs for each element inside the tensor.
template <class T, class Write> void tmaWriteBox(const CUtensorMap *map, SharedPtr<T> src, const int *coords, Write write) {
    TensorMapView v = view(map);
    checkTmaShared(src.off, v, src.line);
    BulkRead r{src.blk, {}, rc::self->snapshot(), src.line, src.buffer, src.base};
    forEachBoxElement(v, coords, [&](unsigned long long at, const unsigned char *dst) {
        if (dst) r.ranges.push_back({static_cast<size_t>(src.off) + at, v.elementBytes});
    });
    bulkRead(r);
    forEachBoxElement(v, coords, [&](unsigned long long at, const unsigned char *dst) {
        if (dst) write(const_cast<unsigned char *>(dst), reinterpret_cast<const unsigned char *>(src.raw()) + at, v.elementBytes);
    });
}
template <class T, class... C> void tmaStore(const CUtensorMap *map, SharedPtr<T> src, C... c) {
    int coords[] = {static_cast<int>(c)...};
    tmaWriteBox(map, src, coords, [](unsigned char *dst, const unsigned char *from, size_t bytes) { std::memcpy(dst, from, bytes); });
}
} // namespace emu
template <class T> void tilet_bulk_load(emu::SharedPtr<T> dst, const void *src, int bytes, emu::SharedPtr<unsigned long long> bar) {
    if (static_cast<size_t>(dst.off) + static_cast<size_t>(bytes) <= dst.blk->sharedBytes) std::memcpy(static_cast<void *>(dst.raw()), src, static_cast<size_t>(bytes));
    emu::bulkWrite(dst, bar, {{static_cast<size_t>(dst.off), static_cast<size_t>(bytes)}}, "writes");
}
template <class T> void tilet_bulk_store(void *dst, emu::SharedPtr<T> src, int bytes) {
    emu::bulkRead({src.blk, {{static_cast<size_t>(src.off), static_cast<size_t>(bytes)}}, emu::rc::self->snapshot(), src.line, src.buffer, src.base});
    std::memcpy(dst, static_cast<const void *>(src.raw()), static_cast<size_t>(bytes));
}
// cp.async.bulk.wait_group.read 0: the stores' reads are done.
inline void tilet_tma_store_wait() {
    for (emu::BulkRead &r : emu::pendingBulk) {
        emu::rc::Actor a{emu::rc::self->slot, emu::rc::self->now(), r.issued.get(), r.line, true, "reads", "the TMA/bulk store of "};
        emu::rc::Where where{&r.blk->name, r.buffer, r.base};
        for (auto [offset, n] : r.ranges) r.blk->shadow->read(offset, n, a, where);
    }
    emu::pendingBulk.clear();
}
// ---- wgmma (PTX ISA: "Asynchronous Warpgroup Level Matrix Multiply-Accumulate",
// "Shared Memory Matrix Layout", "Matrix Descriptor Format"). The emulated
// descriptor keeps the operand's offset from the block's shared memory and
// the byte offsets; the MMA runs at once. Operand element (mn, k) lies at
//   K-major:  start + (mn / 8) * SBO + (mn % 8) * W + k * size
//   MN-major: start + (mn / (W / size)) * LBO + (k / 8) * SBO + (k % 8) * W + (mn % (W / size)) * size
// before the swizzle of width W (16-byte chunk XOR the 128-byte line within
// each W-byte span) is applied to the shared-memory offset.
namespace emu {
template <class T> unsigned long long wgmmaDesc(SharedPtr<T> smem, unsigned leadingBytes, unsigned strideBytes, unsigned mode) {
    unsigned long long offset = static_cast<unsigned long long>(smem.off);
    return offset | (static_cast<unsigned long long>(leadingBytes >> 4) << 32) | (static_cast<unsigned long long>(strideBytes >> 4) << 46) |
           (static_cast<unsigned long long>(mode) << 60);
}
inline unsigned long long wgmmaOffset(unsigned long long desc, bool mnMajor, int mn, int k, unsigned long long size) {
    unsigned long long start = desc & 0xffffffffull, lbo = ((desc >> 32) & 0x3fff) << 4, sbo = ((desc >> 46) & 0x3fff) << 4;
    unsigned mode = unsigned(desc >> 60) & 3;
    unsigned long long width = mode == 1 ? 128 : mode == 2 ? 64 : 32, segment = width / size;
    unsigned long long at = mnMajor ? start + (mn / segment) * lbo + (k / 8) * sbo + (k % 8) * width + (mn % segment) * size
                                    : start + (mn / 8) * sbo + (mn % 8) * width + k * size;
    return at ^ (((at >> 7) & (width / 16 - 1)) << 4);
}
// In the shared memory of block `blk` (a tcgen05.mma.cta_group::2 reads the peer block's too).
template <class T> double wgmmaOperand(unsigned long long desc, bool mnMajor, int mn, int k, const Block *blk = block) {
    T value;
    std::memcpy(&value, blk->shared.data() + wgmmaOffset(desc, mnMajor, mn, k, sizeof(T)), sizeof(T));
    return toDouble(value);
}
// The shared-memory operands of a wgmma are read through the async proxy
// by the warp group, from the issue until the wgmma.wait_group that retires
// them. The first thread of the group checks them, when the group is
// committed, against the meet of the group's clocks at the issue (every
// thread's earlier writes must be ordered before, and fenced), and at the
// wait again, recording them as its reads (a write after the issue races).
inline void wgmmaOperands(const WgmmaRead &op, bool record) {
    rc::Actor a{rc::self->slot, rc::self->now(), op.issued.get(), op.line, true, "reads", "the wgmma of the warp group of "};
    auto each = [&](unsigned long long desc, bool mnMajor, int rows, unsigned size) {
        View view = viewAt(static_cast<long long>(desc & 0xffffffffull));
        rc::Where where{&block->name, view.second, view.first};
        for (int mn = 0; mn < rows; ++mn)
            for (int k = 0; k < op.k; ++k) {
                unsigned long long at = wgmmaOffset(desc, mnMajor, mn, k, size);
                if (at + size > block->sharedBytes) {
                    sharedAccess(block, static_cast<long long>(at), size, op.line, false, view.second, view.first);   // reports
                    return;
                }
                block->shadow->read(at, size, a, where, record);
            }
    };
    if (op.aShared) each(op.descA, op.transA, 64, op.sizeA);
    each(op.descB, op.transB, op.n, op.sizeB);
}
// A wgmma issued: the first thread of the warp group keeps its operands,
// every thread its clocks, until the commit checks them.
inline void wgmmaIssue(const WgmmaRead &op) {
    if (tid.x % 128 == 0) openWgmmaReads.push_back(op);
    if (openWgmmaProgress.empty()) openWgmmaProgress = rc::self->progress;
    openWgmmaClocks.push_back(rc::self->snapshot());
}
// wgmma is asynchronous: the MMAs of a group read shared memory and write
// the accumulators at some point before the wait_group that retires the
// group. The group is the warp group's (one collective operation), so the
// model runs all 128 threads' MMAs at the first wait_group of any of them
// that retires it: a stage released (and refilled) before its MMAs are
// waited for, or accumulators read too early, give wrong results, and a
// stage one thread per warp group releases after its wait is read in full.
template <int M, int N, int K, class TA, class TB, int TransA, int TransB, class D>
void wgmma(D *d, unsigned long long a, unsigned long long b, int scaleD, unsigned line = __builtin_LINE()) {
    wgmmaIssue(WgmmaRead{a, b, true, TransA != 0, TransB != 0, N, K, sizeof(TA), sizeof(TB), nullptr, line});
    unsigned warp = (tid.x / 32) % 4, lane = tid.x % 32;   // the issuing thread's: another thread of the group may run the MMA
    openWgmma.push_back([=] {
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
void wgmmaRS(D *d, const void *aRegs, unsigned long long b, int scaleD, unsigned line = __builtin_LINE()) {
    static_assert(K == 16 && TransA == 0, "emu: wgmma from registers models 16-bit k16 operands");
    const TA *mine = static_cast<const TA *>(aRegs);
    for (int e = 0; e < 8; ++e) block->rsSlots[tid.x][size_t(e)] = toDouble(mine[e]);
    RegisterOperand held{aRegs, {}, 8 * sizeof(TA), line};
    static_assert(8 * sizeof(TA) <= sizeof(held.atIssue), "emu: a wgmma A fragment is 8 elements of at most 4 bytes");
    std::memcpy(held.atIssue.data(), aRegs, held.bytes);
    openRegisterOperands.push_back(held);
    rc::Barrier &group = *block->groups.at(tid.x / 128);
    group.arriveAndWait(line);
    std::array<double, 64 * 16> a{};
    unsigned first = tid.x / 128 * 128;
    for (unsigned t = 0; t < 128; ++t) {
        unsigned warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
        for (int e = 0; e < 8; ++e) {
            unsigned row = 16 * warp + g + 8 * ((e / 2) % 2), k = 2 * q + e % 2 + 8 * (e / 4);
            a[row * 16 + k] = block->rsSlots[first + t][size_t(e)];
        }
    }
    group.arriveAndWait(line);
    wgmmaIssue(WgmmaRead{0, b, false, false, TransB != 0, N, K, sizeof(TA), sizeof(TB), nullptr, line});
    unsigned warp = (tid.x / 32) % 4, lane = tid.x % 32;
    openWgmma.push_back([=] {
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

// wgmma.commit_group is warp-group wide: the group meets, and its first
// thread checks the operands of each wgmma of the group against the meet
// of the threads' clocks at that wgmma's issue.
inline void wgmmaCommit(unsigned line) {
    unsigned first = tid.x / 128 * 128;
    auto &clocks = block->groupClocks[wgmmaCommits++ % 2];
    clocks[tid.x] = std::move(openWgmmaClocks);
    openWgmmaClocks.clear();
    block->groups.at(tid.x / 128)->arriveAndWait(line);
    if (tid.x != first) return;
    std::shared_ptr<const rc::Clocks> meet;
    for (size_t i = 0; i < openWgmmaReads.size(); ++i) {
        // Issues in one epoch share their clocks: compute the meet once for them.
        bool same = i > 0;
        for (unsigned t = first; t < first + 128 && same; ++t) same = clocks[t].at(i) == clocks[t].at(i - 1);
        if (!same) {
            auto m = std::make_shared<rc::Clocks>(*clocks[first].at(i));
            for (unsigned t = first + 1; t < first + 128; ++t) {
                const rc::Clocks &c = *clocks[t].at(i);
                for (size_t j = 0; j < m->size(); ++j) (*m)[j] = std::min((*m)[j], c[j]);
            }
            meet = m;
        }
        openWgmmaReads[i].issued = meet;
        wgmmaOperands(openWgmmaReads[i], false);
    }
}

// At a thread's exit: asynchronous operations still in flight are reported
// (the block's shared memory is released when it exits), and the thread's
// clocks join its block's exit, after which no other block may touch the
// block's shared memory.
inline void threadExit() {
    rc::Run &r = *rc::run;
    // (Committed groups without copies, the tail of a pipeline, are harmless.)
    for (auto &group : committedGroups)
        for (const AsyncCopy &c : group) rc::report("unwaited", c.dst.line, r.who(rc::self->slot) + " exits with this cp.async not retired by a cp.async.wait_group");
    for (const AsyncCopy &c : openGroup) rc::report("unwaited", c.dst.line, r.who(rc::self->slot) + " exits with this cp.async not committed and waited for");
    for (auto &group : committedWgmmaReads)
        for (const WgmmaRead &op : group) rc::report("unwaited", op.line, r.who(rc::self->slot) + "'s warp group exits with this wgmma not retired by a wgmma.wait_group");
    // (Its MMAs write this thread's registers, which are gone: nobody runs them now.)
    for (auto &group : committedWgmma) {
        std::lock_guard<std::mutex> lock(group->mutex);
        group->retired = true;
    }
    committedWgmma.clear();
    for (const WgmmaRead &op : openWgmmaReads) rc::report("unwaited", op.line, r.who(rc::self->slot) + "'s warp group exits with this wgmma not committed and waited for");
    for (const BulkRead &b : pendingBulk)
        rc::report("unwaited", b.line,
                   r.who(rc::self->slot) + " exits while this TMA/bulk store may still read shared memory (no cp.async.bulk.wait_group.read after it)");
    {
        std::lock_guard<std::mutex> lock(block->remoteMutex);
        rc::joinInto(block->exitClocks, rc::self->vc);
        if (++block->exited == r.threadsPerBlock)
            for (auto &[slot, access] : block->remoteAccesses)
                if (block->exitClocks[slot] < access.clock)
                    rc::report("dsmem", access.line,
                               r.who(slot) + " accesses the shared memory of block " + block->name +
                                   ", but nothing orders the access before that block exits (a cluster barrier before the exit)");
    }
    r.exiting(*rc::self);
}
} // namespace emu
inline void tilet_wgmma_fence() {}
template <class T, int N> void tilet_pin_registers(T (&)[N]) {}   // (an empty asm for the compiler on the GPU)
inline void tilet_wgmma_commit(unsigned line = __builtin_LINE()) {
    {
        // Joined before the commit's meeting, so the group is complete when any thread waits.
        using emu::block;
        std::shared_ptr<emu::Block::WgmmaGroup> group;
        {
            std::lock_guard<std::mutex> lock(block->wgmmaMutex);
            auto key = std::make_pair(emu::tid.x / 128, emu::wgmmaCommits);
            auto &slot = block->wgmmaGroups[key];
            if (!slot) slot = std::make_shared<emu::Block::WgmmaGroup>();
            group = slot;
            if (++group->joined == 128) block->wgmmaGroups.erase(key);
        }
        std::lock_guard<std::mutex> lock(group->mutex);
        for (auto &mma : emu::openWgmma) group->mmas.push_back(std::move(mma));
        if (group->progress.empty()) group->progress.assign(emu::rc::run->slots, 0);
        if (!emu::openWgmmaProgress.empty()) emu::rc::joinInto(group->progress, emu::openWgmmaProgress);
        emu::openWgmmaProgress.clear();
        emu::committedWgmma.push_back(std::move(group));
    }
    emu::wgmmaCommit(line);
    emu::openWgmma.clear();
    emu::committedWgmmaReads.push_back(std::move(emu::openWgmmaReads));
    emu::openWgmmaReads.clear();
    emu::committedRegisterOperands.push_back(std::move(emu::openRegisterOperands));
    emu::openRegisterOperands.clear();
}
template <int N> void tilet_wgmma_wait() {
    while (emu::committedWgmma.size() > size_t(N)) {
        // The group is the warp group's: the first of its threads to retire it
        // runs every thread's MMAs, and every thread that retires it knows
        // that each thread of the group had issued it.
        {
            emu::Block::WgmmaGroup &group = *emu::committedWgmma.front();
            std::lock_guard<std::mutex> lock(group.mutex);
            if (!group.retired)
                for (auto &mma : group.mmas) mma();
            group.retired = true;
            emu::rc::self->acquireProgress(group.progress);
        }
        emu::committedWgmma.erase(emu::committedWgmma.begin());
        for (const emu::WgmmaRead &op : emu::committedWgmmaReads.front()) emu::wgmmaOperands(op, true);
        emu::committedWgmmaReads.erase(emu::committedWgmmaReads.begin());
        for (const emu::RegisterOperand &op : emu::committedRegisterOperands.front())
            if (std::memcmp(op.registers, op.atIssue.data(), op.bytes) != 0)
                emu::rc::report("race", op.line,
                                emu::rc::run->who(emu::rc::self->slot) +
                                    " changed the registers of this wgmma's A operand before the wgmma.wait_group that retires it (the PTX ISA "
                                    "leaves that undefined: the tensor cores may still read them)");
        emu::committedRegisterOperands.erase(emu::committedRegisterOperands.begin());
    }
}
// fence.proxy.async: orders this thread's earlier generic accesses before
// its later async-proxy ones (and the operations those are ordered before).
// ---- tcgen05 and tensor memory (PTX ISA, "TensorCore 5th Generation Family
// Instructions"). Tensor memory is a block's 128 lanes x 512 columns of 32
// bits; an address is lane << 16 | column. tcgen05.mma is issued by one
// thread and runs when that thread commits it, before the commit's mbarrier
// arrival. Its shared-memory reads are the barrier's agent's (as a TMA
// load's writes are): ordered after the issue, and before only what waits for
// the barrier's phase -- so a stage released before that wait races with the
// next load into it.
namespace emu {
constexpr unsigned kTmemLanes = 128, kTmemColumns = 512;
[[noreturn]] inline void tmemFault(unsigned line, const std::string &what) {
    rc::report("tmem", line, rc::run->who(rc::self->slot) + " " + what, 0, "", true);
    std::abort();
}
// A cell of block `blk`'s tensor memory (a tcgen05.mma.cta_group::2 reaches the peer block's).
inline uint32_t &tmemCell(Block *blk, unsigned lane, unsigned column, unsigned line) {
    if (!blk->tmemAllocated)
        tmemFault(line, blk == block ? std::string("accesses tensor memory the block has not allocated (tcgen05.alloc)")
                                     : "accesses the tensor memory of block " + blk->name + ", which it has not allocated (tcgen05.alloc)");
    if (lane >= kTmemLanes || column >= blk->tmemColumns)
        tmemFault(line, "accesses tensor-memory lane " + std::to_string(lane) + ", column " + std::to_string(column) + " outside the " +
                            std::to_string(blk->tmemColumns) + " allocated columns" + (blk == block ? "" : " of block " + blk->name));
    return blk->tmem[size_t(lane) * kTmemColumns + column];
}
inline uint32_t &tmemCell(unsigned lane, unsigned column, unsigned line) { return tmemCell(block, lane, column, line); }
// The race detector's view of a tensor-memory cell: tcgen05.ld/st by a
// warp's threads, tcgen05.mma by the agent of the barrier its commit arrives
// on. Tensor memory has no proxies (no fence.proxy.async orders it): an
// MMA's accesses are recorded as the generic ones of that agent, ordered by
// the clocks its commit and the waits carry.
inline void tmemRecord(Block *blk, unsigned lane, unsigned column, bool write, const rc::Actor &a) {
    rc::Where where{&blk->name, "tensor memory", 0, true};
    size_t cell = size_t(lane) * kTmemColumns + column;
    rc::Actor generic = a;
    generic.async = false;
    if (write) blk->tmemShadow->write(cell, 1, generic, where);
    else blk->tmemShadow->read(cell, 1, generic, where);
}
inline void tmemRecord(unsigned lane, unsigned column, bool write, const rc::Actor &a) { tmemRecord(block, lane, column, write, a); }
// PTX ISA (tcgen05.alloc, tcgen05.mma, tcgen05.commit): "All tcgen05
// instructions within a kernel must specify the same value for the
// .cta_group qualifier." Checked per cluster: the first one sets it.
inline void tcgen05Group(unsigned group, unsigned line, const char *instruction) {
    unsigned first = 0;
    if (!cluster->ctaGroup.compare_exchange_strong(first, group) && first != group)
        tmemFault(line, std::string("issues ") + instruction + ".cta_group::" + std::to_string(group) + " where another tcgen05 instruction of the kernel used .cta_group::" +
                            std::to_string(first) + " (every tcgen05 instruction of a kernel has the same .cta_group)");
}
// The peer of the calling thread's block (PTX ISA, "CTA Pair", "Peer CTA":
// the blocks of ranks 2p and 2p + 1 of the cluster form a pair).
inline Block *tcgen05Peer(unsigned line, const char *instruction) {
    unsigned peer = clusterRank ^ 1u;
    if (peer >= cluster->blocks.size())
        tmemFault(line, std::string("issues ") + instruction + ".cta_group::2 in block " + block->name + ", which has no peer block: the cluster of " +
                            std::to_string(cluster->blocks.size()) + " is not made of CTA pairs");
    return cluster->blocks[peer];
}
// A tcgen05 descriptor, kept as the wgmma model's (its swizzle codes 2, 4, 6
// are wgmma's 1, 2, 3).
template <class T> unsigned long long tcgen05Desc(SharedPtr<T> smem, unsigned leading, unsigned stride, unsigned swizzle) {
    unsigned mode = swizzle == 2 ? 1 : swizzle == 4 ? 2 : swizzle == 6 ? 3 : 0;
    return wgmmaDesc(smem, leading, stride, mode);
}
// The element (mn, k) of an operand in the format `fmt` of the kind; `size`
// the bytes it is read in. kind::mxf4nvf4 reads e2m1 packed, two to a byte
// (element k in the low nibble of byte k / 2 when k is even), K-major.
enum class Tcgen05Kind { F16, Tf32, F8f6f4, I8, Mxf4nvf4 };
// kind::f8f6f4's operand formats in 8-bit slots (the instruction descriptor's
// codes: e2m3 3, e3m2 4, e2m1 5): their bits; 0 for e4m3 and e5m2.
inline unsigned tcgen05SlotBits(unsigned fmt) { return fmt == 5 ? 4 : fmt == 3 || fmt == 4 ? 6 : 0; }
inline int tcgen05PerByte(Tcgen05Kind kind) { return kind == Tcgen05Kind::Mxf4nvf4 ? 2 : 1; }
// `blk`: the block whose shared memory holds the operand.
inline double tcgen05Operand(Tcgen05Kind kind, unsigned fmt, unsigned long long desc, bool mnMajor, int mn, int k, unsigned &size, const Block *blk = block) {
    switch (kind) {
    case Tcgen05Kind::Mxf4nvf4: {
        size = 1;
        if (fmt != 1 || mnMajor) {
            std::fprintf(stderr, "emu: tcgen05 kind::mxf4nvf4 models K-major e2m1 operands only\n");
            std::abort();
        }
        unsigned char byte = static_cast<unsigned char>(wgmmaOperand<unsigned char>(desc, false, mn, k / 2, blk));
        return operandElement<E2M1>(&byte, k % 2);
    }
    case Tcgen05Kind::F16:
        size = 2;
        return fmt == 1 ? wgmmaOperand<__nv_bfloat16>(desc, mnMajor, mn, k, blk) : wgmmaOperand<__half>(desc, mnMajor, mn, k, blk);
    case Tcgen05Kind::Tf32: size = 4; return wgmmaOperand<float>(desc, mnMajor, mn, k, blk);
    case Tcgen05Kind::F8f6f4:
        size = 1;
        if (unsigned bits = tcgen05SlotBits(fmt)) {
            // e2m1, e2m3 and e3m2 in 8-bit slots (PTX ISA: the f8f6f4 kinds read
            // 4- and 6-bit operands so): the 16 slots of a group hold its
            // elements packed in their first 8 or 12 bytes, slot j at bit j * bits.
            if (mnMajor) {
                std::fprintf(stderr, "emu: tcgen05 kind::f8f6f4 models K-major 4- and 6-bit operands only\n");
                std::abort();
            }
            const int group = k - k % 16, bit = k % 16 * int(bits);
            unsigned word = static_cast<unsigned char>(wgmmaOperand<unsigned char>(desc, false, mn, group + bit / 8, blk));
            if (bit % 8 + int(bits) > 8) word |= unsigned(static_cast<unsigned char>(wgmmaOperand<unsigned char>(desc, false, mn, group + bit / 8 + 1, blk))) << 8;
            unsigned value = (word >> (bit % 8)) & ((1u << bits) - 1);
            return fmt == 5 ? operandElement<E2M1>(&value, 0) : fmt == 3 ? e2m3(value) : e3m2(value);
        }
        if (fmt > 1) {
            std::fprintf(stderr, "emu: tcgen05 kind::f8f6f4 models e4m3, e5m2, e2m3, e3m2 and e2m1 operands only\n");
            std::abort();
        }
        return fmt == 1 ? wgmmaOperand<__nv_fp8_e5m2>(desc, mnMajor, mn, k, blk) : wgmmaOperand<__nv_fp8_e4m3>(desc, mnMajor, mn, k, blk);
    case Tcgen05Kind::I8:
        size = 1;
        return fmt == 1 ? wgmmaOperand<signed char>(desc, mnMajor, mn, k, blk) : wgmmaOperand<unsigned char>(desc, mnMajor, mn, k, blk);
    }
    return 0;
}
// The element (row, k) of an A operand in tensor memory (the TS form, M =
// 128): row r in lane r, K packed along the 32-bit columns, element k in
// column k / (4 / size), its bytes (k % (4 / size)) * size on.
template <class T> double tmemOperand(unsigned address, int row, int k, unsigned line) {
    constexpr unsigned perColumn = 4 / sizeof(T);
    uint32_t word = tmemCell((address >> 16) + unsigned(row), (address & 0xffff) + unsigned(k) / perColumn, line);
    T value;
    std::memcpy(&value, reinterpret_cast<const unsigned char *>(&word) + (unsigned(k) % perColumn) * sizeof(T), sizeof(T));
    return toDouble(value);
}
inline double tcgen05TmemOperand(Tcgen05Kind kind, unsigned fmt, unsigned address, int row, int k, unsigned line) {
    switch (kind) {
    case Tcgen05Kind::F16: return fmt == 1 ? tmemOperand<__nv_bfloat16>(address, row, k, line) : tmemOperand<__half>(address, row, k, line);
    case Tcgen05Kind::Tf32: return tmemOperand<float>(address, row, k, line);
    case Tcgen05Kind::F8f6f4:
        if (fmt > 1) tmemFault(line, "issues a tcgen05 kind::f8f6f4 with an A format the model does not cover (e4m3 and e5m2 only)");
        return fmt == 1 ? tmemOperand<__nv_fp8_e5m2>(address, row, k, line) : tmemOperand<__nv_fp8_e4m3>(address, row, k, line);
    case Tcgen05Kind::I8: return fmt == 1 ? tmemOperand<signed char>(address, row, k, line) : tmemOperand<unsigned char>(address, row, k, line);
    case Tcgen05Kind::Mxf4nvf4: tmemFault(line, "issues a block-scaled tcgen05.mma with A in tensor memory, which the model does not cover");
    }
    return 0;
}
// The blocks a tcgen05.mma reads and writes: with .cta_group::1 the issuing
// block alone; with .cta_group::2 (PTX ISA, "CTA Pair"; "Data path layout
// organization", Layout A, M = 256) the pair's even block for rows 0-127 of
// A and D and columns 0 .. N/2 - 1 of B, the odd block for rows 128-255 and
// columns N/2 .. N - 1. Each half is at the same shared-memory offsets (the
// descriptors) and tensor-memory address in its block, described as the
// operands of a 1-CTA MMA of M/2 rows and N/2 columns.
struct Tcgen05Blocks {
    Block *half[2];
    int ctas;   // 1 or 2
};
// The instruction descriptor: formats, majors, N >> 3 at bit 17, M >> 4 at bit 24.
// With aInTmem (the TS form), `a` is A's tensor-memory address, else its descriptor.
// Block-scaled kinds (`scaled`): D is f32; bits 4-5 and 29-30 of idesc name
// the first byte of B's and A's factor words the MMA reads (its scale-factor
// ids; byte id + k / Vec for element k: scale_vec::1X reads one, 4X all four)
// and bit 23 the factors' type (1: ue8m0, 2^(b - 127); 0: ue4m3); row m's
// word is in lane m, column m / 32 from sfa (column n's from sfb, lane
// n % 128), as tcgen05.cp 32x128b.warpx4 leaves them. With .cta_group::2
// each block's half of D is scaled by the factors in that block's tensor
// memory: of its own rows of A, and of all N columns of B (TileLang's
// tcgen05_gemm_blockscaled with use_2cta fills both blocks alike).
template <Tcgen05Kind Kind, int K, int Vec = K>
void tcgen05MmaOn(Tcgen05Blocks on, unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line, bool aInTmem,
                  bool scaled, unsigned sfa, unsigned sfb) {
    unsigned cFmt = scaled ? 1 : (idesc >> 4) & 3, aFmt = (idesc >> 7) & 7, bFmt = (idesc >> 10) & 7;
    unsigned sfIdA = (idesc >> 29) & 3, sfIdB = (idesc >> 4) & 3;
    bool ue8m0Factors = (idesc >> 23) & 1;
    // PTX ISA: the id of scale_vec::1X is 0-3, of 2X 0 or 2, of 4X 0.
    if (scaled && (sfIdA % (K / Vec) != 0 || sfIdB % (K / Vec) != 0))
        tmemFault(line, "issues a block-scaled tcgen05.mma with scale-factor ids " + std::to_string(sfIdA) + " and " + std::to_string(sfIdB) +
                            "; with " + std::to_string(K / Vec) + " factors a k-step the id is a multiple of " + std::to_string(K / Vec));
    bool aMn = (idesc >> 15) & 1, bMn = (idesc >> 16) & 1;
    int n = int((idesc >> 17) & 0x3f) << 3, m = int((idesc >> 24) & 0x1f) << 4;
    if (on.ctas == 1 && m != 128 && m != 64) tmemFault(line, "issues a tcgen05.mma with M = " + std::to_string(m) + "; the model covers M = 128 and 64");
    if (on.ctas == 2) {
        // PTX ISA, "Matrix Shape": .cta_group::2 has M = 128 or 256 and N from
        // 16 to 256 in steps of 16 (kind::i8: from 32 in steps of 32).
        if (m != 256)
            tmemFault(line, "issues a tcgen05.mma.cta_group::2 with M = " + std::to_string(m) + "; the model covers M = 256 (128 rows in each block of the pair)");
        int step = Kind == Tcgen05Kind::I8 ? 32 : 16;
        if (n < step || n > 256 || n % step)
            tmemFault(line, "issues a tcgen05.mma.cta_group::2 with N = " + std::to_string(n) + "; with .cta_group::2, N is a multiple of " + std::to_string(step) +
                                " from " + std::to_string(step) + " to 256");
    }
    if (aInTmem && (m != 128 || aMn)) tmemFault(line, "issues a TS-form tcgen05.mma with M = " + std::to_string(m) + (aMn ? " and A MN-major" : "") +
                                                      "; the model covers M = 128, A K-major");
    // Rows of A and D, columns of B, in each block.
    const int rows = m / on.ctas, cols = n / on.ctas;
    // Where row r of D lives (PTX ISA, "Data path layout organization"):
    // 128 rows in the block (layouts D and A) lane r; M = 64 (layout F) lane 32 * (r / 16) + r % 16.
    auto laneOf = [rows](int row) { return rows == 128 ? unsigned(row) : unsigned(32 * (row / 16) + row % 16); };
    openTcgen05.push_back([=](const rc::Actor &actor) {
        // The peer block's shared and tensor memory are distributed shared memory to the issuing thread (remoteAccess).
        for (int h = 0; h < on.ctas; ++h)
            if (on.half[h] != block) remoteAccess(on.half[h], actor.slot, actor.clock, actor.line);
        auto check = [&](Block *blk, unsigned long long desc, bool mn, int count, unsigned fmt) {
            View view = viewAt(static_cast<long long>(desc & 0xffffffffull));
            rc::Where where{&blk->name, view.second, view.first};
            unsigned size = 0;
            for (int r = 0; r < count; ++r)
                for (int k = 0; k < K / tcgen05PerByte(Kind); ++k) {
                    if (Kind == Tcgen05Kind::F8f6f4 && tcgen05SlotBits(fmt) && k % 16 >= 2 * int(tcgen05SlotBits(fmt))) continue;   // the gap holds no data
                    tcgen05Operand(Kind, fmt, 0, false, 0, 0, size, blk);
                    unsigned long long at = wgmmaOffset(desc, mn, r, k, size);
                    if (at + size > blk->sharedBytes) {
                        sharedAccess(blk, static_cast<long long>(at), size, line, false, view.second, view.first);   // reports
                        return;
                    }
                    blk->shadow->read(at, size, actor, where);
                }
        };
        if (aInTmem) {
            // A's columns are read by the MMA as well (tcgen05.st before it must be ordered).
            unsigned size = 0;
            tcgen05Operand(Kind, aFmt, 0, false, 0, 0, size);
            for (int r = 0; r < m; ++r)
                for (int k = 0; k < K; k += int(4 / size)) tmemRecord((unsigned(a) >> 16) + unsigned(r), (unsigned(a) & 0xffff) + unsigned(k) / (4 / size), false, actor);
        } else {
            for (int h = 0; h < on.ctas; ++h) check(on.half[h], a, aMn, rows, aFmt);
        }
        for (int h = 0; h < on.ctas; ++h) check(on.half[h], b, bMn, cols, bFmt);
        // K / Vec factors per row of A and column of B for the MMA's K: bytes id .. of its word.
        auto factors = [&](Block *blk, unsigned words, unsigned lane, unsigned column, unsigned id) {
            tmemRecord(blk, (words >> 16) + lane, (words & 0xffff) + column, false, actor);
            uint32_t word = tmemCell(blk, (words >> 16) + lane, (words & 0xffff) + column, line);
            std::vector<double> out;
            for (unsigned j = 0; j < unsigned(K / Vec); ++j) {
                unsigned byte = (word >> (8 * (id + j))) & 0xff;
                out.push_back(ue8m0Factors ? ue8m0(byte) : ue4m3(byte));
            }
            return out;
        };
        // fa by row of the MMA, fb by (D's block, column).
        std::vector<std::vector<double>> fa(size_t(m), std::vector<double>(size_t(K / Vec), 1.0));
        std::vector<std::vector<std::vector<double>>> fb(size_t(on.ctas), std::vector<std::vector<double>>(size_t(n), fa[0]));
        if (scaled) {
            for (int row = 0; row < m; ++row) fa[size_t(row)] = factors(on.half[row / rows], sfa, unsigned(row % rows), unsigned(row % rows) / 32, sfIdA);
            for (int h = 0; h < on.ctas; ++h)
                for (int col = 0; col < n; ++col) fb[size_t(h)][size_t(col)] = factors(on.half[h], sfb, unsigned(col) % 128, unsigned(col) / 32, sfIdB);
        }
        for (int row = 0; row < m; ++row) {
            Block *rowBlock = on.half[row / rows];   // A's row and D's row
            int r = row % rows;
            for (int col = 0; col < n; ++col) {
                Block *colBlock = on.half[col / cols];   // B's column
                double sum = 0;
                unsigned size = 0;
                for (int k = 0; k < K; ++k) {
                    double x = aInTmem ? tcgen05TmemOperand(Kind, aFmt, unsigned(a), row, k, line) : tcgen05Operand(Kind, aFmt, a, aMn, r, k, size, rowBlock);
                    sum += x * tcgen05Operand(Kind, bFmt, b, bMn, col % cols, k, size, colBlock) * fa[size_t(row)][size_t(k / Vec)] *
                           fb[size_t(row / rows)][size_t(col)][size_t(k / Vec)];
                }
                unsigned lane = (d >> 16) + laneOf(r), column = (d & 0xffff) + unsigned(col);
                uint32_t &cell = tmemCell(rowBlock, lane, column, line);
                if (enable) tmemRecord(rowBlock, lane, column, false, actor);
                rc::Actor writer = actor;
                writer.verb = "writes";
                tmemRecord(rowBlock, lane, column, true, writer);
                if (cFmt == 2) {   // s32
                    int32_t acc = 0;
                    if (enable) std::memcpy(&acc, &cell, 4);
                    acc += int32_t(sum);
                    std::memcpy(&cell, &acc, 4);
                } else if (cFmt == 1) {   // f32
                    float acc = 0;
                    if (enable) std::memcpy(&acc, &cell, 4);
                    acc = float(double(acc) + sum);
                    std::memcpy(&cell, &acc, 4);
                } else {
                    tmemFault(line, "issues a tcgen05.mma with f16 accumulators, which the model does not cover");
                }
            }
        }
    });
}
// tcgen05.mma.cta_group::1: the issuing block's shared and tensor memory.
template <Tcgen05Kind Kind, int K, int Vec = K>
void tcgen05Mma(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line, bool aInTmem = false,
                bool scaled = false, unsigned sfa = 0, unsigned sfb = 0) {
    tcgen05Group(1, line, "tcgen05.mma");
    tcgen05MmaOn<Kind, K, Vec>({{block, block}, 1}, d, a, b, idesc, enable, line, aInTmem, scaled, sfa, sfb);
}
// tcgen05.mma.cta_group::2 (the SS form): one M = 256 MMA over the CTA pair
// (Tcgen05Blocks). PTX ISA, "Issue Granularity": one thread of the pair
// issues it; the model has the even block (the pair's leader, where rows
// 0-127 of D go) issue it, as CUTLASS's 2-SM MMAs do, and both blocks must
// have allocated their tensor memory with tcgen05.alloc.cta_group::2.
// The pair's leader, issuing `instruction` for both blocks: the peer block,
// after checking that both allocated their tensor memory for the pair.
inline Block *tcgen05PairIssue(unsigned line, const char *instruction) {
    tcgen05Group(2, line, instruction);
    Block *peer = tcgen05Peer(line, instruction);
    if (clusterRank & 1)
        tmemFault(line, std::string("issues a ") + instruction + ".cta_group::2 from block " + block->name + ", the odd block of its CTA pair (rank " +
                            std::to_string(clusterRank) + "): the pair's even block (its leader) issues it");
    for (Block *blk : {block, peer})
        if (!blk->tmemAllocated || blk->tmemGroup != 2)
            tmemFault(line, std::string("issues a ") + instruction + ".cta_group::2 writing the tensor memory of block " + blk->name +
                                (blk->tmemAllocated ? ", which allocated it with tcgen05.alloc.cta_group::1" : ", which has not allocated it (tcgen05.alloc.cta_group::2)"));
    return peer;
}
template <Tcgen05Kind Kind, int K, int Vec = K>
void tcgen05Mma2cta(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line, bool scaled = false, unsigned sfa = 0,
                    unsigned sfb = 0) {
    Block *peer = tcgen05PairIssue(line, "tcgen05.mma");
    tcgen05MmaOn<Kind, K, Vec>({{block, peer}, 2}, d, a, b, idesc, enable, line, false, scaled, sfa, sfb);
}
// tcgen05.cp.32x128b.warpx4 from one thread: when the tensor core runs it
// (at the thread's commit, before the MMAs issued after it), 32 rows of 16
// bytes -- row r at start + (r / 8) * SBO + (r % 8) * 16, no swizzle -- go to
// columns taddr .. + 3 of lanes r, 32 + r, 64 + r, 96 + r.
// With .cta_group::2 (the pair's leader issuing), the same copy runs in
// both blocks of the pair, each from its own shared memory into its own
// tensor memory (PTX ISA, tcgen05.cp; TileLang's tcgen05_cp_warpx4 with use_2cta).
inline void tcgen05CpOn(std::vector<Block *> blocks, unsigned taddr, unsigned long long desc, unsigned line) {
    if ((desc >> 60) & 3) tmemFault(line, "issues a tcgen05.cp with a swizzled descriptor, which the model does not cover");
    if (taddr >> 16) tmemFault(line, "issues a tcgen05.cp.32x128b.warpx4 to lane " + std::to_string(taddr >> 16) + "; warpx4 fills lanes 0-127 from lane 0");
    openTcgen05.push_back([=](const rc::Actor &actor) {
        unsigned long long start = desc & 0xffffffffull, sbo = ((desc >> 46) & 0x3fff) << 4;
        View view = viewAt(static_cast<long long>(start));
        rc::Actor writer = actor;
        writer.verb = "writes";
        for (Block *blk : blocks) {
            if (blk != block) remoteAccess(blk, actor.slot, actor.clock, actor.line);
            rc::Where where{&blk->name, view.second, view.first};
            for (unsigned r = 0; r < 32; ++r) {
                unsigned long long at = start + (r / 8) * sbo + (r % 8) * 16;
                if (at + 16 > blk->sharedBytes) {
                    sharedAccess(blk, static_cast<long long>(at), 16, line, false, view.second, view.first);   // reports
                    return;
                }
                blk->shadow->read(at, 16, actor, where);
                uint32_t words[4];
                std::memcpy(words, blk->shared.data() + at, 16);
                for (unsigned quarter = 0; quarter < 4; ++quarter)
                    for (unsigned c = 0; c < 4; ++c) {
                        tmemCell(blk, 32 * quarter + r, (taddr & 0xffff) + c, line) = words[c];
                        tmemRecord(blk, 32 * quarter + r, (taddr & 0xffff) + c, true, writer);
                    }
            }
        }
    });
}
inline void tcgen05Cp32x128bWarpx4(unsigned taddr, unsigned long long desc, unsigned line) {
    tcgen05Group(1, line, "tcgen05.cp");
    tcgen05CpOn({block}, taddr, desc, line);
}
inline void tcgen05Cp32x128bWarpx4Pair(unsigned taddr, unsigned long long desc, unsigned line) {
    Block *peer = tcgen05PairIssue(line, "tcgen05.cp");
    tcgen05CpOn({block, peer}, taddr, desc, line);
}
// A warp reaches only the 32 lanes of its quarter (warp id % 4).
inline void tmemLoadLanes(unsigned address, unsigned lanes, unsigned line) {
    unsigned base = (tid.x / 32) % 4 * 32;
    if ((address >> 16) < base || (address >> 16) + lanes > base + 32)
        tmemFault(line, "loads tensor-memory lanes " + std::to_string(address >> 16) + "-" + std::to_string((address >> 16) + lanes - 1) + "; warp " +
                            std::to_string(tid.x / 32) + " reaches only lanes " + std::to_string(base) + "-" + std::to_string(base + 31));
}
// tcgen05.ld.32x32b.xN: lane l reads N columns of lane (address >> 16) + l.
template <int N> void tmem_load_32x32b(void *dst, unsigned address, unsigned line = __builtin_LINE()) {
    tmemLoadLanes(address, 32, line);
    unsigned lane = (address >> 16) + tid.x % 32, column = address & 0xffff;
    uint32_t values[N];
    rc::Actor a = actorOf("reads", line);
    for (int i = 0; i < N; ++i) {
        values[i] = tmemCell(lane, column + unsigned(i), line);
        tmemRecord(lane, column + unsigned(i), false, a);
    }
    std::memcpy(dst, values, sizeof(values));
}
// tcgen05.ld.16x256b.xN: 16 lanes, 8 columns per repetition; register i of
// lane l holds lane l / 4 + 8 * (i / 2 % 2), column 2 * (l % 4) + i % 2 + 8 * (i / 4).
template <int N> void tmem_load_16x256b(void *dst, unsigned address, unsigned line = __builtin_LINE()) {
    tmemLoadLanes(address, 16, line);
    unsigned l = tid.x % 32;
    uint32_t values[4 * N];
    rc::Actor a = actorOf("reads", line);
    for (int i = 0; i < 4 * N; ++i) {
        unsigned lane = (address >> 16) + l / 4 + 8 * (unsigned(i) / 2 % 2), column = (address & 0xffff) + 2 * (l % 4) + unsigned(i) % 2 + 8 * (unsigned(i) / 4);
        values[i] = tmemCell(lane, column, line);
        tmemRecord(lane, column, false, a);
    }
    std::memcpy(dst, values, sizeof(values));
}
// tcgen05.st: the registers of tcgen05.ld with the same shape, in its order, to the same cells.
template <int N> void tmem_store_32x32b(const void *src, unsigned address, unsigned line = __builtin_LINE()) {
    tmemLoadLanes(address, 32, line);
    unsigned lane = (address >> 16) + tid.x % 32, column = address & 0xffff;
    uint32_t values[N];
    std::memcpy(values, src, sizeof(values));
    rc::Actor a = actorOf("writes", line);
    for (int i = 0; i < N; ++i) {
        tmemCell(lane, column + unsigned(i), line) = values[i];
        tmemRecord(lane, column + unsigned(i), true, a);
    }
}
template <int N> void tmem_store_16x256b(const void *src, unsigned address, unsigned line = __builtin_LINE()) {
    tmemLoadLanes(address, 16, line);
    unsigned l = tid.x % 32;
    uint32_t values[4 * N];
    std::memcpy(values, src, sizeof(values));
    rc::Actor a = actorOf("writes", line);
    for (int i = 0; i < 4 * N; ++i) {
        unsigned lane = (address >> 16) + l / 4 + 8 * (unsigned(i) / 2 % 2), column = (address & 0xffff) + 2 * (l % 4) + unsigned(i) % 2 + 8 * (unsigned(i) / 4);
        tmemCell(lane, column, line) = values[i];
        tmemRecord(lane, column, true, a);
    }
}
// tcgen05.alloc of `group` (.cta_group::1 or 2) in this block, by lane 0:
// the columns from 0 on, their address written to `word`.
inline void tmemAllocate(SharedPtr<unsigned> word, unsigned columns, unsigned group, unsigned line) {
    if (columns < 32 || columns > kTmemColumns || (columns & (columns - 1)))
        tmemFault(line, "allocates " + std::to_string(columns) + " tensor-memory columns (a power of two from 32 to 512)");
    if (block->tmemAllocated) tmemFault(line, "allocates tensor memory twice in one block");
    block->tmem.assign(size_t(kTmemLanes) * kTmemColumns, 0xffffffffu);   // poisoned, as shared memory is
    block->tmemColumns = columns;
    block->tmemGroup = group;
    block->tmemAllocated = true;
    block->tmemShadow = std::make_unique<rc::Shadow>(size_t(kTmemLanes) * kTmemColumns);
    word[0] = 0u;
}
inline void tmemCheckFree(unsigned address, unsigned columns, unsigned line) {
    if (address != 0 || columns != block->tmemColumns) tmemFault(line, "frees tensor memory it did not allocate that way");
}
} // namespace emu

// tcgen05.alloc is warp-wide: lane 0 of the warp allocates and writes the address.
inline void tilet_tmem_alloc(emu::SharedPtr<unsigned> word, unsigned columns, unsigned line = __builtin_LINE()) {
    if (emu::tid.x % 32 != 0) return;
    emu::tcgen05Group(1, line, "tcgen05.alloc");
    emu::tmemAllocate(word, columns, 1, line);
}
inline void tilet_tmem_dealloc(unsigned address, unsigned columns, unsigned line = __builtin_LINE()) {
    if (emu::tid.x % 32 != 0) return;
    emu::tcgen05Group(1, line, "tcgen05.dealloc");
    emu::tmemCheckFree(address, columns, line);
    emu::block->tmemAllocated = false;
}
// tcgen05.alloc.cta_group::2 (PTX ISA, "Issue Granularity"): one warp in each
// block of the CTA pair performs it collectively -- the first to issue it may
// wait for the other's -- and the pair's tensor memory is then addressed by
// the same address in both blocks (tcgen05.mma.cta_group::2 writes both), so
// the two ask for the same columns. Lane 0 of each warp meets its peer's here.
inline void tilet_tmem_alloc_2cta(emu::SharedPtr<unsigned> word, unsigned columns, unsigned line = __builtin_LINE()) {
    if (emu::tid.x % 32 != 0) return;
    emu::tcgen05Group(2, line, "tcgen05.alloc");
    emu::Block *peer = emu::tcgen05Peer(line, "tcgen05.alloc");
    emu::tmemAllocate(word, columns, 2, line);
    emu::cluster->pairAlloc[emu::clusterRank / 2]->arriveAndWait(line);
    if (peer->tmemColumns != columns)
        emu::tmemFault(line, "allocates " + std::to_string(columns) + " tensor-memory columns with tcgen05.alloc.cta_group::2 and the peer block " + peer->name + " " +
                                 std::to_string(peer->tmemColumns) + ": the CTA pair allocates the same columns in both blocks");
}
// tcgen05.dealloc.cta_group::2: collective as the allocation (PTX ISA,
// "Issue Granularity"): the columns are freed once the peer's warp
// deallocates too, so a dealloc the peer reaches only after a barrier this
// block waits at after its own hangs (the PTX ISA's "non-deterministic hang"
// example), which the model reports as a deadlock.
inline void tilet_tmem_dealloc_2cta(unsigned address, unsigned columns, unsigned line = __builtin_LINE()) {
    if (emu::tid.x % 32 != 0) return;
    emu::tcgen05Group(2, line, "tcgen05.dealloc");
    emu::tcgen05Peer(line, "tcgen05.dealloc");
    emu::tmemCheckFree(address, columns, line);
    emu::cluster->pairDealloc[emu::clusterRank / 2]->arriveAndWait(line);
    emu::block->tmemAllocated = false;
}
template <class T> unsigned long long tilet_tcgen05_desc(emu::SharedPtr<T> smem, unsigned leading, unsigned stride, unsigned swizzle) {
    return emu::tcgen05Desc(smem, leading, stride, swizzle);
}
inline void tilet_tcgen05_mma_f16(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::F16, 16>(d, a, b, idesc, enable, line);
}
inline void tilet_tcgen05_mma_tf32(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::Tf32, 8>(d, a, b, idesc, enable, line);
}
inline void tilet_tcgen05_mma_f8f6f4(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::F8f6f4, 32>(d, a, b, idesc, enable, line);
}
inline void tilet_tcgen05_mma_i8(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::I8, 32>(d, a, b, idesc, enable, line);
}
// The TS forms: A in tensor memory at a.
inline void tilet_tcgen05_mma_f16_ts(unsigned d, unsigned a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::F16, 16>(d, a, b, idesc, enable, line, true);
}
inline void tilet_tcgen05_mma_tf32_ts(unsigned d, unsigned a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::Tf32, 8>(d, a, b, idesc, enable, line, true);
}
inline void tilet_tcgen05_mma_f8f6f4_ts(unsigned d, unsigned a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::F8f6f4, 32>(d, a, b, idesc, enable, line, true);
}
inline void tilet_tcgen05_mma_i8_ts(unsigned d, unsigned a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::I8, 32>(d, a, b, idesc, enable, line, true);
}
inline void tilet_tcgen05_mma_mxf8f6f4(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned sfa, unsigned sfb,
                                       unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::F8f6f4, 32>(d, a, b, idesc, enable, line, false, true, sfa, sfb);
}
inline void tilet_tcgen05_mma_mxf4nvf4(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned sfa, unsigned sfb,
                                       unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::Mxf4nvf4, 64, 16>(d, a, b, idesc, enable, line, false, true, sfa, sfb);
}
inline void tilet_tcgen05_mma_mxf4(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned sfa, unsigned sfb,
                                   unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma<emu::Tcgen05Kind::Mxf4nvf4, 64, 32>(d, a, b, idesc, enable, line, false, true, sfa, sfb);
}
inline void tilet_tcgen05_cp_32x128b_warpx4(unsigned taddr, unsigned long long desc, unsigned line = __builtin_LINE()) {
    emu::tcgen05Cp32x128bWarpx4(taddr, desc, line);
}
inline void tilet_tcgen05_cp_32x128b_warpx4_2cta(unsigned taddr, unsigned long long desc, unsigned line = __builtin_LINE()) {
    emu::tcgen05Cp32x128bWarpx4Pair(taddr, desc, line);
}
namespace emu {
// tcgen05.commit: the committing thread's MMAs run, as the agent of `bar`
// (a barrier of the issuing block), then arrive once on each of `targets`
// with their completion: a waiter of any of them is ordered after the MMAs.
inline void tcgen05Commit(SharedPtr<unsigned long long> bar, std::initializer_list<SharedPtr<unsigned long long>> targets) {
    auto agent = tmaAgent(bar, bar.line);
    committedTcgen05.push_back(agent);
    // The MMAs run in issue order: after this thread's earlier ones, and
    // each after the one before it in this commit (the agent's own accesses).
    auto issued = std::make_shared<rc::Clocks>(*rc::self->snapshot());
    for (auto [slot, clock] : committedTcgen05) (*issued)[slot] = std::max<rc::Clock>((*issued)[slot], clock);
    rc::Actor actor{agent.first, agent.second, issued.get(), bar.line, true, "reads", "the tcgen05.mma completing on "};
    for (auto &mma : openTcgen05) mma(actor);
    openTcgen05.clear();
    for (const SharedPtr<unsigned long long> &target : targets) {
        // The peer block's barrier: distributed shared memory, as for mbarrier.arrive.release.cluster.
        if (target.blk != block) remoteAccess(target.blk, rc::self->slot, rc::self->now(), bar.line);
        tmaComplete(target, *issued, agent, 0, bar.line);
        transact(target, 0, 1, bar.line);
    }
}
} // namespace emu
// The committing thread's MMAs run, then arrive once on the barrier.
inline void tilet_tcgen05_commit(emu::SharedPtr<unsigned long long> bar) {
    emu::tcgen05Group(1, bar.line, "tcgen05.commit");
    emu::tcgen05Commit(bar, {bar});
}
// tcgen05.commit.cta_group::2: the same for the thread's MMAs of the CTA
// pair, arriving on the barrier at bar (the issuing block's) only.
inline void tilet_tcgen05_commit_2cta(emu::SharedPtr<unsigned long long> bar) {
    emu::tcgen05Group(2, bar.line, "tcgen05.commit");
    emu::tcgen05Peer(bar.line, "tcgen05.commit");
    emu::tcgen05Commit(bar, {bar});
}
// tcgen05.commit.cta_group::2 .multicast::cluster with the pair's mask
// (0b11 << the even rank): the arrival goes to the barrier at bar's offset
// in both blocks of the pair (PTX ISA, tcgen05.commit: "multicast to the same
// offset as mbar in the shared memory of each destination CTA").
inline void tilet_tcgen05_commit_2cta_multicast(emu::SharedPtr<unsigned long long> bar) {
    emu::tcgen05Group(2, bar.line, "tcgen05.commit");
    emu::tcgen05Peer(bar.line, "tcgen05.commit");
    int even = static_cast<int>(emu::clusterRank & ~1u);
    emu::tcgen05Commit(bar, {emu::remote(bar, even), emu::remote(bar, even + 1)});
}
// tcgen05.mma.cta_group::2 (SS): see emu::tcgen05Mma2cta.
inline void tilet_tcgen05_mma_f16_2cta(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma2cta<emu::Tcgen05Kind::F16, 16>(d, a, b, idesc, enable, line);
}
inline void tilet_tcgen05_mma_tf32_2cta(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma2cta<emu::Tcgen05Kind::Tf32, 8>(d, a, b, idesc, enable, line);
}
inline void tilet_tcgen05_mma_f8f6f4_2cta(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma2cta<emu::Tcgen05Kind::F8f6f4, 32>(d, a, b, idesc, enable, line);
}
inline void tilet_tcgen05_mma_i8_2cta(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma2cta<emu::Tcgen05Kind::I8, 32>(d, a, b, idesc, enable, line);
}
inline void tilet_tcgen05_mma_mxf8f6f4_2cta(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned sfa, unsigned sfb,
                                            unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma2cta<emu::Tcgen05Kind::F8f6f4, 32>(d, a, b, idesc, enable, line, true, sfa, sfb);
}
inline void tilet_tcgen05_mma_mxf4nvf4_2cta(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned sfa, unsigned sfb,
                                            unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma2cta<emu::Tcgen05Kind::Mxf4nvf4, 64, 16>(d, a, b, idesc, enable, line, true, sfa, sfb);
}
inline void tilet_tcgen05_mma_mxf4_2cta(unsigned d, unsigned long long a, unsigned long long b, unsigned idesc, int enable, unsigned sfa, unsigned sfb,
                                        unsigned line = __builtin_LINE()) {
    emu::tcgen05Mma2cta<emu::Tcgen05Kind::Mxf4nvf4, 64, 32>(d, a, b, idesc, enable, line, true, sfa, sfb);
}
namespace emu {
// cp.async.bulk.tensor .cta_group::2 (PTX ISA): the mbarrier may be in the
// destination's block or in its peer. tilet's pair load names the barrier at
// bar's offset in the pair's even block (the leader, rank & ~1; mapa), which
// counts both blocks' bytes; the box lands in this block's shared memory.
template <class T, class... C> void tmaLoad2cta(SharedPtr<T> dst, const CUtensorMap *map, SharedPtr<unsigned long long> bar, C... c) {
    tcgen05Peer(dst.line, "cp.async.bulk.tensor");
    SharedPtr<unsigned long long> leader = remote(bar, static_cast<int>(clusterRank & ~1u));
    // The leader's barrier: distributed shared memory, as for mbarrier.arrive.release.cluster.
    if (leader.blk != block) remoteAccess(leader.blk, rc::self->slot, rc::self->now(), dst.line);
    tmaLoad(dst, map, leader, c...);
}
} // namespace emu
template <class T> void tilet_tma_load_1d_2cta(emu::SharedPtr<T> dst, const CUtensorMap *map, emu::SharedPtr<unsigned long long> bar, int c0) {
    emu::tmaLoad2cta(dst, map, bar, c0);
}
template <class T> void tilet_tma_load_2d_2cta(emu::SharedPtr<T> dst, const CUtensorMap *map, emu::SharedPtr<unsigned long long> bar, int c0, int c1) {
    emu::tmaLoad2cta(dst, map, bar, c0, c1);
}
template <class T> void tilet_tma_load_3d_2cta(emu::SharedPtr<T> dst, const CUtensorMap *map, emu::SharedPtr<unsigned long long> bar, int c0, int c1, int c2) {
    emu::tmaLoad2cta(dst, map, bar, c0, c1, c2);
}
template <class T>
void tilet_tma_load_4d_2cta(emu::SharedPtr<T> dst, const CUtensorMap *map, emu::SharedPtr<unsigned long long> bar, int c0, int c1, int c2, int c3) {
    emu::tmaLoad2cta(dst, map, bar, c0, c1, c2, c3);
}
template <class T>
void tilet_tma_load_5d_2cta(emu::SharedPtr<T> dst, const CUtensorMap *map, emu::SharedPtr<unsigned long long> bar, int c0, int c1, int c2, int c3, int c4) {
    emu::tmaLoad2cta(dst, map, bar, c0, c1, c2, c3, c4);
}
inline void tilet_tcgen05_wait_ld() {}   // the model's loads are complete when they return
inline void tilet_tcgen05_wait_st() {}   // and its stores
inline void tilet_tcgen05_fence_before() {}
inline void tilet_tcgen05_fence_after() {}
inline void tilet_fence_proxy_async() { emu::rc::self->fence(); }
// Of every state space: global memory is not shadowed, so the same for shared.
inline void tilet_fence_proxy_async_all() { emu::rc::self->fence(); }
inline void tilet_tma_prefetch(const CUtensorMap *) {}   // a cache hint: nothing to model
inline void tilet_pdl_trigger() {}
inline void tilet_pdl_sync() {}
template <int N> void tilet_setmaxnreg_inc() {}   // registers are not a resource here
template <int N> void tilet_setmaxnreg_dec() {}

#define threadIdx emu::tid
#define blockIdx emu::bid
#define __syncthreads() emu::syncThreads()
#define __syncwarp() tilet_syncwarp()
#define __shfl_xor_sync(...) emu::shuffleXor(__VA_ARGS__)
#define __shfl_sync(...) emu::shuffleIdx(__VA_ARGS__)
#define __shfl_down_sync(...) emu::shuffleDown(__VA_ARGS__)
#define __shfl_up_sync(...) emu::shuffleUp(__VA_ARGS__)

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
// The f32 approximations, exact here: CUDA's __expf (ex2.approx.f32 of
// x log2 e: subnormal results kept unless nvcc flushes them, -ftz=true) and
// ex2.approx.ftz.f32 (subnormal inputs and results flushed to zero).
inline float flushSubnormal(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
inline float __expf(float x) { return std::exp(x); }
inline float tilet_ex2_approx_ftz(float x) { return flushSubnormal(std::exp2(flushSubnormal(x))); }
template <class To, class From> To tilet_bitcast(From x) {
    static_assert(sizeof(To) == sizeof(From), "reinterpret keeps the width");
    To y;
    std::memcpy(&y, &x, sizeof(To));
    return y;
}
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
// A read-modify-write of a number, or of a 16-bit float (CUDA's atomicAdd and
// atom.add.noftz.f16/bf16) under a lock. Every memory order is modelled
// as sequentially consistent, the strongest: threads run as std::threads.
inline std::mutex atomicMutex;
// (The value is not deduced: it may be a shared-memory element, converted.)
template <class T> T atomicAdd(T *address, std::type_identity_t<T> value) {
    if constexpr (std::is_arithmetic_v<T>) {
        return std::atomic_ref<T>(*address).fetch_add(value);
    } else {
        std::lock_guard<std::mutex> lock(atomicMutex);
        T old = *address;
        *address = T(static_cast<float>(old) + static_cast<float>(value));
        return old;
    }
}
// atomic_load / atomic_store of a global element (ld/st .relaxed/.acquire/
// .release .gpu): single-copy atomic, modelled as sequentially consistent.
namespace emu {
template <class T> T atomicLoad(const T *address) { return std::atomic_ref<T>(*const_cast<T *>(address)).load(); }
template <class T> void atomicStore(T *address, std::type_identity_t<T> value) { std::atomic_ref<T>(*address).store(value); }
} // namespace emu
// atomicAdd on shared memory: an atomic read-modify-write for the race
// detector (atomics of other threads do not race with it; plain accesses do).
template <class T> T atomicAdd(emu::SharedPtr<T> p, std::type_identity_t<T> value) {
    if (p.off < 0 || static_cast<size_t>(p.off) + sizeof(T) > p.blk->sharedBytes) {
        emu::sharedAccess(p.blk, p.off, sizeof(T), p.line, true, p.buffer, p.base);   // reports the bounds error
        return T{};
    }
    emu::rc::Actor a = emu::actorOf("atomically updates", p.line);
    emu::rc::Where where{&p.blk->name, p.buffer, p.base};
    p.blk->shadow->atomic(static_cast<size_t>(p.off), sizeof(T), a, where);
    return atomicAdd(p.raw(), value);
}
namespace emu {
// cp.reduce.async.bulk.tensor .add: as a store, each element added into the
// tensor with an atomic read-modify-write (reductions of other blocks to the
// same elements do not race with it).
template <class T, class... C> void tmaReduceAdd(const CUtensorMap *map, SharedPtr<T> src, C... c) {
    int coords[] = {static_cast<int>(c)...};
    tmaWriteBox(map, src, coords, [](unsigned char *dst, const unsigned char *from, size_t) {
        T value;
        std::memcpy(static_cast<void *>(&value), from, sizeof(T));
        ::atomicAdd(reinterpret_cast<T *>(dst), value);
    });
}
} // namespace emu

#include <cuda_runtime.h>

namespace emu {
// cudaFuncSetAttribute's dynamic shared memory opt-ins, per kernel, and the
// one device the emulator has (cudaGetDevice), for the generated host code.
inline std::mutex optInMutex;
inline std::map<const void *, size_t> optedIn;
inline size_t optedInSharedBytes(const void *kernel) {
    std::lock_guard<std::mutex> lock(optInMutex);
    auto it = optedIn.find(kernel);
    return it == optedIn.end() ? 48 * 1024 : it->second;
}
inline cudaError_t funcSetAttribute(const void *kernel, cudaFuncAttribute attribute, int value) {
    if (attribute == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        std::lock_guard<std::mutex> lock(optInMutex);
        optedIn[kernel] = static_cast<size_t>(value);
    }
    return cudaSuccess;
}
inline cudaError_t getDevice(int *device) {
    *device = 0;
    return cudaSuccess;
}
// cudaGetErrorString, for the launch code's messages (the emulator links no CUDA library).
inline const char *errorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "an emulated CUDA error"; }

// cudaDevAttrMultiProcessorCount (num_sms()): the emulated device has 3
// SMs, few enough that a persistent kernel's blocks each take several
// tiles, unless TILET_EMU_SMS says otherwise. The reference interpreter
// (tests/difftest/tlinterp.py) reads the same variable.
inline int smCount() {
    static const int count = [] {
        const char *e = std::getenv("TILET_EMU_SMS");
        int v = e ? std::atoi(e) : 0;
        return v > 0 ? v : 3;
    }();
    return count;
}

// cudaDeviceGetAttribute's compute capability: the emulated device is the
// architecture the module was translated for (prepare.py passes it).
// A harness may make it another (deviceCapability) to see a launch refuse it.
inline std::pair<int, int> deviceCapability{-1, -1};
template <int Major, int Minor> cudaError_t deviceGetAttribute(int *value, cudaDeviceAttr attribute, int) {
    bool other = deviceCapability.first >= 0;
    if (attribute == cudaDevAttrComputeCapabilityMajor) *value = other ? deviceCapability.first : Major;
    else if (attribute == cudaDevAttrComputeCapabilityMinor) *value = other ? deviceCapability.second : Minor;
    else if (attribute == cudaDevAttrMultiProcessorCount) *value = smCount();
    else return cudaErrorInvalidValue;
    return cudaSuccess;
}

// Stands in for cudaLaunchKernelEx in the generated host code.
template <class... Params, class... Args>
cudaError_t launchEx(const cudaLaunchConfig_t *config, void (*kernel)(Params...), Args &&...args) {
    if (config->blockDim.y != 1 || config->blockDim.z != 1) return cudaErrorInvalidConfiguration;
    // As on a GPU: more than 48 KiB of dynamic shared memory needs the kernel's opt-in first.
    if (config->dynamicSmemBytes > 48 * 1024 && optedInSharedBytes(reinterpret_cast<const void *>(kernel)) < config->dynamicSmemBytes)
        return cudaErrorInvalidValue;
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
