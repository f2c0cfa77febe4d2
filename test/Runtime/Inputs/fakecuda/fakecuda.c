/* A stand-in for libcuda.so.1 with no GPU, for tests of what tile-run does
 * around the driver (fake-driver.test): images (cubin or PTX), --tune, the
 * tuned launch. Built as libcuda.so.1 and found through LD_LIBRARY_PATH.
 *
 * Device memory is host memory. A launch runs the test's copy kernel,
 * scale(x, y, N) (test/Runtime/Inputs/configs/scale.tile): y[i] = x[i] for
 * i < N. Time advances by one microsecond per block launched, or 10 us per
 * launch with FAKE_CUDA_TIME=flat, and events read that clock.
 *
 * FAKE_CUDA_CC=90 (the compute capability), FAKE_CUDA_NAME (the device's
 * name, "Fake GPU"), FAKE_CUDA_REFUSE_CUBIN (cubins fail to load),
 * FAKE_CUDA_WRONG_GRID=G (a launch of G blocks writes x + 1: a wrong
 * config). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { OK = 0, INVALID_VALUE = 1, INVALID_IMAGE = 200 };

static double clockUs;
static int context = 1, module = 2, function = 3;

CUresult cuInit(unsigned flags) { return flags ? INVALID_VALUE : OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return OK; }
CUresult cuDeviceGetName(char *name, int len, int d) {
  const char *n = getenv("FAKE_CUDA_NAME");
  (void)d;
  snprintf(name, (size_t)len, "%s", n ? n : "Fake GPU");
  return OK;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  const char *cc = getenv("FAKE_CUDA_CC");
  int number = cc ? atoi(cc) : 90;
  (void)d;
  switch (attr) {
  case 75: *v = number / 10; return OK;
  case 76: *v = number % 10; return OK;
  case 16: *v = 132; return OK;
  case 97: *v = 232448; return OK;
  }
  return INVALID_VALUE;
}
CUresult cuDevicePrimaryCtxRetain(void **c, int d) {
  (void)d;
  *c = &context;
  return OK;
}
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return OK; }
CUresult cuCtxSetCurrent(void *c) { (void)c; return OK; }
CUresult cuCtxGetCurrent(void **c) { *c = &context; return OK; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return OK; }
CUresult cuCtxSynchronize(void) { return OK; }

CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n,
                            int *options, void **values) {
  (void)n, (void)options, (void)values;
  int cubin = memcmp(image, "\x7f" "ELF", 4) == 0;
  if (cubin && getenv("FAKE_CUDA_REFUSE_CUBIN"))
    return INVALID_IMAGE;
  *m = &module;
  return OK;
}
CUresult cuModuleUnload(void *m) { (void)m; return OK; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)m, (void)name;
  *f = &function;
  return OK;
}
CUresult cuFuncGetAttribute(int *v, int attr, void *f) {
  (void)f;
  *v = attr == 0 ? 1024 : attr == 4 ? 32 : 0;
  return OK;
}
CUresult cuFuncSetAttribute(void *f, int attr, int v) {
  (void)f, (void)attr, (void)v;
  return OK;
}

CUresult cuMemAlloc_v2(uint64_t *p, size_t size) {
  void *memory = aligned_alloc(256, (size + 255) / 256 * 256);
  *p = (uint64_t)(uintptr_t)memory;
  return memory ? OK : 2;
}
CUresult cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return OK; }
CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n) {
  memcpy((void *)(uintptr_t)dst, src, n);
  return OK;
}
CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n) {
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return OK;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **args, void **extra) {
  (void)f, (void)bx, (void)by, (void)bz, (void)shared, (void)stream,
      (void)extra;
  if (!gx || !gy || !gz)
    return 1; // CUDA_ERROR_INVALID_VALUE, as the driver answers
  float *x = *(float **)args[0], *y = *(float **)args[1];
  int32_t n = *(int32_t *)args[2];
  memcpy(y, x, (size_t)n * sizeof(float));
  const char *wrong = getenv("FAKE_CUDA_WRONG_GRID");
  if (wrong && (unsigned)atoi(wrong) == gx * gy * gz)
    for (int32_t i = 0; i < n; ++i)
      y[i] += 1;
  const char *time = getenv("FAKE_CUDA_TIME");
  clockUs += time && !strcmp(time, "flat") ? 10.0 : (double)gx * gy * gz;
  return OK;
}

CUresult cuEventCreate(void **e, unsigned flags) {
  (void)flags;
  *e = malloc(sizeof(double));
  return *e ? OK : 2;
}
CUresult cuEventRecord(void *e, void *stream) {
  (void)stream;
  *(double *)e = clockUs;
  return OK;
}
CUresult cuEventSynchronize(void *e) { (void)e; return OK; }
CUresult cuEventElapsedTime_v2(float *ms, void *start, void *end) {
  *ms = (float)((*(double *)end - *(double *)start) / 1000.0);
  return OK;
}
CUresult cuEventDestroy_v2(void *e) { free(e); return OK; }

CUresult cuGetErrorName(CUresult r, const char **name) {
  *name = r == INVALID_IMAGE ? "CUDA_ERROR_INVALID_IMAGE" : "CUDA_ERROR_FAKE";
  return OK;
}
CUresult cuGetErrorString(CUresult r, const char **text) {
  *text = r == INVALID_IMAGE ? "device kernel image is invalid" : "fake";
  return OK;
}
