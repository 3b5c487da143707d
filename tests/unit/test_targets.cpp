// The target table (built in at build time, plus --target-file through the
// one YAML reader), the requirement texts derived from it, and the
// instruction catalog.
#include "target/Catalog.h"
#include "target/Target.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

using namespace tilet;

TEST(Targets, BuiltinTableDescribesEveryArchitecture) {
    TargetTable table;
    EXPECT_EQ(table.names(), (std::vector<std::string>{"sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120a"}));
    const Target *a = table.find("sm_80");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->has(Feature::CpAsync));
    EXPECT_TRUE(a->has(Feature::Ldmatrix));
    EXPECT_FALSE(a->has(Feature::Tma));
    EXPECT_EQ(a->maxSharedPerBlock, 166912);
    const Target *h = table.find("sm_90a");
    EXPECT_TRUE(h->has(Feature::Tma) && h->has(Feature::Wgmma) && h->has(Feature::Clusters) && h->has(Feature::Stmatrix));
    EXPECT_EQ(h->gencode, "arch=compute_90a,code=sm_90a");
    EXPECT_EQ(h->registersPerSm, 65536);
    const Target *b = table.find("sm_100a");
    EXPECT_TRUE(b->has(Feature::Tcgen05));
    EXPECT_FALSE(b->has(Feature::Wgmma));
    EXPECT_FALSE(table.find("sm_75")->has(Feature::CpAsync));
    // Code for the "a" targets runs on their compute capability alone; sm_80's on 8.x too.
    EXPECT_TRUE(h->exactCapability && b->exactCapability && table.find("sm_120a")->exactCapability);
    EXPECT_FALSE(a->exactCapability || table.find("sm_89")->exactCapability);
    // sm_120a: no wgmma or tcgen05; block-scaled mma.sync; 99 KiB per block, clusters of 8.
    const Target *c = table.find("sm_120a");
    EXPECT_FALSE(c->has(Feature::Wgmma) || c->has(Feature::Tcgen05));
    EXPECT_TRUE(c->has(Feature::BlockScaledMma) && c->has(Feature::F8f6f4Mma) && c->has(Feature::Tma));
    EXPECT_EQ(c->maxSharedPerBlock, 101376);
    EXPECT_EQ(c->maxClusterSize, 8);
    // num_sms() in the barrier-protocol check: the flagship GPU's SMs (H100 SXM, B200), inherited from a base.
    EXPECT_EQ(h->smCount, 132);
    EXPECT_EQ(b->smCount, 148);
    EXPECT_EQ(table.find("sm_86")->smCount, 84);
}

TEST(Targets, OneMmaGenerationPerTarget) {
    // TileLang picks mma.sync shapes by the target's generation.
    for (const Target &t : builtinTargets()) {
        int generations = t.has(Feature::MmaVolta) + t.has(Feature::MmaTuring) + t.has(Feature::MmaAmpere);
        EXPECT_EQ(generations, 1) << t.name;
    }
}

TEST(Targets, RequirementsAreDerivedFromTheTable) {
    TargetTable table;
    EXPECT_EQ(targetsWith(Feature::CpAsync), "sm_80 or newer");
    EXPECT_EQ(targetsWith(Feature::Ldmatrix), "sm_75 or newer");
    EXPECT_EQ(targetsWith(Feature::Tma), "sm_90a or newer");
    EXPECT_EQ(targetsWith(Feature::Wgmma), "sm_90a");
    EXPECT_EQ(targetsWith(Feature::Tcgen05), "sm_100a");
    EXPECT_EQ(targetsWith(Feature::Setmaxnreg), "sm_90a or sm_100a");
    EXPECT_EQ(targetsWith(Feature::MmaTuring), "sm_75");
    EXPECT_EQ(lacks(*table.find("sm_75"), Feature::CpAsync), "cp.async needs sm_80 or newer; sm_75 has none");
}

TEST(Targets, TargetFileAddsAndOverrides) {
    SourceManager sm;
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    TargetTable table;
    ASSERT_TRUE(table.load(sm.add("t.yaml", "sm_87:\n  base: sm_86\n  arch: 87\n  gencode: arch=compute_87,code=sm_87\nsm_80:\n  max_shared_per_block: 1000\n"), sm, d))
        << out.str();
    const Target *orin = table.find("sm_87");
    ASSERT_TRUE(orin);
    EXPECT_TRUE(orin->has(Feature::CpAsync));   // from sm_86
    EXPECT_EQ(orin->arch, 87);
    EXPECT_EQ(table.find("sm_80")->maxSharedPerBlock, 1000);
    EXPECT_TRUE(table.find("sm_80")->has(Feature::CpAsync));   // kept
    EXPECT_EQ(out.str(), "");
}

TEST(Targets, MalformedYamlIsLocated) {
    SourceManager sm;
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    TargetTable table;
    EXPECT_FALSE(table.load(sm.add("bad.yaml", "sm_x:\n  arch: [87\n"), sm, d));
    EXPECT_EQ(out.str().substr(0, out.str().find('\n')), "bad.yaml:3:1: error: malformed target file: end of sequence flow not found");
}

