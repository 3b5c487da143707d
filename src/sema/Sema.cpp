// Sema.cpp -- file-level checks: targets, constants (with -D), kernels'
// parameters and launch shape, scopes and builtin-call arity.
#include "sema/ReducerCheck.h"
#include "sema/ThreadRoles.h"
#include "sema/SemaImpl.h"

#include "frontend/TileLangSpellings.h"
#include "ir/Uniformity.h"
#include "ir/Visitor.h"
#include "support/Checked.h"
#include "support/InternalError.h"

#include <algorithm>
#include <array>
#include <functional>
#include <charconv>
#include <utility>

namespace tilet {

std::optional<DeclaredTarget> declaredTarget(const LoadedProgram &program, DiagnosticEngine &diags) {
    for (const ast::File &imp : program.imports) {
        for (const ast::TargetDecl &t : imp.targets)
            diags.error(t.range, "'target' may only appear in the main file; it is ignored in imports");
    }
    const auto &targets = program.main.targets;
    if (targets.empty()) return std::nullopt;
    for (size_t i = 1; i < targets.size(); ++i) {
        Diagnostic d{Severity::Error, targets[i].range, "more than one 'target' declaration", {}, {}};
        d.note(targets[0].range, "first declared here");
        diags.report(std::move(d));
    }
    return DeclaredTarget{targets[0].name, targets[0].range};
}

std::optional<ir::Module> analyze(const LoadedProgram &program, const std::vector<Define> &defines,
                                  const SourceManager &sources, DiagnosticEngine &diags) {
    return sema::Checker(sources, diags).run(program, defines);
}

namespace sema {

ir::Stmt bindCommits(const ir::Stmt &body, DiagnosticEngine &diags);

namespace {
// Blocks in a cluster: 8 portably, 16 with the non-portable cluster size
// attribute on sm_90 (CUDA C++ Programming Guide, "Thread Block Clusters").
constexpr int64_t kMaxClusterBlocks = 16;

// The immediate operands of an expression node, whatever its kind.
class Operands : public ir::Visitor {
public:
    explicit Operands(const ir::Expr &e) { ir::Visitor::visit(e); }
    using ir::Visitor::visit;
    void visit(const ir::Expr &e) override {
        if (e) list.push_back(e);
    }
    std::vector<ir::Expr> list;
};

// Expressions may be shared: a let's variable stands for its value, and Sema
// uses some operands twice (ceildiv's divisor, the element `A[i] += v`
// reads). Passes substitute lets (infer-layouts, vectorize-accesses) and the
// printer writes each use, so they see these as trees, which can grow
// exponentially with the length of the text: `let a1 = a0 + a0; let a2 =
// a1 + a1; ...`. The check measures each statement's expressions as those
// trees, computing each shared node once (linear in the IR), and reports
// the first one beyond kMaxExpandedSize.
class ExpansionCheck : public ir::Visitor {
public:
    static constexpr int64_t kMaxExpandedSize = int64_t(1) << 16;

    explicit ExpansionCheck(DiagnosticEngine &diags) : diags_(diags) {}
    bool ok() const { return ok_; }

    using ir::Visitor::visit;
    void visit(const ir::Stmt &s) override {
        if (!s || !ok_) return;
        SourceRange outer = where_;
        if (s->span.valid()) where_ = s->span;
        ir::Visitor::visit(s);
        where_ = outer;
    }
    // An expression of a statement, or of a region or a let.
    void visit(const ir::Expr &e) override {
        if (!e || !ok_ || size(e) <= kMaxExpandedSize) return;
        diags_.error(e->span.valid() ? e->span : where_,
                     "this expression expands to more than " + std::to_string(kMaxExpandedSize) +
                         " operations when its let bindings and repeated operands are written out");
        ok_ = false;
    }
    void visitLetStmt(const ir::LetStmt &n) override {
        visit(n.value);
        letSize_[n.var.get()] = size(n.value);
        visit(n.body);
    }

private:
    int64_t size(const ir::Expr &e) {
        auto known = sizes_.find(e.get());
        if (known != sizes_.end()) return known->second;
        int64_t n = 1;
        if (const ir::Var *v = ir::as<ir::Var>(e)) {
            auto bound = letSize_.find(v);
            if (bound != letSize_.end()) n = bound->second;
        } else {
            for (const ir::Expr &operand : Operands(e).list) n = std::min(kMaxExpandedSize + 1, n + size(operand));
        }
        sizes_[e.get()] = n;
        return n;
    }

