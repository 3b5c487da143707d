// ReducerCheck.cpp -- see ReducerCheck.h.
#include "sema/ReducerCheck.h"

#include "ir/Analysis.h"
#include "ir/Effects.h"
#include "ir/Visitor.h"

#include <map>
#include <utility>

namespace tilet {

namespace {

using Reducer = ir::BufferNode::Reducer;

std::string updateForm(const ir::BufferNode &r) {
    std::string e = r.name + "[...]";
    switch (r.reducer->op) {
    case Reducer::Op::Sum: return e + " += value";
    case Reducer::Op::Max: return e + " = max(" + e + ", value)";
    case Reducer::Op::Min: return e + " = min(" + e + ", value)";
    }
    return "?";
}

const char *opName(Reducer::Op op) {
    switch (op) {
    case Reducer::Op::Sum: return "sum";
    case Reducer::Op::Max: return "max";
    case Reducer::Op::Min: return "min";
    }
    return "?";
}

ir::Expr stripCasts(ir::Expr e) {
    while (const ir::Cast *c = ir::as<ir::Cast>(e)) e = c->value;
    return e;
}

bool readsBuffer(const ir::Expr &e, const ir::BufferNode *b) {
    bool found = false;
    ir::forEachExpr(e, [&](const ir::Expr &x) {
        const ir::Load *l = ir::as<ir::Load>(x);
        found = found || (l && l->buffer.get() == b);
    });
    return found;
}

bool sameIndices(const std::vector<ir::Expr> &a, const std::vector<ir::Expr> &b) {
    if (a.size() != b.size()) return false;
    for (size_t d = 0; d < a.size(); ++d) {
        if (!ir::structurallyEqual(a[d], b[d])) return false;
    }
    return true;
}

// The load of the stored element itself when `s` is the update its reducer's
// op allows (`r[i] = r[i] op x` with x not reading r), else null.
const ir::Load *updateLoad(const ir::Store &s) {
    if (s.op != ir::StoreOp::Assign) return nullptr;
    Reducer::Op op = s.buffer->reducer->op;
    const ir::Binary *b = ir::as<ir::Binary>(stripCasts(s.value));
    ir::BinaryOp wanted = op == Reducer::Op::Sum ? ir::BinaryOp::Add : op == Reducer::Op::Max ? ir::BinaryOp::Max : ir::BinaryOp::Min;
    if (!b || b->op != wanted) return nullptr;
    for (const auto &[self, other] : {std::pair(b->a, b->b), std::pair(b->b, b->a)}) {
        const ir::Load *l = ir::as<ir::Load>(stripCasts(self));
        if (l && l->buffer == s.buffer && sameIndices(l->indices, s.indices) && !readsBuffer(other, s.buffer.get())) return l;
    }
    return nullptr;
}

bool isZero(const ir::Expr &e) {
    ir::Expr v = stripCasts(e);
    if (const ir::IntImm *i = ir::as<ir::IntImm>(v)) return i->value == 0;
    if (const ir::FloatImm *f = ir::as<ir::FloatImm>(v)) return f->value == 0;
    return false;
}

class Checker {
public:
    explicit Checker(DiagnosticEngine &diags) : diags_(diags) {}

