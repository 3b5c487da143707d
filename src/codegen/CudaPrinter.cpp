// CudaPrinter.cpp -- see CudaPrinter.h.
#include "codegen/CudaPrinter.h"

#include "codegen/CSyntax.h"
#include "ir/Simplify.h"
#include "support/Embedded.h"
#include "support/InternalError.h"
#include "target/Catalog.h"

#include <map>
#include <sstream>

namespace tilet {

std::string deviceKernelName(const ir::Kernel &k, const OutputNames &names, const Variant &variant) {
    return names.symbolPrefix + k.name + "_kernel" + variant.kernelSuffix;
}

std::string devicePassCondition(const Target &target) {
    std::string condition = "defined(__CUDA_ARCH__) && __CUDA_ARCH__ == " + std::to_string(target.arch * 10);
    if (target.exactCapability) condition += " && defined(__CUDA_ARCH_FEAT_SM" + std::to_string(target.arch) + "_ALL)";
    return condition;
}

std::string targetList(const Variants &variants) {
    std::string list;
    for (const Variant &v : variants) list += (list.empty() ? "" : ", ") + v.target.name;
    return list;
}

int64_t requiredAlignment(const Variants &variants, size_t kernel, size_t param) {
    int64_t alignment = 0;
    for (const Variant &v : variants) {
        const ir::Param &p = v.module.kernels[kernel].params[param];
        TILET_ASSERT(p.kind == ir::ParamKind::Tensor, "the variants of a kernel have different parameters");
        alignment = std::max(alignment, p.tensor->alignment);
    }
    return alignment;
}

std::string gencodeFlags(const Variants &variants) {
    std::string flags;
    for (const Variant &v : variants) flags += (flags.empty() ? "" : " ") + std::string("-gencode ") + v.target.gencode;
    return flags;
}

namespace {

std::string wgmmaHelper(const std::string &key, const ir::Wgmma &w);
std::string mmaSyncHelper(const ir::Mma &m);
std::string tcgen05MmaHelper(const std::string &key, const Instruction &inst, bool aInTensorMemory);
std::string tmemMoveHelper(const std::string &key, ir::TmemLoadShape shape, bool store, int64_t repeat);
std::string atomicAddHelper(const std::string &key, ir::MemoryOrder order, DType t);
std::string atomicAccessHelper(const std::string &key, bool store, ir::MemoryOrder order, DType t);

// Where the .cu's own numbering resumes after #line directives into a .tl
// file: printCuda replaces each such line with `#line N "k.cu"`.
constexpr const char *kCuLineMarker = "#line TILET_CU_LINE";

std::string quotedPath(const std::string &path) {
    std::string q = "\"";
    for (char c : path) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
}

class KernelPrinter {
public:
    // `sharedAlignment`: of the dynamic shared memory of every kernel in the
    // file (nvcc takes all their extern __shared__ declarations for one).
    // `fileNames`: the .tl files #line directives may name (null: none are printed).
    // `devicePass`: in a multi-architecture file, the condition under which
    // the body is compiled (devicePassCondition); "" compiles it always.
    KernelPrinter(const ir::Kernel &k, Emitter &out, int64_t sharedAlignment, const std::string &deviceName,
                  const std::map<FileId, std::string> *fileNames, const std::string &devicePass)
        : kernel_(k), out_(out), names_({deviceName}), expr_(names_), sharedAlignment_(sharedAlignment), deviceName_(deviceName),
          fileNames_(fileNames), devicePass_(devicePass) {}

    void print() {
        std::string params;
        for (size_t i = 0; i < kernel_.params.size(); ++i) {
            const ir::Param &p = kernel_.params[i];
            if (i) params += ", ";
            if (p.kind == ir::ParamKind::Tensor) {
                expr_.needHeader(cTypeHeader(p.tensor->dtype));
                // PDL kernels drop __restrict__: nvcc mishandles it around griddepcontrol.
                params += std::string(p.tensor->readOnly ? "const " : "") + cType(p.tensor->dtype) + "* " +
                          (kernel_.usesPdl ? "" : "__restrict__ ") + names_.buffer(p.tensor.get());
            } else {
                params += cType(p.var->dtype) + " " + names_.var(p.var.get());
            }
        }
        for (const ir::TmaDescriptorRef &d : kernel_.tmaDescriptors) {
            expr_.needHeader("cuda.h");
            params += std::string(params.empty() ? "" : ", ") + "const __grid_constant__ CUtensorMap " + names_.var(d->param.get());
        }
        out_.line("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kernel_.threads) + ", " +
                  std::to_string(kernel_.minBlocksPerSm) + ")");
        out_.open(deviceName_ + "(" + params + ")");
        // Every pass declares the kernel (the host pass makes its launch stub,
        // each device pass a symbol for it); only its target's pass compiles the body.
        if (!devicePass_.empty()) out_.raw("#if " + devicePass_ + "\n");
        if (kernel_.dynamicSharedBytes > 0)
            out_.line("extern __shared__ __align__(" + std::to_string(sharedAlignment_) + ") unsigned char tilet_smem[];");
        stmt(kernel_.body);
        if (lineFile_ != kNoFile) out_.raw(std::string(kCuLineMarker) + "\n");   // the .cu's own lines again
        if (!devicePass_.empty()) {
            out_.raw("#elif defined(__CUDA_ARCH__)\n");
            out_.line("__trap();   // another architecture's code: the launch functions never run this variant on it");
            out_.raw("#endif\n");
        }
        out_.close(deviceName_);
    }

    const std::set<std::string> &headers() const { return expr_.headers(); }
    const std::set<std::string> &helpers() const { return expr_.helpers(); }
    const std::map<std::string, std::string> &generatedHelpers() const { return generated_; }

private:
    std::string e(const ir::Expr &x) { return expr_.print(x); }
    // "uint8[2, 128, 32]": a view's dtype and shape, for its declaration's comment.
    std::string viewShape(const ir::BufferNode &b) {
        std::string dims;
        for (const ir::Expr &d : b.shape) dims += (dims.empty() ? "" : ", ") + e(d);
        return std::string(dtypeName(b.dtype)) + "[" + dims + "]";
    }
    void helper(const std::string &key) { expr_.needHelper(key); }

    std::string access(const ir::Buffer &b, const std::vector<ir::Expr> &indices) {
        const std::string &name = names_.buffer(b.get());
        if (indices.empty()) return name;
        TILET_ASSERT(indices.size() == 1, "multi-dimensional access of '" << b->name << "' reached the printer");
        return name + "[" + e(indices[0]) + "]";
    }

    // The call that adds `value` to `target` atomically and returns its
    // previous value: CUDA's atomicAdd is the relaxed one, except for int64,
    // which it lacks; the other orders are a helper of their own.
    std::string atomicAddCall(ir::MemoryOrder order, DType t, const std::string &target, const std::string &value) {
        if (order == ir::MemoryOrder::Relaxed && t != DType::Int64) return "atomicAdd(&" + target + ", " + value + ")";
        std::string key = std::string("atomic_add_") + ir::memoryOrderName(order) + "_" + ptxTypeName(t);
        if (!generated_.count(key)) generated_[key] = atomicAddHelper(key, order, t);
        return "tilet_" + key + "(&" + target + ", " + value + ")";
    }

