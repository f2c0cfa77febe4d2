// y = x through dynamic shared memory, with the block's buffer placed at the
// far end of a large allocation so the >48 KB opt-in is really exercised.
extern "C" __global__ void copy_smem(const float *x, float *y, int N) {
  extern __shared__ float buf[];
  int words = 100000 / 4;
  float *slot = buf + words - blockDim.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  slot[threadIdx.x] = i < N ? x[i] : 0.f;
  __syncthreads();
  if (i < N)
    y[i] = slot[threadIdx.x];
}
