"""Element types of the tile language (docs/language.md section 3) for the
reference interpreter and the difftest harness: rounding a Python number to
a dtype, and the bytes a dtype is stored as in device memory.

Pure Python on purpose (no numpy): the difftest runs wherever tilet's tests
run. Floats are carried as Python floats (IEEE double); a value of dtype T is
a double that T can represent exactly, so every conversion is one rounding.
"""
import math
import struct

INT_TYPES = {
    "int4": (4, True), "uint4": (4, False),
    "int8": (8, True), "int16": (16, True), "int32": (32, True), "int64": (64, True),
    "uint8": (8, False), "uint16": (16, False), "uint32": (32, False), "uint64": (64, False),
}
# f4e2m1_unpacked (and the 6-bit f6e2m3_unpacked, f6e3m2_unpacked): values in the
# shared-memory slots tcgen05.mma's f8f6f4 kinds read (8 bits each); only their
# storage differs from f4e2m1 (f6e2m3, f6e3m2).
UNPACKED = {"f4e2m1_unpacked": "f4e2m1", "f6e2m3_unpacked": "f6e2m3", "f6e3m2_unpacked": "f6e3m2"}
FLOAT_TYPES = {"f16", "bf16", "f32", "f64", "tf32", "f8e4m3", "f8e5m2", "f6e2m3", "f6e3m2", "f4e2m1", *UNPACKED}
# Narrow floats are computed in f32 (docs/language.md section 3).
NARROW_FLOATS = {"f16", "bf16", "f8e4m3", "f8e5m2", "f6e2m3", "f6e3m2", "f4e2m1", *UNPACKED}
SUB_BYTE = {"f6e2m3", "f6e3m2", "f4e2m1"}
ALL_TYPES = set(INT_TYPES) | FLOAT_TYPES | {"bool", "e8m0"} | SUB_BYTE

BITS = {"bool": 8, "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "tf32": 32, "f8e4m3": 8, "f8e5m2": 8, "e8m0": 8, "f6e2m3": 6, "f6e3m2": 6, "f4e2m1": 4,
        **{t: 8 for t in UNPACKED}, **{t: b for t, (b, _) in INT_TYPES.items()}}


def is_int(t):
    return t in INT_TYPES


def is_float(t):
    return t in FLOAT_TYPES


def arith_type(a, b):
    """C's usual arithmetic conversions, with narrow floats computed in f32
    (docs/language.md section 3). bool counts as int."""
    if is_float(a) or is_float(b):
        return "f64" if "f64" in (a, b) else "f32"

    def promote(t):
        if t == "bool":
            return "int32"
        bits, signed = INT_TYPES[t]
        return t if bits >= 32 else "int32"   # C's integer promotion: narrower types become int

    a, b = promote(a), promote(b)
    (wa, sa), (wb, sb) = INT_TYPES[a], INT_TYPES[b]
    if sa == sb:
        return a if wa >= wb else b
    unsigned, signed = (a, b) if not sa else (b, a)
    if INT_TYPES[unsigned][0] >= INT_TYPES[signed][0]:
        return unsigned
    return signed


# ------------------------------------------------------------------ rounding

_F32 = struct.Struct("<f")
_pack32, _unpack32 = _F32.pack, _F32.unpack
_U32 = struct.Struct("<I")
INF = float("inf")


def f32(x):
    """Round a double to the nearest f32 (ties to even; overflow gives inf)."""
    try:
        return _unpack32(_pack32(x))[0]
    except OverflowError:
        # struct raises where C's (float)x rounds a finite double to infinity:
        # |x| at or past FLT_MAX + half an ulp (below it, x rounds to FLT_MAX).
        return math.copysign(INF, x)


def f32_bits(x):
    try:
        return _U32.unpack(_pack32(x))[0]
    except OverflowError:
        return 0xFF800000 if x < 0 else 0x7F800000


