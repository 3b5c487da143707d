// HoistLoopAllocations.cpp -- see HoistLoopAllocations.h.
#include "passes/HoistLoopAllocations.h"

#include "ir/Visitor.h"

namespace tilet {

namespace {

// Removes the shared and fragment allocations of a loop body, collecting them.
class Collector : public ir::Mutator {
public:
    std::vector<std::pair<ir::Buffer, SourceRange>> hoisted;
    using ir::Mutator::mutate;

protected:
    ir::Stmt mutateAllocate(const ir::Stmt &self, const ir::Allocate &n) override {
        if (n.buffer->scope != ir::MemScope::Shared && n.buffer->scope != ir::MemScope::Fragment)
            return ir::Mutator::mutateAllocate(self, n);
        hoisted.push_back({n.buffer, n.span});
        return ir::seq({mutate(n.body)});
    }
    ir::Stmt mutateSeq(const ir::Stmt &self, const ir::Seq &n) override {
        ir::Stmt out = ir::Mutator::mutateSeq(self, n);
        // Statements of removed allocations become statements of the body.
        return out == self ? self : ir::seq({out});
    }
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        return n.forKind == ir::ForKind::Parallel ? self : ir::Mutator::mutateFor(self, n);
    }
};

class Hoister : public ir::Mutator {
public:
    explicit Hoister(PassContext &ctx) : ctx_(ctx) {}
    using ir::Mutator::mutate;

protected:
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        if (n.forKind == ir::ForKind::Parallel) return self;
        ir::Stmt inner = ir::Mutator::mutateFor(self, n);   // nested pipelined loops first
        if (!n.pipeline) return inner;
        const ir::For &loop = *ir::as<ir::For>(inner);
        Collector collector;
        ir::Stmt body = collector.mutate(loop.body);
        if (collector.hoisted.empty()) return inner;
        ir::Stmt out = ir::rebuildFor(loop, loop.min, loop.extent, body);
        for (auto it = collector.hoisted.rbegin(); it != collector.hoisted.rend(); ++it) {
            out = std::make_shared<ir::Allocate>(it->first, out, it->second);
            Decision d;
            d.where = it->second;
            d.op = "allocation of '" + it->first->name + "'";
            d.choice = "once, before the pipelined loop at " + n.span.lineColumn();
            d.why = "TileLang allocates a kernel's buffers once for the block wherever they are written; out of the loop's body, "
                    "the loop's statements are its own and can be pipelined";
            ctx_.explain.record(std::move(d));
        }
        return out;
    }

private:
    PassContext &ctx_;
};

} // namespace

ir::Kernel hoistLoopAllocations(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    out.body = Hoister(ctx).mutate(kernel.body);
    return out;
}

} // namespace tilet
