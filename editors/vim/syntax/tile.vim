" Vim syntax file for the tilet tile language (.tl).
" Install: copy syntax/ and ftdetect/ into ~/.vim (docs/editors.md).
if exists("b:current_syntax")
  finish
endif

syntax keyword tileKeyword import target const fn kernel dyn grid threads cluster min_blocks_per_sm as
syntax keyword tileKeyword let var for in if else while ws break continue
syntax keyword tileConstant true false inf
syntax keyword tileLoop serial unroll parallel pipelined vectorized persistent
syntax keyword tileType bool int4 int8 int16 int32 int64 uint4 uint8 uint16 uint32 uint64 f16 bf16 f32 f64 tf32
syntax keyword tileType f8e4m3 f8e5m2 f6e2m3 f6e3m2 f4e2m1 f4e2m1_unpacked f6e2m3_unpacked f6e3m2_unpacked e8m0
syntax keyword tileMemory alloc_shared alloc_fragment alloc_local alloc_tmem alloc_barrier alloc_cluster_barrier alloc_reducer Tensor reshape
syntax keyword tileOp copy tma_copy async_copy copy_cluster gemm gemm_blockscaled clear fill
syntax keyword tileOp reduce_sum reduce_max reduce_min reduce_abssum reduce_absmax atomic_add atomic_addx2 atomic_addx4 atomic_load atomic_store thread_allreduce cumsum
syntax keyword tileOp finalize_reducer im2col dp4a import_source call_extern access_ptr tcgen05_cp_warpx4 tcgen05_sf_warp_transpose
syntax keyword tileSync barrier_wait barrier_arrive tcgen05_mma_arrive fence_proxy_async sync_threads cluster_sync use_swizzle set_max_nreg disable_warp_group_reg_alloc annotate_layout
syntax keyword tileSync pdl_trigger pdl_sync cp_async_commit cp_async_wait wait_wgmma barrier_arrive_expect_tx clc_try_cancel clc_try_cancel_multicast rng_init
syntax keyword tileBuiltin cast reinterpret ceildiv floordiv floormod min max abs exp exp2 log log2 sqrt rsqrt tanh erf sin cos floor
syntax keyword tileBuiltin ceil pow sigmoid clamp block_rank_in_cluster num_sms shfl_sync shfl_xor shfl_down shfl_up __exp __exp2
syntax keyword tileBuiltin clc_is_canceled clc_get_first_ctaid_x clc_get_first_ctaid_y clc_get_first_ctaid_z rng_rand rng_rand_float
" Hint words are argument values (prefer = tma, order = row, set_max_nreg(24, dec));
" elsewhere they are ordinary names (let row = ...).
syntax match tileHint "\%([(,]\s*\h\w*\s*=\s*\)\@<=\<\%(tma\|cp_async\|sync\|evict_normal\|evict_first\|evict_last\|Square\|FullRow\|FullCol\|mma\|wgmma\|tcgen05\|fma\|row\|col\|rowmajor\|colmajor\)\>"
syntax match tileHint "\%(,\s*\)\@<=\<\%(inc\|dec\)\>\%(\s*)\)\@="

" kernel NAME, and parameter names before their dtype
syntax match tileKernelName "\(\<kernel\s\+\)\@<=\h\w*"
syntax match tileParameter "\<\h\w*\ze\s*:\s*\(bool\|u\=int\d\+\|b\=f\d\+\|tf32\|f8e4m3\|f8e5m2\|f6e2m3\|f6e3m2\|f4e2m1\|e8m0\)\>"

syntax match tileNumber "\<0[xX]\x\(_\=\x\)*\>"
syntax match tileNumber "\<0[bB][01]\(_\=[01]\)*\>"
syntax match tileNumber "\<\d\(_\=\d\)*\>"
syntax match tileFloat "\<\d\(_\=\d\)*\.\(\d\(_\=\d\)*\)\=\([eE][+-]\=\d\+\)\="
syntax match tileFloat "\<\d\(_\=\d\)*[eE][+-]\=\d\+\>"
syntax region tileString start=+"+ skip=+\\.+ end=+"+ oneline
syntax keyword tileTodo contained TODO FIXME XXX NOTE
syntax region tileComment start="//" end="$" contains=tileTodo
syntax region tileComment start="/\*" end="\*/" contains=tileTodo

highlight default link tileKeyword Keyword
highlight default link tileConstant Boolean
highlight default link tileLoop Repeat
highlight default link tileType Type
highlight default link tileMemory StorageClass
highlight default link tileOp Function
highlight default link tileSync Special
highlight default link tileBuiltin Function
highlight default link tileHint Constant
highlight default link tileKernelName Function
highlight default link tileParameter Identifier
highlight default link tileNumber Number
highlight default link tileFloat Float
highlight default link tileString String
highlight default link tileComment Comment
highlight default link tileTodo Todo

let b:current_syntax = "tile"
