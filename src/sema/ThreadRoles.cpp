// ThreadRoles.cpp -- see ThreadRoles.h.
#include "sema/ThreadRoles.h"

#include "ir/Uniformity.h"
#include "ir/Visitor.h"

#include <optional>
#include <functional>
#include <map>
#include <set>
#include <utility>

namespace tilet {

namespace {

struct ThreadRange {
    int64_t lo = 0, hi = 0;   // threads lo .. hi - 1
    bool empty() const { return lo >= hi; }
    bool wholeWarps() const { return lo % ir::WarpSpecialize::kWarpThreads == 0 && hi % ir::WarpSpecialize::kWarpThreads == 0; }
    ThreadRange operator&(const ThreadRange &o) const { return {std::max(lo, o.lo), std::min(hi, o.hi)}; }
};

// Whether `s` spreads work over the threads that run it.
bool spreadsWork(const ir::Stmt &s) {
    bool found = false;
    ir::forEachStmt(s, [&](const ir::Stmt &x) {
        switch (x->kind) {
        case ir::StmtKind::Copy:
        case ir::StmtKind::Gemm:
        case ir::StmtKind::Fill:
        case ir::StmtKind::Reduce:
        case ir::StmtKind::Cumsum:
        case ir::StmtKind::FinalizeReducer:
        case ir::StmtKind::AtomicAdd:
        case ir::StmtKind::Im2Col:
        case ir::StmtKind::ScaleTranspose:
        case ir::StmtKind::Tcgen05Copy: found = true; break;
        case ir::StmtKind::For: found = found || ir::as<ir::For>(x)->forKind == ir::ForKind::Parallel; break;
        default: break;
        }
    });
    return found;
}

// Whether `s` holds `sync_threads(id, n)` met by exactly the `range.hi -
// range.lo` threads that run it (TileLang's top-k selector: `if tx < RADIX:`
// around a scan whose steps meet at `T.sync_threads(3, RADIX)`): the threads
// of the branch synchronise among themselves, as a role's do.
bool holdsNamedBarrier(const ir::Stmt &s, ThreadRange range) {
    bool found = false;
    ir::forEachStmt(s, [&](const ir::Stmt &x) {
        if (const ir::SyncThreads *b = ir::as<ir::SyncThreads>(x); b && b->barrierId != 0 && b->threads == range.hi - range.lo) found = true;
    });
    return found;
}

// The set_max_nreg a role starts with (its first statement), if any.
const ir::SetMaxNReg *leadingRequest(const ir::WarpSpecialize &role) {
    const ir::Seq *seq = ir::as<ir::Seq>(role.body);
    return ir::as<ir::SetMaxNReg>(seq && !seq->stmts.empty() ? seq->stmts.front() : role.body);
}

// setmaxnreg is executed by all the warps of a warp group, as one
// instruction (PTX ISA, "setmaxnreg": .sync.aligned). TileLang's Blackwell
// kernels split warp group 0 into one-warp roles that each start with the
// same set_max_nreg (aws/gemm.py: the TMA warp, the MMA warp and two idle
// ones, each `T.set_max_nreg(40, 0)`). When the roles of a chain that lie in
// one warp group cover all its warps and all start with the same request,
// the request becomes a role of that whole warp group, ahead of them, which
// its four warps execute together. (Otherwise check-target reports it.)
void shareRegisterRequests(std::vector<ir::Stmt> &roles) {
    constexpr int64_t kGroupWarps = ir::WarpSpecialize::kGroupThreads / ir::WarpSpecialize::kWarpThreads;
    std::map<int64_t, std::vector<size_t>> byGroup;   // warp group -> its roles that are not whole warp groups
    for (size_t i = 0; i < roles.size(); ++i) {
        const ir::WarpSpecialize &w = *ir::as<ir::WarpSpecialize>(roles[i]);
        if (w.wholeWarpGroups()) continue;
        int64_t group = w.warps.front() / kGroupWarps;
        byGroup[w.warps.back() / kGroupWarps == group ? group : -1].push_back(i);
    }
    byGroup.erase(-1);   // a role across two warp groups keeps its request (and its error)
    std::map<size_t, ir::Stmt> shared;   // role index -> the group's role to put before it
    std::set<size_t> stripped;
    for (const auto &[group, members] : byGroup) {
        const ir::SetMaxNReg *request = nullptr;
        size_t warps = 0;
        bool alike = true;
        for (size_t i : members) {
            const ir::WarpSpecialize &w = *ir::as<ir::WarpSpecialize>(roles[i]);
            const ir::SetMaxNReg *r = leadingRequest(w);
            alike = alike && r && (!request || (r->count == request->count && r->increase == request->increase));
            if (r && !request) request = r;
            warps += w.warps.size();
        }
        if (!alike || warps != kGroupWarps) continue;
        std::vector<int64_t> groupWarps;
        for (int64_t w = group * kGroupWarps; w < (group + 1) * kGroupWarps; ++w) groupWarps.push_back(w);
        shared[members.front()] = std::make_shared<ir::WarpSpecialize>(
            std::move(groupWarps), std::make_shared<ir::SetMaxNReg>(request->count, request->increase, request->span), request->span);
        stripped.insert(members.begin(), members.end());
    }
    if (shared.empty()) return;
    std::vector<ir::Stmt> out;
    for (size_t i = 0; i < roles.size(); ++i) {
        if (auto it = shared.find(i); it != shared.end()) out.push_back(it->second);
        if (!stripped.count(i)) {
            out.push_back(roles[i]);
            continue;
        }
        const ir::WarpSpecialize &w = *ir::as<ir::WarpSpecialize>(roles[i]);
        const ir::Seq *seq = ir::as<ir::Seq>(w.body);
        if (!seq || seq->stmts.size() < 2) continue;   // the request was all it did
        out.push_back(std::make_shared<ir::WarpSpecialize>(w.warps, ir::seq(std::vector<ir::Stmt>(seq->stmts.begin() + 1, seq->stmts.end())), w.span));
    }
    roles = std::move(out);
}

class RoleFormer : public ir::Mutator {
public:
    RoleFormer(const ir::Stmt &body, const ir::Kernel &k, const std::set<const ir::StmtNode *> &programBranches, DiagnosticEngine &diags)
        : uniformity_(body), threads_(k.threads), programBranches_(programBranches), diags_(diags) {}
    using ir::Mutator::mutate;

protected:
    ir::Stmt mutateLetStmt(const ir::Stmt &self, const ir::LetStmt &n) override {
        if (const ir::SpecialReg *r = ir::as<ir::SpecialReg>(n.value); r && r->special == ir::SpecialKind::ThreadIdx) linear_.insert(n.var.get());
        uniformity_.bind(n.var.get(), divergent_ || uniformity_.threadDependentBeyondFragments(n.value));
        return ir::Mutator::mutateLetStmt(self, n);
    }
    ir::Stmt mutateFor(const ir::Stmt &self, const ir::For &n) override {
        if (n.forKind == ir::ForKind::Parallel) return self;
        bool dependent = uniformity_.threadDependentBeyondFragments(n.min) || uniformity_.threadDependentBeyondFragments(n.extent);
        uniformity_.bind(n.var.get(), divergent_ || dependent);
        return under(dependent, [&] { return ir::Mutator::mutateFor(self, n); });
    }
    ir::Stmt mutateWhile(const ir::Stmt &self, const ir::While &n) override {
        return under(uniformity_.threadDependentBeyondFragments(n.cond), [&] { return ir::Mutator::mutateWhile(self, n); });
    }
    ir::Stmt mutateWarpSpecialize(const ir::Stmt &self, const ir::WarpSpecialize &) override { return self; }
    ir::Stmt mutateIfThenElse(const ir::Stmt &self, const ir::IfThenElse &n) override {
        if (!divergent_ && programBranches_.count(&n)) {
            if (std::optional<ir::Stmt> roles = asRoles(self, n)) return *roles;
        }
        return under(uniformity_.threadDependentBeyondFragments(n.cond), [&] { return ir::Mutator::mutateIfThenElse(self, n); });
    }

private:
    template <typename F> ir::Stmt under(bool divergent, F body) {
        bool outer = divergent_;
        divergent_ = divergent_ || divergent;
        ir::Stmt out = body();
        divergent_ = outer;
        return out;
    }

