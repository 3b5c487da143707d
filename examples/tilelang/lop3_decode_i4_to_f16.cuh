// The int4 -> f16 decode that TileLang's example_dequant_gemv_fp16xint4.py
// brings in with T.import_source: examples/dequantize_gemm/quantize/lop3.py
// (tile-ai/tilelang; originally BitBLAS, Microsoft, MIT licence), the
// `decode_i4_to_f16` source that get_lop3_intrin_group returns for
// out_dtype float16, source_format uint, 4 bits, int8 storage, no scaling.
//
// Each 32-bit word of eight 4-bit values becomes eight halves: element 2i is
// the nibble at bit 4i, element 2i + 1 the nibble at bit 4i + 16 (lop3 puts
// each nibble under the f16 exponent of 1024, sub.f16x2 removes the 1024).
// TileLang's interleave_weight stores the weights in that order.
template <typename T1, typename T2, bool isSigned = false>
__device__ void decode_i4b_to_f16(T1 *_i4s, T2 *B_local_decode, const int N = 8)
{
    uint *h = reinterpret_cast<uint *>(B_local_decode);

    static constexpr uint immLut = (0xf0 & 0xcc) | 0xaa;
    static constexpr uint BOTTOM_MASK = 0x000f000f;
    static constexpr uint FP16_TOP_MAGIC_NUM = 0x64006400;
    static constexpr uint MEDIAN_NUM = isSigned ? 0x64086408 : 0x64006400;
    uint const i4s = *reinterpret_cast<uint *>(_i4s);
#pragma unroll
    for (int i = 0; i < (N / 2); i++)
    {

        asm volatile("lop3.b32 %0, %1, %2, %3, %4;\n"
                     : "=r"(h[i])
                     : "r"(i4s >> (4 * i)), "n"(BOTTOM_MASK), "n"(FP16_TOP_MAGIC_NUM), "n"(immLut));
        asm volatile("sub.f16x2 %0, %1, %2;\n" : "=r"(h[i]) : "r"(h[i]), "r"(MEDIAN_NUM));
    }
}

template <typename T1, typename T2>
__device__ void decode_i4s_to_f16(T1 *_i4s, T2 *B_local_decode, const int N = 8)
{
    decode_i4b_to_f16<T1, T2, true>(_i4s, B_local_decode, N);
}

template <typename T1, typename T2>
__device__ void decode_i4u_to_f16(T1 *_i4u, T2 *B_local_decode, const int N = 8)
{
    decode_i4b_to_f16<T1, T2, false>(_i4u, B_local_decode, N);
}
