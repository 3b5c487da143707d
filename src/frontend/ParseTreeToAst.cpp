// ParseTreeToAst.cpp -- builds the owned AST from ANTLR's parse tree.
//
// The parse tree is known to be free of syntax errors when this runs (Parser.cpp
// stops first), so every required child is present; literal values are decoded
// here (digit separators, hex and binary integers, string escapes).
#include "frontend/ParseTreeToAst.h"

#include "support/InternalError.h"

#include <charconv>
#include <functional>
#include <typeinfo>

namespace tilet {

using grammar::TileParser;

namespace {

// `ctx` as the labeled alternative T when it is that one. The generated
// alternatives are leaf classes, so comparing the dynamic type is exact; a
// dynamic_cast walks the class hierarchy and compares type names on the way,
// for every alternative tried (a sixth of the parse-tree walk's time).
template <class T, class Context> T *alternative(Context &ctx) { return typeid(ctx) == typeid(T) ? static_cast<T *>(&ctx) : nullptr; }

// Decodes an INT token. Sets `overflow` when the value does not fit in 64 bits.
uint64_t parseInt(const std::string &text, bool &overflow) {
    overflow = false;
    unsigned base = 10;
    size_t i = 0;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) { base = 16; i = 2; }
    else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) { base = 2; i = 2; }
    uint64_t value = 0;
    for (; i < text.size(); ++i) {
        char c = text[i];
        if (c == '_') continue;
        unsigned digit = c >= '0' && c <= '9' ? unsigned(c - '0') : unsigned((c | 0x20) - 'a' + 10);
        if (value > (UINT64_MAX - digit) / base) overflow = true;
        value = value * base + digit;
    }
    return value;
}

double parseFloat(const std::string &text) {
    std::string digits;
    for (char c : text) {
        if (c != '_') digits += c;
    }
    double value = 0;
    // from_chars is locale-independent, unlike strtod.
    std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return value;
}

std::string unescape(const std::string &quoted) {
    std::string out;
    for (size_t i = 1; i + 1 < quoted.size(); ++i) {
        char c = quoted[i];
        if (c == '\\' && i + 2 < quoted.size()) {
            char n = quoted[++i];
            switch (n) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            default: out += n; break;
            }
        } else {
            out += c;
        }
    }
    return out;
}

ast::BinaryOp binaryOpFor(size_t tokenType) {
    switch (tokenType) {
    case TileParser::STAR: return ast::BinaryOp::Mul;
    case TileParser::SLASH: return ast::BinaryOp::Div;
    case TileParser::PERCENT: return ast::BinaryOp::Mod;
    case TileParser::PLUS: return ast::BinaryOp::Add;
    case TileParser::MINUS: return ast::BinaryOp::Sub;
    case TileParser::SHL: return ast::BinaryOp::Shl;
    case TileParser::SHR: return ast::BinaryOp::Shr;
    case TileParser::LT: return ast::BinaryOp::Lt;
    case TileParser::LE: return ast::BinaryOp::Le;
    case TileParser::GT: return ast::BinaryOp::Gt;
    case TileParser::GE: return ast::BinaryOp::Ge;
    case TileParser::EQ: return ast::BinaryOp::Eq;
    case TileParser::NE: return ast::BinaryOp::Ne;
    case TileParser::AMP: return ast::BinaryOp::BitAnd;
    case TileParser::CARET: return ast::BinaryOp::BitXor;
    case TileParser::PIPE: return ast::BinaryOp::BitOr;
    case TileParser::AND: return ast::BinaryOp::And;
    case TileParser::OR: return ast::BinaryOp::Or;
    }
    TILET_INTERNAL_ERROR("unexpected binary operator token " << tokenType);
}

} // namespace

SourceRange ParseTreeToAst::rangeOf(antlr4::Token *token) const {
    SourceLoc begin{file_, static_cast<uint32_t>(token->getLine()),
                    static_cast<uint32_t>(token->getCharPositionInLine() + 1)};
    SourceLoc end = begin;
    uint32_t width = countCodePoints(token->getText());
    if (width > 1) end.col += width - 1;
    return {begin, end};
}

