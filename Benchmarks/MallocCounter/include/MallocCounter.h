#ifndef FOCUSGATE_MALLOC_COUNTER_H
#define FOCUSGATE_MALLOC_COUNTER_H

#include <stdint.h>

/// Heap allocations (malloc, calloc, realloc, aligned allocations) made so far by the calling
/// thread, counted while this library is preloaded (LD_PRELOAD).
uint64_t focusgate_thread_allocations(void);

#endif
