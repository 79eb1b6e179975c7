// A fake libcuda.so.1 for the tests that run without a GPU
// (fake_driver_test.go): "device memory" is host memory, and every call
// that needs a context fails with CUDA_ERROR_INVALID_CONTEXT (201) unless
// the calling thread has made the primary context current, as with the
// real driver. FAKE_CUINIT sets cuInit's result. Built alone it has no
// kernels; fakedevice.cc includes it with FAKE_KERNELS defined and
// provides the module functions.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CTX ((void*)0x1234)
static __thread void* current;

int cuInit(unsigned flags) {
  const char* s = getenv("FAKE_CUINIT");
  return s ? atoi(s) : 0;
}
int cuDriverGetVersion(int* v) { *v = 13000; return 0; }
int cuDeviceGetCount(int* n) { *n = 1; return 0; }
int cuDeviceGet(int* d, int ordinal) { *d = ordinal; return 0; }
int cuDeviceGetName(char* name, int len, int dev) { strncpy(name, "Fake GPU", len); return 0; }
int cuDeviceTotalMem_v2(size_t* bytes, int dev) { *bytes = (size_t)80 << 30; return 0; }
int cuDeviceGetAttribute(int* v, int attr, int dev) {
  *v = attr == 75 ? 9 : attr == 76 ? 0 : -1;
  return 0;
}
int cuDevicePrimaryCtxRetain(void** ctx, int dev) { *ctx = CTX; return 0; }
int cuDevicePrimaryCtxRelease_v2(int dev) { return 0; }
int cuCtxSetCurrent(void* ctx) { current = ctx; return 0; }
int cuCtxSynchronize(void) { return current == CTX ? 0 : 201; }
// Allocations carry their size in a 16-byte header so that
// FAKE_CUDA_MEMORY (bytes) can cap the memory in use, as a device's size
// does; one allocation over 1 GiB is out of memory regardless.
static size_t in_use, capacity;
int cuMemAlloc_v2(uint64_t* p, size_t n) {
  if (current != CTX) return 201;
  if (!capacity) {
    const char* s = getenv("FAKE_CUDA_MEMORY");
    capacity = s ? strtoull(s, 0, 10) : (size_t)80 << 30;
  }
  if (n > ((size_t)1 << 30) || in_use + n > capacity) return 2;  // out of memory
  char* b = (char*)malloc(n + 16);
  if (!b) return 2;
  memcpy(b, &n, sizeof n);
  in_use += n;
  *p = (uint64_t)(uintptr_t)(b + 16);
  return 0;
}
int cuMemFree_v2(uint64_t p) {
  if (current != CTX) return 201;
  if (!p) return 0;
  char* b = (char*)(uintptr_t)p - 16;
  size_t n;
  memcpy(&n, b, sizeof n);
  in_use -= n;
  free(b);
  return 0;
}
int cuMemcpyHtoD_v2(uint64_t dst, const void* src, size_t n) {
  if (current != CTX) return 201;
  memcpy((void*)(uintptr_t)dst, src, n);
  return 0;
}
int cuMemcpyDtoH_v2(void* dst, uint64_t src, size_t n) {
  if (current != CTX) return 201;
  memcpy(dst, (void*)(uintptr_t)src, n);
  return 0;
}
int cuMemcpyDtoD_v2(uint64_t dst, uint64_t src, size_t n) {
  if (current != CTX) return 201;
  memmove((void*)(uintptr_t)dst, (void*)(uintptr_t)src, n);
  return 0;
}
int cuMemsetD8_v2(uint64_t dst, unsigned char v, size_t n) {
  if (current != CTX) return 201;
  memset((void*)(uintptr_t)dst, v, n);
  return 0;
}
int cuMemGetInfo_v2(size_t* free, size_t* total) {
  *free = (size_t)70 << 30;
  *total = (size_t)80 << 30;
  return current == CTX ? 0 : 201;
}
#ifndef FAKE_KERNELS
int cuModuleLoadData(void** m, const void* image) { return 218; }  // CUDA_ERROR_INVALID_PTX
int cuModuleUnload(void* m) { return 0; }
int cuModuleGetFunction(void** f, void* m, const char* name) { return 500; }
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  return 400;
}
#endif