SourceRange ParseTreeToAst::rangeOf(antlr4::ParserRuleContext *ctx) const {
    SourceRange r = rangeOf(ctx->getStart());
    antlr4::Token *stop = ctx->getStop();
    if (stop && stop->getTokenIndex() >= ctx->getStart()->getTokenIndex()) r.end = rangeOf(stop).end;
    return r;
}

ast::Ident ParseTreeToAst::ident(antlr4::tree::TerminalNode *node) const {
    return ast::Ident{node->getText(), rangeOf(node)};
}

// ------------------------------------------------------------------ declarations

ast::File ParseTreeToAst::transformFile(TileParser::FileContext &ctx) {
    ast::File file;
    file.id = file_;
    for (TileParser::TopDeclContext *decl : ctx.topDecl()) {
        if (auto *imp = decl->importDecl()) {
            file.imports.push_back(ast::Import{unescape(imp->STRING()->getText()), rangeOf(imp->STRING())});
        } else if (auto *target = decl->targetDecl()) {
            file.targets.push_back(ast::TargetDecl{target->IDENT()->getText(), rangeOf(target->IDENT())});
        } else if (auto *c = decl->constDecl()) {
            file.consts.push_back(transformConst(*c));
        } else if (auto *f = decl->fnDecl()) {
            ast::FnDecl fn;
            fn.name = ident(f->IDENT());
            if (f->identList())
                for (antlr4::tree::TerminalNode *p : f->identList()->IDENT()) fn.params.push_back(ident(p));
            fn.body = transformBlock(*f->block());
            fn.range = rangeOf(f);
            file.fns.push_back(std::move(fn));
        } else if (auto *k = decl->kernelDecl()) {
            file.kernels.push_back(transformKernel(*k));
        }
    }
    return file;
}

ast::ConstDecl ParseTreeToAst::transformConst(TileParser::ConstDeclContext &ctx) {
    ast::ConstDecl decl;
    decl.name = ident(ctx.IDENT());
    if (ctx.typeRef()) {
        decl.type = transformTypeRef(*ctx.typeRef(), decl.typeName);
        decl.typeRange = rangeOf(ctx.typeRef());
    }
    decl.value = transformExpr(*ctx.expr());
    decl.range = rangeOf(&ctx);
    return decl;
}

ast::Kernel ParseTreeToAst::transformKernel(TileParser::KernelDeclContext &ctx) {
    ast::Kernel kernel;
    kernel.name = ident(ctx.IDENT());
    if (ctx.paramList()) {
        for (TileParser::ParamContext *p : ctx.paramList()->param()) kernel.params.push_back(transformParam(*p));
    }
    for (TileParser::LaunchClauseContext *clause : ctx.launchClause()) transformLaunchClause(*clause, kernel.launch);
    kernel.body = transformBlock(*ctx.block());
    kernel.range = rangeOf(&ctx);
    kernel.headerRange = SourceRange::span(rangeOf(ctx.KERNEL()), rangeOf(ctx.RPAREN()));
    return kernel;
}

ast::Param ParseTreeToAst::transformParam(TileParser::ParamContext &ctx) {
    ast::Param param;
    param.name = ident(ctx.IDENT());
    param.dtype = transformTypeRef(*ctx.typeRef(), param.typeName).value_or(DType::F32);
    param.typeRange = rangeOf(ctx.typeRef());
    param.range = rangeOf(&ctx);
    if (ctx.dimList()) {
        param.isTensor = true;
        for (TileParser::DimContext *d : ctx.dimList()->dim()) {
            ast::Dim dim;
            dim.range = rangeOf(d);
            if (auto *dyn = alternative<TileParser::DynDimContext>(*d)) {
                dim.dynName = ident(dyn->IDENT());
                if (dyn->expr()) dim.divisor = transformExpr(*dyn->expr());
            } else {
                dim.value = transformExpr(*static_cast<TileParser::ExprDimContext *>(d)->expr());
            }
            param.dims.push_back(std::move(dim));
        }
    }
    return param;
}

