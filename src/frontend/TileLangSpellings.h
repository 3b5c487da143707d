// TileLangSpellings.h -- how tilet writes what TileLang programs spell
// differently, so that an error on a TileLang spelling can say it.
//
// TileLang is embedded in Python: builtins live in the `T.` namespace
// (`T.Parallel`, `T.copy`), dtypes are named like NumPy's (`float16`), and
// some keyword arguments differ (`num_stages`). Each table lives here once;
// the parser, its token checks and Sema add the note.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tilet {

// tilet's form of TileLang's `T.<name>`, for names that are not tilet
// builtins of the same name (those are found by the caller: a keyword token).
std::optional<std::string> tiletFormOfT(std::string_view name);

// tilet's name of TileLang's dtype `name` (float16 -> f16).
std::optional<std::string> tiletDtypeOf(std::string_view name);

// tilet's name of TileLang's keyword argument `keyword` of `callee`
// (pipelined: num_stages -> stages).
std::optional<std::string> tiletKeywordOf(std::string_view callee, std::string_view keyword);

// Whether `afterOperand` -- the text of a line after an operand -- is
// TileLang's floor division `// b`, which tilet reads as a comment.
bool looksLikeFloorDivision(std::string_view afterOperand);
extern const char *const kFloorDivisionNote;

} // namespace tilet
