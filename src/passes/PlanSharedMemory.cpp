// PlanSharedMemory.cpp -- see PlanSharedMemory.h.
//
// 1. Number the statements in program order. A buffer's lifetime is the
//    range from its first to its last access, widened to whole loops for
//    accesses inside loops that enclose the buffer's allocation (the buffer
//    is live across their iterations). Consecutive ws(...) regions run at
//    the same time, so a buffer one of them touches is live across all of
//    them. Where the kernel does not fit that way, it is planned again with
//    a buffer that a single role alone touches keeping its lifetime in that
//    role's program order (conflicting with every buffer of the run's other
//    roles): automatic warp specialization puts a kernel's epilogue in the
//    consumer role, where its tiles can then reuse the main loop's bytes.
//    So may a tile a pipelined loop loads ahead (pipelineVersions) that one
//    role only fills with loads completing on barriers (the producer warp
//    group's TMA) and one other role uses: it lives from the run's start,
//    when the loads may begin, to its last use in the other role, whose
//    waits on those barriers saw the last load land.
// 2. Largest buffers first, each goes to the lowest aligned offset that does
//    not overlap a placed buffer with an intersecting lifetime.
#include "passes/PlanSharedMemory.h"

#include "ir/Effects.h"
#include "ir/BufferEdits.h"
#include "ir/Visitor.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace tilet {

namespace {

struct Lifetime {
    ir::Buffer buffer;
    int64_t first = INT64_MAX, last = -1;
    int64_t bytes = 0, align = 16;
    size_t allocDepth = 0;   // loops enclosing the allocation
    int64_t order = 0;
    bool widened = false;    // live across a whole run of ws(...) regions
    int run = -1;            // the run of ws(...) regions whose one role `role` alone touches it (-1: none)
    size_t role = 0;
};

// Whether two buffers may not share bytes.
bool conflict(const Lifetime &a, const Lifetime &b) {
    if (!(a.last < b.first || b.last < a.first)) return true;
    return a.run >= 0 && a.run == b.run && a.role != b.role;   // different roles run at the same time
}

class LifetimeWalker : public ir::Visitor {
public:
    // `roleLifetimes`: a buffer a single role of a run of ws(...) regions
    // touches keeps its own lifetime (else it lives across the whole run).
    explicit LifetimeWalker(bool roleLifetimes) : roleLifetimes_(roleLifetimes) {}
    std::map<const ir::BufferNode *, Lifetime> lifetimes;
    std::vector<const ir::BufferNode *> order;

    void visit(const ir::Stmt &s) override {
        if (!s) return;
        ++position_;
        for (const ir::Access &a : ir::ownEffects(s).accesses) {
            touch(a.buffer);
            // Anything but a load that completes on a barrier (a TMA load).
            bool barrierLoad = a.writes() && !a.reads() && a.asynchronous && a.completesOn;
            if (roleDepth_ == 1 && !barrierLoad) usedBy_[&ir::storageRoot(*a.buffer)].insert(role_);
        }
        ir::Visitor::visit(s);
    }
    using ir::Visitor::visit;