void ParseTreeToAst::transformLaunchClause(TileParser::LaunchClauseContext &ctx, ast::Launch &launch) {
    if (auto *grid = alternative<TileParser::GridClauseContext>(ctx)) {
        launch.grid = transformExprList(grid->exprList());
        launch.gridRange = rangeOf(grid);
        if (grid->identList()) {
            for (auto *name : grid->identList()->IDENT()) launch.blockNames.push_back(ident(name));
        }
    } else if (auto *threads = alternative<TileParser::ThreadsClauseContext>(ctx)) {
        launch.threads = transformExprList(threads->exprList());
        launch.threadsRange = rangeOf(threads);
        if (threads->identList()) {
            for (auto *name : threads->identList()->IDENT()) launch.threadNames.push_back(ident(name));
        }
    } else if (auto *cluster = alternative<TileParser::ClusterClauseContext>(ctx)) {
        launch.cluster = transformExprList(cluster->exprList());
        launch.clusterRange = rangeOf(cluster);
    } else if (auto *minBlocks = alternative<TileParser::MinBlocksClauseContext>(ctx)) {
        launch.minBlocksPerSm = transformExpr(*minBlocks->expr());
    }
}

// ------------------------------------------------------------------ statements

ast::StmtList ParseTreeToAst::transformBlock(TileParser::BlockContext &ctx) {
    ast::StmtList body;
    for (TileParser::StmtContext *s : ctx.stmt()) {
        if (ast::StmtPtr stmt = transformStmt(*s)) body.push_back(std::move(stmt));
    }
    return body;
}

ast::StmtPtr ParseTreeToAst::transformStmt(TileParser::StmtContext &ctx) {
    SourceRange range = rangeOf(&ctx);
    if (auto *let = alternative<TileParser::LetStmtContext>(ctx)) {
        auto s = std::make_unique<ast::Let>(range);
        s->name = ident(let->IDENT());
        if (let->typeRef()) {
            s->type = transformTypeRef(*let->typeRef(), s->typeName);
            s->typeRange = rangeOf(let->typeRef());
        }
        s->init = transformExpr(*let->expr());
        return s;
    }
    if (auto *var = alternative<TileParser::VarStmtContext>(ctx)) {
        auto s = std::make_unique<ast::Var>(range);
        s->name = ident(var->IDENT());
        s->type = transformTypeRef(*var->typeRef(), s->typeName).value_or(DType::F32);
        s->typeRange = rangeOf(var->typeRef());
        if (var->expr()) s->init = transformExpr(*var->expr());
        return s;
    }
    if (auto *exprStmt = alternative<TileParser::ExprStmtContext>(ctx)) {
        std::vector<TileParser::ExprContext *> parts = exprStmt->expr();
        ast::ExprPtr first = transformExpr(*parts[0]);
        if (!exprStmt->assignOp()) {
            if (first->kind != ast::ExprKind::Call) {
                diags_.error(first->range, "this expression is not a statement; only calls and assignments are");
                return nullptr;
            }
            return std::make_unique<ast::CallStmt>(range, std::unique_ptr<ast::Call>(static_cast<ast::Call *>(first.release())));
        }
        auto s = std::make_unique<ast::Assign>(range);
        s->targetRange = first->range;
        // The left-hand side is a name, or an element of a named buffer.
        if (first->kind == ast::ExprKind::Name) {
            s->target = {static_cast<ast::Name &>(*first).name, first->range};
        } else if (first->kind == ast::ExprKind::Index && static_cast<ast::Index &>(*first).base->kind == ast::ExprKind::Name) {
            auto &ix = static_cast<ast::Index &>(*first);
            s->target = {static_cast<ast::Name &>(*ix.base).name, ix.base->range};
            for (ast::IndexItem &item : ix.items) {
                if (item.isSlice()) {
                    diags_.error(item.range, "a slice cannot be assigned; use fill or copy for a region");
                    return nullptr;
                }
                s->indices.push_back(std::move(item.begin));
            }
        } else {
            diags_.error(first->range, "this expression cannot be assigned to");
            return nullptr;
        }
        TileParser::AssignOpContext *op = exprStmt->assignOp();
        if (op->PLUS_ASSIGN()) s->op = ast::AssignOp::Add;
        else if (op->MINUS_ASSIGN()) s->op = ast::AssignOp::Sub;
        else if (op->STAR_ASSIGN()) s->op = ast::AssignOp::Mul;
        else if (op->SLASH_ASSIGN()) s->op = ast::AssignOp::Div;
        s->value = transformExpr(*parts[1]);
        return s;
    }
    if (auto *loop = alternative<TileParser::ForStmtContext>(ctx)) {
        auto s = std::make_unique<ast::For>(range);
        for (auto *name : loop->identList()->IDENT()) s->vars.push_back(ident(name));
        TileParser::LoopKindContext *kind = loop->loopKind();
        if (kind->UNROLL()) s->loopKind = ast::LoopKind::Unroll;
        else if (kind->PARALLEL()) s->loopKind = ast::LoopKind::Parallel;
        else if (kind->PIPELINED()) s->loopKind = ast::LoopKind::Pipelined;
        else if (kind->VECTORIZED()) s->loopKind = ast::LoopKind::Vectorized;
        else if (kind->PERSISTENT()) s->loopKind = ast::LoopKind::Persistent;
        s->kindRange = rangeOf(kind);
        s->args = transformArgs(loop->argList());
        s->body = transformBlock(*loop->block());
        return s;
    }
    if (auto *ifAlt = alternative<TileParser::IfStmtAltContext>(ctx)) return transformIf(*ifAlt->ifStmt());
    if (auto *loop = alternative<TileParser::WhileStmtContext>(ctx)) {
        auto s = std::make_unique<ast::While>(range);
        s->cond = transformExpr(*loop->expr());
        s->body = transformBlock(*loop->block());
        return s;
    }
    if (alternative<TileParser::BreakStmtContext>(ctx)) return std::make_unique<ast::Jump>(ast::StmtKind::Break, range);
    if (alternative<TileParser::ContinueStmtContext>(ctx)) return std::make_unique<ast::Jump>(ast::StmtKind::Continue, range);
    if (auto *ws = alternative<TileParser::WsStmtContext>(ctx)) {
        auto s = std::make_unique<ast::Ws>(range);
        s->roles = transformExprList(ws->exprList());
        s->body = transformBlock(*ws->block());
        return s;
    }
    TILET_INTERNAL_ERROR("unhandled statement alternative");
}

