// Force-included (-include) into every file of an ASan build (see
// Sanitizers.cmake). LLVM's headers poison and unpoison the slabs of
// BumpPtrAllocator and the free lists of Recycler when they see ASan; our
// instrumented copies of that inline code and libMLIR's uninstrumented ones
// share allocators (the MLIRContext's), so a slab poisoned by ours is then
// handed out by libMLIR without being unpoisoned, and the next memcpy into
// it is a false use-after-poison. Declaring the functions first and then
// defining them away as macros makes Compiler.h's include of the same
// header a no-op and turns the poisoning in LLVM's headers off, as it is
// off inside libMLIR. ASan's own checks (heap, stack, globals) stay.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#define __asan_poison_memory_region(p, size) ((void)(p), (void)(size))
#define __asan_unpoison_memory_region(p, size) ((void)(p), (void)(size))
#endif
#endif
