// ReducerCheck.h -- what each statement may do with an alloc_reducer buffer.
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"

namespace tilet {

// A reducer (alloc_reducer) is a fragment whose copies in different threads
// hold partial results between its fill and finalize_reducer (TileLang's
// reducer protocol, checked here where TileLang leaves it to the user):
//   * fill/clear starts a reduction; a sum starts from 0 in every copy;
//   * inside parallel loops it is only updated, `r[i] += x` for a sum and
//     `r[i] = max(r[i], x)` / `min` for max and min, and only while a
//     reduction is open;
//   * it is read (by anything but its own update) only after
//     finalize_reducer combined the copies;
//   * nothing else writes it.
// Statements are visited in program order; a loop body once.
void checkReducers(const ir::Stmt &body, DiagnosticEngine &diags);

} // namespace tilet
