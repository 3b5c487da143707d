// Parser.cpp -- runs the ANTLR lexer and parser on one file and reports syntax
// errors in tilet's own words.
//
// 1. Reject text ANTLR cannot take: bytes that are not UTF-8, NUL bytes.
// 2. Lex everything; report the tokens the grammar reserves for broken input
//    (unterminated comments and strings, stray characters).
// 3. Check nesting depth and bracket balance on the tokens (Structure.h): the
//    parser and every later stage recurse once per level.
// 4. Parse in two stages (SLL with bail-out, then full LL on failure), as the
//    ANTLR book recommends: valid input parses at SLL speed, and invalid input
//    is re-parsed with full error recovery so every error is reported once.
// 5. If nothing went wrong, hand the tree to ParseTreeToAst.
#include "frontend/Parser.h"

#include "frontend/Lexer.h"
#include "frontend/ParseTreeToAst.h"
#include "frontend/Structure.h"
#include "frontend/TileLangSpellings.h"
#include "support/InternalError.h"

#include "TileLexer.h"
#include "TileParser.h"
#include "antlr4-runtime.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace tilet {

using grammar::TileLexer;
using grammar::TileParser;

namespace {

// How a token kind is named in messages: `';'`, "identifier", "end of file".
std::string describeTokenType(size_t type, const antlr4::dfa::Vocabulary &vocabulary) {
    switch (type) {
    case antlr4::Token::EOF: return "end of file";
    case TileLexer::IDENT: return "identifier";
    case TileLexer::INT: return "integer";
    case TileLexer::FLOAT: return "number";
    case TileLexer::STRING: return "string";
    }
    return vocabulary.getLiteralName(type);
}

std::string describeToken(antlr4::Token *token) {
    if (token->getType() == antlr4::Token::EOF) return "end of file";
    return "'" + token->getText() + "'";
}

// Error strategy that phrases messages the way a C compiler would, and stops
// the first stage of two-stage parsing at the first error.
class TileErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
    TileErrorStrategy(FileId file, DiagnosticEngine &diags, std::string_view text) : file_(file), diags_(diags), text_(text) {}

protected:
    void reportNoViableAlternative(antlr4::Parser *parser, const antlr4::NoViableAltException &e) override {
        stream_ = parser->getTokenStream();
        report(e.getOffendingToken(), expectedPhrase(parser, e.getExpectedTokens(), e.getOffendingToken()),
               e.getExpectedTokens().contains(static_cast<size_t>(TileLexer::IDENT)));
    }
    void reportInputMismatch(antlr4::Parser *parser, const antlr4::InputMismatchException &e) override {
        stream_ = parser->getTokenStream();
        report(e.getOffendingToken(), expectedPhrase(parser, e.getExpectedTokens(), e.getOffendingToken()),
               e.getExpectedTokens().contains(static_cast<size_t>(TileLexer::IDENT)));
    }
    void reportFailedPredicate(antlr4::Parser *, const antlr4::FailedPredicateException &e) override {
        report(e.getOffendingToken(), "unexpected " + describeToken(e.getOffendingToken()));
    }
    void reportUnwantedToken(antlr4::Parser *parser) override {
        stream_ = parser->getTokenStream();
        if (inErrorRecoveryMode(parser)) return;
        beginErrorCondition(parser);
        antlr4::Token *t = parser->getCurrentToken();
        report(t, "unexpected " + describeToken(t));
    }
    void reportMissingToken(antlr4::Parser *parser) override {
        stream_ = parser->getTokenStream();
        if (inErrorRecoveryMode(parser)) return;
        beginErrorCondition(parser);
        antlr4::Token *t = parser->getCurrentToken();
        std::string what = "expected " + describeSet(parser, getExpectedTokens(parser));
        // Point just past the previous token, where the missing one belongs.
        antlr4::Token *prev = t->getTokenIndex() > 0 ? parser->getTokenStream()->get(t->getTokenIndex() - 1) : nullptr;
        while (prev && prev->getChannel() != antlr4::Token::DEFAULT_CHANNEL && prev->getTokenIndex() > 0)
            prev = parser->getTokenStream()->get(prev->getTokenIndex() - 1);
        if (prev && prev->getChannel() == antlr4::Token::DEFAULT_CHANNEL) {
            SourceRange r = tokenRange(file_, prev);
            r.begin = r.end;
            r.begin.col += 1;
            r.end = r.begin;
            Diagnostic d{Severity::Error, r, what, {}, {}};
            noteFloorDivision(d, t);
            diags_.report(std::move(d));
            return;
        }
        report(t, what);
    }

private:
    std::string describeSet(antlr4::Parser *parser, const antlr4::misc::IntervalSet &set) {
        std::vector<std::string> names;
        for (ssize_t type : set.toList()) names.push_back(describeTokenType(static_cast<size_t>(type), parser->getVocabulary()));
        if (names.empty()) return "something else";
        if (names.size() > 4) {
            if (set.contains(static_cast<size_t>(TileLexer::IDENT)) && set.contains(static_cast<size_t>(TileLexer::INT))) return "an expression";
            if (set.contains(static_cast<size_t>(TileLexer::LET)) && set.contains(static_cast<size_t>(TileLexer::FOR))) return "a statement";
            if (set.contains(static_cast<size_t>(TileLexer::F32))) return "a dtype";
            return "something else";
        }
        std::string out;
        for (size_t i = 0; i < names.size(); ++i) {
            if (i) out += i + 1 == names.size() ? " or " : ", ";
            out += names[i];
        }
        return out;
    }
    std::string expectedPhrase(antlr4::Parser *parser, const antlr4::misc::IntervalSet &set, antlr4::Token *found) {
        std::string expected = describeSet(parser, set);
        if (expected == "something else") return "unexpected " + describeToken(found);
        return "expected " + expected + ", found " + describeToken(found);
    }
    void report(antlr4::Token *token, std::string message, bool nameExpected = false) {
        Diagnostic d{Severity::Error, tokenRange(file_, token), std::move(message), {}, {}};
        // A keyword where a name belongs: TileLang programs name things
        // `threads` or `kernel`, which are tilet keywords.
        const std::string text = token->getText();
        bool word = !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_');
        if (nameExpected && word && token->getType() != TileLexer::IDENT)
            d.note({}, "'" + text + "' is a keyword of tilet and cannot be used as a name; rename it (for example '" + text + "_')");
        noteFloorDivision(d, token);
        if (token->getType() == TileLexer::IDENT) {
            if (std::optional<std::string> dtype = tiletDtypeOf(token->getText()))
                d.note({}, "'" + token->getText() + "' is TileLang's name of the dtype tilet calls '" + *dtype + "'");
        }
        diags_.report(std::move(d));
    }

