// Entry point of the [gpu] tests: skips the whole binary, visibly, when no CUDA device exists.
// Run as "gpu_tests __worker --fd N" it is the measuring worker of the tests it starts itself.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/device.hpp"
#include "runtime/worker.hpp"

int main(int argc, char* argv[]) {
  if (argc == 4 && std::strcmp(argv[1], sparsetune::runtime::kWorkerSubcommand) == 0 &&
      std::strcmp(argv[2], "--fd") == 0)
    return sparsetune::runtime::worker_serve(std::atoi(argv[3]));
  const auto devices = sparsetune::runtime::list_devices();
  if (devices.empty()) {
    std::printf("SKIPPED: no CUDA device; the [gpu] tests did not run\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
