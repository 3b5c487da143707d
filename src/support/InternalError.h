// InternalError.h -- tilet's own bugs, kept apart from the user's mistakes.
//
// A user mistake is a Diagnostic with a source location (Diagnostics.h) and
// exit status 1. A broken invariant inside tilet throws InternalError, which
// main() reports as "internal compiler error" with tilet's file and line and
// exit status 70 -- it is never blamed on the input.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tilet {

class InternalError : public std::runtime_error {
public:
    InternalError(const char *file, int line, const std::string &message)
        : std::runtime_error(message), file_(file), line_(line) {}
    const char *file() const { return file_; }
    int line() const { return line_; }

private:
    const char *file_;
    int line_;
};

// Exit status for internal errors (EX_SOFTWARE from sysexits.h).
constexpr int kInternalErrorExitCode = 70;

} // namespace tilet

#define TILET_INTERNAL_ERROR(stream_expr)                                        \
    do {                                                                         \
        std::ostringstream tilet_ie_os_;                                         \
        tilet_ie_os_ << stream_expr;                                             \
        throw ::tilet::InternalError(__FILE__, __LINE__, tilet_ie_os_.str());    \
    } while (0)

#define TILET_ASSERT(cond, stream_expr)                                          \
    do {                                                                         \
        if (!(cond)) TILET_INTERNAL_ERROR("assertion '" #cond "' failed: " << stream_expr); \
    } while (0)