    // TileLang's `a // b` cut short by tilet's line comment, just before the
    // error: say so.
    void noteFloorDivision(Diagnostic &d, antlr4::Token *token) const {
        antlr4::Token *operand = previousOperand(token);
        if (!operand) return;
        // The rest of the operand's line (columns count code points; a
        // line with other characters before the operand is left alone).
        size_t start = 0;
        for (size_t line = 1; line < operand->getLine() && start != std::string_view::npos; ++line) {
            start = text_.find('\n', start);
            if (start != std::string_view::npos) ++start;
        }
        if (start == std::string_view::npos) return;
        std::string_view line = text_.substr(start, text_.find('\n', start) - start);
        size_t after = operand->getCharPositionInLine() + operand->getText().size();
        if (after <= line.size() && line.substr(operand->getCharPositionInLine(), operand->getText().size()) == operand->getText() &&
            looksLikeFloorDivision(line.substr(after)))
            d.note({}, kFloorDivisionNote);
    }

    // The token before `token` when it ends an operand (a name, a number, a
    // closing bracket) on an earlier line: where a `// b` would have been cut.
    antlr4::Token *previousOperand(antlr4::Token *token) const {
        if (!stream_ || token->getTokenIndex() == 0 || token->getTokenIndex() == static_cast<size_t>(-1)) return nullptr;
        antlr4::Token *prev = nullptr;
        for (size_t i = token->getTokenIndex(); i-- > 0;) {
            antlr4::Token *t = stream_->get(i);
            if (t->getChannel() == antlr4::Token::DEFAULT_CHANNEL) {
                prev = t;
                break;
            }
        }
        if (!prev || prev->getLine() >= token->getLine()) return nullptr;
        size_t type = prev->getType();
        bool operand = type == TileLexer::IDENT || type == TileLexer::INT || type == TileLexer::FLOAT || prev->getText() == ")" ||
                       prev->getText() == "]";
        return operand ? prev : nullptr;
    }

    FileId file_;
    DiagnosticEngine &diags_;
    std::string_view text_;                   // the source, for what the lexer skipped
    antlr4::TokenStream *stream_ = nullptr;   // the parser's, set when it reports
};

// TileLang's Python spelling `T.name`: tilet has no `.` operator, so this is
// a port. One error saying how tilet writes it, instead of the cascade a
// stray '.' causes in the parser.
bool reportTileLangNamespace(FileId file, const std::vector<antlr4::Token *> &tokens, size_t dot, DiagnosticEngine &diags) {
    if (dot == 0 || dot + 1 >= tokens.size()) return false;
    antlr4::Token *owner = tokens[dot - 1], *name = tokens[dot + 1];
    if (owner->getType() != TileLexer::IDENT || owner->getText() != "T") return false;
    if (name->getType() == antlr4::Token::EOF || name->getChannel() != antlr4::Token::DEFAULT_CHANNEL) return false;
    std::string member = name->getText();
    SourceRange where = tokenRange(file, owner);
    where.end = tokenRange(file, name).end;
    Diagnostic d{Severity::Error, where, "'T." + member + "' is TileLang's Python spelling; tilet has no 'T.' namespace", {}, {}};
    if (std::optional<std::string> form = tiletFormOfT(member)) d.note({}, "tilet writes it: " + *form);
    else if (name->getType() != TileLexer::IDENT) d.note({}, "tilet writes it: " + member + " (builtins need no prefix)");
    else d.note({}, "docs/porting-from-tilelang.md lists tilet's form of each TileLang construct");
    diags.report(std::move(d));
    return true;
}