ast::StmtPtr ParseTreeToAst::transformIf(TileParser::IfStmtContext &ctx) {
    auto s = std::make_unique<ast::If>(rangeOf(&ctx));
    s->cond = transformExpr(*ctx.expr());
    std::vector<TileParser::BlockContext *> blocks = ctx.block();
    s->thenBody = transformBlock(*blocks[0]);
    if (ctx.ELSE()) {
        s->hasElse = true;
        if (ctx.ifStmt()) s->elseBody.push_back(transformIf(*ctx.ifStmt()));
        else s->elseBody = transformBlock(*blocks[1]);
    }
    return s;
}

// ------------------------------------------------------------------ expressions

ast::ExprPtr ParseTreeToAst::transformExpr(TileParser::ExprContext &ctx) {
    ast::ExprPtr cond = transformBinary(*ctx.binaryExpr());
    if (!ctx.QUESTION()) return cond;
    std::vector<TileParser::ExprContext *> parts = ctx.expr();
    return std::make_unique<ast::Cond>(rangeOf(&ctx), std::move(cond), transformExpr(*parts[0]), transformExpr(*parts[1]));
}

namespace {
// C's binary precedence levels; larger binds tighter. All are left-associative.
int precedence(ast::BinaryOp op) {
    switch (op) {
    case ast::BinaryOp::Mul:
    case ast::BinaryOp::Div:
    case ast::BinaryOp::Mod: return 10;
    case ast::BinaryOp::Add:
    case ast::BinaryOp::Sub: return 9;
    case ast::BinaryOp::Shl:
    case ast::BinaryOp::Shr: return 8;
    case ast::BinaryOp::Lt:
    case ast::BinaryOp::Le:
    case ast::BinaryOp::Gt:
    case ast::BinaryOp::Ge: return 7;
    case ast::BinaryOp::Eq:
    case ast::BinaryOp::Ne: return 6;
    case ast::BinaryOp::BitAnd: return 5;
    case ast::BinaryOp::BitXor: return 4;
    case ast::BinaryOp::BitOr: return 3;
    case ast::BinaryOp::And: return 2;
    case ast::BinaryOp::Or: return 1;
    }
    return 0;
}
} // namespace

