// SemaStmt.cpp -- checking statements: bindings, allocations, assignments,
// loops, branches and warp-specialized regions.
//
// A binding (let, var, alloc) scopes over the rest of its block, so a block
// is checked recursively: statement i, then the rest as its body.
#include "sema/SemaImpl.h"

#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "support/Checked.h"
#include "support/InternalError.h"

#include <algorithm>
#include <set>
#include <utility>

namespace tilet::sema {

ir::Stmt Checker::checkBlock(const ast::StmtList &stmts) {
    pushScope();
    ir::Stmt s = checkStmtsFrom(stmts, 0);
    popScope();
    return s;
}

ir::Stmt Checker::checkStmtsFrom(const ast::StmtList &stmts, size_t index) {
    std::vector<ir::Stmt> out;
    for (size_t i = index; i < stmts.size(); ++i) {
        const ast::Stmt &s = *stmts[i];
        if (&s == swizzleStmt_ || registerBudgetStmts_.count(&s)) continue;
        const size_t draws = pendingDraws_.size();   // rng_rand() calls of this statement go before it
        switch (s.kind) {
        case ast::StmtKind::Let: {
            out.push_back(placeDraws(checkLet(static_cast<const ast::Let &>(s), stmts, i + 1), draws));
            return ir::seq(std::move(out));
        }
        case ast::StmtKind::Var:
            out.push_back(placeDraws(checkVar(static_cast<const ast::Var &>(s), stmts, i + 1), draws));
            return ir::seq(std::move(out));
        case ast::StmtKind::Assign: out.push_back(checkAssign(static_cast<const ast::Assign &>(s))); break;
        case ast::StmtKind::For: {
            const auto &loop = static_cast<const ast::For &>(s);
            enclosingLoops_.push_back(ast::loopKindName(loop.loopKind));
            out.push_back(checkFor(loop));
            enclosingLoops_.pop_back();
            break;
        }
        case ast::StmtKind::If: out.push_back(checkIf(static_cast<const ast::If &>(s))); break;
        case ast::StmtKind::While:
            enclosingLoops_.push_back("while");
            out.push_back(checkWhile(static_cast<const ast::While &>(s)));
            enclosingLoops_.pop_back();
            break;
        case ast::StmtKind::Break:
        case ast::StmtKind::Continue: out.push_back(checkJump(s)); break;
        case ast::StmtKind::Ws: out.push_back(checkWs(static_cast<const ast::Ws &>(s))); break;
        case ast::StmtKind::CallStmt: out.push_back(checkCallStmt(*static_cast<const ast::CallStmt &>(s).call)); break;
        }
        out.back() = placeDraws(out.back(), draws);
    }
    return ir::seq(std::move(out));
}

// The draws made since `from` (a statement's own: its nested blocks placed
// theirs), each into its register, then `s`.
ir::Stmt Checker::placeDraws(ir::Stmt s, size_t from) {
    if (pendingDraws_.size() == from) return s;
    std::vector<PendingDraw> draws(pendingDraws_.begin() + static_cast<long>(from), pendingDraws_.end());
    pendingDraws_.resize(from);
    std::vector<ir::Stmt> body;
    for (const PendingDraw &d : draws) body.push_back(d.draw);
    body.push_back(s ? s : ir::seq({}));
    ir::Stmt out = ir::seq(std::move(body));
    for (auto d = draws.rbegin(); d != draws.rend(); ++d) out = std::make_shared<ir::Allocate>(d->value, out, d->draw->span);
    return out;
}

// ------------------------------------------------------------------ bindings

ir::Stmt Checker::checkLet(const ast::Let &s, const ast::StmtList &stmts, size_t index) {
    if (s.init->kind == ast::ExprKind::Call) {
        const auto &call = static_cast<const ast::Call &>(*s.init);
        if (call.isBuiltin && call.callee.rfind("alloc_", 0) == 0) {
            if (s.type || !s.typeName.empty()) diags_.error(s.typeRange, "an allocation takes its dtype as an argument, not as a type annotation");
            return checkAlloc(s, call, stmts, index);
        }
        if (call.isBuiltin && call.callee == "Tensor") {
            if (s.type || !s.typeName.empty()) diags_.error(s.typeRange, "a tensor view takes its dtype as an argument, not as a type annotation");
            return checkTensorView(s, call, stmts, index);
        }
        if (call.isBuiltin && call.callee == "reshape") {
            if (s.type || !s.typeName.empty()) diags_.error(s.typeRange, "a reshaped view keeps its fragment's dtype; it takes no type annotation");
            return checkReshape(s, call, stmts, index);
        }
    }
    // Another name for an allocated buffer (TileLang programs alias one
    // buffer for a second use: `O_shared = Q_shared`).
    if (s.init->kind == ast::ExprKind::Name && !s.type && s.typeName.empty()) {
        const Symbol *named = lookup(static_cast<const ast::Name &>(*s.init).name);
        if (named && named->kind == SymbolKind::Buffer) {
            Symbol alias = *named;
            alias.def = s.name.range;
            declare(s.name, alias);
            return checkStmtsFrom(stmts, index);
        }
    }
    std::optional<Value> v = checkValue(*s.init);
    Symbol sym;
    sym.def = s.name.range;
    ir::Stmt letValue;
    std::optional<DType> type = typeAnnotation(s.type, s.typeName, s.typeRange);
    if (!s.typeName.empty() && !type) v.reset();
    if (v) {
        if (type) {
            if (isPacked(*type)) diags_.error(s.typeRange, "a scalar cannot have the packed type " + std::string(dtypeName(*type)));
            std::optional<ir::Expr> e = convert(*v, *type, v->range);
            if (e) {
                Value typed = *v;
                typed.expr = *e;
                typed.untyped = false;
                if (typed.constant && isFloat(*type)) typed.constant = ConstValue::ofFloat(typed.constant->asDouble());
                v = typed;
            } else {
                v.reset();
            }
        }
    }
    if (v && v->constant) {
        // A constant binding stays a compile-time constant (usable in shapes and extents).
        sym.kind = SymbolKind::Const;
        sym.constValue = *v;
        sym.fromLet = true;
        declare(s.name, sym);
        return checkStmtsFrom(stmts, index);
    }
    ir::VarRef var = ir::makeVar(s.name.name, v ? v->type() : DType::Int32, s.name.range);
    sym.kind = SymbolKind::Let;
    sym.var = var;
    declare(s.name, sym);
    if (v) letValues_.push_back({var, v->expr});
    ir::Stmt rest = checkStmtsFrom(stmts, index);
    if (!v) return rest;
    return std::make_shared<ir::LetStmt>(var, v->expr, rest ? rest : ir::seq({}), s.range);
}

ir::Stmt Checker::checkVar(const ast::Var &s, const ast::StmtList &stmts, size_t index) {
    // An unresolved type was reported; the variable is still declared, so no use cascades.
    const DType type = typeAnnotation(s.type, s.typeName, s.typeRange).value_or(DType::F32);
    if (isPacked(type) || type == DType::TF32) diags_.error(s.typeRange, "a variable cannot have type " + std::string(dtypeName(type)));
    ir::Buffer buffer = ir::makeBuffer(s.name.name, type, {}, ir::MemScope::Local, s.name.range);
    ir::Expr init;
    ir::Stmt atomicInit;   // `var v: T = atomic_load(src[i])`
    const ast::Call *initCall = s.init && s.init->kind == ast::ExprKind::Call ? static_cast<const ast::Call *>(s.init.get()) : nullptr;
    if (initCall && initCall->isBuiltin && initCall->callee == "atomic_load") {
        atomicInit = checkAtomicLoad(*initCall, buffer);
    } else if (s.init) {
        if (std::optional<Value> v = checkValue(*s.init)) {
            if (std::optional<ir::Expr> e = convert(*v, type, v->range)) init = *e;
        }
    } else {
        // Variables start at zero, so no program reads an undefined value.
        init = type == DType::Bool ? ir::boolImm(false) : isFloat(type) ? ir::floatImm(0, type) : ir::intImm(0, type);
    }
    Symbol sym;
    sym.kind = SymbolKind::Mutable;
    sym.def = s.name.range;
    sym.buffer = buffer;
    declare(s.name, sym);
    ir::Stmt rest = checkStmtsFrom(stmts, index);
    std::vector<ir::Stmt> body;
    if (init) body.push_back(std::make_shared<ir::Store>(buffer, std::vector<ir::Expr>{}, init, ir::StoreOp::Assign, s.range));
    if (atomicInit) body.push_back(atomicInit);
    body.push_back(rest);
    return std::make_shared<ir::Allocate>(buffer, ir::seq(std::move(body)), s.range);
}

// The constant shape `[d0, d1, ...]` (or one extent: TileLang's
// `alloc_fragment(n, dtype)`) of `what` `name`, each dimension positive and at
// most 2^31 - 1 elements in all; nullopt when reported.
std::optional<std::vector<ir::Expr>> Checker::checkConstShape(const ast::Expr &shapeExpr, const std::string &what, const std::string &name,
                                                              const std::string &article) {
    std::vector<const ast::Expr *> items;
    if (shapeExpr.kind == ast::ExprKind::List) {
        for (const auto &item : static_cast<const ast::List &>(shapeExpr).items) items.push_back(item.get());
    } else {
        items.push_back(&shapeExpr);
    }
    if (items.empty()) {
        diags_.error(shapeExpr.range, article + " needs at least one dimension");
        return std::nullopt;
    }
    if (!checkRank(items.size(), shapeExpr.range, what + " '" + name + "'")) return std::nullopt;
    std::string dimension = what + " dimension";
    std::vector<ir::Expr> shape;
    bool ok = true;
    int64_t elements = 1;
    for (const ast::Expr *item : items) {
        std::optional<int64_t> d = checkConstInt(*item, dimension.c_str());
        if (!d) { ok = false; continue; }
        if (*d <= 0) {
            diags_.error(item->range, dimension + " must be positive, found " + std::to_string(*d));
            ok = false;
            continue;
        }
        if (__builtin_mul_overflow(elements, *d, &elements) || elements > INT32_MAX) {
            diags_.error(shapeExpr.range, what + " '" + name + "' has more than 2^31 - 1 elements");
            return std::nullopt;
        }
        shape.push_back(ir::intImm(*d));
    }
    if (!ok) return std::nullopt;
    return shape;
}

// `let v = Tensor([d0, d1, ...], dtype, x);`: TileLang's T.Tensor(shape,
// dtype, x.data), a view of global tensor x's memory (from its first
// element, row-major) with another shape and dtype. It may not reach past x.
ir::Stmt Checker::checkTensorView(const ast::Let &s, const ast::Call &call, const ast::StmtList &stmts, size_t index) {
    ir::Buffer view;
    if (std::optional<CallArgs> args = matchArgs(call, 3, 3, {})) {
        const ast::Expr &shapeExpr = *args->positional[0];
        std::optional<DType> dtype = checkDType(*args->positional[1]);
        std::optional<RegionRef> source = checkRegionArg(*args->positional[2], "viewed tensor");
        bool ok = dtype && source;
        if (source && (!source->whole || source->buffer->scope != ir::MemScope::Global)) {
            diags_.error(source->range, "Tensor(shape, dtype, x) views a global tensor x, named without indices; '" + source->buffer->name +
                                            "' " + (source->buffer->scope != ir::MemScope::Global ? "is " + std::string(ir::memScopeName(source->buffer->scope))
                                                                                                  : std::string("has indices")));
            ok = false;
        }
        if (dtype && isPacked(*dtype)) {
            diags_.error(args->positional[1]->range, "a view of packed " + std::string(dtypeName(*dtype)) + " elements is not supported yet");
            ok = false;
        }
        std::optional<std::vector<ir::Expr>> shape = checkConstShape(shapeExpr, "view", s.name.name, "a view");
        ok = ok && shape;
        if (ok) {
            // Bytes of the view against bytes of the tensor, when the tensor's shape is constant.
            int64_t elements = 1;
            for (const ir::Expr &d : *shape) elements *= *ir::constInt(d);   // at most 2^31 - 1 (checkConstShape)
            int64_t viewBytes = elements * dtypeBits(*dtype) / 8;
            if (std::optional<int64_t> have = source->buffer->constElements()) {
                int64_t tensorBytes = *have * dtypeBits(source->buffer->dtype) / 8;
                if (viewBytes > tensorBytes) {
                    diags_.error(call.range, "view '" + s.name.name + "' covers " + std::to_string(viewBytes) + " bytes, but '" + source->buffer->name +
                                                 "' has " + std::to_string(tensorBytes));
                    ok = false;
                }
            }
        }
        if (ok) {
            auto made = ir::makeBuffer(s.name.name, *dtype, std::move(*shape), ir::MemScope::Global, s.name.range);
            made->viewOf = source->buffer;
            view = made;
        }
    }
    return declareBuffer(s, view, ir::MemScope::Global, stmts, index);
}

// `let v = reshape(f, [d0, d1, ...]);`: TileLang's T.reshape of a fragment,
// the same registers seen with another row-major shape of as many elements
// (a gemm accumulator's columns split into [block_Q, heads] to reduce over
// the heads, TileLang's fp8_lighting_indexer). Infer-layouts gives the view
// the fragment's layout reshaped.
ir::Stmt Checker::checkReshape(const ast::Let &s, const ast::Call &call, const ast::StmtList &stmts, size_t index) {
    ir::Buffer view;
    if (std::optional<CallArgs> args = matchArgs(call, 2, 2, {})) {
        std::optional<RegionRef> source = checkRegionArg(*args->positional[0], "reshaped fragment");
        std::optional<std::vector<ir::Expr>> shape = checkConstShape(*args->positional[1], "view", s.name.name, "a reshaped view");
        bool ok = source && shape;
        if (source && (!source->whole || source->buffer->scope != ir::MemScope::Fragment)) {
            diags_.error(source->range, "reshape(f, shape) views a fragment f, named without indices; '" + source->buffer->name + "' " +
                                            (source->buffer->scope != ir::MemScope::Fragment ? "is " + std::string(ir::memScopeName(source->buffer->scope))
                                                                                              : std::string("has indices")));
            ok = false;
        }
        if (ok && isPacked(source->buffer->dtype)) {
            diags_.error(source->range, "a reshaped view of packed " + std::string(dtypeName(source->buffer->dtype)) + " elements is not supported yet");
            ok = false;
        }
        if (ok && source->buffer->reducer) {
            diags_.error(source->range, "a reshaped view of reducer '" + source->buffer->name + "' is not supported yet");
            ok = false;
        }
        if (parallelDepth_ > 0) {
            diags_.error(call.range, "'reshape' cannot appear inside a parallel loop");
            ok = false;
        }
        if (ok) {
            int64_t elements = 1;
            for (const ir::Expr &d : *shape) elements *= *ir::constInt(d);   // at most 2^31 - 1 (checkConstShape)
            std::optional<int64_t> have = source->buffer->constElements();
            if (have && *have != elements) {
                diags_.error(args->positional[1]->range, "a reshaped view has the elements of its fragment: '" + source->buffer->name + "' has " +
                                                             std::to_string(*have) + ", the shape " + std::to_string(elements));
                ok = false;
            }
        }
        if (ok) {
            auto made = ir::makeBuffer(s.name.name, source->buffer->dtype, std::move(*shape), ir::MemScope::Fragment, s.name.range);
            made->viewOf = source->buffer;
            view = made;
        }
    }
    return declareBuffer(s, view, ir::MemScope::Fragment, stmts, index);
}

// Declares the buffer `s` binds (null: its error was reported; its uses are
// not) and checks the statements after it, inside its Allocate.
ir::Stmt Checker::declareBuffer(const ast::Let &s, const ir::Buffer &buffer, ir::MemScope scope, const ast::StmtList &stmts, size_t index) {
    Symbol sym;
    sym.kind = SymbolKind::Buffer;
    sym.def = s.name.range;
    sym.buffer = buffer ? buffer : ir::makeBuffer(s.name.name, DType::F32, {}, scope, s.name.range);
    sym.invalid = !buffer;
    declare(s.name, sym);
    ir::Stmt rest = checkStmtsFrom(stmts, index);
    if (!buffer) return rest;
    return std::make_shared<ir::Allocate>(buffer, rest ? rest : ir::seq({}), s.range);
}

ir::Stmt Checker::checkAlloc(const ast::Let &s, const ast::Call &call, const ast::StmtList &stmts, size_t index) {
    const std::string &kind = call.callee;
    ir::Buffer buffer;
    // alloc_cluster_barrier (TileLang's T.alloc_cluster_barrier): barriers
    // that other blocks of the cluster arrive on, and on which a tma_copy of
    // the CTA pair counts its bytes in the pair's leader.
    if (kind == "alloc_barrier" || kind == "alloc_cluster_barrier") {
        std::optional<CallArgs> args = matchArgs(call, 0, 1, {"arrive_count"});
        if (args) {
            const ast::Expr *count = args->positional.empty() ? args->keyword("arrive_count") : args->positional[0];
            if (!args->positional.empty() && args->keyword("arrive_count"))
                diags_.error(call.range, "arrive_count given twice");
            if (!count) {
                diags_.error(call.range, kind + " needs an arrive count: " + kind + "(arrive_count = 128)");
            } else {
                std::vector<const ast::Expr *> items;
                // Python's list repetition, as TileLang programs write an
                // array's counts: [128] * n (or n * [128]).
                int64_t repeat = 1;
                if (const auto *mul = count->kind == ast::ExprKind::Binary ? static_cast<const ast::Binary *>(count) : nullptr;
                    mul && mul->op == ast::BinaryOp::Mul && (mul->lhs->kind == ast::ExprKind::List) != (mul->rhs->kind == ast::ExprKind::List)) {
                    const ast::Expr &times = mul->lhs->kind == ast::ExprKind::List ? *mul->rhs : *mul->lhs;
                    count = mul->lhs->kind == ast::ExprKind::List ? mul->lhs.get() : mul->rhs.get();
                    std::optional<int64_t> n = checkConstInt(times, "list repetition count");
                    repeat = n.value_or(0);
                    if (n && (*n <= 0 || *n > 4096)) {
                        diags_.error(times.range, "a barrier array repeats its arrive counts 1 to 4096 times, found " + std::to_string(*n));
                        repeat = 0;
                    }
                }
                if (count->kind == ast::ExprKind::List) {
                    for (int64_t r = 0; r < repeat; ++r)
                        for (const auto &item : static_cast<const ast::List &>(*count).items) items.push_back(item.get());
                    if (items.empty() && repeat > 0) diags_.error(count->range, "an array of barriers needs at least one arrive count");
                } else {
                    items.push_back(count);
                }
                std::vector<int64_t> counts;
                bool ok = !items.empty();
                for (const ast::Expr *item : items) {
                    std::optional<int64_t> n = checkConstInt(*item, "arrive count");
                    if (!n) { ok = false; continue; }
                    if (*n <= 0) {
                        diags_.error(item->range, "arrive count must be positive, found " + std::to_string(*n));
                        ok = false;
                        continue;
                    }
                    if (*n > (1 << 20) - 1) {
                        diags_.error(item->range, "arrive count " + std::to_string(*n) + " exceeds the mbarrier limit of 2^20 - 1");
                        ok = false;
                        continue;
                    }
                    counts.push_back(*n);
                }
                if (ok) {
                    auto barriers = ir::makeBuffer(s.name.name, DType::UInt64, {ir::intImm(static_cast<int64_t>(counts.size()))},
                                                   ir::MemScope::Barrier, s.name.range);
                    barriers->arriveCounts = counts;
                    barriers->clusterScope = barriers->clusterBarrier = kind == "alloc_cluster_barrier";
                    buffer = barriers;
                    if (barriers->clusterBarrier && kernel_ && !kernel_->hasCluster) {
                        diags_.error(call.range, "alloc_cluster_barrier in a kernel without cluster(...): no other block arrives on it; use alloc_barrier");
                        buffer = nullptr;
                    }
                }
            }
        }
    } else {
        bool reducer = kind == "alloc_reducer";
        std::optional<CallArgs> args = matchArgs(call, 2, 2, reducer ? std::vector<std::string>{"op", "replication"} : std::vector<std::string>{});
        ir::MemScope scope = kind == "alloc_shared" ? ir::MemScope::Shared
                           : kind == "alloc_fragment" || reducer ? ir::MemScope::Fragment
                           : kind == "alloc_tmem" ? ir::MemScope::TMem
                                                  : ir::MemScope::Local;
        if (args) {
            const ast::Expr &shapeExpr = *args->positional[0];
            std::optional<DType> dtype = checkDType(*args->positional[1]);
            std::vector<ir::Expr> shape;
            bool ok = dtype.has_value();
            if (dtype && isUnpacked(*dtype) && scope != ir::MemScope::Shared) {
                diags_.error(args->positional[1]->range, std::string(dtypeName(*dtype)) + " is a shared-memory form (the 8-bit slots tcgen05.mma reads " +
                                                             std::string(dtypeName(valueType(*dtype))) + " from); " + std::string(kind) + " cannot hold it");
                ok = false;
            }
            std::optional<ir::BufferNode::Reducer> reducerInfo;
            if (reducer) {
                reducerInfo.emplace();
                if (const ast::Expr *op = args->keyword("op")) {
                    std::optional<std::string> word = checkWord(*op, {"sum", "max", "min"}, "reducer op");
                    ok = ok && word;
                    if (word) reducerInfo->op = *word == "sum" ? ir::BufferNode::Reducer::Op::Sum
                                              : *word == "max" ? ir::BufferNode::Reducer::Op::Max : ir::BufferNode::Reducer::Op::Min;
                }
                if (const ast::Expr *rep = args->keyword("replication")) {
                    std::optional<std::string> word = checkWord(*rep, {"all", "none"}, "reducer replication");
                    ok = ok && word;
                    if (word) reducerInfo->replication = *word == "all" ? ir::BufferNode::Reducer::Replication::All
                                                                        : ir::BufferNode::Reducer::Replication::None;
                }
                if (dtype && (*dtype == DType::Bool || isPacked(*dtype))) {
                    diags_.error(args->positional[1]->range, "a reducer holds numbers that arithmetic combines; " +
                                                                 std::string(dtypeName(*dtype)) + " cannot be one");
                    ok = false;
                }
            }
            std::optional<std::vector<ir::Expr>> checked = checkConstShape(shapeExpr, "buffer", s.name.name, "an allocation");
            ok = ok && checked;
            if (checked) shape = *checked;
            if (ok && scope == ir::MemScope::TMem && shape.size() != 2 && shape.size() != 3) {
                diags_.error(shapeExpr.range, "tensor memory holds tiles: alloc_tmem([rows, cols], dtype), or alloc_tmem([stages, rows, cols], dtype)");
                ok = false;
            }
            if (ok) {
                auto made = ir::makeBuffer(s.name.name, *dtype, std::move(shape), scope, s.name.range);
                made->reducer = reducerInfo;
                // annotate_layout(name, ...) later in this block fixes its layout from the start (checked there).
                if (scope == ir::MemScope::Shared) {
                    for (size_t i = index; i < stmts.size(); ++i) {
                        const ast::Stmt &later = *stmts[i];
                        if ((later.kind == ast::StmtKind::Let && static_cast<const ast::Let &>(later).name.name == s.name.name) ||
                            (later.kind == ast::StmtKind::Var && static_cast<const ast::Var &>(later).name.name == s.name.name))
                            break;   // shadowed from here on
                        if (later.kind != ast::StmtKind::CallStmt) continue;
                        const ast::Call &call2 = *static_cast<const ast::CallStmt &>(later).call;
                        if (std::optional<ir::SharedSwizzle> sw = annotatedSwizzle(call2, s.name.name, *made)) made->swizzle = *sw;
                    }
                }
                buffer = made;
            }
        }
    }
    if (buffer && parallelDepth_ > 0 && buffer->scope != ir::MemScope::Local) {
        diags_.error(call.range, "'" + kind + "' cannot appear inside a parallel loop");
        buffer.reset();
    }
    return declareBuffer(s, buffer, ir::MemScope::Local, stmts, index);
}

// ------------------------------------------------------------------ assignment

ir::Stmt Checker::checkAssign(const ast::Assign &s) {
    const Symbol *sym = lookup(s.target.name);
    if (!sym) {
        reportUnknown(s.target.name, s.target.range, "identifier");
        return nullptr;
    }
    if (sym->invalid) return nullptr;
    ir::Buffer buffer;
    std::vector<ir::Expr> indices;
    if (sym->kind == SymbolKind::Mutable) {
        if (!s.indices.empty()) {
            diags_.error(s.targetRange, "'" + s.target.name + "' is a scalar variable; it cannot be indexed");
            return nullptr;
        }
        buffer = sym->buffer;
    } else if (sym->kind == SymbolKind::Tensor || sym->kind == SymbolKind::Buffer) {
        buffer = sym->buffer;
        if (buffer->scope == ir::MemScope::Barrier || buffer->scope == ir::MemScope::TMem) {
            diags_.error(s.targetRange, std::string("elements of ") + ir::memScopeName(buffer->scope) + " buffer '" +
                                            s.target.name + "' cannot be assigned");
            return nullptr;
        }
        if (!elementsOneByOne(*buffer)) {
            diags_.error(s.targetRange, "elements of packed " + std::string(dtypeName(buffer->dtype)) + " buffers cannot be assigned one by one" +
                                            (inRegistersOneByOne(buffer->dtype) ? " (except in a fragment)" : ""));
            return nullptr;
        }
        if (s.indices.empty()) {
            diags_.error(s.targetRange, "'" + s.target.name + "' is a buffer; assign to its elements, or use fill/copy for the whole tile");
            return nullptr;
        }
        if (static_cast<int>(s.indices.size()) != buffer->rank()) {
            diags_.error(s.targetRange, "'" + s.target.name + "' has " + std::to_string(buffer->rank()) + " dimension" +
                                            (buffer->rank() == 1 ? "" : "s") + " but is indexed with " + std::to_string(s.indices.size()));
            return nullptr;
        }
        bool ok = true;
        std::vector<SourceRange> ranges;
        for (const auto &i : s.indices) {
            std::optional<ir::Expr> e = checkInteger(*i, "index");
            if (!e) {
                ok = false;
                continue;
            }
            indices.push_back(*e);
            ranges.push_back(i->range);
        }
        if (!ok || !checkConstIndices(*buffer, indices, ranges)) return nullptr;
    } else {
        const char *what = sym->fromLet ? "let binding" : symbolKindName(sym->kind);
        diags_.error(s.targetRange, "cannot assign to '" + s.target.name + "': it is a " + what +
                                        (sym->kind == SymbolKind::Let || sym->kind == SymbolKind::Const ? "; declare it with 'var' to make it mutable" : ""));
        return nullptr;
    }
    // `v = atomic_load(src[i])`: TileLang's atomic load, whose value only a var takes.
    if (s.value->kind == ast::ExprKind::Call && static_cast<const ast::Call &>(*s.value).isBuiltin &&
        static_cast<const ast::Call &>(*s.value).callee == "atomic_load") {
        if (sym->kind != SymbolKind::Mutable || s.op != ast::AssignOp::Assign) {
            diags_.error(s.range, "the value atomic_load(...) gives is assigned to a var with '=': `v = atomic_load(...)`");
            return nullptr;
        }
        return checkAtomicLoad(static_cast<const ast::Call &>(*s.value), buffer);
    }
    // `v = atomic_add(dst[i], x, return_prev = true)`: TileLang's form of an
    // atomic fetch-add, whose previous value only a var takes.
    if (s.value->kind == ast::ExprKind::Call && static_cast<const ast::Call &>(*s.value).isBuiltin &&
        static_cast<const ast::Call &>(*s.value).callee == "atomic_add") {
        if (sym->kind != SymbolKind::Mutable || s.op != ast::AssignOp::Assign) {
            diags_.error(s.range, "the previous value atomic_add(..., return_prev = true) gives is assigned to a var with '=': `v = atomic_add(...)`");
            return nullptr;
        }
        return checkAtomicAdd(static_cast<const ast::Call &>(*s.value), &buffer);
    }
    std::optional<Value> value = checkValue(*s.value);
    if (!value) return nullptr;
    if (s.op != ast::AssignOp::Assign) {
        Value current;
        current.expr = std::make_shared<ir::Load>(buffer, indices, s.targetRange);
        current.range = s.targetRange;
        static const ast::BinaryOp ops[] = {ast::BinaryOp::Add, ast::BinaryOp::Add, ast::BinaryOp::Sub, ast::BinaryOp::Mul, ast::BinaryOp::Div};
        value = binaryValues(ops[static_cast<int>(s.op)], current, *value, s.range, s.range);
        if (!value) return nullptr;
    }
    std::optional<ir::Expr> converted = convert(*value, buffer->dtype, value->range);
    if (!converted) return nullptr;
    return std::make_shared<ir::Store>(buffer, std::move(indices), *converted, ir::StoreOp::Assign, s.range);
}

// ------------------------------------------------------------------ loops

// A loop's arguments, as a builtin call's: positional ones first, then the
// keywords it knows, each once.
std::optional<CallArgs> Checker::loopArgs(const ast::For &s, const std::vector<std::string> &keywords) {
    const char *kindName = ast::loopKindName(s.loopKind);
    CallArgs out;
    bool ok = true, sawKeyword = false;
    for (const ast::Arg &a : s.args) {
        sawKeyword = sawKeyword || !a.name.empty();
        if (a.name.empty()) {
            if (sawKeyword) { diags_.error(a.value->range, "positional argument after keyword argument"); ok = false; }
            out.positional.push_back(a.value.get());
        } else if (std::find(keywords.begin(), keywords.end(), a.name) == keywords.end()) {
            reportUnknownKeyword(kindName, a, keywords);
            ok = false;
        } else if (out.keywords.count(a.name)) {
            diags_.error(a.nameRange, "keyword argument '" + a.name + "' given twice");
            ok = false;
        } else {
            out.keywords[a.name] = &a;
        }
    }
    if (!ok) return std::nullopt;
    return out;
}

// The loop's variables, declared in the current scope as int32 loop variables.
std::vector<ir::VarRef> Checker::declareLoopVars(const ast::For &s) {
    std::vector<ir::VarRef> vars;
    for (const ast::Ident &name : s.vars) {
        ir::VarRef var = ir::makeVar(name.name, DType::Int32, name.range);
        Symbol sym;
        sym.kind = SymbolKind::LoopVar;
        sym.def = name.range;
        sym.var = var;
        declare(name, sym);
        vars.push_back(var);
    }
    return vars;
}

ir::Stmt Checker::checkFor(const ast::For &s) {
    // vectorize-accesses widens a vectorized loop's element accesses; a
    // loop nest of the block's threads or a pipeline inside cannot be lanes.
    if (vectorizedDepth_ > 0 && s.loopKind != ast::LoopKind::Serial && s.loopKind != ast::LoopKind::Unroll) {
        diags_.error(s.kindRange, std::string("a ") + ast::loopKindName(s.loopKind) +
                                      " loop cannot appear inside a vectorized loop, whose body is element statements");
        return nullptr;
    }
    if (s.loopKind == ast::LoopKind::Parallel) return checkParallelFor(s);
    if (s.loopKind == ast::LoopKind::Persistent) return checkPersistentFor(s);
    const char *kindName = ast::loopKindName(s.loopKind);
    if (s.vars.size() != 1) {
        diags_.error(s.vars[1].range, std::string("a ") + kindName + " loop has one loop variable; only parallel loops take several");
        return nullptr;
    }
    bool pipelined = s.loopKind == ast::LoopKind::Pipelined;
    // Loop arguments are checked like builtin call arguments.
    std::vector<std::string> keywords;
    if (pipelined) keywords = {"stages", "order", "stage", "warp_specialize", "pingpong", "overlap"};
    std::optional<CallArgs> args = loopArgs(s, keywords);
    if (!args) return nullptr;
    size_t maxPositional = pipelined ? 2 : 3;
    if (args->positional.empty() || args->positional.size() > maxPositional) {
        diags_.error(s.kindRange, std::string("'") + kindName + "' takes 1 to " + std::to_string(maxPositional) +
                                      " positional arguments (extent, or start and end" + (pipelined ? "" : ", and an optional step") +
                                      "), found " + std::to_string(args->positional.size()));
        return nullptr;
    }

    ir::Expr start = ir::intImm(0), end;
    int64_t step = 1;
    bool ok = true;
    if (args->positional.size() == 1) {
        std::optional<ir::Expr> e = checkInteger(*args->positional[0], "loop extent");
        if (e) end = *e;
        else ok = false;
    } else {
        std::optional<ir::Expr> b = checkInteger(*args->positional[0], "loop start");
        std::optional<ir::Expr> e = checkInteger(*args->positional[1], "loop end");
        if (b && e) { start = *b; end = *e; }
        else ok = false;
        if (args->positional.size() == 3) {
            std::optional<int64_t> st = checkConstInt(*args->positional[2], "loop step");
            if (!st) ok = false;
            else if (*st <= 0) { diags_.error(args->positional[2]->range, "loop step must be positive, found " + std::to_string(*st)); ok = false; }
            else if (*st > INT32_MAX) { diags_.error(args->positional[2]->range, "loop step " + std::to_string(*st) + " does not fit in int32"); ok = false; }
            else step = *st;
        }
    }
    if (ok) {
        // The loop variable is an int32 (a C `int` in the generated loop), and
        // so is the iteration count of a loop with a step: constant bounds
        // must keep both in range.
        std::optional<int64_t> lo = ir::constInt(start), hi = ir::constInt(end);
        const ast::Expr *endExpr = args->positional[args->positional.size() == 1 ? 0 : 1];
        for (auto [bound, expr] : {std::pair{lo, args->positional[0]}, std::pair{hi, endExpr}}) {
            if (bound && !fitsInType(*bound, DType::Int32)) {
                diags_.error(expr->range, "loop bound " + std::to_string(*bound) + " does not fit in the loop variable's type int32");
                ok = false;
            }
        }
        if (ok && lo && hi) {
            if (*hi < *lo) diags_.warning(s.kindRange, "loop runs zero times (end is before start)", "empty-loop");
            else if (*hi - *lo + (step - 1) > INT32_MAX) {
                diags_.error(s.kindRange, "loop of " + std::to_string(*hi - *lo) + " iterations with step " + std::to_string(step) +
                                              ": its iteration count does not fit in int32");
                ok = false;
            }
        }
    }

    // vectorized(V): each thread's V iterations, whose element accesses
    // become V-wide moves where proven contiguous and aligned (TileLang's
    // T.vectorized); vectorize-accesses decides and explains.
    bool vectorized = s.loopKind == ast::LoopKind::Vectorized;
    if (ok && vectorized) {
        std::optional<int64_t> extent = ir::constInt(end);
        if (args->positional.size() != 1 || !extent) {
            diags_.error(args->positional[0]->range, "'vectorized' takes one constant extent: for v in vectorized(8)");
            ok = false;
        } else if (*extent < 1 || *extent > 1024) {
            // Unrolled in each thread: TileLang's hadamard moves 128 elements per thread this way.
            diags_.error(args->positional[0]->range, "a vectorized loop has 1 to 1024 lanes, found " + std::to_string(*extent));
            ok = false;
        }
    }
    std::optional<ir::PipelineInfo> pipeline;
    std::optional<bool> pingpong, overlap;
    if (pipelined) {
        ir::PipelineInfo info;
        if (const ast::Expr *st = args->keyword("stages")) {
            std::optional<int64_t> n = checkConstInt(*st, "stages");
            if (!n) ok = false;
            else if (*n < 0 || *n > 16) { diags_.error(st->range, "stages must be between 0 and 16, found " + std::to_string(*n)); ok = false; }
            else info.stages = *n;
        }
        if (const ast::Expr *ws = args->keyword("warp_specialize")) {
            std::optional<bool> b = checkConstBool(*ws, "warp_specialize");
            if (!b) ok = false;
            else info.warpSpecialize = *b;
        }
        if (const ast::Expr *ov = args->keyword("overlap")) {
            if (std::optional<bool> b = checkConstBool(*ov, "overlap")) overlap = *b;
            else ok = false;
        }
        if (const ast::Expr *pp = args->keyword("pingpong")) {
            if (std::optional<bool> b = checkConstBool(*pp, "pingpong")) pingpong = *b;
            else ok = false;
        }
        size_t bodySize = s.body.size();
        auto readList = [&](const char *key, std::vector<int64_t> &out) {
            const ast::Expr *e = args->keyword(key);
            if (!e) return;
            if (e->kind != ast::ExprKind::List) {
                diags_.error(e->range, std::string(key) + " is a list with one entry per statement of the loop body");
                ok = false;
                return;
            }
            for (const auto &item : static_cast<const ast::List &>(*e).items) {
                std::optional<int64_t> n = checkConstInt(*item, key);
                if (!n) { ok = false; continue; }
                if (*n < 0) { diags_.error(item->range, std::string(key) + " entries must not be negative"); ok = false; continue; }
                out.push_back(*n);
            }
            if (ok && out.size() != bodySize) {
                diags_.error(e->range, std::string(key) + " has " + std::to_string(out.size()) + " entries but the loop body has " +
                                           std::to_string(bodySize) + " statements");
                ok = false;
            }
        };
        readList("order", info.order);
        readList("stage", info.stage);
        if (ok && !info.order.empty()) {
            std::set<int64_t> seen(info.order.begin(), info.order.end());
            if (seen.size() != info.order.size() || *seen.rbegin() != static_cast<int64_t>(info.order.size()) - 1) {
                diags_.error(args->keyword("order")->range, "order must be a permutation of 0 .. " + std::to_string(info.order.size() - 1));
                ok = false;
            }
        }
        if (ok && !info.stage.empty()) {
            for (size_t i = 0; i < info.stage.size(); ++i) {
                if (info.stage[i] > info.stages) {
                    diags_.error(args->keyword("stage")->range, "stage " + std::to_string(info.stage[i]) + " exceeds stages = " + std::to_string(info.stages));
                    ok = false;
                    break;
                }
            }
        }
        pipeline = info;
    }

    pushScope();
    ir::VarRef var = declareLoopVars(s)[0];
    vectorizedDepth_ += vectorized;
    ir::Stmt body = checkBlock(s.body);
    vectorizedDepth_ -= vectorized;
    popScope();
    if (!ok) return nullptr;
    if (end->dtype != start->dtype) {
        DType t = arithmeticType(end->dtype, start->dtype);
        end = ir::cast(t, end);
        start = ir::cast(t, start);
    }
    ir::ForKind kind = s.loopKind == ast::LoopKind::Unroll ? ir::ForKind::Unrolled
                       : vectorized                         ? ir::ForKind::Vectorized
                                                            : ir::ForKind::Serial;
    std::shared_ptr<ir::For> loop;
    if (step == 1) {
        loop = std::make_shared<ir::For>(var, start, ir::sub(end, start), kind, body ? body : ir::seq({}), s.range);
    } else {
        // for i in serial(a, b, s): iterate k over ceildiv(b - a, s) and bind i = a + k * s.
        ir::VarRef counter = ir::makeVar(s.vars[0].name + "_iter", DType::Int32, s.vars[0].range);
        ir::Expr count = ir::div(ir::add(ir::sub(end, start), ir::intImm(step - 1)), ir::intImm(step));
        ir::Stmt inner = std::make_shared<ir::LetStmt>(var, ir::add(start, ir::mul(counter, ir::intImm(step))), body ? body : ir::seq({}), s.range);
        loop = std::make_shared<ir::For>(counter, ir::intImm(0), count, kind, inner, s.range);
    }
    loop->pipeline = pipeline;
    loop->pingpong = pingpong;
    loop->overlap = overlap;
    loop->requested = vectorized;
    return loop;
}

// for v0, v1 in persistent([d0, d1], wave, index [, group_size = 8]):
// TileLang's T.Persistent. The block walks the tiles of the domain in
// waves: tile index g = w * wave + index for w = 0, 1, ..., while g is
// below d0 * d1. The tile's coordinates come from g in TileLang's grouped
// order -- the last dimension in groups of G = min(group_size, d_last)
// (which must divide it), so consecutive tiles of a wave share rows of
// the other dimensions: g % G is the column within the group, then the
// other dimensions in order (the last of them fastest), then the group.
// TileLang stops the loop with a break once g passes the end; the tile
// index grows with w, so skipping the body is the same.
ir::Stmt Checker::checkPersistentFor(const ast::For &s) {
    if (parallelDepth_ > 0) {
        diags_.error(s.kindRange, "a persistent loop walks the block's tiles; it cannot appear inside a parallel loop");
        return nullptr;
    }
    std::optional<CallArgs> args = loopArgs(s, {"group_size"});
    if (args && args->positional.size() != 3) {
        diags_.error(s.kindRange, "'persistent' takes the domain, the wave size and the block's index in the wave: "
                                  "persistent([M_TILES, N_TILES], WAVE, INDEX), found " + std::to_string(args->positional.size()) +
                                      " positional arguments");
        args.reset();
    }
    if (!args) return nullptr;
    const ast::Expr &domainArg = *args->positional[0];
    if (domainArg.kind != ast::ExprKind::List) {
        diags_.error(domainArg.range, "the domain of 'persistent' is a list of extents: persistent([M_TILES, N_TILES], WAVE, INDEX)");
        return nullptr;
    }
    const auto &items = static_cast<const ast::List &>(domainArg).items;
    if (items.size() != s.vars.size()) {
        auto count = [](size_t n, const char *what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
        diags_.error(domainArg.range, "the domain has " + count(items.size(), "extent") + " but the loop has " + count(s.vars.size(), "variable"));
        return nullptr;
    }
    bool ok = true;
    std::vector<ir::Expr> domain;
    for (const auto &item : items) {
        std::optional<ir::Expr> e = checkInteger(*item, "persistent domain extent");
        if (!e) { ok = false; continue; }
        if (std::optional<int64_t> c = ir::constInt(*e); c && *c < 1) {
            diags_.error(item->range, "persistent domain extents must be positive, found " + std::to_string(*c));
            ok = false;
        }
        domain.push_back(*e);
    }
    std::optional<ir::Expr> wave = checkInteger(*args->positional[1], "wave size");
    std::optional<ir::Expr> index = checkInteger(*args->positional[2], "index in the wave");
    if (!wave || !index) ok = false;
    if (wave) {
        if (std::optional<int64_t> c = ir::constInt(*wave); c && *c < 1) {
            diags_.error(args->positional[1]->range, "the wave size must be positive, found " + std::to_string(*c));
            ok = false;
        }
    }
    int64_t groupSize = 8;
    if (const ast::Expr *g = args->keyword("group_size")) {
        std::optional<int64_t> c = checkConstInt(*g, "group_size");
        if (!c) ok = false;
        else if (*c < 1) { diags_.error(g->range, "group_size must be positive, found " + std::to_string(*c)); ok = false; }
        else groupSize = *c;
    }
    if (!ok) return nullptr;
    ir::Expr last = domain.back();
    ir::Expr group = ir::intImm(groupSize);
    if (std::optional<int64_t> c = ir::constInt(last)) {
        group = ir::intImm(std::min(groupSize, *c));
        if (*c % std::min(groupSize, *c) != 0) {
            diags_.error(items.back()->range, "the last extent of a persistent domain (" + std::to_string(*c) +
                                                  ") must be divisible by min(group_size, extent) = " + std::to_string(std::min(groupSize, *c)));
            return nullptr;
        }
    } else {
        group = ir::binary(ir::BinaryOp::Min, group, last);
    }

    pushScope();
    std::vector<ir::VarRef> vars = declareLoopVars(s);
    ir::Stmt body = checkBlock(s.body);
    popScope();
    if (!body) body = ir::seq({});

    ir::Expr size = domain[0];
    for (size_t d = 1; d < domain.size(); ++d) size = ir::mul(size, domain[d]);
    ir::VarRef waveVar = ir::makeVar(s.vars[0].name + "_wave", DType::Int32, s.vars[0].range);
    ir::VarRef tile = ir::makeVar(s.vars[0].name + "_tile", DType::Int32, s.vars[0].range);
    // Coordinates from the tile index, the group's column fastest.
    size_t n = domain.size();
    ir::Expr rest = ir::div(tile, group);
    std::vector<ir::Expr> coord(n);
    for (size_t d = n - 1; d-- > 0;) {
        coord[d] = ir::mod(rest, domain[d]);
        rest = ir::div(rest, domain[d]);
    }
    coord[n - 1] = ir::add(ir::mul(rest, group), ir::mod(tile, group));
    for (size_t d = n; d-- > 0;) body = std::make_shared<ir::LetStmt>(vars[d], coord[d], body, s.range);
    body = std::make_shared<ir::IfThenElse>(ir::lt(tile, size), body, nullptr, s.range);
    body = std::make_shared<ir::LetStmt>(tile, ir::add(ir::mul(waveVar, *wave), *index), body, s.range);
    ir::Expr waves = ir::div(ir::add(size, ir::sub(*wave, ir::intImm(1))), *wave);
    return std::make_shared<ir::For>(waveVar, ir::intImm(0), waves, ir::ForKind::Serial, body, s.range);
}

ir::Stmt Checker::checkParallelFor(const ast::For &s) {
    if (parallelDepth_ > 0) {
        diags_.error(s.kindRange, "parallel loops cannot be nested (except as the whole body of one another); give all dimensions to one "
                                  "loop: for i, j in parallel(M, N)");
        return nullptr;
    }
    // TileLang nests T.Parallel loops (`for i in T.Parallel(M): for j in
    // T.Parallel(N):`): a parallel loop that is the whole body of another
    // joins its nest, as `for i, j in parallel(M, N)`.
    std::vector<const ast::For *> levels{&s};
    while (levels.back()->body.size() == 1 && levels.back()->body[0]->kind == ast::StmtKind::For &&
           static_cast<const ast::For &>(*levels.back()->body[0]).loopKind == ast::LoopKind::Parallel)
        levels.push_back(static_cast<const ast::For *>(levels.back()->body[0].get()));
    bool ok = true;
    bool preferAsync = false;
    std::vector<int64_t> extents;
    for (const ast::For *level : levels) {
        size_t before = extents.size();
        for (const ast::Arg &a : level->args) {
            if (a.name == "prefer_async") {
                std::optional<bool> b = checkConstBool(*a.value, "prefer_async");
                if (!b) ok = false;
                else preferAsync = preferAsync || *b;
                continue;
            }
            if (!a.name.empty()) {
                reportUnknownKeyword("parallel", a, {"prefer_async"});
                ok = false;
                continue;
            }
            std::optional<int64_t> n = checkConstInt(*a.value, "parallel loop extent");
            if (!n) { ok = false; continue; }
            if (*n <= 0) {
                diags_.error(a.value->range, "parallel loop extent must be positive, found " + std::to_string(*n));
                ok = false;
                continue;
            }
            extents.push_back(*n);
        }
        size_t count = extents.size() - before;
        if (ok && count != level->vars.size()) {
            diags_.error(level->kindRange, "parallel loop has " + std::to_string(level->vars.size()) + " variable" +
                                               (level->vars.size() == 1 ? "" : "s") + " but " + std::to_string(count) + " extent" +
                                               (count == 1 ? "" : "s"));
            ok = false;
        }
    }
    if (ok && !checkRank(extents.size(), s.kindRange, "parallel loop")) ok = false;
    if (ok) {
        // Loop counters are `int`s in the generated code, and layouts multiply
        // extents together: the whole iteration space must fit in int32.
        std::optional<int64_t> total = checkedProduct(extents);
        if (!total || *total > INT32_MAX) {
            diags_.error(s.kindRange, "parallel loop has " + (total ? std::to_string(*total) : std::string("more than 2^63")) +
                                          " iterations; at most 2^31 - 1 are supported");
            ok = false;
        }
    }
    pushScope();
    std::vector<ir::VarRef> vars;
    for (const ast::For *level : levels) {
        std::vector<ir::VarRef> declared = declareLoopVars(*level);
        vars.insert(vars.end(), declared.begin(), declared.end());
    }
    ++parallelDepth_;
    ir::Stmt body = checkBlock(levels.back()->body);
    --parallelDepth_;
    popScope();
    if (!ok) return nullptr;
    // One For per dimension, outermost first; layout inference treats the nest as one.
    ir::Stmt loop = body ? body : ir::seq({});
    for (size_t i = vars.size(); i-- > 0;) {
        auto f = std::make_shared<ir::For>(vars[i], ir::intImm(0), ir::intImm(extents[i]), ir::ForKind::Parallel, loop, s.range);
        f->preferAsync = preferAsync && i == 0;   // the nest's outermost loop stands for it
        loop = f;
    }
    return loop;
}

ir::Stmt Checker::checkIf(const ast::If &s) {
    std::optional<ir::Expr> cond = checkCondition(*s.cond, "condition of 'if'");
    // A condition known when translating (a const flag) picks its branch
    // here, as TileLang's Python `if` does when it traces the kernel: the
    // other branch is not part of the kernel (not lowered, explained or
    // emitted: an import_source there brings nothing).
    // (Made of constants only: value ranges of run-time values are not folded here.)
    bool constants = cond.has_value();
    if (cond)
        ir::forEachExpr(*cond, [&](const ir::Expr &x) {
            constants = constants && (ir::as<ir::IntImm>(x) || ir::as<ir::FloatImm>(x) || ir::as<ir::Binary>(x) || ir::as<ir::Unary>(x) ||
                                      ir::as<ir::Cast>(x) || ir::as<ir::Select>(x));
        });
    if (std::optional<int64_t> known = constants ? ir::constInt(ir::simplify(*cond)) : std::nullopt) {
        if (*known != 0) return checkBlock(s.thenBody);
        return s.hasElse ? checkBlock(s.elseBody) : nullptr;
    }
    ir::Stmt thenBody = checkBlock(s.thenBody);
    ir::Stmt elseBody = s.hasElse ? checkBlock(s.elseBody) : nullptr;
    if (!cond) return nullptr;
    ir::Stmt branch = std::make_shared<ir::IfThenElse>(*cond, thenBody ? thenBody : ir::seq({}), elseBody, s.range);
    programBranches_.insert(branch.get());
    return branch;
}

// while (cond) { }: the condition is evaluated before every iteration, in
// every thread (TileLang's Python `while` in a kernel, a TIR While). Inside
// a parallel or vectorized loop, whose bodies are one element's
// statements, it has no lowering.
ir::Stmt Checker::checkWhile(const ast::While &s) {
    bool ok = true;
    if (parallelDepth_ > 0 || vectorizedDepth_ > 0) {
        diags_.error(s.range, std::string("a while loop cannot appear inside a ") + (parallelDepth_ > 0 ? "parallel" : "vectorized") + " loop");
        ok = false;
    }
    const DrawBan outer = std::exchange(drawsNotHere_, {"a while loop's condition (evaluated before every iteration)"});
    std::optional<ir::Expr> cond = checkCondition(*s.cond, "condition of 'while'");
    drawsNotHere_ = outer;
    ir::Stmt body = checkBlock(s.body);
    if (!cond || !ok) return nullptr;
    return std::make_shared<ir::While>(*cond, body ? body : ir::seq({}), s.range);
}

// break; / continue;: of the innermost serial, unrolled or while loop, as in
// C (TileLang's Python break and continue in a T.serial or T.unroll loop or
// a while). A parallel loop's iterations are spread over the block's
// threads, a pipelined loop's stages run ahead of the iteration that would
// leave it, and a persistent loop's end is the grid's: none has one place to
// leave from.
ir::Stmt Checker::checkJump(const ast::Stmt &s) {
    bool isBreak = s.kind == ast::StmtKind::Break;
    const std::string word = isBreak ? "break" : "continue";
    if (enclosingLoops_.empty() || !enclosingLoops_.back()) {
        if (!inlining_.empty() && !enclosingLoops_.empty())
            diags_.error(s.range, "'" + word + "' is not inside a loop of fn '" + inlining_.back()->name.name +
                                      "': a fn is inlined at its call, and cannot " + (isBreak ? "leave" : "continue") + " a loop of its caller");
        else
            diags_.error(s.range, "'" + word + "' is not inside a loop");
        return nullptr;
    }
    std::string kind = enclosingLoops_.back();
    if (kind != "serial" && kind != "unroll" && kind != "while") {
        std::string why = kind == "parallel"    ? "its iterations are spread over the block's threads"
                          : kind == "vectorized" ? "its iterations are the lanes of one wide access"
                          : kind == "pipelined"  ? "its stages are issued ahead of the iteration that would leave it"
                                                 : "it walks the grid's tiles in waves";
        diags_.error(s.range, "'" + word + "' cannot " + (isBreak ? "leave" : "skip an iteration of") + " a " + kind + " loop (" + why +
                                  "); only serial, unroll and while loops take it");
        return nullptr;
    }
    return std::make_shared<ir::Jump>(isBreak ? ir::JumpKind::Break : ir::JumpKind::Continue, s.range);
}

ir::Stmt Checker::checkWs(const ast::Ws &s) {
    std::vector<int64_t> roles;
    bool ok = true;
    int64_t groups = kernel_ ? kernel_->threads / 128 : 0;
    for (const auto &r : s.roles) {
        std::optional<int64_t> n = checkConstInt(*r, "warp group index");
        if (!n) { ok = false; continue; }
        if (*n < 0 || *n >= groups) {
            diags_.error(r->range, "warp group " + std::to_string(*n) + " does not exist: the kernel's " +
                                       std::to_string(kernel_ ? kernel_->threads : 0) + " threads form " + std::to_string(groups) +
                                       " warp group" + (groups == 1 ? "" : "s") + " of 128");
            ok = false;
            continue;
        }
        if (std::find(roles.begin(), roles.end(), *n) != roles.end()) {
            diags_.error(r->range, "warp group " + std::to_string(*n) + " is listed twice");
            ok = false;
            continue;
        }
        roles.push_back(*n);
    }
    if (parallelDepth_ > 0) {
        diags_.error(s.range, "ws(...) cannot appear inside a parallel loop");
        ok = false;
    }
    std::sort(roles.begin(), roles.end());
    ir::Stmt body = checkBlock(s.body);
    if (!ok) return nullptr;
    return std::make_shared<ir::WarpSpecialize>(ir::WarpSpecialize::warpsOfGroups(roles), body ? body : ir::seq({}), s.range);
}

} // namespace tilet::sema
