// The translation runs on a thread with a stack sized for --max-nesting (support/BigStack.h).
#include "driver/Driver.h"
#include "support/BigStack.h"
#include "support/InternalError.h"

#include <gtest/gtest.h>

using namespace tilet;

namespace {
// Recursion that needs about `depth` KiB of stack.
int deep(int depth) {
    volatile char frame[1024];
    frame[0] = static_cast<char>(depth);
    return depth == 0 ? frame[0] : deep(depth - 1) + 1;
}
} // namespace

TEST(BigStack, ReturnsTheResultAndRunsDeeperThanTheMainThreadCould) {
    // 32 MiB of frames: four times the 8 MiB main-thread default.
    EXPECT_EQ(runWithStack(size_t(128) << 20, [] { return deep(32 * 1024); }), 32 * 1024);
}

TEST(BigStack, RethrowsExceptionsOnTheCallingThread) {
    EXPECT_THROW(runWithStack(size_t(1) << 20, []() -> int { TILET_INTERNAL_ERROR("from the thread"); }), InternalError);
}

TEST(BigStack, TheStackGrowsWithTheNestingLimit) {
    EXPECT_LT(translationStackBytes(256), translationStackBytes(4096));
    // Room for the deepest stage at the largest limit (measured: 31 KiB per level under ASan).
    EXPECT_GE(translationStackBytes(kMaxNestingLimit), size_t(kMaxNestingLimit) * (64 << 10));
}
