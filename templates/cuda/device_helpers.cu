// device_helpers.cu -- the plain C++ device functions a generated kernel may call.
//
// Unlike ptx_helpers.cu, these hold no inline assembly: nvcc compiles them
// for the device and the CPU emulator compiles them as they are. The
// printer copies the sections a kernel uses, in this order, between the
// "device functions" markers of the .cu. Each section starts with
// "// @helper KEY" and ends at the next "// @helper" or the end of the file.
// @helper philox
// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2,
// 3", SC 2011), stepped as cuRAND's curandStatePhilox4_32_10_t is: a seed,
// subsequence and offset give the numbers curand_init and then curand /
// curand_uniform give (TileLang's T.rng_init, T.rng_rand, T.rng_rand_float).
// The state is one register array per thread: the 128-bit counter (words
// 0-3), the key (4-5), the counter's four numbers (6-9) and which of them
// comes next (10). Indices into it are constants once inlined, so it stays
// in registers.
__device__ __forceinline__ void tilet_philox_numbers(unsigned *state)
{
    unsigned c0 = state[0], c1 = state[1], c2 = state[2], c3 = state[3];
    unsigned k0 = state[4], k1 = state[5];
    for (int round = 0; round < 10; ++round) {
        unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
        unsigned next0 = static_cast<unsigned>(p1 >> 32) ^ c1 ^ k0, next2 = static_cast<unsigned>(p0 >> 32) ^ c3 ^ k1;
        c1 = static_cast<unsigned>(p1);
        c3 = static_cast<unsigned>(p0);
        c0 = next0;
        c2 = next2;
        k0 += 0x9E3779B9u;   // the key schedule's Weyl sequence
        k1 += 0xBB67AE85u;
    }
    state[6] = c0;
    state[7] = c1;
    state[8] = c2;
    state[9] = c3;
}
// The counter advanced by n blocks of four numbers (carrying as cuRAND does).
__device__ __forceinline__ void tilet_philox_advance(unsigned *state, unsigned long long n)
{
    unsigned low = static_cast<unsigned>(n), high = static_cast<unsigned>(n >> 32);
    state[0] += low;
    if (state[0] < low) ++high;
    state[1] += high;
    if (high <= state[1]) return;
    if (++state[2]) return;
    ++state[3];
}
// curand_init(seed, subsequence, offset): subsequence selects the counter's
// upper 64 bits, offset skips that many numbers.
__device__ __forceinline__ void tilet_philox_init(unsigned *state, unsigned long long seed, unsigned long long subsequence,
                                                  unsigned long long offset)
{
    state[0] = static_cast<unsigned>(offset >> 2);
    state[1] = static_cast<unsigned>(offset >> 34);
    state[2] = static_cast<unsigned>(subsequence);
    state[3] = static_cast<unsigned>(subsequence >> 32);
    state[4] = static_cast<unsigned>(seed);
    state[5] = static_cast<unsigned>(seed >> 32);
    state[10] = static_cast<unsigned>(offset & 3);
    tilet_philox_numbers(state);
}
// curand: the next 32 random bits.
__device__ __forceinline__ unsigned tilet_philox_next(unsigned *state)
{
    unsigned position = state[10];
    unsigned bits = position == 0 ? state[6] : position == 1 ? state[7] : position == 2 ? state[8] : state[9];
    if (position == 3) {
        tilet_philox_advance(state, 1);
        tilet_philox_numbers(state);
        state[10] = 0;
    } else {
        state[10] = position + 1;
    }
    return bits;
}
// curand_uniform: a float in (0, 1], the next bits times 2^-32 plus half of that.
__device__ __forceinline__ float tilet_philox_uniform(unsigned *state)
{
    return static_cast<float>(tilet_philox_next(state)) * 2.3283064e-10f + 2.3283064e-10f / 2.0f;
}
