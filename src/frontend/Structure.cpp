// Structure.cpp -- nesting depth and bracket balance, on the token stream.
//
// One pass, one stack of open brackets. The depth at a token over-estimates
// how deep any tree built from the file is at that token (parse tree, AST,
// Sema's recursion, IR):
//
//   * every open bracket, ( [ {, is one level more than where it opens;
//   * an operator (binary, unary, the '?' of `?:`) is one level more than
//     the operator before it in the same bracket, since `1 + 1 + ... + 1`
//     builds a left-leaning tree as deep as the chain is long, and
//     `a ? b : c ? d : e` nests once per '?'; ',' and ';' end a chain;
//   * `let` and `var` are one level more than the statement before them in
//     the same block, since a binding scopes over the rest of its block and
//     Sema and the IR nest the rest inside it; so is `else`, since
//     `else if` nests the next `if` inside the previous one.
//
// Brackets must balance. The grammar puts neither a block nor a ';' inside
// parentheses or square brackets, so one of those inside an open ( or [ means
// that bracket was never closed -- reported there, as clang reports "expected
// ')'" with a note at the bracket it was to match.
#include "frontend/Structure.h"

#include "TileLexer.h"

#include <string>

namespace tilet {

using grammar::TileLexer;

namespace {

char closerOf(size_t opener) {
    switch (opener) {
    case TileLexer::LPAREN: return ')';
    case TileLexer::LBRACK: return ']';
    default: return '}';
    }
}

bool isOperator(size_t type) {
    switch (type) {
    case TileLexer::STAR: case TileLexer::SLASH: case TileLexer::PERCENT: case TileLexer::PLUS: case TileLexer::MINUS:
    case TileLexer::SHL: case TileLexer::SHR: case TileLexer::LT: case TileLexer::LE: case TileLexer::GT: case TileLexer::GE:
    case TileLexer::EQ: case TileLexer::NE: case TileLexer::AMP: case TileLexer::CARET: case TileLexer::PIPE:
    case TileLexer::AND: case TileLexer::OR: case TileLexer::NOT: case TileLexer::TILDE: case TileLexer::QUESTION:
        return true;
    default:
        return false;
    }
}

struct Frame {
    antlr4::Token *open = nullptr;   // null: the file level
    size_t depth = 0;                // of the bracket itself
    size_t statements = 0;           // bindings and `else`s so far in this bracket
    size_t chain = 0;                // operators since the last ',' or ';' in this bracket
    size_t level() const { return depth + statements + chain; }
};

class StructureCheck {
public:
    StructureCheck(FileId file, unsigned maxNesting, DiagnosticEngine &diags) : file_(file), max_(maxNesting), diags_(diags) {}

    bool run(const std::vector<antlr4::Token *> &tokens) {
        frames_.push_back(Frame{});
        for (antlr4::Token *t : tokens) {
            if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) continue;
            size_t type = t->getType();
            if (type == antlr4::Token::EOF) return atEnd(t);
            Frame &top = frames_.back();
            switch (type) {
            case TileLexer::LPAREN:
            case TileLexer::LBRACK:
            case TileLexer::LBRACE: {
                if (type == TileLexer::LBRACE && insideExpression()) return unclosed(t);
                size_t depth = top.level() + 1;
                if (depth > max_) return tooDeep(t, "bracket nesting level");
                frames_.push_back(Frame{t, depth, 0, 0});
                break;
            }
            case TileLexer::RPAREN:
            case TileLexer::RBRACK:
            case TileLexer::RBRACE: {
                char want = top.open ? closerOf(top.open->getType()) : 0;
                if (t->getText()[0] == want) {
                    frames_.pop_back();
                    break;
                }
                // A ')' or ']' inside a block, or anything at file level, closes nothing.
                if (!top.open || top.open->getType() == TileLexer::LBRACE) return extraneous(t);
                return unclosed(t);
            }
            case TileLexer::SEMI:
                if (insideExpression()) return unclosed(t);
                top.chain = 0;
                break;
            case TileLexer::COMMA:
                top.chain = 0;
                break;
            case TileLexer::LET:
            case TileLexer::VAR:
            case TileLexer::ELSE:
                ++top.statements;
                if (top.level() > max_) return tooDeep(t, "statement nesting level");
                break;
            default:
                if (isOperator(type)) {
                    ++top.chain;
                    if (top.level() > max_) return tooDeep(t, "expression nesting level");
                }
                break;
            }
        }
        return true;   // a token stream always ends with EOF; not reached
    }

private:
    bool insideExpression() const {
        const antlr4::Token *open = frames_.back().open;
        return open && open->getType() != TileLexer::LBRACE;
    }

    SourceRange rangeOf(antlr4::Token *t) const { return tokenRange(file_, t); }

    bool tooDeep(antlr4::Token *t, const char *what) {
        Diagnostic d{Severity::Error, rangeOf(t), std::string(what) + " exceeded maximum of " + std::to_string(max_), {}, {}};
        d.note({}, "use --max-nesting=N to increase the maximum nesting level");
        diags_.report(std::move(d));
        return false;
    }

    // `t` cannot come before the innermost open bracket is closed.
    bool unclosed(antlr4::Token *t) {
        antlr4::Token *open = frames_.back().open;
        std::string closer(1, closerOf(open->getType()));
        Diagnostic d{Severity::Error, rangeOf(t), "expected '" + closer + "' before '" + t->getText() + "'", {}, {}};
        d.note(rangeOf(open), "to match this '" + open->getText() + "'");
        diags_.report(std::move(d));
        return false;
    }

    bool extraneous(antlr4::Token *t) {
        std::string text = t->getText();
        std::string message = text == "}" ? "extraneous closing brace ('}')"
                                          : "extraneous '" + text + "' with no matching '" + (text == ")" ? "(" : "[") + "'";
        diags_.error(rangeOf(t), message);
        return false;
    }

    bool atEnd(antlr4::Token *eof) {
        if (frames_.size() == 1) return true;
        antlr4::Token *open = frames_.back().open;
        std::string message;
        if (open->getType() == TileLexer::LBRACE) {
            size_t blocks = frames_.size() - 1;   // every open bracket is a block here
            message = "expected '}' before end of file (" + std::to_string(blocks) + " block" + (blocks == 1 ? "" : "s") + " still open)";
        } else {
            message = std::string("expected '") + closerOf(open->getType()) + "' before end of file";
        }
        Diagnostic d{Severity::Error, rangeOf(eof), std::move(message), {}, {}};
        d.note(rangeOf(open), "to match this '" + open->getText() + "'");
        diags_.report(std::move(d));
        return false;
    }

    FileId file_;
    size_t max_;
    DiagnosticEngine &diags_;
    std::vector<Frame> frames_;
};

} // namespace

SourceRange tokenRange(FileId file, antlr4::Token *token) {
    SourceLoc loc{file, static_cast<uint32_t>(token->getLine()), static_cast<uint32_t>(token->getCharPositionInLine() + 1)};
    SourceRange r{loc, loc};
    if (token->getType() != antlr4::Token::EOF) {
        uint32_t width = countCodePoints(token->getText());
        if (width > 1) r.end.col += width - 1;
    }
    return r;
}

bool checkStructure(FileId file, const std::vector<antlr4::Token *> &tokens, unsigned maxNesting, DiagnosticEngine &diags) {
    return StructureCheck(file, maxNesting, diags).run(tokens);
}

} // namespace tilet
