// The parser builds an AST with locations and reports syntax errors in tilet's words.
#include "TestSupport.h"

#include <gtest/gtest.h>

using namespace tilet;

TEST(Parser, BuildsKernelsWithLocations) {
    test::Compiled c;
    test::parseSource(c, "const N = 64;\n"
                         "kernel k(A: f32[N, dyn m], s: f32) grid(1) as (bx) threads(64) {\n"
                         "    for i, j in parallel(4, 8) { A[i, j] = s; }\n"
                         "}\n");
    ASSERT_TRUE(c.ast) << c.diagText.str();
    ASSERT_EQ(c.ast->consts.size(), 1u);
    ASSERT_EQ(c.ast->kernels.size(), 1u);
    const ast::Kernel &k = c.ast->kernels[0];
    EXPECT_EQ(k.name.name, "k");
    ASSERT_EQ(k.params.size(), 2u);
    EXPECT_TRUE(k.params[0].isTensor);
    EXPECT_EQ(k.params[0].dims[1].dynName.name, "m");
    EXPECT_FALSE(k.params[1].isTensor);
    ASSERT_EQ(k.launch.blockNames.size(), 1u);
    ASSERT_EQ(k.body.size(), 1u);
    const ast::Stmt &loop = *k.body[0];
    EXPECT_EQ(loop.kind, ast::StmtKind::For);
    EXPECT_EQ(loop.range.begin.line, 3u);
    EXPECT_EQ(loop.range.begin.col, 5u);
    EXPECT_EQ(static_cast<const ast::For &>(loop).vars.size(), 2u);
}

TEST(Parser, MissingSemicolonPointsPastThePreviousToken) {
    test::Compiled c;
    test::parseSource(c, "const N = 64\nkernel k() grid(1) {}\n");
    EXPECT_FALSE(c.ast);
    EXPECT_EQ(c.diagText.str().substr(0, c.diagText.str().find('\n')), "test.tl:1:13: error: expected ';'");
}

TEST(Parser, ReportsSeveralErrors) {
    test::Compiled c;
    test::parseSource(c, "kernel k() grid(1) {\n  let = 1;\n  for in serial(3) {}\n}\n");
    EXPECT_FALSE(c.ast);
    EXPECT_GE(c.diags.errorCount(), 2u) << c.diagText.str();
}

TEST(Parser, LexicalErrorsAreNamed) {
    test::Compiled c;
    test::parseSource(c, "kernel k() grid(1) { @ }\n/* never closed\n");
    EXPECT_FALSE(c.ast);
    std::string text = c.diagText.str();
    EXPECT_NE(text.find("test.tl:1:22: error: invalid character '@'"), std::string::npos) << text;
    EXPECT_NE(text.find("test.tl:2:1: error: unterminated /* comment"), std::string::npos) << text;
}

TEST(Parser, RejectsBinaryAndInvalidUtf8) {
    test::Compiled c;
    test::parseSource(c, std::string("kernel\0k", 8));
    EXPECT_NE(c.diagText.str().find("test.tl:1:7: error: source file contains a NUL byte"), std::string::npos) << c.diagText.str();
    test::Compiled d;
    test::parseSource(d, "ok\n\xff\xfe");
    EXPECT_NE(d.diagText.str().find("test.tl:2:1: error: source file is not valid UTF-8 (byte 0xff)"), std::string::npos) << d.diagText.str();
}

TEST(Parser, LiteralsAreDecoded) {
    test::Compiled c;
    test::parseSource(c, "const A = 0x1F;\nconst B = 0b101;\nconst C = 1_000_000;\nconst D = 2.5e-3;\n");
    ASSERT_TRUE(c.ast) << c.diagText.str();
    auto intValue = [&](size_t i) { return static_cast<const ast::IntLit &>(*c.ast->consts[i].value).value; };
    EXPECT_EQ(intValue(0), 31u);
    EXPECT_EQ(intValue(1), 5u);
    EXPECT_EQ(intValue(2), 1000000u);
    EXPECT_DOUBLE_EQ(static_cast<const ast::FloatLit &>(*c.ast->consts[3].value).value, 2.5e-3);
}