ast::ExprPtr ParseTreeToAst::transformBinary(TileParser::BinaryExprContext &ctx) {
    // Precedence climbing over the flat list "u0 op1 u1 op2 u2 ...".
    std::vector<ast::ExprPtr> operands;
    for (TileParser::UnaryExprContext *u : ctx.unaryExpr()) operands.push_back(transformUnary(*u));
    std::vector<TileParser::BinaryOpContext *> ops = ctx.binaryOp();
    size_t next = 0;
    std::function<ast::ExprPtr(ast::ExprPtr, int)> climb = [&](ast::ExprPtr lhs, int minPrec) {
        while (next < ops.size()) {
            ast::BinaryOp op = binaryOpFor(ops[next]->getStart()->getType());
            int prec = precedence(op);
            if (prec < minPrec) break;
            SourceRange opRange = rangeOf(ops[next]);
            ++next;
            ast::ExprPtr rhs = std::move(operands[next]);
            while (next < ops.size() && precedence(binaryOpFor(ops[next]->getStart()->getType())) > prec)
                rhs = climb(std::move(rhs), prec + 1);
            SourceRange range = SourceRange::span(lhs->range, rhs->range);
            lhs = std::make_unique<ast::Binary>(range, op, std::move(lhs), std::move(rhs), opRange);
        }
        return lhs;
    };
    return climb(std::move(operands[0]), 0);
}

ast::ExprPtr ParseTreeToAst::transformUnary(TileParser::UnaryExprContext &ctx) {
    if (TileParser::PowerExprContext *p = ctx.powerExpr()) {
        ast::ExprPtr base = transformPostfix(*p->postfixExpr());
        if (!p->STARSTAR()) return base;
        // a ** b: an integer power when a is an integer and b a constant >= 0,
        // else pow(a, b) (docs/language.md section 7); sema tells them apart.
        std::vector<ast::Arg> args(2);
        args[1].value = transformUnary(*p->unaryExpr());
        SourceRange range = SourceRange::span(base->range, args[1].value->range);
        args[0].value = std::move(base);
        return std::make_unique<ast::Call>(range, "**", rangeOf(p->STARSTAR()), true, std::move(args));
    }
    ast::UnaryOp op = ctx.op->getType() == TileParser::MINUS ? ast::UnaryOp::Neg
                    : ctx.op->getType() == TileParser::NOT   ? ast::UnaryOp::Not
                                                             : ast::UnaryOp::BitNot;
    return std::make_unique<ast::Unary>(rangeOf(&ctx), op, transformUnary(*ctx.unaryExpr()));
}

ast::ExprPtr ParseTreeToAst::transformPostfix(TileParser::PostfixExprContext &ctx) {
    ast::ExprPtr e = transformPrimary(*ctx.primary());
    std::vector<TileParser::IndexListContext *> lists = ctx.indexList();
    std::vector<antlr4::tree::TerminalNode *> closes = ctx.RBRACK();
    for (size_t k = 0; k < lists.size(); ++k) {
        std::vector<ast::IndexItem> items;
        for (TileParser::IndexItemContext *item : lists[k]->indexItem()) {
            std::vector<TileParser::ExprContext *> parts = item->expr();
            ast::IndexItem it;
            it.range = rangeOf(item);
            antlr4::tree::TerminalNode *colon = item->COLON();
            size_t colonAt = colon ? colon->getSymbol()->getTokenIndex() : SIZE_MAX;
            TileParser::ExprContext *begin = nullptr, *end = nullptr;
            for (TileParser::ExprContext *p : parts) (p->getStart()->getTokenIndex() < colonAt ? begin : end) = p;
            it.begin = begin ? transformExpr(*begin) : std::make_unique<ast::IntLit>(rangeOf(colon), 0, false);
            if (end) it.end = transformExpr(*end);
            it.openEnd = colon && !end;
            items.push_back(std::move(it));
        }
        SourceRange range = SourceRange::span(e->range, rangeOf(closes[k]));
        e = std::make_unique<ast::Index>(range, std::move(e), std::move(items));
    }
    return e;
}

