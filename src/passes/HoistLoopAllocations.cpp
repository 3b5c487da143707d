// HoistLoopAllocations.cpp -- see HoistLoopAllocations.h.
#include "passes/HoistLoopAllocations.h"

#include "ir/Visitor.h"

#include <map>
#include <set>

namespace tilet {

namespace {

// Whether an allocation goes where the block's buffers are: shared and
// fragment buffers, and with `locals` also a thread's registers (a `var`,
// alloc_local), whose declaration only moves (its initial value is a store
// that stays where it was written).
bool hoistable(const ir::BufferNode &b, bool locals) {
    return b.scope == ir::MemScope::Shared || b.scope == ir::MemScope::Fragment || (locals && b.scope == ir::MemScope::Local);
}

// Removes the shared and fragment allocations of a loop body (and with
// `locals`, the registers'), collecting them.
class Collector : public ir::Mutator {
public:
    explicit Collector(bool locals) : locals_(locals) {}
    std::vector<std::pair<ir::Buffer, SourceRange>> hoisted;
    using ir::Mutator::mutate;

protected:
    const bool locals_;
    ir::Stmt mutateAllocate(const ir::Stmt &self, const ir::Allocate &n) override {
        if (!hoistable(*n.buffer, locals_)) return ir::Mutator::mutateAllocate(self, n);
        hoisted.push_back({n.buffer, n.span});
        return ir::seq({mutate(n.body)});
    }
    ir::Stmt mutateSeq(const ir::Stmt &self, const ir::Seq &n) override {
        ir::Stmt out = ir::Mutator::mutateSeq(self, n);
        if (out == self) return self;
        // Statements of removed allocations become statements of the body:
        // a child that became a sequence (flat itself, mutated first) is spliced in.
        if (const ir::Seq *q = ir::as<ir::Seq>(out)) return ir::seq(q->stmts);
        return out;
    }
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        return n.forKind == ir::ForKind::Parallel ? self : ir::Mutator::mutateFor(self, n);
    }
};

// An allocation moved out of a pipelined loop's body, to be explained
// once its final place is known.
struct Hoisted {
    ir::Buffer buffer;
    SourceRange where;
    SourceRange loop;
};

class Hoister : public ir::Mutator {
public:
    std::vector<Hoisted> hoisted;
    using ir::Mutator::mutate;

protected:
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        if (n.forKind == ir::ForKind::Parallel) return self;
        ir::Stmt inner = ir::Mutator::mutateFor(self, n);   // nested pipelined loops first
        if (!n.pipeline) return inner;
        const ir::For &loop = *ir::as<ir::For>(inner);
        Collector collector(true);
        ir::Stmt body = collector.mutate(loop.body);
        if (collector.hoisted.empty()) return inner;
        ir::Stmt out = ir::rebuildFor(loop, loop.min, loop.extent, body);
        for (auto it = collector.hoisted.rbegin(); it != collector.hoisted.rend(); ++it) {
            out = std::make_shared<ir::Allocate>(it->first, out, it->second);
            hoisted.push_back({it->first, it->second, n.span});
        }
        return out;
    }
};

// Whether `s` runs a pipelined loop once for the block: through sequences,
// bindings and allocations only (in no loop, branch or role).
const ir::For *pipelinedOnce(const ir::Stmt &s) {
    if (const ir::For *f = ir::as<ir::For>(s)) return f->pipeline ? f : nullptr;
    if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
        for (const ir::Stmt &x : q->stmts)
            if (const ir::For *f = pipelinedOnce(x)) return f;
        return nullptr;
    }
    if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) return pipelinedOnce(l->body);
    if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) return pipelinedOnce(a->body);
    return nullptr;
}

// Removes the shared and fragment allocations on the way to a pipelined
// loop the block runs once, collecting them (outermost first): they go to
// the start of the kernel. Warp specialization splits the kernel into roles
// after its leading allocations; one between the start and the loop would
// land inside the consumer role. Lifetimes do not change: shared memory is
// planned by the accesses, and no loop encloses these.
class ToKernelStart {
public:
    std::vector<std::pair<ir::Buffer, SourceRange>> moved;
    std::map<const ir::BufferNode *, SourceRange> loopOf;
    std::set<const ir::BufferNode *> forWarpSpecialization;   // its loop may be warp-specialized (not warp_specialize = false)

