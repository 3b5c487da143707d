// Lexer.cpp -- see Lexer.h. Each branch names the grammar rule it implements.
#include "frontend/Lexer.h"

#include "TileParser.h"

namespace tilet {

using grammar::TileParser;

namespace {

// Keywords, read once from the parser's vocabulary: every token whose literal
// name is a quoted word ('import', 'copy', ...).
const std::unordered_map<std::string, size_t> &keywordTable(const antlr4::dfa::Vocabulary &v) {
    static const std::unordered_map<std::string, size_t> table = [&v] {
        std::unordered_map<std::string, size_t> t;
        for (size_t type = 1; type <= v.getMaxTokenType(); ++type) {
            std::string lit = v.getLiteralName(type);
            if (lit.size() > 2 && lit.front() == '\'' && (std::isalpha(static_cast<unsigned char>(lit[1])) || lit[1] == '_'))
                t.emplace(lit.substr(1, lit.size() - 2), type);
        }
        return t;
    }();
    return table;
}

std::u32string decodeUtf8(const std::string &s) {
    std::u32string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        char32_t cp;
        size_t len;
        if (c < 0x80) { cp = c; len = 1; }
        else if ((c & 0xE0) == 0xC0) { cp = c & 0x1F; len = 2; }
        else if ((c & 0xF0) == 0xE0) { cp = c & 0x0F; len = 3; }
        else { cp = c & 0x07; len = 4; }
        for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
        out += cp;
        i += len;
    }
    return out;
}

std::string encodeUtf8(const std::u32string &s, size_t begin, size_t end) {
    std::string out;
    for (size_t i = begin; i < end; ++i) {
        char32_t c = s[i];
        if (c < 0x80) out += static_cast<char>(c);
        else if (c < 0x800) { out += static_cast<char>(0xC0 | (c >> 6)); out += static_cast<char>(0x80 | (c & 0x3F)); }
        else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return out;
}

bool isDigit(char32_t c) { return c >= '0' && c <= '9'; }
bool isHex(char32_t c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool isIdentStart(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isIdentPart(char32_t c) { return isIdentStart(c) || isDigit(c); }

struct Punct {
    const char *text;
    size_t type;
};

// Longest first, as ANTLR's longest-match rule picks them.
const Punct kPunct[] = {
    {"**", TileParser::STARSTAR}, {"+=", TileParser::PLUS_ASSIGN}, {"-=", TileParser::MINUS_ASSIGN}, {"*=", TileParser::STAR_ASSIGN},
    {"/=", TileParser::SLASH_ASSIGN}, {"==", TileParser::EQ}, {"!=", TileParser::NE}, {"<=", TileParser::LE},
    {">=", TileParser::GE}, {"<<", TileParser::SHL}, {">>", TileParser::SHR}, {"&&", TileParser::AND},
    {"||", TileParser::OR}, {"(", TileParser::LPAREN}, {")", TileParser::RPAREN}, {"[", TileParser::LBRACK},
    {"]", TileParser::RBRACK}, {"{", TileParser::LBRACE}, {"}", TileParser::RBRACE}, {",", TileParser::COMMA},
    {";", TileParser::SEMI}, {":", TileParser::COLON}, {"?", TileParser::QUESTION}, {"=", TileParser::ASSIGN},
    {"<", TileParser::LT}, {">", TileParser::GT}, {"+", TileParser::PLUS}, {"-", TileParser::MINUS},
    {"*", TileParser::STAR}, {"/", TileParser::SLASH}, {"%", TileParser::PERCENT}, {"!", TileParser::NOT},
    {"~", TileParser::TILDE}, {"&", TileParser::AMP}, {"^", TileParser::CARET}, {"|", TileParser::PIPE},
};

} // namespace

TileTokenSource::TileTokenSource(const std::string &utf8, const antlr4::dfa::Vocabulary &vocabulary)
    : text_(decodeUtf8(utf8)), keywords_(keywordTable(vocabulary)) {}

antlr4::TokenFactory<antlr4::CommonToken> *TileTokenSource::getTokenFactory() { return antlr4::CommonTokenFactory::DEFAULT.get(); }

void TileTokenSource::advance() {
    if (text_[pos_] == '\n') {
        ++line_;
        col_ = 0;
    } else {
        ++col_;
    }
    ++pos_;
}

std::unique_ptr<antlr4::Token> TileTokenSource::make(size_t type, size_t begin, size_t channel) {
    auto t = std::make_unique<antlr4::CommonToken>(std::make_pair(static_cast<antlr4::TokenSource *>(this), nullptr), type, channel,
                                                   begin, pos_ - 1);
    t->setText(encodeUtf8(text_, begin, pos_));
    t->setLine(tokenLine_);
    t->setCharPositionInLine(tokenCol_);
    return t;
}

std::unique_ptr<antlr4::Token> TileTokenSource::nextToken() {
    while (true) {
        tokenLine_ = line_;
        tokenCol_ = col_;
        size_t begin = pos_;
        if (atEnd()) {
            auto eof = std::make_unique<antlr4::CommonToken>(std::make_pair(static_cast<antlr4::TokenSource *>(this), nullptr),
                                                             antlr4::Token::EOF, antlr4::Token::DEFAULT_CHANNEL, pos_, pos_ - 1);
            eof->setText("<EOF>");
            eof->setLine(line_);
            eof->setCharPositionInLine(col_);
            return eof;
        }
        char32_t c = peek();
        // WHITESPACE : [ \t\r\n\f]+ -> skip
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
            while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\r' || peek() == '\n' || peek() == '\f')) advance();
            continue;
        }
        if (c == '/' && peek(1) == '/') {
            // LINE_COMMENT : '//' ~[\r\n]* -> skip
            while (!atEnd() && peek() != '\r' && peek() != '\n') advance();
            continue;
        }
        if (c == '/' && peek(1) == '*') {
            // BLOCK_COMMENT : '/*' .*? '*/' -> skip; otherwise UNTERMINATED_COMMENT to the end.
            size_t close = text_.find(U"*/", pos_ + 2);
            if (close != std::u32string::npos) {
                while (pos_ < close + 2) advance();
                continue;
            }
            while (!atEnd()) advance();
            return make(TileParser::UNTERMINATED_COMMENT, begin, antlr4::Token::HIDDEN_CHANNEL);
        }
        if (c == '"') {
            // STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"'; stopping early is UNTERMINATED_STRING.
            advance();
            while (!atEnd()) {
                char32_t d = peek();
                if (d == '"' || d == '\r' || d == '\n') break;
                if (d == '\\') {
                    if (atEnd(1) || peek(1) == '\r' || peek(1) == '\n') break;
                    advance();
                }
                advance();
            }
            if (!atEnd() && peek() == '"') {
                advance();
                return make(TileParser::STRING, begin);
            }
            return make(TileParser::UNTERMINATED_STRING, begin, antlr4::Token::HIDDEN_CHANNEL);
        }
        if (isDigit(c) || (c == '.' && isDigit(peek(1)))) {
            // INT and FLOAT, longest match.
            auto digits = [&] {   // DIGITS : [0-9] ('_'? [0-9])*
                advance();
                while (!atEnd()) {
                    if (isDigit(peek())) advance();
                    else if (peek() == '_' && isDigit(peek(1))) { advance(); advance(); }
                    else break;
                }
            };
            auto exponent = [&] {  // EXPONENT : [eE] [+-]? [0-9]+
                if (peek() != 'e' && peek() != 'E') return false;
                size_t k = (peek(1) == '+' || peek(1) == '-') ? 2 : 1;
                if (!isDigit(peek(k))) return false;
                for (size_t i = 0; i < k; ++i) advance();
                while (!atEnd() && isDigit(peek())) advance();
                return true;
            };
            if (c == '0' && (peek(1) == 'x' || peek(1) == 'X') && isHex(peek(2))) {
                advance(); advance(); advance();
                while (!atEnd()) {
                    if (isHex(peek())) advance();
                    else if (peek() == '_' && isHex(peek(1))) { advance(); advance(); }
                    else break;
                }
                return make(TileParser::INT, begin);
            }
            if (c == '0' && (peek(1) == 'b' || peek(1) == 'B') && (peek(2) == '0' || peek(2) == '1')) {
                advance(); advance(); advance();
                while (!atEnd()) {
                    if (peek() == '0' || peek() == '1') advance();
                    else if (peek() == '_' && (peek(1) == '0' || peek(1) == '1')) { advance(); advance(); }
                    else break;
                }
                return make(TileParser::INT, begin);
            }
            if (c == '.') {           // '.' DIGITS EXPONENT?
                advance();
                digits();
                exponent();
                return make(TileParser::FLOAT, begin);
            }
            digits();
            if (peek() == '.') {      // DIGITS '.' DIGITS? EXPONENT?
                advance();
                if (isDigit(peek())) digits();
                exponent();
                return make(TileParser::FLOAT, begin);
            }
            if (exponent()) return make(TileParser::FLOAT, begin);
            return make(TileParser::INT, begin);
        }
        if (isIdentStart(c)) {
            // IDENT : [a-zA-Z_] [a-zA-Z0-9_]*, unless it is a keyword.
            while (!atEnd() && isIdentPart(peek())) advance();
            std::string word = encodeUtf8(text_, begin, pos_);
            auto kw = keywords_.find(word);
            return make(kw != keywords_.end() ? kw->second : static_cast<size_t>(TileParser::IDENT), begin);
        }
        for (const Punct &p : kPunct) {
            size_t n = std::char_traits<char>::length(p.text);
            bool match = true;
            for (size_t i = 0; i < n && match; ++i) match = peek(i) == static_cast<char32_t>(p.text[i]) && !atEnd(i);
            if (match) {
                for (size_t i = 0; i < n; ++i) advance();
                return make(p.type, begin);
            }
        }
        // INVALID_CHAR : . -> channel(HIDDEN)
        advance();
        return make(TileParser::INVALID_CHAR, begin, antlr4::Token::HIDDEN_CHANNEL);
    }
}

} // namespace tilet