// Reports the hidden tokens that mark malformed input.
// `ported`: a TileLang spelling was found, whose parse would only cascade.
bool reportLexicalErrors(FileId file, antlr4::CommonTokenStream &tokens, DiagnosticEngine &diags, bool &ported) {
    bool ok = true;
    const std::vector<antlr4::Token *> &all = tokens.getTokens();
    for (size_t i = 0; i < all.size(); ++i) {
        antlr4::Token *t = all[i];
        if (t->getType() == TileLexer::INVALID_CHAR && t->getText() == "." && reportTileLangNamespace(file, all, i, diags)) {
            ok = false;
            ported = true;
            continue;
        }
        switch (t->getType()) {
        case TileLexer::UNTERMINATED_COMMENT: {
            SourceRange r = tokenRange(file, t);
            r.end = r.begin;
            r.end.col += 1;
            diags.error(r, "unterminated /* comment");
            ok = false;
            break;
        }
        case TileLexer::UNTERMINATED_STRING:
            diags.error(SourceRange::at(tokenRange(file, t).begin), "missing terminating '\"' character");
            ok = false;
            break;
        case TileLexer::INVALID_CHAR: {
            std::string text = t->getText();
            unsigned char c = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
            std::ostringstream msg;
            if (c < 0x20 || c == 0x7F) msg << "invalid character (byte 0x" << std::hex << int(c) << ")";
            else msg << "invalid character '" << text << "'";
            diags.error(tokenRange(file, t), msg.str());
            ok = false;
            break;
        }
        default: break;
        }
    }
    return ok;
}

} // namespace

std::optional<ast::File> parseFile(FileId file, const SourceManager &sources, DiagnosticEngine &diags, unsigned maxNesting) {
    const std::string &text = sources.text(file);

    size_t bad = findInvalidUtf8(text);
    if (bad != std::string::npos) {
        // Locate the byte: count lines and code points before it.
        uint32_t line = 1, col = 1;
        for (size_t i = 0; i < bad; ++i) {
            if (text[i] == '\n') { ++line; col = 1; }
            else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++col;
        }
        std::ostringstream msg;
        msg << "source file is not valid UTF-8 (byte 0x" << std::hex << int(static_cast<unsigned char>(text[bad])) << ")";
        diags.error(SourceRange::at(SourceLoc{file, line, col}), msg.str());
        return std::nullopt;
    }
    if (size_t nul = text.find('\0'); nul != std::string::npos) {
        uint32_t line = 1 + static_cast<uint32_t>(std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n'));
        size_t lineStart = text.rfind('\n', nul);
        uint32_t col = 1 + countCodePoints(std::string_view(text).substr(lineStart == std::string::npos ? 0 : lineStart + 1,
                                                                       nul - (lineStart == std::string::npos ? 0 : lineStart + 1)));
        diags.error(SourceRange::at(SourceLoc{file, line, col}), "source file contains a NUL byte; is it a binary file?");
        return std::nullopt;
    }

    // The grammar's lexer rules, without ANTLR's cold-start cost (Lexer.h).
    // Constructing the parser reads no token, so the lexer can take its vocabulary.
    std::unique_ptr<TileTokenSource> lexer;
    antlr4::CommonTokenStream tokens(nullptr);
    TileParser parser(&tokens);
    lexer = std::make_unique<TileTokenSource>(text, parser.getVocabulary());
    tokens.setTokenSource(lexer.get());
    tokens.fill();
    bool ported = false;
    bool lexOk = reportLexicalErrors(file, tokens, diags, ported);
    if (ported) return std::nullopt;
    // Too deep or unbalanced: ANTLR would overflow the stack or spend time
    // quadratic in the depth recovering; the one error is reported instead.
    if (!checkStructure(file, tokens.getTokens(), maxNesting, diags)) return std::nullopt;

    parser.setTokenStream(&tokens);
    parser.removeErrorListeners();

    // Stage 1: SLL, bail at the first error without reporting anything.
    TileParser::FileContext *tree = nullptr;
    parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::SLL);
    try {
        tree = parser.file();
    } catch (antlr4::ParseCancellationException &) {
        tree = nullptr;
    }
    // Stage 2: full LL with recovery, reporting every error.
    unsigned errorsBefore = diags.errorCount();
    if (!tree) {
        tokens.seek(0);
        parser.reset();
        parser.setErrorHandler(std::make_shared<TileErrorStrategy>(file, diags, text));
        parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::LL);
        tree = parser.file();   // SLL can fail on valid input that LL accepts: no error then
    }
    if (!lexOk || diags.errorCount() > errorsBefore) return std::nullopt;
    ast::File ast = ParseTreeToAst(file, diags).transformFile(*tree);
    if (diags.errorCount() > errorsBefore) return std::nullopt;
    return ast;
}

} // namespace tilet
