// Naive attention forward, one thread per query row, D = 64 folded in:
// q, k, v, o [Z, H, N, 64] f32, lse [Z, H, N] f32 (natural log). Online
// softmax, so it shares no structure with the two-pass float64 reference.
extern "C" __global__ void attention(const float *q, const float *k,
                                     const float *v, float *o, float *lse,
                                     float scale, int Z, int H, int N) {
  const int D = 64;
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  int zh = blockIdx.y;
  if (row >= N)
    return;
  const float *qr = q + ((long long)zh * N + row) * D;
  const float *kh = k + (long long)zh * N * D;
  const float *vh = v + (long long)zh * N * D;
  float acc[D];
  for (int j = 0; j < D; ++j)
    acc[j] = 0.f;
  float m = -INFINITY, l = 0.f;
  for (int s = 0; s < N; ++s) {
    float dot = 0.f;
    for (int j = 0; j < D; ++j)
      dot += qr[j] * kh[s * D + j];
    float score = dot * scale;
    float mNew = fmaxf(m, score);
    float alpha = expf(m - mNew), p = expf(score - mNew);
    l = l * alpha + p;
    for (int j = 0; j < D; ++j)
      acc[j] = acc[j] * alpha + p * vh[s * D + j];
    m = mNew;
  }
  float *orow = o + ((long long)zh * N + row) * D;
  for (int j = 0; j < D; ++j)
    orow[j] = acc[j] / l;
  lse[(long long)zh * N + row] = m + logf(l);
}
