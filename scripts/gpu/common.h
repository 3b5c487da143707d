// common.h -- timing, random data and reporting for the GPU checks.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            std::printf("RESULT %s status=FAIL error=%s at %s:%d\n", kName, cudaGetErrorString(err_), \
                        __FILE__, __LINE__);                                                       \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

inline std::vector<float> randomVector(size_t n, float lo, float hi, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float &x : v) x = dist(gen);
    return v;
}

// Median time of `iters` launches after `warmup`, in milliseconds.
template <class F> double timeIt(F launch, int warmup = 5, int iters = 50) {
    for (int i = 0; i < warmup; ++i) launch();
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<float> ms;
    for (int i = 0; i < iters; ++i) {
        cudaEventRecord(start);
        launch();
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float t = 0;
        cudaEventElapsedTime(&t, start, stop);
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

inline void report(const char *name, double maxError, double tolerance, double ms, double bytes, double flops) {
    std::printf("RESULT %s status=%s max_error=%.3g time_ms=%.4f GB/s=%.1f TFLOP/s=%.3f\n", name,
                maxError <= tolerance ? "ok" : "FAIL", maxError, ms, bytes / ms / 1e6, flops / ms / 1e9);
}
