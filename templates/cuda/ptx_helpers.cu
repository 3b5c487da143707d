// ptx_helpers.cu -- the inline-PTX helpers a generated kernel may call.
//
// The printer copies the sections a kernel uses, in this order, between the
// "PTX helpers" markers of the .cu. Each section starts with "// @helper KEY"
// and ends at the next "// @helper" or the end of the file. Operand
// fragments are passed as pointers to the kernel's register arrays and moved
// with memcpy, which nvcc turns into register moves (no aliasing casts).
// @helper ldmatrix_x1
// ldmatrix: one 8x8 matrix of 16-bit elements; lanes 0-7 give its row addresses.
__device__ __forceinline__ void tilet_ldmatrix_x1(void *dst, const void *row)
{
    unsigned r[1];
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(row))));
    memcpy(dst, r, sizeof(r));
}
// @helper ldmatrix_x2
// ldmatrix: two 8x8 matrices; lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void tilet_ldmatrix_x2(void *dst, const void *row)
{
    unsigned r[2];
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(row))));
    memcpy(dst, r, sizeof(r));
}
// @helper ldmatrix_x4
// ldmatrix: four 8x8 matrices; lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void tilet_ldmatrix_x4(void *dst, const void *row)
{
    unsigned r[4];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(row))));
    memcpy(dst, r, sizeof(r));
}
// @helper ldmatrix_x1_trans
// ldmatrix.trans: one 8x8 matrix of 16-bit elements, transposed on the way.
__device__ __forceinline__ void tilet_ldmatrix_x1_trans(void *dst, const void *row)
{
    unsigned r[1];
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(row))));
    memcpy(dst, r, sizeof(r));
}
// @helper ldmatrix_x2_trans
// ldmatrix.trans: two 8x8 matrices, each transposed.
__device__ __forceinline__ void tilet_ldmatrix_x2_trans(void *dst, const void *row)
{
    unsigned r[2];
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(row))));
    memcpy(dst, r, sizeof(r));
}
// @helper ldmatrix_x4_trans
// ldmatrix.trans: four 8x8 matrices, each transposed.
__device__ __forceinline__ void tilet_ldmatrix_x4_trans(void *dst, const void *row)
{
    unsigned r[4];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(row))));
    memcpy(dst, r, sizeof(r));
}
// @helper stmatrix_x1
// stmatrix: one 8x8 matrix of 16-bit elements from the warp's registers; lanes 0-7 give its row addresses.
__device__ __forceinline__ void tilet_stmatrix_x1(void *row, const void *src)
{
    unsigned r[1];
    memcpy(r, src, sizeof(r));
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};\n"
                 :
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(row))), "r"(r[0])
                 : "memory");
}
// @helper stmatrix_x2
// stmatrix: two 8x8 matrices; lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void tilet_stmatrix_x2(void *row, const void *src)
{
    unsigned r[2];
    memcpy(r, src, sizeof(r));
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n"
                 :
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(row))), "r"(r[0]), "r"(r[1])
                 : "memory");
}
// @helper stmatrix_x4
// stmatrix: four 8x8 matrices; lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void tilet_stmatrix_x4(void *row, const void *src)
{
    unsigned r[4];
    memcpy(r, src, sizeof(r));
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(row))), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}
// @helper bitcast
// The bits of x read as a To of the same size (TileLang's T.reinterpret).
template <class To, class From> __device__ __forceinline__ To tilet_bitcast(From x)
{
    static_assert(sizeof(To) == sizeof(From), "reinterpret keeps the width");
    To y;
    memcpy(&y, &x, sizeof(To));
    return y;
}
// @helper ex2_approx_ftz
// 2^x with the special function unit's approximation (PTX ISA ex2.approx.ftz.f32:
// subnormal inputs and results flushed to zero), FlashAttention-3's exponential.
__device__ __forceinline__ float tilet_ex2_approx_ftz(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
// @helper dp4a_s8_s8
// dp4a: c + the dot product of the four signed bytes at a and the four signed bytes at b
// (read with memcpy: any alignment, and register arrays stay in registers).
__device__ __forceinline__ int tilet_dp4a_s8_s8(const void *a, const void *b, int c)
{
    unsigned x, y;
    int d;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(y), "r"(c));
    return d;
}
// @helper dp4a_s8_u8
// dp4a: c + the dot product of the four signed bytes at a and the four unsigned bytes at b
// (read with memcpy: any alignment, and register arrays stay in registers).
__device__ __forceinline__ int tilet_dp4a_s8_u8(const void *a, const void *b, int c)
{
    unsigned x, y;
    int d;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    asm("dp4a.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(y), "r"(c));
    return d;
}
// @helper dp4a_u8_s8
// dp4a: c + the dot product of the four unsigned bytes at a and the four signed bytes at b
// (read with memcpy: any alignment, and register arrays stay in registers).
__device__ __forceinline__ int tilet_dp4a_u8_s8(const void *a, const void *b, int c)
{
    unsigned x, y;
    int d;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(y), "r"(c));
    return d;
}
// @helper dp4a_u8_u8
// dp4a: c + the dot product of the four unsigned bytes at a and the four unsigned bytes at b
// (read with memcpy: any alignment, and register arrays stay in registers).
__device__ __forceinline__ unsigned tilet_dp4a_u8_u8(const void *a, const void *b, unsigned c)
{
    unsigned x, y;
    unsigned d;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    asm("dp4a.u32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(x), "r"(y), "r"(c));
    return d;
}
// @helper cp_async_4
// cp.async of 4 bytes global -> shared (through L1); zeros when !valid.
__device__ __forceinline__ void tilet_cp_async_4(void *dst, const void *src, bool valid)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
                 "l"(src), "r"(valid ? 4 : 0));
}
// @helper cp_async_8
// cp.async of 8 bytes global -> shared (through L1); zeros when !valid.
__device__ __forceinline__ void tilet_cp_async_8(void *dst, const void *src, bool valid)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
                 "l"(src), "r"(valid ? 8 : 0));
}
// @helper cp_async_16
// cp.async of 16 bytes global -> shared, bypassing L1 (.cg); zeros when !valid.
__device__ __forceinline__ void tilet_cp_async_16(void *dst, const void *src, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
                 "l"(src), "r"(valid ? 16 : 0));
}
// @helper cp_async_commit
// Closes this thread's group of outstanding cp.async copies.
__device__ __forceinline__ void tilet_cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// @helper cp_async_wait
// Waits until at most N of this thread's committed cp.async groups are pending.
template <int N> __device__ __forceinline__ void tilet_cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// @helper pdl_trigger
// Programmatic dependent launch: the next kernel in the stream may start.
__device__ __forceinline__ void tilet_pdl_trigger()
{
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}
// @helper pdl_sync
// Programmatic dependent launch: wait until the grids this one depends on have
// completed and their memory is visible.
__device__ __forceinline__ void tilet_pdl_sync()
{
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
}
// @helper cluster_sync
// Barrier of all threads of the thread block cluster (release / acquire).
__device__ __forceinline__ void tilet_cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// @helper cluster_ctarank
// This block's rank in its cluster.
__device__ __forceinline__ int tilet_cluster_ctarank()
{
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    return static_cast<int>(rank);
}
// @helper setmaxnreg_inc
// Raises this warp group's register budget to N per thread.
template <int N> __device__ __forceinline__ void tilet_setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
// @helper setmaxnreg_dec
// Lowers this warp group's register budget to N per thread.
template <int N> __device__ __forceinline__ void tilet_setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
// @helper named_barrier
// Barrier of the `threads` threads (whole warps) that use named barrier `id`.
__device__ __forceinline__ void tilet_named_barrier(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// @helper issue_turn_wait
// Ping-pong of two consumer warp groups (FlashAttention-3's warp-scheduler
// barrier): waits on named barrier `id` until the other warp group hands
// this one its turn to issue tensor-core work. `threads`: both warp groups.
__device__ __forceinline__ void tilet_issue_turn_wait(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// @helper issue_turn_pass
// Hands the turn to the warp group that waits on named barrier `id`: counts
// this warp group's threads there and goes on without waiting.
__device__ __forceinline__ void tilet_issue_turn_pass(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// @helper mbarrier_init
// mbarrier.init: a phase completes after `count` arrivals.
__device__ __forceinline__ void tilet_mbarrier_init(unsigned long long *bar, int count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(count)
                 : "memory");
}
// Makes mbarrier initialisations visible to the async proxy (TMA) and the
// cluster (sm_90); before sm_90 the barrier that follows suffices.
__device__ __forceinline__ void tilet_fence_barrier_init()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
// @helper mbarrier_arrive
// One arrival of the calling thread on the mbarrier's current phase.
__device__ __forceinline__ void tilet_mbarrier_arrive(unsigned long long *bar)
{
    asm volatile("mbarrier.arrive.shared.b64 _, [%0];\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))) : "memory");
}
// @helper mbarrier_wait
// Waits until the phase with parity `parity` (0 or 1) of the mbarrier has completed.
__device__ __forceinline__ void tilet_mbarrier_wait(unsigned long long *bar, int parity)
{
    unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    unsigned done = 0;
    while (!done) {
#if __CUDA_ARCH__ >= 900
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(addr), "r"(parity)
                     : "memory");
#else
        asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(addr), "r"(parity)
                     : "memory");
#endif
    }
}
// @helper mbarrier_wait_cluster
// The same for an mbarrier that threads of other blocks of the cluster
// arrive on: the wait acquires at cluster scope, so the writes those threads
// released (mbarrier.arrive.release.cluster) are visible after it (PTX ISA,
// memory consistency model: both sides of a synchronisation must include
// each other in their scope).
__device__ __forceinline__ void tilet_mbarrier_wait_cluster(unsigned long long *bar, int parity)
{
    unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    unsigned done = 0;
    while (!done) {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(addr), "r"(parity)
                     : "memory");
    }
}
// @helper tma_load_1d_multicast
// TMA multicast: the box at (c0, ...) of the tensor map into the same shared
// memory offset of every block of the cluster whose rank bit is set in
// `mask`, completing its bytes on each one's mbarrier at the offset of `bar`.
__device__ __forceinline__ void tilet_tma_load_1d_multicast(void *dst, const CUtensorMap *map, unsigned long long *bar, int mask, int c0)
{
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4}], [%2], %3;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "h"(static_cast<unsigned short>(mask)), "r"(c0)
                 : "memory");
}
// @helper tma_load_2d_multicast
// TMA multicast: the box at (c0, ...) of the tensor map into the same shared
// memory offset of every block of the cluster whose rank bit is set in
// `mask`, completing its bytes on each one's mbarrier at the offset of `bar`.
__device__ __forceinline__ void tilet_tma_load_2d_multicast(void *dst, const CUtensorMap *map, unsigned long long *bar, int mask, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "h"(static_cast<unsigned short>(mask)), "r"(c0), "r"(c1)
                 : "memory");
}
// @helper tma_load_3d_multicast
// TMA multicast: the box at (c0, ...) of the tensor map into the same shared
// memory offset of every block of the cluster whose rank bit is set in
// `mask`, completing its bytes on each one's mbarrier at the offset of `bar`.
__device__ __forceinline__ void tilet_tma_load_3d_multicast(void *dst, const CUtensorMap *map, unsigned long long *bar, int mask, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5, %6}], [%2], %3;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "h"(static_cast<unsigned short>(mask)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
// @helper tma_load_4d_multicast
// TMA multicast: the box at (c0, ...) of the tensor map into the same shared
// memory offset of every block of the cluster whose rank bit is set in
// `mask`, completing its bytes on each one's mbarrier at the offset of `bar`.
__device__ __forceinline__ void tilet_tma_load_4d_multicast(void *dst, const CUtensorMap *map, unsigned long long *bar, int mask, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5, %6, %7}], [%2], %3;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "h"(static_cast<unsigned short>(mask)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
// @helper tma_load_5d_multicast
// TMA multicast: the box at (c0, ...) of the tensor map into the same shared
// memory offset of every block of the cluster whose rank bit is set in
// `mask`, completing its bytes on each one's mbarrier at the offset of `bar`.
__device__ __forceinline__ void tilet_tma_load_5d_multicast(void *dst, const CUtensorMap *map, unsigned long long *bar, int mask, int c0, int c1, int c2, int c3, int c4)
{
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "h"(static_cast<unsigned short>(mask)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
}
// @helper tma_load_1d_2cta
// The CTA pair's TMA load (cp.async.bulk.tensor .cta_group::2): the box at
// (c0, ...) into this block's shared memory, its bytes completing on the
// mbarrier at bar's offset in the pair's leader (the even rank; mapa).
__device__ __forceinline__ void tilet_tma_load_1d_2cta(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0)
{
    unsigned rank, leader_bar;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                 : "=r"(leader_bar) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(rank & ~1u));
    asm volatile("cp.async.bulk.tensor.1d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map), "r"(leader_bar), "r"(c0)
                 : "memory");
}
// @helper tma_load_2d_2cta
// The CTA pair's TMA load (cp.async.bulk.tensor .cta_group::2): the box at
// (c0, ...) into this block's shared memory, its bytes completing on the
// mbarrier at bar's offset in the pair's leader (the even rank; mapa).
__device__ __forceinline__ void tilet_tma_load_2d_2cta(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0, int c1)
{
    unsigned rank, leader_bar;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                 : "=r"(leader_bar) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(rank & ~1u));
    asm volatile("cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map), "r"(leader_bar), "r"(c0), "r"(c1)
                 : "memory");
}
// @helper tma_load_3d_2cta
// The CTA pair's TMA load (cp.async.bulk.tensor .cta_group::2): the box at
// (c0, ...) into this block's shared memory, its bytes completing on the
// mbarrier at bar's offset in the pair's leader (the even rank; mapa).
__device__ __forceinline__ void tilet_tma_load_3d_2cta(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0, int c1, int c2)
{
    unsigned rank, leader_bar;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                 : "=r"(leader_bar) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(rank & ~1u));
    asm volatile("cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map), "r"(leader_bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
// @helper tma_load_4d_2cta
// The CTA pair's TMA load (cp.async.bulk.tensor .cta_group::2): the box at
// (c0, ...) into this block's shared memory, its bytes completing on the
// mbarrier at bar's offset in the pair's leader (the even rank; mapa).
__device__ __forceinline__ void tilet_tma_load_4d_2cta(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0, int c1, int c2, int c3)
{
    unsigned rank, leader_bar;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                 : "=r"(leader_bar) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(rank & ~1u));
    asm volatile("cp.async.bulk.tensor.4d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map), "r"(leader_bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
// @helper tma_load_5d_2cta
// The CTA pair's TMA load (cp.async.bulk.tensor .cta_group::2): the box at
// (c0, ...) into this block's shared memory, its bytes completing on the
// mbarrier at bar's offset in the pair's leader (the even rank; mapa).
__device__ __forceinline__ void tilet_tma_load_5d_2cta(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0, int c1, int c2, int c3, int c4)
{
    unsigned rank, leader_bar;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                 : "=r"(leader_bar) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(rank & ~1u));
    asm volatile("cp.async.bulk.tensor.5d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map), "r"(leader_bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
}
// @helper map_shared_rank
// The generic address of `local` (shared memory of this block) in block
// `rank` of the cluster (distributed shared memory).
template <class T> __device__ __forceinline__ T *tilet_map_shared_rank(T *local, int rank)
{
    unsigned long long remote;
    asm volatile("mapa.u64 %0, %1, %2;\n" : "=l"(remote) : "l"(local), "r"(rank));
    return reinterpret_cast<T *>(remote);
}
// @helper mbarrier_arrive_cluster
// Arrives on the mbarrier at the offset of `bar` in block `rank` of the
// cluster (release at cluster scope).
__device__ __forceinline__ void tilet_mbarrier_arrive_cluster(unsigned long long *bar, int rank)
{
    asm volatile("{\n.reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(rank)
                 : "memory");
}
// @helper tma_prefetch
// Brings the tensor map (a __grid_constant__ kernel parameter) into the
// descriptor cache ahead of its first use.
__device__ __forceinline__ void tilet_tma_prefetch(const CUtensorMap *map)
{
    asm volatile("prefetch.tensormap [%0];\n" :: "l"(map) : "memory");
}
// @helper tma_load_1d
// TMA: the box at (c0, ...) (innermost first) of the tensor map into shared
// memory; completes its bytes as transactions on the mbarrier.
__device__ __forceinline__ void tilet_tma_load_1d(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0)
{
#if __CUDA_ARCH__ >= 1200
    // sm_120: the CTA's own shared memory as the destination (PTX ISA 8.6);
    // ptxas keeps a stack frame for the cluster form there.
    asm volatile("cp.async.bulk.tensor.1d.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0)
                 : "memory");
#else
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0)
                 : "memory");
#endif
}
// @helper tma_load_2d
// TMA: the box at (c0, ...) (innermost first) of the tensor map into shared
// memory; completes its bytes as transactions on the mbarrier.
__device__ __forceinline__ void tilet_tma_load_2d(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0, int c1)
{
#if __CUDA_ARCH__ >= 1200
    // sm_120: the CTA's own shared memory as the destination (PTX ISA 8.6);
    // ptxas keeps a stack frame for the cluster form there.
    asm volatile("cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1)
                 : "memory");
#else
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1)
                 : "memory");
