"""Models of the external CUDA functions that ported programs bring in with
import_source and call with call_extern, for the reference interpreter
(tlinterp.py). Each is written from what its source computes (its PTX, per
the PTX ISA), not from tilet's output: the emulator runs the source's own
inline asm through emu.h's instruction models instead, so the two sides meet
only in the result.

A model takes the call's arguments in order: a value argument as a Python
number, an access_ptr argument as a tlinterp._Pointer (index it like a list
of the buffer's elements from that element on)."""


def _decode_i4b_to_f16(src, dst, signed, n=8):
    """TileLang's LOP3 decode (examples/dequantize_gemm/quantize/lop3.py,
    decode_i4b_to_f16): the four bytes at src as one little-endian 32-bit
    word; for i < n / 2, lop3.b32 with immLut (0xf0 & 0xcc) | 0xaa keeps the
    nibbles at bits 4i and 4i + 16 under the f16 pattern 0x6400 (1024 +
    nibble), and sub.f16x2 subtracts 1024 (0x6400), or 1032 (0x6408) for
    signed values."""
    word = 0
    for k in range(4):
        word |= (int(src[k]) & 0xFF) << (8 * k)
    bias = 8 if signed else 0
    for i in range(n // 2):
        dst[2 * i] = float(((word >> (4 * i)) & 0xF) - bias)
        dst[2 * i + 1] = float(((word >> (4 * i + 16)) & 0xF) - bias)


MODELS = {
    "decode_i4u_to_f16": lambda src, dst, n=8: _decode_i4b_to_f16(src, dst, False, n),
    "decode_i4s_to_f16": lambda src, dst, n=8: _decode_i4b_to_f16(src, dst, True, n),
}