    // The chain `if (c1) A else if (c2) B ... else Z` as roles, when its
    // conditions bound the thread index and one of its branches spreads work.
    std::optional<ir::Stmt> asRoles(const ir::Stmt &self, const ir::IfThenElse &first) {
        struct Branch {
            ThreadRange range;
            ir::Stmt body;
            SourceRange span;   // its `if` (an else branch: the last `if` of the chain)
        };
        // A condition may also hold for some blocks only (`cta_id == 0 && tx
        // < 64`, TileLang's 2-CTA MMA warp): its role runs the body under
        // that block condition. The threads of other blocks go on down the
        // chain, so no later condition may hold for any of them (and no else
        // branch may follow).
        auto guarded = [&](const Guard &g, const ir::Stmt &body, SourceRange span) {
            return g.blocks ? ir::Stmt(std::make_shared<ir::IfThenElse>(g.blocks, body, nullptr, span)) : body;
        };
        std::vector<Branch> branches;
        // The threads no earlier condition took; each branch takes one
        // range of them (TileLang's `if 128 <= tx < 160: ... elif tx < 128:`
        // leaves two ranges after its first branch, the second taking one).
        std::vector<bool> rest(static_cast<size_t>(threads_), true);
        auto take = [&](ThreadRange r) -> std::optional<ThreadRange> {
            ThreadRange taken{0, 0};
            for (int64_t t = std::max<int64_t>(r.lo, 0); t < std::min(r.hi, threads_); ++t) {
                if (!rest[static_cast<size_t>(t)]) continue;
                if (taken.empty()) taken = {t, t + 1};
                else if (taken.hi == t) taken.hi = t + 1;
                else return std::nullopt;   // two ranges: no role
            }
            for (int64_t t = taken.lo; t < taken.hi; ++t) rest[static_cast<size_t>(t)] = false;
            return taken;
        };
        std::vector<ThreadRange> blockGuarded;   // the ranges of branches under a block condition so far
        for (const ir::IfThenElse *i = &first; i;) {
            std::optional<Guard> g = guardOf(i->cond);
            if (!g) return std::nullopt;
            for (const ThreadRange &r : blockGuarded)
                if (!(r & g->threads).empty()) return std::nullopt;
            std::optional<ThreadRange> taken = take(g->threads);
            if (!taken) return std::nullopt;
            branches.push_back({*taken, guarded(*g, i->thenBody, i->span), i->span});
            if (g->blocks) blockGuarded.push_back(*taken);
            if (!i->elseBody) break;
            const ir::IfThenElse *next = ir::as<ir::IfThenElse>(i->elseBody);
            if (next && programBranches_.count(next) && guardOf(next->cond)) {
                i = next;
                continue;
            }
            // What the conditions leave for the else branch must be one range too.
            if (!blockGuarded.empty()) return std::nullopt;
            std::optional<ThreadRange> others = take({0, threads_});
            if (!others) return std::nullopt;
            branches.push_back({*others, i->elseBody, i->span});
            i = nullptr;
        }
        bool spreads = false;
        for (const Branch &b : branches) spreads = spreads || spreadsWork(b.body) || holdsNamedBarrier(b.body, b.range);
        if (!spreads) return std::nullopt;
        std::vector<ir::Stmt> roles;
        for (const auto &[range, body, span] : branches) {
            if (!body || (ir::as<ir::Seq>(body) && ir::as<ir::Seq>(body)->stmts.empty())) continue;
            if (range.empty()) {
                diags_.warning(span, "no thread of the block takes this branch (its conditions leave no thread index)", "dead-branch");
                continue;
            }
            if (!range.wholeWarps()) {
                Diagnostic d{Severity::Error, span,
                             "this branch runs on threads " + std::to_string(range.lo) + ".." + std::to_string(range.hi - 1) +
                                 ", which are not whole warps; a branch on the thread index that holds a tile operation, a parallel loop or a named barrier "
                                 "of its threads makes a role of "
                                 "its threads, and a role is whole warps (conditions on multiples of 32)",
                             {}, {}};
                if (span.lineColumn() != first.span.lineColumn()) d.note(first.span, "the chain of conditions on the thread index starts here");
                diags_.report(std::move(d));
                return self;
            }
            std::vector<int64_t> warps;
            for (int64_t w = range.lo / ir::WarpSpecialize::kWarpThreads; w < range.hi / ir::WarpSpecialize::kWarpThreads; ++w) warps.push_back(w);
            roles.push_back(std::make_shared<ir::WarpSpecialize>(std::move(warps), body, span));
        }
        shareRegisterRequests(roles);
        return ir::seq(std::move(roles));
    }

