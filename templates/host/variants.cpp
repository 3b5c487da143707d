// The variants of the kernels in {{cu}}, one per target, oldest first.
struct tilet_variant {
    const char *target;   // "sm_90a"
    int major, minor;     // the compute capability its code was compiled for
    bool exact;           // runs on major.minor alone (an architecture-specific target), not on later minor versions
    const void *probe;    // one of its kernels: which code the binary holds for the variant
};
static const tilet_variant tilet_variants[{{count}}] = {
{{table}}};

// The variant a launch runs on the current device: the newest whose code the device runs (CUDA's
// binary compatibility, as for a single target). Chosen once per device and cached (devices 64 and
// up choose on every launch); thread-safe.
static cudaError_t tilet_device_variant(const char *kernel, int *variant) {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return tilet_fail(err, "%s: no CUDA device: %s", kernel, cudaGetErrorString(err));
    static std::atomic<int> chosen[64];   // the variant + 1; 0 until chosen
    if (device < 64) {
        const int known = chosen[device].load(std::memory_order_acquire);
        if (known > 0) {
            *variant = known - 1;
            return cudaSuccess;
        }
    }
    int major = 0, minor = 0;
    err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    if (err != cudaSuccess) return tilet_fail(err, "%s: cannot query device %d: %s", kernel, device, cudaGetErrorString(err));
    int best = -1;
    for (int i = 0; i < {{count}}; ++i) {
        const tilet_variant &v = tilet_variants[i];
        if (major == v.major && (v.exact ? minor == v.minor : minor >= v.minor)) best = i;
    }
    if (best < 0)
        return tilet_fail(cudaErrorNoKernelImageForDevice, "%s: compiled for {{targets}}; device %d has compute capability %d.%d, which none of them runs on", kernel, device, major, minor);
#ifndef TILET_NO_CHECKS
    // A variant's kernels hold its code only when nvcc compiled the .cu for its -gencode; built
    // from another target's PTX they would trap.
    if (tilet_variants[best].probe != nullptr) {
        cudaFuncAttributes attributes = {};
        err = cudaFuncGetAttributes(&attributes, tilet_variants[best].probe);
        const int wanted = tilet_variants[best].major * 10 + tilet_variants[best].minor;
        if (err != cudaSuccess || attributes.ptxVersion != wanted) {
            if (err != cudaSuccess) (void)cudaGetLastError();   // not a sticky error: leave none behind
            return tilet_fail(cudaErrorNoKernelImageForDevice, "%s: device %d (compute capability %d.%d) runs the %s variant, but the binary holds no %s code for it; build {{cu}} with %s",
                              kernel, device, major, minor, tilet_variants[best].target, tilet_variants[best].target, "{{gencode}}");
        }
    }
#endif
    if (device < 64) chosen[device].store(best + 1, std::memory_order_release);
    *variant = best;
    return cudaSuccess;
} // tilet_device_variant
