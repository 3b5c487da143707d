
// ---- TMA tensor maps
// The encoders (cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col) are driver
// functions, reached through the runtime (cudaGetDriverEntryPointByVersion),
// so nothing links libcuda.
#include <cuda.h>
#include <cudaTypedefs.h>

// The driver function `name` (its CUDA 12.0 form), or null without a driver
// that has it. Called once per function, from a static's initializer.
static void *tilet_driver_function(const char *name)
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess || found != cudaDriverEntryPointSuccess) return nullptr;
    return fn;
}
