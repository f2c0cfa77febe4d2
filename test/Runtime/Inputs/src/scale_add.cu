// y = a * x + y + b on a readwrite y: an f32 and an i32 scalar, then N.
extern "C" __global__ void scale_add(const float *x, float *y, float a, int b,
                                     int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N)
    y[i] = a * x[i] + y[i] + float(b);
}
