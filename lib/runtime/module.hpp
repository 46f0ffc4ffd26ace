#pragma once
// A cubin loaded through the CUDA runtime's library API, and launches of its kernels. Only the
// worker process uses this (it needs a GPU).
#include <memory>
#include <string>
#include <vector>

namespace sparsetune::runtime {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class Module {
 public:
  // cudaLibraryLoadData; throws CudaError.
  explicit Module(const std::vector<char>& cubin);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // cudaLibraryGetKernel, then cudaLaunchKernel with the kernel handle; checks the launch error
  // and, when sync is set, the stream's completion. stream is a cudaStream_t (null: default).
  void launch(const std::string& kernel, Dim3 grid, Dim3 block, void** args,
              std::size_t shared_bytes = 0, void* stream = nullptr, bool sync = false);

 private:
  void* lib_ = nullptr;  // cudaLibrary_t
};

}  // namespace sparsetune::runtime
