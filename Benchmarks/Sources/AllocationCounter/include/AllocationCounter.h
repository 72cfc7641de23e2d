#ifndef NC_ALLOCATION_COUNTER_H
#define NC_ALLOCATION_COUNTER_H
#include <stddef.h>

/// Bytes asked of the allocator so far (malloc, calloc, realloc and the aligned forms), by every
/// thread, since the process started; 0 where the allocator cannot be interposed (not glibc).
size_t nc_bytes_requested(void);
/// How many allocations were asked for so far.
size_t nc_allocations(void);
#endif