TEST(Targets, UnknownKeysMissingKeysAndBadValues) {
    SourceManager sm;
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    TargetTable table;
    EXPECT_FALSE(table.load(sm.add("t.yaml", "sm_y:\n  arch: 80\n  regs: 3\n  tma: maybe\n"), sm, d));
    std::string text = out.str();
    EXPECT_NE(text.find("t.yaml:3:3: error: unknown target property 'regs'"), std::string::npos) << text;
    EXPECT_NE(text.find("t.yaml:4:8: error: invalid value for 'tma'"), std::string::npos) << text;
    EXPECT_NE(text.find("t.yaml:1:1: error: target 'sm_y' lacks 'family', 'gencode', "), std::string::npos) << text;
}

TEST(Catalog, EntriesAreWellFormed) {
    std::set<std::string> names;
    for (const Instruction &i : catalog::all()) {
        EXPECT_TRUE(names.insert(i.name).second) << "two entries named " << i.name;
        EXPECT_NE(i.a, 0u) << i.name;
        EXPECT_NE(i.c, 0u) << i.name;
        EXPECT_TRUE(i.k.lo > 0 && i.m.lo > 0 && i.n.lo > 0) << i.name;
        // Some built-in target has it: an entry nothing can select is dead data.
        bool somewhere = false;
        for (const Target &t : builtinTargets()) somewhere = somewhere || t.has(i.feature);
        EXPECT_TRUE(somewhere) << i.name;
        // mma.sync keeps everything in registers; tcgen05 accumulates in tensor memory.
        if (i.cls == InstrClass::MmaSync) EXPECT_EQ(i.cIn, kRegisters) << i.name;
        if (i.cls == InstrClass::Tcgen05Mma) EXPECT_EQ(i.cIn, kTMem) << i.name;
    }
}

TEST(Catalog, PtxTemplatesAreFilledIn) {
    const Instruction &wg = catalog::get("wgmma_fp8");
    EXPECT_EQ(catalog::ptx(wg, 256, 32, DType::F8E4M3, DType::F8E5M2, DType::F32), "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e5m2");
    const Instruction &tf32 = catalog::get("wgmma_tf32");
    EXPECT_EQ(catalog::ptx(tf32, 64, 8, DType::F32, DType::F32, DType::F32), "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32");
    const Instruction &mma = catalog::get("mma_m16n8k16_f32_bf16");
    EXPECT_EQ(catalog::ptx(mma, 8, 16, DType::BF16, DType::BF16, DType::F32), "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
    EXPECT_TRUE(mma.fits(DType::BF16, DType::BF16, DType::F32));
    EXPECT_FALSE(mma.fits(DType::F16, DType::BF16, DType::F32));
}

TEST(Catalog, HelperKeysNameTheOperandTypeWhereThePtxLeavesItOpen) {
    // One helper per PTX instruction: an entry whose PTX names the operand
    // types itself keeps its key; one that leaves them open ({a}) gets the type.
    EXPECT_EQ(catalog::helperKey(catalog::get("mma_m16n8k64_f32_mxf4nvf4"), DType::F4E2M1), "mma_m16n8k64_f32_mxf4nvf4");
    EXPECT_EQ(catalog::helperKey(catalog::get("mma_m16n8k32_f32_mxf8f6f4"), DType::F8E4M3), "mma_m16n8k32_f32_mxf8f6f4_e4m3");
    EXPECT_EQ(catalog::helperKey(catalog::get("mma_m16n8k32_f32_mxf8f6f4"), DType::F8E5M2), "mma_m16n8k32_f32_mxf8f6f4_e5m2");
    EXPECT_EQ(catalog::helperKey(catalog::get("mma_m16n8k16_f32_bf16"), DType::BF16), "mma_m16n8k16_f32_bf16");
    // Block-scaled entries: NVFP4's four ue4m3 factors per k-step, MXFP8's one ue8m0.
    const Instruction &nvfp4 = catalog::get("mma_m16n8k64_f32_mxf4nvf4");
    const Instruction &mxfp8 = catalog::get("mma_m16n8k32_f32_mxf8f6f4");
    EXPECT_TRUE(nvfp4.blockScaled() && mxfp8.blockScaled());
    EXPECT_EQ(nvfp4.k.lo / nvfp4.scaleVec, 4);
    EXPECT_EQ(mxfp8.k.lo / mxfp8.scaleVec, 1);
}

TEST(Catalog, ShapeRanges) {
    const Instruction &wg = catalog::get("wgmma_bf16");
    EXPECT_TRUE(wg.n.contains(8) && wg.n.contains(256) && wg.n.contains(136));
    EXPECT_FALSE(wg.n.contains(4) || wg.n.contains(264) || wg.n.contains(12));
    const Instruction &tc = catalog::get("tcgen05_mma_f16");
    EXPECT_TRUE(tc.m.contains(64) && tc.m.contains(128));
    EXPECT_FALSE(tc.m.contains(96));
    EXPECT_EQ(catalog::get("tcgen05_mma_mxf4nvf4").scaleVec, 16);
    EXPECT_TRUE(catalog::get("tcgen05_mma_mxf8f6f4").blockScaled());
}
