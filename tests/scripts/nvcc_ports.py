#!/usr/bin/env python3
"""nvcc tier for TileLang's examples as ported (examples/tilelang/): each is translated for sm_80, sm_90a and sm_100a and its
device code compiled by nvcc (-cubin) with ptxas -v. A port that does not translate for an architecture, or
that spills registers, must be listed below with the reason; anything else
fails, and so does a listed exception that no longer happens (so the list
stays true). docs/tilelang-ports.md gives the same facts.

usage: nvcc_ports.py TILET EXAMPLES_TILELANG_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvcc_check import compile_cu, find_nvcc, local_memory_kernels, run_all, supported_arches  # noqa: E402

ARCHS = ["sm_80", "sm_90a", "sm_100a"]

# (file, arch): why it does not translate there -- the original does not
# support that architecture, or its configuration does not fit it.
NOT_TRANSLATED = {
    ("sm120_nvfp4_blockscaled_gemm.tl", "sm_80"): "block-scaled mma.sync (kind::mxf4nvf4): sm_120a only (the original is an sm_120 example)",
    ("sm120_nvfp4_blockscaled_gemm.tl", "sm_90a"): "block-scaled mma.sync (kind::mxf4nvf4): sm_120a only (the original is an sm_120 example)",
    ("sm120_nvfp4_blockscaled_gemm.tl", "sm_100a"): ("block-scaled mma.sync (kind::mxf4nvf4): sm_120a only; sm_100a scales in tcgen05.mma, "
                                                     "with C in tensor memory, not in a fragment"),
    ("mla_decode.tl", "sm_80"): "237,568 bytes of shared memory; sm_80 has 166,912 (TileLang's configuration targets Hopper)",
    ("mla_decode.tl", "sm_100a"): "237,568 bytes of shared memory; sm_100a has 232,448 (sm_90a: 231,424)",
    ("mla_decode_paged.tl", "sm_80"): "237,568 bytes of shared memory (mla_decode's tiles, pipelined); sm_80 has 166,912",
    ("mla_decode_paged.tl", "sm_100a"): "237,568 bytes of shared memory (mla_decode's tiles, pipelined); sm_100a has 232,448",
    ("gemm_persistent_explicit.tl", "sm_80"): "212,992 bytes of shared memory; sm_80 has 166,912",
    ("gemm_persistent.tl", "sm_80"): "212,992 bytes of shared memory; sm_80 has 166,912",
    ("ws_gemm_copy_1_gemm_0.tl", "sm_80"): "hand-written warp specialization with mbarriers: Hopper and later",
    ("ws_gemm_copy_0_gemm_1.tl", "sm_80"): "hand-written warp specialization with mbarriers: Hopper and later",
    ("ws_gemm_barrierpipe_stage2.tl", "sm_80"): "hand-written warp specialization with mbarriers: Hopper and later",
    ("ws_gemm_softpipe_stage2.tl", "sm_80"): "hand-written warp specialization with mbarriers: Hopper and later",
    ("ws_flashmla.tl", "sm_80"): "hand-written warp specialization with mbarriers, and T.wgmma_gemm (inst = wgmma): Hopper only",
    ("ws_flashmla.tl", "sm_100a"): "T.wgmma_gemm (inst = wgmma, never a fallback): wgmma is Hopper's; the original is an sm_90 example",
    ("vertical_slash_sparse_attn.tl", "sm_80"): "hand-written warp specialization with mbarriers and setmaxnreg: Hopper and later",
    ("gemm_tcgen5mma.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_tcgen5mma.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_fp8_sm100.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_fp8_sm100.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("mha_fwd_bshd_sm100.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gqa_fwd_bshd_sm100.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gqa_fwd_bshd_sm100.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("mha_fwd_bshd_sm100.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_tcgen5mma_ws.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_tcgen5mma_ws.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_tcgen5mma_ws_persistent.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_tcgen5mma_ws_persistent_streamk.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_tcgen5mma_ws_persistent_streamk.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("aws_gemm.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("aws_gemm.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_tcgen5mma_ws_persistent.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_tcgen5mma_ws_clc.tl", "sm_80"): "tensor memory, tcgen05 and cluster launch control: Blackwell only (the original is an sm_100 example)",
    ("gemm_tcgen5mma_ws_clc.tl", "sm_90a"): "tensor memory, tcgen05 and cluster launch control: Blackwell only (the original is an sm_100 example)",
    ("gemm_mxfp8_blockscaled_1d1d.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gemm_mxfp8_blockscaled_1d1d.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("grouped_gemm_mxfp8_blockscaled_1d1d.tl", "sm_80"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("grouped_gemm_mxfp8_blockscaled_1d1d.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("gqa_bwd_tma_reduce.tl", "sm_80"): "TMA reductions (atomic_add with use_tma = true): Hopper and later (the original asserts compute capability >= 9.0)",
    ("gqa_bwd_tma_reduce_varlen.tl", "sm_80"): "TMA reductions (atomic_add with use_tma = true): Hopper and later (the original asserts compute capability >= 9.0)",
    ("fp8_fp4_gemm_1d1d_sm100.tl", "sm_80"): "tensor memory and tcgen05, in clusters of a CTA pair: Blackwell only (the original is an sm_100 example)",
    ("fp8_fp4_gemm_1d1d_sm100.tl", "sm_90a"): "tensor memory and tcgen05: Blackwell only (the original is an sm_100 example)",
    ("sparse_mla_bwd.tl", "sm_80"): "bwd needs 221,184 bytes of shared memory; sm_80 has 166,912 (TileLang's configuration does not fit it either)",
    ("sparse_mla_fwd.tl", "sm_80"): ("231,424 bytes of shared memory (the pipelined KV and K_tail gathers keep 2 versions of their tiles); "
                                     "sm_80 has 166,912"),
    ("dsa_sparse_mla_fwd.tl", "sm_80"): ("231,424 bytes of shared memory (the pipelined KV and K_tail gathers keep 2 versions of their "
                                         "tiles); sm_80 has 166,912"),
    ("sparse_attn_fwd_sm90.tl", "sm_80"): ("206,976 bytes of shared memory (the pipelined KV gather keeps 2 versions of its tile); "
                                           "sm_80 has 166,912"),
    ("mla_decode_kv_fp8.tl", "sm_80"): "237,568 bytes of shared memory (mla_decode's tiles and the fp8 KV tiles); sm_80 has 166,912",
    ("mla_decode_kv_fp8.tl", "sm_100a"): "237,568 bytes of shared memory (mla_decode's tiles and the fp8 KV tiles); sm_100a has 232,448",
}

# (file, arch): why a kernel keeps register arrays in local memory (its stack
# frame holds more than its spills) -- an index the compiler cannot resolve.
LOCAL_MEMORY = {}
for _arch in ARCHS:
    LOCAL_MEMORY[("block_sparse_attn_tilelang.tl", _arch)] = "block_mask[k], a fragment indexed by the pipelined loop's k, as in the original"
    LOCAL_MEMORY[("tilelang_block_sparse_attn.tl", _arch)] = "block_mask[k], a fragment indexed by the pipelined loop's k, as in the original"
    LOCAL_MEMORY[("gemv_alloc_reducer.tl", _arch)] = ("o_reducer with replication = all, as in the original: every thread's copy of "
                                                      "all 128 rows, each thread updating the rows of its iterations")

LOCAL_MEMORY[("sparse_mla_bwd.tl", "sm_100a")] = ("bwd at the 255-register cap on 256 threads (the dQ [64, 512] and dKV [32, 512] "
                                                  "accumulators in registers): ptxas's frame holds 144 bytes beside its spills")
LOCAL_MEMORY[("mha_inference.tl", "sm_100a")] = "the combine kernel's lse_local[k, i], indexed by the pipelined loop's k, as in the original"

# (file, arch): why it spills -- the original's own configuration.
SPILLS = {
    ("sparse_mla_bwd.tl", "sm_90a"): ("the original's bwd on 256 threads with the dQ [64, 512] and dKV [32, 512] f32 accumulators both in "
                                      "registers: 460 bytes"),
    ("sparse_mla_bwd.tl", "sm_100a"): "the same accumulators on mma.sync fragments: 288 bytes",
    ("mha_inference.tl", "sm_90a"): ("the consumer at the 240-register cap: 4 bytes, since pin-wgmma-registers makes the zeroed acc_s "
                                     "exist before the wgmma fence (unpinned, ptxas serialized the wgmmas instead: C7519)"),
    ("mha_bwd_bshd_sm100.tl", "sm_80"): ("an sm_100 example on mma.sync: flash_bwd_ts's dq, dk and dv accumulators in registers on "
                                         "256 threads: 20 bytes"),
    ("mha_bwd_bshd_sm100.tl", "sm_100a"): ("flash_bwd_ts (variant 'ts', 256 threads) keeps its dq, dk and dv accumulators in registers "
                                           "(the original's gemms on register accumulators): 316 bytes"),
    ("dequant_gemm_fp4_hopper.tl", "sm_90a"): ("two 128x128 f16 fragments (the dequantized tile and its previous-stage copy, the gemm's A) "
                                               "beside the 128x128 f32 accumulator on the consumers: 104 bytes"),
    ("dequant_gemm_fp4_hopper.tl", "sm_100a"): "the same fragments as at sm_90a: 8 bytes",
    ("ws_flashmla.tl", "sm_90a"): ("the original's two 128-thread warp groups each hold half of O (64 x 256 f32, 128 registers a thread) beside "
                                   "S, P, its f16 cast and Q_pe in registers, at 255 registers: 712 bytes"),
    ("sparse_mla_fwd.tl", "sm_90a"): ("the original's 64-head block on 256 threads: acc_o (64 x 512 f32, 128 registers a thread) beside the "
                                      "scores and softmax rows, and the KV gathers' cp.async addresses (issued an iteration ahead): 456 bytes"),
    ("gemm_fp8_2xacc.tl", "sm_90a"): "two 128x128 f32 accumulators on 128 threads: 256 registers each before anything else",
    ("gemm_fp8_2xacc.tl", "sm_100a"): "two 128x128 f32 accumulators on 128 threads, and mma.sync until tcgen05 is lowered",
    ("gemm_fp8_2xacc.tl", "sm_80"): "two 128x128 f32 accumulators on 128 threads (FMA: no fp8 tensor cores on sm_80)",
    ("gemm_fp8.tl", "sm_100a"): "mma.sync with register accumulators until tcgen05 is lowered (issue 13)",
    ("mha_inference.tl", "sm_100a"): ("flashattn_mha_inference on mma.sync at the consumers' 240 registers (setmaxnreg): 80 bytes since "
                                      "the ldmatrix addresses read ks / 4 and ks % 4 for (ks * 16 + ...) / 64 and % 64 (simplify's remainder "
                                      "rule), which moved ptxas's allocation; before, 0"),
    ("mha_inference.tl", "sm_80"): "split kernel: a 128x128 f32 output accumulator and 128x64 scores on 128 threads (192 registers of accumulators)",
    ("mha_bwd_bhsd.tl", "sm_80"): "flash_bwd holds five 64x64 f32 fragments (qkT, dsT, dv, dk, dq) and two f16 casts on 128 threads: 192 registers of fragments",
    ("mha_bwd_bshd.tl", "sm_80"): "mha_bwd_bhsd's flash_bwd on [batch, seq, heads, dim] tensors: the same fragments",
    ("gemv_alloc_reducer.tl", "sm_90a"): "replication = all: a 128-element f32 reducer in every thread (128 registers) beside a 128x128 f16 tile on 256 threads",
    ("gqa_bwd_tma_reduce.tl", "sm_100a"): ("flash_bwd on mma.sync until tcgen05 is lowered: dk (128x192) and dv (128x128) f32 accumulators "
                                           "on 256 threads take 160 registers each thread before qkT, dsT and dq"),
    ("grouped_gemm_mxfp8_blockscaled_1d1d.tl", "sm_100a"): ("the epilogue reads the whole 128x256 f32 accumulator on 128 threads (256 "
                                                             "registers, the spill warning) and keeps it through the branch on the tile's rows: 152 bytes, "
                                                             "200 in the persistent kernel"),
    ("gqa_bwd.tl", "sm_80"): ("flash_bwd on mma.sync: dk (128x192) and dv (128x128) f32 accumulators on 256 threads take 160 "
                              "registers each thread before qkT, dsT and dq"),
    ("gqa_bwd.tl", "sm_100a"): ("flash_bwd on mma.sync until tcgen05 is lowered: dk (128x192) and dv (128x128) f32 accumulators "
                                "on 256 threads take 160 registers each thread before qkT, dsT and dq"),
    ("mla_decode_paged.tl", "sm_90a"): ("main_split keeps acc_s_cast (64x64 f16, the original's P as the wgmma A operand from registers) "
                                        "beside the 64x512 f32 acc_o on 256 threads: 140 bytes; main_no_split does not spill"),
    ("mha_fwd_bshd.tl", "sm_80"): "128x128 tiles on 128 threads: acc_s and acc_o take 128 f32 registers each",
    ("mha_fwd_bshd.tl", "sm_90a"): "128x128 tiles on 128 threads: acc_s and acc_o take 128 f32 registers each",
    ("mha_fwd_bshd.tl", "sm_100a"): "128x128 tiles on 128 threads: acc_s and acc_o take 128 f32 registers each",
    ("mha_fwd_bshd_sm100.tl", "sm_100a"): ("variant 'ss', 128x128 tiles on 128 threads: S_reg and O_reg (128 f32 registers each) live together "
                                           "through the softmax: 256 registers, over the consumers' 240 (setmaxnreg); so do flashattn_wasp's, on "
                                           "its softmax warp group (255 registers); the 'ts' kernels, on 256 threads, do not spill"),
    ("gqa_fwd_bshd_sm100.tl", "sm_100a"): "mha_fwd_bshd_sm100's kernels with grouped key/value heads: the same registers, the same spills",
    ("gqa_bwd_bshd_sm100.tl", "sm_80"): "mha_bwd_bshd_sm100's kernels with grouped key/value heads on mma.sync: flash_bwd at 255 registers, 4 bytes",
    ("gqa_bwd_bshd_sm100.tl", "sm_100a"): ("mha_bwd_bshd_sm100's flash_bwd_ts with grouped key/value heads: its dq, dk and dv accumulators in "
                                           "registers at the consumers' 168: 316 bytes, as there"),
    ("gqa_sink_bwd_bhsd.tl", "sm_80"): ("flash_bwd with the sm_90 tiles of get_bwd_configs() (block_M 128, 256 threads) on mma.sync: "
                                        "28 bytes; sm_80's own tiles (64, 128 threads) do not spill"),
    ("fp8_lighting_indexer.tl", "sm_90a"): ("mqa_attn_return_logits on 512 threads (128 registers a thread): the 256x128 f32 scores, "
                                            "their weights and the key scales beside the wgmma's operands: 28 bytes"),
    ("fp8_lighting_indexer.tl", "sm_100a"): "mqa_attn_return_logits on 512 threads (128 registers a thread), on mma.sync: 8 bytes",
    ("gqa_bwd_tma_reduce_varlen.tl", "sm_100a"): ("gqa_bwd_tma_reduce.tl's flash_bwd over packed sequences, on mma.sync until tcgen05 "
                                                  "is lowered: its dk and dv accumulators in registers, 44 bytes"),
    ("gqa_sink_bwd_varlen.tl", "sm_80"): ("flash_bwd with the sm_90 tiles of get_bwd_configs() (block_M 128, 256 threads) on mma.sync: "
                                          "20 bytes, as gqa_sink_bwd_bhsd.tl's 28"),
    ("mhc_pre.tl", "sm_90a"): ("the warp-specialized loop's two tiles on a full/empty barrier pair each (its body's statements are "
                               "flat since two allocations no longer nest them), which moved ptxas's allocation of the 128-thread "
                               "consumer: 48 bytes; before, 0"),
    ("kda_chunk_bwd_dqkwg.tl", "sm_90a"): ("the prim_func's default of one warp (32 threads) holding the 64x32 f32 dq, dk and dw "
                                           "accumulators (64 registers each) beside the gate rows: 100 bytes"),
    ("kda_chunk_bwd_dqkwg.tl", "sm_100a"): "the same one-warp accumulators: 8 bytes",
    ("dsa_sparse_mla_fwd.tl", "sm_90a"): ("the original's 64-head block on 256 threads: acc_o (64 x 512 f32, 128 registers a thread) beside "
                                          "the scores and softmax rows, as in sparse_mla_fwd.tl: 396 bytes"),
    ("dsa_sparse_mla_fwd.tl", "sm_100a"): ("the same accumulators on mma.sync fragments at the 255-register cap, beside the KV gathers' "
                                           "cp.async addresses issued an iteration ahead: 16 bytes (0 while the gathers ran in order)"),
    ("aws_gemm.tl", "sm_100a"): ("gemm_ws's TMA and MMA warps under the original's set_max_nreg(40, 0): their loops (the tile "
                                 "scheduler's index arithmetic written out per role) need more than 40 registers: 36 bytes; without "
                                 "the request, 80 registers and no spills; gemm_ does not spill"),
    ("sparse_attn_fwd_sm90.tl", "sm_90a"): ("the original's 64-head block on 256 threads: acc_o (64 x 512 f32, 128 registers a thread) beside "
                                            "the scores and softmax rows, and the pipelined KV gather's addresses: 268 bytes"),
}


def declared_target(path):
    """The architecture a port's `target ARCH;` line names ([] without one)."""
    m = re.search(r"^target\s+(sm_\w+)\s*;", open(path).read(), re.M)
    return [m.group(1)] if m else []


