// Lexer.h -- a hand-written lexer for the lexer rules of grammar/Tile.g4
// (private to src/frontend).
//
// It produces exactly the tokens ANTLR's generated TileLexer produces (same
// types, text, positions and channels; tests/unit/test_lexer.cpp compares the
// two on every test input and on mutated ones), about ten times faster from a
// cold start: the generated lexer builds its DFA anew in every process, which
// was a third of tilet's time per file. Keywords come from the parser's
// vocabulary, so the grammar stays the one list of reserved words.
#pragma once

#include "antlr4-runtime.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace tilet {

class TileTokenSource : public antlr4::TokenSource {
public:
    // `vocabulary` is the parser's (TileParser::getVocabulary()).
    TileTokenSource(const std::string &utf8, const antlr4::dfa::Vocabulary &vocabulary);

    std::unique_ptr<antlr4::Token> nextToken() override;
    size_t getLine() const override { return line_; }
    size_t getCharPositionInLine() override { return col_; }
    antlr4::CharStream *getInputStream() override { return nullptr; }
    std::string getSourceName() override { return "tile"; }
    antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override;

private:
    std::unique_ptr<antlr4::Token> make(size_t type, size_t begin, size_t channel = antlr4::Token::DEFAULT_CHANNEL);
    void advance();
    char32_t peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : 0; }
    bool atEnd(size_t ahead = 0) const { return pos_ + ahead >= text_.size(); }

    std::u32string text_;
    size_t pos_ = 0;
    size_t line_ = 1, col_ = 0;                 // of pos_
    size_t tokenLine_ = 1, tokenCol_ = 0;       // of the token being made
    size_t index_ = 0;
    const std::unordered_map<std::string, size_t> &keywords_;
};

} // namespace tilet
