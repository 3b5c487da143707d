// AllocateRoleRegisters.cpp -- see AllocateRoleRegisters.h.
#include "passes/AllocateRoleRegisters.h"

#include "ir/Effects.h"
#include "ir/Visitor.h"
#include "passes/CheckBarriers.h"

#include <map>
#include <sstream>

namespace tilet {

namespace {

using ir::Stmt;
using Warps = std::vector<int64_t>;

bool isEmpty(const Stmt &s) {
    const ir::Seq *q = ir::as<ir::Seq>(s);
    return !s || (q && q->stmts.empty());
}

// Control flow and scalar bindings: what every role may run a copy of. (An
// allocation is not: buffers are allocated for the block, outside roles.)
bool isControl(const ir::StmtNode &s) {
    switch (s.kind) {
    case ir::StmtKind::Seq:
    case ir::StmtKind::LetStmt:
    case ir::StmtKind::For:
    case ir::StmtKind::IfThenElse:
    case ir::StmtKind::While: return true;
    default: return false;
    }
}

bool isBarrierOp(const ir::StmtNode &s) {
    switch (s.kind) {
    case ir::StmtKind::BarrierWait:
    case ir::StmtKind::BarrierArrive:
    case ir::StmtKind::BarrierExpectTx: return true;
    default: return false;
    }
}

// Reads no memory of its own (a binding's value, a loop's bounds, a branch's
// condition): what the protocol check does not follow.
bool readsNoMemory(const Stmt &s) {
    for (const ir::Access &a : ir::ownEffects(s).accesses)
        if (a.buffer->scope != ir::MemScope::Barrier) return false;
    return true;
}

// A copy that is a TMA load for certain (copy selection comes later):
// tma_copy or prefer = tma, global -> shared.
bool isTmaLoad(const Stmt &s) {
    const ir::Copy *c = ir::as<ir::Copy>(s);
    return c && (c->copyKind == ir::CopyKind::TmaCopy || c->prefer == ir::CopyPreference::Tma) && c->src.buffer->scope == ir::MemScope::Global &&
           c->dst.buffer->scope == ir::MemScope::Shared;
}

// What a warp group that only loads runs: TMA loads and the barriers that
// hand their tiles over, in control flow. TileLang's rule is the same in
// spirit (no cp.async and no store to shared or local memory in the producer).
bool onlyLoads(const Stmt &s) { return ((isControl(*s) || isBarrierOp(*s)) && readsNoMemory(s)) || isTmaLoad(s); }

// Statements every role may run a copy of: they need next to no registers.
bool allowedInEveryRole(const Stmt &s) { return (isControl(*s) || isBarrierOp(*s)) && readsNoMemory(s); }

bool notARole(const Stmt &s) { return !ir::as<ir::WarpSpecialize>(s); }

// The first statement under `s` for which `allowed` fails, not looking inside
// ws(...) when `skipRoles` (null when there is none).
const ir::StmtNode *firstNot(const Stmt &s, bool (*allowed)(const Stmt &), bool skipRoles) {
    const ir::StmtNode *found = nullptr;
    struct Finder : ir::Visitor {
        bool (*allowed)(const Stmt &);
        bool skipRoles;
        const ir::StmtNode **found;
        using ir::Visitor::visit;
        void visit(const Stmt &x) override {
            if (*found || !x) return;
            if (skipRoles && ir::as<ir::WarpSpecialize>(x)) return;
            if (!allowed(x)) {
                *found = x.get();
                return;
            }
            ir::Visitor::visit(x);
        }
        void visit(const ir::Expr &) override {}
    } finder;
    finder.allowed = allowed;
    finder.skipRoles = skipRoles;
    finder.found = &found;
    finder.visit(s);
    return found;
}

bool holdsRole(const Stmt &s) {
    bool holds = false;
    ir::forEachStmt(s, [&](const Stmt &x) { holds = holds || ir::as<ir::WarpSpecialize>(x); });
    return holds;
}

// The kernel as run by one role: its ws(...) bodies inline, the others'
// gone, and loops, branches and bindings left with nothing to do dropped. A
// `pipelined` loop that holds roles is a plain loop in each copy: it was
// not software-pipelined (the roles' barriers pace it), and a pipelined loop
// inside ws(...) would ask for a pipeline in that role.
class RoleCopy : public ir::Mutator {
public:
    explicit RoleCopy(const Warps &warps) : warps_(warps) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateWarpSpecialize(const Stmt &, const ir::WarpSpecialize &n) override { return n.warps == warps_ ? n.body : ir::seq({}); }
    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        Stmt out = ir::Mutator::mutateFor(self, n);
        const ir::For &f = *ir::as<ir::For>(out);
        if (isEmpty(f.body)) return ir::seq({});
        if (!f.pipeline || !holdsRole(self)) return out;
        auto plain = ir::rebuildFor(f, f.min, f.extent, f.body);
        plain->pipeline.reset();
        return plain;
    }
    Stmt mutateWhile(const Stmt &self, const ir::While &n) override { return dropEmpty(ir::Mutator::mutateWhile(self, n), [](const Stmt &s) { return ir::as<ir::While>(s)->body; }); }
    Stmt mutateLetStmt(const Stmt &self, const ir::LetStmt &n) override { return dropEmpty(ir::Mutator::mutateLetStmt(self, n), [](const Stmt &s) { return ir::as<ir::LetStmt>(s)->body; }); }
    Stmt mutateIfThenElse(const Stmt &self, const ir::IfThenElse &n) override {
        Stmt out = ir::Mutator::mutateIfThenElse(self, n);
        const ir::IfThenElse *i = ir::as<ir::IfThenElse>(out);
        return isEmpty(i->thenBody) && isEmpty(i->elseBody) ? ir::seq({}) : out;
    }

private:
    template <class Body> static Stmt dropEmpty(const Stmt &s, Body body) { return isEmpty(body(s)) ? ir::seq({}) : s; }
    const Warps &warps_;
};

class Allocator {
public:
    Allocator(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx) {}

