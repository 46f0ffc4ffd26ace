#include "runtime/nvrtc.hpp"

#include <nvrtc.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/arch_name.hpp"
#include "runtime/thread_pool.hpp"

namespace sparsetune::runtime {

namespace {
std::string program_log(nvrtcProgram prog) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

void check(nvrtcResult r, const std::string& what, const std::string& log = "") {
  if (r != NVRTC_SUCCESS) throw CompileError(what + ": " + nvrtcGetErrorString(r), log);
}

struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtcDestroyProgram(&p);
  }
};
}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

void check_arch(const std::string& arch) {
  const int number = arch_number(arch);
  if (number < 0)
    throw Error("bad GPU architecture '" + arch + "' (expected e.g. sm_80 or sm_90a)");
  // One this NVRTC compiles for: an old one (sm_20) failed every candidate's compile instead.
  // Asked once: every compile checks its architecture.
  static const std::vector<int> archs = [] {
    int n = 0;
    std::vector<int> v;
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
      v.resize(static_cast<std::size_t>(n));
      if (nvrtcGetSupportedArchs(v.data()) != NVRTC_SUCCESS) v.clear();
    }
    return v;
  }();
  if (archs.empty() || std::find(archs.begin(), archs.end(), number) != archs.end()) return;
  throw Error("GPU architecture '" + arch + "' is not one NVRTC " + nvrtc_version() +
              " compiles for (sm_" + std::to_string(archs.front()) + " to sm_" +
              std::to_string(archs.back()) + ")");
}

Compiled compile(const CompileJob& job, const CompileOptions& opts, const KernelCache* cache) {
  check_arch(opts.arch);
  std::vector<std::string> options = {"-arch=" + opts.arch};
  options.insert(options.end(), opts.flags.begin(), opts.flags.end());
  const std::string version = nvrtc_version();
  std::string key;
  if (cache) {
    key = KernelCache::key(job.source, opts.arch, version, options);
    if (auto hit = cache->get(key)) {
      Compiled c;
      c.ok = true;
      c.cubin = std::move(*hit);
      c.from_cache = true;
      return c;
    }
  }
  Program prog;
  check(nvrtcCreateProgram(&prog.p, job.source.c_str(), (job.name + ".cu").c_str(), 0, nullptr,
                           nullptr),
        "nvrtc: cannot create program " + job.name);
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult r = nvrtcCompileProgram(prog.p, static_cast<int>(argv.size()), argv.data());
  Compiled c;
  c.log = program_log(prog.p);
  check(r, "nvrtc: " + job.name + " does not compile for " + opts.arch, c.log);
  std::size_t size = 0;
  check(nvrtcGetCUBINSize(prog.p, &size), "nvrtc: no cubin for " + job.name, c.log);
  if (size == 0) throw CompileError("nvrtc: empty cubin for " + job.name, c.log);
  c.cubin.resize(size);
  check(nvrtcGetCUBIN(prog.p, c.cubin.data()), "nvrtc: no cubin for " + job.name, c.log);
  c.ok = true;
  if (cache) cache->put(key, c.cubin);
  return c;
}

std::vector<Compiled> compile_batch(const std::vector<CompileJob>& jobs, const CompileOptions& opts,
                                    const KernelCache* cache, unsigned threads) {
  std::vector<Compiled> out(jobs.size());
  parallel_for(
      static_cast<std::int64_t>(jobs.size()),
      [&](std::int64_t i) {
        try {
          out[i] = compile(jobs[i], opts, cache);
        } catch (const CompileError& e) {
          out[i].ok = false;
          out[i].log = e.log();
          out[i].error = e.what();
        } catch (const std::exception& e) {
          out[i].ok = false;
          out[i].error = e.what();
        }
      },
      threads);
  return out;
}

}  // namespace sparsetune::runtime
