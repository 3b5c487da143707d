// LowerPackedCopies.cpp -- see LowerPackedCopies.h.
#include "passes/LowerPackedCopies.h"

#include "ir/Layout.h"
#include "passes/ParallelNest.h"
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
        if (c.inst != ir::CopyInst::PackedBytes) return self;
        const bool pack = c.src.buffer->scope == ir::MemScope::Fragment;
        const ir::Region &frag = pack ? c.src : c.dst, &memory = pack ? c.dst : c.src;
        const ir::Buffer &fragment = frag.buffer;
        const std::string type(dtypeName(fragment->dtype));
        TILET_ASSERT(fragment->layout, "packed copy of fragment '" << fragment->name << "' without a layout");
        if (!frag.coversBuffer()) {
            ctx_.diags.error(c.span, "a copy of part of " + type + " fragment '" + fragment->name + "' is not supported yet; copy the whole fragment");
            return self;
        }
        std::optional<ir::TileLayout> pairs = ir::pairedLayout(*fragment->layout);
        if (!pairs) {
            ctx_.diags.error(c.span, std::string(pack ? "packing " : "unpacking ") + type + " fragment '" + fragment->name +
                                         "' two elements to a byte needs the two elements of each byte, [..., 2p] and [..., 2p + 1], in the registers of one thread; its layout " +
                                         fragment->layout->str() + " does not keep them together, which is not supported yet");
            return self;
        }
        if (pairs->threads != roleThreads()) {
            ctx_.diags.error(c.span, "fragment '" + fragment->name + "' is laid out over " + std::to_string(pairs->threads) + " threads and copied by " +
                                         std::to_string(roleThreads()) + "; a packed copy runs where the fragment's threads are (not supported yet)");
            return self;
        }
        ir::Buffer bytes = ir::bytesView(memory.buffer);
        ir::Region byteRegion = ir::bytesRegion(memory, bytes);
        SourceRange span = c.span;
        Stmt nest = makeParallelNest(pairs->shape, span, [&](const std::vector<Expr> &vars) {
            std::vector<Expr> first = vars, second = vars;
            first.back() = ir::mul(vars.back(), ir::intImm(2));
            second.back() = ir::add(first.back(), ir::intImm(1));
            std::vector<Expr> tile;
            for (size_t d = 0; d < vars.size(); ++d) {
                if (pairs->shape[d] != 1) tile.push_back(vars[d]);
            }
            std::vector<Expr> at = ir::regionIndices(byteRegion, byteRegion.tileShape().empty() ? std::vector<Expr>{} : tile);
            auto bits = [&](DType to, const Expr &value) { return std::make_shared<ir::MathCall>(to, ir::MathFunc::BitCast, std::vector<Expr>{value}, span); };
            if (pack) {
                Expr low = bits(DType::UInt8, std::make_shared<ir::Load>(fragment, first, span));
                Expr high = bits(DType::UInt8, std::make_shared<ir::Load>(fragment, second, span));
                Expr byte = ir::cast(DType::UInt8, ir::binary(ir::BinaryOp::BitOr, low, ir::binary(ir::BinaryOp::Shl, high, ir::intImm(4))));
                return Stmt(std::make_shared<ir::Store>(bytes, at, byte, ir::StoreOp::Assign, span));
            }
            ir::VarRef byte = ir::makeVar("packed", DType::UInt8, span);
            auto nibble = [&](const Expr &v) { return bits(fragment->dtype, ir::cast(DType::UInt8, ir::binary(ir::BinaryOp::BitAnd, v, ir::intImm(15)))); };
            Stmt stores = ir::seq({std::make_shared<ir::Store>(fragment, first, nibble(byte), ir::StoreOp::Assign, span),
                                   std::make_shared<ir::Store>(fragment, second, nibble(ir::binary(ir::BinaryOp::Shr, byte, ir::intImm(4))),
                                                               ir::StoreOp::Assign, span)});
            return Stmt(std::make_shared<ir::LetStmt>(byte, std::make_shared<ir::Load>(bytes, at, span), stores, span));
        });
        const ir::For &outer = *ir::as<ir::For>(nest);
        auto loop = ir::rebuildFor(outer, outer.min, outer.extent, outer.body);
        loop->threadLayout = *pairs;

        Decision d;
        d.where = span;
        d.op = pack ? "packing copy" : "unpacking copy";
        d.choice = "a byte per pair of registers";
        d.why = "each thread " + std::string(pack ? "packs" : "unpacks") + " the bytes of '" + memory.buffer->name + "' whose two " + type +
                " elements it holds in '" + fragment->name + "' (element 0 in the low four bits)";
        d.details.push_back("layout " + pairs->str());
        ctx_.explain.record(std::move(d));
        return std::make_shared<ir::Allocate>(bytes, loop, span);
    }

private:
    PassContext &ctx_;
};

} // namespace

ir::Kernel lowerPackedCopies(const ir::Kernel &kernel, PassContext &ctx) {
    ir::Kernel out = kernel;
    Lowerer lowerer(kernel, ctx);
    out.body = lowerer.mutate(kernel.body);
    return out;
}

} // namespace tilet
