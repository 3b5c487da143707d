// Options.h -- the command line of `tilet`.
#pragma once

#include "frontend/Parser.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace tilet {

struct Options {
    std::string input;                     // a path, or "-" for standard input
    std::string output;                    // -o; empty: derived from the input
    std::string arch;                      // --arch (a comma-separated list: one variant each); empty: the file's target, else sm_90a
    std::string symbolPrefix;              // --symbol-prefix: before every exported symbol
    std::vector<std::string> defines;      // -D NAME=VALUE
    std::vector<std::string> includeDirs;  // -I DIR
    std::vector<std::string> targetFiles;  // --target-file FILE
    std::string emit = "cuda";             // ast | ir | lowered-ir | cuda
    std::string dumpAfter;                 // --dump-ir-after PASS|all
    std::string explain;                   // "", "text" or "json"
    bool validate = false;
    bool timeReport = false;               // --time-report: time per phase and pass, to stderr
    std::string python;                    // --python FILE.py: also write the ctypes binding
    bool cpu = false;                      // --cpu: -o libk.so runs the kernels on the CPU, through the emulator
    bool lineDirectives = true;            // #line in the .cu, pointing at the .tl source (--no-line-directives)
    bool noWarnings = false;               // -w
    bool warningsAsErrors = false;         // -Werror
    std::vector<std::string> disabledWarnings;   // -Wno-NAME
    DiagnosticFormat diagnosticsFormat = DiagnosticFormat::Text;   // --diagnostics-format
    // Make dependency files, as gcc writes them.
    bool depsOnly = false;                 // -M: the rule only, no translation
    bool depsAlongside = false;            // -MD / -MMD: the rule beside the outputs
    std::string depFile;                   // -MF FILE
    std::vector<std::string> depTargets;   // -MT / -MQ, in order (-MQ ones already make-quoted)
    bool depPhony = false;                 // -MP: a phony rule per import
    ColorMode color = ColorMode::Auto;
    unsigned maxErrors = 20;
    unsigned maxNesting = kDefaultMaxNesting;   // --max-nesting
};

constexpr const char *kVersion = "0.1.0";
constexpr const char *kDefaultArch = "sm_90a";

// Parses argv. Returns the options, or an exit status when the run is over
// (0 after --help / --version, 1 after a usage error, already reported).
struct ParseResult {
    std::optional<Options> options;
    int exitCode = 0;
};
ParseResult parseCommandLine(int argc, char **argv);

} // namespace tilet
