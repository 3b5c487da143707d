// racecheck.h -- the emulator's race detector: compute-sanitizer's racecheck,
// synccheck and initcheck for the emulated kernels (docs/emulator.md).
//
// Happens-before is tracked with vector clocks. Every thread of a cluster
// has a slot; so has every mbarrier (its "agent": the TMA unit completing
// transaction bytes on it). A thread's own entry is its epoch: a barrier
// arrival, an mbarrier arrival and a proxy fence end it. Block, named and
// cluster barriers join the clocks of their threads; an mbarrier phase
// joins its arrivals (and the TMA writes completing on it), and a wait that
// sees the phase complete acquires them.
//
// Every byte of shared memory has a Cell: the last write (slot, epoch,
// line, proxy), the reads since it (one per thread at most, each not
// ordered after another), whether it was ever written, and a cp.async in
// flight to it. An access is checked against the cell before it is
// recorded; a conflict with an access of another slot whose epoch the
// accessing thread has not acquired is a race. Asynchronous operations are
// recorded as the PTX ISA's memory model has them: cp.async writes land at
// the cp.async.wait_group that retires them (in flight until then), TMA
// loads are async-proxy writes of the mbarrier's agent, wgmma operands and
// TMA/bulk stores async-proxy reads that last until their wait.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace emu::rc {

using Clock = uint32_t;
using Clocks = std::vector<Clock>;
constexpr uint32_t kNoSlot = 0xffffffffu;

inline void joinInto(Clocks &into, const Clocks &from) {
    for (size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], from[i]);
}

// ---- reports

// The kernels of the .cu, by first line (prepare.py registers them), so
// that a report can say which kernel it is in and known failures can be
// matched by kernel.
inline std::map<unsigned, std::string> &kernelLines() {
    static std::map<unsigned, std::string> lines;
    return lines;
}
inline const char *&cuFile() {
    static const char *file = "kernel.cu";
    return file;
}
inline bool registerKernels(const char *file, std::initializer_list<std::pair<unsigned, const char *>> kernels) {
    cuFile() = file;
    for (auto &[line, name] : kernels) kernelLines()[line] = name;
    return true;
}
// Where the .cu's lines come from: from each start line on, the .tl (or
// import_source) file and line its #line directive named, counting on
// (an empty file: the .cu's own lines again). The emulated source strips the
// directives, so that __LINE__ counts .cu lines, and registers them here.
inline std::map<unsigned, std::pair<std::string, unsigned>> &sourceLines() {
    static std::map<unsigned, std::pair<std::string, unsigned>> lines;
    return lines;
}
inline bool registerSourceLines(std::initializer_list<std::tuple<unsigned, const char *, unsigned>> segments) {
    for (auto &[start, file, line] : segments) sourceLines()[start] = {file, line};
    return true;
}
// "; softmax.tl:23" for a .cu line whose code came from there, else "".
inline std::string sourceAt(unsigned line) {
    auto &lines = sourceLines();
    auto it = lines.upper_bound(line);
    if (it == lines.begin() || std::prev(it)->second.first.empty()) return "";
    const auto &[start, where] = *std::prev(it);
    return "; " + where.first + ":" + std::to_string(where.second + (line - start));
}

inline std::string kernelAt(unsigned line) {
    auto &lines = kernelLines();
    auto it = lines.upper_bound(line);
    if (it == lines.begin()) return "?";
    return std::prev(it)->second;
}

struct Reporter {
    std::mutex mutex;
    // Each (kind, line, note line) is printed once; whether it is a known failure.
    std::map<std::tuple<std::string, unsigned, unsigned>, bool> seen;
    unsigned failures = 0, suppressed = 0;
    // EMU_RACECHECK_KNOWN="kind:kernel,...": reports expected until the
    // translator is fixed, and how often each occurred (see atExit()).
    std::map<std::pair<std::string, std::string>, unsigned> known;
    bool stopAtFirst = false;

    Reporter() {
        if (const char *first = std::getenv("EMU_RACECHECK_FIRST")) stopAtFirst = *first && *first != '0';
        if (const char *list = std::getenv("EMU_RACECHECK_KNOWN")) {
            std::string all = list;
            size_t at = 0;
            while (at < all.size()) {
                size_t end = all.find(',', at);
                if (end == std::string::npos) end = all.size();
                std::string entry = all.substr(at, end - at);
                size_t colon = entry.find(':');
                if (colon != std::string::npos) known[{entry.substr(0, colon), entry.substr(colon + 1)}] = 0;
                at = end + 1;
            }
        }
    }
};
inline Reporter &reporter() {
    static Reporter r;
    return r;
}

