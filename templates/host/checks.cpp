
// Why the last launch function this thread called failed ("" when it did not): its checks name
// the kernel and the parameter; CUDA's own errors are CUDA's (cudaGetErrorString).
static thread_local char tilet_last_error[512];

static cudaError_t tilet_fail(cudaError_t code, const char *format, ...) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(tilet_last_error, sizeof tilet_last_error, format, args);
    va_end(args);
    return code;
} // tilet_fail

extern "C" const char *{{module}}_last_error(void) {
    return tilet_last_error;
} // {{module}}_last_error

#ifndef TILET_NO_CHECKS
// The current device can run {{target}} code: compute capability {{capability}}. Checked once per device
// (devices 64 and up on every launch).
static cudaError_t tilet_check_device(const char *kernel) {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return tilet_fail(err, "%s: no CUDA device: %s", kernel, cudaGetErrorString(err));
    static std::atomic<unsigned long long> checked{0};
    if (device < 64 && (checked.load(std::memory_order_acquire) >> device & 1)) return cudaSuccess;
    int major = 0, minor = 0;
    err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    if (err != cudaSuccess) return tilet_fail(err, "%s: cannot query device %d: %s", kernel, device, cudaGetErrorString(err));
    if (!({{runs}}))
        return tilet_fail(cudaErrorNoKernelImageForDevice, "%s: compiled for {{target}} (compute capability {{capability}}); device %d has %d.%d", kernel, device, major, minor);
    if (device < 64) checked.fetch_or(1ull << device, std::memory_order_release);
    return cudaSuccess;
} // tilet_check_device
#endif
