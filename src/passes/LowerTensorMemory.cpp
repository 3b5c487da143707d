// LowerTensorMemory.cpp -- see LowerTensorMemory.h.
#include "passes/LowerTensorMemory.h"

#include "ir/Layout.h"
#include "ir/MmaLayout.h"
#include "ir/Visitor.h"
#include "passes/RoleMutator.h"
#include "support/InternalError.h"

namespace tilet {

namespace {

using ir::Expr;
using ir::Stmt;

class Lowerer : public RoleMutator {
public:
    Lowerer(const ir::Kernel &k, PassContext &ctx) : RoleMutator(k), ctx_(ctx) {}

protected:
    Stmt mutateCopy(const Stmt &self, const ir::Copy &c) override {
        if (c.inst != ir::CopyInst::TMemLoad && c.inst != ir::CopyInst::TMemStore) return self;
        // tcgen05.st is tcgen05.ld backwards: the same shapes, cells and registers.
        bool store = c.inst == ir::CopyInst::TMemStore;
        const ir::Region &cells = store ? c.dst : c.src, &fragmentRegion = store ? c.src : c.dst;
        const ir::BufferNode &tmem = *cells.buffer, &fragment = *fragmentRegion.buffer;
        std::string what = store ? "a tensor-memory store" : "a tensor-memory load";
        // All rows of one stage of the tile, any run of its columns (a 32-bit element is a column).
        std::vector<int64_t> shape = cells.tileShape();
        if (!ir::tmemAllRowsOfOneStage(cells) || shape.size() != 2 || !fragmentRegion.coversBuffer() || fragmentRegion.tileShape() != shape)
            return notYet(c, "a copy of part of a tensor-memory tile's rows is"), self;
        ir::TmemTiling t{shape[0], shape[1], roleThreads()};
        if (!t.knownRows())
            return notYet(c, what + " of " + std::to_string(shape[0]) + " rows (a tcgen05.mma accumulator has 128 or 64) is"), self;
        if (fragment.dtype != tmem.dtype)
            return notYet(c, what + " between " + std::string(dtypeName(tmem.dtype)) + " tensor memory and a " + std::string(dtypeName(fragment.dtype)) +
                                 " fragment is"),
                   self;
        // Narrower elements pack along a row, several to a 32-bit column
        // (as a TS-form tcgen05.mma reads A): a register moves one column's
        // worth of consecutive elements, so the fragment's array is the
        // registers' bytes.
        int64_t bits = dtypeBits(tmem.dtype), perWord = 32 / bits;
        if (bits != 32 && bits != 16 && bits != 8) return notYet(c, what + " of " + std::string(dtypeName(tmem.dtype)) + " elements is"), self;
        if (perWord > 1 && t.shape() != ir::TmemLoadShape::Lanes32x32b)
            return notYet(c, what + " of " + std::to_string(bits) + "-bit elements in a 64-row tile (PTX data-path layout F) is"), self;
        std::optional<int64_t> firstElement = ir::constInt(cells.mins.back());
        if (perWord > 1 && (!firstElement || *firstElement % perWord != 0 || t.groupCols() % perWord != 0))
            return notYet(c, what + " of " + std::to_string(bits) + "-bit elements that splits a 32-bit column (" + std::to_string(perWord) +
                                 " elements each) is"),
                   self;
        if (!t.fits())
            return notYet(c, what + " of " + std::to_string(t.cols) + " columns on " + std::to_string(roleThreads()) +
                                 " threads (whole warp groups, each a share of the columns, a multiple of " +
                                 std::to_string(ir::tmemLoadColumnsPerRepeat(t.shape())) + ") is"),
                   self;
        if (!fragment.layout || !ir::sameDistribution(*fragment.layout, ir::tmemLoadLayout(t)))
            return notYet(c, what + " of '" + fragment.name + "', which another statement gave a different layout, is"), self;
        TILET_ASSERT(fragment.registers && tmem.tmemAddress, "tensor-memory copy without registers or a planned address");

        SourceRange span = c.span;
        ir::TmemLoadShape loadShape = t.shape();
        int64_t perRepeat = ir::tmemLoadColumnsPerRepeat(loadShape), registersPerRepeat = ir::tmemLoadRegistersPerRepeat(loadShape);
        // Each tcgen05.ld moves up to 32 registers per thread.
        int64_t groupWords = t.groupCols() / perWord;
        int64_t repeat = 32 / registersPerRepeat;
        while (groupWords % (repeat * perRepeat) != 0) repeat /= 2;
        int64_t loadColumns = repeat * perRepeat;
        Expr tid = roleThread();
        // Both shapes start at the warp's quarter: lane 0 of its 32, where
        // layout F keeps the 16 rows of that warp.
        Expr laneBase = ir::mul(ir::mod(ir::div(tid, ir::intImm(32)), ir::intImm(4)), ir::intImm(32 << 16));
        Expr groupColumn = ir::mul(ir::div(tid, ir::intImm(128)), ir::intImm(groupWords));
        ir::VarRef column = ir::makeVar("col");
        Expr start = ir::tmemColumn(cells);
        Expr firstColumn = ir::constInt(start) == 0 ? groupColumn : ir::add(start, groupColumn);
        Expr address = ir::add(tmem.tmemAddress, ir::cast(DType::UInt32, ir::add(ir::add(laneBase, firstColumn), ir::mul(column, ir::intImm(loadColumns)))));
        Stmt load = std::make_shared<ir::TmemMove>(loadShape, store, cells.buffer, address, fragment.registers,
                                                   ir::mul(column, ir::intImm(repeat * registersPerRepeat * perWord)), repeat,
                                                   ir::TmemPartition{t.rows, t.cols, t.threads, start}, span);
        int64_t loadCount = groupWords / loadColumns;
        Stmt loads = loadCount == 1 ? ir::substitute(load, {{column, ir::intImm(0)}})
                                    : std::make_shared<ir::For>(column, ir::intImm(0), ir::intImm(loadCount), ir::ForKind::Unrolled, load, span);

        Decision d;
        d.where = span;
        d.op = store ? "copy fragment->tmem" : "copy tmem->fragment";
        d.choice = std::string(store ? "tcgen05.st." : "tcgen05.ld.") + ir::tmemLoadShapeName(loadShape) + ".x" + std::to_string(repeat);
        std::string verb = store ? "writes" : "reads";
        d.why = loadShape == ir::TmemLoadShape::Lanes32x32b
                    ? "each thread " + verb + " one row of the 128 tensor-memory lanes"
                    : "a 64-row tile keeps rows 16w..16w+15 in lanes 32w..32w+15 (PTX data-path layout F): each warp " + verb +
                          " its 16 lanes, in the m16n8 accumulator layout";
        if (t.groups() > 1) d.why += ", its warp group " + std::to_string(t.groupCols()) + " of the " + std::to_string(t.cols) + " columns";
        if (perWord > 1)
            d.why += "; " + std::to_string(perWord) + " " + std::string(dtypeName(tmem.dtype)) + " elements of a row to each 32-bit column and register";
        d.details.push_back(std::to_string(loadCount) + (store ? " store" : " load") + (loadCount == 1 ? "" : "s") + " of " +
                            std::to_string(repeat * registersPerRepeat) + " registers per thread, then tcgen05.wait::" + (store ? "st" : "ld"));
        ctx_.explain.record(std::move(d));
        return ir::seq({std::make_shared<ir::Tcgen05Sync>(ir::Tcgen05SyncKind::FenceAfter, span), loads,
                        std::make_shared<ir::Tcgen05Sync>(store ? ir::Tcgen05SyncKind::WaitStore : ir::Tcgen05SyncKind::WaitLoad, span),
                        std::make_shared<ir::Tcgen05Sync>(ir::Tcgen05SyncKind::FenceBefore, span)});
    }

private:
    void notYet(const ir::Copy &c, const std::string &what) { ctx_.diags.error(c.span, what + " not supported yet for " + ctx_.target.name); }

    PassContext &ctx_;
};

} // namespace

ir::Kernel lowerTensorMemory(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Lowerer lowerer(kernel, ctx);
    out.body = lowerer.mutate(kernel.body);
    return out;
}

} // namespace tilet