// One report: "FILE:LINE: error: racecheck[KIND]: WHAT" and, when the other
// access has a line, "FILE:NOTELINE: note: NOTE". Reports are printed once
// per (kind, line, note line) and make the run fail; `fatal` ones (a
// deadlock, an mbarrier that does not exist) end it at once, as the
// emulation cannot go on. `what` is the message or, on the paths every
// access takes, a function that makes it: a race repeated a million times
// costs a map lookup, not a message.
template <class What>
void report(const char *kind, unsigned line, What &&what, unsigned noteLine = 0, const char *note = "", bool fatal = false) {
    Reporter &r = reporter();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto [entry, fresh] = r.seen.try_emplace({kind, line, noteLine}, false);
    std::string kernel = fresh || fatal ? kernelAt(line) : std::string();
    if (fresh) {
        auto known = r.known.find({kind, kernel});
        entry->second = known != r.known.end();
        if (entry->second) ++known->second;
    }
    bool isKnown = entry->second;
    if (!isKnown) ++r.failures;
    if (!fresh && !fatal) return;
    if (r.seen.size() > 40 && !fatal) {
        ++r.suppressed;
        return;
    }
    std::string text;
    if constexpr (std::is_invocable_v<What>) text = what();
    else text = what;
    std::fprintf(stderr, "%s:%u: %s: racecheck[%s]: %s (kernel %s%s)%s\n", cuFile(), line, isKnown ? "warning" : "error", kind, text.c_str(),
                 kernel.c_str(), sourceAt(line).c_str(), isKnown ? " [known failure]" : "");
    if (noteLine) {
        std::string from = sourceAt(noteLine);
        std::fprintf(stderr, "%s:%u: note: %s%s\n", cuFile(), noteLine, note, from.empty() ? "" : (" (" + from.substr(2) + ")").c_str());
    }
    std::fflush(stderr);
    if (fatal || (r.stopAtFirst && !isKnown)) std::_Exit(1);
}

// At exit (every kernel of the harness has run): a run with reports fails,
// and so does one in which a known failure did not occur -- it must be
// removed from the list, which would otherwise hide its return.
inline void atExit() {
    Reporter &r = reporter();
    std::lock_guard<std::mutex> lock(r.mutex);
    bool fail = false;
    for (auto &[key, count] : r.known)
        if (count == 0) {
            std::fprintf(stderr, "racecheck: the known failure %s in kernel %s did not occur: remove it from the known list\n", key.first.c_str(),
                         key.second.c_str());
            fail = true;
        }
    if (r.failures) {
        std::fprintf(stderr, "racecheck: %u report(s)%s; the run fails\n", r.failures, r.suppressed ? " (repeats not printed)" : "");
        fail = true;
    }
    std::fflush(stderr);
    if (fail) std::_Exit(1);
}

// Read the environment and register the exit check at start-up.
inline const bool reporterReady = [] {
    reporter();
    std::atexit(atExit);
    return true;
}();

// ---- threads

// What a blocked thread waits for, for deadlock reports.
struct Wait {
    std::string what;
    unsigned line = 0;
};

struct ThreadState {
    uint32_t slot = 0;
    unsigned tid = 0, rank = 0;
    Clocks vc;
    // What this thread's progress is known to follow: vc, plus what a
    // collective instruction implies about execution but not memory (a
    // retired wgmma group was issued by every thread of its warp group).
    // Only the lost-phase check reads it.
    Clocks progress;
    std::shared_ptr<const Clocks> snap;
    std::mutex fenceMutex;
    std::vector<Clock> fences;   // epochs at which this thread executed fence.proxy.async
    Wait wait;
    bool exited = false;

