// Counts what the process asks of the allocator: this target defines malloc and its kin, which the
// dynamic linker then uses for the whole process (the executable's symbols come first), adds the size
// to a counter and passes the call on to glibc's own functions. Linked only into the executables that
// measure allocations (EventStream), so that no other benchmark pays for the counting.
#include "AllocationCounter.h"
#include <stdlib.h>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <errno.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static _Atomic size_t requested = 0;
static _Atomic size_t allocations = 0;

static inline void count(size_t bytes) {
    atomic_fetch_add_explicit(&requested, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t size) {
    count(size);
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    count(count_ * size);
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    count(size);
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count(size);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count(size);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    count(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

void free(void *pointer) { __libc_free(pointer); }

size_t nc_bytes_requested(void) { return atomic_load_explicit(&requested, memory_order_relaxed); }
size_t nc_allocations(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }
#else
size_t nc_bytes_requested(void) { return 0; }
size_t nc_allocations(void) { return 0; }
#endif
