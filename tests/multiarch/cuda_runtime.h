// cuda_runtime.h -- a stand-in for the CUDA runtime, for testing the generated
// launch code's choice of variant without a GPU (tests/scripts/multi_arch.py).
//
// It declares only what a .host.cpp uses. The "device" is what the test sets
// in fake_cuda: its compute capability, the PTX architecture the binary holds
// for each kernel, and which kernel the last launch ran; calls are counted so
// that the test can see the choice is made once per device.
#pragma once

#include <cstddef>

enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorNoKernelImageForDevice = 209,
    cudaErrorMisalignedAddress = 716,
};
typedef struct CUstream_st *cudaStream_t;

enum cudaDeviceAttr { cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributeNonPortableClusterSizeAllowed = 13 };

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    dim3() = default;
    dim3(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

enum cudaLaunchAttributeID { cudaLaunchAttributeClusterDimension = 4, cudaLaunchAttributeProgrammaticStreamSerialization = 5 };
struct cudaLaunchAttribute {
    cudaLaunchAttributeID id;
    union {
        struct { unsigned x, y, z; } clusterDim;
        int programmaticStreamSerializationAllowed;
    } val;
};
struct cudaLaunchConfig_t {
    dim3 gridDim, blockDim;
    size_t dynamicSmemBytes;
    cudaStream_t stream;
    cudaLaunchAttribute *attrs;
    unsigned numAttrs;
};
struct cudaFuncAttributes {
    int ptxVersion;
    int binaryVersion;
};

// What the test controls and observes.
namespace fake_cuda {
inline int device = 0;
inline int major[8] = {8, 8, 9, 10, 12, 9, 7, 7}, minor[8] = {0, 6, 0, 0, 0, 0, 5, 5};
inline const void *kernels[8];      // the kernels the test registered, and the PTX
inline int ptx_version[8];          // architecture the "binary" holds for each (0: no code)
inline int registered = 0;
inline int attribute_queries = 0;   // cudaDeviceGetAttribute calls
inline int function_queries = 0;    // cudaFuncGetAttributes calls
inline const void *shared_opt_in[8];   // kernels given cudaFuncAttributeMaxDynamicSharedMemorySize
inline int opt_ins = 0;
inline cudaError_t last = cudaSuccess;
} // namespace fake_cuda

inline cudaError_t cudaGetDevice(int *device) {
    *device = fake_cuda::device;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) {
    ++fake_cuda::attribute_queries;
    *value = attr == cudaDevAttrComputeCapabilityMajor ? fake_cuda::major[device] : fake_cuda::minor[device];
    return cudaSuccess;
}
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func) {
    ++fake_cuda::function_queries;
    for (int i = 0; i < fake_cuda::registered; ++i) {
        if (fake_cuda::kernels[i] != func) continue;
        if (fake_cuda::ptx_version[i] == 0) return fake_cuda::last = cudaErrorNoKernelImageForDevice;
        attr->ptxVersion = fake_cuda::ptx_version[i];
        attr->binaryVersion = fake_cuda::major[fake_cuda::device] * 10 + fake_cuda::minor[fake_cuda::device];
        return cudaSuccess;
    }
    return fake_cuda::last = cudaErrorInvalidDeviceFunction;
}
inline cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int) {
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) fake_cuda::shared_opt_in[fake_cuda::opt_ins++ % 8] = func;
    return cudaSuccess;
}
inline cudaError_t cudaGetLastError() {
    cudaError_t e = fake_cuda::last;
    fake_cuda::last = cudaSuccess;
    return e;
}
inline const char *cudaGetErrorString(cudaError_t) { return "fake error"; }

// Runs the kernel's stand-in (the test defines each kernel as a host function).
template <typename... Params, typename... Args>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t *, void (*kernel)(Params...), Args &&...args) {
    kernel(args...);
    return cudaSuccess;
}
