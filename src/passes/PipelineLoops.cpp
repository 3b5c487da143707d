// PipelineLoops.cpp -- see PipelineLoops.h.
//
// 1. Producers are the loop body's cp.async copies (select-copy-inst marks
//    only direct statements of the body); everything else is a consumer.
// 2. Each producer's shared buffer gets S versions: a new buffer with a
//    leading dimension of S (1 when S = 1); every access inside the loop
//    selects a version, (k - min + d) % S for iteration k + d. The buffer may
//    not be used outside the loop or written by a consumer.
// 3. The loop is rebuilt as the prologue and the steady state described in
//    the header; the producers' issue for iteration k + S - 1 is guarded by
//    that iteration existing, and every iteration commits one group (empty
//    at the end), so that the wait count is the same in every iteration.
#include "passes/PipelineLoops.h"

#include "ir/Analysis.h"
#include "ir/Visitor.h"

#include <map>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

// Rewrites accesses of versioned buffers to select `version`.
class Versioner : public ir::Mutator {
public:
    Versioner(const std::map<const ir::BufferNode *, ir::Buffer> &versioned, Expr version) : versioned_(versioned), version_(std::move(version)) {}
    using ir::Mutator::mutate;

    ir::Region mutateRegion(const ir::Region &r) override {
        ir::Region out = ir::Mutator::mutateRegion(r);
        auto it = versioned_.find(r.buffer.get());
        if (it == versioned_.end()) return out;
        out.buffer = it->second;
        out.mins.insert(out.mins.begin(), version_);
        out.extents.insert(out.extents.begin(), 1);
        return out;
    }

protected:
    Expr mutateLoad(const Expr &self, const ir::Load &n) override {
        Expr base = ir::Mutator::mutateLoad(self, n);
        auto it = versioned_.find(n.buffer.get());
        if (it == versioned_.end()) return base;
        std::vector<Expr> indices = ir::as<ir::Load>(base)->indices;
        indices.insert(indices.begin(), version_);
        return std::make_shared<ir::Load>(it->second, std::move(indices), n.span);
    }
    Stmt mutateStore(const Stmt &self, const ir::Store &n) override {
        Stmt base = ir::Mutator::mutateStore(self, n);
        auto it = versioned_.find(n.buffer.get());
        if (it == versioned_.end()) return base;
        const ir::Store &s = *ir::as<ir::Store>(base);
        std::vector<Expr> indices = s.indices;
        indices.insert(indices.begin(), version_);
        return std::make_shared<ir::Store>(it->second, std::move(indices), s.value, s.op, s.span);
    }

private:
    const std::map<const ir::BufferNode *, ir::Buffer> &versioned_;
    Expr version_;
};

// Replaces the allocations of versioned buffers by their versioned form.
class AllocationReplacer : public ir::Mutator {
public:
    explicit AllocationReplacer(const std::map<const ir::BufferNode *, ir::Buffer> &versioned) : versioned_(versioned) {}
    using ir::Mutator::mutate;

protected:
    Stmt mutateAllocate(const Stmt &self, const ir::Allocate &n) override {
        Stmt base = ir::Mutator::mutateAllocate(self, n);
        auto it = versioned_.find(n.buffer.get());
        if (it == versioned_.end()) return base;
        return std::make_shared<ir::Allocate>(it->second, ir::as<ir::Allocate>(base)->body, n.span);
    }

private:
    const std::map<const ir::BufferNode *, ir::Buffer> &versioned_;
};

// Where a statement accesses buffer `b`, and where it writes it; statement
// `skip` (a loop) is left out.
struct Uses {
    std::vector<SourceRange> all, writes;
};

class UseCollector : public ir::Visitor {
public:
    UseCollector(const ir::BufferNode *b, const ir::StmtNode *skip) : b_(b), skip_(skip) {}
    Uses uses;
    using ir::Visitor::visit;

