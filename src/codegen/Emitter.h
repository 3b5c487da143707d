// Emitter.h -- writes indented C-family text, and gives IR names C spellings.
#pragma once

#include "ir/IR.h"

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tilet {

class Emitter {
public:
    void line(const std::string &text);
    void blank();
    void open(const std::string &head);             // "head {" and indent
    void close(const std::string &comment = "");    // "} // comment"
    void raw(const std::string &text);              // verbatim, no indentation
    std::string str() const { return out_.str(); }
    int64_t lines() const { return lines_; }        // lines written so far

private:
    std::ostringstream out_;
    int indent_ = 0;
    int64_t lines_ = 0;
};

// Identifiers of one generated function: every IR variable and buffer gets a
// legal C++ name, unique in the function, chosen in order of first use (so
// output is deterministic). User names are kept when they are legal.
class NameTable {
public:
    explicit NameTable(std::set<std::string> taken = {});
    const std::string &var(const ir::VarNode *v);
    const std::string &buffer(const ir::BufferNode *b);
    std::string fresh(const std::string &base);
    // C blocks: names first given inside a block are free again after it, so
    // sibling loops can all use `i` without shadowing anything live.
    void pushScope() { scopes_.emplace_back(); }
    void popScope();

private:
    std::string unique(std::string base);
    std::set<std::string> used_;
    // Per legal base name: every `base_K` with K below it is in used_, so
    // the search for a free suffix starts there (a kernel of thousands of
    // `i`s in one scope would otherwise probe i_1, i_2, ... each time).
    std::map<std::string, int> firstFree_;
    std::map<const void *, std::string> names_;
    std::vector<std::vector<std::pair<const void *, std::string>>> scopes_;
};

// "{{key}}" replaced by values[key] in an embedded template.
std::string fillTemplate(std::string_view text, const std::map<std::string, std::string> &values);

} // namespace tilet
