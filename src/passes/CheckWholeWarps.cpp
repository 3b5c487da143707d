// CheckWholeWarps.cpp -- see CheckWholeWarps.h.
#include "passes/CheckWholeWarps.h"

#include "ir/Effects.h"
#include "ir/Visitor.h"

#include <set>
#include <string>
#include <tuple>

namespace tilet {

namespace {

// Each statement with the nearest valid source location among it and the
// statements around it (a lowering's statements may carry none).
class Finder : public ir::Visitor {
public:
    Finder(const ir::Kernel &kernel, PassContext &ctx) : kernel_(kernel), ctx_(ctx) {}
    using ir::Visitor::visit;
    void visit(const ir::Stmt &s) override {
        if (!s) return;
        SourceRange outer = where_;
        if (s->span.begin.valid()) where_ = s->span;
        if (const char *instruction = ir::warpWideInstruction(s);
            instruction && reported_.insert({where_.begin.file, where_.begin.line, where_.begin.col}).second) {
            ctx_.diags.error(where_, "this needs " + std::string(instruction) + ", in which every lane of a warp takes part; the block's " +
                                         std::to_string(kernel_.threads) + " threads end in a partial warp (threads a multiple of 32 have none)");
        }
        ir::Visitor::visit(s);
        where_ = outer;
    }

private:
    const ir::Kernel &kernel_;
    PassContext &ctx_;
    SourceRange where_;
    // One error per statement of the program: a lowering makes many of one.
    std::set<std::tuple<FileId, uint32_t, uint32_t>> reported_;
};

} // namespace

ir::Kernel checkWholeWarps(const ir::Kernel &kernel, PassContext &ctx) {
    if (kernel.threads % 32 != 0) Finder(kernel, ctx).visit(kernel.body);
    return kernel;
}

} // namespace tilet
