// Printer.h -- the textual form of the IR (`--emit=ir`, `--dump-ir-after`).
// Every typed scheduling fact (layouts, copy instructions, pipeline stages,
// shared-memory offsets) is printed, so a dump shows what each pass decided.
#pragma once

#include "ir/IR.h"

#include <iosfwd>
#include <string>

namespace tilet::ir {

void print(const Module &m, std::ostream &out);
void print(const Kernel &k, std::ostream &out);
std::string toString(const Expr &e);
std::string toString(const Stmt &s);

} // namespace tilet::ir