def tf32_truncated(x):
    """What a tensor core reads of an f32 in tf32 mode: sign, exponent and
    the top 10 mantissa bits; the low 13 are cut off (PTX ISA, mma .tf32)."""
    if math.isnan(x) or math.isinf(x):
        return x
    return f32_from_bits(f32_bits(x) & 0xFFFFE000)


def f32_from_bits(b):
    return _unpack32(_U32.pack(b & 0xFFFFFFFF))[0]


def _round_mantissa(x, mant_bits, min_exp, max_finite, saturate_to=None):
    """Round x to a binary float with `mant_bits` explicit mantissa bits,
    smallest normal exponent `min_exp` (subnormals below it) and largest
    finite value `max_finite`; ties to even. Overflow gives inf unless the
    format has none (`saturate_to`): such a value is outside the format."""
    if x != x or x in (INF, -INF):
        return x
    if x == 0:
        return x
    m, e = math.frexp(abs(x))      # abs(x) = m * 2**e, 0.5 <= m < 1
    e = max(e - 1, min_exp)        # exponent of the leading bit (or the subnormal scale)
    quantum = math.ldexp(1.0, e - mant_bits)
    q = abs(x) / quantum
    r = math.floor(q)
    frac = q - r
    if frac > 0.5 or (frac == 0.5 and r % 2 == 1):
        r += 1
    y = r * quantum
    if y > max_finite:
        # Past the largest finite value, round to it below the midpoint to
        # the next step (whose mantissa would be even), beyond it overflow.
        half_ulp = math.ldexp(1.0, math.frexp(max_finite)[1] - 2 - mant_bits)
        if abs(x) < max_finite + half_ulp:
            y = max_finite
        elif saturate_to is None:
            return math.copysign(INF, x)
        else:
            raise InvalidProgram(f"{x} is outside the range of an fp8 format without infinity")
    return math.copysign(y, x)


def f16(x):
    return _round_mantissa(x, 10, -14, 65504.0)


def bf16(x):
    if x != x:
        return x
    b = f32_bits(f32(x))
    # Round the f32 to its upper 16 bits, ties to even (as __float2bfloat16).
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return f32_from_bits(b)


def _fp8_satfinite(x, mant_bits, min_exp, max_finite):
    # A conversion to fp8 saturates: CUDA's __nv_fp8_e4m3 / __nv_fp8_e5m2
    # constructors convert with __NV_SATFINITE (the PTX ISA's
    # cvt.rn.satfinite.e4m3x2 / e5m2x2): past the largest finite value plus
    # half a step, infinities included, to +-largest (below that threshold
    # rounding gives the largest too); NaN stays NaN.
    if x != x:
        return x
    if abs(x) > max_finite:
        return math.copysign(max_finite, x)
    return _round_mantissa(x, mant_bits, min_exp, max_finite)


def e4m3(x):
    return _fp8_satfinite(x, 3, -6, 448.0)


def e5m2(x):
    return _fp8_satfinite(x, 2, -14, 57344.0)


def e2m1(x):
    # OCP MX e2m1: 1 mantissa bit, exponents 0..2 (bias 1), largest 6, no inf or NaN.
    # A store saturates, as the PTX ISA's cvt.rn.satfinite.e2m1x2.f32 (CUDA's
    # __nv_fp4_e2m1): beyond +-6 (infinities too) to +-6, NaN to +6.
    if x != x:
        return 6.0
    if abs(x) > 6.0:
        return math.copysign(6.0, x)
    return _round_mantissa(x, 1, 0, 6.0, saturate_to=True)


def e2m3(x):
    # OCP MX e2m3: 3 mantissa bits, exponents 0..3 (bias 1), largest 7.5, no inf or NaN.
    return _round_mantissa(x, 3, 0, 7.5, saturate_to=True)


def e3m2(x):
    # OCP MX e3m2: 2 mantissa bits, exponents -2..4 (bias 3), largest 28, no inf or NaN.
    return _round_mantissa(x, 2, -2, 28.0, saturate_to=True)


