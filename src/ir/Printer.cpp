#include "ir/Printer.h"

#include "target/Catalog.h"

#include "ir/Visitor.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace tilet::ir {

namespace {

// "(release) " after an atomic update's "atomic+=" unless it is relaxed.
std::string orderSuffix(MemoryOrder o) { return o == MemoryOrder::Relaxed ? "" : std::string("(") + memoryOrderName(o) + ") "; }

std::string formatFloat(double v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (std::isnan(v)) return "nan";
    std::ostringstream os;
    os.imbue(std::locale::classic());
    os << std::setprecision(17) << v;
    std::string s = os.str();
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
}

class IRPrinter {
public:
    explicit IRPrinter(std::ostream &out) : out_(out) {}

    void kernel(const Kernel &k) {
        out_ << "kernel " << k.name << "(";
        for (size_t i = 0; i < k.params.size(); ++i) {
            const Param &p = k.params[i];
            if (i) out_ << ", ";
            if (p.kind == ParamKind::Tensor) out_ << p.tensor->name << ": " << bufferType(*p.tensor) << (p.tensor->readOnly ? " readonly" : "");
            else if (p.kind == ParamKind::Scalar) out_ << p.var->name << ": " << dtypeName(p.var->dtype);
            else if (p.kind == ParamKind::SmCount) out_ << p.var->name << ": launch " << dtypeName(p.var->dtype);
            else out_ << p.var->name << ": dyn " << dtypeName(p.var->dtype);
        }
        out_ << ")\n  grid(";
        for (size_t i = 0; i < k.grid.size(); ++i) out_ << (i ? ", " : "") << expr(k.grid[i]);
        out_ << ") threads(" << k.threads << ")";
        if (k.hasCluster) out_ << " cluster(" << k.cluster[0] << ", " << k.cluster[1] << ", " << k.cluster[2] << ")";
        if (k.minBlocksPerSm != 1) out_ << " min_blocks_per_sm(" << k.minBlocksPerSm << ")";
        if (k.keepsRegisterBudgets) out_ << " keeps_register_budgets";
        if (k.waitsForWgmma) out_ << " waits_for_wgmma";
        if (k.dynamicSharedBytes) out_ << " dynamic_shared(" << k.dynamicSharedBytes << " bytes, align " << k.sharedAlignment << ")";
        out_ << "\n{\n";
        indent_ = 1;
        stmt(k.body);
        out_ << "}\n";
    }

