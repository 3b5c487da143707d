// PlanTensorMemory.cpp -- see PlanTensorMemory.h.
#include "passes/PlanTensorMemory.h"

#include "ir/BufferEdits.h"
#include "ir/Visitor.h"

#include <algorithm>

namespace tilet {

namespace {

constexpr int64_t kTmemColumns = 512;      // per block (PTX ISA, "Tensor Memory")
constexpr int64_t kTmemLanes = 128;
constexpr int64_t kMinAllocation = 32;     // the unit of tcgen05.alloc

struct Planned {
    ir::Buffer buffer;
    int64_t columns = 0;   // allocated: a power of two >= 32
    int64_t first = 0;     // its first column
};

int64_t powerOfTwoAtLeast(int64_t n) {
    int64_t p = kMinAllocation;
    while (p < n) p *= 2;
    return p;
}

std::string columnsText(int64_t first, int64_t count) { return "columns " + std::to_string(first) + "-" + std::to_string(first + count - 1); }

} // namespace

ir::Kernel planTensorMemory(const ir::Kernel &kernel, PassContext &ctx) {
    std::vector<Planned> buffers;
    bool ok = true;
    ir::forEachStmt(kernel.body, [&](const ir::Stmt &s) {
        const ir::Allocate *a = ir::as<ir::Allocate>(s);
        if (!a || a->buffer->scope != ir::MemScope::TMem) return;
        const ir::BufferNode &b = *a->buffer;
        std::optional<std::vector<int64_t>> shape = b.constShape();
        if (!shape || shape->size() < 2 || (*shape)[shape->size() - 2] > kTmemLanes) {
            ctx.diags.error(b.span, "tensor memory holds [rows, columns] tiles of at most " + std::to_string(kTmemLanes) + " rows (its lanes); '" +
                                        b.name + "' is not one");
            ok = false;
            return;
        }
        int64_t words = ir::tmemWords(b);
        buffers.push_back({a->buffer, powerOfTwoAtLeast(words), 0});
    });
    if (!ok || buffers.empty()) return kernel;

    // Widest first: each buffer then starts at a multiple of its own size.
    std::stable_sort(buffers.begin(), buffers.end(), [](const Planned &x, const Planned &y) { return x.columns > y.columns; });
    int64_t total = 0;
    std::string layout;
    for (Planned &p : buffers) {
        p.first = total;
        total += p.columns;
        layout += (layout.empty() ? "" : ", ") + std::string("'") + p.buffer->name + "' " + columnsText(p.first, p.columns);
    }
    if (total > kTmemColumns) {
        ctx.diags.error(buffers.front().buffer->span, "the kernel's tensor memory needs " + std::to_string(total) + " columns (" + layout +
                                                          "), more than the " + std::to_string(kTmemColumns) + " a block has");
        return kernel;
    }
    int64_t allocated = powerOfTwoAtLeast(total);

    SourceRange span = kernel.span;
    auto word = ir::makeBuffer("tmem_address", DType::UInt32, {ir::intImm(1)}, ir::MemScope::Shared, span);
    ir::Buffer wordBuffer = word;
    ir::VarRef base = ir::makeVar("tmem_base", DType::UInt32, span);
    ir::BufferEdits edits;
    for (const Planned &p : buffers) edits.edit(p.buffer).tmemAddress = ir::add(base, ir::intImm(p.first, DType::UInt32));

    // The CTA pair's MMAs write both blocks' tensor memory: each block
    // allocates before either issues (a cluster barrier), and frees only
    // when both are done with it.
    bool pair = kernel.tcgen05Pair;
    auto handshake = [&] {
        ir::Stmt meet = pair ? ir::Stmt(std::make_shared<ir::ClusterSync>(span)) : std::make_shared<ir::SyncThreads>(span);
        return ir::seq({std::make_shared<ir::Tcgen05Sync>(ir::Tcgen05SyncKind::FenceBefore, span), meet,
                        std::make_shared<ir::Tcgen05Sync>(ir::Tcgen05SyncKind::FenceAfter, span)});
    };
    ir::Expr warp0 = ir::lt(ir::threadIdx(), ir::intImm(32));
    ir::Stmt body = ir::seq({kernel.body, handshake(),
                             std::make_shared<ir::IfThenElse>(warp0, std::make_shared<ir::TmemDealloc>(base, allocated, pair, span), nullptr, span)});
    body = std::make_shared<ir::LetStmt>(base, std::make_shared<ir::Load>(wordBuffer, std::vector<ir::Expr>{ir::intImm(0)}, span), body, span);
    body = ir::seq({std::make_shared<ir::IfThenElse>(warp0, std::make_shared<ir::TmemAlloc>(wordBuffer, allocated, pair, span), nullptr, span),
                    handshake(), body});
    ir::Kernel out = kernel;
    out.body = std::make_shared<ir::Allocate>(wordBuffer, body, span);
    edits.applyTo(out);

    Decision d;
    d.where = buffers.front().buffer->span;
    d.op = "tensor memory";
    d.choice = std::to_string(allocated) + " of " + std::to_string(kTmemColumns) + " columns";
    d.why = pair ? "warp 0 of each block of the CTA pair allocates them once, the same columns in both (tcgen05.alloc.cta_group::2, widest "
                   "buffer first), before a cluster barrier, and frees them after another at the end"
                 : "warp 0 allocates them once for the block (tcgen05.alloc, widest buffer first) and frees them at the end";
    for (const Planned &p : buffers) {
        std::vector<int64_t> shape = *p.buffer->constShape();
        d.details.push_back("'" + p.buffer->name + "' [" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + "] " +
                            std::string(dtypeName(p.buffer->dtype)) + ": " + columnsText(p.first, p.columns));
    }
    ctx.explain.record(std::move(d));
    return out;
}

} // namespace tilet
