#include "frontend/ModuleLoader.h"

#include "frontend/Parser.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>

namespace tilet {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> readFile(const std::string &path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return ss.str();
}

std::string canonicalKey(const std::string &path) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::path(path), ec);
    return ec ? path : p.string();
}

class Loader {
public:
    Loader(const std::vector<std::string> &includeDirs, SourceManager &sources, DiagnosticEngine &diags, unsigned maxNesting)
        : includeDirs_(includeDirs), sources_(sources), diags_(diags), maxNesting_(maxNesting) {}

    std::optional<LoadedProgram> run(const std::string &path) {
        std::optional<std::string> text;
        std::string display = path;
        if (path == "-") {
            std::string all((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
            text = std::move(all);
            display = "<stdin>";
        } else {
            text = readFile(path);
            if (!text) {
                Diagnostic d{Severity::Error, {}, "cannot read input file '" + path + "': " + reason(path), {}, {}};
                d.rule = "command-line";   // the file the command line names
                diags_.report(std::move(d));
                return std::nullopt;
            }
        }
        program_.openedPaths.push_back(path == "-" ? "<stdin>" : path);
        FileId id = sources_.add(display, std::move(*text));
        std::optional<ast::File> main = parseFile(id, sources_, diags_, maxNesting_);
        if (!main) return std::nullopt;
        std::string key = path == "-" ? "<stdin>" : canonicalKey(path);
        stack_.push_back({key, display});
        state_[key] = State::Loading;
        std::string dir = path == "-" ? std::string(".") : fs::path(path).parent_path().string();
        loadImports(*main, dir);
        loadSourceImports(*main, dir);
        stack_.pop_back();
        if (diags_.hasErrors()) return std::nullopt;
        program_.main = std::move(*main);
        return std::move(program_);
    }

private:
    enum class State { Loading, Done };

    static std::string reason(const std::string &path) {
        std::error_code ec;
        if (!fs::exists(path, ec)) return "no such file";
        if (fs::is_directory(path, ec)) return "is a directory";
        return "permission denied";
    }

    void loadImports(const ast::File &file, const std::string &dir) {
        for (const ast::Import &imp : file.imports) {
            std::vector<std::string> searched;
            std::string found = resolve(imp.path, dir, searched);
            if (found.empty()) {
                reportNotFound(imp.range, "cannot find import '" + imp.path + "'", searched);
                continue;
            }
            std::string key = canonicalKey(found);
            auto st = state_.find(key);
            if (st != state_.end() && st->second == State::Done) continue;
            if (st != state_.end() && st->second == State::Loading) {
                std::string chain;
                bool inCycle = false;
                for (const auto &[k, name] : stack_) {
                    if (k == key) inCycle = true;
                    if (inCycle) chain += name + " -> ";
                }
                chain += found;
                diags_.error(imp.range, "import cycle: " + chain);
                continue;
            }
            if (stack_.size() >= kMaxImportDepth) {
                diags_.error(imp.range, "imports nested too deeply (more than " + std::to_string(kMaxImportDepth) + " files)");
                continue;
            }
            std::optional<std::string> text = readFile(found);
            if (!text) {
                diags_.error(imp.range, "cannot read import '" + found + "': " + reason(found));
                continue;
            }
            program_.openedPaths.push_back(found);
            FileId id = sources_.add(found, std::move(*text));
            std::optional<ast::File> parsed = parseFile(id, sources_, diags_, maxNesting_);
            if (!parsed) {
                state_[key] = State::Done;
                continue;
            }
            state_[key] = State::Loading;
            stack_.push_back({key, found});
            loadImports(*parsed, fs::path(found).parent_path().string());
            loadSourceImports(*parsed, fs::path(found).parent_path().string());
            stack_.pop_back();
            state_[key] = State::Done;
            program_.imports.push_back(std::move(*parsed));
        }
    }

    // The import_source statements of a file's kernels and fns.
    void loadSourceImports(const ast::File &file, const std::string &dir) {
        for (const ast::Kernel &k : file.kernels) loadSourceImports(k.body, dir);
        for (const ast::FnDecl &f : file.fns) loadSourceImports(f.body, dir);
    }

    void loadSourceImports(const ast::StmtList &body, const std::string &dir) {
        for (const ast::StmtPtr &s : body) {
            switch (s->kind) {
            case ast::StmtKind::For: loadSourceImports(static_cast<const ast::For &>(*s).body, dir); break;
            case ast::StmtKind::While: loadSourceImports(static_cast<const ast::While &>(*s).body, dir); break;
            case ast::StmtKind::Ws: loadSourceImports(static_cast<const ast::Ws &>(*s).body, dir); break;
            case ast::StmtKind::If: {
                auto &i = static_cast<const ast::If &>(*s);
                loadSourceImports(i.thenBody, dir);
                loadSourceImports(i.elseBody, dir);
                break;
            }
            case ast::StmtKind::CallStmt: loadSourceImport(*static_cast<const ast::CallStmt &>(*s).call, dir); break;
            case ast::StmtKind::Break:
            case ast::StmtKind::Continue: break;
            default: break;
            }
        }
    }

    // Sema reports an import_source whose argument is not one string literal.
    void loadSourceImport(const ast::Call &call, const std::string &dir) {
        if (!call.isBuiltin || call.callee != "import_source" || call.args.size() != 1 || !call.args[0].name.empty()) return;
        auto *lit = dynamic_cast<const ast::StringLit *>(call.args[0].value.get());
        if (!lit) return;
        std::vector<std::string> searched;
        std::string found = resolve(lit->value, dir, searched);
        if (found.empty()) {
            program_.sourceImportFailures.emplace(&call, notFound(lit->range, "cannot find source file '" + lit->value + "'", searched));
            return;
        }
        std::string key = canonicalKey(found);
        if (auto known = sourceKeys_.find(key); known != sourceKeys_.end()) {
            program_.sourceImportOf[&call] = known->second;
            return;
        }
        std::optional<std::string> text = readFile(found);
        if (!text) {
            program_.sourceImportFailures.emplace(&call, Diagnostic{Severity::Error, lit->range, "cannot read source file '" + found + "': " + reason(found), {}, {}});
            return;
        }
        program_.openedPaths.push_back(found);
        sourceKeys_[key] = program_.sourceImports.size();
        program_.sourceImportOf[&call] = program_.sourceImports.size();
        program_.sourceImports.push_back({lit->value, found, std::move(*text)});
    }

    // A file `resolve` did not find, with the directories it searched.
    void reportNotFound(SourceRange where, const std::string &message, const std::vector<std::string> &searched) {
        diags_.report(notFound(where, message, searched));
    }
    static Diagnostic notFound(SourceRange where, const std::string &message, const std::vector<std::string> &searched) {
        Diagnostic d{Severity::Error, where, message, {}, {}};
        std::string dirs;
        for (const std::string &s : searched) dirs += (dirs.empty() ? "" : ", ") + ("'" + s + "'");
        d.note({}, "searched " + dirs);
        return d;
    }

    std::string resolve(const std::string &name, const std::string &dir, std::vector<std::string> &searched) {
        std::error_code ec;
        if (fs::path(name).is_absolute()) {
            searched.push_back(name);
            return fs::is_regular_file(name, ec) ? name : "";
        }
        std::vector<std::string> dirs{dir};
        dirs.insert(dirs.end(), includeDirs_.begin(), includeDirs_.end());
        for (const std::string &d : dirs) {
            std::string candidate = (d.empty() || d == ".") ? name : (fs::path(d) / name).string();
            searched.push_back(d.empty() ? "." : d);
            if (fs::is_regular_file(candidate, ec)) return candidate;
        }
        return "";
    }

    const std::vector<std::string> &includeDirs_;
    SourceManager &sources_;
    DiagnosticEngine &diags_;
    unsigned maxNesting_;
    LoadedProgram program_;
    std::map<std::string, State> state_;
    std::map<std::string, size_t> sourceKeys_;   // canonical path -> index in sourceImports
    std::vector<std::pair<std::string, std::string>> stack_;   // canonical key, display name
};

} // namespace

std::optional<LoadedProgram> loadProgram(const std::string &path, const std::vector<std::string> &includeDirs,
                                         SourceManager &sources, DiagnosticEngine &diags, unsigned maxNesting) {
    return Loader(includeDirs, sources, diags, maxNesting).run(path);
}

} // namespace tilet
