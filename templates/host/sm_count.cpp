
// num_sms(): the current device's number of streaming multiprocessors
// (cudaDevAttrMultiProcessorCount), queried once per device (devices 64 and
// up on every launch) and passed to the kernels that use it.
static cudaError_t tilet_sm_count(const char *kernel, int *count) {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return tilet_fail(err, "%s: no CUDA device: %s", kernel, cudaGetErrorString(err));
    static std::atomic<int> known[64];
    if (device >= 0 && device < 64 && (*count = known[device].load(std::memory_order_relaxed)) > 0) return cudaSuccess;
    err = cudaDeviceGetAttribute(count, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return tilet_fail(err, "%s: cannot query the SM count of device %d: %s", kernel, device, cudaGetErrorString(err));
    if (device >= 0 && device < 64) known[device].store(*count, std::memory_order_relaxed);
    return cudaSuccess;
} // tilet_sm_count