    ir::Kernel run() {
        std::vector<const ir::WarpSpecialize *> blocks;
        const ir::SetMaxNReg *written = nullptr;
        bool automatic = false;
        ir::forEachStmt(kernel_.body, [&](const Stmt &s) {
            if (const ir::WarpSpecialize *w = ir::as<ir::WarpSpecialize>(s)) blocks.push_back(w);
            if (const ir::SetMaxNReg *r = ir::as<ir::SetMaxNReg>(s); r && !written) written = r;
            if (const ir::Copy *c = ir::as<ir::Copy>(s)) automatic = automatic || c->producerRole;
        });
        // Automatic warp specialization decided (and explained) its registers itself.
        if (blocks.empty() || automatic) return kernel_;
        where_ = blocks.front()->span;
        if (written) return keepWritten(blocks);
        if (kernel_.keepsRegisterBudgets) return skip("disable_warp_group_reg_alloc() keeps every warp group's register budget");
        if (!ctx_.target.has(Feature::Setmaxnreg)) return skip(lacks(ctx_.target, Feature::Setmaxnreg));
        // insert-syncs places a cluster's barriers where every thread of the block meets.
        if (kernel_.hasCluster) return skip("the kernel runs in clusters, whose barriers every thread of the block reaches at the same point");

        // The roles: each ws(...) is whole warp groups, and two either are the same role or share no warp.
        std::map<Warps, const ir::WarpSpecialize *> roles;   // by first warp
        std::vector<bool> covered(static_cast<size_t>(kernel_.threads / ir::WarpSpecialize::kWarpThreads), false);
        for (const ir::WarpSpecialize *w : blocks) {
            std::string role = "the role at " + w->span.lineColumn();
            if (!w->wholeWarpGroups()) return skip(role + " is not whole warp groups, and setmaxnreg is made by whole warp groups (PTX ISA, \"setmaxnreg\")");
            if (firstNot(w->body, notARole, false)) return skip(role + " holds another ws(...)");
            if (roles.emplace(w->warps, w).second) {
                for (int64_t warp : w->warps) {
                    if (static_cast<size_t>(warp) >= covered.size()) return skip(role + " names warps the block does not have");
                    if (covered[static_cast<size_t>(warp)]) return skip(role + " shares warps with another role");
                    covered[static_cast<size_t>(warp)] = true;
                }
            }
        }
        for (size_t warp = 0; warp < covered.size(); warp += 4)
            if (!covered[warp]) return skip("warp group " + std::to_string(warp / 4) + " is in no ws(...) role, and the split gives each warp group a role's registers");

        // The one warp group that only loads.
        const Warps *loader = nullptr;
        if (roles.size() < 2) return skip("the block is one role, so there is no register split to make");
        for (const auto &[warps, first] : roles) {
            bool loads = true, loadsSome = false;
            for (const ir::WarpSpecialize *w : blocks) {
                if (w->warps != warps) continue;
                if (firstNot(w->body, onlyLoads, false)) loads = false;
                ir::forEachStmt(w->body, [&](const Stmt &x) { loadsSome = loadsSome || isTmaLoad(x); });
            }
            if (!loads || !loadsSome) continue;
            if (loader) return skip(groupsText(*loader) + " and " + groupsText(warps) + " both only load, and the split is made for one loading warp group");
            loader = &warps;
        }
        if (!loader) return skip("no role only issues TMA loads and waits and arrives on barriers, so none can give registers away");
        if (loader->size() != 4) return skip(groupsText(*loader) + " only load, and the split is made for one loading warp group");
        int64_t consumerGroups = static_cast<int64_t>(covered.size() / 4) - 1;
        std::optional<RegisterSplit> split = warpGroupRegisterSplit(ctx_.target, consumerGroups);
        if (!split) return skip("no register split fits one loading and " + std::to_string(consumerGroups) + " computing warp groups");

        // From the first statement holding a role on, one copy per role.
        std::optional<Stmt> body = splitRoles(kernel_.body, roles, *loader, *split);
        if (!body) return kernel_;   // skip() said why
        ir::Kernel out = kernel_;
        out.body = *body;
        if (std::optional<std::string> why = unordered(out)) return skip(*why);

        Decision d;
        d.where = where_;
        d.op = "ws(...) roles";
        d.choice = "setmaxnreg: " + groupsText(*loader) + " drops to " + std::to_string(split->producer) + " registers per thread, the other" +
                   (consumerGroups == 1 ? " warp group rises" : " warp groups rise") + " to " + std::to_string(split->consumer);
        d.why = groupsText(*loader) + " only issues TMA loads and waits and arrives on barriers; TileLang reallocates so for automatic warp specialization";
        ir::forEachStmt(kernel_.body, [&](const Stmt &x) {
            const ir::For *f = ir::as<ir::For>(x);
            if (!f || !f->pipeline || !holdsRole(x)) return;
            Decision loop;
            loop.where = f->span;
            loop.op = "pipelined loop";
            loop.choice = "not pipelined";
            loop.why = "its body is ws(...) roles: each role runs its own copy of the loop, paced by the roles' barriers";
            ctx_.explain.record(std::move(loop));
        });
        d.details.push_back("from " + splitAt_.lineColumn() +
                            " on, each role runs its own copy of the kernel: its ws(...) bodies and the loops, branches and barriers every thread runs, "
                            "since setmaxnreg bounds the registers of the code after it");
        ctx_.explain.record(std::move(d));
        return out;
    }

private:
    static std::string groupsText(const Warps &warps) {
        std::string s = warps.size() == 4 ? "warp group " : "warp groups ";
        for (size_t i = 0; i < warps.size(); i += 4) s += (i ? "," : "") + std::to_string(warps[i] / 4);
        return s;
    }

