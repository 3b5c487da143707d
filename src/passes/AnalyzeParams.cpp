// AnalyzeParams.cpp -- a tensor is read-only unless some statement writes
// it (or a view of it); a kernel uses PDL when a statement triggers or waits for it. Both come
// from the statements' effects.
#include "passes/AnalyzeParams.h"

#include "ir/BufferEdits.h"
#include "ir/Effects.h"
#include "ir/Visitor.h"

#include <set>

namespace tilet {

ir::Kernel analyzeParams(const ir::Kernel &kernel, PassContext &) {
    std::set<const ir::BufferNode *> written;
    bool pdl = false;
    ir::forEachEffect(kernel.body, [&](const ir::Stmt &, const ir::Effects &fx) {
        for (const ir::Access &a : fx.accesses)
            if (a.writes()) written.insert(&ir::storageRoot(*a.buffer));   // a write through a view writes its tensor
        for (const ir::SyncEffect &e : fx.syncs) pdl = pdl || e.kind == ir::SyncKind::PdlTrigger || e.kind == ir::SyncKind::PdlWait;
    });
    ir::Kernel out = kernel;
    ir::BufferEdits edits;
    for (const ir::Param &p : kernel.params) {
        if (p.kind != ir::ParamKind::Tensor) continue;
        bool readOnly = !written.count(p.tensor.get());
        if (p.tensor->readOnly != readOnly) edits.edit(p.tensor).readOnly = readOnly;
    }
    // A view (Tensor(shape, dtype, x)) is as read-only as the tensor it looks into.
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        const ir::Allocate *a = ir::as<ir::Allocate>(s);
        if (!a || !a->buffer->viewOf) return;
        bool readOnly = !written.count(&ir::storageRoot(*a->buffer));
        if (a->buffer->readOnly != readOnly) edits.edit(a->buffer).readOnly = readOnly;
    });
    edits.applyTo(out);
    out.usesPdl = pdl;
    return out;
}

} // namespace tilet