    // tilet_atomic_{load,store}_ORDER_TYPE(&element[, value]).
    std::string atomicAccessCall(bool store, ir::MemoryOrder order, DType t, const std::string &target, const std::string &value) {
        std::string key = std::string(store ? "atomic_store_" : "atomic_load_") + ir::memoryOrderName(order) + "_" + ptxTypeName(t);
        if (!generated_.count(key)) generated_[key] = atomicAccessHelper(key, store, order, t);
        return "tilet_" + key + "(&" + target + (store ? ", " + value : std::string()) + ")";
    }

    // A statement printed in its own C block.
    void block(const ir::Stmt &s) {
        names_.pushScope();
        stmt(s);
        names_.popScope();
    }

    // `#line L "file.tl"` before the code of each statement whose .tl line
    // is not the one the compiler counts there already (each line after a
    // directive counts one more): nvcc's messages, cuda-gdb and
    // compute-sanitizer name the statement's .tl line.
    void lineDirective(const SourceRange &span) {
        if (!fileNames_ || !span.valid()) return;
        auto name = fileNames_->find(span.begin.file);
        if (name == fileNames_->end()) return;
        int64_t counted = line_ + (out_.lines() - directiveAt_);
        if (span.begin.file == lineFile_ && span.begin.line == counted) return;
        lineFile_ = span.begin.file;
        line_ = span.begin.line;
        out_.raw("#line " + std::to_string(line_) + " " + quotedPath(name->second) + "\n");
        directiveAt_ = out_.lines();
    }