    std::string expr(const Expr &e) {
        if (!e) return "<null>";
        switch (e->kind) {
        case ExprKind::IntImm: {
            auto &i = static_cast<const IntImm &>(*e);
            if (i.dtype == DType::Bool) return i.value ? "true" : "false";
            std::string s = std::to_string(i.value);
            if (i.dtype != DType::Int32) s += std::string(":") + std::string(dtypeName(i.dtype));
            return s;
        }
        case ExprKind::FloatImm: {
            auto &f = static_cast<const FloatImm &>(*e);
            std::string s = formatFloat(f.value);
            if (f.dtype != DType::F32) s += std::string(":") + std::string(dtypeName(f.dtype));
            return s;
        }
        case ExprKind::Var: return static_cast<const Var &>(*e).name;
        case ExprKind::SpecialReg: return specialKindName(static_cast<const SpecialReg &>(*e).special);
        case ExprKind::Unary: {
            auto &u = static_cast<const Unary &>(*e);
            return std::string(unaryOpName(u.op)) + "(" + expr(u.a) + ")";
        }
        case ExprKind::Binary: {
            auto &b = static_cast<const Binary &>(*e);
            if (b.op == BinaryOp::Min || b.op == BinaryOp::Max) return std::string(binaryOpName(b.op)) + "(" + expr(b.a) + ", " + expr(b.b) + ")";
            return "(" + expr(b.a) + " " + binaryOpName(b.op) + " " + expr(b.b) + ")";
        }
        case ExprKind::Select: {
            auto &s = static_cast<const Select &>(*e);
            return "select(" + expr(s.cond) + ", " + expr(s.thenValue) + ", " + expr(s.elseValue) + ")";
        }
        case ExprKind::Cast: {
            auto &c = static_cast<const Cast &>(*e);
            return std::string(dtypeName(c.dtype)) + "(" + expr(c.value) + ")";
        }
        case ExprKind::MathCall: {
            auto &m = static_cast<const MathCall &>(*e);
            std::string s = std::string(mathFuncName(m.func)) + "(";
            for (size_t i = 0; i < m.args.size(); ++i) s += (i ? ", " : "") + expr(m.args[i]);
            return s + ")";
        }
        case ExprKind::Load: {
            auto &l = static_cast<const Load &>(*e);
            return l.buffer->name + "[" + list(l.indices) + "]";
        }
        case ExprKind::ClcQuery: {
            auto &q = static_cast<const ClcQuery &>(*e);
            return std::string("clc_") + q.fieldName() + "(" + expr(q.response) + ")";
        }
        case ExprKind::Dp4a: {
            auto &d = static_cast<const Dp4a &>(*e);
            return "dp4a(" + expr(d.a) + ", " + expr(d.b) + ", " + expr(d.c) + ")";
        }
        case ExprKind::Shuffle: {
            auto &s = static_cast<const Shuffle &>(*e);
            return "shfl_" + std::string(shuffleModeName(s.mode)) + "(" + expr(s.value) + ", " + expr(s.operand) +
                   (s.width == 32 ? std::string() : ", width " + std::to_string(s.width)) + ")";
        }
        }
        return "?";
    }