namespace {
std::string parenthesized(const ast::Expr &e) {
    switch (e.kind) {
    case ast::ExprKind::Name: return static_cast<const ast::Name &>(e).name;
    case ast::ExprKind::IntLit: return std::to_string(static_cast<const ast::IntLit &>(e).value);
    case ast::ExprKind::Unary: {
        auto &u = static_cast<const ast::Unary &>(e);
        return std::string(ast::unaryOpSpelling(u.op)) + parenthesized(*u.operand);
    }
    case ast::ExprKind::Binary: {
        auto &b = static_cast<const ast::Binary &>(e);
        return "(" + parenthesized(*b.lhs) + " " + ast::binaryOpSpelling(b.op) + " " + parenthesized(*b.rhs) + ")";
    }
    case ast::ExprKind::Cond: {
        auto &c = static_cast<const ast::Cond &>(e);
        return "(" + parenthesized(*c.cond) + " ? " + parenthesized(*c.thenValue) + " : " + parenthesized(*c.elseValue) + ")";
    }
    case ast::ExprKind::Index: return parenthesized(*static_cast<const ast::Index &>(e).base) + "[..]";
    default: return "?";
    }
}

std::string parseExpr(const std::string &text) {
    test::Compiled c;
    test::parseSource(c, "const X = " + text + ";\n");
    if (!c.ast) return "error: " + c.diagText.str();
    return parenthesized(*c.ast->consts.at(0).value);
}
} // namespace

TEST(Parser, OperatorPrecedenceAndAssociativityAreC) {
    EXPECT_EQ(parseExpr("a + b * c - d"), "((a + (b * c)) - d)");
    EXPECT_EQ(parseExpr("a - b - c"), "((a - b) - c)");
    EXPECT_EQ(parseExpr("a / b * c % d"), "(((a / b) * c) % d)");
    EXPECT_EQ(parseExpr("1 << 2 + 3"), "(1 << (2 + 3))");
    EXPECT_EQ(parseExpr("a < b == c > d"), "((a < b) == (c > d))");
    EXPECT_EQ(parseExpr("a & b ^ c | d"), "(((a & b) ^ c) | d)");
    EXPECT_EQ(parseExpr("a || b && c"), "(a || (b && c))");
    EXPECT_EQ(parseExpr("-a * !b"), "(-a * !b)");
    EXPECT_EQ(parseExpr("a ? b : c ? d : e"), "(a ? b : (c ? d : e))");
    EXPECT_EQ(parseExpr("a + b ? c * d : e"), "((a + b) ? (c * d) : e)");
    EXPECT_EQ(parseExpr("x[1] * 2 + y[2]"), "((x[..] * 2) + y[..])");
}

// ---------------------------------------------------------------- nesting and brackets (Structure.cpp)

namespace {
// The first line of the diagnostics of parsing `text` with `maxNesting`, and whether it parsed.
std::pair<bool, std::string> parseWithLimit(const std::string &text, unsigned maxNesting) {
    test::Compiled c;
    FileId f = c.sources.add("test.tl", text);
    c.ast = parseFile(f, c.sources, c.diags, maxNesting);
    std::string all = c.diagText.str();
    return {c.ast.has_value(), all.substr(0, all.find('\n'))};
}
std::string repeat(const std::string &s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
}
} // namespace

TEST(Nesting, BracketsUpToTheLimitParse) {
    EXPECT_TRUE(parseWithLimit("const X = " + repeat("(", 8) + "1" + repeat(")", 8) + ";\n", 8).first);
    auto [ok, first] = parseWithLimit("const X = " + repeat("(", 9) + "1" + repeat(")", 9) + ";\n", 8);
    EXPECT_FALSE(ok);
    // The ninth '(' is column 11 + 8.
    EXPECT_EQ(first, "test.tl:1:19: error: bracket nesting level exceeded maximum of 8");
}

TEST(Nesting, TheLimitNamesItsOption) {
    test::Compiled c;
    FileId f = c.sources.add("test.tl", "const X = " + repeat("[", 300) + "\n");
    c.ast = parseFile(f, c.sources, c.diags);
    EXPECT_FALSE(c.ast);
    EXPECT_EQ(c.diags.errorCount(), 1u);
    EXPECT_NE(c.diagText.str().find("error: bracket nesting level exceeded maximum of 256"), std::string::npos) << c.diagText.str();
    EXPECT_NE(c.diagText.str().find("note: use --max-nesting=N to increase the maximum nesting level"), std::string::npos);
}

