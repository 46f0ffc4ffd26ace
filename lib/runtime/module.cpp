#include "runtime/module.hpp"

#include "runtime/cuda_util.hpp"

namespace sparsetune::runtime {

Module::Module(const std::vector<char>& cubin) {
  if (cubin.empty()) throw Error("cannot load an empty cubin");
  cudaLibrary_t lib = nullptr;
  SPARSETUNE_CUDA(
      cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  lib_ = lib;
}

Module::~Module() {
  if (lib_) cudaLibraryUnload(static_cast<cudaLibrary_t>(lib_));
}

void Module::launch(const std::string& kernel, Dim3 grid, Dim3 block, void** args,
                    std::size_t shared_bytes, void* stream, bool sync) {
  cudaKernel_t k = nullptr;
  cuda_check(cudaLibraryGetKernel(&k, static_cast<cudaLibrary_t>(lib_), kernel.c_str()),
             ("cudaLibraryGetKernel " + kernel).c_str());
  auto s = static_cast<cudaStream_t>(stream);
  cuda_check(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(grid.x, grid.y, grid.z),
                              dim3(block.x, block.y, block.z), args, shared_bytes, s),
             ("launch " + kernel).c_str());
  check_launch(kernel.c_str(), s, sync);
}

}  // namespace sparsetune::runtime