    // `started`: a statement of the kernel comes before `s` (allocations
    // before every statement are at the start already).
    ir::Stmt lift(const ir::Stmt &s, bool started) {
        if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
            std::vector<ir::Stmt> stmts;
            bool changed = false;
            for (size_t i = 0; i < q->stmts.size(); ++i) {
                stmts.push_back(lift(q->stmts[i], started || i > 0));
                changed = changed || stmts.back() != q->stmts[i];
            }
            return changed ? ir::seq(std::move(stmts)) : s;
        }
        if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
            ir::Stmt body = lift(l->body, started);
            return body == l->body ? s : std::make_shared<ir::LetStmt>(l->var, l->value, body, l->span);
        }
        if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) {
            const ir::For *loop = started ? pipelinedOnce(a->body) : nullptr;
            if (loop && hoistable(*a->buffer, true)) {
                moved.push_back({a->buffer, a->span});
                loopOf[a->buffer.get()] = loop->span;
                if (loop->pipeline && loop->pipeline->warpSpecialize != false) forWarpSpecialization.insert(a->buffer.get());
                return lift(a->body, started);
            }
            ir::Stmt body = lift(a->body, started);
            return body == a->body ? s : std::make_shared<ir::Allocate>(a->buffer, body, a->span);
        }
        return s;
    }
};

// Removes the shared and fragment allocations inside ws(...) roles,
// collecting them: they go to the start of the kernel, as TileLang allocates
// every buffer for the block. Inside a role only its threads would reach the
// allocation; the block's shared memory is planned once, by the accesses.
class OutOfRoles : public ir::Mutator {
public:
    std::vector<std::pair<ir::Buffer, SourceRange>> moved;
    std::map<const ir::BufferNode *, SourceRange> roleOf;
    using ir::Mutator::mutate;

protected:
    ir::Stmt mutateWarpSpecialize(const ir::Stmt &self, const ir::WarpSpecialize &n) override {
        Collector collector(false);
        ir::Stmt body = collector.mutate(n.body);
        if (collector.hoisted.empty()) return self;
        for (const auto &[buffer, where] : collector.hoisted) {
            moved.push_back({buffer, where});
            roleOf[buffer.get()] = n.span;
        }
        return std::make_shared<ir::WarpSpecialize>(n.warps, body, n.span);
    }
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        return n.forKind == ir::ForKind::Parallel ? self : ir::Mutator::mutateFor(self, n);
    }
};

} // namespace

ir::Kernel hoistLoopAllocations(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Hoister hoister;
    out.body = hoister.mutate(kernel.body);
    OutOfRoles roles;
    out.body = roles.mutate(out.body);
    ToKernelStart start;
    ir::Stmt lifted = start.lift(out.body, false);
    std::vector<std::pair<ir::Buffer, SourceRange>> toStart = start.moved;
    toStart.insert(toStart.end(), roles.moved.begin(), roles.moved.end());
    for (auto it = toStart.rbegin(); it != toStart.rend(); ++it) lifted = std::make_shared<ir::Allocate>(it->first, lifted, it->second);
    out.body = lifted;
    std::set<const ir::BufferNode *> fromLoops;
    for (const Hoisted &h : hoister.hoisted) {
        fromLoops.insert(h.buffer.get());
        Decision d;
        d.where = h.where;
        d.op = "allocation of '" + h.buffer->name + "'";
        const bool atStart = start.loopOf.count(h.buffer.get()) > 0 || roles.roleOf.count(h.buffer.get()) > 0;
        d.choice = atStart ? "once, at the start of the kernel" : "once, before the pipelined loop at " + h.loop.lineColumn();
        d.why = "TileLang allocates a kernel's buffers once for the block wherever they are written; out of the loop's body, "
                "the loop's statements are its own and can be pipelined";
        if (start.loopOf.count(h.buffer.get()))
            d.details.push_back("the block runs the loop once (in no loop, branch or role), so the buffer goes with the kernel's first allocations, "
                                "before any statement" +
                                std::string(start.forWarpSpecialization.count(h.buffer.get()) ? ": a warp-specialized loop's roles then begin after it" : ""));
        if (roles.roleOf.count(h.buffer.get()))
            d.details.push_back("the loop is inside the ws(...) role at " + roles.roleOf[h.buffer.get()].lineColumn() +
                                ", whose buffers are allocated for the block");
        ctx.explain.record(std::move(d));
    }
    // The others moved to the start of the kernel, each with why.
    auto explainAtStart = [&](const ir::Buffer &buffer, SourceRange where, const std::string &why) {
        if (fromLoops.count(buffer.get())) return;
        Decision d;
        d.where = where;
        d.op = "allocation of '" + buffer->name + "'";
        d.choice = "once, at the start of the kernel";
        d.why = why;
        ctx.explain.record(std::move(d));
    };
    for (const auto &[buffer, where] : roles.moved)
        explainAtStart(buffer, where, "it is allocated inside the ws(...) role at " + roles.roleOf[buffer.get()].lineColumn() +
                                          "; TileLang allocates a kernel's buffers for the block, and the block's shared memory is planned once");
    for (const auto &[buffer, where] : start.moved)
        explainAtStart(buffer, where, "it is allocated on the way to the pipelined loop at " + start.loopOf[buffer.get()].lineColumn() +
                                          ", which the block runs once; TileLang allocates a kernel's buffers for the block" +
                                          std::string(start.forWarpSpecialization.count(buffer.get())
                                                          ? ", and a warp-specialized loop's roles begin after the kernel's first allocations"
                                                          : ""));
    return out;
}

} // namespace tilet
