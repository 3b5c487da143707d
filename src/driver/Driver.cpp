// Driver.cpp -- the stages of one run, in order:
//   targets -> load (with imports) -> [ast] -> target choice -> sema -> [ir]
//   -> passes -> [lowered-ir] -> print -> write atomically -> [validate].
// Any user error stops the run before anything is written.
#include "driver/Driver.h"

#include "support/MakeDeps.h"

#include "codegen/CudaPrinter.h"
#include "codegen/Emulation.h"
#include "codegen/HostPrinter.h"
#include "codegen/PythonPrinter.h"
#include "frontend/ModuleLoader.h"
#include "ir/Printer.h"
#include "passes/Pipeline.h"
#include "sema/Sema.h"
#include "support/BigStack.h"
#include "support/Embedded.h"
#include "support/Files.h"
#include "support/InternalError.h"
#include "support/PhaseTimes.h"
#include "target/Target.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace tilet {

namespace fs = std::filesystem;

namespace {

struct OutputPaths {
    bool toStdout = false;
    std::string cu, host, header;
    // -o libNAME.so: the shared library nvcc builds from the .cu and the
    // .host.cpp (written to a temporary directory); the header goes beside it.
    std::string library;
    OutputNames names;
};

std::string moduleIdentifier(const std::string &stem) {
    std::string id;
    for (char c : stem) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "tl_" + id;
    return id;
}

OutputPaths outputPaths(const Options &o) {
    OutputPaths p;
    std::string inputStem = o.input == "-" ? "tilet" : fs::path(o.input).stem().string();
    if (o.output == "-" || (o.output.empty() && o.input == "-")) {
        p.toStdout = true;
        p.names = {inputStem + ".cu", inputStem + ".host.cpp", inputStem + ".h", moduleIdentifier(inputStem), o.symbolPrefix};
        return p;
    }
    if (fs::path(o.output).extension() == ".so") {
        fs::path lib(o.output);
        std::string stem = lib.stem().string();
        if (stem.rfind("lib", 0) == 0 && stem.size() > 3) stem = stem.substr(3);
        p.library = o.output;
        p.header = (lib.parent_path() / (stem + ".h")).string();
        p.names = {stem + ".cu", stem + ".host.cpp", stem + ".h", moduleIdentifier(stem), o.symbolPrefix};
        return p;
    }
    p.cu = o.output.empty() ? inputStem + ".cu" : o.output;
    fs::path cu(p.cu);
    std::string stem = (cu.parent_path() / cu.stem()).string();
    p.host = stem + ".host.cpp";
    p.header = stem + ".h";
    p.names = {cu.filename().string(), fs::path(p.host).filename().string(), fs::path(p.header).filename().string(),
               moduleIdentifier(fs::path(stem).filename().string()), o.symbolPrefix};
    return p;
}

bool parseDefines(const std::vector<std::string> &raw, std::vector<Define> &out, DiagnosticEngine &diags) {
    bool ok = true;
    for (const std::string &d : raw) {
        size_t eq = d.find('=');
        Define def{d.substr(0, eq), eq == std::string::npos ? "1" : d.substr(eq + 1)};
        bool legal = !def.name.empty() && (std::isalpha(static_cast<unsigned char>(def.name[0])) || def.name[0] == '_');
        for (char c : def.name) legal = legal && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
        if (!legal) {
            diags.error({}, "invalid -D '" + d + "': expected NAME=VALUE");
            ok = false;
            continue;
        }
        out.push_back(def);
    }
    return ok;
}

std::optional<std::string> readText(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// nvcc, found the usual way: $NVCC, $CUDA_HOME/bin, PATH, /usr/local/cuda/bin;
// empty when there is none.
std::string findNvcc() {
    auto executable = [](const std::string &p) { return !p.empty() && access(p.c_str(), X_OK) == 0; };
    if (const char *env = std::getenv("NVCC"); env && *env) return env;
    if (const char *home = std::getenv("CUDA_HOME"); home && *home && executable(std::string(home) + "/bin/nvcc")) return std::string(home) + "/bin/nvcc";
    if (const char *path = std::getenv("PATH")) {
        std::stringstream dirs(path);
        for (std::string dir; std::getline(dirs, dir, ':');)
            if (executable(dir + "/nvcc")) return dir + "/nvcc";
    }
    return executable("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : "";
}

std::string shellQuoted(const std::string &s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Runs `args` (through the shell, each quoted); returns the exit status (-1
// when it could not run) and the combined output.
int runCommand(const std::vector<std::string> &args, std::string &output) {
    std::string cmd;
    for (const std::string &a : args) cmd += (cmd.empty() ? "" : " ") + shellQuoted(a);
    FILE *pipe = popen((cmd + " 2>&1").c_str(), "r");
    if (!pipe) {
        output = "cannot run " + args.front();
        return -1;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A temporary directory, removed with the object.
struct TempDir {
    std::string path;
    TempDir() {
        char dir[] = "/tmp/tilet-XXXXXX";
        if (mkdtemp(dir)) path = dir;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
};

// `nvcc -gencode VALUE ... rest...`: one -gencode per target of `variants`.
std::vector<std::string> nvccCommand(const std::string &nvcc, const Variants &variants, std::initializer_list<std::string> rest) {
    std::vector<std::string> args{nvcc};
    for (const Variant &v : variants) {
        args.push_back("-gencode");
        args.push_back(v.target.gencode);
    }
    args.insert(args.end(), rest);
    return args;
}

// Runs nvcc on `cuPath`; returns its exit status and combined output.
int runNvcc(const Variants &variants, const std::string &cuPath, std::string &output) {
    std::string nvcc = findNvcc();
    TempDir dir;
    if (dir.path.empty()) {
        output = "cannot create a temporary directory";
        return -1;
    }
    return runCommand(nvccCommand(nvcc.empty() ? "nvcc" : nvcc, variants, {"-c", cuPath, "-o", dir.path + "/out.o"}), output);
}

int finish(DiagnosticEngine &diags, int code) {
    diags.printSummary();
    return code;
}

// The library built at `built` replaces out.library, together with its
// header, the Python binding (`python`, for a `cpu` library or not) and the
// dependency rule: all of them or none. Returns the exit status.
int installLibrary(const Variants &variants, const OutputPaths &out, const std::string &built, const std::string &header,
                   const std::string &depPath, const std::string *depRule, const std::string &python, bool cpu, DiagnosticEngine &diags) {
    std::optional<std::string> library = readText(built);
    if (!library) {
        diags.error({}, "cannot build '" + out.library + "': the compiler wrote no library");
        return 1;
    }
    std::vector<PendingFile> files{{out.library, std::move(*library)}, {out.header, header}};
    if (!python.empty()) files.push_back({python, printPythonBinding(variants, out.names, python, cpu)});
    if (depRule) files.push_back({depPath, *depRule});
    std::string error;
    if (!writeFilesAtomically(files, error)) {
        diags.error({}, error);
        return 1;
    }
    return 0;
}

// The directory holding the CUDA toolkit's headers (cuda_fp16.h, ...), which
// the emulated source needs for CUDA's types: $CUDA_HOME/include, then
// /usr/local/cuda/include, then /usr/include; empty when none has them.
std::string findCudaInclude() {
    std::vector<std::string> dirs;
    if (const char *home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/include");
    dirs.push_back("/usr/local/cuda/include");
    dirs.push_back("/usr/include");
    for (const std::string &d : dirs)
        if (access((d + "/cuda_fp16.h").c_str(), R_OK) == 0 && access((d + "/cuda_runtime.h").c_str(), R_OK) == 0) return d;
    return "";
}

// --cpu -o libNAME.so: the same C ABI run by the emulator (templates/emu,
// embedded): the emulated source and the emulator's headers in a temporary
// directory, compiled with $CXX (else c++) into a shared library. Returns
// the exit status, as buildLibrary does.
int buildCpuLibrary(const Variants &variants, const OutputPaths &out, const std::string &cu, const std::string &depPath,
                    const std::string *depRule, const std::string &python, DiagnosticEngine &diags) {
    const ir::Module &module = variants.front().module;
    const Target &target = variants.front().target;
    auto fail = [&](const std::string &why) {
        Diagnostic d{Severity::Error, {}, "cannot build '" + out.library + "' for the CPU: " + why, {}, {}};
        d.rule = "command-line";
        diags.report(std::move(d));
        return 1;
    };
    std::string cudaInclude = findCudaInclude();
    if (cudaInclude.empty()) return fail("the emulator needs the CUDA toolkit's headers (cuda_fp16.h, cuda_runtime.h) for CUDA's types; set CUDA_HOME");
    const char *cxxEnv = std::getenv("CXX");
    std::string cxx = cxxEnv && *cxxEnv ? cxxEnv : "c++";
    std::string source;
    try {
        source = emulatedSource(cu, printHostSource(variants, out.names), out.names.cuFile, out.names.hostFile);
    } catch (const std::runtime_error &e) {
        return fail(std::string(e.what()) + " (in the program's own CUDA, import_source)");
    }
    TempDir dir;
    std::string header = printHostHeader(variants, out.names), error;
    std::vector<PendingFile> sources{{dir.path + "/" + out.names.headerFile, header}, {dir.path + "/emulated.cpp", source}};
    for (const char *h : {"emu/emu.h", "emu/racecheck.h", "emu/tf32.h"})
        sources.push_back({dir.path + "/" + fs::path(h).filename().string(), std::string(embedded::get(h))});
    if (dir.path.empty() || !writeFilesAtomically(sources, error)) return fail(dir.path.empty() ? "cannot create a temporary directory" : error);
    const std::string libPath = dir.path + "/" + fs::path(out.library).filename().string();
    std::string log;
    int status = runCommand({cxx, "-std=c++20", "-O1", "-fno-strict-aliasing", "-w", "-shared", "-fPIC", "-pthread", "-I", dir.path, "-I",
                             cudaInclude, dir.path + "/emulated.cpp", "-o", libPath},
                            log);
    if (status < 0 || status == 127) return fail("could not run " + cxx + " (set CXX): " + log);
    if (status != 0) {
        std::cerr << log;
        if (!module.importedSources.empty()) return fail(cxx + " failed (above); the program's own CUDA (import_source) may be the cause");
        std::cerr << "tilet: internal compiler error: " << cxx << " rejected the emulated code for " << target.name
                  << "; please report this with the input file\n";
        return kInternalErrorExitCode;
    }
    return installLibrary(variants, out, libPath, header, depPath, depRule, python, true, diags);
}

// -o libNAME.so: nvcc builds the .cu (for the target) and the .host.cpp into
// one shared library, in a temporary directory; the library, its header and
// the dependency rule then replace their destinations together. Returns the
// exit status: 1 for a missing nvcc or an nvcc error the program's own CUDA
// (import_source) may cause, 70 for one in tilet's code.
int buildLibrary(const Variants &variants, const OutputPaths &out, const std::string &cu, const std::string &depPath,
                 const std::string *depRule, const std::string &python, DiagnosticEngine &diags) {
    const ir::Module &module = variants.front().module;
    std::string nvcc = findNvcc();
    if (nvcc.empty()) {
        Diagnostic d{Severity::Error, {}, "cannot build '" + out.library + "': nvcc not found (looked at $NVCC, $CUDA_HOME/bin, PATH and /usr/local/cuda/bin)", {}, {}};
        d.rule = "command-line";
        diags.report(std::move(d));
        return 1;
    }
    TempDir dir;
    std::string error;
    std::string header = printHostHeader(variants, out.names);
    const std::string cuPath = dir.path + "/" + out.names.cuFile, hostPath = dir.path + "/" + out.names.hostFile,
                      libPath = dir.path + "/" + fs::path(out.library).filename().string();
    if (dir.path.empty() || !writeFilesAtomically({{cuPath, cu},
                                                   {hostPath, printHostSource(variants, out.names)},
                                                   {dir.path + "/" + out.names.headerFile, header}},
                                                  error)) {
        diags.error({}, "cannot build '" + out.library + "': " + (dir.path.empty() ? std::string("cannot create a temporary directory") : error));
        return 1;
    }
    std::string log;
    int status = runCommand(nvccCommand(nvcc, variants, {"-shared", "-Xcompiler", "-fPIC", "-O3", "-o", libPath, cuPath, hostPath}), log);
    if (status != 0) {
        if (status < 0 || status == 127) {
            diags.error({}, "cannot build '" + out.library + "': could not run " + nvcc + ": " + log);
            return 1;
        }
        std::cerr << log;
        if (!module.importedSources.empty()) {
            diags.error({}, "nvcc could not build '" + out.library + "' (above); the .cu holds the program's own CUDA (import_source), which may be the cause");
            return 1;
        }
        std::cerr << "tilet: internal compiler error: nvcc rejected the generated code for " << targetList(variants)
                  << "; please report this with the input file\n";
        return kInternalErrorExitCode;
    }
    return installLibrary(variants, out, libPath, header, depPath, depRule, python, false, diags);
}

// The targets: --arch (a comma-separated list) wins over the file's
// declaration, else the default; in ascending order of compute capability,
// one per compute capability (nvcc's pass for it compiles that variant's
// code alone). Unknown or repeated names are errors.
std::vector<const Target *> chooseTargets(const Options &opts, TargetTable &targets, const std::optional<DeclaredTarget> &declared, DiagnosticEngine &diags) {
    std::vector<std::string> targetNames;
    if (!opts.arch.empty()) {
        std::stringstream list(opts.arch);
        for (std::string name; std::getline(list, name, ',');) targetNames.push_back(name);
        if (opts.arch.back() == ',') targetNames.push_back("");
    } else {
        targetNames.push_back(declared ? declared->name : kDefaultArch);
    }
    std::vector<const Target *> chosen;
    for (const std::string &name : targetNames) {
        const Target *target = targets.find(name);
        if (!target) {
            std::string known;
            for (const std::string &n : targets.names()) known += (known.empty() ? "" : ", ") + n;
            SourceRange where = opts.arch.empty() && declared ? declared->range : SourceRange{};
            Diagnostic d{Severity::Error, where, name.empty() ? "empty target name in --arch '" + opts.arch + "'" : "unknown target '" + name + "'", {}, {}};
            d.rule = opts.arch.empty() ? "semantic" : "command-line";   // a `target` line, or --arch
            d.note({}, "known targets: " + known);
            diags.report(std::move(d));
            continue;
        }
        // One variant per compute capability: nvcc's pass for it compiles that variant's code alone.
        auto same = std::find_if(chosen.begin(), chosen.end(), [&](const Target *t) { return t->arch == target->arch; });
        if (same != chosen.end()) {
            Diagnostic d{Severity::Error, {}, (*same)->name == target->name ? "target '" + name + "' is named twice in --arch"
                                                                             : "targets '" + (*same)->name + "' and '" + name + "' both compile for compute capability " +
                                                                                   std::to_string(target->arch / 10) + "." + std::to_string(target->arch % 10) +
                                                                                   "; a multi-architecture output holds one variant per compute capability", {}, {}};
            d.rule = "command-line";
            diags.report(std::move(d));
            continue;
        }
        chosen.push_back(target);
    }
    std::stable_sort(chosen.begin(), chosen.end(), [](const Target *a, const Target *b) { return a->arch < b->arch; });
    return chosen;
}

} // namespace

int tiletMain(int argc, char **argv) {
    try {
        ParseResult parsed = parseCommandLine(argc, argv);
        if (!parsed.options) return parsed.exitCode;
        const Options &options = *parsed.options;
        return runWithStack(translationStackBytes(options.maxNesting), [&] { return runTilet(options); });
    } catch (const std::bad_alloc &) {
        std::cerr << "tilet: error: out of memory\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "tilet: internal compiler error: unexpected exception: " << e.what()
                  << "\nplease report this with the input file; it is a bug in tilet, not in the input\n";
        return kInternalErrorExitCode;
    }
}

size_t translationStackBytes(unsigned maxNesting) {
    // Measured at 4,000 levels with --max-nesting=4096 (the resident size of
    // this thread's stack after the run): at most 2 KiB per level in the
    // normal build and 31 KiB in the ASan+UBSan build, whose frames are the
    // largest (4,000 nested `var`s: Sema, then every pass, over 4,000 nested
    // allocations). 128 KiB per level leaves a factor of four; the base is
    // room for a shallow program. Only the pages touched are committed.
    constexpr size_t kBase = size_t(64) << 20, kPerLevel = size_t(128) << 10;
    return kBase + kPerLevel * maxNesting;
}

int runTilet(const Options &opts) {
    SourceManager sources;
    DiagnosticEngine diags(sources, std::cerr);
    diags.setColor(shouldUseColor(opts.color));
    diags.setMaxErrors(opts.maxErrors);
    diags.setWarningsEnabled(!opts.noWarnings);
    diags.setWarningsAsErrors(opts.warningsAsErrors);
    for (const std::string &g : opts.disabledWarnings) diags.disableWarning(g);
    diags.setFormat(opts.diagnosticsFormat);
    // --time-report: where the translation's time went, printed however it ends.
    PhaseTimes times;
    PhaseTimes *timer = opts.timeReport ? &times : nullptr;
    struct PrintTimes {
        PhaseTimes *timer;
        ~PrintTimes() {
            if (timer) timer->print(std::cerr);
        }
    } printTimes{timer};

    try {
        // Targets: the built-in table, then the user's files in order.
        std::optional<PhaseScope> targetTime(std::in_place, timer, "targets");
        TargetTable targets;
        for (const std::string &path : opts.targetFiles) {
            std::optional<std::string> text = readText(path);
            if (!text) {
                diags.error({}, "cannot read target file '" + path + "'");
                continue;
            }
            targets.load(sources.add(path, std::move(*text)), sources, diags);
        }
        std::vector<Define> defines;
        parseDefines(opts.defines, defines, diags);
        bool prefixOk = opts.symbolPrefix.empty() || std::isalpha(static_cast<unsigned char>(opts.symbolPrefix[0])) || opts.symbolPrefix[0] == '_';
        for (char c : opts.symbolPrefix) prefixOk = prefixOk && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
        if (!prefixOk) diags.error({}, "invalid --symbol-prefix '" + opts.symbolPrefix + "': it starts C identifiers (letters, digits, '_', not a digit first)");
        if (!opts.python.empty()) {
            fs::path py(opts.python);
            std::string stem = py.stem().string();
            bool identifier = py.extension() == ".py" && !stem.empty() && !std::isdigit(static_cast<unsigned char>(stem[0]));
            for (char c : stem) identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
            if (!identifier) {
                Diagnostic d{Severity::Error, {}, "invalid --python '" + opts.python + "': a module file, NAME.py with NAME a Python identifier", {}, {}};
                d.rule = "command-line";
                diags.report(std::move(d));
            }
        }
        if (diags.hasErrors()) return finish(diags, 1);

        OutputPaths out = outputPaths(opts);
        out.names.lineDirectives = opts.lineDirectives;
        if (opts.depsAlongside && out.toStdout && opts.depFile.empty()) {
            diags.error({}, "-MD writes the dependency file beside the output; with the output on stdout, name it with -MF FILE");
            return finish(diags, 1);
        }
        targetTime.reset();
        diags.setStage("syntax");
        std::optional<PhaseScope> parseTime(std::in_place, timer, "parse");
        std::optional<LoadedProgram> program = loadProgram(opts.input, opts.includeDirs, sources, diags, opts.maxNesting);
        parseTime.reset();
        if (!program) return finish(diags, 1);

        // The make rule: every output depends on the main file and every import.
        std::string depRule;
        if (opts.depsOnly || opts.depsAlongside) {
            std::vector<std::string> targets = opts.depTargets, prerequisites;
            if (targets.empty()) {
                for (const std::string &t : out.toStdout           ? std::vector<std::string>{out.names.cuFile, out.names.hostFile, out.names.headerFile}
                                            : !out.library.empty() ? std::vector<std::string>{out.library, out.header}
                                                                   : std::vector<std::string>{out.cu, out.host, out.header})
                    targets.push_back(makeQuoted(t));
            }
            for (const std::string &p : program->openedPaths)
                if (p != "-") prerequisites.push_back(makeQuoted(p));
            depRule = dependencyRule(targets, prerequisites, opts.depPhony);
        }
        if (opts.depsOnly) {
            if (opts.depFile.empty()) {
                std::cout << depRule;
                return finish(diags, diags.hasErrors() ? 1 : 0);
            }
            std::string error;
            if (!writeFilesAtomically({{opts.depFile, depRule}}, error)) diags.error({}, error);
            return finish(diags, diags.hasErrors() ? 1 : 0);
        }
        std::string depPath = opts.depFile;
        const std::string &primary = out.library.empty() ? out.cu : out.library;
        if (opts.depsAlongside && depPath.empty()) depPath = (fs::path(primary).parent_path() / fs::path(primary).stem()).string() + ".d";
        if (opts.cpu && out.library.empty()) {
            Diagnostic d{Severity::Error, {}, "--cpu builds a library: name it with -o libNAME.so", {}, {}};
            d.rule = "command-line";
            diags.report(std::move(d));
            return finish(diags, 1);
        }
        if (!out.library.empty() && opts.emit != "cuda") {
            Diagnostic d{Severity::Error, {}, "-o " + out.library + " builds a shared library from the CUDA output; --emit=" + opts.emit + " writes text: name a file", {}, {}};
            d.rule = "command-line";
            diags.report(std::move(d));
            return finish(diags, 1);
        }
        auto emitText = [&](const std::string &text) {
            if (out.toStdout || opts.output.empty()) {
                std::cout << text;
                return true;
            }
            std::string error;
            if (!writeFilesAtomically({{out.cu, text}}, error)) {
                diags.error({}, error);
                return false;
            }
            return true;
        };
        if (opts.emit == "ast") {
            std::ostringstream os;
            ast::dump(program->main, sources, os);
            return finish(diags, emitText(os.str()) ? 0 : 1);
        }

        std::optional<DeclaredTarget> declared = declaredTarget(*program, diags);
        std::vector<const Target *> chosen = chooseTargets(opts, targets, declared, diags);
        if (diags.hasErrors()) return finish(diags, 1);
        const bool several = chosen.size() > 1;
        if (several && (opts.cpu || opts.emit == "emulator")) {
            Diagnostic d{Severity::Error, {}, std::string(opts.cpu ? "--cpu" : "--emit=emulator") + " runs one target's code in the emulator; --arch names " +
                                                  std::to_string(chosen.size()) + " (" + opts.arch + "): give one", {}, {}};
            d.rule = "command-line";
            diags.report(std::move(d));
            return finish(diags, 1);
        }

        // Each target lowers its own copy of the program. The analysis does
        // not depend on the target: its diagnostics are reported once.
        diags.setStage("semantic");
        std::vector<ir::Module> modules;
        for (size_t i = 0; i < chosen.size(); ++i) {
            std::ostringstream repeated;
            DiagnosticEngine quiet(sources, repeated);
            PhaseScope analyzeTime(timer, "analyze");
            std::optional<ir::Module> module = analyze(*program, defines, sources, i == 0 ? diags : quiet);
            if (!module) return finish(diags, 1);
            TILET_ASSERT(!quiet.hasErrors(), "the analysis failed for a second target after it succeeded for the first");
            module->targetName = chosen[i]->name;
            modules.push_back(std::move(*module));
        }
        // The launch function takes the kernel's name (after --symbol-prefix):
        // a kernel named main would define the host program's entry point.
        if (opts.emit == "cuda" && opts.symbolPrefix.empty()) {
            for (const ir::Kernel &k : modules.front().kernels)
                if (k.name == "main")
                    diags.error(k.span, "a kernel named 'main' would make its launch function the host program's main(); "
                                        "name the kernel otherwise, or give --symbol-prefix");
            if (diags.hasErrors()) return finish(diags, 1);
        }
        if (opts.emit == "ir") {
            std::ostringstream os;
            ir::print(modules.front(), os);
            return finish(diags, emitText(os.str()) ? 0 : 1);
        }

        bool lowered = true;
        for (size_t i = 0; i < chosen.size(); ++i) {
            // Several targets: each diagnostic and decision says which it is about.
            if (several) diags.pushContext({}, "when translating for " + chosen[i]->name + " (--arch " + opts.arch + ")");
            Explain explain;
            PassContext ctx{*chosen[i], diags, explain};
            DumpOptions dump{opts.dumpAfter, opts.dumpAfter.empty() ? nullptr : &std::cerr, timer};
            if (several && dump.out) *dump.out << "// ==== lowering for " << chosen[i]->name << " ====\n";
            lowered = lower(modules[i], ctx, dump) && lowered;
            if (several) diags.popContext();
            const std::string label = several ? chosen[i]->name : "";
            if (opts.explain == "text") explain.printRemarks(diags, label);
            // A SARIF log is one JSON document: the decisions go into it as results
            // (rule "decision") rather than as JSON lines beside it.
            if (opts.explain == "json" && opts.diagnosticsFormat == DiagnosticFormat::Sarif) explain.printRemarks(diags, label);
            else if (opts.explain == "json") explain.printJson(sources, std::cerr, label);
        }
        diags.setStage("output");
        if (!lowered || diags.hasErrors()) return finish(diags, 1);
        if (opts.emit == "lowered-ir") {
            std::ostringstream os;
            for (size_t i = 0; i < modules.size(); ++i) {
                if (several) os << (i ? "\n" : "") << "// ---- lowered for " << chosen[i]->name << " ----\n";
                ir::print(modules[i], os);
            }
            return finish(diags, emitText(os.str()) ? 0 : 1);
        }

        Variants variants;
        for (size_t i = 0; i < chosen.size(); ++i) {
            std::string suffix = "_";   // a C identifier's tail, whatever a --target-file names its target
            for (char c : chosen[i]->name) suffix += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
            variants.push_back({modules[i], *chosen[i], several ? suffix : ""});
        }
        std::optional<PhaseScope> printTime(std::in_place, timer, "print .cu");
        std::string cu = printCuda(variants, out.names);
        printTime.reset();
        if (opts.emit == "emulator") {
            // The .cu and the .host.cpp as one C++ source for the CPU emulator (templates/emu).
            try {
                return finish(diags, emitText(emulatedSource(cu, printHostSource(variants, out.names), out.names.cuFile, out.names.hostFile)) ? 0 : 1);
            } catch (const std::runtime_error &e) {
                diags.error({}, std::string("cannot emulate the program's own CUDA (import_source): ") + e.what());
                return finish(diags, 1);
            }
        }
        if (!out.library.empty() && opts.cpu) {
            int status = buildCpuLibrary(variants, out, cu, depPath, opts.depsAlongside ? &depRule : nullptr, opts.python, diags);
            return status == kInternalErrorExitCode ? status : finish(diags, status);
        }
        if (!out.library.empty()) {
            int status = buildLibrary(variants, out, cu, depPath, opts.depsAlongside ? &depRule : nullptr, opts.python, diags);
            return status == kInternalErrorExitCode ? status : finish(diags, status);
        }
        if (out.toStdout) {
            std::cout << cu;
            std::string error;
            std::vector<PendingFile> files;
            if (opts.depsAlongside) files.push_back({depPath, depRule});
            if (!opts.python.empty()) files.push_back({opts.python, printPythonBinding(variants, out.names, opts.python)});
            if (!files.empty() && !writeFilesAtomically(files, error)) {
                diags.error({}, error);
                return finish(diags, 1);
            }
        } else {
            if (out.cu == out.header || out.cu == out.host) {
                diags.error({}, "output '" + out.cu + "' would be overwritten by the host files; name it *.cu");
                return finish(diags, 1);
            }
            std::string error;
            printTime.emplace(timer, "print host files");
            std::vector<PendingFile> files{{out.cu, cu}, {out.host, printHostSource(variants, out.names)}, {out.header, printHostHeader(variants, out.names)}};
            if (opts.depsAlongside) files.push_back({depPath, depRule});
            if (!opts.python.empty()) files.push_back({opts.python, printPythonBinding(variants, out.names, opts.python)});
            printTime.reset();
            PhaseScope writeTime(timer, "write files");
            if (!writeFilesAtomically(files, error)) {
                diags.error({}, error);
                return finish(diags, 1);
            }
        }

        if (opts.validate) {
            std::string path = out.cu;
            std::string tmpDir;
            if (out.toStdout) {
                char dir[] = "/tmp/tilet-cu-XXXXXX";
                if (!mkdtemp(dir)) {
                    diags.error({}, "cannot create a temporary directory for --validate");
                    return finish(diags, 1);
                }
                tmpDir = dir;
                path = tmpDir + "/" + out.names.cuFile;
                std::string error;
                writeFilesAtomically({{path, cu}}, error);
            }
            std::string log;
            int status = runNvcc(variants, path, log);
            if (!tmpDir.empty()) {
                std::error_code ec;
                fs::remove_all(tmpDir, ec);
            }
            if (status == 127 || status < 0) {
                diags.error({}, "--validate could not run nvcc (set NVCC or put nvcc on PATH): " + log);
                return finish(diags, 1);
            }
            if (status != 0) {
                std::cerr << log;
                std::cerr << "tilet: internal compiler error: nvcc rejected the generated code for " << targetList(variants)
                          << "; please report this with the input file\n";
                return kInternalErrorExitCode;
            }
        }
        return finish(diags, 0);
    } catch (const TooManyErrors &) {
        return finish(diags, 1);
    } catch (const InternalError &e) {
        std::cerr << "tilet: internal compiler error: " << e.what() << " (at " << e.file() << ":" << e.line() << ")\n"
                  << "please report this with the input file; it is a bug in tilet, not in the input\n";
        return kInternalErrorExitCode;
    }
}

} // namespace tilet
