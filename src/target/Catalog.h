// Catalog.h -- the tensor-core instructions tilet knows, as data: generated
// at build time from templates/instructions.yaml (which documents every
// field). select-gemm-inst chooses entries, the printer spells their
// helpers, the emulator models them, and their requirements name the
// targets that have them.
#pragma once

#include "ir/DType.h"
#include "target/Target.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace tilet {

enum class InstrClass : uint8_t { MmaSync, Wgmma, Tcgen05Mma };

// Where an instruction reads or keeps an operand: a set of these bits.
enum Location : uint8_t { kRegisters = 1, kShared = 2, kTMem = 4 };

// Register fragment layouts (src/ir/MmaLayout.h names them).
enum class FragmentLayout : uint8_t { MmaM16N8, MmaM8N8, MmaM8N8K4, MmaM8N8K16, WgmmaM64, TMem };

// The values a shape field allows: lo, lo + step, ..., hi (a number, or a
// list in arithmetic progression, or "LO..HI/STEP" in the YAML).
struct ExtentRange {
    int32_t lo = 0, hi = 0, step = 1;
    bool contains(int64_t v) const { return v >= lo && v <= hi && (v - lo) % step == 0; }
};

struct Instruction {
    const char *name;             // the key of its helper: "mma_m16n8k16_f32_f16"
    InstrClass cls;
    Feature feature;              // what a target needs to have it
    ExtentRange m, n, k;
    uint32_t a, b, c;             // dtype sets: bit (1 << DType)
    uint8_t aFrom, bFrom, cIn;    // Location sets
    bool aKMajor, bKMajor;        // the operand must be K-major
    int32_t warpRows, warpCols;   // C per warp (mma_sync)
    FragmentLayout layout;
    const char *ptx;
    uint32_t scale;               // block-scaled: the scale factors' dtype set (0: not block-scaled)
    int32_t scaleVec;             // block-scaled: K elements per scale factor
    const char *note;             // "" or an extra comment line for its helper
    bool subBytePadded;           // reads 4- and 6-bit operands one to a byte, not packed as tilet stores them
    // tcgen05.mma: instruction-descriptor codes by dtype (-1: none)
    std::array<int8_t, kDTypeCount> aCodes, cCodes;
    // tcgen05.mma: 1, issued for the CTA; 2, for the CTA pair of a cluster
    // (M counts the pair's rows, half in each CTA's tensor memory)
    int32_t ctaGroup;

    bool takes(uint32_t set, DType t) const { return set & (1u << static_cast<unsigned>(t)); }
    bool fits(DType aType, DType bType, DType cType) const { return takes(a, aType) && takes(b, bType) && takes(c, cType); }
    bool blockScaled() const { return scale != 0; }
};

namespace catalog {

// Every entry, in the order of templates/instructions.yaml.
std::span<const Instruction> all();
// The entry named `name`; an internal error if there is none.
const Instruction &get(std::string_view name);

// PTX's name of an MMA operand or accumulator type: f16, bf16, f32, s32,
// s8, e4m3, e2m1, ... (f32 is f32 here; operands read it as tf32).
std::string ptxOperandType(DType t);

// The PTX instruction of `inst` with its placeholders ({n} {k} {a} {b} {c})
// filled in.
std::string ptx(const Instruction &inst, int64_t n, int64_t k, DType a, DType b, DType c);

const char *className(InstrClass c);
// The name of the helper that issues `inst` for operands of type `operand`:
// the entry's key, with the operand type where its PTX leaves that open
// ("mma_m16n8k32_f32_mxf8f6f4_e4m3").
std::string helperKey(const Instruction &inst, DType operand);
// "registers", "shared or tmem".
std::string locationText(uint8_t set);

} // namespace catalog
} // namespace tilet