    // The program's own set_max_nreg: each role's requests, as written. A
    // role of a whole warp group that holds only the request, and whose
    // warps other roles split (sema's ThreadRoles), is the request those
    // roles each started with, made once by the warp group.
    ir::Kernel keepWritten(const std::vector<const ir::WarpSpecialize *> &roles) {
        Decision d;
        d.where = where_;
        d.op = "ws(...) roles";
        d.choice = "setmaxnreg as the program writes it, and nowhere else";
        d.why = "the program asks for its roles' registers itself, with set_max_nreg";
        auto warpsText = [](const ir::WarpSpecialize &w) {
            return w.warps.size() == 1 ? "warp " + std::to_string(w.warps.front())
                                       : "warps " + std::to_string(w.warps.front()) + ".." + std::to_string(w.warps.back());
        };
        for (const ir::WarpSpecialize *w : roles) {
            ir::forEachStmt(w->body, [&](const Stmt &x) {
                const ir::SetMaxNReg *r = ir::as<ir::SetMaxNReg>(x);
                if (!r) return;
                std::string line = warpsText(*w) + ": setmaxnreg." + (r->increase ? "inc " : "dec ") + std::to_string(r->count) + " (" +
                                   r->span.lineColumn() + ")";
                std::vector<std::string> split;
                if (w->body.get() == x.get() && w->wholeWarpGroups())
                    for (const ir::WarpSpecialize *o : roles)
                        if (o != w && o->warps.front() >= w->warps.front() && o->warps.back() <= w->warps.back()) split.push_back(warpsText(*o));
                if (!split.empty()) {
                    std::string names;
                    for (size_t i = 0; i < split.size(); ++i) names += (i == 0 ? "" : i + 1 == split.size() ? " and " : ", ") + split[i];
                    line += ", made once by the warp group ahead of the roles of its warps (" + names +
                            "), since each role of its warps started with it: setmaxnreg is .aligned over a warp group (PTX ISA, \"setmaxnreg\")";
                }
                d.details.push_back(line);
            });
        }
        ctx_.explain.record(std::move(d));
        return kernel_;
    }

