// AnalyzeParams.cpp -- a tensor is read-only unless some statement writes
// it; a kernel uses PDL when a statement triggers or waits for it. Both come
// from the statements' effects.
#include "passes/AnalyzeParams.h"

#include "ir/BufferEdits.h"
#include "ir/Effects.h"

#include <set>

namespace tilet {

ir::Kernel analyzeParams(const ir::Kernel &kernel, PassContext &) {
    std::set<const ir::BufferNode *> written;
    bool pdl = false;
    ir::forEachEffect(kernel.body, [&](const ir::Stmt &, const ir::Effects &fx) {
        for (const ir::Access &a : fx.accesses)
            if (a.writes()) written.insert(a.buffer);
        for (const ir::SyncEffect &e : fx.syncs) pdl = pdl || e.kind == ir::SyncKind::PdlTrigger || e.kind == ir::SyncKind::PdlWait;
    });
    ir::Kernel out = kernel;
    ir::BufferEdits edits;
    for (const ir::Param &p : kernel.params) {
        if (p.kind != ir::ParamKind::Tensor) continue;
        bool readOnly = !written.count(p.tensor.get());
        if (p.tensor->readOnly != readOnly) edits.edit(p.tensor).readOnly = readOnly;
    }
    edits.applyTo(out);
    out.usesPdl = pdl;
    return out;
}

} // namespace tilet
