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
