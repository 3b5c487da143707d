// TileLangSpellings.cpp -- see TileLangSpellings.h. The TileLang names are
// those of TileLang's language reference (tilelang.language) and its examples.
#include "frontend/TileLangSpellings.h"

#include <cctype>

namespace tilet {

namespace {

struct Spelling {
    std::string_view tilelang, tilet;
};

template <size_t N>
std::optional<std::string> lookUp(const Spelling (&table)[N], std::string_view name) {
    for (const Spelling &s : table) {
        if (s.tilelang == name) return std::string(s.tilet);
    }
    return std::nullopt;
}

// T.<name> whose tilet form is not the bare name.
constexpr Spelling kTForms[] = {
    {"Kernel", "kernel NAME(PARAMS) grid(X, Y) as (bx, by) threads(N) { ... }"},
    {"Parallel", "for i, j in parallel(M, N) { ... }"},
    {"Pipelined", "for k in pipelined(N, stages = S) { ... }"},
    {"serial", "for k in serial(N) { ... }"},
    {"Serial", "for k in serial(N) { ... }"},
    {"unroll", "for k in unroll(N) { ... }"},
    {"vectorized", "for v in vectorized(N) { ... }"},
    {"Persistent", "for bx, by in persistent([M_TILES, N_TILES], WAVE, INDEX) { ... }"},
    {"get_thread_binding", "threads(X, Y) as (tx, ty) in the kernel header"},
    {"Unroll", "for k in unroll(N) { ... }"},
    {"if_then_else", "cond ? a : b"},
    {"ceildiv", "ceildiv(a, b)"},
    {"floordiv", "floordiv(a, b)"},
    {"floormod", "floormod(a, b)"},
    {"Tensor", "NAME: DTYPE[D0, D1] in the kernel's parameter list; a view of a tensor x: let v = Tensor([D0, D1], DTYPE, x);"},
    {"Buffer", "NAME: DTYPE[D0, D1] in the kernel's parameter list"},
    {"alloc_var", "var NAME: DTYPE = VALUE;"},
    {"symbolic", "dyn NAME as a tensor dimension: A: f16[dyn m, K]"},
    {"dynamic", "dyn NAME as a tensor dimension: A: f16[dyn m, K]"},
    {"sync_threads", "sync_threads() or sync_threads(id, threads) (tilet inserts the barriers accesses need itself)"},
    {"tvm_warp_shuffle", "shfl_sync(value, lane, width = W) (the full warp's mask)"},
    {"annotate_layout", "annotate_layout(buffer, swizzle) for a shared buffer's bank swizzle"},
    {"ptx_commit_group", "cp_async_commit()"},
    {"ptx_wait_group", "cp_async_wait(n)"},
    {"mbarrier_wait_parity", "barrier_wait(b[i], parity)"},
    {"mbarrier_arrive", "barrier_arrive(b[i]) (barrier_arrive(b[i], rank) on a block of the cluster)"},
    {"mbarrier_arrive_expect_tx", "barrier_arrive_expect_tx(b[i], bytes)"},
    {"tcgen05_gemm", "gemm(A_s, B_s, C_tmem, mbar = b, inst = tcgen05)"},
};

constexpr Spelling kDtypes[] = {
    {"float16", "f16"},       {"half", "f16"},          {"bfloat16", "bf16"},      {"float32", "f32"},
    {"float", "f32"},         {"float64", "f64"},       {"double", "f64"},         {"float8_e4m3", "f8e4m3"},
    {"float8_e4m3fn", "f8e4m3"}, {"float8_e5m2", "f8e5m2"}, {"float6_e2m3fn", "f6e2m3"}, {"float6_e3m2fn", "f6e3m2"},
    {"float4_e2m1fn", "f4e2m1"}, {"float4_e2m1_unpacked", "f4e2m1_unpacked"}, {"float8_e8m0fnu", "e8m0"}, {"tfloat32", "tf32"},
};

struct KeywordSpelling {
    std::string_view callee, tilelang, tilet;
};

constexpr KeywordSpelling kKeywords[] = {
    {"pipelined", "num_stages", "stages"},
};

} // namespace

std::optional<std::string> tiletFormOfT(std::string_view name) {
    if (auto dtype = tiletDtypeOf(name)) return *dtype;
    return lookUp(kTForms, name);
}

std::optional<std::string> tiletDtypeOf(std::string_view name) { return lookUp(kDtypes, name); }

std::optional<std::string> tiletKeywordOf(std::string_view callee, std::string_view keyword) {
    for (const KeywordSpelling &k : kKeywords) {
        if (k.callee == callee && k.tilelang == keyword) return std::string(k.tilet);
    }
    return std::nullopt;
}

bool looksLikeFloorDivision(std::string_view rest) {
    size_t i = rest.find_first_not_of(" \t");
    if (i == std::string_view::npos || rest.substr(i, 2) != "//") return false;
    size_t j = rest.find_first_not_of(" \t", i + 2);
    if (j == std::string_view::npos) return false;
    char c = rest[j];
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '(';
}

const char *const kFloorDivisionNote =
    "'//' starts a comment in tilet, so the rest of the line was skipped; TileLang's floor division 'a // b' is "
    "'floordiv(a, b)' ('a / b' truncates, which differs only for negative operands)";

} // namespace tilet
