#include "support/Diagnostics.h"

#include <algorithm>
#include <cstdio>
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

const std::vector<std::string> &warningGroups() {
    static const std::vector<std::string> groups = {"cluster", "dead-branch", "empty-loop", "int-division", "spill", "swizzle", "unchecked-protocol", "unused-define"};
    return groups;
}

void DiagnosticEngine::report(Diagnostic diag) {
    if (diag.severity == Severity::Warning) {
        if (!warningsEnabled_) return;
        for (const std::string &g : disabled_)
            if (g == diag.flag) return;
        if (warningsAsErrors_) diag.severity = Severity::Error;   // the flag stays: [-Werror,-Wflag]
    }
    if (diag.rule.empty()) diag.rule = stage_;
    for (Diagnostic &n : diag.notes)
        if (n.rule.empty()) n.rule = diag.rule;   // a note belongs to its diagnostic's rule
    if (diag.severity == Severity::Error || diag.severity == Severity::Warning)
        for (auto it = context_.rbegin(); it != context_.rend(); ++it) diag.note(it->first, it->second);
    const Severity severity = diag.severity;
    if (severity == Severity::Error) ++errors_;
    if (severity == Severity::Warning) ++warnings_;
    render(diag);
    for (const Diagnostic &note : diag.notes) render(note);
    reported_.push_back(std::move(diag));
    if (severity == Severity::Error && maxErrors_ != 0 && errors_ >= maxErrors_) {
        Diagnostic stop{Severity::Error, {}, "too many errors emitted, stopping now [--max-errors]", {}, {}, true, stage_};
        render(stop);
        reported_.push_back(std::move(stop));
        throw TooManyErrors();
    }
}

void DiagnosticEngine::render(const Diagnostic &diag) {
    switch (format_) {
    case DiagnosticFormat::Text: renderText(diag); return;
    case DiagnosticFormat::Json: renderJson(diag); return;
    case DiagnosticFormat::Sarif: return;   // the log is written at the end
    }
}

void DiagnosticEngine::renderText(const Diagnostic &diag) {
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
    if (!diag.flag.empty()) out_ << (diag.severity == Severity::Error ? " [-Werror,-W" : " [-W") << diag.flag << ']';
    paint(kReset);
    out_ << '\n';
    if (!diag.range.valid() || !diag.showSource) return;

    // The source line, then a caret under the first character and tildes under
    // the rest of the range on that line. Tabs in the source are copied into
    // the marker line so the caret lines up whatever the tab width.
    const SourceLoc &b = diag.range.begin;
    std::string_view line = sources_.line(b.file, b.line);
    // Other control characters print as spaces (one column each, as they
    // count): a vertical tab or form feed copied through would start a new
    // line in the terminal and in tools that split the output into lines.
    std::string shown(line);
    for (char &c : shown)
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = ' ';
    out_ << "  " << shown << '\n';
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

std::string jsonString(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

namespace {

// A diagnostic's rule: the warning group, or the stage that found the
// problem (an --explain remark is a "decision").
std::string ruleId(const Diagnostic &d) {
    if (!d.flag.empty()) return d.flag;
    if (d.severity == Severity::Remark) return "decision";
    return d.rule.empty() ? "error" : d.rule;
}

} // namespace

void DiagnosticEngine::renderJson(const Diagnostic &diag) {
    // The location fields are those of --explain=json; columns count code points.
    auto one = [&](const Diagnostic &d) {
        std::string s = "{\"file\":" + jsonString(d.range.valid() ? sources_.name(d.range.begin.file) : "") +
                        ",\"line\":" + std::to_string(d.range.begin.line) + ",\"column\":" + std::to_string(d.range.begin.col) +
                        ",\"end_line\":" + std::to_string(d.range.end.line) + ",\"end_column\":" + std::to_string(d.range.end.col) +
                        ",\"severity\":" + jsonString(severityName(d.severity)) + ",\"rule\":" + jsonString(ruleId(d)) + ",\"message\":" + jsonString(d.message);
        return s;
    };
    if (diag.severity == Severity::Note) return;   // notes travel inside their diagnostic
    out_ << one(diag) << ",\"notes\":[";
    for (size_t i = 0; i < diag.notes.size(); ++i) out_ << (i ? "," : "") << one(diag.notes[i]) << "}";
    out_ << "]}\n";
}

void DiagnosticEngine::printSarif() {
    auto location = [&](const Diagnostic &d) {
        if (!d.range.valid()) return std::string();
        // SARIF regions end one column after the last character.
        return "{\"physicalLocation\":{\"artifactLocation\":{\"uri\":" + jsonString(sources_.name(d.range.begin.file)) +
               "},\"region\":{\"startLine\":" + std::to_string(d.range.begin.line) + ",\"startColumn\":" + std::to_string(d.range.begin.col) +
               ",\"endLine\":" + std::to_string(d.range.end.line) + ",\"endColumn\":" + std::to_string(d.range.end.col + 1) + "}}" +
               (d.severity == Severity::Note ? ",\"message\":{\"text\":" + jsonString(d.message) + "}" : "") + "}";
    };
    std::vector<std::string> rules;
    std::string results;
    for (const Diagnostic &d : reported_) {
        std::string rule = ruleId(d);
        if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
        std::string level = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "note";
        std::string loc = location(d), related;
        for (const Diagnostic &n : d.notes) {
            // A note about no particular place is a related location with only its message.
            std::string l = location(n);
            if (l.empty()) l = "{\"message\":{\"text\":" + jsonString(n.message) + "}}";
            related += (related.empty() ? "" : ",") + l;
        }
        results += std::string(results.empty() ? "" : ",") + "{\"ruleId\":" + jsonString(rule) + ",\"level\":" + jsonString(level) +
                   ",\"message\":{\"text\":" + jsonString(d.message) + "}" + (loc.empty() ? "" : ",\"locations\":[" + loc + "]") +
                   (related.empty() ? "" : ",\"relatedLocations\":[" + related + "]") + "}";
    }
    std::string ruleList;
    for (const std::string &r : rules) ruleList += std::string(ruleList.empty() ? "" : ",") + "{\"id\":" + jsonString(r) + "}";
    out_ << "{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":{"
         << "\"name\":\"tilet\",\"rules\":[" << ruleList << "]}},\"columnKind\":\"unicodeCodePoints\",\"results\":[" << results << "]}]}\n";
}

void DiagnosticEngine::printSummary() {
    if (format_ == DiagnosticFormat::Sarif) {
        printSarif();
        return;
    }
    if (format_ == DiagnosticFormat::Json) return;
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