    void stmt(const Stmt &s) {
        if (!s) return;
        switch (s->kind) {
        case StmtKind::Seq:
            for (const Stmt &x : static_cast<const Seq &>(*s).stmts) stmt(x);
            return;
        case StmtKind::LetStmt: {
            auto &l = static_cast<const LetStmt &>(*s);
            line("let " + l.var->name + ": " + std::string(dtypeName(l.var->dtype)) + " = " + expr(l.value));
            stmt(l.body);
            return;
        }
        case StmtKind::Allocate: {
            auto &a = static_cast<const Allocate &>(*s);
            const BufferNode &b = *a.buffer;
            std::string text = "alloc " + b.name + ": " + bufferType(b);
            if (!b.arriveCounts.empty()) text += " arrive" + intList(b.arriveCounts);
            if (b.clusterScope) text += " cluster-scope";
            if (b.layout) text += " layout " + b.layout->str();
            if (b.registers) text += " in " + b.registers->name;
            if (b.swizzle != SharedSwizzle::None) text += std::string(" swizzle ") + swizzleName(b.swizzle);
            if (b.sharedOffset >= 0) text += " at smem+" + std::to_string(b.sharedOffset);
            if (b.alignment) text += " align " + std::to_string(b.alignment);
            line(text);
            stmt(a.body);
            return;
        }
        case StmtKind::For: {
            auto &f = static_cast<const For &>(*s);
            std::string text = "for " + f.var->name + " in " + forKindName(f.forKind) + "(" + expr(f.min) + ", " + expr(f.extent) + ")";
            if (f.pipeline) {
                text += " pipelined(stages=" + std::to_string(f.pipeline->stages);
                if (!f.pipeline->order.empty()) text += ", order=" + intList(f.pipeline->order);
                if (!f.pipeline->stage.empty()) text += ", stage=" + intList(f.pipeline->stage);
                if (f.pipeline->warpSpecialize) text += std::string(", warp_specialize=") + (*f.pipeline->warpSpecialize ? "true" : "false");
                text += ")";
            }
            if (f.pingpong) text += std::string(" pingpong=") + (*f.pingpong ? "true" : "false");
            if (f.overlap) text += std::string(" overlap=") + (*f.overlap ? "true" : "false");
            if (f.threadLayout) text += " layout " + f.threadLayout->str();
            if (f.pipelineProducer) text += " pipeline-producer";
            block(text, f.body);
            return;
        }
        case StmtKind::IfThenElse: {
            auto &i = static_cast<const IfThenElse &>(*s);
            block("if " + expr(i.cond), i.thenBody);
            if (i.elseBody) block("else", i.elseBody);
            return;
        }
        case StmtKind::While: {
            auto &w = static_cast<const While &>(*s);
            block("while " + expr(w.cond), w.body);
            return;
        }
        case StmtKind::Store: {
            auto &st = static_cast<const Store &>(*s);
            line(st.buffer->name + "[" + list(st.indices) + "]" + (st.op == StoreOp::AtomicAdd     ? " atomic+= " + orderSuffix(st.order)
                                                                     : st.op == StoreOp::AtomicStore ? " atomic= " + orderSuffix(st.order)
                                                                     : st.op == StoreOp::AsyncCopy   ? " async= "
                                                                                                     : " = ") + expr(st.value));
            return;
        }
        case StmtKind::AtomicLoad: {
            auto &a = static_cast<const AtomicLoad &>(*s);
            line(expr(a.destination) + " = atomic_load " + orderSuffix(a.order) + expr(a.source));
            return;
        }
        case StmtKind::AtomicFetchAdd: {
            auto &a = static_cast<const AtomicFetchAdd &>(*s);
            line(expr(a.previous) + " = " + expr(a.target) + " atomic+= " + orderSuffix(a.order) + expr(a.value) + " (previous value)");
            return;
        }
        case StmtKind::RngInit: {
            auto &r = static_cast<const RngInit &>(*s);
            line(r.state->name + " = rng_init(" + expr(r.seed) + ", " + expr(r.sequence) + ", " + expr(r.offset) + ")");
            return;
        }
        case StmtKind::RngDraw: {
            auto &r = static_cast<const RngDraw &>(*s);
            line(expr(r.result) + " = " + (r.distribution == RngDistribution::Bits ? "rng_rand(" : "rng_rand_float(") + r.state->name + ")");
            return;
        }
        case StmtKind::CallExtern: {
            auto &c = static_cast<const CallExtern &>(*s);
            std::string args;
            for (size_t i = 0; i < c.args.size(); ++i)
                args += (i ? ", " : "") + (c.kinds[i] == ExternArgKind::Value ? std::string() : std::string("&") + externArgKindName(c.kinds[i]) + " ") + expr(c.args[i]);
            line("call_extern " + c.function + "(" + args + ")");
            return;
        }
        case StmtKind::VectorCopy: {
            auto &v = static_cast<const VectorCopy &>(*s);
            line(v.dst->name + "[" + list(v.dstIndices) + "] <-" + std::to_string(v.bytes) + "B" + (v.async ? " cp.async" : "") + "- " +
                 v.src->name + "[" + list(v.srcIndices) + "]" + (v.srcValid ? " if " + expr(v.srcValid) + " else zeros" : ""));
            return;
        }
        case StmtKind::LdMatrix: {
            auto &l = static_cast<const LdMatrix &>(*s);
            line("ldmatrix.x" + std::to_string(l.count) + (l.trans ? ".trans " : " ") + l.dst->name + "[" + expr(l.dstOffset) + "...] <- " +
                 l.src->name + "[" + list(l.srcIndices) + "]");
            return;
        }
        case StmtKind::StMatrix: {
            auto &l = static_cast<const StMatrix &>(*s);
            line("stmatrix.x" + std::to_string(l.count) + " " + l.dst->name + "[" + list(l.dstIndices) + "] <- " + l.src->name + "[" +
                 expr(l.srcOffset) + "...]");
            return;
        }
        case StmtKind::Mma: {
            auto &m = static_cast<const Mma &>(*s);
            line(std::string(m.instruction.name) + "." + std::string(dtypeName(m.operand)) + " " + m.d->name + "[" + expr(m.dOffset) +
                 "...] += " + m.a->name + "[" + expr(m.aOffset) + "...] * " + m.b->name + "[" + expr(m.bOffset) + "...]" +
                 (m.scales ? " scaled " + m.scales->a->name + "[" + expr(m.scales->aOffset) + "] (thread " + expr(m.scales->aThread) + ", byte " +
                                 expr(m.scales->aByte) + "), " + m.scales->b->name + "[" + expr(m.scales->bOffset) + "] (thread " +
                                 expr(m.scales->bThread) + ", byte " + expr(m.scales->bByte) + ")"
                           : std::string()));
            return;
        }
        case StmtKind::CpAsyncCommit: line("cp.async.commit_group"); return;
        case StmtKind::Wgmma: {
            auto &w = static_cast<const Wgmma &>(*s);
            auto operand = [&](const WgmmaOperand &o) {
                return o.buffer->name + "[" + list(o.indices) + "]" + (o.mnMajor ? " mn-major" : " k-major") + " lbo=" + std::to_string(o.leadingBytes) +
                       " sbo=" + std::to_string(o.strideBytes);
            };
            line("wgmma.m" + std::to_string(w.m) + "n" + std::to_string(w.n) + "k" + std::to_string(w.k) + " " + w.d->name + "[" + expr(w.dOffset) +
                 "...] = " + operand(w.a) + " * " + operand(w.b) + " + " + expr(w.scaleD) + " * d");
            return;
        }
        case StmtKind::TmemAlloc: {
            auto &a = static_cast<const TmemAlloc &>(*s);
            line("tcgen05.alloc " + std::to_string(a.columns) + " columns -> " + a.word->name + "[0]; relinquish_alloc_permit");
            return;
        }
        case StmtKind::TmemDealloc: {
            auto &a = static_cast<const TmemDealloc &>(*s);
            line("tcgen05.dealloc " + expr(a.address) + ", " + std::to_string(a.columns) + " columns");
            return;
        }
        case StmtKind::Tcgen05Mma: {
            auto &m = static_cast<const Tcgen05Mma &>(*s);
            auto operand = [&](const WgmmaOperand &o) {
                return o.buffer->name + "[" + list(o.indices) + "]" + (o.mnMajor ? " mn-major" : " k-major") + " lbo=" + std::to_string(o.leadingBytes) +
                       " sbo=" + std::to_string(o.strideBytes);
            };
            std::ostringstream idesc;
            idesc << std::hex << m.instructionDescriptor;
            std::string a = m.aInTensorMemory() ? m.a.buffer->name + "@" + expr(m.aAddress) : operand(m.a);
            std::string scales = m.scales ? ", scales " + m.scales->sfa->name + "@" + expr(m.scales->sfaAddress) + " " + m.scales->sfb->name + "@" +
                                                expr(m.scales->sfbAddress) + ", idesc " + expr(m.scales->descriptor)
                                          : "";
            line(std::string(m.instruction.name) + " " + m.d->name + "@" + expr(m.dAddress) + " = " + a + " * " + operand(m.b) + " + " +
                 expr(m.enableInputD) + " * d, idesc 0x" + idesc.str() + scales);
            return;
        }
        case StmtKind::Tcgen05Copy: {
            auto &c = static_cast<const Tcgen05Copy &>(*s);
            line(std::string(c.pair ? "tcgen05.cp.cta_group::2" : "tcgen05.cp") + ".32x128b.warpx4 " + c.tmem->name + "@col " + expr(c.column) + " <- " + c.src->name + "[" + list(c.srcIndices) + "]" +
                 (c.completesOn ? " -> " + c.completesOn->name : ""));
            return;
        }
        case StmtKind::Tcgen05Commit: {
            auto &c = static_cast<const Tcgen05Commit &>(*s);
            line("tcgen05.commit -> " + c.barrier->name + "[" + expr(c.index) + "]");
            return;
        }
        case StmtKind::TmemMove: {
            auto &l = static_cast<const TmemMove &>(*s);
            std::string regs = l.regs->name + "[" + expr(l.regOffset) + "...]", cells = l.tmem->name + "@" + expr(l.address);
            line(std::string(l.store ? "tcgen05.st." : "tcgen05.ld.") + tmemLoadShapeName(l.shape) + ".x" + std::to_string(l.repeat) + " " +
                 (l.store ? cells + " <- " + regs : regs + " <- " + cells));
            return;
        }
        case StmtKind::Tcgen05Sync: line(tcgen05SyncKindName(static_cast<const Tcgen05Sync &>(*s).sync)); return;
        case StmtKind::WgmmaSync: {
            auto &w = static_cast<const WgmmaSync &>(*s);
            std::string pins;
            for (const Buffer &b : w.pinned) pins += (pins.empty() ? " pinning " : ", ") + b->name;
            line((w.sync == WgmmaSyncKind::Fence ? std::string("wgmma.fence") : w.sync == WgmmaSyncKind::Commit ? std::string("wgmma.commit_group") : "wgmma.wait_group " + std::to_string(w.pending)) + pins);
            return;
        }
        case StmtKind::TmaLoad: {
            auto &t = static_cast<const TmaLoad &>(*s);
            line("tma_load " + t.desc->name + "{" + list(t.coords) + "}" + (t.im2colOffsets.empty() ? "" : " im2col{" + list(t.im2colOffsets) + "}") + " -> " +
                 t.dst->name + "[" + list(t.dstIndices) + "] on " + t.barrier->name + "[" + expr(t.barrierIndex) + "]" +
                 (t.multicastMask ? " multicast " + std::to_string(t.multicastMask) : ""));
            return;
        }
        case StmtKind::TmaStore: {
            auto &t = static_cast<const TmaStore &>(*s);
            line(std::string(t.reduceAdd ? "tma_reduce_add " : "tma_store ") + t.src->name + "[" + list(t.srcIndices) + "] -> " + t.desc->name + "{" + list(t.coords) + "}");
            return;
        }
        case StmtKind::BulkCopy: {
            auto &b = static_cast<const BulkCopy &>(*s);
            line("bulk_copy " + std::to_string(b.bytes) + "B " + b.src->name + "[" + list(b.srcIndices) + "] -> " + b.dst->name + "[" +
                 list(b.dstIndices) + "]" + (b.barrier ? " on " + b.barrier->name + "[" + expr(b.barrierIndex) + "]" : ""));
            return;
        }
        case StmtKind::ClcTryCancel: {
            auto &c = static_cast<const ClcTryCancel &>(*s);
            line(std::string(c.multicast ? "clc_try_cancel_multicast " : "clc_try_cancel ") + c.result->name + "[" + list(c.resultIndices) + "] on " +
                 c.barrier->name + "[" + expr(c.barrierIndex) + "]");
            return;
        }
        case StmtKind::BarrierExpectTx: {
            auto &b = static_cast<const BarrierExpectTx &>(*s);
            line(std::string(b.arrive ? "barrier_arrive_expect_tx " : "barrier_expect_tx ") + b.barrier->name + "[" + expr(b.index) + "] " +
                 std::to_string(b.bytes) + " bytes");
            return;
        }
        case StmtKind::FenceProxyAsync: line(as<FenceProxyAsync>(s)->global ? "fence.proxy.async (every state space)" : "fence.proxy.async"); return;
        case StmtKind::TmaStoreWait: line("tma_store_wait"); return;
        case StmtKind::TmaPrefetch: line("tma_prefetch " + static_cast<const TmaPrefetch &>(*s).desc->name); return;
        case StmtKind::CpAsyncWait: line("cp.async.wait_group " + std::to_string(static_cast<const CpAsyncWait &>(*s).pending)); return;
        case StmtKind::Copy: {
            auto &c = static_cast<const Copy &>(*s);
            std::string text = std::string(copyKindName(c.copyKind)) + " " + region(c.src) + " -> " + region(c.dst);
            if (c.inst != CopyInst::Unselected) text += " inst=" + std::string(copyInstName(c.inst));
            if (c.inPipeline) text += " in-pipeline";
            if (c.producerRole) text += " producer-role";
            if (c.reduceAdd) text += " reduce-add";
            if (c.barrier) text += " barrier=" + c.barrier->name + "[" + expr(c.barrierIndex) + "]";
            for (size_t r = 0; r < c.clusterMasks.size(); ++r) text += (r == 0 ? " cluster_mask=" : "/") + std::to_string(c.clusterMasks[r]);
            line(text);
            return;
        }
        case StmtKind::ScaleTranspose: {
            auto &t = static_cast<const ScaleTranspose &>(*s);
            line("tcgen05_sf_warp_transpose " + region(t.region));
            return;
        }
        case StmtKind::Im2Col: {
            auto &c = static_cast<const Im2Col &>(*s);
            std::string text = "im2col " + c.image->name + " -> " + region(c.dst) + " nhw_step=" + expr(c.nhwStep) + " c_step=" + expr(c.cStep) +
                               " kernel=" + std::to_string(c.kernel) + " stride=" + std::to_string(c.stride) +
                               " dilation=" + std::to_string(c.dilation) + " pad=" + std::to_string(c.pad);
            if (c.inst != CopyInst::Unselected) text += " inst=" + std::string(copyInstName(c.inst));
            if (c.inPipeline) text += " in-pipeline";
            if (c.producerRole) text += " producer on " + c.barrier->name + "[" + expr(c.barrierIndex) + "]";
            line(text);
            return;
        }
        case StmtKind::Gemm: {
            auto &g = static_cast<const Gemm &>(*s);
            std::string text = "gemm " + region(g.a) + ", " + region(g.b) + " -> " + region(g.c);
            if (g.transposeA) text += " transpose_A";
            if (g.transposeB) text += " transpose_B";
            text += std::string(" policy=") + gemmPolicyName(g.policy);
            if (g.inst != GemmInst::Unselected) text += std::string(" inst=") + gemmInstName(g.inst);
            if (g.wgWait != 0) text += " wg_wait=" + std::to_string(g.wgWait);
            if (g.warpM) text += " warps=" + std::to_string(g.warpM) + "x" + std::to_string(g.warpN);
            if (g.atomM) text += " atom=m" + std::to_string(g.atomM) + "n" + std::to_string(g.atomN) + "k" + std::to_string(g.atomK);
            line(text);
            return;
        }
        case StmtKind::Fill: {
            auto &f = static_cast<const Fill &>(*s);
            line("fill " + region(f.dst) + " = " + expr(f.value));
            return;
        }
        case StmtKind::Cumsum: {
            auto &c = static_cast<const Cumsum &>(*s);
            line("cumsum " + region(c.src) + " -> " + region(c.dst) + " dim=-" + std::to_string(c.dimFromEnd) + (c.reverse ? " reverse" : ""));
            return;
        }
        case StmtKind::Reduce: {
            auto &r = static_cast<const Reduce &>(*s);
            line(std::string("reduce_") + reduceOpName(r.op) + " " + r.src->name + " -> " + r.dst->name + " dim=" +
                 std::to_string(r.dim) + (r.clear ? "" : " accumulate"));
            return;
        }
        case StmtKind::FinalizeReducer:
            line("finalize_reducer " + static_cast<const FinalizeReducer &>(*s).reducer->name);
            return;
        case StmtKind::AtomicAdd: {
            auto &a = static_cast<const AtomicAdd &>(*s);
            line("atomic_add " + region(a.dst) + " += " + (a.src ? region(*a.src) : expr(a.value)) +
                 (a.order == MemoryOrder::Relaxed ? "" : std::string(" memory_order=") + memoryOrderName(a.order)));
            return;
        }
        case StmtKind::SyncThreads: {
            auto &b = static_cast<const SyncThreads &>(*s);
            line(b.barrierId ? "named_barrier " + std::to_string(b.barrierId) + " threads=" + std::to_string(b.threads) : "sync_threads");
            return;
        }
        case StmtKind::IssueTurn: {
            auto &t = static_cast<const IssueTurn &>(*s);
            line(std::string(t.action == IssueTurn::Action::Take ? "issue_turn_take " : "issue_turn_pass ") + expr(t.barrierId) + " threads=" +
                 std::to_string(t.threads));
            return;
        }
        case StmtKind::BarrierInit: {
            std::string names;
            for (const Buffer &b : static_cast<const BarrierInit &>(*s).barriers) names += (names.empty() ? "" : ", ") + b->name;
            line("barrier_init " + names);
            return;
        }
        case StmtKind::BarrierArrive: {
            auto &b = static_cast<const BarrierArrive &>(*s);
            line("barrier_arrive " + b.barrier->name + "[" + expr(b.index) + "]" + (b.remoteRank ? " in block " + expr(b.remoteRank) : ""));
            return;
        }
        case StmtKind::BarrierWait: {
            auto &b = static_cast<const BarrierWait &>(*s);
            line("barrier_wait " + b.barrier->name + "[" + expr(b.index) + "] parity " + expr(b.parity));
            return;
        }
        case StmtKind::ClusterSync: line("cluster_sync"); return;
        case StmtKind::WarpSpecialize: {
            auto &w = static_cast<const WarpSpecialize &>(*s);
            block("ws warps" + intList(w.warps), w.body);
            return;
        }
        case StmtKind::Elect: {
            auto &el = static_cast<const Elect &>(*s);
            block(el.unit == Elect::Unit::WarpGroup ? std::string("elect one per warp group") : "elect thread " + std::to_string(el.firstThread), el.body);
            return;
        }
        case StmtKind::SetMaxNReg: {
            auto &m = static_cast<const SetMaxNReg &>(*s);
            line("set_max_nreg " + std::to_string(m.count) + (m.increase ? " inc" : " dec"));
            return;
        }
        case StmtKind::Jump: line(as<Jump>(s)->keyword()); return;
        case StmtKind::PdlTrigger: line("pdl_trigger"); return;
        case StmtKind::PdlSync: line("pdl_sync"); return;
        }
    }

private:
    std::string bufferType(const BufferNode &b) {
        std::string s = std::string(memScopeName(b.scope)) + " " + std::string(dtypeName(b.dtype)) + "[" + list(b.shape) + "]";
        return s;
    }
    std::string list(const std::vector<Expr> &es) {
        std::string s;
        for (size_t i = 0; i < es.size(); ++i) s += (i ? ", " : "") + expr(es[i]);
        return s;
    }
    std::string intList(const std::vector<int64_t> &xs) {
        std::string s = "[";
        for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
        return s + "]";
    }
    std::string region(const Region &r) {
        std::string s = r.buffer->name + "[";
        for (size_t i = 0; i < r.mins.size(); ++i) {
            if (i) s += ", ";
            s += expr(r.mins[i]);
            if (r.extents[i] != 1) s += " +: " + std::to_string(r.extents[i]);
        }
        return s + "]";
    }
    void line(const std::string &text) { out_ << std::string(indent_ * 2, ' ') << text << "\n"; }
    void block(const std::string &head, const Stmt &body) {
        line(head + " {");
        ++indent_;
        stmt(body);
        --indent_;
        line("}");
    }

    std::ostream &out_;
    int indent_ = 0;
};

} // namespace

void print(const Kernel &k, std::ostream &out) { IRPrinter(out).kernel(k); }

void print(const Module &m, std::ostream &out) {
    out << "module " << m.sourceName << " target " << m.targetName << "\n";
    for (const Kernel &k : m.kernels) {
        out << "\n";
        print(k, out);
    }
}

std::string toString(const Expr &e) {
    std::ostringstream os;
    return IRPrinter(os).expr(e);
}

std::string toString(const Stmt &s) {
    std::ostringstream os;
    IRPrinter(os).stmt(s);
    return os.str();
}

} // namespace tilet::ir
