// PredicatePipelineBranches.cpp -- see PredicatePipelineBranches.h.
#include "passes/PredicatePipelineBranches.h"

#include "ir/Analysis.h"
#include "ir/Effects.h"
#include "ir/Visitor.h"
#include "passes/CopyFacts.h"

#include <algorithm>
#include <set>
#include <utility>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

bool isGlobalToSharedLoad(const Stmt &s) {
    const ir::Copy *c = ir::as<ir::Copy>(s);
    return ir::as<ir::Im2Col>(s) || (c && isGlobalToShared(*c));
}

// A load, or a branch (no `else`) with a load among its statements, which
// predicate() makes predicated loads: what the pipeline issues ahead.
bool issuedAhead(const Stmt &s) {
    if (isGlobalToSharedLoad(s)) return true;
    const ir::IfThenElse *branch = ir::as<ir::IfThenElse>(s);
    if (!branch || branch->elseBody) return false;
    Stmt body = branch->thenBody;
    while (const ir::LetStmt *let = ir::as<ir::LetStmt>(body)) body = let->body;
    const ir::Seq *seq = ir::as<ir::Seq>(body);
    std::vector<Stmt> stmts = seq ? seq->stmts : std::vector<Stmt>{body};
    return std::any_of(stmts.begin(), stmts.end(), isGlobalToSharedLoad);
}

bool loadsMemory(const Expr &e) {
    bool loads = false;
    ir::forEachExpr(e, [&](const Expr &x) { loads = loads || ir::as<ir::Load>(x); });
    return loads;
}

// A warp shuffle is evaluated by every lane of the warp together
// (__shfl_sync with a full mask): moved into a copy, it would run under the
// copy's thread guard, where only some lanes reach it.
bool shuffles(const Expr &e) {
    bool found = false;
    ir::forEachExpr(e, [&](const Expr &x) { found = found || ir::as<ir::Shuffle>(x); });
    return found;
}

class Predicator : public ir::Mutator {
public:
    explicit Predicator(PassContext &ctx) : ctx_(ctx) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        if (n.forKind == ir::ForKind::Parallel) return self;
        Stmt inner = ir::Mutator::mutateFor(self, n);   // nested pipelined loops first
        if (!n.pipeline || n.pipeline->stages == 0) return inner;
        const ir::For &loop = *ir::as<ir::For>(inner);
        std::vector<Stmt> top = statementsOf(loop.body);
        bool changed = unbind(loop, top);
        std::vector<Stmt> body;
        for (const Stmt &s : top) {
            std::vector<Stmt> split = predicate(s, loop.body);
            changed = changed || split.size() != 1 || split.front() != s;
            body.insert(body.end(), split.begin(), split.end());
        }
        if (!changed) return inner;
        return ir::rebuildFor(loop, loop.min, loop.extent, ir::seq(std::move(body)));
    }

