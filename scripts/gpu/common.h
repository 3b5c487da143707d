// common.h -- timing, random data and reporting for the C++ GPU checks.
//
// A check prints one RESULT line per case, `RESULT {json}` with the keys
// scripts/gpu/report.py reads (the same as the Python checks'), and its
// main returns exitStatus(): 1 when any case failed, so scripts/gpu-check
// sees a mismatch in the exit status as well as in the line. The baseline
// of these memory-bound kernels is a device-to-device cudaMemcpy moving as
// many bytes (read plus written) in the same process: the ratio says how
// close the kernel comes to the copy engine's bandwidth.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

// Set when a case failed; main returns exitStatus().
inline bool gFailed = false;
inline int exitStatus() { return gFailed ? 1 : 0; }

// A number as JSON: NaN and infinities as strings.
inline std::string jsonNumber(double x) {
    char buf[64];
    if (std::isfinite(x)) std::snprintf(buf, sizeof buf, "%.6g", x);
    else std::snprintf(buf, sizeof buf, "\"%g\"", x);
    return buf;
}

// NaN when any of n outputs (read by y(i)) is not finite, else `error`: the
// references (tests/emu/references.h) take std::max, which drops a NaN, and
// the checks fill their outputs with NaN first to catch an element the
// kernel never writes.
template <class Y> double unlessNonFinite(double error, size_t n, Y y) {
    for (size_t i = 0; i < n; ++i)
        if (!std::isfinite(y(i))) return NAN;
    return error;
}

// A CUDA error fails the check at once (a kernel fault leaves the context unusable).
#define CHECK(call)                                                                                      \
    do {                                                                                                 \
        cudaError_t err_ = (call);                                                                       \
        if (err_ != cudaSuccess) {                                                                       \
            std::printf("RESULT {\"check\": \"%s\", \"status\": \"FAIL\", \"note\": \"%s at %s:%d\"}\n", kName, \
                        cudaGetErrorString(err_), __FILE__, __LINE__);                                   \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

inline std::vector<float> randomVector(size_t n, float lo, float hi, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float &x : v) x = dist(gen);
    return v;
}

// Median time of `launch` in milliseconds, by CUDA events around each call
// after warm-up. Before each call 256 MiB are zeroed (more than an H200's
// 60 MB of L2), so no call finds its inputs in L2 from the one before; the
// host enqueues the zeroing and the start event before calling launch(), so
// the launch function's host work overlaps the zeroing and the timed region
// holds the kernel alone. Enough calls for about budgetMs, 5 to 100.
inline const size_t flushBytes = size_t(256) << 20;
inline void *flushBuffer() {   // one for the process, null if it cannot be had
    static void *flush = [] {
        void *p = nullptr;
        return cudaMalloc(&p, flushBytes) == cudaSuccess ? p : nullptr;
    }();
    return flush;
}

template <class F> double timeIt(F launch, double budgetMs = 300) {
    void *flush = flushBuffer();
    if (!flush) return NAN;
    for (int i = 0; i < 3; ++i) launch();
    cudaDeviceSynchronize();
    auto timed = [&](int n) {
        std::vector<cudaEvent_t> events(2 * n);
        for (cudaEvent_t &e : events) cudaEventCreate(&e);
        for (int i = 0; i < n; ++i) {
            cudaMemsetAsync(flush, 0, flushBytes);
            cudaEventRecord(events[2 * i]);
            launch();
            cudaEventRecord(events[2 * i + 1]);
        }
        cudaDeviceSynchronize();
        std::vector<float> ms(n);
        for (int i = 0; i < n; ++i) cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]);
        for (cudaEvent_t &e : events) cudaEventDestroy(e);
        std::sort(ms.begin(), ms.end());
        return double(ms[n / 2]);
    };
    double estimate = timed(3);
    int n = int(std::clamp(budgetMs / std::max(estimate, 1e-3), 5.0, 100.0));
    return timed(n);
}

// Time of a device-to-device cudaMemcpy that moves `bytes` in all (half read, half written).
inline double memcpyMs(double bytes) {
    size_t half = size_t(bytes / 2);
    void *a = nullptr, *b = nullptr;
    if (cudaMalloc(&a, half) != cudaSuccess || cudaMalloc(&b, half) != cudaSuccess) return NAN;
    cudaMemset(a, 0, half);
    double ms = timeIt([&] { cudaMemcpyAsync(b, a, half, cudaMemcpyDeviceToDevice); });
    cudaFree(a);
    cudaFree(b);
    return ms;
}

// Prints the RESULT line of one case: the worse of the errors after the
// first launch and after the timed ones, and the copy baseline.
inline void report(const char *check, const char *shape, double errorFirst, double errorAfter, double tolerance,
                   double ms, double bytes, double flops) {
    double error = (std::isnan(errorFirst) || std::isnan(errorAfter)) ? NAN : std::max(errorFirst, errorAfter);
    bool ok = error <= tolerance;   // false for NaN
    gFailed = gFailed || !ok;
    double baseMs = memcpyMs(bytes);
    std::printf("RESULT {\"check\": \"%s\", \"shape\": \"%s\", \"status\": \"%s\", \"max_error\": %s, \"tolerance\": %s, "
                "\"time_ms\": %s, \"gbps\": %s, \"tflops\": %s, \"flops\": %s, \"bytes\": %s, "
                "\"baseline\": \"cudaMemcpy device to device, same bytes\", \"baseline_ms\": %s, \"baseline_gbps\": %s, "
                "\"ratio\": %s%s}\n",
                check, shape, ok ? "PASS" : "FAIL", jsonNumber(error).c_str(), jsonNumber(tolerance).c_str(),
                jsonNumber(ms).c_str(), jsonNumber(bytes / ms / 1e6).c_str(), jsonNumber(flops / ms / 1e9).c_str(),
                jsonNumber(flops).c_str(), jsonNumber(bytes).c_str(), jsonNumber(baseMs).c_str(),
                jsonNumber(bytes / baseMs / 1e6).c_str(), jsonNumber(baseMs / ms).c_str(),
                errorFirst == errorAfter || (std::isnan(errorFirst) && std::isnan(errorAfter))
                    ? "" : ", \"note\": \"the error changed between the first launch and the timed ones\"");
    std::fflush(stdout);
}