    // A role's condition: a range of the linear thread index, and-ed with a
    // condition the same for every thread of a block (or none).
    struct Guard {
        ThreadRange threads;
        ir::Expr blocks;
    };
    // The conjuncts of `e` (`a && b && c`, however grouped) split into those
    // every thread of a block evaluates alike and thread ranges.
    std::optional<Guard> guardOf(const ir::Expr &e) const {
        std::vector<ir::Expr> terms;
        std::function<void(const ir::Expr &)> flatten = [&](const ir::Expr &x) {
            const ir::Binary *b = ir::as<ir::Binary>(x);
            if (b && b->op == ir::BinaryOp::And) {
                flatten(b->a);
                flatten(b->b);
            } else {
                terms.push_back(x);
            }
        };
        flatten(e);
        Guard g{{0, threads_}, nullptr};
        bool boundsThreads = false;
        for (const ir::Expr &t : terms) {
            if (!uniformity_.threadDependentBeyondFragments(t)) {
                g.blocks = g.blocks ? ir::binary(ir::BinaryOp::And, g.blocks, t) : t;
                continue;
            }
            std::optional<ThreadRange> r = rangeOf(t);
            if (!r) return std::nullopt;
            g.threads = g.threads & *r;
            boundsThreads = true;
        }
        if (!boundsThreads) return std::nullopt;
        return g;
    }