ast::ExprPtr ParseTreeToAst::transformPrimary(TileParser::PrimaryContext &ctx) {
    SourceRange range = rangeOf(&ctx);
    if (auto *i = alternative<TileParser::IntLitContext>(ctx)) {
        bool overflow = false;
        uint64_t value = parseInt(i->INT()->getText(), overflow);
        return std::make_unique<ast::IntLit>(range, value, overflow);
    }
    if (auto *f = alternative<TileParser::FloatLitContext>(ctx))
        return std::make_unique<ast::FloatLit>(range, parseFloat(f->FLOAT()->getText()));
    if (alternative<TileParser::TrueLitContext>(ctx)) return std::make_unique<ast::BoolLit>(range, true);
    if (alternative<TileParser::FalseLitContext>(ctx)) return std::make_unique<ast::BoolLit>(range, false);
    if (alternative<TileParser::InfLitContext>(ctx)) return std::make_unique<ast::InfLit>(range);
    if (auto *s = alternative<TileParser::StringLitContext>(ctx))
        return std::make_unique<ast::StringLit>(range, unescape(s->STRING()->getText()));
    if (auto *call = alternative<TileParser::CallPrimaryContext>(ctx)) return transformCall(*call->call());
    if (auto *name = alternative<TileParser::NamePrimaryContext>(ctx))
        return std::make_unique<ast::Name>(range, name->IDENT()->getText());
    if (auto *dt = alternative<TileParser::DTypePrimaryContext>(ctx))
        return std::make_unique<ast::DTypeRef>(range, transformDType(*dt->dtype()));
    if (auto *paren = alternative<TileParser::ParenPrimaryContext>(ctx)) {
        ast::ExprPtr inner = transformExpr(*paren->expr());
        inner->range = range;   // include the parentheses, as clang does
        return inner;
    }
    if (auto *list = alternative<TileParser::ListPrimaryContext>(ctx))
        return std::make_unique<ast::List>(range, transformExprList(list->exprList()));
    TILET_INTERNAL_ERROR("unhandled primary alternative");
}

std::unique_ptr<ast::Call> ParseTreeToAst::transformCall(TileParser::CallContext &ctx) {
    TileParser::CalleeContext *callee = ctx.callee();
    return std::make_unique<ast::Call>(rangeOf(&ctx), callee->getText(), rangeOf(callee), callee->builtin() != nullptr,
                                       transformArgs(ctx.argList()));
}

std::vector<ast::Arg> ParseTreeToAst::transformArgs(TileParser::ArgListContext *ctx) {
    std::vector<ast::Arg> args;
    if (!ctx) return args;
    for (TileParser::ArgContext *a : ctx->arg()) {
        ast::Arg arg;
        if (TileParser::ArgNameContext *n = a->argName()) {
            antlr4::tree::TerminalNode *token = n->IDENT() ? n->IDENT() : n->CLEAR();
            arg.name = token->getText();
            arg.nameRange = rangeOf(token);
        }
        if (TileParser::ExprContext *e = a->expr()) {
            arg.value = transformExpr(*e);
        } else {
            antlr4::tree::TerminalNode *word = a->MIN() ? a->MIN() : a->MAX();
            arg.value = std::make_unique<ast::Name>(rangeOf(word), word->getText());
        }
        args.push_back(std::move(arg));
    }
    return args;
}

std::vector<ast::ExprPtr> ParseTreeToAst::transformExprList(TileParser::ExprListContext *ctx) {
    std::vector<ast::ExprPtr> out;
    if (!ctx) return out;
    for (TileParser::ExprContext *e : ctx->expr()) out.push_back(transformExpr(*e));
    return out;
}

std::optional<DType> ParseTreeToAst::transformTypeRef(TileParser::TypeRefContext &ctx, std::string &name) {
    if (ctx.dtype()) return transformDType(*ctx.dtype());
    name = ctx.IDENT()->getText();
    return std::nullopt;
}

DType ParseTreeToAst::transformDType(TileParser::DtypeContext &ctx) {
    std::optional<DType> t = dtypeFromName(ctx.getText());
    TILET_ASSERT(t.has_value(), "grammar dtype '" << ctx.getText() << "' is missing from TILET_DTYPES");
    return *t;
}

} // namespace tilet
