#pragma once
// Memory checks made before large allocations, so that an input or a request too big for this
// machine is a clear error instead of the system killing the process half-way.
#include <string>

namespace sparsetune {

// Physical memory of this machine in bytes; 0 when it cannot be told.
double physical_memory_bytes();

// "12.3 GiB"-style text for a byte count.
std::string gib_text(double bytes);

// Throws Error("<what> needs about X GiB of memory, more than the Y GiB here") when `bytes`
// exceed the physical memory.
void check_memory_need(double bytes, const std::string& what);

}  // namespace sparsetune
