#ifndef NETWORKCORE_ALLOCATED_BYTES_H
#define NETWORKCORE_ALLOCATED_BYTES_H
#include <stddef.h>

/// Bytes the process has allocated with malloc and not freed, across every arena
/// (glibc's mallinfo2: in use from the heap plus in use from mmap); 0 where that is not available.
size_t nc_allocated_bytes(void);

#endif
