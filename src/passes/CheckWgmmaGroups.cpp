// CheckWgmmaGroups.cpp -- see CheckWgmmaGroups.h.
#include "passes/CheckWgmmaGroups.h"

#include "ir/Effects.h"
#include "ir/Visitor.h"
#include "support/InternalError.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace tilet {

namespace {

using ir::Stmt;

// What the wgmmas of one group (or of the wgmmas issued since the last
// commit) access until the group is finished.
struct Group {
    std::set<const ir::BufferNode *> reads, writes;
    SourceRange gemm;   // the first gemm that issued into it
    bool operator==(const Group &o) const { return reads == o.reads && writes == o.writes; }
    void add(const Group &o) {
        reads.insert(o.reads.begin(), o.reads.end());
        writes.insert(o.writes.begin(), o.writes.end());
        if (!gemm.valid()) gemm = o.gemm;
    }
};

// The groups in flight, oldest first, and the wgmmas not yet committed.
struct InFlight {
    std::vector<Group> committed;
    Group open;
    bool operator==(const InFlight &o) const { return committed == o.committed && open == o.open; }
};

// At most this many groups are told apart; older ones are merged (the
// hardware keeps no more in flight than a program commits before waiting).
constexpr size_t kMaxGroups = 8;

void capGroups(InFlight &s) {
    while (s.committed.size() > kMaxGroups) {
        s.committed[1].add(s.committed[0]);
        s.committed.erase(s.committed.begin());
    }
}

// Either of two ways: group i from the newest of one joined with group i from
// the newest of the other (what a wait_group n keeps is the newest n).
InFlight join(const InFlight &a, const InFlight &b) {
    InFlight out;
    const std::vector<Group> &longer = a.committed.size() >= b.committed.size() ? a.committed : b.committed;
    const std::vector<Group> &shorter = a.committed.size() >= b.committed.size() ? b.committed : a.committed;
    out.committed = longer;
    for (size_t i = 0; i < shorter.size(); ++i) out.committed[longer.size() - 1 - i].add(shorter[shorter.size() - 1 - i]);
    out.open = a.open;
    out.open.add(b.open);
    return out;
}

class Checker {
public:
    Checker(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx) {}

    // False once a problem was reported.
    bool walk(const Stmt &s, InFlight &state) {
        if (!s || failed_) return !failed_;
        // Statements a lowering made (a reduction's shuffles) may carry no
        // place of their own: a finding points at the nearest one that does.
        SourceRange outer = where_;
        if (s->span.valid()) where_ = s->span;
        bool ok = walkStatement(s, state);
        where_ = outer;
        return ok;
    }

private:
    bool walkStatement(const Stmt &s, InFlight &state) {
        switch (s->kind) {
        case ir::StmtKind::Seq:
            for (const Stmt &x : ir::as<ir::Seq>(s)->stmts)
                if (!walk(x, state)) return false;
            return true;
        case ir::StmtKind::LetStmt: return leaf(s, state) && walk(ir::as<ir::LetStmt>(s)->body, state);
        case ir::StmtKind::Allocate: return walk(ir::as<ir::Allocate>(s)->body, state);
        case ir::StmtKind::For: return leaf(s, state) && loop(ir::as<ir::For>(s)->body, state, nullptr);
        case ir::StmtKind::While: return loop(ir::as<ir::While>(s)->body, state, &s);
        case ir::StmtKind::IfThenElse: {
            const ir::IfThenElse &i = *ir::as<ir::IfThenElse>(s);
            if (!leaf(s, state)) return false;
            InFlight otherwise = state;
            if (!walk(i.thenBody, state) || !walk(i.elseBody, otherwise)) return false;
            state = join(state, otherwise);
            return true;
        }
        case ir::StmtKind::WarpSpecialize: {
            // A role's threads run only its body; what it leaves in flight is
            // its own, and the roles beside it start from what came before.
            InFlight role = state;
            return walk(ir::as<ir::WarpSpecialize>(s)->body, role);
        }
        case ir::StmtKind::Wgmma: {
            ir::Effects e = ir::ownEffects(s);
            for (const ir::Access &a : e.accesses) {
                // Registers only: a shared operand's stage is told apart by
                // indices (k % stages) this walk does not evaluate; the
                // barrier-protocol check and the emulator's race detector
                // follow shared memory.
                if (a.buffer->scope != ir::MemScope::Local || !a.asynchronous) continue;
                if (a.reads()) state.open.reads.insert(a.buffer);
                if (a.writes()) state.open.writes.insert(a.buffer);
            }
            if (!state.open.gemm.valid()) state.open.gemm = s->span;
            return true;
        }
        case ir::StmtKind::WgmmaSync: {
            const ir::WgmmaSync &w = *ir::as<ir::WgmmaSync>(s);
            if (w.sync == ir::WgmmaSyncKind::Commit) {
                state.committed.push_back(std::move(state.open));
                state.open = Group{};
                capGroups(state);
            } else if (w.sync == ir::WgmmaSyncKind::Wait && state.committed.size() > static_cast<size_t>(w.pending)) {
                state.committed.erase(state.committed.begin(), state.committed.end() - w.pending);
            }
            return true;
        }
        default: {
            // Any other statement, with what it contains (an elected thread's
            // work, an instruction), at once.
            bool ok = true;
            ir::forEachEffect(s, [&](const Stmt &x, const ir::Effects &e) { ok = ok && check(x, e, state); });
            return ok;
        }
        }
    }

