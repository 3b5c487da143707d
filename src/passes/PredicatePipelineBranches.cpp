// PredicatePipelineBranches.cpp -- see PredicatePipelineBranches.h.
#include "passes/PredicatePipelineBranches.h"

#include "ir/Analysis.h"
#include "ir/Effects.h"
#include "ir/Visitor.h"
#include "passes/CopyFacts.h"

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

bool loadsMemory(const Expr &e) {
    bool loads = false;
    ir::forEachExpr(e, [&](const Expr &x) { loads = loads || ir::as<ir::Load>(x); });
    return loads;
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
        std::vector<Stmt> body, top = ir::as<ir::Seq>(loop.body) ? ir::as<ir::Seq>(loop.body)->stmts : std::vector<Stmt>{loop.body};
        bool changed = false;
        for (const Stmt &s : top) {
            std::vector<Stmt> split = predicate(s, loop.body);
            changed = changed || split.size() != 1 || split.front() != s;
            body.insert(body.end(), split.begin(), split.end());
        }
        if (!changed) return inner;
        return ir::rebuildFor(loop, loop.min, loop.extent, ir::seq(std::move(body)));
    }

private:
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
        std::set<const ir::BufferNode *> read;
        ir::forEachExpr(branch->cond, [&](const Expr &x) {
            if (const ir::Load *l = ir::as<ir::Load>(x)) read.insert(l->buffer.get());
        });
        for (const ir::BufferNode *b : read) {
            std::optional<SourceRange> writer;
            ir::forEachEffect(body, [&](const Stmt &t, const ir::Effects &fx) {
                for (const ir::Access &a : fx.accesses)
                    if (!writer && a.buffer == b && a.writes()) writer = t->span;
            });
            if (writer) return keep(s, "the loop writes '" + b->name + "' at " + writer->lineColumn() + ", which the condition reads");
        }
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
