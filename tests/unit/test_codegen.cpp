// Printer support: legal, unique, deterministic names; atomic outputs; templates.
#include "codegen/CSyntax.h"
#include "codegen/Emitter.h"
#include "passes/Explain.h"
#include "support/Files.h"
#include "support/InternalError.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace tilet;

TEST(NameTable, KeepsLegalNamesAndRenamesReservedOnes) {
    NameTable names;
    ir::VarRef a = ir::makeVar("row"), b = ir::makeVar("row"), c = ir::makeVar("int"), d = ir::makeVar("__x");
    EXPECT_EQ(names.var(a.get()), "row");
    EXPECT_EQ(names.var(b.get()), "row_1");   // another variable, same name: unique
    EXPECT_EQ(names.var(a.get()), "row");     // stable
    EXPECT_EQ(names.var(c.get()), "int_1");   // a C++ keyword
    EXPECT_EQ(names.var(d.get()), "u__x");    // reserved to the implementation
}

TEST(NameTable, SiblingScopesReuseNames) {
    NameTable names;
    ir::VarRef outer = ir::makeVar("i"), first = ir::makeVar("j"), second = ir::makeVar("j"), inner = ir::makeVar("i");
    EXPECT_EQ(names.var(outer.get()), "i");
    names.pushScope();
    EXPECT_EQ(names.var(first.get()), "j");
    EXPECT_EQ(names.var(inner.get()), "i_1");   // would shadow the live outer i
    names.popScope();
    names.pushScope();
    EXPECT_EQ(names.var(second.get()), "j");    // the first j is out of scope
    names.popScope();
}

TEST(ExprPrinter, FewestParenthesesButArithmeticInsideBitwiseIsGrouped) {
    NameTable names;
    ExprPrinter p(names);
    ir::VarRef a = ir::makeVar("a"), b = ir::makeVar("b"), c = ir::makeVar("c");
    EXPECT_EQ(p.print(ir::mul(ir::add(a, b), c)), "(a + b) * c");
    EXPECT_EQ(p.print(ir::add(a, ir::mul(b, c))), "a + b * c");
    EXPECT_EQ(p.print(ir::sub(a, ir::sub(b, c))), "a - (b - c)");   // left-associative
    // C binds + tighter than ^, but the grouping is spelled out.
    EXPECT_EQ(p.print(ir::binary(ir::BinaryOp::BitXor, ir::add(a, b), ir::mul(c, ir::intImm(8)))), "(a + b) ^ (c * 8)");
    EXPECT_EQ(p.print(ir::binary(ir::BinaryOp::BitAnd, a, ir::intImm(7))), "a & 7");
}

TEST(Templates, FillReplacesEveryPlaceholder) {
    EXPECT_EQ(fillTemplate("a {{x}} b {{y}}{{x}}", {{"x", "1"}, {"y", "2"}}), "a 1 b 21");
    EXPECT_THROW(fillTemplate("{{missing}}", {}), InternalError);
}

TEST(Files, WritesAllOrNothing) {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("tilet-files-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::string error;
    ASSERT_TRUE(writeFilesAtomically({{(dir / "a.txt").string(), "one"}, {(dir / "b.txt").string(), "two"}}, error)) << error;
    std::ifstream in(dir / "a.txt");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "one");
    // The second destination cannot be written: the first is not touched either.
    EXPECT_FALSE(writeFilesAtomically({{(dir / "a.txt").string(), "changed"}, {(dir / "missing" / "c.txt").string(), "x"}}, error));
    EXPECT_NE(error.find("cannot write"), std::string::npos);
    std::ifstream again(dir / "a.txt");
    std::string kept((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
    EXPECT_EQ(kept, "one");
    for (const auto &e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos);
    fs::remove_all(dir);
}

TEST(Explain, JsonLinesInSourceOrder) {
    SourceManager sm;
    FileId f = sm.add("k.tl", "a\nb\n");
    Explain log;
    log.record({SourceRange::at({f, 2, 1}), "copy global->shared", "Normal", "why \"quoted\"", {{"BulkLoad", "no"}}, {}});
    log.record({SourceRange::at({f, 1, 1}), "parallel loop", "layout", "", {}, {"detail"}});
    std::ostringstream out;
    log.printJson(sm, out);
    EXPECT_EQ(out.str(),
              "{\"file\":\"k.tl\",\"line\":1,\"column\":1,\"op\":\"parallel loop\",\"choice\":\"layout\",\"why\":\"\",\"details\":[\"detail\"],\"rejected\":[]}\n"
              "{\"file\":\"k.tl\",\"line\":2,\"column\":1,\"op\":\"copy global->shared\",\"choice\":\"Normal\",\"why\":\"why \\\"quoted\\\"\",\"details\":[],\"rejected\":[{\"option\":\"BulkLoad\",\"reason\":\"no\"}]}\n");
}