    DiagnosticEngine &diags_;
    bool ok_ = true;
    SourceRange where_;
    std::map<const ir::ExprNode *, int64_t> sizes_;
    std::map<const ir::VarNode *, int64_t> letSize_;
};

// Work spread over the block's threads -- a tile operation, a parallel loop,
// thread_allreduce -- needs every thread of the block (or of its ws(...)
// role): each does its share; a warp shuffle needs every lane of its warp
// (shfl.sync with the full mask). Under a branch or loop that threads may take
// differently (its condition reads a thread index or a value that differs
// between threads) only some would run it, and the rest of the work would
// silently not be done (TileLang emits it so); it is an error at the
// statement, with a note at the condition.
class DivergentWorkCheck {
public:
    // `collectives`: the first statement of each thread_allreduce.
    DivergentWorkCheck(const ir::Stmt &body, int64_t blockThreads, const std::set<const ir::StmtNode *> &collectives, DiagnosticEngine &diags)
        : uniformity_(body), collectives_(collectives), diags_(diags), blockThreads_(blockThreads) {}
    void walk(const ir::Stmt &s) {
        if (!s) return;
        if (collectives_.count(s.get())) return report(s, "thread_allreduce");
        if (shufflesHere(s)) report(s, "a warp shuffle", "every lane of its warp", "lanes that skip it would leave the exchange undefined");
        if (const ir::Seq *q = ir::as<ir::Seq>(s)) {
            for (const ir::Stmt &x : q->stmts) walk(x);
        } else if (const ir::LetStmt *l = ir::as<ir::LetStmt>(s)) {
            uniformity_.bind(l->var.get(), divergentAt_ || uniformity_.threadDependentBeyondFragments(l->value));
            walk(l->body);
        } else if (const ir::Allocate *a = ir::as<ir::Allocate>(s)) {
            walk(a->body);
        } else if (const ir::For *f = ir::as<ir::For>(s)) {
            if (f->forKind == ir::ForKind::Parallel) return report(s, "a parallel loop");
            // A loop some threads leave apart (a break or continue only they take) runs its body in some threads only.
            bool dependent = uniformity_.threadDependentBeyondFragments(f->min) || uniformity_.threadDependentBeyondFragments(f->extent) ||
                             uniformity_.jumpsApart(s.get());
            uniformity_.bind(f->var.get(), divergentAt_ || dependent);
            under(dependent ? s.get() : nullptr, [&] { walk(f->body); });
        } else if (const ir::IfThenElse *i = ir::as<ir::IfThenElse>(s)) {
            under(uniformity_.threadDependentBeyondFragments(i->cond) ? s.get() : nullptr, [&] {
                walk(i->thenBody);
                walk(i->elseBody);
            });
        } else if (const ir::While *w = ir::as<ir::While>(s)) {
            under(uniformity_.threadDependentBeyondFragments(w->cond) || uniformity_.jumpsApart(s.get()) ? s.get() : nullptr, [&] { walk(w->body); });
        } else if (const ir::WarpSpecialize *w = ir::as<ir::WarpSpecialize>(s)) {
            // A role's threads are the threads of the work inside it.
            const ir::StmtNode *outer = std::exchange(divergentAt_, nullptr);
            const ir::StmtNode *outerRole = std::exchange(role_, s.get());
            uniformity_.enterRole(*w);
            walk(w->body);
            uniformity_.leaveRole();
            divergentAt_ = outer;
            role_ = outerRole;
        } else if (ir::as<ir::ScaleTranspose>(s)) {
            report(s, "tcgen05_sf_warp_transpose", "all 32 lanes of its warp", "lanes that skip it would leave their words in place and its __syncwarp would not be met");
        } else if (ir::as<ir::Tcgen05Copy>(s)) {
            report(s, "tcgen05_cp_warpx4", "every thread of its branch or role (one of them issues it)", "it would be issued by each thread that takes it");
        } else if (const ir::SyncThreads *b = ir::as<ir::SyncThreads>(s)) {
            // Only sync_threads() makes one here: __syncthreads, met by the
            // whole block, or sync_threads(id, n), a named barrier the n
            // threads of a role meet.
            if (b->barrierId > 0) {
                int64_t roleThreads = role_ ? static_cast<const ir::WarpSpecialize *>(role_)->threads() : blockThreads_;
                if (b->threads != roleThreads) {
                    Diagnostic d{Severity::Error, s->span,
                                 "sync_threads(" + std::to_string(b->barrierId) + ", " + std::to_string(b->threads) + ") is met by " +
                                     std::to_string(b->threads) + " threads, but the " + (role_ ? "role" : "block") + " it is in has " +
                                     std::to_string(roleThreads) + ": a named barrier joins the threads of one role (a branch on the thread index "
                                     "whose threads are all the barrier's, or with tile work) or of the block",
                                 {}, {}};
                    if (role_) d.note(role_->span, "the role starts here");
                    diags_.report(std::move(d));
                    return;
                }
                // One id, one set of threads: two roles' warps meeting at one hardware barrier release each other early.
                int64_t first = role_ ? static_cast<const ir::WarpSpecialize *>(role_)->firstThread() : 0;
                auto [known, fresh] = namedBarrierFirst_.emplace(b->barrierId, std::make_pair(first, s->span));
                if (!fresh && known->second.first != first) {
                    Diagnostic d{Severity::Error, s->span,
                                 "named barrier " + std::to_string(b->barrierId) + " is already the barrier of the threads from " +
                                     std::to_string(known->second.first) + " on; these start at thread " + std::to_string(first) +
                                     ": warps of both would meet at one hardware barrier (give each role its own id)",
                                 {}, {}};
                    d.note(known->second.second, "its first use");
                    diags_.report(std::move(d));
                    return;
                }
                if (divergentAt_) report(s, "sync_threads", "every thread of its role", "a named barrier that only some of its threads reach hangs them");
                return;
            }
            if (role_) {
                Diagnostic d{Severity::Error, s->span, "sync_threads is met by every thread of the block, but this one is inside a role (a branch on the thread "
                                                       "index that hands work to some warps): the others never reach it", {}, {}};
                d.note(role_->span, "the role starts here");
                diags_.report(std::move(d));
                return;
            }
            report(s, "sync_threads", "every thread of the block", "a __syncthreads that only some threads reach hangs the block");
        } else if (ir::as<ir::Copy>(s) || ir::as<ir::Fill>(s) || ir::as<ir::Gemm>(s) || ir::as<ir::Reduce>(s) || ir::as<ir::Cumsum>(s) || ir::as<ir::AtomicAdd>(s) ||
                   ir::as<ir::FinalizeReducer>(s)) {
            report(s, "a tile operation");
        } else if (ir::as<ir::ClcTryCancel>(s) && !divergentAt_) {
            // Each request cancels a cluster: one per thread of a block or role would lose their work.
            diags_.error(s->span, std::string(ir::as<ir::ClcTryCancel>(s)->multicast ? "clc_try_cancel_multicast" : "clc_try_cancel") +
                                      " is issued by every thread that runs it, and each request cancels a cluster: run it in one thread, "
                                      "under a branch such as if (tx == 0)");
        }
    }

private:
    template <typename F> void under(const ir::StmtNode *branch, F body) {
        const ir::StmtNode *outer = divergentAt_;
        if (!divergentAt_) divergentAt_ = branch;
        body();
        divergentAt_ = outer;
    }
    // Whether the statement's own expressions (not those of statements inside it) shuffle.
    static bool shufflesHere(const ir::Stmt &s) {
        class OwnShuffles : public ir::Visitor {
        public:
            explicit OwnShuffles(const ir::StmtNode *root) : root_(root) {}
            using ir::Visitor::visit;
            void visit(const ir::Stmt &x) override {
                if (x.get() == root_) ir::Visitor::visit(x);
            }
            void visitShuffle(const ir::Shuffle &n) override {
                found = true;
                ir::Visitor::visitShuffle(n);
            }
            bool found = false;

        private:
            const ir::StmtNode *root_;
        } own(s.get());
        own.visit(s);
        return own.found;
    }
    void report(const ir::Stmt &s, const char *what, const char *needs = "every thread of the block",
                const char *otherwise = "only some would do their part of it") {
        if (!divergentAt_) return;
        // A branch's shuffles are said once, and not after its thread_allreduce (whose steps shuffle).
        bool first = reported_.insert(divergentAt_).second;
        if (!first && std::string(what) == "a warp shuffle") return;
        // One statement lowered to several (a reduce with a run-time clear: both ways) is said once.
        if (!reportedAt_.insert({divergentAt_, s->span.lineColumn()}).second) return;
        Diagnostic d{Severity::Error, s->span,
                     std::string(what) + " needs " + needs + ", but threads take the enclosing " +
                         (divergentAt_->kind == ir::StmtKind::IfThenElse ? "branch" : "loop") + " differently; " + otherwise,
                     {}, {}};
        d.note(divergentAt_->span, "its condition differs between threads (it reads a thread index or a per-thread value)");
        diags_.report(std::move(d));
    }

