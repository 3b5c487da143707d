// Files.h -- writing output files so that nothing half-written is ever seen.
//
// Every output is written to a temporary file in the same directory and
// renamed over the destination only once all of it is written; a failure
// leaves the destination untouched (make then rebuilds rather than trusting a
// truncated file).
#pragma once

#include <string>
#include <vector>

namespace tilet {

struct PendingFile {
    std::string path;
    std::string content;
};

// Writes all files or none: each goes to a temporary first, and only when
// every temporary is complete are they renamed into place. On failure returns
// false and sets `error` to "cannot write 'path': reason".
bool writeFilesAtomically(const std::vector<PendingFile> &files, std::string &error);

} // namespace tilet
