// The YAML target table: embedded targets, inheritance, and located errors.
#include "support/Embedded.h"
#include "target/Target.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilet;

TEST(Targets, EmbeddedTableDescribesEveryArchitecture) {
    SourceManager sm;
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    TargetTable table;
    ASSERT_TRUE(table.load(sm.add("targets.yaml", std::string(embedded::get("targets.yaml"))), sm, d)) << out.str();
    EXPECT_EQ(table.names(), (std::vector<std::string>{"sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120a"}));
    const Target *a = table.find("sm_80");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->cpAsync);
    EXPECT_TRUE(a->ldmatrix);
    EXPECT_FALSE(a->tma);
    EXPECT_EQ(a->maxSharedPerBlock, 166912);
    const Target *h = table.find("sm_90a");
    EXPECT_TRUE(h->tma && h->wgmma && h->clusters && h->stmatrix);
    EXPECT_EQ(h->gencode, "arch=compute_90a,code=sm_90a");
    const Target *b = table.find("sm_100a");
    EXPECT_TRUE(b->tcgen05);
    EXPECT_FALSE(b->wgmma);
    EXPECT_FALSE(table.find("sm_75")->cpAsync);
    // Code for the "a" targets runs on their compute capability alone; sm_80's on 8.x too.
    EXPECT_TRUE(h->exactCapability && b->exactCapability && table.find("sm_120a")->exactCapability);
    EXPECT_FALSE(a->exactCapability || table.find("sm_89")->exactCapability);
}

TEST(Targets, LazyLoadingGivesTheSameTargets) {
    SourceManager sm;
    std::ostringstream out;
    DiagnosticEngine d(sm, out);
    FileId file = sm.add("targets.yaml", std::string(embedded::get("targets.yaml")));
    TargetTable whole, lazy;
    ASSERT_TRUE(whole.load(file, sm, d));
    lazy.loadLazily(file, sm, d);
    // sm_86 inherits from sm_80 (base:), which is then parsed on demand.
    const Target *a = whole.find("sm_86"), *b = lazy.find("sm_86");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->gencode, b->gencode);
    EXPECT_EQ(a->cpAsync, b->cpAsync);
    EXPECT_EQ(a->maxSharedPerBlock, b->maxSharedPerBlock);
    EXPECT_EQ(whole.names(), lazy.names());
    for (const std::string &n : whole.names()) {
        const Target *x = whole.find(n), *y = lazy.find(n);
        EXPECT_EQ(x->arch, y->arch) << n;
        EXPECT_EQ(x->gencode, y->gencode) << n;
        EXPECT_EQ(x->tma, y->tma) << n;
        EXPECT_EQ(x->wgmma, y->wgmma) << n;
        EXPECT_EQ(x->tcgen05, y->tcgen05) << n;
        EXPECT_EQ(x->fp8Mma, y->fp8Mma) << n;
        EXPECT_EQ(x->maxThreadsPerBlock, y->maxThreadsPerBlock) << n;
    }
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
