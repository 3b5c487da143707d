// SourceManager.h -- owns the text of every file tilet reads and maps
// positions in it to lines and columns.
//
// Lines and columns are 1-based; a column counts Unicode code points, which is
// what the ANTLR C++ runtime counts and what SARIF calls "unicodeCodePoints".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tilet {

using FileId = uint32_t;
constexpr FileId kNoFile = 0;

struct SourceLoc {
    FileId file = kNoFile;
    uint32_t line = 0;
    uint32_t col = 0;
    bool valid() const { return file != kNoFile && line > 0; }
};

// A range of characters; `end` is the last character, inclusive.
struct SourceRange {
    SourceLoc begin;
    SourceLoc end;
    bool valid() const { return begin.valid(); }
    static SourceRange at(SourceLoc loc) { return {loc, loc}; }
    // The range covering both `a` and `b` (which must be in the same file).
    static SourceRange span(const SourceRange &a, const SourceRange &b);
    // "line:col" of the beginning, for messages that point at another statement.
    std::string lineColumn() const;
    // Whether `l` lies in the range (ends included).
    bool contains(const SourceLoc &l) const;
};

class SourceManager {
public:
    SourceManager();

    // Registers a file's text. `name` is how diagnostics spell it: the path as
    // given on the command line or in an import, or "<stdin>".
    FileId add(std::string name, std::string text);

    const std::string &name(FileId file) const;
    const std::string &text(FileId file) const;
    // The text of line `line` (1-based) without its line terminator.
    std::string_view line(FileId file, uint32_t line) const;
    uint32_t lineCount(FileId file) const;

private:
    struct File {
        std::string name;
        std::string text;
        std::vector<uint32_t> lineStarts;   // byte offset of each line
    };
    const File &get(FileId file) const;
    std::vector<File> files_;   // files_[0] is the "no file" sentinel
};

// Number of code points in a UTF-8 string (invalid bytes count as one each).
uint32_t countCodePoints(std::string_view utf8);

// The byte offset of the first byte that is not valid UTF-8, or npos.
size_t findInvalidUtf8(std::string_view text);

} // namespace tilet