    void walk(const ir::Stmt &s) {
        if (!s) return;
        switch (s->kind) {
        case ir::StmtKind::Seq:
            for (const ir::Stmt &x : ir::as<ir::Seq>(s)->stmts) walk(x);
            return;
        case ir::StmtKind::IfThenElse: {
            const ir::IfThenElse &n = *ir::as<ir::IfThenElse>(s);
            checkOwnEffects(s);
            std::map<const ir::BufferNode *, State> before = state_;
            walk(n.thenBody);
            std::map<const ir::BufferNode *, State> afterThen = std::exchange(state_, before);
            walk(n.elseBody);
            // After the branch a reduction is open if either arm left it open.
            for (auto &[b, st] : afterThen) {
                if (st == State::Open || state_[b] == State::Open) state_[b] = State::Open;
            }
            return;
        }
        case ir::StmtKind::For: {
            const ir::For &n = *ir::as<ir::For>(s);
            checkOwnEffects(s);
            bool parallel = n.forKind == ir::ForKind::Parallel;
            parallelDepth_ += parallel;
            walk(n.body);
            parallelDepth_ -= parallel;
            return;
        }
        case ir::StmtKind::LetStmt: checkOwnEffects(s); return walk(ir::as<ir::LetStmt>(s)->body);
        case ir::StmtKind::Allocate: return walk(ir::as<ir::Allocate>(s)->body);
        case ir::StmtKind::While: checkOwnEffects(s); return walk(ir::as<ir::While>(s)->body);
        case ir::StmtKind::WarpSpecialize: return walk(ir::as<ir::WarpSpecialize>(s)->body);
        default: break;
        }
        if (const ir::Fill *f = ir::as<ir::Fill>(s); f && f->dst.buffer->reducer) {
            const ir::Buffer &r = f->dst.buffer;
            if (r->reducer->op == Reducer::Op::Sum && !isZero(f->value)) {
                diags_.error(s->span, "sum reducer '" + r->name + "' must start from 0: each thread's copy holds a partial sum, "
                                      "and finalize_reducer adds the copies");
            }
            state_[r.get()] = State::Open;
            openedAt_[r.get()] = s->span;
            return;
        }
        if (const ir::FinalizeReducer *f = ir::as<ir::FinalizeReducer>(s)) {
            if (state_[f->reducer.get()] != State::Open)
                diags_.error(s->span, "finalize_reducer of '" + f->reducer->name + "' with no reduction open: fill or clear it first");
            state_[f->reducer.get()] = State::Final;
            return;
        }
        const ir::Load *ownLoad = nullptr;
        if (const ir::Store *st = ir::as<ir::Store>(s); st && st->buffer->reducer) {
            const ir::Buffer &r = st->buffer;
            ownLoad = updateLoad(*st);
            std::string form = "`" + updateForm(*r) + "`";
            // One error per statement: a wrong update's reads are not reported again.
            if (parallelDepth_ == 0) {
                return diags_.error(s->span, "reducer '" + r->name + "' is written only by fill/clear and by updates " + form +
                                                 " inside parallel loops");
            }
            if (!ownLoad) {
                return diags_.error(s->span, "an update of " + std::string(opName(r->reducer->op)) + " reducer '" + r->name + "' is " +
                                                 form + ", with a value that does not read '" + r->name + "'");
            }
            if (state_[r.get()] != State::Open) {
                return diags_.error(s->span, "reducer '" + r->name + "' is updated " +
                                                 (state_[r.get()] == State::Final ? "after finalize_reducer" : "before any fill or clear") +
                                                 "; fill or clear it to start a reduction");
            }
        }
        checkOwnEffects(s, ownLoad);
    }

private:
    enum class State { Unfilled, Open, Final };

    // Reads of a reducer while its copies hold partial results, and writes by
    // anything but its own protocol.
    void checkOwnEffects(const ir::Stmt &s, const ir::Load *exempt = nullptr) {
        const ir::Store *store = ir::as<ir::Store>(s);
        for (const ir::Access &a : ir::ownEffects(s).accesses) {
            if (!a.buffer->reducer) continue;
            if (exempt && a.indices == &exempt->indices) continue;
            if (a.writes() && !(store && a.indices == &store->indices)) {
                diags_.error(a.span, "reducer '" + a.buffer->name + "' is written only by fill/clear and by its updates inside parallel loops");
            } else if (a.reads() && state_[a.buffer] == State::Open) {
                Diagnostic d{Severity::Error, a.span,
                             "'" + a.buffer->name + "' is read while its copies hold partial results; finalize_reducer combines them first",
                             {}, {}};
                d.note(openedAt_[a.buffer], "its reduction starts here");
                diags_.report(std::move(d));
            }
        }
    }

    DiagnosticEngine &diags_;
    std::map<const ir::BufferNode *, State> state_;
    std::map<const ir::BufferNode *, SourceRange> openedAt_;
    int parallelDepth_ = 0;
};

} // namespace

void checkReducers(const ir::Stmt &body, DiagnosticEngine &diags) { Checker(diags).walk(body); }

} // namespace tilet
