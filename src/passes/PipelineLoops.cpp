// PipelineLoops.cpp -- see PipelineLoops.h.
//
// 1. Producers are the loop body's cp.async copies, im2col gathers and
//    gather loops (select-copy-inst marks only direct statements of the
//    body); everything else is a consumer.
// 2. Each producer's shared buffer gets S versions: a new buffer with a
//    leading dimension of S (1 when S = 1); every access inside the loop
//    selects a version, (k - min + d) % S for iteration k + d. The buffer may
//    not be used outside the loop or written by a consumer. Several loops
//    that load the same tile share one buffer, with the most versions.
// 3. The loop is rebuilt as the prologue and the steady state described in
//    the header; the producers' issue for iteration k + S - 1 is guarded by
//    that iteration existing, and every iteration commits one group (empty
//    at the end), so that the wait count is the same in every iteration.
#include "passes/PipelineLoops.h"

#include "ir/Analysis.h"
#include "ir/Visitor.h"
#include "passes/CopyFacts.h"
#include "passes/MultiVersion.h"

#include <algorithm>
#include <map>

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

class Pipeliner : public ir::Mutator {
public:
    Pipeliner(const ir::Kernel &k, PassContext &ctx) : kernel_(k), ctx_(ctx), shared_(sharedTiles(k.body)) {}
    using ir::Mutator::mutate;
    std::map<const ir::BufferNode *, ir::Buffer> versioned;

protected:
    Stmt mutateFor(const Stmt &self, const ir::For &n) override {
        Stmt base = ir::Mutator::mutateFor(self, n);
        if (!n.pipeline) return base;
        if (n.pipeline->stages == 0) return unpipelined(*ir::as<ir::For>(base), "stages = 0 (TileLang's num_stages = 0): the loop runs in order");
        return pipeline(n, *ir::as<ir::For>(base));
    }

private:
    static int64_t versionsOf(int64_t stages) { return stages >= 2 ? stages : 1; }
    // The tiles that more than one pipelined loop loads ahead: one buffer
    // for them all, with the versions of the deepest (see SharedTile).
    static SharedTiles sharedTiles(const Stmt &body) {
        SharedTiles tiles;
        std::map<const ir::BufferNode *, std::pair<ir::Buffer, int64_t>> deepest;
        ir::forEachStmt(body, [&](const Stmt &s) {
            const ir::For *f = ir::as<ir::For>(s);
            if (!f || !f->pipeline || f->pipeline->stages == 0) return;
            for (const Stmt &x : topLevel(f->body)) {
                if (!isProducer(x)) continue;
                const ir::Buffer &b = producedTile(ir::unguarded(x));
                std::vector<const ir::StmtNode *> &loops = tiles[b.get()].loops;
                if (std::find(loops.begin(), loops.end(), f) == loops.end()) loops.push_back(f);
                auto &[buffer, versions] = deepest[b.get()];
                buffer = b;
                versions = std::max(versions, versionsOf(f->pipeline->stages));
            }
        });
        for (auto it = tiles.begin(); it != tiles.end();) {
            if (it->second.loops.size() < 2) {
                it = tiles.erase(it);
                continue;
            }
            const auto &[b, versions] = deepest[it->first];
            it->second.versioned = versionedBuffer(b, versions);
            ++it;
        }
        return tiles;
    }
    static std::vector<Stmt> topLevel(const Stmt &body) {
        if (const ir::Seq *s = ir::as<ir::Seq>(body)) return s->stmts;
        return {body};
    }
    // A producer may be predicated: under an `if` of its iteration (predicate-pipeline-branches).
    static bool isProducer(const Stmt &guarded) {
        const Stmt &s = ir::unguarded(guarded);
        if (const ir::Im2Col *g = ir::as<ir::Im2Col>(s)) return g->inst == ir::CopyInst::CPAsync && g->inPipeline;
        if (const ir::For *f = ir::as<ir::For>(s)) return f->pipelineProducer;
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
        const int64_t versions = versionsOf(S);
        const int64_t ahead = S >= 2 ? S - 1 : 1;   // iterations the loads run ahead
        std::vector<Stmt> stmts = topLevel(f.body), producers, consumers;
        for (const Stmt &s : stmts) (isProducer(s) ? producers : consumers).push_back(s);
        if (producers.empty()) {
            if (!ctx_.target.has(Feature::CpAsync))
                return unpipelined(f, lacks(ctx_.target, Feature::CpAsync) + ", so its loads are synchronous copies");
            // Copies a branch kept whole (predicate-pipeline-branches said why) are not the body's statements.
            for (const Stmt &s : stmts) {
                bool copies = false;
                if (ir::as<ir::IfThenElse>(s)) ir::forEachStmt(s, [&](const Stmt &x) { copies = copies || ir::as<ir::Copy>(x) || ir::as<ir::Im2Col>(x); });
                if (copies) return unpipelined(f, "its copies are inside the branch at " + s->span.lineColumn() + ", which stays whole (see there)");
            }
            // Copies selection kept in order (their remarks say why).
            for (const Stmt &s : stmts)
                if (const ir::Copy *c = ir::as<ir::Copy>(ir::unguarded(s)); c && isGlobalToShared(*c))
                    return unpipelined(f, "its copy at " + c->span.lineColumn() + " runs in order, for the reason its remark gives");
            return unpipelined(f, "no statement of its body is a global->shared copy that can use cp.async");
        }

        // The loads of iteration k + S - 1 are issued at the start of
        // iteration k, into the stage iteration k - 1 read: a wgmma group
        // still reading it then would see it overwritten.
        if (std::string late = wgmmaGroupPastIteration(producers, consumers); !late.empty()) {
            ctx_.diags.error(f.span, "not supported yet: a cp.async pipeline in which " + late + "; retire the group within the iteration (wait_wgmma)");
            return ir::rebuildFor(f, f.min, f.extent, f.body);
        }
        // The producers' buffers: versioned, used only inside this loop, written only by the producers.
        std::optional<VersionedBuffers> mine = versionBuffers(kernel_.body, original, producers, consumers, versions, "pipelined copy", ctx_.diags, shared_);
        if (!mine) return ir::rebuildFor(f, f.min, f.extent, f.body);
        Stmt consumerBody = ir::seq(consumers);

        const ir::VarRef &k = f.var;
        Expr rel = ir::sub(k, f.min);   // the iteration number, from 0
        auto versionAt = [&](const Expr &iteration) { return versions == 1 ? ir::intImm(0) : ir::mod(iteration, ir::intImm(versions)); };
        // The producers of iteration `iteration` (counted from 0), as code.
        auto issue = [&](const Expr &iteration) {
            std::vector<Stmt> out;
            Expr kAt = ir::add(f.min, iteration);
            for (const Stmt &p : producers) out.push_back(selectVersion(*mine, versionAt(iteration), ir::substitute(p, {{k, kAt}})));
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
        Stmt compute = selectVersion(*mine, versionAt(rel), consumerBody);
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
        for (auto &[old, v] : mine->replacement) versioned[old] = v;

        Decision d;
        d.where = f.span;
        d.op = "pipelined loop";
        std::string issued = std::to_string(S) + " stage" + (S == 1 ? "" : "s") + ": loads issued " + std::to_string(ahead) + " iteration" +
                             (ahead == 1 ? "" : "s") + " ahead";
        d.choice = issued + " with cp.async";
        d.promises = "cp.async";
        d.otherwise = issued + " as plain loads";
        d.why = versions >= 2 ? "cp.async.wait_group " + std::to_string(ahead - 1) +
                                    " and one barrier per iteration: the barrier publishes this iteration's tiles and ends the reads of the "
                                    "version the next loads overwrite"
                              : "one buffer: each iteration's loads are issued after its reads, behind a second barrier";
        int64_t total = 0;
        for (const ir::Buffer &v : mine->order) {
            int64_t bytes = *v->constElements() * dtypeBits(v->dtype) / 8;
            std::string detail = "'" + v->name + "': " + std::to_string(versions) + " version" + (versions == 1 ? "" : "s") + ", " +
                                 std::to_string(bytes * versions / v->pipelineVersions) + " bytes of shared memory";
            total += bytes * versions / v->pipelineVersions;
            for (const auto &[old, tile] : shared_) {
                if (tile.versioned != v) continue;
                std::string others;
                for (const ir::StmtNode *loop : tile.loops)
                    if (loop != &original) others += (others.empty() ? "" : ", ") + loop->span.lineColumn();
                detail += " (the buffer of the pipelined loop" + std::string(tile.loops.size() > 2 ? "s" : "") + " at " + others +
                          " too, which load" + (tile.loops.size() > 2 ? "" : "s") + " it as well: " + std::to_string(v->pipelineVersions) +
                          " version" + (v->pipelineVersions == 1 ? "" : "s") + " in all)";
            }
            d.details.push_back(detail);
        }
        d.details.push_back(std::to_string(total) + " bytes of shared memory for the pipelined tiles");
        ctx_.explain.record(std::move(d));
        return ir::seq({ir::seq(std::move(prologue)), loop});
    }

    const ir::Kernel &kernel_;
    PassContext &ctx_;
    const SharedTiles shared_;
};

} // namespace

ir::Kernel pipelineLoops(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Pipeliner pipeliner(kernel, ctx);
    ir::Stmt body = pipeliner.mutate(kernel.body);
    if (!pipeliner.versioned.empty()) body = replaceAllocations(body, pipeliner.versioned);
    out.body = body;
    return out;
}

} // namespace tilet