    Clock now() const { return vc[slot]; }
    // Ends the epoch: what follows is not ordered before what was published.
    void tick() {
        progress[slot] = ++vc[slot];
        snap.reset();
    }
    void acquire(const Clocks &c) {
        joinInto(vc, c);
        joinInto(progress, c);
        snap.reset();
    }
    void acquireProgress(const Clocks &c) { joinInto(progress, c); }
    // The clocks as of now, shared by the asynchronous operations issued in this epoch.
    std::shared_ptr<const Clocks> snapshot() {
        if (!snap) snap = std::make_shared<const Clocks>(vc);
        return snap;
    }
    void fence() {
        {
            std::lock_guard<std::mutex> lock(fenceMutex);
            fences.push_back(now());
        }
        tick();
    }
    // Whether a fence.proxy.async of this thread follows its access at
    // `epoch` and is ordered before an operation with clocks `vc`.
    bool fencedBefore(Clock epoch, const Clocks &other) {
        std::lock_guard<std::mutex> lock(fenceMutex);
        auto it = std::lower_bound(fences.begin(), fences.end(), epoch);
        return it != fences.end() && other[slot] >= *it;
    }
};

// The detector's state of one cluster run.
struct Run {
    unsigned threadsPerBlock = 0, blocks = 0, threads = 0, slots = 0;
    std::vector<std::unique_ptr<ThreadState>> states;   // by slot
    std::vector<std::string> blockNames;               // by rank
    std::vector<std::string> agents;                    // agent slot - threads -> its mbarrier, for messages (sized at the start)
    std::atomic<int> live{0}, blocked{0};
    std::mutex deadlockMutex;

    std::string who(uint32_t slot) const {
        if (slot < threads)
            return "thread " + std::to_string(slot % threadsPerBlock) + " of block " + blockNames[slot / threadsPerBlock];
        size_t agent = slot - threads;
        return "the TMA unit completing on " + agents.at(agent);
    }
    ThreadState *thread(uint32_t slot) const { return slot < threads ? states[slot].get() : nullptr; }

    // Every thread of the cluster that has not exited waits for something
    // that only another of them could do: report each wait and end the run.
    [[noreturn]] void deadlock() {
        std::lock_guard<std::mutex> lock(deadlockMutex);
        std::map<std::tuple<unsigned, std::string, unsigned>, std::vector<unsigned>> waits;   // (line, what, block) -> threads
        unsigned exited = 0;
        for (auto &s : states) {
            if (s->exited) ++exited;
            else waits[{s->wait.line, s->wait.what, s->slot / threadsPerBlock}].push_back(s->slot % threadsPerBlock);
        }
        for (auto &[where, tids] : waits) {
            std::string ranges;
            for (size_t i = 0; i < tids.size(); ++i) {
                size_t j = i;
                while (j + 1 < tids.size() && tids[j + 1] == tids[j] + 1) ++j;
                if (!ranges.empty()) ranges += ", ";
                ranges += std::to_string(tids[i]) + (j > i ? "-" + std::to_string(tids[j]) : "");
                i = j;
            }
            report("deadlock", std::get<0>(where),
                   "threads " + ranges + " of block " + blockNames[std::get<2>(where)] + " wait on " + std::get<1>(where) +
                       ", which can never complete: every thread of the cluster waits or has exited (" + std::to_string(exited) + ")",
                   0, "", false);
        }
        std::fflush(stderr);
        std::_Exit(1);
    }
    // The calling thread is about to wait; if it is the last running one, nobody can wake it.
    void blocking(ThreadState &ts, const std::string &what, unsigned line) {
        ts.wait = {what, line};
        if (blocked.fetch_add(1) + 1 == live.load()) deadlock();
    }
    void exiting(ThreadState &ts) {
        ts.exited = true;
        int left = live.fetch_sub(1) - 1;
        if (left > 0 && blocked.load() == left) deadlock();
    }
};

inline thread_local ThreadState *self = nullptr;
inline thread_local Run *run = nullptr;

// ---- barriers

