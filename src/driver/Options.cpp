// Options.cpp -- command-line parsing with CLI11.
//
// CLI11's own exit codes (105, 106, ...) are replaced by 1, as compilers
// report usage errors; --help and --version print to stdout and exit 0.
#include "driver/Options.h"

#include "frontend/Parser.h"
#include "passes/Pipeline.h"
#include "support/MakeDeps.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

namespace tilet {

namespace {

// CLI11 takes no multi-letter options after one dash: -Werror, -Wno-NAME
// and the -M family are spelled for it as long options (-MF FILE and -MFFILE
// alike).
std::vector<std::string> gccSpellings(int argc, char **argv) {
    static const std::vector<std::pair<std::string, std::string>> withValue = {
        {"-MF", "--dep-file"}, {"-MT", "--dep-target"}, {"-MQ", "--dep-target-quoted"}};
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-Werror") a = "--warnings-as-errors";
        else if (a.rfind("-Wno-", 0) == 0) a = "--no-warning=" + a.substr(5);
        else if (a == "-M") a = "--deps-only";
        else if (a == "-MD" || a == "-MMD") a = "--deps";
        else if (a == "-MP") a = "--dep-phony";
        for (const auto &[gcc, option] : withValue) {
            if (a == gcc) a = option;
            else if (a.rfind(gcc, 0) == 0) a = option + "=" + a.substr(gcc.size());
        }
        args.push_back(a);
    }
    return args;
}

} // namespace

