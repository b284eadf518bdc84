// A heap-allocation counter for benchmarks: preloaded into a process (LD_PRELOAD), it counts
// every allocation per thread and forwards it to glibc. A FocusGate worker that finds
// `focusgate_thread_allocations` reports its own allocations as a metric. Never linked into
// the product.
#include "MallocCounter.h"

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

// Initial-exec: a preloaded library's TLS is static, so reading it never allocates.
static __thread uint64_t allocations __attribute__((tls_model("initial-exec")));

void *malloc(size_t size) {
    allocations++;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    allocations++;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    allocations++;
    return __libc_realloc(pointer, size);
}

void free(void *pointer) {
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    allocations++;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    allocations++;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    allocations++;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

uint64_t focusgate_thread_allocations(void) {
    return allocations;
}