    void visit(const Stmt &s) override {
        if (s.get() == skip_) return;
        ir::Visitor::visit(s);
    }
    void visitStore(const ir::Store &n) override {
        note(n.buffer, n.span, true);
        ir::Visitor::visitStore(n);
    }
    void visitLoad(const ir::Load &n) override {
        note(n.buffer, n.span, false);
        ir::Visitor::visitLoad(n);
    }
    void visitCopy(const ir::Copy &n) override {
        note(n.src.buffer, n.span, false);
        note(n.dst.buffer, n.span, true);
        ir::Visitor::visitCopy(n);
    }
    void visitGemm(const ir::Gemm &n) override {
        note(n.a.buffer, n.span, false);
        note(n.b.buffer, n.span, false);
        note(n.c.buffer, n.span, true);
        ir::Visitor::visitGemm(n);
    }
    void visitFill(const ir::Fill &n) override {
        note(n.dst.buffer, n.span, true);
        ir::Visitor::visitFill(n);
    }
    void visitAtomicAdd(const ir::AtomicAdd &n) override {
        note(n.dst.buffer, n.span, true);
        if (n.src) note(n.src->buffer, n.span, false);
        ir::Visitor::visitAtomicAdd(n);
    }

private:
    void note(const ir::Buffer &x, SourceRange where, bool write) {
        if (x.get() != b_) return;
        uses.all.push_back(where);
        if (write) uses.writes.push_back(where);
    }
    const ir::BufferNode *b_;
    const ir::StmtNode *skip_;
};

Uses usesOf(const Stmt &s, const ir::BufferNode *b, const ir::StmtNode *skip = nullptr) {
    UseCollector c(b, skip);
    c.visit(s);
    return c.uses;
}

std::string where(const SourceRange &r) { return std::to_string(r.begin.line) + ":" + std::to_string(r.begin.col); }

class Pipeliner : public ir::Mutator {
public:
    Pipeliner(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx) {}
    using ir::Mutator::mutate;
    std::map<const ir::BufferNode *, ir::Buffer> versioned;

protected:
    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        Stmt base = ir::Mutator::mutateFor(self, n);
        if (!n.pipeline || n.pipeline->stages == 0) return base;
        return pipeline(n, *ir::as<ir::For>(base));
    }