    // The threads for which `e` holds, when it bounds the linear thread index.
    std::optional<ThreadRange> rangeOf(const ir::Expr &e) const {
        const ir::Binary *b = ir::as<ir::Binary>(e);
        if (!b) return std::nullopt;
        if (b->op == ir::BinaryOp::And) {
            std::optional<ThreadRange> x = rangeOf(b->a), y = rangeOf(b->b);
            if (!x || !y) return std::nullopt;
            return *x & *y;
        }
        ir::BinaryOp op = b->op;
        ir::Expr term = b->a;
        std::optional<int64_t> k = ir::constInt(b->b);
        if (!k) {
            // `c < tx` is `tx > c`.
            k = ir::constInt(b->a);
            term = b->b;
            switch (op) {
            case ir::BinaryOp::Lt: op = ir::BinaryOp::Gt; break;
            case ir::BinaryOp::Le: op = ir::BinaryOp::Ge; break;
            case ir::BinaryOp::Gt: op = ir::BinaryOp::Lt; break;
            case ir::BinaryOp::Ge: op = ir::BinaryOp::Le; break;
            default: break;
            }
        }
        std::optional<int64_t> d = k ? divisorOf(term) : std::nullopt;
        if (!d) return std::nullopt;
        // x / d < k  <=>  x < d * k, and so on (x >= 0, d > 0).
        ThreadRange all{0, threads_}, r;
        switch (op) {
        case ir::BinaryOp::Lt: r = {0, *d * *k}; break;
        case ir::BinaryOp::Le: r = {0, *d * (*k + 1)}; break;
        case ir::BinaryOp::Gt: r = {*d * (*k + 1), threads_}; break;
        case ir::BinaryOp::Ge: r = {*d * *k, threads_}; break;
        case ir::BinaryOp::Eq: r = {*d * *k, *d * (*k + 1)}; break;
        default: return std::nullopt;
        }
        return r & all;
    }

    // d when `e` is the linear thread index divided by d (1: itself).
    std::optional<int64_t> divisorOf(const ir::Expr &e) const {
        if (const ir::SpecialReg *r = ir::as<ir::SpecialReg>(e); r && r->special == ir::SpecialKind::ThreadIdx) return 1;
        if (const ir::VarNode *v = ir::as<ir::VarNode>(e); v && linear_.count(v)) return 1;
        if (const ir::Binary *b = ir::as<ir::Binary>(e); b && b->op == ir::BinaryOp::Div) {
            std::optional<int64_t> c = ir::constInt(b->b);
            std::optional<int64_t> inner = divisorOf(b->a);
            if (c && *c > 0 && inner && *inner == 1) return *c;
        }
        return std::nullopt;
    }

    ir::Uniformity uniformity_;
    int64_t threads_;
    const std::set<const ir::StmtNode *> &programBranches_;
    DiagnosticEngine &diags_;
    bool divergent_ = false;
    std::set<const ir::VarNode *> linear_;   // names of the linear thread index (threads(N) as (tx))
};

} // namespace

ir::Stmt formThreadRoles(const ir::Stmt &body, const ir::Kernel &kernel, const std::set<const ir::StmtNode *> &programBranches,
                         DiagnosticEngine &diags) {
    return RoleFormer(body, kernel, programBranches, diags).mutate(body);
}

} // namespace tilet