// A barrier of `count` threads. With Orders::Memory (bar.sync,
// barrier.cluster) it joins the arrivals' clocks (and progress clocks) and
// every thread leaves with the join; the emulator's own rendezvous
// (shuffles, ldmatrix, a warp group issuing wgmma) synchronise nothing in
// the PTX memory model and do not. Waits count as blocked for deadlock
// detection.
enum class Orders { Nothing, Memory };
class Barrier {
public:
    Barrier(unsigned count, Orders orders, std::string what) : count_(count), sync_(orders == Orders::Memory), what_(std::move(what)) {}
    unsigned count() const { return count_; }
    void arriveAndWait(unsigned line = 0) {
        ThreadState &ts = *self;
        uint32_t generation;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (sync_) {
                if (acc_.empty()) acc_.assign(run->slots, 0);
                if (progressAcc_.empty()) progressAcc_.assign(run->slots, 0);
                joinInto(acc_, ts.vc);
                joinInto(progressAcc_, ts.progress);
                ts.tick();
                ++joined_;
            }
            generation = generation_.load(std::memory_order_relaxed);
            if (++arrived_ < count_) {
                ++waiting_;
                run->blocking(ts, what_, line);
            } else {
                completeLocked(generation);
            }
        }
        // The waiters wake on the generation, not the mutex, so they do not
        // queue for it one by one.
        while (generation_.load(std::memory_order_acquire) == generation) generation_.wait(generation, std::memory_order_acquire);
        // Safe without a copy: the next phase cannot complete before this
        // thread arrives again -- unless bar.arrive fills it for threads
        // that never wait, a protocol out of balance that the end of the
        // block reports (and completeLocked publishes nothing for such a phase).
        if (sync_) {
            ts.acquire(result_);
            ts.acquireProgress(progressResult_);
        }
    }

    // bar.arrive: counts the calling thread toward the phase and goes on. It
    // joins no clock: tilet uses it only to pace warp groups (IssueTurn),
    // never to order memory, so the detector does not count on it either.
    void arrive(unsigned line = 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        lastArrival_ = line;
        if (++arrived_ == count_) completeLocked(generation_.load(std::memory_order_relaxed));
    }
    // Threads counted toward a phase that has not completed (after the
    // kernel: arrivals no wait met), and the line of the last bar.arrive.
    unsigned pending() const { return arrived_; }
    unsigned lastArrival() const { return lastArrival_; }
    const std::string &what() const { return what_; }

private:
    void completeLocked(uint32_t generation) {
        // A phase completed by bar.arrive alone (an unbalanced ping-pong,
        // which the end-of-block check reports) has no one to publish to,
        // and must not replace what the previous phase's waiters may still
        // be reading.
        if (sync_ && joined_ > 0) {
            joined_ = 0;
            result_.swap(acc_);
            acc_.assign(run->slots, 0);
            progressResult_.swap(progressAcc_);
            progressAcc_.assign(run->slots, 0);
        }
        arrived_ = 0;
        run->blocked.fetch_sub(static_cast<int>(waiting_));
        waiting_ = 0;
        generation_.store(generation + 1, std::memory_order_release);
        generation_.notify_all();
    }
    std::mutex mutex_;
    std::atomic<uint32_t> generation_{0};
    unsigned count_, arrived_ = 0, waiting_ = 0, joined_ = 0, lastArrival_ = 0;
    bool sync_;
    std::string what_;
    Clocks acc_, result_, progressAcc_, progressResult_;
};

// ---- shadow memory

struct Access {
    Clock clock = 0;
    uint32_t slot = kNoSlot;
    uint32_t line = 0;
};

enum : uint8_t { kWritten = 1, kAsyncWrite = 2 };

struct Cell {
    Access write;     // the last write
    uint8_t flags = 0;
    Access inflight;  // a cp.async issued to this byte and not yet landed (its issuing thread and line)
    Access read;      // reads since the last write, none ordered after another
    std::unique_ptr<std::vector<Access>> moreReads;
    // Atomic read-modify-writes since the last plain write: they do not race
    // with each other, but a plain access must be ordered after each.
    std::unique_ptr<std::vector<Access>> atomics;
};

// An access as the detector sees it: who (a thread, or an mbarrier's agent
// for TMA writes), at which epoch, from which line, the clocks it is ordered
// after (a thread's own, or those of the issuing threads of an asynchronous
// operation), and whether the async proxy performs it.
struct Actor {
    uint32_t slot;
    Clock clock;
    const Clocks *vc;
    unsigned line;
    bool async;
    const char *verb;          // "reads", "writes", "issues a cp.async to"
    const char *prefix = "";   // "the wgmma of ": an asynchronous operation of the thread
    std::string name() const { return prefix + run->who(slot); }
};

// Where the bytes are, for messages: the block and the buffer of the access.
struct Where {
    const std::string *block;
    const char *buffer;
    long long base;   // the buffer's offset in shared memory
    bool tensorMemory = false;   // a cell of tensor memory: offset = lane * 512 + column
};

class Shadow {
public:
    explicit Shadow(size_t bytes) : cells_(bytes), locks_(new std::mutex[bytes / kGranule + 1]) {}
    size_t size() const { return cells_.size(); }

