#include "passes/ParallelNest.h"

#include "support/InternalError.h"

namespace tilet {

ParallelNest parallelNest(const ir::For &outer) {
    ParallelNest nest;
    nest.outer = &outer;
    const ir::For *f = &outer;
    while (true) {
        std::optional<int64_t> extent = ir::constInt(f->extent);
        TILET_ASSERT(extent && ir::constInt(f->min) == 0, "parallel loop with non-constant bounds");
        nest.vars.push_back(f->var);
        nest.extents.push_back(*extent);
        const ir::For *inner = ir::as<ir::For>(f->body);
        if (!inner || inner->forKind != ir::ForKind::Parallel) {
            nest.body = f->body;
            break;
        }
        f = inner;
    }
    return nest;
}

ir::Stmt makeParallelNest(const std::vector<int64_t> &shape, SourceRange span,
                          const std::function<ir::Stmt(const std::vector<ir::Expr> &)> &makeBody) {
    static const char *names[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
    std::vector<ir::VarRef> vars;
    std::vector<ir::Expr> exprs;
    for (size_t d = 0; d < shape.size(); ++d) {
        vars.push_back(ir::makeVar(d < 8 ? names[d] : "i" + std::to_string(d)));
        exprs.push_back(vars.back());
    }
    ir::Stmt body = makeBody(exprs);
    for (size_t d = shape.size(); d-- > 0;)
        body = std::make_shared<ir::For>(vars[d], ir::intImm(0), ir::intImm(shape[d]), ir::ForKind::Parallel, body, span);
    return body;
}

} // namespace tilet
