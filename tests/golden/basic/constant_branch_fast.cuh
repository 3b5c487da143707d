// The decode constant_branch.tl does not take: this text must not appear in its .cu.
__device__ void fast_plus_one(const float *r, float *o) { *o = r[0] + 1.0f; }