    // Checks and records a read of [offset, offset + bytes).
    void read(size_t offset, size_t bytes, const Actor &a, const Where &where, bool record = true) {
        for (size_t o = offset; o < offset + bytes;) {
            size_t end = std::min(offset + bytes, (o / kGranule + 1) * kGranule);
            std::lock_guard<std::mutex> lock(locks_[o / kGranule]);
            for (; o < end; ++o) readCell(o, a, where, record);
        }
    }
    // Checks and records a write; `landing`: a cp.async landing at its wait
    // (checked when it was issued, in flight since).
    void write(size_t offset, size_t bytes, const Actor &a, const Where &where, bool landing = false) {
        for (size_t o = offset; o < offset + bytes;) {
            size_t end = std::min(offset + bytes, (o / kGranule + 1) * kGranule);
            std::lock_guard<std::mutex> lock(locks_[o / kGranule]);
            for (; o < end; ++o) writeCell(o, a, where, landing);
        }
    }
    // Checks and records an atomic read-modify-write (atomicAdd).
    void atomic(size_t offset, size_t bytes, const Actor &a, const Where &where) {
        for (size_t o = offset; o < offset + bytes;) {
            size_t end = std::min(offset + bytes, (o / kGranule + 1) * kGranule);
            std::lock_guard<std::mutex> lock(locks_[o / kGranule]);
            for (; o < end; ++o) atomicCell(o, a, where);
        }
    }
    // A cp.async issued: checked as a write now, in flight until it lands.
    void issueCopy(size_t offset, size_t bytes, const Actor &a, const Where &where) {
        for (size_t o = offset; o < offset + bytes;) {
            size_t end = std::min(offset + bytes, (o / kGranule + 1) * kGranule);
            std::lock_guard<std::mutex> lock(locks_[o / kGranule]);
            for (; o < end; ++o) {
                Cell &c = cells_[o];
                checkWrite(c, o, a, where);
                c.inflight = {a.clock, a.slot, a.line};
            }
        }
    }

private:
    static constexpr size_t kGranule = 32;
    std::vector<Cell> cells_;
    std::unique_ptr<std::mutex[]> locks_;

    // Program order orders a thread's own accesses; an asynchronous
    // operation is ordered only by the clocks it was issued with.
    static bool ordered(const Access &prior, const Actor &a) {
        return (prior.slot == a.slot && !a.async) || (*a.vc)[prior.slot] >= prior.clock;
    }
    // "byte 34 of Q_shared (shared offset 131106)", and the block when it is not the accessing thread's.
    static std::string at(size_t offset, const Where &where, uint32_t actor) {
        std::string text = where.tensorMemory ? "lane " + std::to_string(offset / 512) + ", column " + std::to_string(offset % 512) + " of tensor memory"
                                              : "byte " + std::to_string(static_cast<long long>(offset) - where.base) + " of " + where.buffer +
                                                    " (shared offset " + std::to_string(offset) + ")";
        if (actor >= run->threads || run->blockNames[actor / run->threadsPerBlock] != *where.block) text += " of block " + *where.block;
        return text;
    }

