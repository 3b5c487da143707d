
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