private:
    static std::vector<Stmt> topLevel(const Stmt &body) {
        if (const ir::Seq *s = ir::as<ir::Seq>(body)) return s->stmts;
        return {body};
    }
    static bool isProducer(const Stmt &s) {
        const ir::Copy *c = ir::as<ir::Copy>(s);
        return c && c->inst == ir::CopyInst::CPAsync && c->inPipeline;
    }

    Stmt unpipelined(const ir::For &f, const std::string &why) {
        auto loop = ir::rebuildFor(f, f.min, f.extent, f.body);
        loop->pipeline.reset();
        Decision d;
        d.where = f.span;
        d.op = "pipelined loop";
        d.choice = "not pipelined";
        d.why = why;
        ctx_.explain.record(std::move(d));
        return loop;
    }

    // `original` is the loop as the kernel holds it (for the uses of its
    // buffers elsewhere); `f` the same loop with inner loops already rewritten.
    Stmt pipeline(const ir::For &original, const ir::For &f) {
        const int64_t S = f.pipeline->stages;
        const int64_t versions = S >= 2 ? S : 1;
        const int64_t ahead = S >= 2 ? S - 1 : 1;   // iterations the loads run ahead
        std::vector<Stmt> stmts = topLevel(f.body), producers, consumers;
        for (const Stmt &s : stmts) (isProducer(s) ? producers : consumers).push_back(s);
        if (producers.empty()) {
            if (!ctx_.target.cpAsync)
                return unpipelined(f, "cp.async needs sm_80 or newer; " + ctx_.target.name + " has none, so its loads are synchronous copies");
            return unpipelined(f, "no statement of its body is a global->shared copy that can use cp.async");
        }

        // The producers' buffers: versioned, used only inside this loop, written only by the producers.
        std::map<const ir::BufferNode *, ir::Buffer> mine;
        std::vector<ir::Buffer> order;
        Stmt consumerBody = ir::seq(consumers);
        for (const Stmt &p : producers) {
            const ir::Buffer &b = ir::as<ir::Copy>(p)->dst.buffer;
            if (mine.count(b.get())) continue;
            for (const Stmt &c : consumers) {
                Uses u = usesOf(c, b.get());
                if (!u.writes.empty()) {
                    Diagnostic d{Severity::Error, u.writes.front(), "shared buffer '" + b->name + "' is loaded ahead by the pipelined copy at " +
                                                                        where(p->span) + ", so no other statement of the loop may write it", {}, {}};
                    d.note(p->span, "the pipelined copy");
                    ctx_.diags.report(std::move(d));
                    return ir::rebuildFor(f, f.min, f.extent, f.body);
                }
            }
            Uses outside = usesOf(kernel_.body, b.get(), &original);
            if (!outside.all.empty()) {
                Diagnostic d{Severity::Error, outside.all.front(), "shared buffer '" + b->name + "' is loaded ahead by the pipelined copy at " +
                                                                        where(p->span) + " into " + std::to_string(versions) +
                                                                        " versions, so it can only be used inside that loop",
                             {}, {}};
                d.note(p->span, "the pipelined copy");
                ctx_.diags.report(std::move(d));
                return ir::rebuildFor(f, f.min, f.extent, f.body);
            }
            ir::Buffer v = std::make_shared<ir::BufferNode>(*b);
            v->shape.insert(v->shape.begin(), ir::intImm(versions));
            v->pipelineVersions = versions;
            mine[b.get()] = v;
            order.push_back(v);
        }

        const ir::VarRef &k = f.var;
        Expr rel = ir::sub(k, f.min);   // the iteration number, from 0
        auto versionAt = [&](const Expr &iteration) { return versions == 1 ? ir::intImm(0) : ir::mod(iteration, ir::intImm(versions)); };
        // The producers of iteration `iteration` (counted from 0), as code.
        auto issue = [&](const Expr &iteration) {
            std::vector<Stmt> out;
            Expr kAt = ir::add(f.min, iteration);
            for (const Stmt &p : producers) out.push_back(Versioner(mine, versionAt(iteration)).mutate(ir::substitute(p, {{k, kAt}})));
            return ir::seq(std::move(out));
        };

        std::vector<Stmt> prologue;
        std::optional<int64_t> count = ir::constInt(f.extent);
        for (int64_t s = 0; s < ahead; ++s) {
            if (!count || s < *count) {
                Stmt copies = issue(ir::intImm(s));
                prologue.push_back(count ? copies : std::make_shared<ir::IfThenElse>(ir::lt(ir::intImm(s), f.extent), copies, nullptr, f.span));
            }
            prologue.push_back(std::make_shared<ir::CpAsyncCommit>(f.span));
        }

        Expr next = ir::add(rel, ir::intImm(ahead));
        Stmt ahead_ = ir::seq({std::make_shared<ir::IfThenElse>(ir::lt(next, f.extent), issue(next), nullptr, f.span),
                               std::make_shared<ir::CpAsyncCommit>(f.span)});
        Stmt compute = Versioner(mine, versionAt(rel)).mutate(consumerBody);
        std::vector<Stmt> body{std::make_shared<ir::CpAsyncWait>(ahead - 1, f.span), std::make_shared<ir::SyncThreads>(f.span)};
        if (versions >= 2) {
            body.push_back(ahead_);
            body.push_back(compute);
        } else {
            body.push_back(compute);   // one buffer: the next load waits for this iteration's readers
            body.push_back(ahead_);
        }
        auto loop = ir::rebuildFor(f, f.min, f.extent, ir::seq(std::move(body)));
        loop->pipeline.reset();
        for (auto &[old, v] : mine) versioned[old] = v;

        Decision d;
        d.where = f.span;
        d.op = "pipelined loop";
        d.choice = std::to_string(S) + " stage" + (S == 1 ? "" : "s") + ": loads issued " + std::to_string(ahead) + " iteration" +
                   (ahead == 1 ? "" : "s") + " ahead with cp.async";
        d.why = versions >= 2 ? "cp.async.wait_group " + std::to_string(ahead - 1) +
                                    " and one barrier per iteration: the barrier publishes this iteration's tiles and ends the reads of the "
                                    "version the next loads overwrite"
                              : "one buffer: each iteration's loads are issued after its reads, behind a second barrier";
        int64_t total = 0;
        for (const ir::Buffer &v : order) {
            int64_t bytes = *v->constElements() * dtypeBits(v->dtype) / 8;
            total += bytes;
            d.details.push_back("'" + v->name + "': " + std::to_string(versions) + " version" + (versions == 1 ? "" : "s") + ", " +
                                std::to_string(bytes) + " bytes of shared memory");
        }
        d.details.push_back(std::to_string(total) + " bytes of shared memory for the pipelined tiles");
        ctx_.explain.record(std::move(d));
        return ir::seq({ir::seq(std::move(prologue)), loop});
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
};

} // namespace

ir::Kernel pipelineLoops(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Pipeliner pipeliner(kernel, ctx);
    ir::Stmt body = pipeliner.mutate(kernel.body);
    if (!pipeliner.versioned.empty()) body = AllocationReplacer(pipeliner.versioned).mutate(body);
    out.body = body;
    return out;
}

} // namespace tilet
