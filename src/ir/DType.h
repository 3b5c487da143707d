// DType.h -- element types of tensors, buffers and scalars.
//
// Shared by the front end (dtype keywords) and the IR. `bits` is the storage
// width of one element: tf32 is stored in 32 bits, f6 in 6 and f4 in 4
// (sub-byte types are packed, two 4-bit elements to a byte, element 0 in
// the low nibble, as mma.sync's .s4/.u4 and .e2m1 operands are).
// f4e2m1_unpacked (TileLang's float4_e2m1_unpacked) is e2m1 in the shared-memory
// form tcgen05.mma's kind::f8f6f4 / mxf8f6f4 read: a slot of 8 bits per
// element, sixteen elements packed in the first 8 bytes of each 16 (PTX ISA;
// TMA's CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B writes it). f6e2m3_unpacked and
// f6e3m2_unpacked are the same for the 6-bit types: sixteen elements packed
// in the first 12 bytes of each 16 (CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tilet {

#define TILET_DTYPES(X)                                   \
    X(Bool, "bool", 8)                                    \
    X(Int4, "int4", 4)                                    \
    X(Int8, "int8", 8)                                    \
    X(Int16, "int16", 16)                                 \
    X(Int32, "int32", 32)                                 \
    X(Int64, "int64", 64)                                 \
    X(UInt4, "uint4", 4)                                  \
    X(UInt8, "uint8", 8)                                  \
    X(UInt16, "uint16", 16)                               \
    X(UInt32, "uint32", 32)                               \
    X(UInt64, "uint64", 64)                               \
    X(F16, "f16", 16)                                     \
    X(BF16, "bf16", 16)                                   \
    X(F32, "f32", 32)                                     \
    X(F64, "f64", 64)                                     \
    X(TF32, "tf32", 32)                                   \
    X(F8E4M3, "f8e4m3", 8)                                \
    X(F8E5M2, "f8e5m2", 8)                                \
    X(F6E2M3, "f6e2m3", 6)                                \
    X(F6E3M2, "f6e3m2", 6)                                \
    X(F4E2M1, "f4e2m1", 4)                                \
    X(F4E2M1Unpacked, "f4e2m1_unpacked", 8)               \
    X(F6E2M3Unpacked, "f6e2m3_unpacked", 8)               \
    X(F6E3M2Unpacked, "f6e3m2_unpacked", 8)               \
    X(E8M0, "e8m0", 8)

enum class DType : uint8_t {
#define X(name, spelling, bits) name,
    TILET_DTYPES(X)
#undef X
};

constexpr size_t kDTypeCount = 0
#define X(name, spelling, bits) +1
    TILET_DTYPES(X)
#undef X
    ;

// The language spelling, e.g. "bf16".
std::string_view dtypeName(DType t);
std::optional<DType> dtypeFromName(std::string_view name);
int dtypeBits(DType t);

bool isInteger(DType t);       // int4..uint64 (not bool)
bool isSigned(DType t);        // int4..int64
bool isFloat(DType t);         // every floating-point format, incl. fp8/fp6/fp4/e8m0/tf32
bool isNarrowFloat(DType t);   // f16, bf16 and below: arithmetic is done in f32
// `v` as an f16 or bf16 holds it: rounded to float, then to nearest even, as
// CUDA's __float2half / __float2bfloat16 do (overflow to infinity); none
// for other types.
std::optional<double> halfPrecisionValue(double v, DType t);
// The largest finite value of a narrow float type (f16 65504, e4m3 448, ...).
std::optional<double> largestFinite(DType t);
bool isSubByte(DType t);       // int4, uint4, fp6, fp4: packed
// The shared-memory slot forms of the 4- and 6-bit floats: f4e2m1_unpacked,
// f6e2m3_unpacked, f6e3m2_unpacked.
bool isUnpacked(DType t);
// No element has a byte of its own: the sub-byte types, and the unpacked
// forms (sixteen packed elements in sixteen slots). Their elements are not
// read, written or converted one by one; copies and gemms move them.
bool isPacked(DType t);
// The packed type whose elements a fragment holds one to a register, in a C
// type of its own (f4e2m1: CUDA's __nv_fp4_e2m1). In a fragment they are
// read, written and converted one by one; a copy between the fragment and
// memory packs or unpacks pairs of registers (lower-packed-copies).
bool inRegistersOneByOne(DType t);
// The element type a storage form holds: f4e2m1 for f4e2m1_unpacked (and
// so on), else t.
DType valueType(DType t);
// Packed types are moved in whole bytes: the fewest elements that fill whole
// bytes (2 for 4-bit types, 4 for 6-bit ones; 1 for the others).
int64_t packingUnit(DType t);

// The type arithmetic on two values is done in: C's usual conversions, with
// every narrow float (f16, bf16, fp8, ...) promoted to f32.
DType arithmeticType(DType a, DType b);

} // namespace tilet