private:
    static std::vector<Stmt> statementsOf(const Stmt &s) {
        if (const ir::Seq *seq = ir::as<ir::Seq>(s)) return seq->stmts;
        return {s};
    }

    // A body that starts with bindings (TileLang's paged attention: `kv_start
    // = block_table[b, k * block_N / block_size] * block_size`, then copies
    // from KV[kv_start : ...]) hides its loads from the pipeline, which issues
    // the loop's statements. The loads take the bound values instead (so the
    // pipeline evaluates them for the iteration it loads for), and each run of
    // the other statements keeps the bindings -- when the values read nothing
    // the loop writes: a load issued ahead evaluates them early. `top`
    // becomes the statements.
    bool unbind(const ir::For &loop, std::vector<Stmt> &top) {
        std::vector<const ir::LetStmt *> lets;
        std::vector<std::pair<ir::VarRef, Expr>> bound;
        Stmt rest = loop.body;
        while (const ir::LetStmt *let = ir::as<ir::LetStmt>(rest)) {
            lets.push_back(let);
            bound.push_back({let->var, ir::substitute(let->value, bound)});
            rest = let->body;
        }
        if (lets.empty()) return false;
        std::vector<Stmt> stmts = statementsOf(rest);
        std::vector<SourceRange> loads;
        for (const Stmt &t : stmts)
            if (issuedAhead(t))
                ir::forEachStmt(t, [&](const Stmt &x) {
                    if (isGlobalToSharedLoad(x)) loads.push_back(x->span);
                });
        if (loads.empty()) return false;
        Decision d;
        d.where = lets.front()->span;
        d.op = "bindings in a pipelined loop";
        // The bindings the loads use (their values already hold the bindings they use in turn).
        std::set<const ir::VarNode *> used;
        for (const Stmt &t : stmts)
            if (issuedAhead(t))
                ir::forEachExpr(t, [&](const Expr &x) {
                    if (const ir::VarNode *v = ir::as<ir::VarNode>(x)) used.insert(v);
                });
        for (const auto &[var, value] : bound) {
            if (!used.count(var.get())) continue;
            std::string why;
            if (std::optional<ir::Writer> writer = ir::writerOfWhatItReads(value, loop.body))
                why = "'" + var->name + "' reads '" + writer->buffer + "', which the loop writes at " + writer->at.lineColumn() +
                      ", and a load issued ahead would read it early";
            else if (shuffles(value))
                why = "'" + var->name + "' is a warp shuffle, which every lane must evaluate together, not under a copy's thread guard";
            if (why.empty()) continue;
            d.choice = "kept: the loads after them run in order, unpipelined";
            d.why = why;
            ctx_.explain.record(std::move(d));
            return false;
        }
        auto rebind = [&](std::vector<Stmt> run) {
            Stmt s = ir::seq(std::move(run));
            for (auto it = lets.rbegin(); it != lets.rend(); ++it) s = std::make_shared<ir::LetStmt>((*it)->var, (*it)->value, s, (*it)->span);
            return s;
        };
        top.clear();
        std::vector<Stmt> run;
        for (const Stmt &t : stmts) {
            if (!issuedAhead(t)) {
                run.push_back(t);
                continue;
            }
            if (!run.empty()) top.push_back(rebind(std::exchange(run, {})));
            top.push_back(ir::substitute(t, bound));
        }
        if (!run.empty()) top.push_back(rebind(std::move(run)));
        d.choice = "substituted into the loads that follow them";
        std::string at;
        for (const SourceRange &l : loads) at += (at.empty() ? "" : ", ") + l.lineColumn();
        d.why = "the loads (" + at + ") become statements of the loop body, which the pipeline issues ahead, each evaluating the "
                "bound values for the iteration it loads for; the values they use read nothing the loop writes, and the other "
                "statements keep the bindings";
        ctx_.explain.record(std::move(d));
        return true;
    }

    // `s` (a statement of the pipelined loop's `body`) as one `if` per
    // statement of its branch, or `s` itself.
    std::vector<Stmt> predicate(const Stmt &s, const Stmt &body) {
        const ir::IfThenElse *branch = ir::as<ir::IfThenElse>(s);
        if (!branch || branch->elseBody) return {s};
        // The branch's statements, with the names it binds substituted (a
        // binding that loads from memory would be loaded again by each).
        Stmt thenBody = branch->thenBody;
        std::vector<std::pair<ir::VarRef, Expr>> bound;
        while (const ir::LetStmt *let = ir::as<ir::LetStmt>(thenBody)) {
            if (loadsMemory(let->value)) return keep(s, "it binds '" + let->var->name + "' from memory, which each statement would load again");
            if (shuffles(let->value)) return keep(s, "it binds '" + let->var->name + "' to a warp shuffle, which every lane must evaluate together");
            bound.push_back({let->var, ir::substitute(let->value, bound)});
            thenBody = let->body;
        }
        std::vector<Stmt> stmts = ir::as<ir::Seq>(thenBody) ? ir::as<ir::Seq>(thenBody)->stmts : std::vector<Stmt>{thenBody};
        std::vector<Stmt> loads;
        for (const Stmt &t : stmts)
            if (isGlobalToSharedLoad(t)) loads.push_back(t);
        if (loads.empty()) return {s};
        if (stmts.size() == 1 && bound.empty()) return {s};   // already one predicated copy
        for (const Stmt &t : stmts)
            if (ir::as<ir::Allocate>(t) || ir::as<ir::LetStmt>(t)) return keep(s, "its statements are not all at one level (a binding or allocation in the middle)");
        // Each statement evaluates the condition again, and a copy evaluates the
        // condition of a later iteration iterations early: nothing in the loop
        // may change what it reads (the branch itself or any other statement).
        if (std::optional<ir::Writer> writer = ir::writerOfWhatItReads(branch->cond, body))
            return keep(s, "the loop writes '" + writer->buffer + "' at " + writer->at.lineColumn() + ", which the condition reads");
        std::vector<Stmt> out;
        for (const Stmt &t : stmts) out.push_back(std::make_shared<ir::IfThenElse>(branch->cond, bound.empty() ? t : ir::substitute(t, bound), nullptr, branch->span));
        Decision d;
        d.where = branch->span;
        d.op = "branch in a pipelined loop";
        d.choice = "predicated: one `if` per statement";
        std::string at;
        for (const Stmt &l : loads) at += (at.empty() ? "" : ", ") + l->span.lineColumn();
        d.why = "its loads (" + at + ") become pipeline producers, issued ahead under the condition of the iteration they load for; "
                "the condition reads nothing the loop writes";
        ctx_.explain.record(std::move(d));
        return out;
    }

    std::vector<Stmt> keep(const Stmt &branch, const std::string &why) {
        Decision d;
        d.where = branch->span;
        d.op = "branch in a pipelined loop";
        d.choice = "not predicated: its copies run in order, unpipelined";
        d.why = why;
        ctx_.explain.record(std::move(d));
        return {branch};
    }

    PassContext &ctx_;
};

} // namespace

ir::Kernel predicatePipelineBranches(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    out.body = Predicator(ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
