// emu.h -- runs tilet's generated SIMT kernels on the CPU, for tests.
//
// No GPU is available where tilet is developed, so the generated .cu files
// of the SIMT examples are also compiled with g++ against this header and run
// with one std::thread per CUDA thread: __syncthreads is a std::barrier of the
// block, __shfl_xor_sync a barrier of the warp plus an exchange buffer,
// dynamic shared memory one buffer per block. prepare.py rewrites the one
// line g++ cannot take (the extern __shared__ declaration).
//
// This checks the arithmetic, indexing, layouts, guards, vectorized moves,
// shuffles and barrier placement of the generated code -- not timing, and not
// inline PTX (tensor-core kernels need the GPU check, scripts/gpu-check).
#pragma once

#include <cstring>
inline float __int_as_float(unsigned int bits);
inline double __longlong_as_double(unsigned long long bits);
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>
#include <vector_types.h>

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#undef __global__
#define __global__
#define __launch_bounds__(...)

namespace emu {

struct Dim {
    unsigned x = 0, y = 0, z = 0;
};

struct Block {
    std::unique_ptr<std::barrier<>> sync;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    std::vector<uint64_t> lanes;   // shuffle exchange slots, one per thread
    std::vector<unsigned char> shared;
};

inline thread_local Dim tid, bid;
inline thread_local Block *block = nullptr;

inline unsigned char *sharedBase() { return block->shared.data(); }

// Runs `kernel(args...)` on a grid of blocks, one std::thread per CUDA thread.
template <class Kernel, class... Args>
void launch(Dim grid, unsigned threads, size_t sharedBytes, Kernel kernel, Args... args) {
    if (threads % 32 != 0) throw std::runtime_error("emu: threads must be whole warps");
    for (unsigned z = 0; z < std::max(grid.z, 1u); ++z)
        for (unsigned y = 0; y < std::max(grid.y, 1u); ++y)
            for (unsigned x = 0; x < std::max(grid.x, 1u); ++x) {
                Block b;
                b.sync = std::make_unique<std::barrier<>>(threads);
                for (unsigned w = 0; w < threads / 32; ++w) b.warps.push_back(std::make_unique<std::barrier<>>(32));
                b.lanes.assign(threads, 0);
                // Poison shared memory so a missing initialisation shows up.
                b.shared.assign(sharedBytes + 16, 0xA5);
                std::vector<std::thread> pool;
                for (unsigned t = 0; t < threads; ++t) {
                    pool.emplace_back([&, t] {
                        tid = {t, 0, 0};
                        bid = {x, y, z};
                        block = &b;
                        kernel(args...);
                    });
                }
                for (std::thread &th : pool) th.join();
            }
}

inline void syncThreads() { block->sync->arrive_and_wait(); }

template <class T> T shuffleXor(unsigned, T value, int laneMask) {
    static_assert(sizeof(T) <= 8, "emu shuffles move at most 8 bytes");
    unsigned t = tid.x, warpBase = t / 32 * 32;
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    block->lanes[t] = bits;
    block->warps[t / 32]->arrive_and_wait();
    uint64_t other = block->lanes[warpBase + ((t % 32) ^ static_cast<unsigned>(laneMask))];
    block->warps[t / 32]->arrive_and_wait();
    T out;
    std::memcpy(&out, &other, sizeof(T));
    return out;
}

} // namespace emu

#define threadIdx emu::tid
#define blockIdx emu::bid
#define __syncthreads() emu::syncThreads()
#define __shfl_xor_sync(mask, value, laneMask) emu::shuffleXor(mask, value, laneMask)

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
template <class T> T atomicAdd(T *address, T value) { return std::atomic_ref<T>(*address).fetch_add(value); }

#include <cuda_runtime.h>

namespace emu {
// Stands in for cudaLaunchKernelEx in the generated host code.
template <class... Params, class... Args>
cudaError_t launchEx(const cudaLaunchConfig_t *config, void (*kernel)(Params...), Args &&...args) {
    if (config->blockDim.y != 1 || config->blockDim.z != 1) return cudaErrorInvalidConfiguration;
    launch(Dim{config->gridDim.x, config->gridDim.y, config->gridDim.z}, config->blockDim.x, config->dynamicSmemBytes, kernel,
           static_cast<Params>(args)...);
    return cudaSuccess;
}
} // namespace emu

// Device intrinsics the CUDA headers' constants expand to.
inline float __int_as_float(unsigned int bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
inline double __longlong_as_double(unsigned long long bits) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}
