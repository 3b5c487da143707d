// OverlapIntraWarpgroup.cpp -- see OverlapIntraWarpgroup.h.
#include "passes/OverlapIntraWarpgroup.h"

#include "ir/Effects.h"
#include "ir/Visitor.h"
#include "target/Target.h"

#include <algorithm>
#include <set>
#include <utility>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

// One statement of a loop body's straight line, or a binding (`let`) that
// is in scope for the items after it.
struct Item {
    Stmt stmt;                  // null for a binding
    ir::VarRef var;
    Expr value;
    SourceRange span;
};

void flatten(const Stmt &s, std::vector<Item> &out) {
    if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
        for (const Stmt &x : q->stmts) flatten(x, out);
    } else if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
        out.push_back(Item{nullptr, l->var, l->value, l->span});
        flatten(l->body, out);
    } else if (s) {
        out.push_back(Item{s, nullptr, nullptr, s->span});
    }
}

// The items as nested statements: each binding scopes over the items after it.
Stmt rebuild(const std::vector<Item> &items, size_t from = 0) {
    std::vector<Stmt> run;
    for (size_t i = from; i < items.size(); ++i) {
        if (items[i].stmt) { run.push_back(items[i].stmt); continue; }
        run.push_back(std::make_shared<ir::LetStmt>(items[i].var, items[i].value, rebuild(items, i + 1), items[i].span));
        break;
    }
    return ir::seq(std::move(run));
}

// A copy of the items with `map` applied and every binding made anew (added
// to `map` for the items after it): a peeled copy declares its own variables,
// so no variable is bound twice where simplify may inline a one-trip loop
// into its neighbours' scope.
using VarMap = std::vector<std::pair<ir::VarRef, Expr>>;
std::vector<Item> copied(const std::vector<Item> &items, VarMap &map) {
    std::vector<Item> out;
    for (const Item &it : items) {
        if (it.stmt) {
            out.push_back(Item{ir::substitute(it.stmt, map), nullptr, nullptr, it.span});
            continue;
        }
        auto fresh = std::make_shared<ir::VarNode>(it.var->dtype, it.var->name, it.var->span, it.var->divisor);
        out.push_back(Item{nullptr, fresh, ir::substitute(it.value, map), it.span});
        map.emplace_back(it.var, fresh);
    }
    return out;
}

std::vector<Item> slice(const std::vector<Item> &items, size_t from, size_t to) {
    return std::vector<Item>(items.begin() + static_cast<std::ptrdiff_t>(from), items.begin() + static_cast<std::ptrdiff_t>(to));
}

const ir::WgmmaSync *wgmmaSync(const Item &it, ir::WgmmaSyncKind k) {
    const ir::WgmmaSync *w = it.stmt ? ir::as<ir::WgmmaSync>(it.stmt) : nullptr;
    return w && w->sync == k ? w : nullptr;
}

// A stage release: an elected thread (or every thread) arriving on mbarriers.
bool isRelease(const Item &it) {
    if (!it.stmt) return false;
    const Stmt &body = ir::as<ir::Elect>(it.stmt) ? ir::as<ir::Elect>(it.stmt)->body : it.stmt;
    bool arrivals = false, other = false;
    ir::forEachStmt(body, [&](const Stmt &s) {
        if (ir::as<ir::BarrierArrive>(s)) arrivals = true;
        else if (!ir::as<ir::Seq>(s)) other = true;
    });
    return arrivals && !other;
}

// The buffers the items read and those they write; a fragment is its
// register array (wgmma names the array, parallel loops the fragment).
struct Footprint {
    std::set<const ir::BufferNode *> reads, writes;
    std::set<const ir::BufferNode *> wgmmaRegisters;   // registers a wgmma reads or writes asynchronously
    bool touches(const ir::BufferNode *b) const { return reads.count(b) || writes.count(b); }
    // Whether the two must keep their order: one writes what the other
    // touches, or both touch registers (the PTX ISA leaves any access of a
    // wgmma's accumulators or A registers before its wait undefined).
    bool conflicts(const Footprint &o) const {
        for (const ir::BufferNode *b : writes)
            if (o.touches(b)) return true;
        for (const ir::BufferNode *b : o.writes)
            if (touches(b)) return true;
        for (const ir::BufferNode *b : wgmmaRegisters)
            if (o.touches(b)) return true;
        for (const ir::BufferNode *b : o.wgmmaRegisters)
            if (touches(b)) return true;
        return false;
    }
};

