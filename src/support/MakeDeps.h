// MakeDeps.h -- make dependency rules (what gcc -MD writes).
#pragma once

#include <string>
#include <vector>

namespace tilet {

// `path` as a make target or prerequisite: spaces and '#' escaped with a
// backslash, '$' doubled (gcc's -MQ quoting).
std::string makeQuoted(const std::string &path);

// "T1 T2: P1 P2 ..." (targets and prerequisites already quoted), continued
// over lines; with `phony`, an empty rule for each prerequisite but the
// first (the main file), as -MP adds.
std::string dependencyRule(const std::vector<std::string> &targets, const std::vector<std::string> &prerequisites, bool phony);

} // namespace tilet
