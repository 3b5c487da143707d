// Parser.h -- turns the text of one .tl file into an AST.
//
// This is the only public entry point into the ANTLR-generated parser. Syntax
// errors are reported through the DiagnosticEngine with their location; the
// caller gets no AST when there were any.
#pragma once

#include "frontend/Ast.h"
#include "support/Diagnostics.h"

#include <optional>

namespace tilet {

// How deeply a file may nest brackets, operator chains and statements
// (Structure.h), as clang's -fbracket-depth: --max-nesting=N.
constexpr unsigned kDefaultMaxNesting = 256;
// The largest --max-nesting accepted; the translation thread's stack is sized
// for it (support/BigStack.h).
constexpr unsigned kMaxNestingLimit = 4096;

std::optional<ast::File> parseFile(FileId file, const SourceManager &sources, DiagnosticEngine &diags,
                                   unsigned maxNesting = kDefaultMaxNesting);

} // namespace tilet