    void visitAllocate(const ir::Allocate &n) override {
        // A view of another block's buffer, or of a buffer's bytes, has no bytes of its own.
        if ((n.buffer->scope == ir::MemScope::Shared || n.buffer->scope == ir::MemScope::Barrier) && !n.buffer->remoteOf && !n.buffer->viewOf) {
            Lifetime &l = lifetimes[n.buffer.get()];
            l.buffer = n.buffer;
            l.allocDepth = loops_.size();
            l.order = static_cast<int64_t>(order.size());
            order.push_back(n.buffer.get());
        }
        ir::Visitor::visitAllocate(n);
    }
    void visitSeq(const ir::Seq &n) override {
        size_t i = 0;
        while (i < n.stmts.size()) {
            if (!ir::as<ir::WarpSpecialize>(n.stmts[i])) {
                visit(n.stmts[i++]);
                continue;
            }
            // A run of roles: a buffer two roles touch lives from its start to
            // its end; one a single role touches keeps its own lifetime, tagged
            // with the run and the role (outermost runs only).
            int64_t start = position_ + 1;
            std::vector<const ir::BufferNode *> outer = std::move(touchedInRoles_);
            touchedInRoles_.clear();
            ++roleDepth_;
            std::map<const ir::BufferNode *, std::set<size_t>> rolesOf;
            std::map<const ir::BufferNode *, std::map<size_t, int64_t>> lastIn;   // the last position of each role's use
            if (roleDepth_ == 1) usedBy_.clear();
            for (size_t role = 0; i < n.stmts.size() && ir::as<ir::WarpSpecialize>(n.stmts[i]); ++role) {
                size_t before = touchedInRoles_.size();
                if (roleDepth_ == 1) role_ = role;
                visit(n.stmts[i++]);
                for (size_t t = before; t < touchedInRoles_.size(); ++t) {
                    rolesOf[touchedInRoles_[t]].insert(role);
                    lastIn[touchedInRoles_[t]][role] = lifetimes[touchedInRoles_[t]].last;
                }
            }
            --roleDepth_;
            const int run = static_cast<int>(runs_.size());
            runs_.push_back({start, position_});
            for (const auto &[b, roles] : rolesOf) {
                Lifetime &l = lifetimes[b];
                if (roleLifetimes_ && roleDepth_ == 0 && roles.size() == 1 && l.run < 0 && !l.widened) {
                    l.run = run;
                    l.role = *roles.begin();
                    continue;
                }
                const std::set<size_t> &users = usedBy_[b];
                if (roleLifetimes_ && roleDepth_ == 0 && roles.size() == 2 && users.size() == 1 && b->pipelineVersions > 0 && l.run < 0 && !l.widened) {
                    l.run = run;
                    l.role = *users.begin();
                    l.first = start;
                    l.last = lastIn[b][l.role];
                    continue;
                }
                // Live across the whole run (and across a run it was tagged with before).
                if (l.run >= 0) {
                    l.first = std::min(l.first, runs_[static_cast<size_t>(l.run)].first);
                    l.last = std::max(l.last, runs_[static_cast<size_t>(l.run)].second);
                    l.run = -1;
                }
                l.widened = true;
                l.first = std::min(l.first, start);
                l.last = std::max(l.last, position_);
            }
            outer.insert(outer.end(), touchedInRoles_.begin(), touchedInRoles_.end());
            touchedInRoles_ = std::move(outer);
        }
    }
    void visitFor(const ir::For &n) override {
        widened([&] { ir::Visitor::visitFor(n); });
    }
    void visitWhile(const ir::While &n) override {
        widened([&] { ir::Visitor::visitWhile(n); });
    }
    void visitIfThenElse(const ir::IfThenElse &n) override {
        visit(n.cond);
        widened([&] { visit(n.thenBody); });
        widened([&] { visit(n.elseBody); });
    }

private:
    // Accesses inside a loop from buffers allocated outside it live for the
    // whole loop (its iterations); inside one arm of a branch, for the whole
    // arm: threads that take a branch differently have no barrier inside it
    // (insert-syncs takes such a branch as one unit), so one thread may still
    // read a buffer in the arm while another writes the next one.
    void widened(const std::function<void()> &walk) {
        loops_.push_back({position_, -1});
        size_t mine = loops_.size() - 1;
        pendingByLoop_.emplace_back();
        walk();
        int64_t end = position_;
        for (const ir::BufferNode *b : pendingByLoop_.back()) {
            Lifetime &l = lifetimes[b];
            if (l.allocDepth <= mine) {
                l.first = std::min(l.first, loops_[mine].first);
                l.last = std::max(l.last, end);
            }
        }
        std::vector<const ir::BufferNode *> inner = std::move(pendingByLoop_.back());
        pendingByLoop_.pop_back();
        if (!pendingByLoop_.empty()) pendingByLoop_.back().insert(pendingByLoop_.back().end(), inner.begin(), inner.end());
        loops_.pop_back();
    }

