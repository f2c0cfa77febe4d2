/* Runs the GPU lowering of tanh, erf, sigmoid, log1p, pow, floor and ceil
 * (and erf, tanh and sigmoid with precision = fast, which may differ by
 * their bounds) on the CPU:
 * test/Conversion/accurate-math-cpu.test compiles a kernel of scalars to LLVM
 * IR with tilec, strips the NVVM parts (barriers between the stores, the
 * target) and links it here as k(y, x, p). Each result is compared with the C
 * library's double result rounded to float, over random arguments (ranges
 * around each function's pieces, tiny values, and random bit patterns:
 * infinities, NaNs, subnormals). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
void k(float *y, float x, float p);
/* The float's bits as an integer ordered like the float. */
static int32_t ord(float f) { int32_t i; memcpy(&i, &f, 4); return i < 0 ? -(i & 0x7fffffff) : i; }
static long ulps(float a, float b) {
  if (isnan(a) && isnan(b)) return 0;
  if (isnan(a) || isnan(b)) return 1L << 40;
  long d = (long)ord(a) - (long)ord(b); return d < 0 ? -d : d;
}
int main(int argc, char **argv) {
  int count = argc > 1 ? atoi(argv[1]) : 200000;
  enum { COUNT = 11, FIRST_FAST = 8 };
  const char *names[COUNT] = {"tanh",     "erf",       "sigmoid", "log1p",
                              "pow",      "floor",     "ceil",    "pow|x|",
                              "erf-fast", "tanh-fast", "sigmoid-fast"};
  long worst[COUNT] = {0}, bad[COUNT] = {0}, n = 0;
  srand(7);
  for (int t = 0; t < count; ++t) {
    float x, p;
    int kind = t % 6;
    double u = rand() / (double)RAND_MAX, v = rand() / (double)RAND_MAX;
    if (kind == 0) x = (float)(u * 24 - 12);
    else if (kind == 1) x = (float)((u * 2 - 1) * 1e-3);
    else if (kind == 2) x = (float)((u * 2 - 1) * 200);
    else if (kind == 3) x = (float)(u * 5 - 1);
    else if (kind == 4) { uint32_t b = (uint32_t)rand() ^ ((uint32_t)rand() << 16); memcpy(&x, &b, 4); }
    else x = (float)(u * 1e-30);
    p = kind == 4 ? (float)floor(v * 40 - 20) : (float)(v * 60 - 30);
    if (t % 7 == 0) p = (float)(int)(v * 20 - 10);
    float y[COUNT];
    k(y, x, p);
    float ref[COUNT] = {(float)tanh(x),
                        (float)erf(x),
                        (float)(1 / (1 + exp(-(double)x))),
                        (float)log1p(x),
                        (float)pow(x, p),
                        floorf(x),
                        ceilf(x),
                        (float)pow(fabs(x), p),
                        (float)erf(x),
                        (float)tanh(x),
                        (float)(1 / (1 + exp(-(double)x)))};
    for (int i = 0; i < COUNT; ++i) {
      long d = ulps(y[i], ref[i]);
      if (d > worst[i]) worst[i] = d;
      if (d && i < FIRST_FAST && bad[i] < 3)
        printf("%s(%a, %a) = %a, want %a\n", names[i], x, p, y[i], ref[i]);
      bad[i] += d != 0;
    }
    ++n;
  }
  for (int i = 0; i < COUNT; ++i)
    printf("%-12s worst %ld ulp, %ld of %ld differ\n", names[i], worst[i],
           bad[i], n);
  return 0;
}