    void stmt(const ir::Stmt &s) {
        if (!s) return;
        if (s->kind != ir::StmtKind::Seq) lineDirective(s->span);
        switch (s->kind) {
        case ir::StmtKind::Seq:
            for (const ir::Stmt &x : ir::as<ir::Seq>(s)->stmts) stmt(x);
            return;
        case ir::StmtKind::LetStmt: {
            const ir::LetStmt &l = *ir::as<ir::LetStmt>(s);
            expr_.needHeader(cTypeHeader(l.var->dtype));
            out_.line("const " + cType(l.var->dtype) + " " + names_.var(l.var.get()) + " = " + e(l.value) + ";");
            stmt(l.body);
            return;
        }
        case ir::StmtKind::Allocate: {
            const ir::Allocate &a = *ir::as<ir::Allocate>(s);
            const ir::BufferNode &b = *a.buffer;
            expr_.needHeader(cTypeHeader(b.dtype));
            const std::string &name = names_.buffer(&b);
            if (b.scope == ir::MemScope::Shared && b.remoteOf) {
                helper("map_shared_rank");
                out_.line(cType(b.dtype) + "* " + name + " = tilet_map_shared_rank(" + names_.buffer(b.remoteOf.get()) + ", " + e(b.remoteBlock) + ");");
            } else if (b.scope == ir::MemScope::Shared && b.viewOf) {
                // From the dynamic base, as the buffer itself is: one declaration form for all shared memory.
                out_.line(cType(b.dtype) + "* " + name + " = reinterpret_cast<" + cType(b.dtype) + "*>(tilet_smem + " +
                          std::to_string(ir::storageRoot(b).sharedOffset) + ");   // '" + b.viewOf->name + "' viewed as " + viewShape(b));
            } else if (b.scope == ir::MemScope::Shared && isSubByte(b.dtype)) {
                // Packed elements have no C type: every access goes through a uint8 view of the bytes (ir::bytesView).
                out_.line("// '" + b.name + "': packed " + std::string(dtypeName(b.dtype)) + " at byte " + std::to_string(b.sharedOffset) +
                          " of shared memory, accessed through uint8 views");
            } else if (b.scope == ir::MemScope::Shared) {
                out_.line(cType(b.dtype) + "* " + name + " = reinterpret_cast<" + cType(b.dtype) + "*>(tilet_smem + " +
                          std::to_string(b.sharedOffset) + ");");
            } else if (b.scope == ir::MemScope::Barrier) {
                out_.line("unsigned long long* " + name + " = reinterpret_cast<unsigned long long*>(tilet_smem + " + std::to_string(b.sharedOffset) +
                          ");   // " + std::to_string(b.arriveCounts.size()) + " mbarrier" + (b.arriveCounts.size() == 1 ? "" : "s"));
            } else if (b.scope == ir::MemScope::Global && b.viewOf) {
                std::string type = std::string(b.readOnly || ir::storageRoot(b).readOnly ? "const " : "") + cType(b.dtype) + "*";
                out_.line(type + " " + name + " = reinterpret_cast<" + type + ">(" + names_.buffer(b.viewOf.get()) + ");   // '" + b.viewOf->name +
                          "' viewed as " + viewShape(b));
            } else if (b.scope == ir::MemScope::Local) {
                std::string align = b.alignment > 0 ? "__align__(" + std::to_string(b.alignment) + ") " : "";
                expr_.needHeader(cValueTypeHeader(b.dtype));
                if (b.rank() == 0) out_.line(align + cValueType(b.dtype) + " " + name + ";");
                else out_.line(align + cValueType(b.dtype) + " " + name + "[" + std::to_string(*b.constElements()) + "];");
            } else if (b.scope == ir::MemScope::TMem) {
                // Its columns are part of the block's one allocation (plan-tensor-memory): nothing to declare.
            } else {
                TILET_INTERNAL_ERROR(ir::memScopeName(b.scope) << " buffer '" << b.name << "' reached the printer");
            }
            stmt(a.body);
            return;
        }
        case ir::StmtKind::For: {
            const ir::For &f = *ir::as<ir::For>(s);
            TILET_ASSERT(f.forKind == ir::ForKind::Serial || f.forKind == ir::ForKind::Unrolled, "unlowered loop reached the printer");
            if (f.forKind == ir::ForKind::Unrolled) out_.line("#pragma unroll");
            std::string end = e(ir::simplify(ir::add(f.min, f.extent)));
            names_.pushScope();
            const std::string &v = names_.var(f.var.get());
            out_.open("for (" + cType(f.var->dtype) + " " + v + " = " + e(f.min) + "; " + v + " < " + end + "; ++" + v + ")");
            stmt(f.body);
            out_.close();
            names_.popScope();
            return;
        }
        case ir::StmtKind::IfThenElse: {
            const ir::IfThenElse &i = *ir::as<ir::IfThenElse>(s);
            out_.open("if (" + e(i.cond) + ")");
            block(i.thenBody);
            if (i.elseBody) {
                out_.close();
                out_.open("else");
                block(i.elseBody);
            }
            out_.close();
            return;
        }
        case ir::StmtKind::While: {
            const ir::While &w = *ir::as<ir::While>(s);
            out_.open("while (" + e(w.cond) + ")");
            block(w.body);
            out_.close();
            return;
        }
        case ir::StmtKind::Store: {
            const ir::Store &st = *ir::as<ir::Store>(s);
            std::string target = access(st.buffer, st.indices);
            if (st.op == ir::StoreOp::AtomicAdd) {
                out_.line(atomicAddCall(st.order, st.buffer->dtype, target, e(st.value)) + ";");
            } else if (st.op == ir::StoreOp::AtomicStore) {
                out_.line(atomicAccessCall(true, st.order, st.buffer->dtype, target, e(st.value)) + ";");
            } else {
                out_.line(target + " = " + e(st.value) + ";");
            }
            return;
        }
        case ir::StmtKind::AtomicFetchAdd: {
            const ir::AtomicFetchAdd &a = *ir::as<ir::AtomicFetchAdd>(s);
            const ir::Load &target = *ir::as<ir::Load>(a.target);
            out_.line(e(a.previous) + " = " + atomicAddCall(a.order, target.buffer->dtype, access(target.buffer, target.indices), e(a.value)) + ";");
            return;
        }
        case ir::StmtKind::AtomicLoad: {
            const ir::AtomicLoad &a = *ir::as<ir::AtomicLoad>(s);
            const ir::Load &source = *ir::as<ir::Load>(a.source);
            out_.line(e(a.destination) + " = " + atomicAccessCall(false, a.order, source.buffer->dtype, access(source.buffer, source.indices), "") + ";");
            return;
        }
        case ir::StmtKind::RngInit: {
            const ir::RngInit &r = *ir::as<ir::RngInit>(s);
            helper("philox");
            out_.line("tilet_philox_init(" + names_.buffer(r.state.get()) + ", " + e(r.seed) + ", " + e(r.sequence) + ", " + e(r.offset) + ");");
            return;
        }
        case ir::StmtKind::RngDraw: {
            const ir::RngDraw &r = *ir::as<ir::RngDraw>(s);
            helper("philox");
            out_.line(e(r.result) + " = " + (r.distribution == ir::RngDistribution::Bits ? "tilet_philox_next(" : "tilet_philox_uniform(") +
                      names_.buffer(r.state.get()) + ");");
            return;
        }
        case ir::StmtKind::CallExtern: {
            const ir::CallExtern &c = *ir::as<ir::CallExtern>(s);
            std::string args;
            for (size_t i = 0; i < c.args.size(); ++i) {
                const ir::Load *pointee = c.kinds[i] == ir::ExternArgKind::Value ? nullptr : ir::as<ir::Load>(c.args[i]);
                args += (i ? ", " : "") + (pointee ? "&" + access(pointee->buffer, pointee->indices) : e(c.args[i]));
            }
            out_.line(c.function + "(" + args + ");");
            return;
        }
        case ir::StmtKind::VectorCopy: {
            const ir::VectorCopy &v = *ir::as<ir::VectorCopy>(s);
            if (v.async) {
                std::string key = "cp_async_" + std::to_string(v.bytes);
                helper(key);
                out_.line("tilet_" + key + "(&" + access(v.dst, v.dstIndices) + ", &" + access(v.src, v.srcIndices) + ", " +
                          (v.srcValid ? e(v.srcValid) : std::string("true")) + ");");
                return;
            }
            std::string type = v.bytes == 16 ? "uint4" : v.bytes == 8 ? "uint2" : "unsigned int";
            bool srcConst = v.src->scope == ir::MemScope::Global && v.src->readOnly;
            out_.line("*reinterpret_cast<" + type + "*>(&" + access(v.dst, v.dstIndices) + ") = *reinterpret_cast<" +
                      (srcConst ? "const " : "") + type + "*>(&" + access(v.src, v.srcIndices) + ");");
            return;
        }
        case ir::StmtKind::LdMatrix: {
            const ir::LdMatrix &l = *ir::as<ir::LdMatrix>(s);
            std::string key = "ldmatrix_x" + std::to_string(l.count) + (l.trans ? "_trans" : "");
            helper(key);
            out_.line("tilet_" + key + "(&" + access(l.dst, {l.dstOffset}) + ", &" + access(l.src, l.srcIndices) + ");");
            return;
        }
        case ir::StmtKind::StMatrix: {
            const ir::StMatrix &l = *ir::as<ir::StMatrix>(s);
            std::string key = "stmatrix_x" + std::to_string(l.count);
            helper(key);
            out_.line("tilet_" + key + "(&" + access(l.dst, l.dstIndices) + ", &" + access(l.src, {l.srcOffset}) + ");");
            return;
        }
        case ir::StmtKind::Mma: {
            const ir::Mma &m = *ir::as<ir::Mma>(s);
            std::string key = catalog::helperKey(m.instruction, m.operand);
            if (!generated_.count(key)) generated_[key] = mmaSyncHelper(m);
            std::string scales;
            if (m.scales)
                scales = ", " + access(m.scales->a, {m.scales->aOffset}) + ", " + e(m.scales->aByte) + ", " + e(m.scales->aThread) + ", " +
                         access(m.scales->b, {m.scales->bOffset}) + ", " + e(m.scales->bByte) + ", " + e(m.scales->bThread);
            out_.line("tilet_" + key + "(&" + access(m.d, {m.dOffset}) + ", &" + access(m.a, {m.aOffset}) + ", &" + access(m.b, {m.bOffset}) +
                      scales + ");");
            return;
        }
        case ir::StmtKind::TmaLoad: {
            const ir::TmaLoad &t = *ir::as<ir::TmaLoad>(s);
            std::string key = std::string(t.im2colOffsets.empty() ? "tma_load_" : "tma_load_im2col_") + std::to_string(t.coords.size()) + "d" +
                              (t.multicastMask ? "_multicast" : "") + (t.completesOnLeader ? "_2cta" : "");
            helper(key);
            std::string args = "&" + access(t.dst, t.dstIndices) + ", &" + names_.var(t.desc->param.get()) + ", &" + access(t.barrier, {t.barrierIndex});
            if (t.multicastMask) args += ", " + std::to_string(t.multicastMask);
            for (const ir::Expr &c : t.coords) args += ", " + e(c);
            for (const ir::Expr &o : t.im2colOffsets) args += ", static_cast<unsigned short>(" + e(o) + ")";
            out_.line("tilet_" + key + "(" + args + ");");
            return;
        }
        case ir::StmtKind::TmaStore: {
            const ir::TmaStore &t = *ir::as<ir::TmaStore>(s);
            std::string key = (t.reduceAdd ? "tma_reduce_add_" : "tma_store_") + std::to_string(t.coords.size()) + "d";
            helper(key);
            std::string args = "&" + names_.var(t.desc->param.get()) + ", &" + access(t.src, t.srcIndices);
            for (const ir::Expr &c : t.coords) args += ", " + e(c);
            out_.line("tilet_" + key + "(" + args + ");");
            return;
        }
        case ir::StmtKind::BulkCopy: {
            const ir::BulkCopy &b = *ir::as<ir::BulkCopy>(s);
            bool load = b.dst->scope == ir::MemScope::Shared;
            helper(load ? "bulk_load" : "bulk_store");
            out_.line(std::string(load ? "tilet_bulk_load(" : "tilet_bulk_store(") + "&" + access(b.dst, b.dstIndices) + ", &" + access(b.src, b.srcIndices) +
                      ", " + std::to_string(b.bytes) + (load ? ", &" + access(b.barrier, {b.barrierIndex}) : std::string()) + ");");
            return;
        }
        case ir::StmtKind::ClcTryCancel: {
            const ir::ClcTryCancel &c = *ir::as<ir::ClcTryCancel>(s);
            std::string key = c.multicast ? "clc_try_cancel_multicast" : "clc_try_cancel";
            helper(key);
            out_.line("tilet_" + key + "(&" + access(c.result, c.resultIndices) + ", &" + access(c.barrier, {c.barrierIndex}) + ");");
            return;
        }
        case ir::StmtKind::BarrierExpectTx: {
            const ir::BarrierExpectTx &b = *ir::as<ir::BarrierExpectTx>(s);
            std::string key = b.arrive ? "mbarrier_arrive_expect_tx" : "mbarrier_expect_tx";
            helper(key);
            out_.line("tilet_" + key + "(&" + access(b.barrier, {b.index}) + ", " + std::to_string(b.bytes) + ");");
            return;
        }
        case ir::StmtKind::FenceProxyAsync:
            if (ir::as<ir::FenceProxyAsync>(s)->global) {
                helper("fence_proxy_async_all");
                out_.line("tilet_fence_proxy_async_all();");
                return;
            }
            helper("fence_proxy_async");
            out_.line("tilet_fence_proxy_async();");
            return;
        case ir::StmtKind::TmaPrefetch:
            helper("tma_prefetch");
            out_.line("tilet_tma_prefetch(&" + names_.var(ir::as<ir::TmaPrefetch>(s)->desc->param.get()) + ");");
            return;
        case ir::StmtKind::TmaStoreWait:
            helper("tma_store_wait");
            out_.line("tilet_tma_store_wait();");
            return;
        case ir::StmtKind::Wgmma: {
            const ir::Wgmma &w = *ir::as<ir::Wgmma>(s);
            std::string key = "wgmma_m64n" + std::to_string(w.n) + "k" + std::to_string(w.k) + "_" + mmaTypeName(w.d->dtype, false) + "_" +
                              mmaTypeName(w.a.buffer->dtype, true);
            if (w.b.buffer->dtype != w.a.buffer->dtype) key += "_" + mmaTypeName(w.b.buffer->dtype, true);
            bool aInRegisters = w.a.buffer->scope != ir::MemScope::Shared;
            if (aInRegisters) key += "_rs";
            if (!generated_.count(key)) generated_[key] = wgmmaHelper(key, w);
            helper("wgmma_desc");
            auto desc = [&](const ir::WgmmaOperand &o) {
                if (o.buffer->scope != ir::MemScope::Shared) return "&" + access(o.buffer, o.indices);
                int mode = o.swizzle == ir::SharedSwizzle::B128 ? 1 : o.swizzle == ir::SharedSwizzle::B64 ? 2 : o.swizzle == ir::SharedSwizzle::B32 ? 3 : 0;
                return "tilet_wgmma_desc(&" + access(o.buffer, o.indices) + ", " + std::to_string(o.leadingBytes) + ", " + std::to_string(o.strideBytes) +
                       ", " + std::to_string(mode) + ")";
            };
            out_.line("tilet_" + key + "<" + (w.a.mnMajor ? "1" : "0") + ", " + (w.b.mnMajor ? "1" : "0") + ">(&" + access(w.d, {w.dOffset}) + ", " +
                      desc(w.a) + ", " + desc(w.b) + ", " + e(w.scaleD) + ");");
            return;
        }
        case ir::StmtKind::WgmmaSync: {
            const ir::WgmmaSync &w = *ir::as<ir::WgmmaSync>(s);
            auto pin = [&] {
                for (const ir::Buffer &b : w.pinned) {
                    helper("pin_registers");
                    out_.line("tilet_pin_registers(" + names_.buffer(b.get()) + ");");
                }
            };
            if (w.sync == ir::WgmmaSyncKind::Fence) {
                pin();
                helper("wgmma_fence");
                out_.line("tilet_wgmma_fence();");
            } else if (w.sync == ir::WgmmaSyncKind::Commit) {
                helper("wgmma_commit");
                out_.line("tilet_wgmma_commit();");
            } else {
                helper("wgmma_wait");
                out_.line("tilet_wgmma_wait<" + std::to_string(w.pending) + ">();");
                pin();
            }
            return;
        }
        case ir::StmtKind::CpAsyncCommit:
            helper("cp_async_commit");
            out_.line("tilet_cp_async_commit();");
            return;
        case ir::StmtKind::CpAsyncWait:
            helper("cp_async_wait");
            out_.line("tilet_cp_async_wait<" + std::to_string(ir::as<ir::CpAsyncWait>(s)->pending) + ">();");
            return;
        case ir::StmtKind::SyncThreads: {
            const ir::SyncThreads &b = *ir::as<ir::SyncThreads>(s);
            if (b.barrierId == 0) {
                out_.line("__syncthreads();");
            } else if (b.barrierId < 0) {
                out_.line("__syncwarp();");
            } else {
                helper("named_barrier");
                out_.line("tilet_named_barrier(" + std::to_string(b.barrierId) + ", " + std::to_string(b.threads) + ");");
            }
            return;
        }
        case ir::StmtKind::IssueTurn: {
            const ir::IssueTurn &t = *ir::as<ir::IssueTurn>(s);
            bool take = t.action == ir::IssueTurn::Action::Take;
            helper(take ? "issue_turn_wait" : "issue_turn_pass");
            out_.line(std::string(take ? "tilet_issue_turn_wait(" : "tilet_issue_turn_pass(") + e(t.barrierId) + ", " + std::to_string(t.threads) + ");");
            return;
        }
        case ir::StmtKind::BarrierInit: {
            helper("mbarrier_init");
            for (const ir::Buffer &b : ir::as<ir::BarrierInit>(s)->barriers) {
                const std::string &name = names_.buffer(b.get());
                for (size_t i = 0; i < b->arriveCounts.size(); ++i)
                    out_.line("tilet_mbarrier_init(&" + name + "[" + std::to_string(i) + "], " + std::to_string(b->arriveCounts[i]) + ");");
            }
            out_.line("tilet_fence_barrier_init();");
            return;
        }
        case ir::StmtKind::TmemAlloc: {
            const ir::TmemAlloc &a = *ir::as<ir::TmemAlloc>(s);
            std::string key = a.pair ? "tmem_alloc_2cta" : "tmem_alloc";
            helper(key);
            out_.line("tilet_" + key + "(&" + access(a.word, {ir::intImm(0)}) + ", " + std::to_string(a.columns) + ");");
            return;
        }
        case ir::StmtKind::TmemDealloc: {
            const ir::TmemDealloc &a = *ir::as<ir::TmemDealloc>(s);
            std::string key = a.pair ? "tmem_dealloc_2cta" : "tmem_dealloc";
            helper(key);
            out_.line("tilet_" + key + "(" + e(a.address) + ", " + std::to_string(a.columns) + ");");
            return;
        }
        case ir::StmtKind::Tcgen05Mma: {
            const ir::Tcgen05Mma &m = *ir::as<ir::Tcgen05Mma>(s);
            std::string key = std::string(m.instruction.name) + (m.aInTensorMemory() ? "_ts" : "");
            if (!generated_.count(key)) generated_[key] = tcgen05MmaHelper(key, m.instruction, m.aInTensorMemory());
            helper("tcgen05_desc");
            auto desc = [&](const ir::WgmmaOperand &o) {
                // PTX ISA, "Shared memory descriptor" (tcgen05): none 0, 128B 2, 64B 4, 32B 6.
                int mode = o.swizzle == ir::SharedSwizzle::B128 ? 2 : o.swizzle == ir::SharedSwizzle::B64 ? 4 : o.swizzle == ir::SharedSwizzle::B32 ? 6 : 0;
                return "tilet_tcgen05_desc(&" + access(o.buffer, o.indices) + ", " + std::to_string(o.leadingBytes) + ", " + std::to_string(o.strideBytes) +
                       ", " + std::to_string(mode) + ")";
            };
            std::ostringstream idesc;
            idesc << "0x" << std::hex << m.instructionDescriptor << "u";
            std::string a = m.aInTensorMemory() ? e(m.aAddress) : desc(m.a);
            std::string tail = m.scales ? ", " + e(m.scales->sfaAddress) + ", " + e(m.scales->sfbAddress) : "";
            out_.line("tilet_" + key + "(" + e(m.dAddress) + ", " + a + ", " + desc(m.b) + ", " + (m.scales ? e(m.scales->descriptor) : idesc.str()) +
                      ", " + e(m.enableInputD) + tail + ");");
            return;
        }
        case ir::StmtKind::Tcgen05Copy: {
            const ir::Tcgen05Copy &c = *ir::as<ir::Tcgen05Copy>(s);
            helper("tcgen05_desc");
            std::string key = c.pair ? "tcgen05_cp_32x128b_warpx4_2cta" : "tcgen05_cp_32x128b_warpx4";
            helper(key);
            out_.line("tilet_" + key + "(" + e(ir::add(c.tmem->tmemAddress, ir::cast(DType::UInt32, c.column))) + ", tilet_tcgen05_desc(&" +
                      access(c.src, c.srcIndices) + ", " + std::to_string(ir::kTcgen05CopyLeadingBytes) + ", " +
                      std::to_string(ir::kTcgen05CopyStrideBytes) + ", 0));");
            return;
        }
        case ir::StmtKind::Tcgen05Commit: {
            const ir::Tcgen05Commit &c = *ir::as<ir::Tcgen05Commit>(s);
            TILET_ASSERT(c.pair || !c.bothBlocks, "a commit to both blocks of a CTA pair in a kernel without the pair's MMAs");
            std::string key = !c.pair ? "tcgen05_commit" : c.bothBlocks ? "tcgen05_commit_2cta_multicast" : "tcgen05_commit_2cta";
            helper(key);
            out_.line("tilet_" + key + "(&" + access(c.barrier, {c.index}) + ");");
            return;
        }
        case ir::StmtKind::TmemMove: {
            const ir::TmemMove &l = *ir::as<ir::TmemMove>(s);
            std::string key = std::string(l.store ? "tmem_store_" : "tmem_load_") + ir::tmemLoadShapeName(l.shape) + "_x" + std::to_string(l.repeat);
            if (!generated_.count(key)) generated_[key] = tmemMoveHelper(key, l.shape, l.store, l.repeat);
            out_.line("tilet_" + key + "(&" + access(l.regs, {l.regOffset}) + ", " + e(l.address) + ");");
            return;
        }
        case ir::StmtKind::Tcgen05Sync: {
            ir::Tcgen05SyncKind k = ir::as<ir::Tcgen05Sync>(s)->sync;
            std::string key = k == ir::Tcgen05SyncKind::WaitLoad    ? "tcgen05_wait_ld"
                              : k == ir::Tcgen05SyncKind::WaitStore ? "tcgen05_wait_st"
                              : k == ir::Tcgen05SyncKind::FenceBefore ? "tcgen05_fence_before"
                                                                      : "tcgen05_fence_after";
            helper(key);
            out_.line("tilet_" + key + "();");
            return;
        }
        case ir::StmtKind::BarrierArrive: {
            const ir::BarrierArrive &a = *ir::as<ir::BarrierArrive>(s);
            if (a.remoteRank) {
                helper("mbarrier_arrive_cluster");
                out_.line("tilet_mbarrier_arrive_cluster(&" + access(a.barrier, {a.index}) + ", " + e(a.remoteRank) + ");");
                return;
            }
            helper("mbarrier_arrive");
            out_.line("tilet_mbarrier_arrive(&" + access(a.barrier, {a.index}) + ");");
            return;
        }
        case ir::StmtKind::BarrierWait: {
            const ir::BarrierWait &w = *ir::as<ir::BarrierWait>(s);
            // Barriers other blocks arrive on are waited for at cluster scope.
            std::string key = w.barrier->clusterScope ? "mbarrier_wait_cluster" : "mbarrier_wait";
            helper(key);
            out_.line("tilet_" + key + "(&" + access(w.barrier, {w.index}) + ", " + e(w.parity) + ");");
            return;
        }
        case ir::StmtKind::WarpSpecialize: {
            const ir::WarpSpecialize &w = *ir::as<ir::WarpSpecialize>(s);
            std::string cond;
            if (w.wholeWarpGroups()) {
                for (int64_t g : w.warpGroups()) cond += (cond.empty() ? "" : " || ") + std::string("threadIdx.x / 128 == ") + std::to_string(g);
            } else if (w.warps.size() == 1) {
                cond = "threadIdx.x / 32 == " + std::to_string(w.warps.front());
            } else {
                cond = "threadIdx.x >= " + std::to_string(w.firstThread()) + " && threadIdx.x < " + std::to_string(w.firstThread() + w.threads());
            }
            out_.open("if (" + cond + ")");
            block(w.body);
            out_.close();
            return;
        }
        case ir::StmtKind::Elect: {
            const ir::Elect &el = *ir::as<ir::Elect>(s);
            out_.open(el.unit == ir::Elect::Unit::WarpGroup ? std::string("if (threadIdx.x % 128 == 0)")
                                                            : "if (threadIdx.x == " + std::to_string(el.firstThread) + ")");
            block(el.body);
            out_.close();
            return;
        }
        case ir::StmtKind::Jump: out_.line(std::string(ir::as<ir::Jump>(s)->keyword()) + ";"); return;
        case ir::StmtKind::PdlTrigger:
            helper("pdl_trigger");
            out_.line("tilet_pdl_trigger();");
            return;
        case ir::StmtKind::PdlSync:
            helper("pdl_sync");
            out_.line("tilet_pdl_sync();");
            return;
        case ir::StmtKind::ClusterSync:
            helper("cluster_sync");
            out_.line("tilet_cluster_sync();");
            return;
        case ir::StmtKind::SetMaxNReg: {
            const ir::SetMaxNReg &r = *ir::as<ir::SetMaxNReg>(s);
            std::string key = r.increase ? "setmaxnreg_inc" : "setmaxnreg_dec";
            helper(key);
            out_.line("tilet_" + key + "<" + std::to_string(r.count) + ">();");
            return;
        }
        default: TILET_INTERNAL_ERROR("statement " << ir::stmtKindName(s->kind) << " reached the printer unlowered");
        }
    }