    void touch(const ir::BufferNode *b) {
        if (b->remoteOf) b = b->remoteOf.get();   // this block's buffer lives while its peers write theirs
        b = &ir::storageRoot(*b);                   // a view's bytes are its buffer's
        auto it = lifetimes.find(b);
        if (it == lifetimes.end()) return;
        it->second.first = std::min(it->second.first, position_);
        it->second.last = std::max(it->second.last, position_);
        if (!pendingByLoop_.empty()) pendingByLoop_.back().push_back(b);
        if (roleDepth_) touchedInRoles_.push_back(b);
    }
    int64_t position_ = 0;
    std::vector<std::pair<int64_t, int64_t>> loops_;
    std::vector<std::vector<const ir::BufferNode *>> pendingByLoop_;
    bool roleLifetimes_;
    int roleDepth_ = 0;
    std::vector<const ir::BufferNode *> touchedInRoles_;
    size_t role_ = 0;   // the role of the outermost run being walked
    // The roles of the run being walked that use each buffer other than by
    // loads completing on a barrier.
    std::map<const ir::BufferNode *, std::set<size_t>> usedBy_;
    std::vector<std::pair<int64_t, int64_t>> runs_;   // each run of ws(...) regions: its first and last position
};

int64_t alignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

std::string shapeStr(const ir::BufferNode &b) {
    std::string s = std::string(dtypeName(b.dtype)) + " [";
    for (size_t i = 0; i < b.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(*ir::constInt(b.shape[i]));
    return s + "]";
}

// Where each buffer goes: the largest first, each at the lowest aligned
// offset clear of the placed buffers it conflicts with.
struct Placement {
    std::vector<Lifetime> buffers;
    std::vector<std::pair<size_t, int64_t>> placed;   // buffer index, offset
    int64_t total = 0, alignment = 16;
    std::vector<std::string> reuse;
};

Placement place(const ir::Kernel &kernel, bool roleLifetimes) {
    LifetimeWalker walker(roleLifetimes);
    walker.visit(kernel.body);
    Placement p;
    std::vector<Lifetime> &buffers = p.buffers;
    for (const ir::BufferNode *b : walker.order) {
        Lifetime l = walker.lifetimes[b];
        l.bytes = *b->constElements() * dtypeBits(b->dtype) / 8;
        l.align = std::max<int64_t>(16, b->alignment);
        if (l.last < 0) l.first = l.last = 0;   // allocated but unused: still gets bytes
        // mbarriers keep their state for the whole kernel: their bytes are never shared.
        if (b->scope == ir::MemScope::Barrier) l.first = 0, l.last = INT64_MAX;
        buffers.push_back(l);
    }
    std::vector<size_t> byPriority(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) byPriority[i] = i;
    std::stable_sort(byPriority.begin(), byPriority.end(), [&](size_t a, size_t b) {
        if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
        return buffers[a].first < buffers[b].first;
    });
    for (size_t i : byPriority) {
        Lifetime &l = buffers[i];
        auto overlaps = [&](size_t j) { return conflict(buffers[j], l); };
        std::vector<int64_t> candidates{0};
        for (auto &[j, off] : p.placed) {
            if (overlaps(j)) candidates.push_back(alignUp(off + buffers[j].bytes, l.align));
        }
        std::sort(candidates.begin(), candidates.end());
        int64_t chosen = 0;
        for (int64_t c : candidates) {
            c = alignUp(c, l.align);
            bool free = true;
            for (auto &[j, off] : p.placed) {
                if (overlaps(j) && c < off + buffers[j].bytes && off < c + l.bytes) free = false;
            }
            if (free) { chosen = c; break; }
        }
        for (auto &[j, off] : p.placed) {
            if (!overlaps(j) && chosen < off + buffers[j].bytes && off < chosen + l.bytes)
                p.reuse.push_back("'" + l.buffer->name + "' reuses bytes of '" + buffers[j].buffer->name + "' (their lifetimes do not overlap" +
                                  (l.run >= 0 && l.run == buffers[j].run ? ", in the one role that uses both" : "") + ")");
        }
        p.placed.push_back({i, chosen});
        p.total = std::max(p.total, chosen + l.bytes);
        p.alignment = std::max(p.alignment, l.align);
    }
    return p;
}

} // namespace

ir::Kernel planSharedMemory(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    // Every buffer of a run of roles first lives across the whole run: where
    // that does not fit, a buffer one role alone uses keeps its own lifetime
    // in that role (more bytes shared, at the cost of the barriers that
    // sharing them needs).
    Placement plan = place(kernel, false);
    int64_t wholeRuns = plan.total;
    bool roleLifetimes = false;
    if (plan.total > ctx.target.maxSharedPerBlock) {
        Placement tighter = place(kernel, true);
        if (tighter.total < plan.total) plan = std::move(tighter), roleLifetimes = true;
    }
    const std::vector<Lifetime> &buffers = plan.buffers;
    ir::BufferEdits offsets;
    for (auto &[i, off] : plan.placed) offsets.edit(buffers[i].buffer).sharedOffset = off;
    const int64_t total = plan.total, alignment = plan.alignment;
    const std::vector<std::string> &reuse = plan.reuse;
    const std::vector<std::pair<size_t, int64_t>> &placed = plan.placed;
    offsets.applyTo(out);
    out.dynamicSharedBytes = total;
    out.sharedAlignment = alignment;
    if (total > ctx.target.maxSharedPerBlock) {
        Diagnostic d{Severity::Error, kernel.span, "kernel '" + kernel.name + "' needs " + std::to_string(total) +
                                                       " bytes of shared memory but " + ctx.target.name + " allows " +
                                                       std::to_string(ctx.target.maxSharedPerBlock) + " per block", {}, {}};
        for (const Lifetime &l : buffers)
            d.note(l.buffer->span, "'" + l.buffer->name + "': " + std::to_string(l.bytes) + " bytes (" + shapeStr(*l.buffer) + ")");
        ctx.diags.report(std::move(d));
        return out;
    }
    if (!buffers.empty()) {
        Decision d;
        d.where = kernel.span;
        d.op = "shared memory of '" + kernel.name + "'";
        d.choice = std::to_string(total) + " bytes of dynamic shared memory";
        d.why = total > 48 * 1024 ? "above 48 KiB: the host init function opts in" : "within the default 48 KiB";
        for (auto &[i, off] : placed) {
            const Lifetime &l = buffers[i];
            d.details.push_back("'" + l.buffer->name + "' at offset " + std::to_string(off) + ": " + std::to_string(l.bytes) + " bytes (" + shapeStr(*l.buffer) + ")");
        }
        if (roleLifetimes)
            d.details.push_back("with every buffer of the ws(...) roles live across all of them it would need " + std::to_string(wholeRuns) +
                                " bytes: a buffer one role alone uses keeps its lifetime in that role, so later tiles of the role reuse its bytes");
        for (const std::string &r : reuse) d.details.push_back(r);
        ctx.explain.record(std::move(d));
    }
    return out;
}

} // namespace tilet
