// Sema resolves names and constants and builds IR; target-independent errors.
#include "TestSupport.h"

#include "ir/Printer.h"

#include <gtest/gtest.h>

using namespace tilet;

TEST(Sema, BuildsKernelWithFoldedConstantsAndDynamicDims) {
    test::Compiled c;
    test::analyzeSource(c, "const M = 256;\nconst BM = M / 4;\n"
                           "kernel k(A: f16[dyn n, M], s: f32) grid(ceildiv(n, BM)) as (bx) threads(128) {\n"
                           "    for i in parallel(BM) { A[bx * BM + i, 0] = cast(s, f16); }\n"
                           "}\n");
    ASSERT_TRUE(c.module) << c.diagText.str();
    const ir::Kernel &k = c.module->kernels.at(0);
    ASSERT_EQ(k.params.size(), 3u);   // tensors and scalars first, then dynamic dims
    EXPECT_EQ(k.params[0].kind, ir::ParamKind::Tensor);
    EXPECT_EQ(k.params[1].kind, ir::ParamKind::Scalar);
    EXPECT_EQ(k.params[2].kind, ir::ParamKind::DynDim);
    EXPECT_EQ(k.threads, 128);
    EXPECT_EQ(ir::toString(k.grid.at(0)), "(((n + 64) - 1) / 64)");
    EXPECT_EQ(ir::constInt(k.params[0].tensor->shape[1]), 256);
}

TEST(Sema, DefinesOverrideConstants) {
    test::Compiled c;
    test::analyzeSource(c, "const N = 4;\nkernel k(A: f32[N]) grid(1) threads(32) { for i in parallel(N) { A[i] = 0.0; } }\n",
                        {{"N", "8"}});
    ASSERT_TRUE(c.module) << c.diagText.str();
    EXPECT_EQ(ir::constInt(c.module->kernels[0].params[0].tensor->shape[0]), 8);
}

TEST(Sema, ReportsConstantOverflowAtTheOperator) {
    test::Compiled c;
    test::analyzeSource(c, "const BIG = 9223372036854775807;\nconst X = BIG + 1;\n");
    EXPECT_FALSE(c.module);
    EXPECT_NE(c.diagText.str().find("test.tl:2:15: error: integer overflow in constant expression"), std::string::npos)
        << c.diagText.str();
}

TEST(Sema, ReportsShapeMismatchOfCopies) {
    test::Compiled c;
    test::analyzeSource(c, "kernel k(A: f32[64, 64]) grid(1) threads(128) {\n"
                           "    let s = alloc_shared([32, 16], f32);\n"
                           "    copy(A[0:32, 0:32], s);\n"
                           "}\n");
    EXPECT_FALSE(c.module);
    EXPECT_NE(c.diagText.str().find("test.tl:3:25: error: copy shapes do not match: source [32, 32], destination [32, 16]"),
              std::string::npos)
        << c.diagText.str();
}

TEST(Sema, UnknownNamesSuggestTheClosest) {
    test::Compiled c;
    test::analyzeSource(c, "kernel k(value: f32) grid(1) threads(32) { var x: f32 = valeu; }\n");
    EXPECT_FALSE(c.module);
    std::string text = c.diagText.str();
    EXPECT_NE(text.find("error: use of undeclared identifier 'valeu'"), std::string::npos) << text;
    EXPECT_NE(text.find("note: did you mean 'value'?"), std::string::npos) << text;
}