ROUND = {"f32": f32, "tf32": f32, "f64": float, "f16": f16, "bf16": bf16, "f8e4m3": e4m3, "f8e5m2": e5m2, "f6e2m3": e2m3, "f6e3m2": e3m2,
         "f4e2m1": e2m1}
ROUND.update({slots: ROUND[packed] for slots, packed in UNPACKED.items()})


class InvalidProgram(Exception):
    """The program's result is not defined by the language (an uninitialised
    read, an out-of-range index into on-chip memory, a race between blocks,
    a division by zero, a float converted to an integer it does not fit)."""


def wrap_int(x, t):
    bits, signed = INT_TYPES[t]
    x &= (1 << bits) - 1
    if signed and x >= 1 << (bits - 1):
        x -= 1 << bits
    return x


def float_to_int(x, t):
    """C's conversion: truncation towards zero; undefined outside the type."""
    bits, signed = INT_TYPES[t]
    if x != x or x in (INF, -INF):
        raise InvalidProgram(f"{x} converted to {t}")
    v = int(x)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not lo <= v <= hi:
        raise InvalidProgram(f"{x} does not fit {t}")
    return v


def convert(x, src, dst):
    """Convert a value of dtype `src` to dtype `dst` (implicit conversions and
    stores; docs/language.md section 3)."""
    if x is None:
        raise InvalidProgram("read of an element never written")
    if dst == "bool":
        if src != "bool":
            raise InvalidProgram(f"{src} converted to bool")
        return x
    if is_float(dst):
        return ROUND[dst](float(x))
    if is_int(dst):
        if is_float(src):
            return float_to_int(x, dst)
        return wrap_int(int(x), dst)
    raise InvalidProgram(f"no conversion to {dst}")


# ------------------------------------------------------------------ device bytes

_STRUCT = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B", "uint16": "H", "uint32": "I",
           "uint64": "Q", "f32": "f", "tf32": "f", "f64": "d", "bool": "?"}


def _fp8_bits(x, mant, bias, table):
    # Encode by lookup: every fp8 value is in `table` (value -> bits).
    if x != x:
        return 0x7F
    return table[x]


def _fp8_table(mant, bias, e4m3):
    table = {}
    for b in range(256):
        v = fp8_value(b, mant, bias, e4m3)
        if v == v and v not in table:
            table[v] = b
    table[0.0] = 0
    return table


def fp8_value(b, mant, bias, e4m3):
    sign = -1.0 if b & 0x80 else 1.0
    exp = (b >> mant) & ((1 << (7 - mant)) - 1)
    m = b & ((1 << mant) - 1)
    if e4m3:
        if exp == 15 and m == 7:
            return float("nan")
    elif exp == 31:
        return sign * INF if m == 0 else float("nan")
    if exp == 0:
        return sign * math.ldexp(m, 1 - bias - mant)
    return sign * math.ldexp((1 << mant) + m, exp - bias - mant)


_E4M3 = _fp8_table(3, 7, True)
_E5M2 = _fp8_table(2, 15, False)


# Packed 4-bit integers: two to a byte, element 0 in the low nibble
# (docs/language.md section 3, as mma.sync's .s4/.u4 operands).
PACKED_INTS = {"int4", "uint4"}


# e2m1 (OCP MX): sign, 2 exponent bits, 1 mantissa bit; two to a byte, element
# 0 in the low nibble, as the packed integers.
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def _e2m1_bits(x):
    if x == 0:
        return 8 if math.copysign(1.0, x) < 0 else 0
    return E2M1_VALUES.index(x)


def six_bit_value(b, mant, bias):
    """A 6-bit float (OCP MX e2m3 or e3m2): sign in bit 5, no inf or NaN."""
    sign = -1.0 if b & 0x20 else 1.0
    exp, m = (b & 0x1F) >> mant, b & ((1 << mant) - 1)
    if exp == 0:
        return sign * math.ldexp(m, 1 - bias - mant)
    return sign * math.ldexp((1 << mant) + m, exp - bias - mant)


