#pragma once
// NVRTC service: CUDA C++ source to a cubin for one GPU architecture, with no device needed.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "runtime/kernel_cache.hpp"

namespace sparsetune::runtime {

// A failed compilation; what() starts with a one-line summary followed by the compiler log.
class CompileError : public Error {
 public:
  CompileError(const std::string& summary, std::string log)
      : Error(summary + (log.empty() ? std::string() : "\n" + log)), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

struct CompileOptions {
  std::string arch = "sm_90";  // real architecture: the cubin runs on exactly this family
  std::vector<std::string> flags = {"-std=c++17"};  // extra NVRTC options
};

struct CompileJob {
  std::string name;    // program name shown in logs and errors
  std::string source;  // self-contained CUDA C++ (extern "C" kernels)
};

struct Compiled {
  bool ok = false;
  std::vector<char> cubin;
  std::string log;    // compiler log, warnings included
  std::string error;  // set when !ok: the summary and the log
  bool from_cache = false;
};

// "13.0", from nvrtcVersion().
std::string nvrtc_version();

// Validates "sm_XX"/"sm_XXX"/"sm_90a"; throws Error otherwise.
void check_arch(const std::string& arch);

// One compilation; throws CompileError with the log on failure. cache may be null.
Compiled compile(const CompileJob& job, const CompileOptions& opts, const KernelCache* cache);

// Many candidates at once on a pool of host threads (threads = 0: all cores). Never throws for a
// candidate's failure: each result says whether it compiled.
std::vector<Compiled> compile_batch(const std::vector<CompileJob>& jobs, const CompileOptions& opts,
                                    const KernelCache* cache, unsigned threads = 0);

}  // namespace sparsetune::runtime
