
// ---- TMA tensor maps
// The encoders (cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col) are driver
// functions, reached through the runtime (cudaGetDriverEntryPointByVersion),
// so nothing links libcuda.
#include <cuda.h>
#include <cudaTypedefs.h>
