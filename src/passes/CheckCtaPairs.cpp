// CheckCtaPairs.cpp -- see CheckCtaPairs.h.
#include "passes/CheckCtaPairs.h"

#include "ir/Visitor.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tilet {

namespace {

// The CTA pair's gemms that are not issued by the leader alone: one thread
// of the pair issues its tcgen05.mma for both blocks, so the gemm must sit
// under a condition that holds in the leader only (`block_rank_in_cluster()
// == 0`, alone or and-ed), and outside a pipelined loop, whose loads and
// releases tilet gives every block (the pair's are the program's own roles).
class PairIssuers : public ir::Visitor {
public:
    std::vector<std::pair<SourceRange, std::string>> bad;   // where, and the message

    void visitLetStmt(const ir::LetStmt &n) override {
        if (const ir::SpecialReg *r = ir::as<ir::SpecialReg>(n.value); r && r->special == ir::SpecialKind::ClusterCtaRank) rankVars_.insert(n.var.get());
        ir::Visitor::visitLetStmt(n);
    }
    void visitIfThenElse(const ir::IfThenElse &n) override {
        visit(n.cond);
        bool leader = leaderOnly(n.cond);
        leaderDepth_ += leader;
        visit(n.thenBody);
        leaderDepth_ -= leader;
        if (n.elseBody) visit(n.elseBody);
    }
    void visitFor(const ir::For &n) override {
        bool pipelined = n.pipeline.has_value();
        pipelinedDepth_ += pipelined;
        ir::Visitor::visitFor(n);
        pipelinedDepth_ -= pipelined;
    }
    void visitGemm(const ir::Gemm &n) override {
        if (!n.use2cta) return;
        const std::string what = "the CTA pair's gemm (use_2cta) must be issued by the pair's leader alone, one thread for both blocks: ";
        if (pipelinedDepth_ > 0)
            bad.push_back({n.span, what + "it is in a pipelined loop, whose loads tilet issues in every block: write the roles (a loading warp in each "
                                          "block, the MMA warp under block_rank_in_cluster() == 0), as TileLang's gemm_2cta does"});
        else if (leaderDepth_ == 0)
            bad.push_back({n.span, what + "put it under a condition that holds in the leader only (block_rank_in_cluster() == 0)"});
    }
    // The pair's tcgen05.cp is issued, as its MMAs, by the leader for both blocks.
    // (Sema makes one copy per 128 words: said once per statement.)
    void visitTcgen05Copy(const ir::Tcgen05Copy &n) override {
        if (n.pair && leaderDepth_ == 0 && said_.insert(n.span.lineColumn()).second)
            bad.push_back({n.span, "the CTA pair's tcgen05_cp_warpx4 (use_2cta) copies in both blocks and is issued by the pair's leader alone: put it "
                                   "under a condition that holds in the leader only (block_rank_in_cluster() == 0), beside the gemm it feeds"});
    }

private:
    bool isRank(const ir::Expr &e) const {
        if (const ir::SpecialReg *r = ir::as<ir::SpecialReg>(e)) return r->special == ir::SpecialKind::ClusterCtaRank;
        const ir::VarNode *v = ir::as<ir::VarNode>(e);
        return v && rankVars_.count(v);
    }
    bool leaderOnly(const ir::Expr &cond) const {
        const ir::Binary *b = ir::as<ir::Binary>(cond);
        if (!b) return false;
        if (b->op == ir::BinaryOp::And) return leaderOnly(b->a) || leaderOnly(b->b);
        if (b->op != ir::BinaryOp::Eq) return false;
        return (isRank(b->a) && ir::constInt(b->b) == 0) || (isRank(b->b) && ir::constInt(b->a) == 0);
    }
    std::set<const ir::VarNode *> rankVars_;
    std::set<std::string> said_;   // the copies reported, by position
    int leaderDepth_ = 0, pipelinedDepth_ = 0;
};

} // namespace

ir::Kernel checkCtaPairs(const ir::Kernel &kernel, PassContext &ctx) {
    bool asksForPair = false;
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        if (const ir::Gemm *g = ir::as<ir::Gemm>(s)) asksForPair = asksForPair || g->use2cta;
    });
    // (Without a cluster of two blocks there is no pair: select-gemm-inst says so.)
    const bool pairs = kernel.hasCluster && kernel.cluster[0] * kernel.cluster[1] * kernel.cluster[2] == 2;
    if (asksForPair && pairs) {
        PairIssuers issuers;
        issuers.visit(kernel.body);
        for (const auto &[where, message] : issuers.bad) ctx.diags.error(where, message);
    }
    std::set<std::string> saidCopies;   // one error per tcgen05_cp_warpx4 statement, not per 128-word chunk
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        const ir::Tcgen05Commit *c = ir::as<ir::Tcgen05Commit>(s);
        if (c && c->bothBlocks && !asksForPair)
            ctx.diags.error(c->span, "arrive_2cta signals the completion of the CTA pair's MMAs to both blocks; this kernel has no use_2cta gemm");
        // The copy names its .cta_group as the program says (TileLang's use_2cta), and it must be the kernel's.
        const ir::Tcgen05Copy *cp = ir::as<ir::Tcgen05Copy>(s);
        if (cp && !saidCopies.insert(cp->span.lineColumn()).second) return;
        if (cp && cp->pair && !asksForPair)
            ctx.diags.error(cp->span, "tcgen05_cp_warpx4 with use_2cta copies scale factors for the CTA pair's MMAs; this kernel has no use_2cta gemm");
        if (cp && !cp->pair && asksForPair)
            ctx.diags.error(cp->span, "a kernel of the CTA pair's MMAs (use_2cta) issues all its tcgen05 instructions with .cta_group::2 (PTX ISA), and the "
                                      "pair's tcgen05.cp copies in both blocks: write tcgen05_cp_warpx4(..., use_2cta = true)");
    });
    return kernel;
}

} // namespace tilet
