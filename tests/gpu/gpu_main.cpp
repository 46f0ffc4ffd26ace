// Entry point of the [gpu] tests: skips the whole binary, visibly, when no CUDA device exists.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>

#include "runtime/device.hpp"

int main(int argc, char* argv[]) {
  const auto devices = sparsetune::runtime::list_devices();
  if (devices.empty()) {
    std::printf("SKIPPED: no CUDA device; the [gpu] tests did not run\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
