// A heap-allocation counter for benchmarks: preloaded into a process (LD_PRELOAD), it counts
// every allocation per thread and forwards it to the allocator the process would use without it
// (the next definition after this library: jemalloc in `focusgate`, glibc's elsewhere). A
// FocusGate worker that finds `focusgate_thread_allocations` reports its own allocations as a
// metric. Never linked into the product.
#define _GNU_SOURCE
#include "MallocCounter.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

// Initial-exec: a preloaded library's TLS is static, so reading it never allocates.
static __thread uint64_t allocations __attribute__((tls_model("initial-exec")));

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static void *(*next_memalign)(size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static int (*next_posix_memalign)(void **, size_t, size_t);

// What `dlsym` allocates while the next allocator is being found comes from here (zeroed, as
// static storage is) and is never freed.
static _Alignas(64) char bootstrap[16384];
static size_t bootstrap_used;
static int resolving;

static void *bootstrap_allocate(size_t size) {
    size_t start = (bootstrap_used + 63) & ~(size_t)63;
    if (start + size > sizeof bootstrap) return NULL;
    bootstrap_used = start + size;
    return bootstrap + start;
}

static int is_bootstrap(const void *pointer) {
    return (const char *)pointer >= bootstrap && (const char *)pointer < bootstrap + sizeof bootstrap;
}

// Runs when the library loads, before the process has threads; a call that comes earlier
// resolves on the spot.
__attribute__((constructor)) static void resolve(void) {
    if (next_free != NULL || resolving) return;
    resolving = 1;
    next_malloc = dlsym(RTLD_NEXT, "malloc");
    next_calloc = dlsym(RTLD_NEXT, "calloc");
    next_realloc = dlsym(RTLD_NEXT, "realloc");
    next_memalign = dlsym(RTLD_NEXT, "memalign");
    next_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    next_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    next_free = dlsym(RTLD_NEXT, "free");
    resolving = 0;
}

void *malloc(size_t size) {
    if (next_malloc == NULL) {
        if (resolving) return bootstrap_allocate(size);
        resolve();
    }
    allocations++;
    return next_malloc(size);
}

void *calloc(size_t count, size_t size) {
    if (next_calloc == NULL) {
        if (resolving) return count == 0 || size <= SIZE_MAX / count ? bootstrap_allocate(count * size) : NULL;
        resolve();
    }
    allocations++;
    return next_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (next_realloc == NULL) resolve();
    allocations++;
    if (is_bootstrap(pointer)) {
        void *moved = next_malloc(size);
        size_t available = (size_t)(bootstrap + sizeof bootstrap - (char *)pointer);
        if (moved != NULL) memcpy(moved, pointer, size < available ? size : available);
        return moved;
    }
    return next_realloc(pointer, size);
}

void free(void *pointer) {
    if (pointer == NULL || is_bootstrap(pointer)) return;
    if (next_free == NULL) resolve();
    next_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    if (next_memalign == NULL) resolve();
    allocations++;
    return next_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (next_aligned_alloc == NULL) resolve();
    allocations++;
    return next_aligned_alloc(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (next_posix_memalign == NULL) resolve();
    allocations++;
    return next_posix_memalign(out, alignment, size);
}

uint64_t focusgate_thread_allocations(void) {
    return allocations;
}
