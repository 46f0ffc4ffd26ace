#pragma once
// Invariant checks for the fuzz targets: a violated one aborts, which libFuzzer reports.
#include <cstdio>
#include <cstdlib>

#define FUZZ_ASSERT(cond)                                                               \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)
