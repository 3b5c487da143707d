// Emulated checks of tests/emu/swizzle_kernels.tl: the launch position that
// computed each tile under use_swizzle, against the order written out here
// independently (panels of 4 rows or columns, walked column by column or row
// by row, every other panel backwards, the last panel narrower).
#include "harness.h"

#include "emu_swizzle_kernels.h"

#include <vector>

namespace {

// Expected launch position of tile (row, col) of a 6 x 10 grid.
std::vector<int> expected(bool byColumn) {
    const int rows = 6, cols = 10, panel = 4;
    std::vector<int> order(rows * cols, -1);
    int position = 0;
    int majorExtent = byColumn ? cols : rows, minorExtent = byColumn ? rows : cols;
    for (int first = 0, p = 0; first < majorExtent; first += panel, ++p) {
        int width = std::min(panel, majorExtent - first);
        for (int m = 0; m < minorExtent; ++m) {
            int minor = p % 2 ? minorExtent - 1 - m : m;
            for (int w = 0; w < width; ++w) {
                int major = first + w;
                int row = byColumn ? minor : major, col = byColumn ? major : minor;
                order[row * cols + col] = position++;
            }
        }
    }
    return order;
}

} // namespace

int main() {
    int failed = 0;
    for (int byColumn = 0; byColumn < 2; ++byColumn) {
        int *order = harness::alloc<int>(6 * 10), *counter = harness::alloc<int>(1);
        counter[0] = 0;
        cudaError_t e = byColumn ? by_columns(order, counter, nullptr) : by_rows(order, counter, nullptr);
        if (e != cudaSuccess) return 1;
        std::vector<int> want = expected(byColumn);
        double wrong = 0;
        for (int i = 0; i < 60; ++i) wrong += order[i] != want[size_t(i)];
        failed += harness::report(byColumn ? "use_swizzle(4, order = col): tiles in panel order" : "use_swizzle(4): tiles in panel order", wrong, 0);
    }
    return failed;
}