    ir::Uniformity uniformity_;
    const std::set<const ir::StmtNode *> &collectives_;
    DiagnosticEngine &diags_;
    const ir::StmtNode *divergentAt_ = nullptr;   // the innermost enclosing branch or loop threads may take differently
    const ir::StmtNode *role_ = nullptr;          // the enclosing ws(...) role
    int64_t blockThreads_;
    std::map<int64_t, std::pair<int64_t, SourceRange>> namedBarrierFirst_;   // sync_threads(id, n): the first thread of its role, its first use
    std::set<const ir::StmtNode *> reported_;
    std::set<std::pair<const ir::StmtNode *, std::string>> reportedAt_;
};
} // namespace

const char *symbolKindName(SymbolKind k) {
    switch (k) {
    case SymbolKind::Const: return "constant";
    case SymbolKind::DTypeConst: return "dtype constant";
    case SymbolKind::Tensor: return "tensor";
    case SymbolKind::Scalar: return "scalar parameter";
    case SymbolKind::DynDim: return "dynamic dimension";
    case SymbolKind::BlockIndex: return "block index";
    case SymbolKind::ThreadIndex: return "thread index";
    case SymbolKind::LoopVar: return "loop variable";
    case SymbolKind::Let: return "let binding";
    case SymbolKind::Buffer: return "buffer";
    case SymbolKind::Mutable: return "variable";
    }
    return "name";
}

bool RegionRef::hasUnknownExtents() const {
    for (const auto &e : extents) {
        if (!e) return true;
    }
    return false;
}

bool Checker::checkRank(size_t rank, SourceRange where, const std::string &what) {
    if (rank <= kMaxRank) return true;
    diags_.error(where, what + " has " + std::to_string(rank) + " dimensions; at most " + std::to_string(kMaxRank) + " are supported");
    return false;
}

size_t editDistance(const std::string &a, const std::string &b) {
    // Optimal string alignment: insertions, deletions, substitutions and
    // transpositions of neighbours each cost 1 ("valeu" is one step from "value").
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        for (size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

// ------------------------------------------------------------------ run

std::optional<ir::Module> Checker::run(const LoadedProgram &program, const std::vector<Define> &defines) {
    unsigned errorsBefore = diags_.errorCount();
    program_ = &program;
    pushScope();   // file scope: constants of every file

    std::map<std::string, Define> defineMap;
    std::map<std::string, bool> used;
    for (const Define &d : defines) {
        defineMap[d.name] = d;   // a later -D wins, as with gcc
        used[d.name] = false;
    }
    for (const ast::File &imp : program.imports) {
        declareConsts(imp, defineMap, used);
        for (const ast::Kernel &k : imp.kernels)
            diags_.error(k.name.range, "imported file defines kernel '" + k.name.name +
                                           "'; only the kernels of the main file are translated");
    }
    declareConsts(program.main, defineMap, used);
    for (const ast::File *file : [&] {
             std::vector<const ast::File *> files;
             for (const ast::File &imp : program.imports) files.push_back(&imp);
             files.push_back(&program.main);
             return files;
         }()) {
        for (const ast::FnDecl &fn : file->fns) {
            if (auto prev = fns_.find(fn.name.name); prev != fns_.end()) {
                Diagnostic d{Severity::Error, fn.name.range, "redefinition of fn '" + fn.name.name + "'", {}, {}};
                d.note(prev->second->name.range, "previous definition is here");
                diags_.report(std::move(d));
                continue;
            }
            for (size_t i = 0; i < fn.params.size(); ++i)
                for (size_t j = 0; j < i; ++j)
                    if (fn.params[i].name == fn.params[j].name)
                        diags_.error(fn.params[i].range, "fn '" + fn.name.name + "' has two parameters named '" + fn.params[i].name + "'");
            fns_[fn.name.name] = &fn;
        }
    }
    for (const auto &[name, wasUsed] : used) {
        if (!wasUsed) diags_.warning({}, "-D " + name + " does not match any constant", "unused-define");
    }

    ir::Module module;
    module.sourceName = sources_.name(program.main.id);
    module.fileNames[program.main.id] = module.sourceName;
    for (const ast::File &imp : program.imports) module.fileNames[imp.id] = sources_.name(imp.id);
    std::map<std::string, SourceRange> kernelNames;
    for (const ast::Kernel &k : program.main.kernels) {
        if (auto prev = kernelNames.find(k.name.name); prev != kernelNames.end()) {
            Diagnostic d{Severity::Error, k.name.range, "redefinition of kernel '" + k.name.name + "'", {}, {}};
            d.note(prev->second, "previous definition is here");
            diags_.report(std::move(d));
            continue;
        }
        kernelNames[k.name.name] = k.name.range;
        if (std::optional<ir::Kernel> kernel = checkKernel(k)) module.kernels.push_back(std::move(*kernel));
    }
    for (size_t i : usedSourceImports_) module.importedSources.push_back({program.sourceImports[i].spelled, program.sourceImports[i].path, program.sourceImports[i].text});
    if (program.main.kernels.empty() && diags_.errorCount() == errorsBefore)
        diags_.error(SourceRange::at(SourceLoc{program.main.id, 1, 1}), "file defines no kernel");
    popScope();
    if (diags_.errorCount() != errorsBefore) return std::nullopt;
    return module;
}

// ------------------------------------------------------------------ constants

std::optional<Value> Checker::defineValue(const Define &d, const ast::ConstDecl &decl) {
    const std::string &text = d.value;
    SourceRange where = decl.value->range;
    auto bad = [&]() -> std::optional<Value> {
        Diagnostic diag{Severity::Error, {}, "invalid value '" + text + "' for -D " + d.name +
                                                  ": expected an integer, a number, true or false", {}, {}};
        diag.note(decl.name.range, "'" + d.name + "' is declared here");
        diags_.report(std::move(diag));
        return std::nullopt;
    };
    Value v;
    v.range = where;
    v.untyped = !decl.type.has_value() && decl.typeName.empty();
    if (text == "true" || text == "false") {
        v.constant = ConstValue::ofBool(text == "true");
        v.expr = ir::boolImm(text == "true");
        return v;
    }
    std::string digits;
    for (char c : text) {
        if (c != '_') digits += c;
    }
    const char *b = digits.data(), *e = digits.data() + digits.size();
    bool negative = !digits.empty() && digits[0] == '-';
    int base = 10;
    const char *p = b + (negative ? 1 : 0);
    if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) { base = 16; p += 2; }
    else if (e - p > 2 && p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) { base = 2; p += 2; }
    uint64_t magnitude = 0;
    auto [ptr, ec] = std::from_chars(p, e, magnitude, base);
    if (ec == std::errc() && ptr == e && p != e) {
        if (magnitude > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0)) {
            diags_.error({}, "value '" + text + "' for -D " + d.name + " does not fit in 64 bits");
            return std::nullopt;
        }
        int64_t value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
        v.constant = ConstValue::ofInt(value);
        v.expr = ir::intImm(value, fitsInType(value, DType::Int32) ? DType::Int32 : DType::Int64);
        return v;
    }
    double f = 0;
    auto [fptr, fec] = std::from_chars(b, e, f);
    if (fec == std::errc() && fptr == e && b != e) {
        v.constant = ConstValue::ofFloat(f);
        v.expr = ir::floatImm(f);
        return v;
    }
    return bad();
}

void Checker::declareConsts(const ast::File &file, std::map<std::string, Define> &defines, std::map<std::string, bool> &used) {
    for (const ast::ConstDecl &c : file.consts) {
        // A constant whose value was reported is still declared, as invalid,
        // so that its uses are not reported again as undeclared names.
        auto declareInvalid = [&] {
            Symbol sym;
            sym.kind = SymbolKind::Const;
            sym.def = c.name.range;
            sym.invalid = true;
            declare(c.name, sym);
        };
        auto override = defines.find(c.name.name);
        if (namesDType(*c.value)) {
            // `const dt = f16;`: a dtype constant (TileLang's dtype parameters),
            // usable wherever a dtype is; -D dt=bf16 replaces it.
            if (c.type || !c.typeName.empty()) diags_.error(c.typeRange, "a dtype constant takes no type annotation");
            std::optional<DType> t;
            if (override != defines.end()) {
                used[c.name.name] = true;
                t = dtypeFromName(override->second.value);
                if (!t) {
                    Diagnostic diag{Severity::Error, {}, "invalid value '" + override->second.value + "' for -D " + c.name.name +
                                                              ": expected a dtype such as f16 or bf16", {}, {}};
                    if (std::optional<std::string> tilet = tiletDtypeOf(override->second.value))
                        diag.note({}, "'" + override->second.value + "' is TileLang's name of the dtype tilet calls '" + *tilet + "'");
                    diag.note(c.name.range, "'" + c.name.name + "' is declared here");
                    diags_.report(std::move(diag));
                }
            } else {
                t = checkDType(*c.value);
            }
            if (!t) {
                declareInvalid();
                continue;
            }
            Symbol sym;
            sym.kind = SymbolKind::DTypeConst;
            sym.def = c.name.range;
            sym.dtype = *t;
            declare(c.name, sym);
            continue;
        }
        std::optional<DType> declaredType = typeAnnotation(c.type, c.typeName, c.typeRange);
        if (!c.typeName.empty() && !declaredType) {
            declareInvalid();
            continue;
        }
        std::optional<Value> value;
        if (override != defines.end()) {
            used[c.name.name] = true;
            value = defineValue(override->second, c);
        } else {
            value = checkValue(*c.value);
            if (value && !value->constant) {
                diags_.error(c.value->range, "initializer of constant '" + c.name.name + "' is not a compile-time constant");
                value.reset();
            }
        }
        if (!value) {
            declareInvalid();
            continue;
        }
        if (declaredType) {
            // A declared type fixes the constant's type: `const scale: f32 = 1;`.
            DType type = *declaredType;
            std::optional<ir::Expr> typed = fitsNarrowFloat(*value, type, value->range) ? convert(*value, type, value->range) : std::nullopt;
            if (!typed) {
                declareInvalid();
                continue;
            }
            Value tv = *value;
            tv.untyped = false;
            if (isFloat(type)) {
                // An f16 or bf16 constant holds that type's value (its arithmetic folds with it).
                const double d = value->constant->asDouble();
                tv.constant = ConstValue::ofFloat(halfPrecisionValue(d, type).value_or(d));
                tv.expr = ir::floatImm(tv.constant->f, type);
            } else if (type == DType::Bool) {
                tv.constant = ConstValue::ofBool(value->constant->asDouble() != 0);
                tv.expr = ir::boolImm(tv.constant->b);
            } else {
                if (value->constant->kind == ConstValue::Kind::Float) {
                    diags_.error(value->range, "floating-point value for integer constant '" + c.name.name + "'");
                    declareInvalid();
                    continue;
                }
                int64_t iv = value->constant->kind == ConstValue::Kind::Bool ? value->constant->b : value->constant->i;
                tv.constant = ConstValue::ofInt(iv);
                tv.expr = ir::intImm(iv, type);
            }
            value = tv;
        }
        Symbol sym;
        sym.kind = SymbolKind::Const;
        sym.def = c.name.range;
        sym.constValue = *value;
        declare(c.name, sym);
    }
}

// ------------------------------------------------------------------ kernels

// use_swizzle(panel, order = row): the launch order visits the tile grid
// in panels of `panel` rows (order = col: columns), column by column,
// reversing direction from one panel to the next, so that blocks running at
// the same time share operand tiles in L2 (TileLang's rasterization2DRow /
// rasterization2DColumn). In a kernel with clusters it renumbers whole
// clusters, keeping each block's place in its cluster: the blocks of a
// cluster stay neighbours (a CTA pair shares its B tile's columns).
std::optional<Checker::Swizzle> Checker::checkSwizzle(const ast::Call &c, const ir::Kernel &kernel) {
    std::optional<CallArgs> args = matchArgs(c, 1, 1, {"order"});
    if (!args) return std::nullopt;
    std::optional<int64_t> panel = checkConstInt(*args->positional[0], "panel");
    if (!panel) return std::nullopt;
    if (*panel < 1) {
        diags_.error(args->positional[0]->range, "the panel of use_swizzle is at least 1 block, found " + std::to_string(*panel));
        return std::nullopt;
    }
    bool byColumn = false;
    if (const ast::Expr *o = args->keyword("order")) {
        std::optional<std::string> w = checkWord(*o, {"row", "col"}, "order");
        if (!w) return std::nullopt;
        byColumn = *w == "col";
    }
    if (kernel.grid.size() < 2) {
        // TileLang's rasterization of a grid with one row keeps the launch order.
        diags_.warning(c.range, "use_swizzle renumbers a 2-D grid; this kernel's grid has 1 dimension, which it leaves in launch order", "swizzle");
        return std::nullopt;
    }
    using ir::Expr;
    // Along `major` the panels are `panel` blocks (clusters) wide; `minor` is walked within a panel.
    Expr blockX = std::make_shared<ir::SpecialReg>(ir::SpecialKind::BlockIdxX, c.range);
    Expr blockY = std::make_shared<ir::SpecialReg>(ir::SpecialKind::BlockIdxY, c.range);
    int64_t cx = kernel.cluster[0], cy = kernel.cluster[1];
    auto perCluster = [](const Expr &e, int64_t n) { return n == 1 ? e : ir::div(e, ir::intImm(n)); };
    Expr gx = perCluster(kernel.grid[0], cx), gy = perCluster(kernel.grid[1], cy);
    Expr x = perCluster(blockX, cx), y = perCluster(blockY, cy);
    Expr minorExtent = byColumn ? gy : gx;
    Swizzle out;
    // Named steps, so the generated code reads like the formula.
    auto step = [&](const char *name, Expr value) {
        ir::VarRef v = ir::makeVar(name, DType::Int32, c.range);
        out.steps.push_back({v, std::move(value)});
        return Expr(v);
    };
    Expr total = ir::mul(gx, gy);
    Expr panelBlocks = ir::mul(ir::intImm(*panel), minorExtent);
    Expr linear = step("launch_order", ir::add(x, ir::mul(y, gx)));
    Expr index = step("panel", ir::div(linear, panelBlocks));
    Expr offset = step("panel_offset", ir::mod(linear, panelBlocks));
    Expr panels = ir::div(ir::add(total, ir::sub(panelBlocks, ir::intImm(1))), panelBlocks);
    // The last panel may be narrower.
    Expr width = step("panel_width", std::make_shared<ir::Select>(DType::Int32, ir::lt(ir::add(index, ir::intImm(1)), panels), ir::intImm(*panel),
                                                                  ir::div(ir::sub(total, ir::mul(index, panelBlocks)), minorExtent)));
    Expr along = ir::div(offset, width);
    Expr odd = ir::binary(ir::BinaryOp::Eq, ir::binary(ir::BinaryOp::BitAnd, index, ir::intImm(1)), ir::intImm(1));
    Expr minor = std::make_shared<ir::Select>(DType::Int32, odd, ir::sub(ir::sub(minorExtent, ir::intImm(1)), along), along);
    Expr major = ir::add(ir::mod(offset, width), ir::mul(index, ir::intImm(*panel)));
    out.blockIndices = byColumn ? std::vector<Expr>{major, minor} : std::vector<Expr>{minor, major};
    auto inCluster = [](const Expr &index, const Expr &block, int64_t n) {
        return n == 1 ? index : ir::add(ir::mul(index, ir::intImm(n)), ir::mod(block, ir::intImm(n)));
    };
    out.blockIndices[0] = inCluster(out.blockIndices[0], blockX, cx);
    out.blockIndices[1] = inCluster(out.blockIndices[1], blockY, cy);
    if (kernel.grid.size() > 2) out.blockIndices.push_back(std::make_shared<ir::SpecialReg>(ir::SpecialKind::BlockIdxZ, c.range));
    return out;
}


std::optional<ir::Kernel> Checker::checkKernel(const ast::Kernel &k) {
    unsigned errorsBefore = diags_.errorCount();
    ir::Kernel kernel;
    kernel.name = k.name.name;
    kernel.span = k.headerRange;
    kernel_ = &kernel;
    pushScope();
    checkParams(k, kernel);
    drawsNotHere_ = {"a kernel's launch configuration, which the host evaluates", true};
    checkLaunch(k, kernel);
    drawsNotHere_ = {};
    // The body is checked even after errors above, so one run reports them all;
    // parameters with bad shapes are still declared, so no use cascades.
    {
        pushScope();
        // Block indices are bound once at the top of the body.
        std::vector<std::pair<ir::VarRef, ir::Expr>> blockLets;
        static const ir::SpecialKind kinds[3] = {ir::SpecialKind::BlockIdxX, ir::SpecialKind::BlockIdxY, ir::SpecialKind::BlockIdxZ};
        // use_swizzle(...) renumbers the blocks (rasterization) for the whole
        // kernel, wherever it stands in the body: as TileLang's, it is a
        // property of the kernel (its threadblock_swizzle_pattern), so every
        // statement, before it or after, sees the renumbered indices.
        const ast::Call *swizzle = nullptr;
        for (const ast::StmtPtr &s : k.body) {
            if (s->kind != ast::StmtKind::CallStmt) continue;
            const ast::Call &c = *static_cast<const ast::CallStmt &>(*s).call;
            if (c.callee == "use_swizzle") {
                swizzle = &c, swizzleStmt_ = s.get();
                break;
            }
        }
        std::optional<Swizzle> swizzled = swizzle ? checkSwizzle(*swizzle, kernel) : std::nullopt;
        // disable_warp_group_reg_alloc() is a property of the kernel too
        // (TileLang's annotation of the block): no setmaxnreg split.
        for (const ast::StmtPtr &s : k.body) {
            if (s->kind != ast::StmtKind::CallStmt) continue;
            const ast::Call &c = *static_cast<const ast::CallStmt &>(*s).call;
            if (c.callee != "disable_warp_group_reg_alloc") continue;
            registerBudgetStmts_.insert(s.get());
            if (matchArgs(c, 0, 0, {})) kernel.keepsRegisterBudgets = true;
        }
        if (swizzled) blockLets = swizzled->steps;
        // A block or thread index name: an int32 bound once at the top of the body.
        // A renumbered block index (use_swizzle) is a permutation of the
        // grid's: its variable promises the grid's range, which the analysis
        // cannot prove from the arithmetic (so accesses it indexes stay unguarded).
        auto bindIndex = [&](const ast::Ident &n, SymbolKind kind, ir::Expr value, std::optional<int64_t> extent = std::nullopt) {
            ir::VarRef var = extent ? std::make_shared<ir::VarNode>(DType::Int32, n.name, n.range, 1, 0, *extent - 1)
                                    : ir::makeVar(n.name, DType::Int32, n.range);
            Symbol sym;
            sym.kind = kind;
            sym.def = n.range;
            sym.var = var;
            if (declare(n, sym)) blockLets.push_back({var, std::move(value)});
        };
        for (size_t i = 0; i < k.launch.blockNames.size() && i < 3; ++i) {
            const ast::Ident &n = k.launch.blockNames[i];
            const bool renumbered = swizzled && i < swizzled->blockIndices.size();
            std::optional<int64_t> extent = renumbered && i < kernel.grid.size() ? ir::constInt(kernel.grid[i]) : std::nullopt;
            bindIndex(n, SymbolKind::BlockIndex, renumbered ? swizzled->blockIndices[i] : std::make_shared<ir::SpecialReg>(kinds[i], n.range),
                      extent && *extent > 0 ? extent : std::nullopt);
        }
        // Thread indices: digits of threadIdx.x, x fastest.
        int64_t below = 1;
        for (size_t i = 0; i < k.launch.threadNames.size() && i < 3; ++i) {
            const ast::Ident &n = k.launch.threadNames[i];
            int64_t extent = kernel.threadExtents[i];
            ir::Expr value = std::make_shared<ir::SpecialReg>(ir::SpecialKind::ThreadIdx, n.range);
            if (below > 1) value = ir::div(value, ir::intImm(below));
            if (below * extent < kernel.threads) value = ir::mod(value, ir::intImm(extent));
            below *= extent;
            kernel.bindsThreadIndices = true;
            bindIndex(n, SymbolKind::ThreadIndex, value);
            if (const Symbol *sym = lookup(n.name); sym && sym->kind == SymbolKind::ThreadIndex)
                threadIndexDigits_[sym->var.get()] = {below / extent, extent};
        }
        launchNames_ = scopes_.back();   // what a fn body sees of the kernel
        ir::Stmt body = checkBlock(k.body);
        if (rngState_) body = std::make_shared<ir::Allocate>(rngState_, body ? body : ir::seq({}), rngState_->span);
        rngState_ = nullptr;
        launchNames_.clear();
        swizzleStmt_ = nullptr;
        registerBudgetStmts_.clear();
        for (auto it = blockLets.rbegin(); it != blockLets.rend(); ++it)
            body = std::make_shared<ir::LetStmt>(it->first, it->second, body ? body : ir::seq({}), it->first->span);
        kernel.body = body ? body : ir::seq({});
        popScope();
    }
    popScope();
    kernel_ = nullptr;
    if (diags_.errorCount() != errorsBefore) return std::nullopt;
    ExpansionCheck expansion(diags_);
    expansion.visit(kernel.body);
    if (!expansion.ok()) return std::nullopt;
    kernel.body = formThreadRoles(kernel.body, kernel, programBranches_, diags_);
    kernel.body = bindCommits(kernel.body, diags_);
    if (diags_.errorCount() != errorsBefore) return std::nullopt;
    DivergentWorkCheck(kernel.body, kernel.threads, threadCollectives_, diags_).walk(kernel.body);
    checkReducers(kernel.body, diags_);
    if (diags_.errorCount() != errorsBefore) return std::nullopt;
    return kernel;
}

// Work the tensor core runs for a thread completes at that thread's next
// tcgen05.commit (PTX ISA, "tcgen05.commit"): a tcgen05_cp_warpx4, and a
// tcgen05 gemm without mbar (TileLang's T.tcgen05_gemm(..., mbar=None):
// inst = tcgen05, or gemm_blockscaled with its factors in tensor memory),
// are bound to the barrier of a commit -- a gemm's own (mbar = b) or a
// tcgen05_mma_arrive(b) -- that runs after them on every path, in their
// role or block: the first one straight after them in their sequence, or
// after the loop, branch or binding around them. A commit under a branch or
// in a loop after them may not run; one in a role of its own is another
// thread's; and one after a break or continue of the loop they are in may
// be skipped: none of these binds. (A gemm that nothing binds is reported by
// select-gemm-inst, which knows whether it is tcgen05's; a T.gemm into
// tensor memory without mbar is synchronous: wait-synchronous-gemms.)
namespace {

std::vector<ir::Stmt> childrenOf(const ir::Stmt &s) {
    switch (s->kind) {
    case ir::StmtKind::Seq: return ir::as<ir::Seq>(s)->stmts;
    case ir::StmtKind::LetStmt: return {ir::as<ir::LetStmt>(s)->body};
    case ir::StmtKind::Allocate: return {ir::as<ir::Allocate>(s)->body};
    case ir::StmtKind::For: return {ir::as<ir::For>(s)->body};
    case ir::StmtKind::While: return {ir::as<ir::While>(s)->body};
    case ir::StmtKind::IfThenElse: return {ir::as<ir::IfThenElse>(s)->thenBody, ir::as<ir::IfThenElse>(s)->elseBody};
    case ir::StmtKind::WarpSpecialize: return {ir::as<ir::WarpSpecialize>(s)->body};
    case ir::StmtKind::Elect: return {ir::as<ir::Elect>(s)->body};
    default: return {};
    }
}

// Whether `s` holds a break or continue of a loop around it.
bool jumpsOut(const ir::Stmt &s) {
    if (!s) return false;
    if (ir::as<ir::Jump>(s)) return true;
    if (ir::as<ir::For>(s) || ir::as<ir::While>(s)) return false;   // its own jumps
    for (const ir::Stmt &c : childrenOf(s))
        if (jumpsOut(c)) return true;
    return false;
}

// The mbar a gemm commits to: a gemm into tensor memory's (tcgen05's),
// not one that may become mma.sync (which has nothing to commit).
ir::Buffer committingMbar(const ir::Gemm &g) {
    return g.c.buffer->scope == ir::MemScope::TMem || g.explicitInst == ir::GemmInst::TCGEN05 ? g.mbar : nullptr;
}

// The barrier of the commit `s` certainly makes, straight-line (through
// sequences and bindings, not branches or loops), if any.
ir::Buffer certainCommit(const ir::Stmt &s) {
    if (!s) return nullptr;
    if (const ir::Tcgen05Commit *c = ir::as<ir::Tcgen05Commit>(s)) return c->barrier;
    if (const ir::Gemm *g = ir::as<ir::Gemm>(s)) return committingMbar(*g);
    if (const ir::Seq *seq = ir::as<ir::Seq>(s)) {
        for (const ir::Stmt &x : seq->stmts) {
            if (ir::Buffer b = certainCommit(x)) return b;
            if (jumpsOut(x)) return nullptr;
        }
        return nullptr;
    }
    if (ir::as<ir::LetStmt>(s) || ir::as<ir::Allocate>(s)) return certainCommit(childrenOf(s).front());
    return nullptr;
}

} // namespace

ir::Stmt bindCommits(const ir::Stmt &body, DiagnosticEngine &diags) {
    std::map<const ir::StmtNode *, const ir::StmtNode *> parent;
    std::vector<const ir::StmtNode *> pending;
    std::function<void(const ir::Stmt &)> link = [&](const ir::Stmt &s) {
        const ir::Gemm *g = ir::as<ir::Gemm>(s);
        bool blockScaledTcgen05 = g && g->sfa && g->sfa->buffer->scope == ir::MemScope::TMem;
        if (ir::as<ir::Tcgen05Copy>(s) || (g && !g->mbar && (g->explicitInst == ir::GemmInst::TCGEN05 || blockScaledTcgen05))) pending.push_back(s.get());
        for (const ir::Stmt &c : childrenOf(s)) {
            if (!c) continue;
            parent[c.get()] = s.get();
            link(c);
        }
    };
    link(body);
    // The commit that runs after `n` on every path in its thread, climbing out of what holds it.
    auto commitAfter = [&](const ir::StmtNode *n) -> ir::Buffer {
        bool inLoopBody = true;   // until a loop is left: a jump between `n` and the commit may skip it
        for (auto it = parent.find(n); it != parent.end(); n = it->second, it = parent.find(n)) {
            const ir::StmtNode *p = it->second;
            if (p->kind == ir::StmtKind::WarpSpecialize || p->kind == ir::StmtKind::Elect) return nullptr;
            if (p->kind == ir::StmtKind::For || p->kind == ir::StmtKind::While) inLoopBody = false;
            const ir::Seq *seq = p->kind == ir::StmtKind::Seq ? static_cast<const ir::Seq *>(p) : nullptr;
            if (!seq) continue;
            auto at = std::find_if(seq->stmts.begin(), seq->stmts.end(), [&](const ir::Stmt &x) { return x.get() == n; });
            for (++at; at != seq->stmts.end(); ++at) {
                if (ir::Buffer b = certainCommit(*at)) return b;
                if (inLoopBody && jumpsOut(*at)) break;
            }
        }
        return nullptr;
    };
    // A scale copy whose gemm sits under a condition (the CTA pair's, under
    // the leader's) is bound to the first commit after it in program order,
    // so that the checks of the pair's operations can say what is wrong.
    std::map<const ir::StmtNode *, ir::Buffer> firstCommitAfter;
    {
        std::vector<const ir::StmtNode *> copies;
        ir::forEachStmt(body, [&](const ir::Stmt &s) {
            if (ir::as<ir::Tcgen05Copy>(s)) copies.push_back(s.get());
            const ir::Gemm *g = ir::as<ir::Gemm>(s);
            const ir::Tcgen05Commit *c = ir::as<ir::Tcgen05Commit>(s);
            ir::Buffer barrier = c ? c->barrier : g ? committingMbar(*g) : nullptr;
            if (!barrier) return;
            for (const ir::StmtNode *copy : copies) firstCommitAfter[copy] = barrier;
            copies.clear();
        });
    }
    std::map<const ir::StmtNode *, ir::Buffer> completion;
    for (const ir::StmtNode *p : pending) {
        ir::Buffer b = commitAfter(p);
        if (!b && p->kind == ir::StmtKind::Tcgen05Copy) {
            auto it = firstCommitAfter.find(p);
            if (it != firstCommitAfter.end()) b = it->second;
        }
        if (b) completion[p] = b;
        else if (p->kind == ir::StmtKind::Tcgen05Copy)
            diags.error(p->span, "tcgen05_cp_warpx4 copies scale factors for the tcgen05 gemm_blockscaled that follows it in the same branch or role, "
                                 "and completes with the thread's next tcgen05.commit (that gemm's mbar, or a tcgen05_mma_arrive); none follows here");
    }
    if (completion.empty()) return body;
    class Bind : public ir::Mutator {
    public:
        explicit Bind(const std::map<const ir::StmtNode *, ir::Buffer> &c) : completion_(c) {}
        using ir::Mutator::mutate;

    protected:
        ir::Stmt mutateTcgen05Copy(const ir::Stmt &self, const ir::Tcgen05Copy &n) override {
            auto it = completion_.find(&n);
            if (it == completion_.end()) return self;
            return std::make_shared<ir::Tcgen05Copy>(n.src, n.srcIndices, n.tmem, n.column, it->second, n.pair, n.span);
        }
        ir::Stmt mutateGemm(const ir::Stmt &self, const ir::Gemm &n) override {
            auto it = completion_.find(&n);
            if (it == completion_.end()) return ir::Mutator::mutateGemm(self, n);
            auto g = std::make_shared<ir::Gemm>(n);
            g->completesOn = it->second;
            return g;
        }

    private:
        const std::map<const ir::StmtNode *, ir::Buffer> &completion_;
    };
    return Bind(completion).mutate(body);
}

void Checker::checkParams(const ast::Kernel &k, ir::Kernel &out) {
    // (num_sms() has no value for a parameter's shape: see checkCall.)
    struct Flag {
        bool &flag;
        ~Flag() { flag = false; }
    } inParams{checkingParams_ = true};
    // Dynamic dimensions first, so that any tensor may use them in any order.
    for (const ast::Param &p : k.params) {
        for (const ast::Dim &d : p.dims) {
            if (d.value) continue;
            int64_t divisor = 1;
            if (d.divisor) {
                std::optional<int64_t> v = checkConstInt(*d.divisor, "divisor of a dynamic dimension");
                if (v && (*v <= 0 || *v > (int64_t(1) << 30)))
                    diags_.error(d.divisor->range, "a dynamic dimension's divisor is a positive integer up to 2^30, found " + std::to_string(*v));
                else if (v) divisor = *v;
            }
            ir::VarRef var = std::make_shared<const ir::VarNode>(DType::Int32, d.dynName.name, d.dynName.range, divisor);
            Symbol sym;
            sym.kind = SymbolKind::DynDim;
            sym.def = d.dynName.range;
            sym.var = var;
            if (declare(d.dynName, sym)) out.params.push_back(ir::Param{ir::ParamKind::DynDim, nullptr, var, d.dynName.range});
        }
    }
    std::vector<ir::Param> dynParams = std::move(out.params);
    out.params.clear();
    for (const ast::Param &p : k.params) {
        // An unresolved type was reported; the parameter is still declared, so no use cascades.
        const DType pType = typeAnnotation(p.dtype, p.typeName, p.typeRange).value_or(DType::F32);
        if (p.isTensor && isUnpacked(pType)) {
            diags_.error(p.typeRange, "tensor parameter '" + p.name.name + "' cannot be " + std::string(dtypeName(pType)) + ", a shared-memory form; "
                                      "global memory holds it packed (" + std::string(dtypeName(valueType(pType))) + ")");
            continue;
        }
        if (!p.isTensor) {
            if (isPacked(pType) || pType == DType::TF32) {
                diags_.error(p.typeRange, "scalar parameter '" + p.name.name + "' cannot have type " + std::string(dtypeName(pType)));
                continue;
            }
            ir::VarRef var = ir::makeVar(p.name.name, pType, p.name.range);
            Symbol sym;
            sym.kind = SymbolKind::Scalar;
            sym.def = p.name.range;
            sym.var = var;
            if (declare(p.name, sym)) out.params.push_back(ir::Param{ir::ParamKind::Scalar, nullptr, var, p.range});
            continue;
        }
        std::vector<ir::Expr> shape;
        bool ok = checkRank(p.dims.size(), p.range, "tensor '" + p.name.name + "'");
        for (const ast::Dim &d : p.dims) {
            if (p.dims.size() > kMaxRank) break;
            if (!d.value) {
                const Symbol *s = lookup(d.dynName.name);
                shape.push_back(s ? ir::Expr(s->var) : ir::intImm(1));
                continue;
            }
            std::optional<Value> v = checkValue(*d.value);
            if (!v) { ok = false; continue; }
            if (isFloat(v->type()) || v->type() == DType::Bool) {
                diags_.error(d.range, "tensor dimension must be an integer");
                ok = false;
                continue;
            }
            if (v->constant) {
                if (v->constant->i <= 0) {
                    diags_.error(d.range, "tensor dimension must be positive, found " + v->constant->str());
                    ok = false;
                    continue;
                }
                if (v->constant->i > INT32_MAX) {
                    diags_.error(d.range, "tensor dimension " + v->constant->str() + " exceeds 2^31 - 1");
                    ok = false;
                    continue;
                }
                shape.push_back(ir::intImm(v->constant->i));
            } else {
                std::optional<ir::Expr> e = convert(*v, DType::Int32, d.range);
                if (!e) { ok = false; continue; }
                shape.push_back(*e);
            }
        }
        if (ok) {
            // Offsets and sizes of the tensor are computed in 64 bits: its size
            // in bytes must fit (a wrapped element count would pick 32-bit
            // offsets for a tensor of 2^93 elements).
            std::vector<int64_t> factors{std::max(1, dtypeBits(pType) / 8)};
            for (const ir::Expr &e : shape) {
                if (std::optional<int64_t> n = ir::constInt(e)) factors.push_back(*n);
            }
            if (!checkedProduct(factors)) {
                diags_.error(p.range, "tensor '" + p.name.name + "' is too large: its size in bytes does not fit in 64 bits");
                ok = false;
            }
        }
        if (!ok) {
            // Declared with unit dimensions so that uses do not cascade into more errors.
            shape.assign(p.dims.size(), ir::intImm(1));
        }
        ir::Buffer buffer = ir::makeBuffer(p.name.name, pType, std::move(shape), ir::MemScope::Global, p.name.range);
        Symbol sym;
        sym.kind = SymbolKind::Tensor;
        sym.def = p.name.range;
        sym.buffer = buffer;
        if (declare(p.name, sym)) out.params.push_back(ir::Param{ir::ParamKind::Tensor, buffer, nullptr, p.range});
    }
    // Launch functions take tensors and scalars in declaration order, then the dynamic dimensions.
    for (ir::Param &d : dynParams) out.params.push_back(std::move(d));
}

// threads(X [, Y [, Z]]): a block of X * Y * Z threads, x fastest, as CUDA
// numbers a multi-dimensional block and as TileLang's T.Kernel(threads = (X, Y)).
// The block is launched one-dimensional; the indices `as (tx, ty, tz)` are
// computed from threadIdx.x, so every lowering keeps one linear thread index.
void Checker::checkThreads(const ast::Launch &launch, ir::Kernel &out) {
    if (launch.threads.empty()) return;
    if (launch.threads.size() > 3) {
        diags_.error(launch.threadsRange, "a block has at most 3 thread dimensions, found " + std::to_string(launch.threads.size()));
        return;
    }
    std::array<int64_t, 3> extents{1, 1, 1};
    std::string spelled;
    int64_t total = 1;
    for (size_t i = 0; i < launch.threads.size(); ++i) {
        std::optional<int64_t> t = checkConstInt(*launch.threads[i], "thread count");
        if (!t) return;
        if (*t <= 0 || *t > 1024) {
            diags_.error(launch.threads[i]->range, "a thread dimension must be between 1 and 1024, found " + std::to_string(*t));
            return;
        }
        extents[i] = *t;
        total *= *t;
        spelled += (i ? " x " : "") + std::to_string(*t);
    }
    if (launch.threads.size() > 1) spelled += " = " + std::to_string(total);
    SourceRange where = launch.threads.size() == 1 ? launch.threads[0]->range : launch.threadsRange;
    if (total > 1024) diags_.error(where, "threads must be at most 1024, found " + spelled);
    else {
        out.threads = total;
        out.threadExtents = extents;
    }
    if (launch.threadNames.size() > launch.threads.size())
        diags_.error(launch.threadNames[launch.threads.size()].range,
                     "more thread index names than thread dimensions (" + std::to_string(launch.threads.size()) + ")");
}

void Checker::checkLaunch(const ast::Kernel &k, ir::Kernel &out) {
    const ast::Launch &launch = k.launch;
    badCluster_ = false;
    if (launch.grid.empty()) {
        diags_.error(k.name.range, "kernel '" + k.name.name + "' has no grid(...) clause");
    } else if (launch.grid.size() > 3) {
        diags_.error(launch.gridRange, "a grid has at most 3 dimensions, found " + std::to_string(launch.grid.size()));
    } else {
        for (const ast::ExprPtr &g : launch.grid) {
            std::optional<Value> v = checkValue(*g);
            if (!v) continue;
            if (isFloat(v->type()) || v->type() == DType::Bool) {
                diags_.error(g->range, "grid dimension must be an integer");
                continue;
            }
            if (v->constant) {
                if (v->constant->i <= 0) {
                    diags_.error(g->range, "grid dimension must be positive, found " + v->constant->str());
                    continue;
                }
                if (v->constant->i > INT32_MAX) {
                    diags_.error(g->range, "grid dimension " + v->constant->str() + " exceeds 2^31 - 1");
                    continue;
                }
                out.grid.push_back(ir::intImm(v->constant->i));
            } else if (std::optional<ir::Expr> e = convert(*v, DType::Int32, g->range)) {
                out.grid.push_back(*e);
            }
        }
    }
    if (launch.blockNames.size() > launch.grid.size() && !launch.grid.empty())
        diags_.error(launch.blockNames[launch.grid.size()].range,
                     "more block index names than grid dimensions (" + std::to_string(launch.grid.size()) + ")");
    checkThreads(launch, out);
    if (!launch.cluster.empty()) {
        if (launch.cluster.size() > 3) {
            diags_.error(launch.clusterRange, "a cluster has at most 3 dimensions");
            badCluster_ = true;
        } else {
            // Each dimension is checked against the limit before the product
            // is formed, so the product cannot overflow (2^63 x 2 is not 0).
            int64_t total = 1;
            bool ok = true;
            std::array<int64_t, 3> dims = {1, 1, 1};
            for (size_t i = 0; i < launch.cluster.size(); ++i) {
                std::optional<int64_t> c = checkConstInt(*launch.cluster[i], "cluster dimension");
                if (!c) { ok = false; continue; }
                if (*c <= 0) {
                    diags_.error(launch.cluster[i]->range, "cluster dimension must be positive, found " + std::to_string(*c));
                    ok = false;
                    continue;
                }
                if (*c > kMaxClusterBlocks) {
                    diags_.error(launch.cluster[i]->range, "a cluster has at most " + std::to_string(kMaxClusterBlocks) +
                                                               " blocks, this dimension alone has " + std::to_string(*c));
                    ok = false;
                    continue;
                }
                dims[i] = *c;
                total *= *c;
            }
            if (ok && total > kMaxClusterBlocks) {
                diags_.error(launch.clusterRange, "a cluster has at most " + std::to_string(kMaxClusterBlocks) + " blocks, this one has " + std::to_string(total));
                ok = false;
            }
            // Only a valid cluster is recorded: the checks of cluster_mask and
            // dst_block shift and compare by its block count.
            out.hasCluster = ok && total > 1;
            if (out.hasCluster) out.cluster = dims;
            badCluster_ = !ok;
        }
    }
    if (launch.minBlocksPerSm) {
        if (std::optional<int64_t> m = checkConstInt(*launch.minBlocksPerSm, "min_blocks_per_sm")) {
            if (*m <= 0) diags_.error(launch.minBlocksPerSm->range, "min_blocks_per_sm must be positive");
            else out.minBlocksPerSm = *m;
        }
    }
}

// ------------------------------------------------------------------ scopes

bool Checker::declare(const ast::Ident &name, Symbol sym) {
    for (const auto &scope : scopes_) {
        auto it = scope.find(name.name);
        if (it != scope.end()) {
            Diagnostic d{Severity::Error, name.range, "redefinition of '" + name.name + "'", {}, {}};
            d.note(it->second.def, std::string("previous definition (a ") + (it->second.fromLet ? "let binding" : symbolKindName(it->second.kind)) + ") is here");
            diags_.report(std::move(d));
            return false;
        }
    }
    scopes_.back()[name.name] = std::move(sym);
    return true;
}

const Symbol *Checker::lookup(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
        auto found = it->find(name);
        if (found != it->end()) return &found->second;
    }
    return nullptr;
}

void Checker::reportUnknown(const std::string &name, SourceRange where, const char *what) {
    Diagnostic d{Severity::Error, where, std::string("use of undeclared ") + what + " '" + name + "'", {}, {}};
    std::string best;
    size_t bestDistance = 3;
    for (const auto &scope : scopes_) {
        for (const auto &[candidate, sym] : scope) {
            size_t dist = editDistance(name, candidate);
            if (dist < bestDistance || (dist == bestDistance && !best.empty() && candidate < best)) {
                if (dist < bestDistance) bestDistance = dist;
                best = candidate;
            }
        }
    }
    // A TileLang name written without its `T.` (a port): tilet's spelling.
    if (std::optional<std::string> form = tiletFormOfT(name); form && *form != name)
        d.note({}, "TileLang's T." + name + " is written in tilet: " + *form);
    // One-letter names are too short for a useful guess.
    else if (!best.empty() && name.size() >= 3 && bestDistance <= std::max<size_t>(1, name.size() / 3))
        d.note(lookup(best)->def, "did you mean '" + best + "'?");
    diags_.report(std::move(d));
}

void Checker::reportUnknownKeyword(const std::string &callee, const ast::Arg &a, const std::vector<std::string> &keywords) {
    Diagnostic d{Severity::Error, a.nameRange, "'" + callee + "' has no keyword argument '" + a.name + "'", {}, {}};
    std::string best;
    size_t bestDistance = 4;
    for (const std::string &k : keywords) {
        size_t dist = editDistance(a.name, k);
        if (dist < bestDistance) { bestDistance = dist; best = k; }
    }
    if (std::optional<std::string> tilet = tiletKeywordOf(callee, a.name)) d.note({}, "TileLang's '" + a.name + "' is '" + *tilet + "' in tilet");
    else if (!best.empty()) d.note({}, "did you mean '" + best + "'?");
    else if (!keywords.empty()) {
        std::string list;
        for (const std::string &k : keywords) list += (list.empty() ? "" : ", ") + k;
        d.note({}, "'" + callee + "' takes: " + list);
    } else {
        d.note({}, "'" + callee + "' takes no keyword arguments");
    }
    diags_.report(std::move(d));
}

std::optional<CallArgs> Checker::matchArgs(const ast::Call &c, size_t minPositional, size_t maxPositional,
                                           const std::vector<std::string> &keywords) {
    CallArgs out;
    bool ok = true;
    bool sawKeyword = false;
    for (const ast::Arg &a : c.args) {
        if (a.name.empty()) {
            if (sawKeyword) {
                diags_.error(a.value->range, "positional argument after keyword argument");
                ok = false;
                continue;
            }
            out.positional.push_back(a.value.get());
            continue;
        }
        sawKeyword = true;
        if (std::find(keywords.begin(), keywords.end(), a.name) == keywords.end()) {
            reportUnknownKeyword(c.callee, a, keywords);
            ok = false;
            continue;
        }
        if (out.keywords.count(a.name)) {
            diags_.error(a.nameRange, "keyword argument '" + a.name + "' given twice");
            ok = false;
            continue;
        }
        out.keywords[a.name] = &a;
    }
    if (ok && (out.positional.size() < minPositional || out.positional.size() > maxPositional)) {
        std::string expected = minPositional == maxPositional ? std::to_string(minPositional)
                               : maxPositional == SIZE_MAX  ? "at least " + std::to_string(minPositional)
                                                            : std::to_string(minPositional) + " to " + std::to_string(maxPositional);
        diags_.error(c.calleeRange, "'" + c.callee + "' takes " + expected + " positional argument" +
                                        (expected == "1" ? "" : "s") + ", found " + std::to_string(out.positional.size()));
        ok = false;
    }
    if (!ok) return std::nullopt;
    return out;
}

} // namespace sema
} // namespace tilet
