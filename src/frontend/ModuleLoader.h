// ModuleLoader.h -- reads the main .tl file and, transitively, every file it
// imports.
//
// `import "x.tl";` (and the CUDA file of an `import_source("x.cuh")`
// statement) is searched for next to the importing file first, then in
// each -I directory in order (the rule C compilers use for #include "..."). A
// file is loaded once however often it is imported; an import cycle or a
// missing file is an error at the import that causes it (for an
// import_source, where sema finds the statement part of the kernel).
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilet {

// A CUDA source file that an `import_source("file")` statement names (TileLang's
// T.import_source), searched for like an import.
struct SourceImport {
    std::string spelled;   // as the statement writes it
    std::string path;      // as opened
    std::string text;
};

struct LoadedProgram {
    ast::File main;
    // Imported files, each after the files it imports (dependencies first).
    std::vector<ast::File> imports;
    // Every file opened, as spelled when opened, in first-open order; the
    // main file first. This is what a dependency file lists.
    std::vector<std::string> openedPaths;
    // The files of import_source statements, each once, and which file each
    // such statement (one whose argument is a string literal) names.
    std::vector<SourceImport> sourceImports;
    std::map<const ast::Call *, size_t> sourceImportOf;
    // Why a statement's file could not be found or read: reported by sema,
    // and only where the statement is part of the kernel (not in the branch
    // of an `if` decided when translating that is not taken).
    std::map<const ast::Call *, Diagnostic> sourceImportFailures;
};

// Imports nest at most this deep (clang's limit for #include, 200): loading
// recurses once per level.
constexpr size_t kMaxImportDepth = 200;

// `path` "-" reads standard input (named "<stdin>" in diagnostics).
// `maxNesting` bounds the nesting inside each file (Parser.h).
std::optional<LoadedProgram> loadProgram(const std::string &path, const std::vector<std::string> &includeDirs,
                                         SourceManager &sources, DiagnosticEngine &diags, unsigned maxNesting);

} // namespace tilet