#endif
}
// @helper tma_load_3d
// TMA: the box at (c0, ...) (innermost first) of the tensor map into shared
// memory; completes its bytes as transactions on the mbarrier.
__device__ __forceinline__ void tilet_tma_load_3d(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0, int c1, int c2)
{
#if __CUDA_ARCH__ >= 1200
    // sm_120: the CTA's own shared memory as the destination (PTX ISA 8.6);
    // ptxas keeps a stack frame for the cluster form there.
    asm volatile("cp.async.bulk.tensor.3d.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#else
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#endif
}
// @helper tma_load_4d
// TMA: the box at (c0, ...) (innermost first) of the tensor map into shared
// memory; completes its bytes as transactions on the mbarrier.
__device__ __forceinline__ void tilet_tma_load_4d(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0, int c1, int c2, int c3)
{
#if __CUDA_ARCH__ >= 1200
    // sm_120: the CTA's own shared memory as the destination (PTX ISA 8.6);
    // ptxas keeps a stack frame for the cluster form there.
    asm volatile("cp.async.bulk.tensor.4d.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
#else
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
#endif
}
// @helper tma_load_im2col_4d
// TMA's im2col mode: the pixels of an NHWC tensor map from the filter-window
// corner (c0 channel, c1 w, c2 h, c3 n), each at the filter tap (w_offset,
// h_offset), into shared memory; completes its bytes on the mbarrier.
__device__ __forceinline__ void tilet_tma_load_im2col_4d(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0, int c1, int c2, int c3,
                                                         unsigned short w_offset, unsigned short h_offset)
{
#if __CUDA_ARCH__ >= 1200
    // sm_120: the CTA's own shared memory as the destination (PTX ISA 8.6);
    // ptxas keeps a stack frame for the cluster form there.
    asm volatile("cp.async.bulk.tensor.4d.shared::cta.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "h"(w_offset), "h"(h_offset)
                 : "memory");
#else
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "h"(w_offset), "h"(h_offset)
                 : "memory");
#endif
}
// @helper tma_load_5d
// TMA: the box at (c0, ...) (innermost first) of the tensor map into shared
// memory; completes its bytes as transactions on the mbarrier.
__device__ __forceinline__ void tilet_tma_load_5d(void *dst, const CUtensorMap *map, unsigned long long *bar, int c0, int c1, int c2, int c3, int c4)
{
#if __CUDA_ARCH__ >= 1200
    // sm_120: the CTA's own shared memory as the destination (PTX ISA 8.6);
    // ptxas keeps a stack frame for the cluster form there.
    asm volatile("cp.async.bulk.tensor.5d.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
#else
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(map),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
#endif
}
// @helper tma_store_1d
// TMA: shared memory into the box at (c0, ...) of the tensor map (elements
// outside the tensor are not written), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_store_1d(const CUtensorMap *map, const void *src, int c0)
{
    asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%2}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0)
                 : "memory");
}
// @helper tma_store_2d
// TMA: shared memory into the box at (c0, ...) of the tensor map (elements
// outside the tensor are not written), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_store_2d(const CUtensorMap *map, const void *src, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0), "r"(c1)
                 : "memory");
}
// @helper tma_store_3d
// TMA: shared memory into the box at (c0, ...) of the tensor map (elements
// outside the tensor are not written), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_store_3d(const CUtensorMap *map, const void *src, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
// @helper tma_store_4d
// TMA: shared memory into the box at (c0, ...) of the tensor map (elements
// outside the tensor are not written), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_store_4d(const CUtensorMap *map, const void *src, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
// @helper tma_store_5d
// TMA: shared memory into the box at (c0, ...) of the tensor map (elements
// outside the tensor are not written), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_store_5d(const CUtensorMap *map, const void *src, int c0, int c1, int c2, int c3, int c4)
{
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
}
// @helper tma_reduce_add_1d
// TMA: the shared-memory box added into the box at (c0, ...) of the tensor
// map, element by element (atomically with respect to other reductions;
// elements outside the tensor are skipped), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_reduce_add_1d(const CUtensorMap *map, const void *src, int c0)
{
    asm volatile("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%0, {%2}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0)
                 : "memory");
}
// @helper tma_reduce_add_2d
// TMA: the shared-memory box added into the box at (c0, ...) of the tensor
// map, element by element (atomically with respect to other reductions;
// elements outside the tensor are skipped), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_reduce_add_2d(const CUtensorMap *map, const void *src, int c0, int c1)
{
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0), "r"(c1)
                 : "memory");
}
// @helper tma_reduce_add_3d
// TMA: the shared-memory box added into the box at (c0, ...) of the tensor
// map, element by element (atomically with respect to other reductions;
// elements outside the tensor are skipped), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_reduce_add_3d(const CUtensorMap *map, const void *src, int c0, int c1, int c2)
{
    asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
// @helper tma_reduce_add_4d
// TMA: the shared-memory box added into the box at (c0, ...) of the tensor
// map, element by element (atomically with respect to other reductions;
// elements outside the tensor are skipped), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_reduce_add_4d(const CUtensorMap *map, const void *src, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
// @helper tma_reduce_add_5d
// TMA: the shared-memory box added into the box at (c0, ...) of the tensor
// map, element by element (atomically with respect to other reductions;
// elements outside the tensor are skipped), in this thread's bulk group.
__device__ __forceinline__ void tilet_tma_reduce_add_5d(const CUtensorMap *map, const void *src, int c0, int c1, int c2, int c3, int c4)
{
    asm volatile("cp.reduce.async.bulk.tensor.5d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n"
                 :: "l"(map), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
}
// @helper mbarrier_arrive_expect_tx
// The calling thread arrives, and the phase also waits for `bytes` of TMA transactions.
__device__ __forceinline__ void tilet_mbarrier_arrive_expect_tx(unsigned long long *bar, int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(bytes)
                 : "memory");
}
// @helper clc_try_cancel
// Cluster launch control: asks to cancel a cluster of the grid that has not
// started; the 16-byte answer lands at `answer` and completes 16 transaction
// bytes on the mbarrier.
__device__ __forceinline__ void tilet_clc_try_cancel(void *answer, unsigned long long *bar)
{
    asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%0], [%1];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(answer))), "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar)))
                 : "memory");
}
// @helper clc_try_cancel_multicast
// The same, answered in every block of the cluster (at the same offsets of
// their shared memory, completing on their mbarriers).
__device__ __forceinline__ void tilet_clc_try_cancel_multicast(void *answer, unsigned long long *bar)
{
    asm volatile("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128 [%0], [%1];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(answer))), "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar)))
                 : "memory");
}
// @helper clc_is_canceled
// 1 if the answer at `answer` canceled a cluster, else 0. The answer was
// written through the async proxy; the fence orders this read before the
// next request's answer overwrites it (as CUTLASS's CLC pipeline does).
__device__ __forceinline__ int tilet_clc_is_canceled(const void *answer)
{
    unsigned canceled;
    asm volatile("{\n.reg .pred p;\n.reg .b128 r;\nld.shared.b128 r, [%1];\n"
                 "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, r;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(canceled)
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(answer)))
                 : "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    return static_cast<int>(canceled);
}
// @helper clc_first_ctaid
// The x, y or z index (dim 0, 1, 2) of the first block of the cluster the
// answer canceled (0 if none).
__device__ __forceinline__ unsigned tilet_clc_first_ctaid(const void *answer, int dim)
{
    unsigned x = 0, y = 0, z = 0;
    // Decoded only from an answer that canceled a cluster (as CUTLASS does).
    asm volatile("{\n.reg .pred p;\n.reg .b128 r;\nld.shared.b128 r, [%3];\nclusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, r;\n"
                 "@p clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%0, %1, %2, _}, r;\n}\n"
                 : "+r"(x), "+r"(y), "+r"(z)
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(answer)))
                 : "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    return dim == 0 ? x : dim == 1 ? y : z;
}
// @helper mbarrier_expect_tx
// The mbarrier's current phase also waits for `bytes` of TMA transactions (no arrival).
__device__ __forceinline__ void tilet_mbarrier_expect_tx(unsigned long long *bar, int bytes)
{
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared.b64 [%0], %1;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(bytes)
                 : "memory");
}
// @helper fence_proxy_async
// Orders this thread's earlier shared-memory writes (generic proxy) before
// later accesses through the async proxy: TMA, and wgmma's shared operands.
__device__ __forceinline__ void tilet_fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// @helper fence_proxy_async_all
// The same for every state space: also global memory written through the
// generic proxy before the async proxy (a TMA store) writes or reads it.
__device__ __forceinline__ void tilet_fence_proxy_async_all()
{
    asm volatile("fence.proxy.async;\n" ::: "memory");
}
// @helper tma_store_wait
// Commits this thread's TMA stores and waits until they have read shared memory.
__device__ __forceinline__ void tilet_tma_store_wait()
{
    asm volatile("cp.async.bulk.commit_group;\n"
                 "cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// @helper bulk_load
// 1D TMA: `bytes` contiguous bytes global -> shared, completing on the mbarrier.
__device__ __forceinline__ void tilet_bulk_load(void *dst, const void *src, int bytes, unsigned long long *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(src), "r"(bytes),
                    "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar)))
                 : "memory");
}
// @helper bulk_store
// 1D TMA: `bytes` contiguous bytes shared -> global, in this thread's bulk group.
__device__ __forceinline__ void tilet_bulk_store(void *dst, const void *src, int bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
                 :: "l"(dst), "r"(static_cast<unsigned>(__cvta_generic_to_shared(src))), "r"(bytes)
                 : "memory");
}
// @helper wgmma_desc
// A wgmma shared-memory matrix descriptor: start address, leading- and
// stride-dimension byte offsets (all in 16-byte units), swizzle mode
// (1: 128B, 2: 64B, 3: 32B).
__device__ __forceinline__ unsigned long long tilet_wgmma_desc(const void *smem, unsigned leadingBytes, unsigned strideBytes, unsigned mode)
{
    unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) | (static_cast<unsigned long long>((leadingBytes >> 4) & 0x3FFF) << 16) |
           (static_cast<unsigned long long>((strideBytes >> 4) & 0x3FFF) << 32) | (static_cast<unsigned long long>(mode) << 62);
}
// @helper pin_registers
// An empty asm that reads and writes every register of an accumulator: the
// compiler keeps each access to it on its own side of the wgmma fence or
// wait beside it (CUTLASS's warpgroup_fence_operand). No instruction.
template <int N> __device__ __forceinline__ void tilet_pin_registers(float (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N> __device__ __forceinline__ void tilet_pin_registers(int (&r)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}
template <class T, int N> __device__ __forceinline__ void tilet_pin_registers(T (&r)[N])   // 16-bit: an f16 C, an A in registers
{
    static_assert(sizeof(T) == 2 && N % 2 == 0, "wgmma's register operands are f32 or s32, or 16-bit pairs");
    unsigned *words = reinterpret_cast<unsigned *>(r);   // as wgmma reads them: two elements to a register
#pragma unroll
    for (int i = 0; i < N / 2; ++i) asm volatile("" : "+r"(words[i])::"memory");
}
// @helper wgmma_fence
// Orders earlier register accesses of the accumulators before the next wgmma.
__device__ __forceinline__ void tilet_wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
// @helper wgmma_commit
// Closes the warp group's issued wgmma operations into one group.
__device__ __forceinline__ void tilet_wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// @helper wgmma_wait
// Waits until at most N wgmma groups of the warp group are in flight.
template <int N> __device__ __forceinline__ void tilet_wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// @helper tmem_alloc
// tcgen05.alloc by the whole calling warp: `columns` columns of tensor memory
// (a power of two, at least 32), their address written to *word; then this
// block gives up allocating again (relinquish_alloc_permit).
__device__ __forceinline__ void tilet_tmem_alloc(unsigned *word, unsigned columns)
{
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n"
                 "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(word))), "r"(columns) : "memory");
}
// @helper tmem_dealloc
// tcgen05.dealloc by the whole warp that allocated.
__device__ __forceinline__ void tilet_tmem_dealloc(unsigned address, unsigned columns)
{
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" :: "r"(address), "r"(columns) : "memory");
}
// @helper tmem_alloc_2cta
// tcgen05.alloc.cta_group::2 by the whole calling warp, the same warp of both
// blocks of the CTA pair: the same `columns` columns in each, their address
// written to *word (the same word in both); then relinquish_alloc_permit.
__device__ __forceinline__ void tilet_tmem_alloc_2cta(unsigned *word, unsigned columns)
{
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;\n"
                 "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(word))), "r"(columns) : "memory");
}
// @helper tmem_dealloc_2cta
// tcgen05.dealloc.cta_group::2 by the warps of both blocks that allocated.
__device__ __forceinline__ void tilet_tmem_dealloc_2cta(unsigned address, unsigned columns)
{
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;\n" :: "r"(address), "r"(columns) : "memory");
}
// @helper tcgen05_desc
// A tcgen05 shared-memory matrix descriptor: start address, leading and
// stride byte offsets (all >> 4), the fixed 0b001 at bits 46-48, and the
// swizzle mode in bits 61-63 (0 none, 2 128B, 4 64B, 6 32B).
__device__ __forceinline__ unsigned long long tilet_tcgen05_desc(const void *smem, unsigned leading, unsigned stride, unsigned swizzle)
{
    unsigned long long address = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    return ((address & 0x3FFFF) >> 4) | ((unsigned long long)((leading & 0x3FFFF) >> 4) << 16) |
           ((unsigned long long)((stride & 0x3FFFF) >> 4) << 32) | (1ull << 46) | ((unsigned long long)swizzle << 61);
}
// @helper tcgen05_cp_32x128b_warpx4
// tcgen05.cp 32x128b.warpx4, one thread issuing for the CTA: 32 rows of 16 bytes through the shared-memory
// descriptor into the 4 columns from taddr of every lane quarter (row r into lanes r, 32 + r, 64 + r, 96 + r).
// The tensor core runs it before this thread's later tcgen05.mma; its next tcgen05.commit covers it.
__device__ __forceinline__ void tilet_tcgen05_cp_32x128b_warpx4(unsigned taddr, unsigned long long desc)
{
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n" :: "r"(taddr), "l"(desc) : "memory");
}
// @helper tcgen05_cp_32x128b_warpx4_2cta
// The CTA pair's tcgen05.cp (.cta_group::2), issued by one thread of the pair's leader: the same copy in
// both blocks, each from the 32 rows at desc's offset in its own shared memory into its own tensor memory
// at taddr. The leader's next tcgen05.commit of the pair covers it.
__device__ __forceinline__ void tilet_tcgen05_cp_32x128b_warpx4_2cta(unsigned taddr, unsigned long long desc)
{
    asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;\n" :: "r"(taddr), "l"(desc) : "memory");
}
// @helper tcgen05_commit
// tcgen05.commit: one arrival on the mbarrier once this thread's earlier tcgen05.mma complete.
__device__ __forceinline__ void tilet_tcgen05_commit(unsigned long long *bar)
{
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))) : "memory");
}
// @helper tcgen05_commit_2cta
// tcgen05.commit.cta_group::2: one arrival on this block's mbarrier once this
// thread's earlier tcgen05.mma (the CTA pair's) complete.
__device__ __forceinline__ void tilet_tcgen05_commit_2cta(unsigned long long *bar)
{
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))) : "memory");
}
// @helper tcgen05_commit_2cta_multicast
// tcgen05.commit.cta_group::2 with .multicast::cluster: one arrival on the
// mbarrier at bar's offset in both blocks of the CTA pair once this thread's
// earlier tcgen05.mma complete.
__device__ __forceinline__ void tilet_tcgen05_commit_2cta_multicast(unsigned long long *bar)
{
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    unsigned short pair = static_cast<unsigned short>(3u << (rank & ~1u));
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n"
                 :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "h"(pair) : "memory");
}
// @helper tcgen05_wait_ld
// This thread's tcgen05.ld results are in its registers.
__device__ __forceinline__ void tilet_tcgen05_wait_ld()
{
    asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}
// @helper tcgen05_wait_st
// This thread's tcgen05.st stores are in tensor memory.
__device__ __forceinline__ void tilet_tcgen05_wait_st()
{
    asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
}
// @helper tcgen05_fence_before
// Orders this thread's tcgen05 operations before the thread synchronisation that follows.
__device__ __forceinline__ void tilet_tcgen05_fence_before()
{
    asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}
// @helper tcgen05_fence_after
// Orders this thread's tcgen05 operations after the thread synchronisation that precedes.
__device__ __forceinline__ void tilet_tcgen05_fence_after()
{
    asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}
