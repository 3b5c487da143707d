// TargetReader.h -- the one reader of target descriptions (YAML): used at
// build time to turn templates/targets.yaml into the built-in table, and at
// run time for --target-file.
#pragma once

#include "target/Target.h"

#include <map>
#include <string>

namespace tilet {

// Reads the YAML text of `file`, adding targets to `targets` or overriding
// fields of those already there. Problems are diagnostics at their line and
// column; returns false if there were any.
bool readTargets(FileId file, const std::string &text, std::map<std::string, Target> &targets, DiagnosticEngine &diags);

} // namespace tilet