Footprint footprint(const std::vector<Item> &items, size_t from, size_t to) {
    Footprint f;
    for (size_t i = from; i < to; ++i) {
        // A binding's value may load too.
        Stmt s = items[i].stmt ? items[i].stmt : std::make_shared<ir::LetStmt>(items[i].var, items[i].value, ir::seq({}), items[i].span);
        ir::forEachEffect(s, [&](const Stmt &, const ir::Effects &fx) {
            for (const ir::Access &a : fx.accesses) {
                const ir::BufferNode *storage = a.buffer->registers ? a.buffer->registers.get() : a.buffer;
                if (a.reads()) f.reads.insert(storage);
                if (a.writes()) f.writes.insert(storage);
                if (a.asynchronous && storage->scope == ir::MemScope::Local) f.wgmmaRegisters.insert(storage);
            }
        });
    }
    return f;
}

// Registers a thread holds for the register arrays (fragments) among `buffers`.
int64_t registersOf(const std::set<const ir::BufferNode *> &buffers) {
    int64_t words = 0;
    for (const ir::BufferNode *b : buffers) {
        std::optional<int64_t> n = b->constElements();
        if (b->scope == ir::MemScope::Local && n) words += (*n * dtypeBits(b->dtype) + 31) / 32;
    }
    return words;
}

// Registers left for everything but the overlapped fragments: addresses,
// loop counters and the work's temporaries (the softmax's row maxima,
// sums and exponentials). FlashAttention-3's D = 128 tiles keep S, P and O,
// 160 registers a thread, under the 240 setmaxnreg gives two consumer warp
// groups; mha_inference's 224 (S 64, P 32, O 128 on one warp group) made
// ptxas spill 172 bytes.
constexpr int64_t kRegisterHeadroom = 64;

class Overlapper : public ir::Mutator {
public:
    Overlapper(const ir::Kernel &kernel, PassContext &ctx)
        : ctx_(ctx),
          // Without a setmaxnreg, a thread has what the launch leaves it
          // (the SM's registers over its threads, in units of 8).
          launchRegisters_(std::min(ctx.target.maxRegistersPerThread,
                                    ctx.target.registersPerSm / std::max<int64_t>(1, kernel.threads * kernel.minBlocksPerSm) / 8 * 8)) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateWarpSpecialize(const Stmt &self, const ir::WarpSpecialize &n) override {
        // The role's budget: its setmaxnreg (specialize-warps' split, or the
        // program's), else the launch's.
        int64_t budget = launchRegisters_;
        bool found = false;
        ir::forEachStmt(n.body, [&](const Stmt &s) {
            if (const ir::SetMaxNReg *r = ir::as<ir::SetMaxNReg>(s); r && !found) budget = r->count, found = true;
        });
        int64_t outer = std::exchange(roleRegisters_, budget);
        Stmt out = ir::Mutator::mutateWarpSpecialize(self, n);
        roleRegisters_ = outer;
        return out;
    }

    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        Stmt base = ir::Mutator::mutateFor(self, n);
        std::string whyNot;
        Stmt out;
        if (base != self) whyNot = "a loop inside it was rotated";
        else if (n.consumerStages == 0)
            whyNot = "only the consumers' loop of automatic warp specialization is rotated (its stage ring lets the second group's stages be "
                     "released one iteration's work later)";
        else if (n.forKind != ir::ForKind::Serial) whyNot = "the loop is not serial";
        else out = rotate(n, whyNot);
        if (out) return out;
        if (n.overlap == true)
            ctx_.diags.error(n.span, "overlap = true cannot be honoured: " + (whyNot.empty() ? "the loop does not issue two wgmma groups per iteration" : whyNot));
        else if (!whyNot.empty() && n.consumerStages > 0 && base == self)
            record(n, "none", whyNot);
        return base;
    }

