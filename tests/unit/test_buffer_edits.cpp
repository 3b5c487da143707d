// ir::BufferEdits: a pass's decisions about buffers replace every reference
// to them, and nothing a pass did not decide changes.
#include "ir/BufferEdits.h"
#include "ir/Visitor.h"

#include <gtest/gtest.h>

using namespace tilet;
using namespace tilet::ir;

namespace {

// Every buffer a statement names (allocations, loads, stores, regions, barriers).
std::vector<const BufferNode *> buffersIn(const Stmt &s) {
    struct Collector : Mutator {
        std::vector<const BufferNode *> seen;
        Buffer mutateBuffer(const Buffer &b) override {
            if (b) seen.push_back(b.get());
            return b;
        }
    } c;
    c.mutate(s);
    return c.seen;
}

} // namespace

TEST(BufferEdits, ReplacesEveryReferenceAndLeavesTheOriginal) {
    Buffer shared = makeBuffer("s", DType::F16, {intImm(64)}, MemScope::Shared, {});
    Buffer tensor = makeBuffer("A", DType::F16, {intImm(64)}, MemScope::Global, {});
    VarRef i = makeVar("i");
    Stmt store = std::make_shared<Store>(shared, std::vector<Expr>{i},
                                         std::make_shared<Load>(tensor, std::vector<Expr>{i}), StoreOp::Assign);
    Kernel k;
    k.params.push_back({ParamKind::Tensor, tensor, nullptr, {}});
    k.body = std::make_shared<Allocate>(shared, std::make_shared<For>(i, intImm(0), intImm(64), ForKind::Serial, store));

    BufferEdits edits;
    edits.edit(shared).sharedOffset = 256;
    EXPECT_EQ(edits.current(shared).sharedOffset, 256);
    EXPECT_EQ(shared->sharedOffset, -1) << "the IR's buffer is never changed in place";
    Stmt before = k.body;
    edits.applyTo(k);

    EXPECT_NE(k.body, before);
    const Allocate *alloc = as<Allocate>(k.body);
    ASSERT_TRUE(alloc);
    EXPECT_EQ(alloc->buffer->sharedOffset, 256);
    for (const BufferNode *b : buffersIn(k.body)) {
        EXPECT_NE(b, shared.get()) << "a reference to the old version is left";
        if (b->name == "s") {
            EXPECT_EQ(b, alloc->buffer.get()) << "all references name one new version";
        }
        if (b->name == "A") {
            EXPECT_EQ(b, tensor.get()) << "an unedited buffer keeps its identity";
        }
    }
    EXPECT_EQ(k.params[0].tensor, tensor);
}

TEST(BufferEdits, FollowsRegistersRemoteViewsAndTmaDescriptors) {
    auto fragment = makeBuffer("f", DType::F32, {intImm(16)}, MemScope::Fragment, {});
    Buffer registers = makeBuffer("f", DType::F32, {intImm(4)}, MemScope::Local, {});
    fragment->registers = registers;
    Buffer shared = makeBuffer("t", DType::F16, {intImm(64)}, MemScope::Shared, {});
    auto view = makeBuffer("t_in_block", DType::F16, {intImm(64)}, MemScope::Shared, {});
    view->remoteOf = shared;
    Buffer tensor = makeBuffer("A", DType::F16, {intImm(64)}, MemScope::Global, {});
    auto desc = std::make_shared<TmaDescriptor>();
    desc->name = "tma_A";
    desc->tensor = tensor;
    VarRef i = makeVar("i");
    Stmt body = seq({std::make_shared<Store>(Buffer(view), std::vector<Expr>{i}, std::make_shared<Load>(Buffer(fragment), std::vector<Expr>{i})),
                     std::make_shared<TmaPrefetch>(desc)});
    Kernel k;
    k.params.push_back({ParamKind::Tensor, tensor, nullptr, {}});
    k.tmaDescriptors.push_back(desc);
    k.body = body;

    BufferEdits edits;
    edits.edit(registers).alignment = 16;
    edits.edit(shared).sharedOffset = 1024;
    edits.edit(tensor).readOnly = true;
    edits.applyTo(k);

    const Seq *s = as<Seq>(k.body);
    ASSERT_TRUE(s);
    const Store *st = as<Store>(s->stmts[0]);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->buffer->remoteOf->sharedOffset, 1024) << "a view follows the buffer it views";
    EXPECT_EQ(as<Load>(st->value)->buffer->registers->alignment, 16) << "a fragment follows its registers";
    const TmaPrefetch *p = as<TmaPrefetch>(s->stmts[1]);
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->desc->tensor->readOnly);
    EXPECT_EQ(p->desc, k.tmaDescriptors[0]) << "the kernel's descriptor list and its uses name one descriptor";
    EXPECT_EQ(k.params[0].tensor, p->desc->tensor);
}

TEST(BufferEdits, NoEditsChangeNothing) {
    Buffer shared = makeBuffer("s", DType::F16, {intImm(64)}, MemScope::Shared, {});
    Kernel k;
    k.body = std::make_shared<Allocate>(shared, std::make_shared<SyncThreads>());
    Stmt before = k.body;
    BufferEdits edits;
    (void)edits.current(shared);
    edits.applyTo(k);
    EXPECT_EQ(k.body, before);
}