    bool leaf(const Stmt &s, const InFlight &state) { return check(s, ir::ownEffects(s), state); }

    // A loop's body from the groups in flight at its start, until they stop
    // changing (it may run again with what its last iteration left).
    bool loop(const Stmt &body, InFlight &state, const Stmt *whileStmt) {
        InFlight start = state;
        for (int round = 0; round < 4; ++round) {
            InFlight after = start;
            if (whileStmt && !leaf(*whileStmt, after)) return false;
            if (!walk(body, after)) return false;
            InFlight next = join(start, after);
            capGroups(next);
            if (next == start) break;
            start = std::move(next);
        }
        state = start;
        return true;
    }

    bool check(const Stmt &s, const ir::Effects &e, const InFlight &state) {
        for (const ir::Access &a : e.accesses) {
            if (a.asynchronous && s->kind == ir::StmtKind::Wgmma) continue;
            auto conflicts = [&](const Group &g) { return g.writes.count(a.buffer) || (a.writes() && g.reads.count(a.buffer)); };
            const Group *hit = nullptr;
            bool committed = true;
            for (const Group &g : state.committed)
                if (!hit && conflicts(g)) hit = &g;
            if (!hit && conflicts(state.open)) {
                hit = &state.open;
                committed = false;
            }
            if (!hit) continue;
            report(s, a, *hit, committed);
            return false;
        }
        return true;
    }

    void report(const Stmt &s, const ir::Access &a, const Group &g, bool committed) {
        failed_ = true;
        const std::string what = std::string(a.writes() ? "written" : "read") + " while the wgmma group of the gemm at " + g.gemm.lineColumn() +
                                 (g.writes.count(a.buffer) ? ", which writes it," : ", which reads it,") + " may still be running";
        if (!kernel_.waitsForWgmma)
            TILET_INTERNAL_ERROR("check-wgmma-groups: '" << a.buffer->name << "' " << what << " (a wait tilet placed)");
        SourceRange at = s->span.valid() ? s->span : where_.valid() ? where_ : kernel_.span;
        Diagnostic d{Severity::Error, at, "'" + a.buffer->name + "' is " + what, {}, {}};
        d.note(g.gemm, committed ? "issued here; nothing since retired its group (wg_wait = -1 does not wait, and wait_wgmma(n) leaves the "
                                   "newest n groups in flight)"
                                 : "issued here, and not yet committed as a group");
        d.note({}, "put wait_wgmma(0) (or a wait that leaves only newer groups in flight) before this statement");
        ctx_.diags.report(std::move(d));
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    bool failed_ = false;
    SourceRange where_;   // the innermost statement walked that has a place
};

} // namespace

ir::Kernel checkWgmmaGroups(const ir::Kernel &kernel, PassContext &ctx) {
    bool wgmma = false;
    ir::forEachStmt(kernel.body, [&](const Stmt &s) { wgmma = wgmma || s->kind == ir::StmtKind::Wgmma; });
    if (!wgmma) return kernel;
    InFlight start;
    Checker(kernel, ctx).walk(kernel.body, start);
    return kernel;
}

} // namespace tilet
