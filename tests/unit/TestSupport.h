// TestSupport.h -- parse and check source text held in a string.
#pragma once

#include "frontend/Parser.h"
#include "sema/Sema.h"

#include <optional>
#include <sstream>
#include <string>

namespace tilet::test {

struct Compiled {
    SourceManager sources;
    std::ostringstream diagText;
    DiagnosticEngine diags{sources, diagText};
    std::optional<ast::File> ast;
    std::optional<ir::Module> module;
};

inline void parseSource(Compiled &c, const std::string &text, const std::string &name = "test.tl") {
    FileId f = c.sources.add(name, text);
    c.ast = parseFile(f, c.sources, c.diags);
}

inline void analyzeSource(Compiled &c, const std::string &text, std::vector<Define> defines = {}) {
    parseSource(c, text);
    if (!c.ast) return;
    LoadedProgram program;
    program.main = std::move(*c.ast);
    c.ast.reset();
    c.module = analyze(program, defines, c.sources, c.diags);
}

} // namespace tilet::test