    ir::Kernel skip(const std::string &why) {
        Decision d;
        d.where = where_;
        d.op = "ws(...) roles";
        d.choice = "no setmaxnreg";
        d.why = why;
        ctx_.explain.record(std::move(d));
        return kernel_;
    }

    // Split, statements of different roles lose the order of the program as
    // written (which the protocol check assumes at the edges of each run of
    // ws(...) blocks): the roles' own barriers must order what they share.
    // The check judges shared memory, so its first complaint about the split
    // kernel (or its giving up) is the reason not to split; global and tensor
    // memory one role writes and another uses it does not follow, so such a
    // kernel is not split.
    std::optional<std::string> unordered(const ir::Kernel &split) {
        std::map<const ir::BufferNode *, std::map<int64_t, bool>> users;   // buffer -> first warp -> writes
        ir::forEachStmt(split.body, [&](const Stmt &x) {
            const ir::WarpSpecialize *w = ir::as<ir::WarpSpecialize>(x);
            if (!w) return;
            ir::forEachEffect(w->body, [&](const Stmt &, const ir::Effects &e) {
                for (const ir::Access &a : e.accesses)
                    if (a.buffer->scope == ir::MemScope::Global || a.buffer->scope == ir::MemScope::TMem) users[a.buffer][w->warps.front()] |= a.writes();
            });
        });
        for (const auto &[buffer, roles] : users) {
            if (roles.size() < 2) continue;
            for (const auto &[warp, writes] : roles)
                if (writes)
                    return "'" + buffer->name + "' is written by warp group " + std::to_string(warp / 4) +
                           " and used by another role, and the barrier-protocol check does not follow global or tensor memory between roles";
        }
        std::ostringstream discarded;
        DiagnosticEngine trial(ctx_.diags.sources(), discarded);
        trial.setMaxErrors(0);
        Explain unrecorded;
        PassContext trialCtx{ctx_.target, trial, unrecorded};
        checkBarriers(split, trialCtx);
        for (const Diagnostic &d : trial.reported()) {
            if (d.severity == Severity::Error) return "split into one copy per role, the kernel would fail the barrier-protocol check at " + d.range.lineColumn() + ": " + d.message;
            if (d.severity == Severity::Warning) return "split into one copy per role, " + d.message;
        }
        return std::nullopt;
    }

