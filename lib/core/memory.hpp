#pragma once
// Memory checks made before large allocations, so that an input or a request too big for this
// machine is a clear error instead of the system killing the process half-way.
#include <string>

namespace sparsetune {

// Serves large arrays from one heap that keeps what is freed for the next allocation (glibc's
// malloc; elsewhere it does nothing). Call it once, first thing in main. By default each array
// over 32 MB is a fresh mapping, which the kernel zeroes and faults in page by page and unmaps
// again when it is freed, and a thread's arena cannot hold one at all. A design of 10^7 entries
// allocates and frees such arrays over and over: on 16 cores, one `slice-gcn collect` job's host
// side spent 66 s in the kernel and took 42 s; with one reused heap, 12 s and 27 s, for 13 % more
// peak memory (docs/benchmarks.md).
void reuse_freed_memory();

// Physical memory of this machine in bytes; 0 when it cannot be told.
double physical_memory_bytes();

// "12.3 GiB"-style text for a byte count.
std::string gib_text(double bytes);

// Throws Error("<what> needs about X GiB of memory, more than the Y GiB here") when `bytes`
// exceed the physical memory.
void check_memory_need(double bytes, const std::string& what);

}  // namespace sparsetune
