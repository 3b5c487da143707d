// Diagnostics render as clang does: location, severity, message, source line, caret.
#include "support/Diagnostics.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

using namespace tilet;

TEST(Diagnostics, RendersLocationSourceAndCaretRange) {
    SourceManager sm;
    FileId f = sm.add("k.tl", "const N = 4;\nlet y = x + 1;\n");
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    d.error({{f, 2, 9}, {f, 2, 13}}, "use of undeclared identifier 'x'");
    EXPECT_EQ(out.str(), "k.tl:2:9: error: use of undeclared identifier 'x'\n"
                         "  let y = x + 1;\n"
                         "          ^~~~~\n");
    EXPECT_EQ(d.errorCount(), 1u);
}

TEST(Diagnostics, TabsInTheSourceKeepTheCaretAligned) {
    SourceManager sm;
    FileId f = sm.add("t.tl", "\tx = 1;\n");
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    d.error(SourceRange::at({f, 1, 2}), "bad");
    EXPECT_EQ(out.str(), "t.tl:1:2: error: bad\n  \tx = 1;\n  \t^\n");
}

// A vertical tab or form feed in the source line would start a new line of
// output (Python's splitlines splits there): they print as spaces (found by
// scripts/fuzz: a mutant's "// EXPECT: ... error: ..." comment after a \v
// read as an error without a location).
TEST(Diagnostics, ControlCharactersInTheSourcePrintAsSpaces) {
    SourceManager sm;
    FileId f = sm.add("v.tl", "\x0b// x\x0c y\n");
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    d.error(SourceRange::at({f, 1, 1}), "invalid character (byte 0xb)");
    EXPECT_EQ(out.str(), "v.tl:1:1: error: invalid character (byte 0xb)\n   // x  y\n  ^\n");
}

TEST(Diagnostics, ColumnsCountCodePoints) {
    SourceManager sm;
    FileId f = sm.add("u.tl", "// \xc3\xa9\xc3\xa9 x\n");
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    d.error(SourceRange::at({f, 1, 7}), "here");
    EXPECT_NE(out.str().find("\n        ^\n"), std::string::npos) << out.str();
}

TEST(Diagnostics, NotesFollowTheirDiagnosticAndWarningsNameTheirFlag) {
    SourceManager sm;
    FileId f = sm.add("a.tl", "one\ntwo\n");
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    Diagnostic diag{Severity::Warning, SourceRange::at({f, 2, 1}), "something odd", "odd", {}};
    diag.note(SourceRange::at({f, 1, 1}), "because of this");
    d.report(diag);
    EXPECT_EQ(out.str(), "a.tl:2:1: warning: something odd [-Wodd]\n  two\n  ^\n"
                         "a.tl:1:1: note: because of this\n  one\n  ^\n");
    d.printSummary();
    EXPECT_NE(out.str().find("1 warning generated.\n"), std::string::npos);
}

TEST(Diagnostics, StopsAtTheErrorLimit) {
    SourceManager sm;
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    d.setMaxErrors(2);
    d.error({}, "one");
    EXPECT_THROW(d.error({}, "two"), TooManyErrors);
    EXPECT_NE(out.str().find("too many errors emitted"), std::string::npos);
}

TEST(Diagnostics, ColourOnlyWhenAskedOrOnATerminal) {
    SourceManager sm;
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    d.setColor(true);
    d.error({}, "x");
    EXPECT_NE(out.str().find("\033[1;31merror"), std::string::npos);
    EXPECT_TRUE(shouldUseColor(ColorMode::Always));
    EXPECT_FALSE(shouldUseColor(ColorMode::Never));
    setenv("NO_COLOR", "1", 1);
    EXPECT_FALSE(shouldUseColor(ColorMode::Auto));
    EXPECT_TRUE(shouldUseColor(ColorMode::Always));   // an explicit flag wins
    unsetenv("NO_COLOR");
    setenv("TERM", "dumb", 1);
    EXPECT_FALSE(shouldUseColor(ColorMode::Auto));
}

TEST(SourceManager, FindsInvalidUtf8) {
    EXPECT_EQ(findInvalidUtf8("plain"), std::string::npos);
    EXPECT_EQ(findInvalidUtf8("ok \xc3\xa9"), std::string::npos);
    EXPECT_EQ(findInvalidUtf8("ab\xff"), 2u);
    EXPECT_EQ(findInvalidUtf8("\xc3"), 0u);            // truncated sequence
    EXPECT_EQ(findInvalidUtf8("\xc0\xaf"), 0u);        // overlong
    EXPECT_EQ(findInvalidUtf8("\xed\xa0\x80"), 0u);    // surrogate
}
