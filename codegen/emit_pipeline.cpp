#include "codegen/emit_pipeline.hpp"

#include <algorithm>
#include <map>

#include "codegen/emit.hpp"
#include "codegen/kernel_builder.hpp"

namespace sparsetune::codegen {

namespace {

constexpr const char* kHostFormat = R"HDR(
// ---- Pipelined run from host memory (IAP-SpTV, Alg. 1) ----------------------------------------
// load_host() keeps the format in page-locked host memory; run_pipelined() copies each part's
// arrays to the device on its stream just before the part's kernel, into that stream's reused
// buffer, so the copy of one part overlaps the kernel of another. Parts go round-robin over the
// streams (tune --op sptv --batches N cuts every slice format into N parts). Device memory: one
// buffer per stream, as large as the largest part it takes, besides v and y.
constexpr int kMaxStreams = 32;

struct HostFormat {
  char* file = nullptr;  // page-locked copy of the whole file
  int streams = 0;
  cudaStream_t stream[kMaxStreams] = {};
  cudaEvent_t done[kMaxStreams] = {};
  void* staging[kMaxStreams] = {};
  cudaEvent_t ready = nullptr;
  const char* data() const { return file + 8 + kHeaderBytes; }
};

inline void release(HostFormat* h) {
  for (int s = 0; s < h->streams; ++s) {
    if (h->staging[s]) cudaFree(h->staging[s]);
    if (h->done[s]) cudaEventDestroy(h->done[s]);
    if (h->stream[s]) cudaStreamDestroy(h->stream[s]);
    h->staging[s] = nullptr;
    h->done[s] = nullptr;
    h->stream[s] = nullptr;
  }
  if (h->ready) cudaEventDestroy(h->ready);
  if (h->file) cudaFreeHost(h->file);
  h->ready = nullptr;
  h->file = nullptr;
  h->streams = 0;
}

inline std::uint64_t part_bytes(int p) {
  std::uint64_t n = 0;
  for (int j = kPartFirst[p]; j < kPartFirst[p] + kPartCount[p]; ++j)
    n += (kRanges[j].end - kRanges[j].begin + 255) / 256 * 256;
  return n;
}

// Reads the format binary into page-locked memory (checked as load() checks it) and prepares
// `streams` streams (1..kMaxStreams) with their device buffers.
inline cudaError_t load_host(const char* path, HostFormat* h, int streams) {
  if (streams < 1 || streams > kMaxStreams) return cudaErrorInvalidValue;
  std::FILE* in = std::fopen(path, "rb");
  if (!in) {
    std::fprintf(stderr, "sparsetune_kernel: cannot open %s\n", path);
    return cudaErrorInvalidValue;
  }
  cudaError_t e = cudaHostAlloc(reinterpret_cast<void**>(&h->file), kFileBytes + 1,
                                cudaHostAllocDefault);
  if (e != cudaSuccess) {
    std::fclose(in);
    return e;
  }
  const std::size_t got = std::fread(h->file, 1, kFileBytes + 1, in);
  std::fclose(in);
  std::uint64_t header = 0, hash = 0xcbf29ce484222325ULL;
  if (got == kFileBytes) std::memcpy(&header, h->file, 8);
  if (header == kHeaderBytes)
    for (std::uint64_t i = 0; i < kHeaderBytes; ++i)
      hash = (hash ^ static_cast<unsigned char>(h->file[8 + i])) * 0x100000001b3ULL;
  const std::string_view text(h->file, got);
  if (got != kFileBytes || header != kHeaderBytes || hash != kHeaderHash ||
      text.substr(8, kHeaderBytes).find(kFingerprint) == std::string_view::npos) {
    std::fprintf(stderr,
                 "sparsetune_kernel: %s is not the format this header was generated for\n", path);
    release(h);
    return cudaErrorInvalidValue;
  }
  h->streams = streams;
  std::uint64_t need[kMaxStreams] = {};
  for (int p = 0; p < kParts; ++p) {
    const int s = kPartGroup[p] % streams;  // the stream part p runs on
    if (part_bytes(p) > need[s]) need[s] = part_bytes(p);
  }
  e = cudaEventCreateWithFlags(&h->ready, cudaEventDisableTiming);
  for (int s = 0; e == cudaSuccess && s < streams; ++s) {
    e = cudaStreamCreateWithFlags(&h->stream[s], cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&h->done[s], cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaMalloc(&h->staging[s], need[s] ? need[s] : 256);
  }
  if (e != cudaSuccess) release(h);
  return e;
}

// The device address part `p`'s array number `k` is copied to in stream `s`'s buffer.
inline const void* staged(const HostFormat& h, int p, int s, int k) {
  std::uint64_t at = 0;
  for (int j = kPartFirst[p]; j < kPartFirst[p] + k; ++j)
    at += (kRanges[j].end - kRanges[j].begin + 255) / 256 * 256;
  return static_cast<const char*>(h.staging[s]) + at;
}

// Copies part `p`'s arrays into stream `s`'s buffer, on that stream.
inline cudaError_t stage(const HostFormat& h, int p, int s) {
  for (int k = 0; k < kPartCount[p]; ++k) {
    const ArrayRange& r = kRanges[kPartFirst[p] + k];
    if (r.end == r.begin) continue;
    const cudaError_t e =
        cudaMemcpyAsync(const_cast<void*>(staged(h, p, s, k)), h.data() + r.begin,
                        r.end - r.begin, cudaMemcpyHostToDevice, h.stream[s]);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
)HDR";

}  // namespace

std::string pipelined_run_section(const graph::Format& f,
                                  const std::vector<std::vector<std::size_t>>& part_arrays,
                                  const std::string& val) {
  // The parts with work, in launch order: their first array and array count.
  std::vector<std::size_t> parts;
  for (const std::size_t i : f.launch_order())
    if (f.parts[i].n_bmtb > 0) parts.push_back(i);
  // A part's stream group: its SLICE_DIV branch. The parts of one branch (HYB's ELL part and COO
  // tail, a storing part and the parts adding after it) share rows of y, so they run on one
  // stream, in launch order; branches hold disjoint rows and spread over the streams.
  std::map<std::string, int> group_of;
  std::string first, count, group;
  for (auto i : parts) {
    first += (first.empty() ? "" : ", ") +
             std::to_string(part_arrays[i].empty() ? 0 : part_arrays[i].front());
    count += (count.empty() ? "" : ", ") + std::to_string(part_arrays[i].size());
    const std::string& path = f.parts[i].path;
    const auto branch = path.substr(0, path.find('.'));
    const int g = group_of.emplace(branch, static_cast<int>(group_of.size())).first->second;
    group += (group.empty() ? "" : ", ") + std::to_string(g);
  }
  if (parts.empty()) first = count = group = "0";
  // Which entry of Y each y[i] is: the tensor's user needs the order to read y.
  std::string order;
  for (int k : f.sptv.y_order) order += (order.empty() ? "" : ", ") + std::to_string(k);
  std::string h = "// SpTV: y holds Y = X x_" + std::to_string(f.sptv.mode) +
                  " v, one entry per non-empty fiber, sorted by the tensor's modes (" + order +
                  ")\n// in that order, slice by slice along mode " +
                  std::to_string(f.sptv.slice_mode) + ".\n";
  h += "constexpr int kParts = " + std::to_string(parts.size()) +
       ";  // parts with work, in launch order\n";
  h += "constexpr int kPartFirst[" + std::to_string(std::max<std::size_t>(1, parts.size())) +
       "] = {" + first + "};  // first array (in kRanges) of each part\n";
  h += "constexpr int kPartCount[" + std::to_string(std::max<std::size_t>(1, parts.size())) +
       "] = {" + count + "};  // its stored arrays\n";
  h += "constexpr int kPartGroup[" + std::to_string(std::max<std::size_t>(1, parts.size())) +
       "] = {" + group +
       "};  // its stream: this modulo the streams (a SLICE_DIV branch's parts "
       "share one)\n";
  h += kHostFormat;
  h += "\n// y = alpha A x + beta y like run(), each part's arrays streamed from host memory; "
       "x and y are\n// device pointers. The work is ordered after `stream`'s earlier work, and "
       "`stream`'s later\n// work after it.\n";
  h += "inline cudaError_t run_pipelined(const HostFormat& h, const value_t* x, result_t* y,\n"
       "                                 result_t alpha, result_t beta, cudaStream_t stream = 0) "
       "{\n";
  h += "  if (h.streams < 1) return cudaErrorInvalidValue;\n";
  if (f.scales_output_first()) {
    h += y_prologue(f.rows);
  } else {
    h += "  cudaError_t e = cudaSuccess;\n";
  }
  h += "  e = cudaEventRecord(h.ready, stream);\n"
       "  for (int s = 0; e == cudaSuccess && s < h.streams; ++s)\n"
       "    e = cudaStreamWaitEvent(h.stream[s], h.ready, 0);\n"
       "  if (e != cudaSuccess) return e;\n";
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const auto& p = f.parts[parts[k]];
    const std::string s = "(kPartGroup[" + std::to_string(k) + "] % h.streams)";
    h += "  if ((e = stage(h, " + std::to_string(k) + ", " + s + ")) != cudaSuccess) return e;\n";
    h += "  " + p.kernel + "<<<" + std::to_string(p.grid) + ", " + std::to_string(p.threads) +
         ", 0, h.stream[" + s + "]>>>(x, y, alpha, beta";
    int a = 0;
    for (const auto& [name, arr] : p.arrays) {
      if (!arr.stored()) continue;
      const std::string t = arr.dtype[0] == 'F' ? val : c_type(arr.dtype, arr.dtype);
      h += ",\n      static_cast<const " + t + "*>(staged(h, " + std::to_string(k) + ", " + s +
           ", " + std::to_string(a++) + "))";
    }
    h += ");\n";
  }
  h += "  for (int s = 0; e == cudaSuccess && s < h.streams; ++s) {\n"
       "    e = cudaEventRecord(h.done[s], h.stream[s]);\n"
       "    if (e == cudaSuccess) e = cudaStreamWaitEvent(stream, h.done[s], 0);\n"
       "  }\n"
       "  (void)alpha;\n"
       "  return e != cudaSuccess ? e : cudaGetLastError();\n}\n\n";
  return h;
}

}  // namespace sparsetune::codegen
