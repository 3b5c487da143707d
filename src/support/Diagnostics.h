// Diagnostics.h -- the one diagnostics engine every stage reports through.
//
// Rendering follows clang:
//
//   file:line:col: error: message
//     source line
//     ^~~~~
//
// Notes attach to the diagnostic before them. Messages are lowercase, have no
// final period, and quote user names in single quotes.
#pragma once

#include "support/SourceManager.h"

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilet {

enum class Severity { Note, Remark, Warning, Error };

const char *severityName(Severity s);

struct Diagnostic {
    Severity severity = Severity::Error;
    SourceRange range;           // invalid: a diagnostic about no particular place
    std::string message;
    std::string flag;            // warning group, e.g. "unused-define" (-Wno-unused-define)
    std::vector<Diagnostic> notes;
    bool showSource = true;      // print the source line and caret
    std::string rule = "";       // what kind of problem: the stage that found it ("syntax", a pass name); set by report()

    Diagnostic &note(SourceRange where, std::string text) {
        notes.push_back(Diagnostic{Severity::Note, where, std::move(text), {}, {}, true});
        return *this;
    }
};

enum class ColorMode { Auto, Always, Never };

// How diagnostics are written: clang-style text; one JSON object per line
// (the location fields of --explain=json); or one SARIF 2.1.0 log at the end.
enum class DiagnosticFormat { Text, Json, Sarif };

// `s` as a JSON string literal (quotes included).
std::string jsonString(const std::string &s);

// Every warning group tilet reports (the NAME of -Wno-NAME).
const std::vector<std::string> &warningGroups();

// Decides whether to colour stderr: an explicit --color wins, then NO_COLOR
// (set and non-empty), then TERM=dumb, then whether stderr is a terminal.
bool shouldUseColor(ColorMode mode);

// Thrown when the error limit is reached; the driver stops and exits 1.
struct TooManyErrors : std::runtime_error {
    TooManyErrors() : std::runtime_error("too many errors") {}
};

class DiagnosticEngine {
public:
    DiagnosticEngine(const SourceManager &sources, std::ostream &out);

    void setColor(bool color) { color_ = color; }
    void setMaxErrors(unsigned n) { maxErrors_ = n; }
    void setWarningsEnabled(bool on) { warningsEnabled_ = on; }
    void setFormat(DiagnosticFormat f) { format_ = f; }
    void setWarningsAsErrors(bool on) { warningsAsErrors_ = on; }   // -Werror
    void disableWarning(const std::string &group) { disabled_.push_back(group); }   // -Wno-GROUP
    // The stage reporting from now on ("command-line", "syntax", "semantic",
    // or a pass name): the rule of its errors in JSON and SARIF output.
    void setStage(std::string stage) { stage_ = std::move(stage); }

    // Renders the diagnostic now. Throws TooManyErrors after the limit.
    void report(Diagnostic diag);

    // While a context is open, every error and warning reported ends with its
    // note, the innermost first ("in the call of fn 'f' here": an inlined
    // body's errors say which call they come from).
    void pushContext(SourceRange where, std::string text) { context_.push_back({where, std::move(text)}); }
    void popContext() { context_.pop_back(); }

    void error(SourceRange where, std::string message) {
        report(Diagnostic{Severity::Error, where, std::move(message), {}, {}});
    }
    void warning(SourceRange where, std::string message, std::string flag) {
        report(Diagnostic{Severity::Warning, where, std::move(message), std::move(flag), {}});
    }
    void remark(SourceRange where, std::string message) {
        report(Diagnostic{Severity::Remark, where, std::move(message), {}, {}});
    }

    unsigned errorCount() const { return errors_; }
    unsigned warningCount() const { return warnings_; }
    bool hasErrors() const { return errors_ > 0; }
    const std::vector<Diagnostic> &reported() const { return reported_; }
    const SourceManager &sources() const { return sources_; }

    // Text: "2 errors generated." and the like (nothing when there was
    // nothing); SARIF: the whole log.
    void printSummary();

private:
    std::vector<std::pair<SourceRange, std::string>> context_;
    void render(const Diagnostic &diag);
    void renderText(const Diagnostic &diag);
    void renderJson(const Diagnostic &diag);
    void printSarif();
    DiagnosticFormat format_ = DiagnosticFormat::Text;
    std::string stage_ = "command-line";
    bool warningsAsErrors_ = false;
    std::vector<std::string> disabled_;
    const SourceManager &sources_;
    std::ostream &out_;
    bool color_ = false;
    bool warningsEnabled_ = true;
    unsigned maxErrors_ = 20;
    unsigned errors_ = 0;
    unsigned warnings_ = 0;
    std::vector<Diagnostic> reported_;
};

} // namespace tilet