TEST(Nesting, FlatOperatorChainsCount) {
    // 1+1+...: a left-leaning tree as deep as the chain; commas and ';' end a chain.
    EXPECT_TRUE(parseWithLimit("const X = 1" + repeat("+1", 8) + ";\nconst Y = 1" + repeat("+1", 8) + ";\n", 8).first);
    EXPECT_EQ(parseWithLimit("const X = 1" + repeat("+1", 9) + ";\n", 8).second,
              "test.tl:1:28: error: expression nesting level exceeded maximum of 8");
    EXPECT_TRUE(parseWithLimit("const X = max(1" + repeat("+1", 6) + ", 1" + repeat("+1", 6) + ");\n", 8).first);
    EXPECT_EQ(parseWithLimit("const X = " + repeat("-", 9) + "1;\n", 8).second,
              "test.tl:1:19: error: expression nesting level exceeded maximum of 8");
    EXPECT_EQ(parseWithLimit("const X = " + repeat("true ? ", 9) + "1" + repeat(" : 2", 9) + ";\n", 8).second,
              "test.tl:1:72: error: expression nesting level exceeded maximum of 8");
}

TEST(Nesting, BindingsAndElseIfChainsCount) {
    // A binding scopes over the rest of its block; `else if` nests the next if.
    std::string lets;
    for (int i = 0; i < 7; ++i) lets += "let v" + std::to_string(i) + " = 1;\n";
    std::string kernel = "kernel k() grid(1) threads(32) {\n";
    EXPECT_TRUE(parseWithLimit(kernel + lets + "}\n", 8).first);
    EXPECT_EQ(parseWithLimit(kernel + lets + "let w = 1;\n}\n", 8).second,
              "test.tl:9:1: error: statement nesting level exceeded maximum of 8");
    EXPECT_EQ(parseWithLimit(kernel + "if (true) {}" + repeat(" else if (true) {}", 8) + "\n}\n", 8).second,
              "test.tl:2:130: error: bracket nesting level exceeded maximum of 8");
}

TEST(Brackets, UnclosedBracketIsReportedWhereTheExpressionEnds) {
    test::Compiled c;
    test::parseSource(c, "kernel k(A: f32[4]) grid(1) threads(32) {\n    A[0 = 1.0;\n}\n");
    EXPECT_FALSE(c.ast);
    EXPECT_EQ(c.diags.errorCount(), 1u);
    EXPECT_NE(c.diagText.str().find("test.tl:2:14: error: expected ']' before ';'"), std::string::npos) << c.diagText.str();
    EXPECT_NE(c.diagText.str().find("test.tl:2:6: note: to match this '['"), std::string::npos) << c.diagText.str();
}

TEST(Brackets, MismatchedAndExtraneousClosers) {
    EXPECT_EQ(parseWithLimit("const X = max(1, 2];\n", 256).second, "test.tl:1:19: error: expected ')' before ']'");
    EXPECT_EQ(parseWithLimit("const X = 1;\n}\n", 256).second, "test.tl:2:1: error: extraneous closing brace ('}')");
    EXPECT_EQ(parseWithLimit("kernel k() grid(1) threads(32) { f(1)); }\n", 256).second,
              "test.tl:1:38: error: extraneous ')' with no matching '('");
    EXPECT_EQ(parseWithLimit("kernel k() grid(1) threads(32) {\n  if (true {\n  }\n}\n", 256).second,
              "test.tl:2:12: error: expected ')' before '{'");
}

TEST(Brackets, UnclosedAtEndOfFile) {
    EXPECT_EQ(parseWithLimit("kernel k() grid(1) threads(32) {\n  if (true) {\n", 256).second,
              "test.tl:3:1: error: expected '}' before end of file (2 blocks still open)");
    test::Compiled c;
    test::parseSource(c, "const X = (1 + (2\n");
    EXPECT_EQ(c.diags.errorCount(), 1u);
    EXPECT_NE(c.diagText.str().find("test.tl:2:1: error: expected ')' before end of file"), std::string::npos) << c.diagText.str();
    EXPECT_NE(c.diagText.str().find("test.tl:1:16: note: to match this '('"), std::string::npos) << c.diagText.str();
}
