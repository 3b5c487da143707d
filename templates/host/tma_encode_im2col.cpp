
// Encodes `map` in TMA's im2col mode for an NHWC tensor at `base` (sizes C,
// W, H, N innermost first, byte strides of W, H, N): loads of
// `pixelsPerColumn` pixels of `channelsPerPixel` channels, traversing the
// bounding box of filter-window corners (`lower` and `upper`, W then H) in
// `stride` steps. Validated as tilet_encode_tensor_map is.
static cudaError_t tilet_encode_im2col_tensor_map(CUtensorMap *map, CUtensorMapDataType type, const void *base, const cuuint64_t *sizes,
                                                  const cuuint64_t *strides, const int *lower, const int *upper, cuuint32_t channelsPerPixel,
                                                  cuuint32_t pixelsPerColumn, cuuint32_t stride, CUtensorMapSwizzle swizzle)
{
    if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0) return cudaErrorInvalidValue;
    for (int d = 0; d < 4; ++d)
        if (sizes[d] == 0 || sizes[d] > (1ull << 32)) return cudaErrorInvalidValue;
    for (int d = 0; d < 3; ++d)
        if (strides[d] % 16 != 0 || strides[d] >= (1ull << 40)) return cudaErrorInvalidValue;
    // Thread-safe: the static is initialised once.
    static const auto encode = reinterpret_cast<PFN_cuTensorMapEncodeIm2col_v12000>(tilet_driver_function("cuTensorMapEncodeIm2col"));
    if (!encode) return cudaErrorNotSupported;
    const cuuint32_t elementStrides[4] = {1, stride, stride, 1};
    CUresult r = encode(map, type, 4, const_cast<void *>(base), sizes, strides, lower, upper, channelsPerPixel, pixelsPerColumn, elementStrides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}
