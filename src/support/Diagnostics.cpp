#include "support/Diagnostics.h"

#include <cstdlib>
#include <ostream>
#include <unistd.h>

namespace tilet {

namespace {
const char *kReset = "\033[0m";
const char *kBold = "\033[1m";
const char *kRed = "\033[1;31m";
const char *kMagenta = "\033[1;35m";
const char *kCyan = "\033[1;36m";
const char *kBlue = "\033[1;34m";
const char *kGreen = "\033[1;32m";

const char *severityColor(Severity s) {
    switch (s) {
    case Severity::Error: return kRed;
    case Severity::Warning: return kMagenta;
    case Severity::Remark: return kBlue;
    case Severity::Note: return kCyan;
    }
    return kBold;
}
} // namespace

const char *severityName(Severity s) {
    switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Remark: return "remark";
    case Severity::Note: return "note";
    }
    return "error";
}

bool shouldUseColor(ColorMode mode) {
    if (mode == ColorMode::Always) return true;
    if (mode == ColorMode::Never) return false;
    const char *noColor = std::getenv("NO_COLOR");
    if (noColor && *noColor) return false;
    const char *term = std::getenv("TERM");
    if (term && std::string(term) == "dumb") return false;
    return isatty(STDERR_FILENO) != 0;
}

DiagnosticEngine::DiagnosticEngine(const SourceManager &sources, std::ostream &out)
    : sources_(sources), out_(out) {}

void DiagnosticEngine::report(Diagnostic diag) {
    const Severity severity = diag.severity;
    if (severity == Severity::Warning && !warningsEnabled_) return;
    if (severity == Severity::Error) ++errors_;
    if (severity == Severity::Warning) ++warnings_;
    render(diag);
    for (const Diagnostic &note : diag.notes) render(note);
    reported_.push_back(std::move(diag));
    if (severity == Severity::Error && maxErrors_ != 0 && errors_ >= maxErrors_) {
        Diagnostic stop{Severity::Error, {}, "too many errors emitted, stopping now [--max-errors]", {}, {}, true};
        render(stop);
        throw TooManyErrors();
    }
}

void DiagnosticEngine::render(const Diagnostic &diag) {
    auto paint = [&](const char *code) {
        if (color_) out_ << code;
    };
    paint(kBold);
    if (diag.range.valid()) {
        const SourceLoc &b = diag.range.begin;
        out_ << sources_.name(b.file) << ':' << b.line << ':' << b.col << ": ";
    } else {
        out_ << "tilet: ";
    }
    paint(kReset);
    paint(severityColor(diag.severity));
    out_ << severityName(diag.severity) << ": ";
    paint(kReset);
    paint(kBold);
    out_ << diag.message;
    if (diag.severity == Severity::Warning && !diag.flag.empty()) out_ << " [-W" << diag.flag << ']';
    paint(kReset);
    out_ << '\n';
    if (!diag.range.valid() || !diag.showSource) return;

    // The source line, then a caret under the first character and tildes under
    // the rest of the range on that line. Tabs in the source are copied into
    // the marker line so the caret lines up whatever the tab width.
    const SourceLoc &b = diag.range.begin;
    std::string_view line = sources_.line(b.file, b.line);
    out_ << "  " << line << '\n';
    uint32_t lastCol = diag.range.end.line == b.line ? diag.range.end.col : countCodePoints(line);
    if (lastCol < b.col) lastCol = b.col;
    std::string marker;
    uint32_t col = 1;
    for (size_t i = 0; i < line.size() && col < b.col; ++i) {
        unsigned char c = static_cast<unsigned char>(line[i]);
        if ((c & 0xC0) == 0x80) continue;
        marker += c == '\t' ? '\t' : ' ';
        ++col;
    }
    while (col < b.col) { marker += ' '; ++col; }   // a position just past the line end
    marker += '^';
    for (uint32_t c = b.col + 1; c <= lastCol; ++c) marker += '~';
    out_ << "  ";
    paint(kGreen);
    out_ << marker;
    paint(kReset);
    out_ << '\n';
}

void DiagnosticEngine::printSummary() {
    if (errors_ == 0 && warnings_ == 0) return;
    auto plural = [](unsigned n, const char *word) {
        return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
    };
    if (warnings_ && errors_) out_ << plural(warnings_, "warning") << " and " << plural(errors_, "error");
    else if (errors_) out_ << plural(errors_, "error");
    else out_ << plural(warnings_, "warning");
    out_ << " generated.\n";
}

} // namespace tilet
