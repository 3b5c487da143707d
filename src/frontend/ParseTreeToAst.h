// ParseTreeToAst.h -- the one layer that reads ANTLR parse trees (private to
// src/frontend). One transform method per grammar rule, each returning AST.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include "TileParser.h"

namespace tilet {

class ParseTreeToAst {
public:
    // Errors the grammar leaves to this layer (what may be assigned, which
    // expressions may stand as statements) are reported to `diags`.
    ParseTreeToAst(FileId file, DiagnosticEngine &diags) : file_(file), diags_(diags) {}

    ast::File transformFile(grammar::TileParser::FileContext &ctx);

private:
    // ranges
    SourceRange rangeOf(antlr4::Token *token) const;
    SourceRange rangeOf(antlr4::ParserRuleContext *ctx) const;
    SourceRange rangeOf(antlr4::tree::TerminalNode *node) const { return rangeOf(node->getSymbol()); }
    ast::Ident ident(antlr4::tree::TerminalNode *node) const;

    // declarations
    ast::ConstDecl transformConst(grammar::TileParser::ConstDeclContext &ctx);
    ast::Kernel transformKernel(grammar::TileParser::KernelDeclContext &ctx);
    ast::Param transformParam(grammar::TileParser::ParamContext &ctx);
    void transformLaunchClause(grammar::TileParser::LaunchClauseContext &ctx, ast::Launch &launch);

    // statements
    ast::StmtList transformBlock(grammar::TileParser::BlockContext &ctx);
    ast::StmtPtr transformStmt(grammar::TileParser::StmtContext &ctx);
    ast::StmtPtr transformIf(grammar::TileParser::IfStmtContext &ctx);

    // expressions
    ast::ExprPtr transformExpr(grammar::TileParser::ExprContext &ctx);
    ast::ExprPtr transformBinary(grammar::TileParser::BinaryExprContext &ctx);
    ast::ExprPtr transformUnary(grammar::TileParser::UnaryExprContext &ctx);
    ast::ExprPtr transformPostfix(grammar::TileParser::PostfixExprContext &ctx);
    ast::ExprPtr transformPrimary(grammar::TileParser::PrimaryContext &ctx);
    std::unique_ptr<ast::Call> transformCall(grammar::TileParser::CallContext &ctx);
    std::vector<ast::Arg> transformArgs(grammar::TileParser::ArgListContext *ctx);
    std::vector<ast::ExprPtr> transformExprList(grammar::TileParser::ExprListContext *ctx);
    DType transformDType(grammar::TileParser::DtypeContext &ctx);
    // A dtype keyword, or nullopt with `name` set to a dtype constant's name.
    std::optional<DType> transformTypeRef(grammar::TileParser::TypeRefContext &ctx, std::string &name);

    FileId file_;
    DiagnosticEngine &diags_;
};

} // namespace tilet
