// AnalyzeParams.cpp -- a tensor is read-only unless some statement writes it:
// a store, the destination of a tile operation, or a wide copy.
#include "passes/AnalyzeParams.h"

#include "ir/Visitor.h"

#include <set>

namespace tilet {

ir::Kernel analyzeParams(const ir::Kernel &kernel, PassContext &) {
    std::set<const ir::BufferNode *> written;
    bool pdl = false;
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        switch (s->kind) {
        case ir::StmtKind::Store: written.insert(ir::as<ir::Store>(s)->buffer.get()); break;
        case ir::StmtKind::VectorCopy: written.insert(ir::as<ir::VectorCopy>(s)->dst.get()); break;
        case ir::StmtKind::Copy: written.insert(ir::as<ir::Copy>(s)->dst.buffer.get()); break;
        case ir::StmtKind::Fill: written.insert(ir::as<ir::Fill>(s)->dst.buffer.get()); break;
        case ir::StmtKind::AtomicAdd: written.insert(ir::as<ir::AtomicAdd>(s)->dst.buffer.get()); break;
        case ir::StmtKind::Gemm: written.insert(ir::as<ir::Gemm>(s)->c.buffer.get()); break;
        case ir::StmtKind::PdlSync:
        case ir::StmtKind::PdlTrigger: pdl = true; break;
        default: break;
        }
    });
    ir::Kernel out = kernel;
    for (const ir::Param &p : out.params) {
        if (p.kind == ir::ParamKind::Tensor) p.tensor->readOnly = !written.count(p.tensor.get());
    }
    out.usesPdl = pdl;
    return out;
}

} // namespace tilet
