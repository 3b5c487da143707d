// Structure.h -- the checks on a file's token stream that run before ANTLR
// parses it (private to src/frontend).
//
// Two problems are cheaper to find on the flat token list than in the parser:
//
// * Nesting depth. The ANTLR parser, the parse-tree walk, Sema and every IR
//   pass recurse once per level of nesting, so an input nested thousands of
//   levels deep would overflow the stack in any of them. The check bounds an
//   over-estimate of the depth of every tree built from the file (see
//   Structure.cpp), so nothing after it recurses deeper than a fixed multiple
//   of the limit -- the same role as clang's -fbracket-depth.
//
// * Brackets that do not balance. ANTLR's error recovery on deeply unclosed
//   brackets costs time quadratic in the depth (every recovery step walks the
//   whole rule stack); a bracket mismatch is reported here, in linear time,
//   with the bracket it fails to match, and the parser never sees the file.
#pragma once

#include "support/Diagnostics.h"

#include "antlr4-runtime.h"

#include <vector>

namespace tilet {

// Where a token is, as diagnostics give it (columns in code points).
SourceRange tokenRange(FileId file, antlr4::Token *token);

// Reports the first nesting or bracket problem of `tokens` (the whole token
// stream of one file, hidden tokens included; they are skipped). Returns
// whether the file is free of both.
bool checkStructure(FileId file, const std::vector<antlr4::Token *> &tokens, unsigned maxNesting, DiagnosticEngine &diags);

} // namespace tilet
