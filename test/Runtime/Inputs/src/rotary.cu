// Rotary embedding, halves layout, partial (R <= D), out of place:
// x, out [B, T, H, D] bf16; cos, sin [T, R / 2] f32. One thread per element.
#include <cuda_bf16.h>
extern "C" __global__ void rotary(const __nv_bfloat16 *x, const float *cos,
                                  const float *sin, __nv_bfloat16 *out, int B,
                                  int T, int H, int D, int R) {
  long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long long)B * T * H * D)
    return;
  int d = idx % D;
  int t = (idx / ((long long)H * D)) % T;
  long long row = idx - d;
  int half = R / 2;
  if (d >= R) {
    out[idx] = x[idx];
    return;
  }
  int i = d < half ? d : d - half;
  float c = cos[t * half + i], s = sin[t * half + i];
  float x1 = __bfloat162float(x[row + i]);
  float x2 = __bfloat162float(x[row + i + half]);
  out[idx] = __float2bfloat16(d < half ? x1 * c - x2 * s : x2 * c + x1 * s);
}
