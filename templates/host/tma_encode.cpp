
// Encodes `map` for a row-major tensor at `base`: `rank` dimensions, sizes
// innermost first, byte strides of the outer ones, the box one TMA operation
// moves, and the shared-memory swizzle. Fields are validated first; returns
// cudaErrorInvalidValue for a tensor the hardware cannot describe (base not
// 16-byte aligned, a stride not a multiple of 16 bytes or not below 2^40, a
// size above 2^32), cudaErrorNotSupported without a driver that encodes.
static cudaError_t tilet_encode_tensor_map(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, const void *base,
                                           const cuuint64_t *sizes, const cuuint64_t *strides, const cuuint32_t *box,
                                           CUtensorMapSwizzle swizzle)
{
    if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0) return cudaErrorInvalidValue;
    for (cuuint32_t d = 0; d < rank; ++d) {
        if (sizes[d] == 0 || sizes[d] > (1ull << 32)) return cudaErrorInvalidValue;
        if (box[d] == 0 || box[d] > 256) return cudaErrorInvalidValue;
    }
    for (cuuint32_t d = 0; d + 1 < rank; ++d) {
        if (strides[d] % 16 != 0 || strides[d] >= (1ull << 40)) return cudaErrorInvalidValue;
    }
    // Thread-safe: the static is initialised once.
    static const auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(tilet_driver_function("cuTensorMapEncodeTiled"));
    if (!encode) return cudaErrorNotSupported;
    const cuuint32_t elementStrides[5] = {1, 1, 1, 1, 1};
    CUresult r = encode(map, type, rank, const_cast<void *>(base), sizes, strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}
