// Effects.h -- what a statement reads, writes and synchronises: the one place
// in tilet that knows it.
//
// Every pass that asks "which buffers does this touch", "which bytes may
// another thread see", "is this a barrier" asks ownEffects(). Its switch
// lists every statement kind with no default, so a new node kind does not
// compile until its effects are stated here.
//
// Memory proxies follow the PTX ISA memory model ("Proxies"): ordinary loads
// and stores, cp.async and ldmatrix go through the generic proxy; TMA
// (cp.async.bulk[.tensor]) and the shared-memory operands wgmma reads through
// matrix descriptors go through the async proxy. Generic writes become
// visible to the async proxy only after a `fence.proxy.async` by the writing
// thread.
#pragma once

#include "ir/IR.h"

#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace tilet::ir {

enum class Proxy { Generic, Async };
const char *proxyName(Proxy p);

enum class AccessMode { Read, Write, ReadWrite };

// One access of a buffer by a statement. Pointers refer into the statement,
// which must outlive the Access.
struct Access {
    const BufferNode *buffer = nullptr;
    const Buffer *owner = nullptr;   // the statement's reference to `buffer`, for passes that build new accesses of it
    AccessMode mode = AccessMode::Read;
    Proxy proxy = Proxy::Generic;
    // Which elements: the element at `*indices` (an element access, or the
    // first element of a wide one), the box `*region` (a tile operation), or
    // the whole buffer when both are null.
    const std::vector<Expr> *indices = nullptr;
    const Region *region = nullptr;
    // With `indices`: how many consecutive elements of the last dimension
    // from there (a wide vector copy, a dp4a operand).
    int64_t elements = 1;
    // The element access is exactly `elements` elements from `indices` in
    // each thread: a load, a store, a vector copy. Otherwise `indices` may
    // only be where a larger footprint starts (a descriptor's tile, an
    // ldmatrix row, a TMA box) and says nothing of the elements past it.
    bool exact = false;
    // Completes after the statement: cp.async (at the cp.async.wait_group
    // that retires its group), TMA and bulk copies (a load when the mbarrier
    // `completesOn` completes its phase), wgmma (at wgmma.wait_group).
    bool asynchronous = false;
    const BufferNode *completesOn = nullptr;
    // Also lands in (or reads from) other blocks of the cluster: TMA
    // multicast, copy_cluster with dst_block.
    bool remote = false;
    // An atomic add whose result no thread sees (atomic_add without
    // return_prev), an atomic_load or an atomic_store: two of them need no
    // barrier between them, whatever elements they share -- adds commute
    // (PTX ISA, "Memory Consistency Model": atomicity), and atomic loads and
    // stores are ordered by their memory orders, the program's own protocol
    // (a flag a thread spins on). Against any other access, a fetch-add's
    // included, they are a read and a write.
    bool atomic = false;
    SourceRange span;   // the load, or the statement

    bool reads() const { return mode != AccessMode::Write; }
    bool writes() const { return mode != AccessMode::Read; }
};

enum class SyncKind {
    Barrier,          // bar.sync of the block, or of a role's threads (barrierId, threads)
    ClusterBarrier,   // barrier.cluster arrive + wait
    ProxyFence,       // fence.proxy.async.shared::cta
    MbarrierInit,     // mbarrier.init of every barrier of the array
    MbarrierArrive,   // one arrival (count: threads that arrive; remote: another block's barrier)
    MbarrierExpectTx, // transaction bytes the phase also waits for (with an arrival when `arrives`)
    MbarrierWait,     // wait until the phase of `parity` completes
    CpAsyncCommit,
    CpAsyncWait,      // count: groups that may stay in flight
    WgmmaFence,
    WgmmaCommit,
    WgmmaWait,        // count: groups that may stay in flight
    BulkWait,         // cp.async.bulk commit + wait_group.read 0
    PdlTrigger,       // griddepcontrol.launch_dependents
    PdlWait,          // griddepcontrol.wait
    Tcgen05Wait,      // tcgen05.wait::ld / ::st: this thread's tensor-memory loads have landed / stores are done
    Tcgen05Fence,     // tcgen05.fence::before/after_thread_sync (count 0: before, 1: after)
};
const char *syncKindName(SyncKind k);

struct SyncEffect {
    SyncKind kind;
    const BufferNode *barrier = nullptr;   // mbarrier kinds
    const Expr *index = nullptr;       // which barrier of the array (null: all)
    const Expr *parity = nullptr;      // MbarrierWait
    int64_t count = 0;                 // see SyncKind
    int64_t barrierId = 0, threads = 0;   // Barrier: 0 is the block's barrier
    bool remote = false;               // MbarrierArrive on another block's barrier
    bool arrives = false;              // MbarrierExpectTx
    bool global = false;               // ProxyFence: global memory too, not only this block's shared memory
};

struct Effects {
    std::vector<Access> accesses;
    std::vector<SyncEffect> syncs;

    bool empty() const { return accesses.empty() && syncs.empty(); }
};

// The effects of `s` itself: its operands, and the loads in its own
// expressions (a loop's bounds, a branch's condition, a binding's value), not
// those of the statements it contains.
Effects ownEffects(const Stmt &s);

// Calls `f` with each statement of `s` (pre-order) and its own effects.
void forEachEffect(const Stmt &s, const std::function<void(const Stmt &, const Effects &)> &f);

// Whether `s` or a statement inside it accesses `b` (writes it, with `writesOnly`).
bool touchesBuffer(const Stmt &s, const BufferNode *b, bool writesOnly = false);

// A buffer that `e` loads and a statement of `body` writes (by storage: a
// view writes the buffer it views), and the first such write; none if none.
// What a pipelined loop issues ahead may not read it: it would read it early.
struct Writer {
    std::string buffer;
    SourceRange at;
};
std::optional<Writer> writerOfWhatItReads(const Expr &e, const Stmt &body);

// Whether `s` is work that can run while the warp group's wgmmas do: it
// reads memory or registers, and issues no wgmma. Waits (a wgmma group's, a
// stage's mbarrier: ring bookkeeping) are not work, and a clear of the next
// accumulator only writes. Ping-pong's turns and the intra-warpgroup
// overlap both ask it of the statements between two GEMMs.
bool computesBesideWgmma(const Stmt &s);

// The instruction `s` itself executes with every lane of its warp taking
// part (PTX's .sync.aligned forms, warp shuffles, named barriers counting
// whole warps, roles made of warps), or null: a block whose thread count is
// not a whole number of warps has a partial warp, where such an
// instruction's behaviour is undefined (check-whole-warps). Not the
// statements `s` contains.
const char *warpWideInstruction(const Stmt &s);

// Whether the instruction `s` itself executes is one that a single thread
// issues for its block or role (the lowering runs it in one thread: the
// scope's first, or an elected one): TMA and 1D bulk copies, tcgen05.mma,
// tcgen05.cp and tcgen05.commit, a cluster launch control query, a tensor-map
// prefetch. Its accesses are that thread's, in its program order. Not the
// statements `s` contains.
bool issuedByOneThread(const Stmt &s);

// The sequences of a kernel body the whole block walks in program order:
// the body's, and those reached from it through bindings and allocations
// only (not through a loop, a branch or a role). The block meets at the
// edges of each run of ws(...) regions in one of them: check-barriers
// assumes a block barrier there, and insert-syncs puts one there when roles
// on either side access the same memory or use the same mbarrier. Within a run, or in a loop or
// branch, only the program's own barriers order one role's accesses before
// another's.
std::set<const Seq *> blockSequences(const Stmt &body);

} // namespace tilet::ir