    const ir::Kernel &kernel_;
    Emitter &out_;
    NameTable names_;
    ExprPrinter expr_;
    int64_t sharedAlignment_;
    const std::string deviceName_;   // <prefix><name>_kernel
    const std::map<FileId, std::string> *fileNames_ = nullptr;
    const std::string devicePass_;   // the #if around the body ("": none)
    FileId lineFile_ = kNoFile;   // the last #line's file and line, and the output line after it
    int64_t line_ = 0, directiveAt_ = 0;
    std::map<std::string, std::string> generated_;   // helpers whose operand lists depend on the shape
};

// The operand lists of wgmma grow with N, so its helpers are spelled here from
// the node's shape and dtypes (f32 or f16 accumulators, f16/bf16 operands).
std::string wgmmaHelper(const std::string &key, const ir::Wgmma &w) {
    DType acc = w.d->dtype, aType = w.a.buffer->dtype;
    bool packed = acc == DType::F16;   // two f16 accumulators per register
    int64_t regs = packed ? w.n / 4 : w.n / 2;   // accumulator registers per thread
    std::string cAcc = packed ? "__half" : acc == DType::Int32 ? "int" : "float";
    std::string list;
    for (int64_t i = 0; i < regs; ++i) list += (i ? ", %" : "%") + std::to_string(i);
    std::string outs;
    for (int64_t i = 0; i < regs; ++i)
        outs += std::string(i ? ", " : "") + (packed ? "\"+r\"(r[" : acc == DType::Int32 ? "\"+r\"(d[" : "\"+f\"(d[") + std::to_string(i) + "])";
    // A from registers: four 32-bit registers (8 f16/bf16) instead of a descriptor.
    bool aInRegisters = w.a.buffer->scope != ir::MemScope::Shared;
    int64_t aOperands = aInRegisters ? 4 : 1;
    std::string a = aInRegisters ? "{%" + std::to_string(regs) + ", %" + std::to_string(regs + 1) + ", %" + std::to_string(regs + 2) + ", %" +
                                       std::to_string(regs + 3) + "}"
                                 : "%" + std::to_string(regs);
    std::string b = std::to_string(regs + aOperands), scale = std::to_string(regs + aOperands + 1), ta = std::to_string(regs + aOperands + 2),
                tb = std::to_string(regs + aOperands + (aInRegisters ? 2 : 3));
    std::string ptx = catalog::ptx(w.instruction, w.n, w.k, aType, w.b.buffer->dtype, acc);
    // The PTX forms differ in their immediates: f16/bf16 take scale-a,
    // scale-b and the two transposes, tf32 and fp8 only the scales (K-major
    // operands), integers neither.
    bool sixteenBit = aType == DType::F16 || aType == DType::BF16;
    std::string immediates = aInRegisters ? ", p, 1, 1, %" + tb : sixteenBit ? ", p, 1, 1, %" + ta + ", %" + tb : isInteger(aType) ? ", p" : ", p, 1, 1";
    std::string inputs = (aInRegisters ? "\"r\"(ar[0]), \"r\"(ar[1]), \"r\"(ar[2]), \"r\"(ar[3])" : "\"l\"(a)") +
                         std::string(", \"l\"(b), \"r\"(scaleD)") +
                         (aInRegisters ? ", \"n\"(TransB)" : sixteenBit ? ", \"n\"(TransA), \"n\"(TransB)" : "");
    std::string text;
    text += "// wgmma: D (64 x " + std::to_string(w.n) + " per warp group, " + mmaTypeName(acc, false) + ") = A * B + (scaleD ? D : 0), A and B\n";
    if (aInRegisters) {
        text += "// from registers (A: this thread's 8 elements of the k-step, K-major) and a\n";
        text += "// shared-memory descriptor (B); TransB: an N-major B.\n";
    } else {
        text += "// read through shared-memory descriptors; TransA / TransB: M- / N-major operands";
        text += sixteenBit ? ".\n" : " (" + mmaTypeName(aType, true) + " operands are K-major: both 0).\n";
    }
    text += "template <int TransA, int TransB>\n";
    text += "__device__ __forceinline__ void tilet_" + key + "(" + cAcc + " *d, " + (aInRegisters ? "const void *a" : "unsigned long long a") +
            ", unsigned long long b, int scaleD)\n{\n";
    if (!sixteenBit) text += "    static_assert(TransA == 0 && TransB == 0, \"" + mmaTypeName(aType, true) + " wgmma reads K-major operands only\");\n";
    if (aInRegisters) text += "    static_assert(TransA == 0, \"wgmma reads A from registers K-major only\");\n    unsigned ar[4];\n    memcpy(ar, a, sizeof(ar));\n";
    if (packed) text += "    unsigned r[" + std::to_string(regs) + "];\n    memcpy(r, d, sizeof(r));\n";
    text += "    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + scale + ", 0;\\n\"\n";
    text += "                 \"" + ptx + " {" + list + "}, " + a + ", %" + b + immediates + ";\\n}\\n\"\n";
    text += "                 : " + outs + "\n";
    text += "                 : " + inputs + ");\n";
    if (packed) text += "    memcpy(d, r, sizeof(r));\n";
    text += "}\n";
    return text;
}

// mma.sync helpers are spelled from the catalog entry: its PTX and the
// register counts its shape and operand width give (PTX ISA, "Matrix
// fragments for mma.m16n8k*": A, B and C spread evenly over the 32 lanes).
std::string mmaSyncHelper(const ir::Mma &m) {
    const Instruction &inst = m.instruction;
    const int64_t M = inst.m.lo, N = inst.n.lo, K = inst.k.lo;
    const DType acc = m.d->dtype;
    const int bits = dtypeBits(m.operand);
    const int64_t aRegs = M * K * bits / 32 / 32, bRegs = N * K * bits / 32 / 32;
    const bool packed = acc == DType::F16;   // two f16 accumulators per register
    const int64_t dRegs = M * N / 32 / (packed ? 2 : 1);
    auto numbered = [](int64_t from, int64_t count) {
        std::string list;
        for (int64_t i = 0; i < count; ++i) list += (i ? ", %" : "%") + std::to_string(from + i);
        return "{" + list + "}";
    };
    auto operands = [](const std::string &constraint, const std::string &array, int64_t count) {
        std::string list;
        for (int64_t i = 0; i < count; ++i) list += (i ? ", \"" : "\"") + constraint + "\"(" + array + "[" + std::to_string(i) + "])";
        return list;
    };
    auto dims = [](int64_t r, int64_t c) { return std::to_string(r) + "x" + std::to_string(c); };
    std::string operandName(dtypeName(m.operand)), accName(dtypeName(acc));
    std::string text = "// " + std::string(catalog::className(inst.cls)) + ": D (" + dims(M, N) + ", " + accName + ") += A (" + dims(M, K) + ", " +
                       operandName + ") * B (" + dims(K, N) + ", " + operandName + ") for one warp.\n";
    if (*inst.note) text += "// " + std::string(inst.note) + "\n";
    const bool scaled = m.scales.has_value();
    if (scaled)
        text += "// Block-scaled (PTX ISA, \"Block Scaling for mma.sync\"): sfa and sfb are this lane's words of four\n"
                "// 8-bit scale factors, one per " + std::to_string(inst.scaleVec) + " elements of K, from byte sfa_byte (sfb_byte) on; A's rows g\n"
                "// and g + 8 take theirs from lanes 4g + 2 sfa_thread and 4g + 2 sfa_thread + 1, B's column g from lane 4g + sfb_thread.\n";
    text += "__device__ __forceinline__ void tilet_" + catalog::helperKey(inst, m.operand) + "(" + cType(acc) + " *d, const void *a, const void *b" +
            (scaled ? ", unsigned sfa, unsigned short sfa_byte, unsigned short sfa_thread, unsigned sfb, unsigned short sfb_byte, unsigned short sfb_thread"
                    : "") + ")\n{\n";
    text += "    unsigned ra[" + std::to_string(aRegs) + "], rb[" + std::to_string(bRegs) + "]" + (packed ? ", rd[" + std::to_string(dRegs) + "]" : "") + ";\n";
    text += "    memcpy(ra, a, sizeof(ra));\n    memcpy(rb, b, sizeof(rb));\n";
    if (packed) text += "    memcpy(rd, d, sizeof(rd));\n";
    std::string dList = numbered(0, dRegs);
    int64_t s0 = dRegs + aRegs + bRegs;
    std::string scaleList = scaled ? ", {%" + std::to_string(s0) + "}, {%" + std::to_string(s0 + 1) + ", %" + std::to_string(s0 + 2) + "}, {%" +
                                         std::to_string(s0 + 3) + "}, {%" + std::to_string(s0 + 4) + ", %" + std::to_string(s0 + 5) + "}"
                                   : "";
    text += "    asm volatile(\"" + catalog::ptx(inst, N, K, m.operand, m.operand, acc) + " " + dList + ", " + numbered(dRegs, aRegs) + ", " +
            numbered(dRegs + aRegs, bRegs) + ", " + dList + scaleList + ";\\n\"\n";
    std::string dConstraint = packed || isInteger(acc) ? "+r" : acc == DType::F64 ? "+d" : "+f";
    text += "                 : " + operands(dConstraint, packed ? "rd" : "d", dRegs) + "\n";
    text += "                 : " + operands("r", "ra", aRegs) + ", " + operands("r", "rb", bRegs) +
            (scaled ? ", \"r\"(sfa), \"h\"(sfa_byte), \"h\"(sfa_thread), \"r\"(sfb), \"h\"(sfb_byte), \"h\"(sfb_thread)" : "") +
            ");\n";
    if (packed) text += "    memcpy(d, rd, sizeof(rd));\n";
    return text + "}\n";
}

// tcgen05.mma, spelled from its catalog entry: one thread issues it for the
// CTA; D in tensor memory, B through a shared-memory descriptor, A through
// one too or (the TS form) in tensor memory, `enable` 0 overwrites D (PTX
// ISA, "tcgen05.mma").
std::string tcgen05MmaHelper(const std::string &key, const Instruction &inst, bool aInTensorMemory) {
    std::string text = "// " + std::string(inst.ptx) + ": D (tensor memory at d) = A * B + (enable ? D : 0), one thread issuing for\n";
    text += aInTensorMemory ? "// the CTA; A in tensor memory at a (row r in lane r, K packed along the columns), B through a shared-memory\n"
                              "// descriptor, idesc the instruction descriptor.\n"
                            : "// the CTA; A and B through shared-memory descriptors, idesc the instruction descriptor.\n";
    bool scaled = inst.blockScaled();
    if (scaled)
        text += "// Block-scaled: the factors' words in tensor memory at sfa and sfb (row m's in lane m, column m / 32), the byte\n"
                "// each reads named by the scale-factor ids in idesc.\n";
    text += "__device__ __forceinline__ void tilet_" + key + "(unsigned d, " + (aInTensorMemory ? "unsigned" : "unsigned long long") +
            " a, unsigned long long b, unsigned idesc, int enable" + (scaled ? ", unsigned sfa, unsigned sfb" : "") + ")\n{\n";
    text += "    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %4, 0;\\n\"\n";
    text += "                 \"" + std::string(inst.ptx) + " [%0], " + (aInTensorMemory ? "[%1]" : "%1") + ", %2, %3, " +
            (scaled ? "[%5], [%6], " : "") + "p;\\n}\\n\"\n";
    text += "                 :: \"r\"(d), " + (aInTensorMemory ? std::string("\"r\"(a)") : std::string("\"l\"(a)")) +
            ", \"l\"(b), \"r\"(idesc), \"r\"(enable)" + (scaled ? ", \"r\"(sfa), \"r\"(sfb)" : "") + ");\n";
    return text + "}\n";
}

// tcgen05.ld: the operand list grows with the registers each thread receives.
std::string tmemMoveHelper(const std::string &key, ir::TmemLoadShape shape, bool store, int64_t repeat) {
    int64_t registers = repeat * ir::tmemLoadRegistersPerRepeat(shape);
    std::string list, outs;
    for (int64_t i = 0; i < registers; ++i) {
        list += (i ? ", %" : "%") + std::to_string(i + (store ? 1 : 0));
        outs += std::string(i ? ", " : "") + (store ? "\"r\"(r[" : "\"=r\"(r[") + std::to_string(i) + "])";
    }
    std::string name = ir::tmemLoadShapeName(shape);
    if (store) {
        std::string text = "// tcgen05.st " + name + ": the registers of tcgen05.ld " + name + ".x" + std::to_string(repeat) +
                           ", in its order, to the same tensor-memory cells; complete after tcgen05.wait::st.\n";
        text += "__device__ __forceinline__ void tilet_" + key + "(const void *src, unsigned address)\n{\n";
        text += "    unsigned r[" + std::to_string(registers) + "];\n";
        text += "    memcpy(r, src, sizeof(r));\n";
        text += "    asm volatile(\"tcgen05.st.sync.aligned." + name + ".x" + std::to_string(repeat) + ".b32 [%0], {" + list + "};\\n\"\n";
        text += "                 :: \"r\"(address), " + outs + "\n";
        text += "                 : \"memory\");\n";
        return text + "}\n";
    }
    std::string text = shape == ir::TmemLoadShape::Lanes32x32b
                           ? "// tcgen05.ld 32x32b: lane l of the warp receives " + std::to_string(repeat) +
                                 " consecutive 32-bit columns of tensor-memory lane\n// (address >> 16) + l from column address & 0xffff; complete after tcgen05.wait::ld.\n"
                           : "// tcgen05.ld 16x256b: the warp reads lanes (address >> 16) .. + 15, " + std::to_string(8 * repeat) +
                                 " columns from address & 0xffff;\n// register i of lane l holds lane l / 4 + 8 * (i / 2 % 2), column 2 * (l % 4) + i % 2 + 8 * (i / 4)\n"
                                 "// (the m16n8 accumulator layout); complete after tcgen05.wait::ld.\n";
    text += "__device__ __forceinline__ void tilet_" + key + "(void *dst, unsigned address)\n{\n";
    text += "    unsigned r[" + std::to_string(registers) + "];\n";
    text += "    asm volatile(\"tcgen05.ld.sync.aligned." + name + ".x" + std::to_string(repeat) + ".b32 {" + list + "}, [%" + std::to_string(registers) + "];\\n\"\n";
    text += "                 : " + outs + "\n";
    text += "                 : \"r\"(address));\n";
    text += "    memcpy(dst, r, sizeof(r));\n";
    return text + "}\n";
}

// atomic_add with a memory order stronger than relaxed (or of int64, for
// which CUDA has no atomicAdd): atom.add with that
// .sem at .gpu scope on a generic address (global or shared), the operation
// libcu++'s cuda::atomic_ref<T, thread_scope_device>::fetch_add -- what
// TileLang calls -- is made of (PTX ISA, "atom"; seq_cst is fence.sc then an
// acquire atom, the "Memory Consistency Model"'s mapping of C++'s orders).
std::string atomicAddHelper(const std::string &key, ir::MemoryOrder order, DType t) {
    bool sixteenBit = t == DType::F16 || t == DType::BF16;
    std::string ptxType = t == DType::F16 ? "noftz.f16" : t == DType::BF16 ? "noftz.bf16" : ptxTypeName(t);
    if (t == DType::Int64) ptxType = "u64";   // two's complement: the same bits as an unsigned add
    std::string constraint = sixteenBit ? "h" : t == DType::F32 ? "f" : t == DType::F64 ? "d" : dtypeBits(t) == 64 ? "l" : "r";
    std::string reg = sixteenBit ? "unsigned short" : cType(t);
    std::string value = t == DType::F16 ? "__half_as_ushort(v)" : t == DType::BF16 ? "__bfloat16_as_ushort(v)" : "v";
    bool seqCst = order == ir::MemoryOrder::SeqCst;
    std::string sem = seqCst ? "acquire" : ir::memoryOrderName(order);
    std::string text = "// atomic_add(memory_order = " + std::string(ir::memoryOrderName(order)) + "): " + (seqCst ? "fence.sc.gpu, then " : "") +
                       "atom." + sem + ".gpu.add." + ptxType + "\n";
    // Returns the previous value, as CUDA's atomicAdd does.
    text += "__device__ __forceinline__ " + cType(t) + " tilet_" + key + "(" + cType(t) + " *p, " + cType(t) + " v)\n{\n";
    text += "    " + reg + " old;\n";
    text += "    asm volatile(\"" + std::string(seqCst ? "fence.sc.gpu;\\n\\t" : "") + "atom." + sem + ".gpu.add." + ptxType +
            " %0, [%1], %2;\" : \"=" + constraint + "\"(old) : \"l\"(p), \"" + constraint + "\"(" + value + ") : \"memory\");\n";
    text += std::string("    return ") + (t == DType::F16 ? "__ushort_as_half(old)" : t == DType::BF16 ? "__ushort_as_bfloat16(old)" : "old") + ";\n";
    text += "}\n";
    return text;
}

// atomic_load / atomic_store (TileLang's): a single-copy atomic ld or st of
// the .gpu scope with the order's semantics (PTX ISA, "Memory Consistency
// Model"); seq_cst is fence.sc.gpu first, then acquire (load) or relaxed
// (store), as libcu++'s cuda::atomic_ref lowers them.
std::string atomicAccessHelper(const std::string &key, bool store, ir::MemoryOrder order, DType t) {
    const bool wide = dtypeBits(t) == 64;
    const std::string constraint = t == DType::F32 ? "f" : t == DType::F64 ? "d" : wide ? "l" : "r";
    const bool seqCst = order == ir::MemoryOrder::SeqCst;
    const std::string sem = seqCst ? (store ? "relaxed" : "acquire") : ir::memoryOrderName(order);
    const std::string op = std::string(store ? "st." : "ld.") + sem + ".gpu.b" + (wide ? "64" : "32");
    std::string text = std::string("// ") + (store ? "atomic_store" : "atomic_load") + "(memory_order = " + ir::memoryOrderName(order) +
                       "): " + (seqCst ? "fence.sc.gpu, then " : "") + op + "\n";
    const std::string fence = seqCst ? "fence.sc.gpu;\\n\\t" : "";
    if (store) {
        text += "__device__ __forceinline__ void tilet_" + key + "(" + cType(t) + " *p, " + cType(t) + " v)\n{\n";
        text += "    asm volatile(\"" + fence + op + " [%0], %1;\" :: \"l\"(p), \"" + constraint + "\"(v) : \"memory\");\n}\n";
    } else {
        text += "__device__ __forceinline__ " + cType(t) + " tilet_" + key + "(const " + cType(t) + " *p)\n{\n";
        text += "    " + cType(t) + " v;\n";
        text += "    asm volatile(\"" + fence + op + " %0, [%1];\" : \"=" + constraint + "\"(v) : \"l\"(p) : \"memory\");\n";
        text += "    return v;\n}\n";
    }
    return text;
}

// The sections of template `file` named in `keys`, in file order; `found`
// counts them.
std::string helperText(const std::set<std::string> &keys, const char *file, size_t &found) {
    const std::string all(embedded::get(file));
    const std::string marker = "// @helper ";
    std::string out;
    for (size_t pos = all.find(marker); pos != std::string::npos;) {
        size_t nameEnd = all.find('\n', pos);
        std::string key = all.substr(pos + marker.size(), nameEnd - pos - marker.size());
        size_t next = all.find(marker, nameEnd);
        if (keys.count(key)) {
            out += all.substr(nameEnd + 1, (next == std::string::npos ? all.size() : next) - nameEnd - 1);
            ++found;
        }
        pos = next;
    }
    return out;
}

} // namespace

std::string printCuda(const Variants &variants, const OutputNames &names) {
    TILET_ASSERT(!variants.empty(), "an output with no target");
    const bool several = variants.size() > 1;
    const ir::Module &program = variants.front().module;   // what every variant shares: the source, its imports
    int64_t alignment = 16;   // nvcc takes every extern __shared__ declaration in a pass for one
    for (const Variant &v : variants)
        for (const ir::Kernel &k : v.module.kernels) alignment = std::max(alignment, k.sharedAlignment);
    std::set<std::string> headers;
    std::vector<std::string> helperSections, kernelSections;
    for (const Variant &v : variants) {
        Emitter kernels;
        std::set<std::string> helpers;
        std::map<std::string, std::string> generated;
        for (size_t i = 0; i < v.module.kernels.size(); ++i) {
            if (i) kernels.blank();
            KernelPrinter printer(v.module.kernels[i], kernels, alignment, deviceKernelName(v.module.kernels[i], names, v),
                                  names.lineDirectives ? &v.module.fileNames : nullptr, several ? devicePassCondition(v.target) : "");
            printer.print();
            headers.insert(printer.headers().begin(), printer.headers().end());
            helpers.insert(printer.helpers().begin(), printer.helpers().end());
            generated.insert(printer.generatedHelpers().begin(), printer.generatedHelpers().end());
        }
        // Inline-PTX helpers (which the emulator replaces with its models)
        // and portable C++ ones (which it compiles as they are).
        size_t found = 0;
        std::string ptx = helperText(helpers, "cuda/ptx_helpers.cu", found);
        std::string portable = helperText(helpers, "cuda/device_helpers.cu", found);
        TILET_ASSERT(found == helpers.size(), "a helper the printer asked for is missing from templates/cuda/ptx_helpers.cu and device_helpers.cu");
        Emitter section;
        if (!ptx.empty() || !generated.empty() || !portable.empty()) {
            if (several) section.raw("#if " + devicePassCondition(v.target) + "\n");
            if (!ptx.empty() || !generated.empty()) {
                section.line("// ---- PTX helpers (inline assembly, see the PTX ISA) ----");
                section.raw(ptx);
                for (const auto &[key, text] : generated) section.raw(text);
                section.line("// ---- end of PTX helpers ----");
            }
            if (!portable.empty()) {
                section.line("// ---- device functions (plain C++) ----");
                section.raw(portable);
                section.line("// ---- end of device functions ----");
            }
            if (several) section.raw("#endif\n");
            section.blank();
        }
        helperSections.push_back(section.str());
        kernelSections.push_back(kernels.str());
    }
    Emitter out;
    out.raw(fillTemplate(embedded::get(several ? "cuda/banner_variants.cu" : "cuda/banner.cu"), {{"cu", names.cuFile},
                                                                                                {"source", program.sourceName},
                                                                                                {"target", targetList(variants)},
                                                                                                {"gencode", gencodeFlags(variants)},
                                                                                                {"header", names.headerFile}}));
    if (!headers.empty()) out.blank();
    for (const std::string &h : headers) out.line("#include <" + h + ">");
    out.blank();
    if (!several) out.raw(helperSections.front());
    for (const ir::ImportedSource &source : program.importedSources) {
        // Verbatim: the program's own CUDA, which its call_extern statements call.
        out.line("// ---- imported source " + source.name + " (import_source) ----");
        if (names.lineDirectives) out.raw("#line 1 " + quotedPath(source.path) + "\n");
        out.raw(source.text);
        if (!source.text.empty() && source.text.back() != '\n') out.raw("\n");
        if (names.lineDirectives) out.raw(std::string(kCuLineMarker) + "\n");
        out.line("// ---- end of imported source " + source.name + " ----");
        out.blank();
    }
    for (size_t i = 0; i < variants.size(); ++i) {
        if (several) {
            if (i) out.blank();
            const Target &t = variants[i].target;
            out.line("// ==== " + t.name + " variant: compiled by -gencode " + t.gencode + " ====");
            out.raw(helperSections[i]);
        }
        out.raw(kernelSections[i]);
    }
    if (!names.lineDirectives) return out.str();
    // The .cu's own line numbers after each excursion into another file.
    std::istringstream lines(out.str());
    std::string text, line;
    for (int number = 1; std::getline(lines, line); ++number)
        text += (line == kCuLineMarker ? "#line " + std::to_string(number + 1) + " " + quotedPath(names.cuFile) : line) + "\n";
    return text;
}

} // namespace tilet
