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

std::optional<ast::File> parseFile(FileId file, const SourceManager &sources, DiagnosticEngine &diags);

} // namespace tilet
