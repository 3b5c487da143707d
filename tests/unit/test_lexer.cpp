// The hand-written lexer (src/frontend/Lexer.cpp) produces exactly the tokens
// of ANTLR's generated TileLexer -- the grammar stays the definition -- on
// every .tl file of the repository and on thousands of mutations of them.
#include "frontend/Lexer.h"
#include "support/SourceManager.h"

#include "TileLexer.h"
#include "TileParser.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace tilet;

namespace {

struct Tok {
    size_t type, channel, line, col;
    std::string text;
    bool operator==(const Tok &o) const {
        return type == o.type && channel == o.channel && line == o.line && col == o.col && text == o.text;
    }
};

std::string show(const Tok &t) {
    std::ostringstream os;
    os << "type " << t.type << " ch " << t.channel << " at " << t.line << ":" << t.col << " '" << t.text << "'";
    return os.str();
}

std::vector<Tok> collect(antlr4::TokenSource &source) {
    std::vector<Tok> out;
    while (true) {
        std::unique_ptr<antlr4::Token> t = source.nextToken();
        out.push_back({t->getType(), t->getChannel(), t->getLine(), t->getCharPositionInLine(), t->getText()});
        if (t->getType() == antlr4::Token::EOF) break;
    }
    return out;
}

void expectSameTokens(const std::string &text, const std::string &what) {
    antlr4::ANTLRInputStream input(text);
    grammar::TileLexer reference(&input);
    reference.removeErrorListeners();
    antlr4::CommonTokenStream dummy(&reference);
    grammar::TileParser parser(&dummy);
    TileTokenSource mine(text, parser.getVocabulary());
    std::vector<Tok> a = collect(reference), b = collect(mine);
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(a[i] == b[i]) << what << ": token " << i << ": ANTLR " << show(a[i]) << ", tilet " << show(b[i]);
    }
    ASSERT_EQ(a.size(), b.size()) << what;
}

std::vector<std::string> repositoryPrograms() {
    std::vector<std::string> texts;
    for (const char *dir : {"examples", "tests/golden", "tests/errors", "tests/emu", "docs"}) {
        std::filesystem::path root = std::filesystem::path(TILET_SOURCE_ROOT) / dir;
        for (const auto &entry : std::filesystem::recursive_directory_iterator(root)) {
            if (entry.path().extension() != ".tl" && entry.path().extension() != ".md") continue;
            std::ifstream in(entry.path(), std::ios::binary);
            std::ostringstream ss;
            ss << in.rdbuf();
            std::string text = ss.str();
            if (findInvalidUtf8(text) == std::string::npos && text.find('\0') == std::string::npos) texts.push_back(text);
        }
    }
    return texts;
}

} // namespace

TEST(Lexer, MatchesTheGeneratedLexerOnHandWrittenCases) {
    const char *cases[] = {
        "", "x", "  \t\n", "1.", ".5", "1e5", "1e", "1e+", "2.5e-3", "0x1F", "0x", "0b101", "0b2", "1_000", "1__0", "0x_1",
        "a+=b-=c*=d/=e", "<<=>>=", "a<b<=c>d>=e==f!=g", "&&||&|^~!", "\"str\"", "\"unterminated", "\"bad\\\nline\"",
        "\"esc\\\"aped\"", "/* c */x", "/* never", "/** x **/y", "// line\nz", "@#$", "é", "kernel kernels e8m0 e8m0x f16x",
        "for i, j in parallel(M, N) { x[i, j] = 0.5; }", "a ? b : c", "A[0:32, j]", "\r\n\r\n", "0.0.0", "1..2",
    };
    for (const char *c : cases) expectSameTokens(c, std::string("case \"") + c + "\"");
}

TEST(Lexer, MatchesTheGeneratedLexerOnEveryProgramAndMutations) {
    std::vector<std::string> programs = repositoryPrograms();
    ASSERT_GT(programs.size(), 20u);
    for (size_t i = 0; i < programs.size(); ++i) expectSameTokens(programs[i], "program " + std::to_string(i));
    std::mt19937 gen(7);
    const char *inserts[] = {"/*", "\"", "\\", "0x", "1e", ".", "_", "@", "é", "\n", "*/", "//", "0b", "=", "<"};
    for (int n = 0; n < 3000; ++n) {
        std::string text = programs[gen() % programs.size()];
        for (int k = 0; k < 3; ++k) {
            size_t at = text.empty() ? 0 : gen() % text.size();
            // keep UTF-8 intact: only cut at ASCII positions
            while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
            switch (gen() % 3) {
            case 0: text.insert(at, inserts[gen() % (sizeof inserts / sizeof *inserts)]); break;
            case 1: if (!text.empty() && static_cast<unsigned char>(text[at]) < 0x80) text.erase(at, 1); break;
            default: text = text.substr(0, at); break;
            }
        }
        expectSameTokens(text, "mutation " + std::to_string(n));
    }
}