# The 64 codes of each 6-bit type, in code order; packed four to three bytes,
# element i at bit 6 * i (little-endian), as TMA's 16U6_ALIGN16B unpacks them.
SIX_BIT_VALUES = {"f6e2m3": [six_bit_value(b, 3, 1) for b in range(64)], "f6e3m2": [six_bit_value(b, 2, 3) for b in range(64)]}


def _six_bit_code(x, t):
    if x == 0:
        return 0x20 if math.copysign(1.0, x) < 0 else 0
    return SIX_BIT_VALUES[t].index(x)


def ue4m3_value(b):
    """A block-scale factor of kind::mxf4nvf4 (NVFP4): e4m3 without a sign."""
    return fp8_value(b & 0x7F, 3, 7, True)


def ue8m0_value(b):
    """A block-scale factor of the MX formats: 2**(b - 127); 0xFF is NaN."""
    return float("nan") if b == 0xFF else math.ldexp(1.0, b - 127)


def to_bytes(values, t):
    """The device-memory image of a list of values of dtype t."""
    if t == "f4e2m1":
        nibbles = [_e2m1_bits(v) for v in values] + [0] * (len(values) % 2)
        return bytes(nibbles[i] | nibbles[i + 1] << 4 for i in range(0, len(nibbles), 2))
    if t in PACKED_INTS:
        nibbles = [v & 0xF for v in values] + [0] * (len(values) % 2)
        return bytes(nibbles[i] | nibbles[i + 1] << 4 for i in range(0, len(nibbles), 2))
    if t in SIX_BIT_VALUES:
        bits = sum(_six_bit_code(v, t) << 6 * i for i, v in enumerate(values))
        return bits.to_bytes(bytes_of(t, len(values)), "little")
    if t in _STRUCT:
        return struct.pack(f"<{len(values)}{_STRUCT[t]}", *values)
    if t == "f16":
        return struct.pack(f"<{len(values)}e", *values)
    if t == "bf16":
        return struct.pack(f"<{len(values)}H", *[f32_bits(v) >> 16 for v in values])
    if t == "f8e4m3":
        return bytes(_fp8_bits(v, 3, 7, _E4M3) for v in values)
    if t == "f8e5m2":
        return bytes(_fp8_bits(v, 2, 15, _E5M2) for v in values)
    raise ValueError(f"no byte image for {t}")


def from_bytes(data, t, n):
    if t == "f4e2m1":
        return [E2M1_VALUES[(data[i // 2] >> 4 * (i % 2)) & 0xF] for i in range(n)]
    if t in PACKED_INTS:
        return [wrap_int(data[i // 2] >> 4 * (i % 2), t) for i in range(n)]
    if t in SIX_BIT_VALUES:
        bits = int.from_bytes(bytes(data[:bytes_of(t, n)]), "little")
        return [SIX_BIT_VALUES[t][(bits >> 6 * i) & 0x3F] for i in range(n)]
    if t in _STRUCT:
        return list(struct.unpack_from(f"<{n}{_STRUCT[t]}", data))
    if t == "f16":
        return list(struct.unpack_from(f"<{n}e", data))
    if t == "bf16":
        return [f32_from_bits(h << 16) for h in struct.unpack_from(f"<{n}H", data)]
    if t == "f8e4m3":
        return [fp8_value(b, 3, 7, True) for b in data[:n]]
    if t == "f8e5m2":
        return [fp8_value(b, 2, 15, False) for b in data[:n]]
    raise ValueError(f"no byte image for {t}")


def bytes_of(t, n):
    """Bytes of n elements of dtype t (packed types fill whole bytes)."""
    return (n * BITS[t] + 7) // 8


C_TYPES = {"bool": "bool", "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
           "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
           "uint64": "unsigned long long", "f16": "__half", "bf16": "__nv_bfloat16", "f32": "float",
           "tf32": "float", "f64": "double", "f8e4m3": "__nv_fp8_e4m3", "f8e5m2": "__nv_fp8_e5m2"}