    static std::string unordered(size_t offset, const Where &where, const Actor &a, uint32_t other, const char *what) {
        return a.name() + " " + a.verb + " " + at(offset, where, a.slot) + ", not ordered after the " + what + " by " + run->who(other) +
               " (no barrier, mbarrier wait or named barrier between them)";
    }
    void inflightReport(const Cell &c, size_t offset, const Actor &a, const Where &where) {
        report(
            "race", a.line,
            [&] {
                return a.name() + " " + a.verb + " " + at(offset, where, a.slot) + " while a cp.async of " + run->who(c.inflight.slot) +
                       " to it is in flight (before the cp.async.wait_group that retires it)";
            },
            c.inflight.line, "the cp.async was issued here");
    }
    // A generic write read or overwritten through the async proxy needs a
    // fence.proxy.async by the writing thread, ordered before the access.
    void proxyCheck(const Cell &c, size_t offset, const Actor &a, const Where &where) {
        if (!a.async || !(c.flags & kWritten) || (c.flags & kAsyncWrite)) return;
        ThreadState *writer = run->thread(c.write.slot);
        if (writer && !writer->fencedBefore(c.write.clock, *a.vc))
            report(
                "proxy", a.line,
                [&] {
                    return a.name() + " " + a.verb + " " + at(offset, where, a.slot) + " through the async proxy, but " + run->who(c.write.slot) +
                           " wrote it through the generic proxy with no fence.proxy.async after the write and before this access";
                },
                c.write.line, "the generic write");
    }
    void readCell(size_t offset, const Actor &a, const Where &where, bool record) {
        Cell &c = cells_[offset];
        if (c.inflight.slot != kNoSlot) {
            inflightReport(c, offset, a, where);
        } else if (!(c.flags & kWritten)) {
            report("uninit", a.line, [&] { return a.name() + " " + a.verb + " " + at(offset, where, a.slot) + ", which nothing has written"; });
        } else {
            if (c.write.slot != kNoSlot && !ordered(c.write, a))
                report("race", a.line, [&] { return unordered(offset, where, a, c.write.slot, "write"); }, c.write.line, "the write");
            else proxyCheck(c, offset, a, where);   // a race is the first problem
            atomicsCheck(c, offset, a, where);
        }
        if (!record) return;
        Access mine{a.clock, a.slot, a.line};
        // Keep only reads not ordered before this one: a later write ordered
        // after this read is ordered after them too.
        if (c.read.slot == kNoSlot || ordered(c.read, a)) {
            c.read = mine;
        } else {
            auto &more = c.moreReads;
            if (!more) more = std::make_unique<std::vector<Access>>();
            more->erase(std::remove_if(more->begin(), more->end(), [&](const Access &r) { return ordered(r, a); }), more->end());
            more->push_back(mine);
        }
    }
    // A write (plain or atomic) must be ordered after the reads since the last write.
    void readsCheck(const Cell &c, size_t offset, const Actor &a, const Where &where) {
        auto readCheck = [&](const Access &r) {
            if (r.slot != kNoSlot && !ordered(r, a))
                report("race", a.line, [&] { return unordered(offset, where, a, r.slot, "read"); }, r.line, "the read");
        };
        readCheck(c.read);
        if (c.moreReads)
            for (const Access &r : *c.moreReads) readCheck(r);
    }
    void atomicsCheck(const Cell &c, size_t offset, const Actor &a, const Where &where) {
        if (!c.atomics) return;
        for (const Access &w : *c.atomics)
            if (!ordered(w, a))
                report("race", a.line, [&] { return unordered(offset, where, a, w.slot, "atomic update"); }, w.line, "the atomic update");
    }
    void atomicCell(size_t offset, const Actor &a, const Where &where) {
        Cell &c = cells_[offset];
        if (c.inflight.slot != kNoSlot) inflightReport(c, offset, a, where);
        if (!(c.flags & kWritten)) {
            report("uninit", a.line, [&] { return a.name() + " " + a.verb + " " + at(offset, where, a.slot) + ", which nothing has written"; });
        } else if (c.write.slot != kNoSlot && !ordered(c.write, a)) {
            report("race", a.line, [&] { return unordered(offset, where, a, c.write.slot, "write"); }, c.write.line, "the write");
        }
        readsCheck(c, offset, a, where);
        c.read = {};
        c.moreReads.reset();
        if (!c.atomics) c.atomics = std::make_unique<std::vector<Access>>();
        auto &list = *c.atomics;
        list.erase(std::remove_if(list.begin(), list.end(), [&](const Access &w) { return ordered(w, a); }), list.end());
        list.push_back({a.clock, a.slot, a.line});
        c.flags |= kWritten;
    }
    void checkWrite(Cell &c, size_t offset, const Actor &a, const Where &where) {
        if (c.inflight.slot != kNoSlot) inflightReport(c, offset, a, where);
        atomicsCheck(c, offset, a, where);
        if ((c.flags & kWritten) && c.write.slot != kNoSlot && !ordered(c.write, a))
            report("race", a.line, [&] { return unordered(offset, where, a, c.write.slot, "write"); }, c.write.line, "the other write");
        else proxyCheck(c, offset, a, where);
        readsCheck(c, offset, a, where);
    }
    void writeCell(size_t offset, const Actor &a, const Where &where, bool landing) {
        Cell &c = cells_[offset];
        if (landing) c.inflight = {};
        else checkWrite(c, offset, a, where);
        c.write = {a.clock, a.slot, a.line};
        c.flags = static_cast<uint8_t>(kWritten | (a.async ? kAsyncWrite : 0));
        c.read = {};
        c.moreReads.reset();
        c.atomics.reset();
    }
};

} // namespace emu::rc
