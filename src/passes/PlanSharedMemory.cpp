// PlanSharedMemory.cpp -- see PlanSharedMemory.h.
//
// 1. Number the statements in program order. A buffer's lifetime is the
//    range from its first to its last access, widened to whole loops for
//    accesses inside loops that enclose the buffer's allocation (the buffer
//    is live across their iterations). Consecutive ws(...) regions run at
//    the same time, so a buffer one of them touches is live across all of
//    them.
// 2. Largest buffers first, each goes to the lowest aligned offset that does
//    not overlap a placed buffer with an intersecting lifetime.
#include "passes/PlanSharedMemory.h"

#include "ir/Effects.h"
#include "ir/BufferEdits.h"
#include "ir/Visitor.h"

#include <algorithm>
#include <functional>
#include <map>

namespace tilet {

namespace {

struct Lifetime {
    ir::Buffer buffer;
    int64_t first = INT64_MAX, last = -1;
    int64_t bytes = 0, align = 16;
    size_t allocDepth = 0;   // loops enclosing the allocation
    int64_t order = 0;
};

class LifetimeWalker : public ir::Visitor {
public:
    std::map<const ir::BufferNode *, Lifetime> lifetimes;
    std::vector<const ir::BufferNode *> order;

    void visit(const ir::Stmt &s) override {
        if (!s) return;
        ++position_;
        for (const ir::Access &a : ir::ownEffects(s).accesses) touch(a.buffer);
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
            // A run of roles: every buffer touched in it lives from its start to its end.
            int64_t start = position_ + 1;
            std::vector<const ir::BufferNode *> outer = std::move(touchedInRoles_);
            touchedInRoles_.clear();
            ++roleDepth_;
            while (i < n.stmts.size() && ir::as<ir::WarpSpecialize>(n.stmts[i])) visit(n.stmts[i++]);
            --roleDepth_;
            for (const ir::BufferNode *b : touchedInRoles_) {
                Lifetime &l = lifetimes[b];
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
    int roleDepth_ = 0;
    std::vector<const ir::BufferNode *> touchedInRoles_;
};

int64_t alignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

std::string shapeStr(const ir::BufferNode &b) {
    std::string s = std::string(dtypeName(b.dtype)) + " [";
    for (size_t i = 0; i < b.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(*ir::constInt(b.shape[i]));
    return s + "]";
}

} // namespace

ir::Kernel planSharedMemory(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    LifetimeWalker walker;
    walker.visit(kernel.body);
    std::vector<Lifetime> buffers;
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
    std::vector<std::pair<size_t, int64_t>> placed;   // buffer index, offset
    ir::BufferEdits offsets;
    int64_t total = 0, alignment = 16;
    std::vector<std::string> reuse;
    for (size_t i : byPriority) {
        Lifetime &l = buffers[i];
        auto overlaps = [&](size_t j) { return !(buffers[j].last < l.first || l.last < buffers[j].first); };
        std::vector<int64_t> candidates{0};
        for (auto &[j, off] : placed) {
            if (overlaps(j)) candidates.push_back(alignUp(off + buffers[j].bytes, l.align));
        }
        std::sort(candidates.begin(), candidates.end());
        int64_t chosen = 0;
        for (int64_t c : candidates) {
            c = alignUp(c, l.align);
            bool free = true;
            for (auto &[j, off] : placed) {
                if (overlaps(j) && c < off + buffers[j].bytes && off < c + l.bytes) free = false;
            }
            if (free) { chosen = c; break; }
        }
        for (auto &[j, off] : placed) {
            if (!overlaps(j) && chosen < off + buffers[j].bytes && off < chosen + l.bytes)
                reuse.push_back("'" + l.buffer->name + "' reuses bytes of '" + buffers[j].buffer->name + "' (their lifetimes do not overlap)");
        }
        placed.push_back({i, chosen});
        offsets.edit(l.buffer).sharedOffset = chosen;
        total = std::max(total, chosen + l.bytes);
        alignment = std::max(alignment, l.align);
    }
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
        for (const std::string &r : reuse) d.details.push_back(r);
        ctx.explain.record(std::move(d));
    }
    return out;
}

} // namespace tilet
