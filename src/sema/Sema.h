// Sema.h -- checks a loaded program and turns it into IR.
//
// Resolves names, evaluates constants (with -D overrides), checks dtypes,
// shapes and memory scopes, and builds one ir::Kernel per kernel of the main
// file. Everything checked here is independent of the target GPU; what a
// target can or cannot do is checked by the passes, with the same kind of
// diagnostics.
#pragma once

#include "frontend/ModuleLoader.h"
#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace tilet {

struct Define {
    std::string name;
    std::string value;   // "1" for a bare -D NAME
};

// The target the main file asks for with `target NAME;`, if any.
struct DeclaredTarget {
    std::string name;
    SourceRange range;
};

// Checks the `target` declarations (at most one, in the main file only).
std::optional<DeclaredTarget> declaredTarget(const LoadedProgram &program, DiagnosticEngine &diags);

// Returns the module, or nullopt after reporting errors.
std::optional<ir::Module> analyze(const LoadedProgram &program, const std::vector<Define> &defines,
                                  const SourceManager &sources, DiagnosticEngine &diags);

} // namespace tilet