    // `s` with its statements from the first that holds a role on replaced by
    // one ws(...) per role. Scopes around the kernel's statements stay where
    // they are; the split goes as deep as it can, so statements all threads
    // run before the roles stay shared.
    std::optional<Stmt> splitRoles(const Stmt &s, const std::map<Warps, const ir::WarpSpecialize *> &roles, const Warps &loader, const RegisterSplit &split) {
        if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) {
            std::optional<Stmt> body = splitRoles(a->body, roles, loader, split);
            if (!body) return std::nullopt;
            return Stmt(std::make_shared<ir::Allocate>(a->buffer, *body, a->span));
        }
        if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
            std::optional<Stmt> body = splitRoles(l->body, roles, loader, split);
            if (!body) return std::nullopt;
            return Stmt(std::make_shared<ir::LetStmt>(l->var, l->value, *body, l->span));
        }
        std::vector<Stmt> shared, region;
        if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
            size_t first = 0;
            while (first < q->stmts.size() && !holdsRole(q->stmts[first])) ++first;
            shared.assign(q->stmts.begin(), q->stmts.begin() + static_cast<std::ptrdiff_t>(first));
            region.assign(q->stmts.begin() + static_cast<std::ptrdiff_t>(first), q->stmts.end());
            // A last statement that is a scope: split inside it.
            if (region.size() == 1 && (ir::as<ir::Seq>(region[0]) || ir::as<ir::Allocate>(region[0]) || ir::as<ir::LetStmt>(region[0]))) {
                std::optional<Stmt> inner = splitRoles(region[0], roles, loader, split);
                if (!inner) return std::nullopt;
                shared.push_back(*inner);
                return ir::seq(std::move(shared));
            }
        } else {
            region.push_back(s);
        }
        Stmt common = ir::seq(region);
        if (const ir::StmtNode *other = firstNot(common, allowedInEveryRole, true)) {
            std::string at = other->span.lineColumn();
            if (other->kind == ir::StmtKind::Allocate)
                skip("the allocation at " + at + " comes after the roles begin at " + where_.lineColumn() + ", and buffers are allocated for the whole block");
            else if (isControl(*other) || isBarrierOp(*other))
                skip("the statement at " + at + " reads memory in every role after the roles begin at " + where_.lineColumn() +
                     ", which each role's copy would read with nothing ordering it after the other roles' writes");
            else
                skip("the statement at " + at + " runs in every role after the roles begin at " + where_.lineColumn() + ", and the loading warp group would run it in " +
                     std::to_string(split.producer) + " registers");
            return std::nullopt;
        }
        splitAt_ = region.front()->span;
        for (const auto &[warps, first] : roles) {
            bool loads = warps == loader;
            Stmt body = ir::seq({std::make_shared<ir::SetMaxNReg>(loads ? split.producer : split.consumer, !loads, first->span), RoleCopy(warps).mutate(common)});
            shared.push_back(std::make_shared<ir::WarpSpecialize>(warps, body, first->span));
        }
        return ir::seq(std::move(shared));
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    SourceRange where_, splitAt_;
};

} // namespace

ir::Kernel allocateRoleRegisters(const ir::Kernel &kernel, PassContext &ctx) { return Allocator(kernel, ctx).run(); }

} // namespace tilet
