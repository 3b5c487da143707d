// Catalog.cpp -- see Catalog.h. The entries themselves are generated
// (catalog::all() lives in the build directory's target_tables.cpp).
#include "target/Catalog.h"

#include "support/InternalError.h"

#include <vector>

namespace tilet::catalog {

const Instruction &get(std::string_view name) {
    for (const Instruction &i : all())
        if (name == i.name) return i;
    TILET_INTERNAL_ERROR("no instruction '" << name << "' in the catalog");
}

std::string ptxOperandType(DType t) {
    switch (t) {
    case DType::F32: return "f32";
    case DType::TF32: return "tf32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F64: return "f64";
    case DType::Int32: return "s32";
    case DType::Int8: return "s8";
    case DType::UInt8: return "u8";
    case DType::Int4: return "s4";
    case DType::UInt4: return "u4";
    case DType::F8E4M3: return "e4m3";
    case DType::F8E5M2: return "e5m2";
    case DType::F6E2M3:
    case DType::F6E2M3Unpacked: return "e2m3";
    case DType::F6E3M2:
    case DType::F6E3M2Unpacked: return "e3m2";
    case DType::F4E2M1:
    case DType::F4E2M1Unpacked: return "e2m1";
    default: TILET_INTERNAL_ERROR("no PTX operand type for " << dtypeName(t));
    }
}

namespace {

void replace(std::string &text, const std::string &placeholder, const std::string &value) {
    for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + value.size()))
        text.replace(at, placeholder.size(), value);
}

} // namespace

std::string ptx(const Instruction &inst, int64_t n, int64_t k, DType a, DType b, DType c) {
    std::string text = inst.ptx;
    replace(text, "{n}", std::to_string(n));
    replace(text, "{k}", std::to_string(k));
    // f32 operands are read as tf32.
    replace(text, "{a}", a == DType::F32 ? "tf32" : ptxOperandType(a));
    replace(text, "{b}", b == DType::F32 ? "tf32" : ptxOperandType(b));
    replace(text, "{c}", ptxOperandType(c));
    return text;
}

std::string helperKey(const Instruction &inst, DType operand) {
    std::string key = inst.name;
    if (std::string_view(inst.ptx).find("{a}") != std::string_view::npos) key += "_" + ptxOperandType(operand);
    return key;
}

const char *className(InstrClass c) {
    switch (c) {
    case InstrClass::MmaSync: return "mma.sync";
    case InstrClass::Wgmma: return "wgmma";
    case InstrClass::Tcgen05Mma: return "tcgen05.mma";
    }
    return "?";
}

std::string locationText(uint8_t set) {
    std::vector<std::string> names;
    if (set & kRegisters) names.push_back("registers");
    if (set & kShared) names.push_back("shared memory");
    if (set & kTMem) names.push_back("tensor memory");
    std::string text;
    for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return text;
}

} // namespace tilet::catalog
