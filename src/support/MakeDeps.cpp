// MakeDeps.cpp -- see MakeDeps.h.
#include "support/MakeDeps.h"

namespace tilet {

std::string makeQuoted(const std::string &path) {
    std::string out;
    for (char c : path) {
        if (c == ' ' || c == '#') out += '\\';
        if (c == '$') out += '$';
        out += c;
    }
    return out;
}

std::string dependencyRule(const std::vector<std::string> &targets, const std::vector<std::string> &prerequisites, bool phony) {
    std::string rule;
    for (size_t i = 0; i < targets.size(); ++i) rule += (i ? " " : "") + targets[i];
    rule += ":";
    for (const std::string &p : prerequisites) rule += " \\\n  " + p;
    rule += "\n";
    if (phony) {
        for (size_t i = 1; i < prerequisites.size(); ++i) rule += "\n" + prerequisites[i] + ":\n";
    }
    return rule;
}

} // namespace tilet
