// Causal linear attention, quadratic form, one thread per output element:
// q, k, v, o [B, T, H, D] f32, o_t = scale * sum_{s <= t} (q_t . k_s) v_s.
extern "C" __global__ void linear_attention(const float *q, const float *k,
                                            const float *v, float *o,
                                            float scale, int B, int T, int H,
                                            int D) {
  long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long long)B * T * H * D)
    return;
  int j = idx % D;
  int h = (idx / D) % H;
  int t = (idx / ((long long)D * H)) % T;
  long long b = idx / ((long long)D * H * T);
  float acc = 0.f;
  for (int s = 0; s <= t; ++s) {
    const float *qt = q + ((b * T + t) * H + h) * D;
    const float *ks = k + ((b * T + s) * H + h) * D;
    float dot = 0.f;
    for (int d = 0; d < D; ++d)
      dot += qt[d] * ks[d];
    acc += dot * v[((b * T + s) * H + h) * D + j];
  }
  o[idx] = scale * acc;
}