ParseResult parseCommandLine(int argc, char **argv) {
    Options opts;
    CLI::App app{"tilet -- translates a tile-language kernel (.tl) into a self-contained CUDA file (.cu) and its host "
                 "launch code (.host.cpp, .h).",
                 "tilet"};
    app.set_version_flag("--version", std::string("tilet ") + kVersion);
    app.footer("Examples:\n"
               "  tilet softmax.tl -o softmax.cu            writes softmax.cu, softmax.host.cpp, softmax.h\n"
               "  tilet gemm.tl --arch sm_80 -D M=1024 -o gemm.cu\n"
               "  tilet gemm.tl --arch sm_80,sm_90a,sm_100a -o libgemm.so   one library for three GPU generations\n"
               "  tilet gemm.tl --explain -o gemm.cu        one remark per lowering decision\n"
               "  tilet gemm.tl -Werror -Wno-unused-define  warnings are errors, but not unused -D\n"
               "Warning groups (-Wno-NAME): " + [] {
                   std::string s;
                   for (const std::string &g : warningGroups()) s += (s.empty() ? "" : ", ") + g;
                   return s;
               }() + ".\n"
               "Exit status: 0 success, 1 error in the input or the command line, 70 internal error.");
    app.add_option("input", opts.input, "the .tl file to translate ('-' reads standard input)")->required();
    app.add_option("-o,--output", opts.output,
                   "the .cu file to write; OUT.host.cpp and OUT.h are written beside it ('-' writes the .cu to stdout); "
                   "libNAME.so: build the shared library with nvcc (CUDA_HOME, PATH) and write NAME.h beside it");
    app.add_option("--arch", opts.arch,
                   std::string("target architecture (default: the file's `target`, else ") + kDefaultArch +
                       "); a comma-separated list (sm_80,sm_90a,sm_100a) writes one .cu with a variant per architecture, "
                       "and launch functions that run the variant for the current device");
    app.add_option("--symbol-prefix", opts.symbolPrefix,
                   "put P before every exported symbol (launch, init and kernel functions), so that several translations link into one binary");
    app.add_option("-D,--define", opts.defines, "override a constant: -D NAME=VALUE (NAME alone means 1)");
    app.add_option("-I", opts.includeDirs, "search DIR for imports, after the importing file's directory");
    app.add_option("--target-file", opts.targetFiles, "YAML file adding or overriding target descriptions");
    app.add_option("--emit", opts.emit, "what to write: cuda (default), ast, ir (before the passes), lowered-ir, emulator (the .cu and .host.cpp as one C++ source for the CPU emulator)")
        ->check(CLI::IsMember({"cuda", "ast", "ir", "lowered-ir", "emulator"}));
    std::vector<std::string> passChoices = passNames();
    passChoices.push_back("all");
    app.add_option("--dump-ir-after", opts.dumpAfter, "print the IR after the named pass, or after every pass, to stderr")
        ->check(CLI::IsMember(passChoices));
    app.add_option("--explain", opts.explain, "print one remark per lowering decision (text) or JSON lines (json)")
        ->expected(0, 1)
        ->default_str("text")
        ->check(CLI::IsMember({"text", "json"}));
    app.add_flag("--cpu", opts.cpu,
                 "with -o libNAME.so: build the library for the CPU, the kernels run by the emulator (its race detector included) and "
                 "compiled with the system's C++ compiler (CXX); needs the CUDA toolkit's headers, not a GPU");
    app.add_option("--python", opts.python,
                   "also write FILE.py, a Python binding of the launch functions (ctypes, standard library only) for the library built from "
                   "the outputs: load it with FILE.load(\"libNAME.so\")");
    app.add_flag("!--no-line-directives", opts.lineDirectives,
                 "leave #line directives out of the .cu (by default they point nvcc's messages, debuggers and sanitizers at the .tl lines)");
    app.add_flag("--time-report", opts.timeReport, "print the time each phase and pass took (milliseconds) to stderr");
    app.add_flag("--validate", opts.validate, "compile the generated .cu with nvcc for the target and fail if nvcc does");
    app.add_flag("-w", opts.noWarnings, "suppress warnings");
    app.add_flag("--warnings-as-errors", opts.warningsAsErrors, "report warnings as errors (also spelled -Werror)");
    app.add_option("--no-warning", opts.disabledWarnings, "suppress one warning group (also spelled -Wno-NAME)")
        ->check(CLI::IsMember(warningGroups()));
    app.add_flag("--deps-only", opts.depsOnly, "-M: print the make rule of the outputs' dependencies (to -MF or stdout) and translate nothing");
    app.add_flag("--deps", opts.depsAlongside, "-MD / -MMD: also write the make rule, to -MF or OUTPUT with .d for .cu");
    app.add_option("--dep-file", opts.depFile, "-MF FILE: where the dependency rule goes");
    std::vector<std::string> rawTargets, quotedTargets;
    app.add_option("--dep-target", rawTargets, "-MT TARGET: the rule's target instead of the outputs (repeatable)");
    app.add_option("--dep-target-quoted", quotedTargets, "-MQ TARGET: the same, quoted for make");
    app.add_flag("--dep-phony", opts.depPhony, "-MP: an empty rule for every import, so that deleting one does not break make");
    std::string format = "text";
    app.add_option("--diagnostics-format", format, "text (default), json (one object per line) or sarif (a SARIF 2.1.0 log)")
        ->check(CLI::IsMember({"text", "json", "sarif"}));
    std::string color = "auto";
    app.add_option("--color", color, "colour diagnostics: auto (default; honours NO_COLOR and TERM=dumb), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    app.add_option("--max-errors", opts.maxErrors, "stop after N errors (0: no limit)");
    app.add_option("--max-nesting", opts.maxNesting,
                   "how deeply brackets, operator chains and statements may nest (default " + std::to_string(kDefaultMaxNesting) + ")")
        ->check(CLI::Range(1u, kMaxNestingLimit));

    const std::vector<std::string> args = gccSpellings(argc, argv);
    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());   // CLI11's vector form reads them back to front
        app.parse(reversed);
    } catch (const CLI::CallForHelp &e) {
        std::cout << app.help();
        return {std::nullopt, 0};
    } catch (const CLI::CallForVersion &e) {
        std::cout << e.what() << "\n";
        return {std::nullopt, 0};
    } catch (const CLI::ParseError &e) {
        std::cerr << "tilet: error: " << e.what() << "\n";
        std::cerr << "run 'tilet --help' for usage\n";
        return {std::nullopt, 1};
    }
    if (app.count("--explain") && opts.explain.empty()) opts.explain = "text";
    // -MT and -MQ targets keep their command-line order (CLI11 keeps each kind's own).
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        bool quoted = a.rfind("--dep-target-quoted", 0) == 0, raw = !quoted && a.rfind("--dep-target", 0) == 0;
        if (!quoted && !raw) continue;
        size_t eq = a.find('=');
        std::string value = eq != std::string::npos ? a.substr(eq + 1) : i + 1 < args.size() ? args[i + 1] : "";
        opts.depTargets.push_back(quoted ? makeQuoted(value) : value);
    }
    (void)rawTargets;
    (void)quotedTargets;
    opts.diagnosticsFormat = format == "json" ? DiagnosticFormat::Json : format == "sarif" ? DiagnosticFormat::Sarif : DiagnosticFormat::Text;
    opts.color = color == "always" ? ColorMode::Always : color == "never" ? ColorMode::Never : ColorMode::Auto;
    return {opts, 0};
}

} // namespace tilet
