#include "core/memory.hpp"

#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdio>

#include "core/error.hpp"

namespace sparsetune {

void reuse_freed_memory() {
#if defined(__GLIBC__)
  // Arrays up to 1 GiB from the heap, and every thread from the main arena: a thread's own arena
  // cannot grow past 64 MB, so its larger arrays would be mappings again.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_ARENA_MAX, 1);
#endif
}

double physical_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && size > 0) return static_cast<double>(pages) * static_cast<double>(size);
#endif
  return 0.0;
}

std::string gib_text(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g GiB", bytes / 1073741824.0);
  return buf;
}

void check_memory_need(double bytes, const std::string& what) {
  const double memory = physical_memory_bytes();
  if (memory > 0 && bytes > memory)
    throw Error(what + " needs about " + gib_text(bytes) + " of memory, more than the " +
                gib_text(memory) + " here");
}

}  // namespace sparsetune