private:
    void record(const ir::For &f, const std::string &choice, const std::string &why, std::vector<std::string> details = {}) {
        Decision d;
        d.where = f.span;
        d.op = "intra-warp-group overlap";
        d.choice = choice;
        d.why = why;
        d.details = std::move(details);
        ctx_.explain.record(std::move(d));
    }

    // The rotated loop, or null with the reason in `whyNot` (left empty for
    // a loop that does not issue two wgmma groups).
    Stmt rotate(const ir::For &f, std::string &whyNot) {
        std::vector<Item> items;
        flatten(f.body, items);
        std::vector<size_t> fences, commits;
        for (size_t i = 0; i < items.size(); ++i) {
            if (wgmmaSync(items[i], ir::WgmmaSyncKind::Fence)) fences.push_back(i);
            if (wgmmaSync(items[i], ir::WgmmaSyncKind::Commit)) commits.push_back(i);
        }
        size_t groupsAnywhere = 0;
        ir::forEachStmt(f.body, [&](const Stmt &s) {
            if (const ir::WgmmaSync *w = ir::as<ir::WgmmaSync>(s); w && w->sync == ir::WgmmaSyncKind::Commit) ++groupsAnywhere;
        });
        if (groupsAnywhere != 2) return nullptr;
        if (f.overlap == false) {
            whyNot = "overlap = false";
            return nullptr;
        }

        if (fences.size() != 2 || commits.size() != 2) {
            whyNot = "its wgmma groups are issued under a branch or in an inner loop";
            return nullptr;
        }
        const size_t c1 = commits[0], f2 = fences[1], c2 = commits[1];
        // Each group waited for right after it is issued, then its stages released.
        auto waitedAt = [&](size_t c) {
            const ir::WgmmaSync *w = c + 1 < items.size() ? wgmmaSync(items[c + 1], ir::WgmmaSyncKind::Wait) : nullptr;
            return w && w->pending == 0;
        };
        if (!waitedAt(c1) || !waitedAt(c2)) {
            whyNot = "its wgmma groups are not each waited for right after they are issued";
            return nullptr;
        }
        size_t r1 = c1 + 2;   // end of the first group's releases
        while (r1 < f2 && isRelease(items[r1])) ++r1;
        size_t tail = c2 + 2;
        while (tail < items.size() && isRelease(items[tail])) ++tail;
        if (tail != items.size()) {
            whyNot = "its second wgmma group is not the last thing an iteration does";
            return nullptr;
        }
        // The second group's own preamble: its stage waits and bindings.
        size_t s2 = f2;
        while (s2 > r1 && (!items[s2 - 1].stmt || ir::as<ir::BarrierWait>(items[s2 - 1].stmt))) --s2;
        bool work = false;
        for (size_t i = r1; i < s2; ++i) work = work || ir::computesBesideWgmma(items[i].stmt);
        if (!work) {
            whyNot = "nothing but its wgmma runs between its two wgmma groups";
            return nullptr;
        }
        // G2 of iteration k - 1 moves after G1 of iteration k: they must touch
        // disjoint memory, and G2 may use no binding made before it.
        Footprint first = footprint(items, 0, c1 + 1), second = footprint(items, s2, items.size());
        if (first.conflicts(second)) {
            whyNot = "its second wgmma group shares memory with its first (one writes what the other reads or writes)";
            return nullptr;
        }
        // With one stage, a tile both groups read is released only after the
        // second: rotated, the first group of k would wait for that tile's
        // refill before the second group of k - 1 releases it. (Tiles on
        // their own rings, as K and V, are released by the group that reads them.)
        if (f.consumerStages < 2)
            for (const ir::BufferNode *b : first.reads)
                if (b->scope == ir::MemScope::Shared && second.reads.count(b)) {
                    whyNot = "its tiles have one stage and both wgmma groups read '" + b->name +
                             "': the second group of k - 1 would release it only after the first group of k waited for its refill";
                    return nullptr;
                }
        std::set<const ir::VarNode *> boundBefore;
        for (size_t i = 0; i < s2; ++i)
            if (!items[i].stmt) boundBefore.insert(items[i].var.get());
        bool usesEarlierBinding = false;
        for (size_t i = s2; i < items.size(); ++i) {
            auto check = [&](const Expr &e) {
                if (const ir::VarNode *v = ir::as<ir::VarNode>(e); v && boundBefore.count(v)) usesEarlierBinding = true;
            };
            if (items[i].stmt) ir::forEachExpr(items[i].stmt, check);
            else ir::forEachExpr(items[i].value, check);
        }
        if (usesEarlierBinding) {
            whyNot = "its second wgmma group uses a value bound earlier in the iteration";
            return nullptr;
        }
        // Its wait moves to the first statement of the work that touches its memory.
        size_t w = r1;
        while (w < s2 && !(items[w].stmt && footprint(items, w, w + 1).conflicts(second))) ++w;
        // (A read of what G2 only reads does not conflict; nor may it be moved
        // past G2's writes: any access of what G2 writes conflicts.)
        // S of k is written while P and O of k - 1 are still read and
        // written: all of them live at once.
        std::set<const ir::BufferNode *> live = first.writes;
        live.insert(second.reads.begin(), second.reads.end());
        live.insert(second.writes.begin(), second.writes.end());
        const int64_t registers = registersOf(live);
        const int64_t limit = roleRegisters_ ? roleRegisters_ : launchRegisters_;
        if (registers + kRegisterHeadroom > limit) {
            whyNot = "the fragments both wgmma groups would keep live at once take " + std::to_string(registers) + " registers a thread, which with " +
                     std::to_string(kRegisterHeadroom) + " for the rest exceeds the " + std::to_string(limit) + " a consumer thread has";
            return nullptr;
        }
        std::optional<int64_t> trips = ir::constInt(f.extent);
        if (trips && *trips < 2) {
            whyNot = "the loop runs fewer than two iterations";
            return nullptr;
        }

        const SourceRange span = f.span;
        Expr previous = ir::sub(f.var, ir::intImm(1));
        Expr last = ir::sub(ir::add(f.min, f.extent), ir::intImm(1));
        VarMap atFirst{{f.var, f.min}}, atPrevious{{f.var, previous}}, atLast{{f.var, last}};
        std::vector<Item> prologue = copied(slice(items, 0, s2), atFirst);
        std::vector<Item> body = slice(items, 0, c1 + 1);
        for (const Item &it : copied(slice(items, s2, c2 + 1), atPrevious)) body.push_back(it);
        body.push_back(Item{std::make_shared<ir::WgmmaSync>(ir::WgmmaSyncKind::Wait, 1, items[c2 + 1].span), nullptr, nullptr, span});
        for (const Item &it : slice(items, c1 + 2, w)) body.push_back(it);
        body.push_back(items[c2 + 1]);
        for (const Item &it : copied(slice(items, c2 + 2, items.size()), atPrevious)) body.push_back(it);
        for (const Item &it : slice(items, w, s2)) body.push_back(it);
        std::vector<Item> epilogue = copied(slice(items, s2, items.size()), atLast);

        Stmt loop = ir::rebuildFor(f, ir::add(f.min, ir::intImm(1)), ir::sub(f.extent, ir::intImm(1)), rebuild(body));
        Stmt out = ir::seq({rebuild(prologue), loop, rebuild(epilogue)});
        if (!trips) out = std::make_shared<ir::IfThenElse>(ir::binary(ir::BinaryOp::Gt, f.extent, ir::intImm(0)), out, nullptr, span);

        int firstLine = items[fences[0]].span.begin.line, secondLine = items[f2].span.begin.line;
        std::string waitLine = w < s2 ? std::to_string(items[w].span.begin.line) : "the end of the iteration";
        record(f, "iteration k issues the wgmma group of line " + std::to_string(firstLine) + " for k and then that of line " +
                      std::to_string(secondLine) + " for k - 1; wgmma.wait_group 1 retires the first before the work between them, "
                      "wgmma.wait_group 0 the second before line " + waitLine,
               "the work between the two groups (line " + std::to_string(items[r1].span.begin.line) + " on) runs while the tensor cores do the "
               "second group of the previous iteration (FlashAttention-3's intra-warpgroup overlap); it touches nothing that group does "
               "before that wait",
               {"the first iteration's first group and work run before the loop, the last iteration's second group after it",
                "the stages the second group reads are released after its wait, one iteration's work later than before"});
        return out;
    }

    PassContext &ctx_;
    const int64_t launchRegisters_;   // a thread's registers without setmaxnreg
    int64_t roleRegisters_ = 0;       // of the enclosing role (0: none)
};

} // namespace

ir::Kernel overlapIntraWarpgroup(const ir::Kernel &kernel, PassContext &ctx) {
    if (kernel.waitsForWgmma) return kernel;   // the program's own waits (overlap-wgmma explains)
    ir::Kernel out = kernel;
    out.body = Overlapper(kernel, ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