def one(tilet, nvcc, arches, path, arch, tmp):
    name = os.path.basename(path)
    base = os.path.join(tmp, f"{name[:-3]}_{arch}")
    r = subprocess.run([tilet, path, "--arch", arch, "-o", base + ".cu", "--color=never"], capture_output=True, text=True)
    listed = NOT_TRANSLATED.get((name, arch))
    if r.returncode != 0:
        if listed:
            return [], f"{name} {arch}: not translated ({listed})"
        return [f"FAIL {name} {arch}: tilet failed\n{r.stderr}"], None
    if listed:
        return [f"FAIL {name} {arch}: translates now; remove it from NOT_TRANSLATED"], None
    status, detail, worst = compile_cu(nvcc, arches, base + ".cu", base + ".cubin", device_only=True)
    if status == "skip":
        return [], f"{name} {arch}: skipped, {detail}"
    if status == "fail":
        return [f"FAIL {name} {arch}: {detail}"], None
    problems, notes = [], []
    local = local_memory_kernels(detail)
    local_why = LOCAL_MEMORY.get((name, arch))
    if local and not local_why:
        problems += [f"FAIL {name} {arch}: {k} keeps {b} bytes of registers in local memory" for k, b in sorted(local.items())]
    if not local and local_why:
        problems.append(f"FAIL {name} {arch}: no longer uses local memory; remove it from LOCAL_MEMORY")
    if local and local_why:
        notes.append(f"{sum(local.values())} bytes of local memory ({local_why})")
    why = SPILLS.get((name, arch))
    if worst and not why:
        problems.append(f"FAIL {name} {arch}: {worst} bytes of spill stores")
    if not worst and why:
        problems.append(f"FAIL {name} {arch}: no longer spills; remove it from SPILLS")
    if worst and why:
        notes.insert(0, f"{worst} bytes of spill stores ({why})")
    if problems:
        return problems, None
    return [], f"{name} {arch}: ok" + "".join(", " + n for n in notes)


def main():
    tilet, directory = sys.argv[1], sys.argv[2]
    nvcc = find_nvcc()
    if not nvcc:
        print("nvcc not found: skipped")
        return 77
    arches = supported_arches(nvcc)
    ports = sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".tl"))
    def task(pair, tmp):
        problems, note = one(tilet, nvcc, arches, pair[0], pair[1], tmp)
        return problems, [note] if note else []
    # Every port for each of ARCHS, and a port whose `target` line names another architecture for that one too.
    pairs = [(p, a) for p in ports for a in ARCHS + [t for t in declared_target(p) if t not in ARCHS]]
    problems, _ = run_all(task, pairs)
    print(f"nvcc-ports: {len(pairs)} translation(s), {len(problems)} failure(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
