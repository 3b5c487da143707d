// LowerFragmentStores.cpp -- see LowerFragmentStores.h.
#include "passes/LowerFragmentStores.h"

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
        if (c.inst != ir::CopyInst::STSM) return self;
        const ir::BufferNode &fragment = *c.src.buffer;
        const ir::Buffer &shared = c.dst.buffer;
        TILET_ASSERT(fragment.layout && fragment.registers, "stmatrix copy of '" << fragment.name << "' without a layout or registers");
        const ir::TileLayout &layout = *fragment.layout;
        std::string mismatch = ir::stmatrixMismatch(layout);
        TILET_ASSERT(mismatch.empty() && layout.threads == roleThreads(),
                     "select-copy-inst took stmatrix for '" << fragment.name << "', whose layout does not allow it: " << mismatch);
        SourceRange span = c.span;

        int64_t pairs = layout.localSize() / 2;
        int64_t count = pairs % 4 == 0 ? 4 : pairs % 2 == 0 ? 2 : 1;
        int64_t perGroup = 2 * count;   // 16-bit elements per thread and stmatrix
        ir::Buffer pack = ir::makeBuffer(fragment.name + "_pack", shared->dtype, {ir::intImm(perGroup)}, ir::MemScope::Local, span);
        ir::VarRef group = ir::makeVar("g"), element = ir::makeVar("e");
        // The group's registers, converted to the shared dtype.
        Expr from = ir::add(ir::mul(group, ir::intImm(perGroup)), element);
        Expr value = ir::cast(shared->dtype, std::make_shared<ir::Load>(fragment.registers, std::vector<Expr>{from}, span));
        Stmt convert = std::make_shared<ir::Store>(pack, std::vector<Expr>{element}, value, ir::StoreOp::Assign, span);
        auto converts = std::make_shared<ir::For>(element, ir::intImm(0), ir::intImm(perGroup), ir::ForKind::Unrolled, convert, span);
        converts->threadLocal = true;
        // Lane l gives row l % 8 of the group's matrix (l / 8) % count.
        Expr tid = roleThread();
        Expr pair = ir::add(ir::mul(group, ir::intImm(count)), ir::mod(ir::div(ir::mod(tid, ir::intImm(32)), ir::intImm(8)), ir::intImm(count)));
        std::vector<Expr> row = ir::stmatrixRow(layout, tid, pair);
        Stmt store = std::make_shared<ir::StMatrix>(shared, ir::regionIndices(c.dst, row), pack, ir::intImm(0), count, span);
        int64_t groups = pairs / count;
        Stmt body = ir::seq({converts, store});
        // Each group stores other blocks of the tile: insert-syncs takes the
        // loop as one access of each thread's own elements.
        Stmt loop = ir::substitute(body, {{group, ir::intImm(0)}});
        if (groups > 1) {
            auto groupLoop = std::make_shared<ir::For>(group, ir::intImm(0), ir::intImm(groups), ir::ForKind::Unrolled, body, span);
            groupLoop->threadLocal = true;
            loop = groupLoop;
        }

        Decision d;
        d.where = span;
        d.op = "copy fragment->shared";
        d.choice = "stmatrix.x" + std::to_string(count);
        d.why = "each warp stores its 8x8 blocks of '" + fragment.name + "' (the accumulator's register pattern) as 16-byte rows of '" +
                shared->name + "'";
        if (fragment.dtype != shared->dtype)
            d.why += ", converting " + std::string(dtypeName(fragment.dtype)) + " to " + std::string(dtypeName(shared->dtype)) + " in registers";
        d.details.push_back(std::to_string(groups) + " stmatrix.x" + std::to_string(count) + " per thread");
        ctx_.explain.record(std::move(d));
        return std::make_shared<ir::Allocate>(pack, loop, span);
    }

private:
    PassContext &ctx_;
};

} // namespace

ir::Kernel lowerFragmentStores(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Lowerer lowerer(kernel, ctx);
    out.body = lowerer.mutate(kernel.body);
    return out;
}

} // namespace tilet
