#include "runtime/gpu_jobs.hpp"

#include <cuda_fp16.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/convert.hpp"
#include "core/random_fill.hpp"
#include "core/reference.hpp"
#include "runtime/cuda_util.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/module.hpp"
#include "runtime/plan_job.hpp"
#include "runtime/problem_file.hpp"
#include "runtime/sptv_kernel.hpp"
#include "runtime/sptv_pipeline.hpp"
#include "runtime/stats.hpp"
#include "runtime/timing.hpp"

namespace sparsetune::runtime {

namespace {

// A baseline that cuSPARSE declines for this data type or layout.
class Unsupported : public Error {
 public:
  using Error::Error;
};
// A baseline left out on purpose (e.g. its format would store too many explicit zeros).
class Skipped : public Error {
 public:
  using Error::Error;
};

void sp_check(cusparseStatus_t s, const char* what) {
  if (s == CUSPARSE_STATUS_SUCCESS) return;
  const std::string msg = std::string(what) + ": " + cusparseGetErrorString(s);
  if (s == CUSPARSE_STATUS_NOT_SUPPORTED) throw Unsupported(msg);
  // These may leave the context unusable: the worker must not carry on.
  if (s == CUSPARSE_STATUS_EXECUTION_FAILED || s == CUSPARSE_STATUS_INTERNAL_ERROR)
    throw CudaError(msg);
  throw Error(msg);
}
#define SPARSETUNE_SP(call) sp_check((call), #call)

// ---- data types -------------------------------------------------------------------------------

cudaDataType value_type(DType t) {
  return t == DType::f16 ? CUDA_R_16F : t == DType::f32 ? CUDA_R_32F : CUDA_R_64F;
}
cudaDataType compute_type(DType t) { return t == DType::f64 ? CUDA_R_64F : CUDA_R_32F; }

std::vector<char> pack(const std::vector<double>& v, DType t) {
  std::vector<char> out(v.size() * dtype_bytes(t));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (t == DType::f64) {
      std::memcpy(out.data() + 8 * i, &v[i], 8);
    } else if (t == DType::f32) {
      const float f = static_cast<float>(v[i]);
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else {
      const __half h = __float2half(static_cast<float>(v[i]));
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

std::vector<double> unpack(const char* p, std::size_t count, DType t) {
  std::vector<double> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (t == DType::f64) {
      std::memcpy(&out[i], p + 8 * i, 8);
    } else if (t == DType::f32) {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      out[i] = f;
    } else {
      __half h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = __half2float(h);
    }
  }
  return out;
}

// The values the GPU will really see: reference results are computed from these.
std::vector<double> round_to(const std::vector<double>& v, DType t) {
  const auto p = pack(v, t);
  return unpack(p.data(), v.size(), t);
}

// ---- context ----------------------------------------------------------------------------------

// The baselines' stream, events and flush buffer (callers say what needed the GPU), and a
// cuSPARSE handle on that stream.
struct Context : TimedStream {
  cusparseHandle_t handle = nullptr;

  Context() {
    SPARSETUNE_SP(cusparseCreate(&handle));
    SPARSETUNE_SP(cusparseSetStream(handle, stream));
  }
  ~Context() {
    if (handle) cusparseDestroy(handle);
  }

  // Milliseconds of one op between two events (the op is queued on `stream`).
  double time_once(const std::function<void()>& op) const {
    return runtime::time_once(timing(), op);
  }
};

std::unique_ptr<Context> g_context;
Context& context() {
  if (!g_context) g_context = std::make_unique<Context>();
  return *g_context;
}

double measure_bandwidth(Context& c) {
  std::size_t free_b = 0, total_b = 0;
  SPARSETUNE_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t bytes =
      std::min<std::size_t>(std::size_t{1} << 30, free_b / 4) & ~std::size_t{255};
  DeviceMem a(bytes), b(bytes);
  SPARSETUNE_CUDA(cudaMemset(a.get(), 1, bytes));
  auto copy = [&] {
    SPARSETUNE_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, c.stream));
  };
  // The flushed median only: a 1 GiB copy gains nothing from L2 and warm batches would add time.
  const Stats s = time_op(c.timing(), copy, 15, kWarmupRuns, 0).flushed_ms;
  return 2.0 * static_cast<double>(bytes) / (s.median * 1e-3) * 1e-9;  // read + written, GB/s
}

// ---- the loaded problem -----------------------------------------------------------------------

struct Problem {
  bool loaded = false;
  std::string op;  // spmv | spmm | sptv
  DType dtype = DType::f32;
  std::uint64_t seed = 1;
  Csr32 a;  // values rounded to dtype; for sptv the mode unfolding (one row per fiber)
  std::int64_t max_len = 0;
  // sptv only
  int order = 0, mode = 0;
  std::int64_t mode_dim = 0;
  SparseTensor tensor;
  std::vector<std::int32_t> fiber_of, kidx;  // per entry, in the unfolding's entry order
  std::vector<char> sptv_cubin;
  // dense inputs (row-major cols × n) and reference outputs (row-major rows × n), per n
  std::map<std::int64_t, std::vector<double>> x, ref;

  const std::vector<double>& input(std::int64_t n) {
    auto it = x.find(n);
    if (it == x.end())
      it = x.emplace(
                n, round_to(random_uniform(a.cols * n, seed, static_cast<std::uint64_t>(n)), dtype))
               .first;
    return it->second;
  }
  const std::vector<double>& reference(std::int64_t n) {
    auto it = ref.find(n);
    if (it == ref.end()) {
      const auto& in = input(n);
      if (op == "sptv")  // the true SpTV reference, not the unfolding's SpMV
        it = ref.emplace(n, sptv_reference(tensor, mode, in).val).first;
      else
        it = ref.emplace(n, op == "spmm" ? spmm_reference(a, in, n) : spmv_reference(a, in)).first;
    }
    return it->second;
  }
};
Problem g_problem;

void check_32bit(std::int64_t rows, std::int64_t cols, std::int64_t nnz) {
  const std::int64_t lim = std::numeric_limits<std::int32_t>::max();
  if (rows > lim || cols > lim || nnz > lim)
    throw Error("the cuSPARSE baselines use 32-bit indices; this problem is too large");
}

nlohmann::json load(const nlohmann::json& req) {
  Problem p;
  p.op = req.at("op").get<std::string>();
  p.dtype = parse_dtype(req.value("dtype", std::string("f32")));
  p.seed = req.value("seed", std::uint64_t{1});
  const std::string path = req.at("path").get<std::string>();
  if (p.op == "spmv" || p.op == "spmm") {
    Csr64 a = read_matrix_problem(path);
    check_32bit(a.rows, a.cols, a.nnz());
    a.val = round_to(a.val, p.dtype);
    p.a = index_cast<std::int32_t, std::int32_t>(a);
  } else if (p.op == "sptv") {
    SparseTensor t = read_tensor_problem(path);
    p.mode = req.at("mode").get<int>();
    t.val = round_to(t.val, p.dtype);
    Unfolding u = unfold(t, p.mode);
    p.order = u.order;
    p.mode_dim = u.mode_dim;
    p.a = std::move(u.a);
    p.fiber_of = std::move(u.fiber_of);
    p.kidx = p.a.col_idx;
    p.tensor = std::move(t);
    if (req.contains("sptv_cubin"))
      p.sptv_cubin = read_file_bytes(req["sptv_cubin"].get<std::string>());
  } else {
    throw Error("unknown operation '" + p.op + "' (expected spmv, spmm or sptv)");
  }
  for (std::int64_t r = 0; r < p.a.rows; ++r) p.max_len = std::max(p.max_len, p.a.row_length(r));
  p.loaded = true;
  g_problem = std::move(p);
  return {{"rows", g_problem.a.rows},
          {"cols", g_problem.a.cols},
          {"nnz", g_problem.a.nnz()},
          {"max_len", g_problem.max_len}};
}

// ---- device-side operands ---------------------------------------------------------------------

// Owns the device arrays and cuSPARSE descriptors of one baseline run.
struct Holder {
  std::deque<DeviceMem> mem;  // a deque: references to earlier buffers survive later ones
  std::vector<cusparseSpMatDescr_t> sp;
  std::vector<cusparseDnVecDescr_t> vec;
  std::vector<cusparseDnMatDescr_t> mat;
  // SpTV's baselines are also timed with transfers: then every upload keeps its host bytes.
  bool keep_uploads = false;
  std::vector<std::pair<const DeviceMem*, std::vector<char>>> uploads;
  ~Holder() {
    for (auto d : sp) cusparseDestroySpMat(d);
    for (auto d : vec) cusparseDestroyDnVec(d);
    for (auto d : mat) cusparseDestroyDnMat(d);
  }
  // Never a null pointer, even for empty arrays: some descriptors reject null.
  void* alloc(std::size_t bytes) {
    mem.emplace_back(std::max<std::size_t>(bytes, 256));
    return mem.back().get();
  }
  template <class T>
  void* upload(const std::vector<T>& v) {
    void* p = alloc(v.size() * sizeof(T));
    mem.back().upload(v.data(), v.size() * sizeof(T));
    if (keep_uploads) {
      const auto* bytes = reinterpret_cast<const char*>(v.data());
      uploads.emplace_back(&mem.back(), std::vector<char>(bytes, bytes + v.size() * sizeof(T)));
    }
    return p;
  }
  void* upload_bytes(const std::vector<char>& v) { return upload(v); }
};

struct Sparse {
  cusparseSpMatDescr_t A = nullptr;
  std::int64_t rows_p = 0, cols_p = 0;  // padded to whole blocks where the format needs it
  std::string note;
};

Sparse make_csr(Holder& h, const Problem& p) {
  Sparse s{nullptr, p.a.rows, p.a.cols, ""};
  SPARSETUNE_SP(cusparseCreateCsr(&s.A, p.a.rows, p.a.cols, p.a.nnz(), h.upload(p.a.row_ptr),
                                  h.upload(p.a.col_idx), h.upload_bytes(pack(p.a.val, p.dtype)),
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                  value_type(p.dtype)));
  h.sp.push_back(s.A);
  return s;
}

Sparse make_coo(Holder& h, const Problem& p) {
  std::vector<std::int32_t> row(p.a.nnz());  // row-sorted, as the CSR is
  for (std::int64_t r = 0; r < p.a.rows; ++r)
    for (auto k = p.a.row_ptr[r]; k < p.a.row_ptr[r + 1]; ++k)
      row[k] = static_cast<std::int32_t>(r);
  Sparse s{nullptr, p.a.rows, p.a.cols, "row-sorted"};
  SPARSETUNE_SP(cusparseCreateCoo(&s.A, p.a.rows, p.a.cols, p.a.nnz(), h.upload(row),
                                  h.upload(p.a.col_idx), h.upload_bytes(pack(p.a.val, p.dtype)),
                                  CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                  value_type(p.dtype)));
  h.sp.push_back(s.A);
  return s;
}

// Sliced ELL, slices of 32 rows, each slice stored column by column and padded to its longest
// row (padding: column -1, value 0).
Sparse make_sell(Holder& h, const Problem& p) {
  constexpr std::int64_t C = 32;
  const std::int64_t slices = (p.a.rows + C - 1) / C;
  std::vector<std::int32_t> offsets(slices + 1, 0);
  for (std::int64_t s = 0; s < slices; ++s) {
    std::int64_t width = 0;
    for (std::int64_t r = s * C; r < std::min(p.a.rows, (s + 1) * C); ++r)
      width = std::max(width, p.a.row_length(r));
    const std::int64_t next = offsets[s] + width * C;
    if (next > std::numeric_limits<std::int32_t>::max())
      throw Skipped("sliced ELL would exceed 2^31 stored entries");
    offsets[s + 1] = static_cast<std::int32_t>(next);
  }
  std::vector<std::int32_t> col(offsets.back(), -1);
  std::vector<double> val(offsets.back(), 0.0);
  for (std::int64_t r = 0; r < p.a.rows; ++r) {
    const std::int64_t base = offsets[r / C] + r % C;
    for (auto k = p.a.row_ptr[r]; k < p.a.row_ptr[r + 1]; ++k) {
      const std::int64_t at = base + (k - p.a.row_ptr[r]) * C;
      col[at] = p.a.col_idx[k];
      val[at] = p.a.val[k];
    }
  }
  Sparse s{nullptr, p.a.rows, p.a.cols, ""};
  const double fill = offsets.back() ? double(p.a.nnz()) / offsets.back() : 1.0;
  s.note = "slice 32, fill " + std::to_string(fill).substr(0, 4);
  SPARSETUNE_SP(cusparseCreateSlicedEll(
      &s.A, p.a.rows, p.a.cols, p.a.nnz(), offsets.back(), C, h.upload(offsets), h.upload(col),
      h.upload_bytes(pack(val, p.dtype)), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
      CUSPARSE_INDEX_BASE_ZERO, value_type(p.dtype)));
  h.sp.push_back(s.A);
  return s;
}

// Non-empty b×b blocks of each block row, ascending.
std::vector<std::vector<std::int32_t>> block_columns(const Csr32& a, std::int64_t b) {
  const std::int64_t brows = (a.rows + b - 1) / b;
  std::vector<std::vector<std::int32_t>> cols(brows);
  for (std::int64_t br = 0; br < brows; ++br) {
    auto& c = cols[br];
    for (std::int64_t r = br * b; r < std::min(a.rows, (br + 1) * b); ++r)
      for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
        c.push_back(static_cast<std::int32_t>(a.col_idx[k] / b));
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }
  return cols;
}

// Blocked formats pay for every explicit zero inside a stored block. They are used only when the
// stored blocks are at least half full (fill = nnz / stored entries >= 1/2): then the value
// traffic at most doubles while the index traffic shrinks by b². The largest block size in
// {16, 8, 4, 2} that passes is taken.
constexpr double kMinBlockFill = 0.5;

Sparse make_bsr(Holder& h, const Problem& p) {
  for (std::int64_t b : {16, 8, 4, 2}) {
    const auto bc = block_columns(p.a, b);
    std::int64_t blocks = 0;
    for (const auto& c : bc) blocks += static_cast<std::int64_t>(c.size());
    const double fill = blocks ? double(p.a.nnz()) / double(blocks * b * b) : 0.0;
    if (fill < kMinBlockFill) continue;
    const std::int64_t brows = static_cast<std::int64_t>(bc.size());
    const std::int64_t bcols = (p.a.cols + b - 1) / b;
    std::vector<std::int32_t> bptr(brows + 1, 0), bcol;
    for (std::int64_t br = 0; br < brows; ++br) {
      bptr[br + 1] = bptr[br] + static_cast<std::int32_t>(bc[br].size());
      bcol.insert(bcol.end(), bc[br].begin(), bc[br].end());
    }
    std::vector<double> val(blocks * b * b, 0.0);  // row-major inside each block
    for (std::int64_t r = 0; r < p.a.rows; ++r) {
      const auto& c = bc[r / b];
      for (auto k = p.a.row_ptr[r]; k < p.a.row_ptr[r + 1]; ++k) {
        const std::int32_t bj = static_cast<std::int32_t>(p.a.col_idx[k] / b);
        const auto blk = bptr[r / b] + (std::lower_bound(c.begin(), c.end(), bj) - c.begin());
        val[blk * b * b + (r % b) * b + p.a.col_idx[k] % b] = p.a.val[k];
      }
    }
    Sparse s{nullptr, brows * b, bcols * b,
             "block " + std::to_string(b) + ", fill " + std::to_string(fill).substr(0, 4)};
    SPARSETUNE_SP(cusparseCreateBsr(
        &s.A, brows, bcols, blocks, b, b, h.upload(bptr), h.upload(bcol),
        h.upload_bytes(pack(val, p.dtype)), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_BASE_ZERO, value_type(p.dtype), CUSPARSE_ORDER_ROW));
    h.sp.push_back(s.A);
    return s;
  }
  throw Skipped("block fill below 1/2 for every block size 16, 8, 4, 2");
}

// Blocked-ELL: every block row holds the same number of b×b blocks (padding: block column -1).
Sparse make_blocked_ell(Holder& h, const Problem& p) {
  for (std::int64_t b : {16, 8, 4, 2}) {
    const auto bc = block_columns(p.a, b);
    std::int64_t width = 0;
    for (const auto& c : bc) width = std::max<std::int64_t>(width, c.size());
    const std::int64_t brows = static_cast<std::int64_t>(bc.size());
    const double stored = double(brows) * double(width) * double(b * b);
    const double fill = stored > 0 ? double(p.a.nnz()) / stored : 0.0;
    if (fill < kMinBlockFill) continue;
    const std::int64_t rows_p = brows * b, cols_p = (p.a.cols + b - 1) / b * b;
    const std::int64_t ell_cols = width * b;
    std::vector<std::int32_t> ecol(brows * width, -1);
    for (std::int64_t br = 0; br < brows; ++br)
      std::copy(bc[br].begin(), bc[br].end(), ecol.begin() + br * width);
    std::vector<double> val(rows_p * ell_cols, 0.0);  // row-major rows_p × ell_cols
    for (std::int64_t r = 0; r < p.a.rows; ++r) {
      const auto& c = bc[r / b];
      for (auto k = p.a.row_ptr[r]; k < p.a.row_ptr[r + 1]; ++k) {
        const std::int32_t bj = static_cast<std::int32_t>(p.a.col_idx[k] / b);
        const auto slot = std::lower_bound(c.begin(), c.end(), bj) - c.begin();
        val[r * ell_cols + slot * b + p.a.col_idx[k] % b] = p.a.val[k];
      }
    }
    Sparse s{nullptr, rows_p, cols_p,
             "block " + std::to_string(b) + ", fill " + std::to_string(fill).substr(0, 4)};
    SPARSETUNE_SP(cusparseCreateBlockedEll(&s.A, rows_p, cols_p, b, ell_cols, h.upload(ecol),
                                           h.upload_bytes(pack(val, p.dtype)), CUSPARSE_INDEX_32I,
                                           CUSPARSE_INDEX_BASE_ZERO, value_type(p.dtype)));
    h.sp.push_back(s.A);
    return s;
  }
  throw Skipped("Blocked-ELL fill below 1/2 for every block size 16, 8, 4, 2");
}

// ---- measuring one configured operation ------------------------------------------------------

struct Scalars {
  float f1 = 1.f, f0 = 0.f;
  double d1 = 1.0, d0 = 0.0;
  const void* one(DType t) const { return t == DType::f64 ? static_cast<const void*>(&d1) : &f1; }
  const void* zero(DType t) const { return t == DType::f64 ? static_cast<const void*>(&d0) : &f0; }
};

// Poisons the output (all bytes 0xFF: NaN in f16, f32 and f64), runs the op once, checks that
// every output entry was written and compares with the reference; then times it.
nlohmann::json finish(Context& c, Problem& p, const std::function<void()>& op, const DeviceMem& out,
                      const std::function<std::vector<double>()>& result,
                      const std::vector<double>& ref, const OpCost& cost, int runs,
                      double preprocess_ms, const std::string& note, bool tf32 = false) {
  SPARSETUNE_CUDA(cudaMemsetAsync(out.get(), 0xff, out.bytes(), c.stream));
  op();
  SPARSETUNE_CUDA(cudaStreamSynchronize(c.stream));
  cuda_check(cudaGetLastError(), "checking run");
  const std::vector<double> y = result();
  const double tol = tf32 ? error_tolerance_tf32(p.max_len) : error_tolerance(p.dtype, p.max_len);
  const OutputCheck check = check_output(y, ref, tol);
  const Timing t = time_op(c.timing(), op, runs);
  nlohmann::json j = result_json(check, t.flushed_ms, t.warm_ms, cost, note);
  if (preprocess_ms >= 0) j["preprocess_ms"] = preprocess_ms;
  return j;
}

// The paper's setting for SpTV: every array the baseline uploaded (the tensor's or the
// unfolding's arrays and v) copied from pinned host memory, the op, and y copied back, all on
// the stream between two events; 2 warm-up runs, then `runs` timed ones.
nlohmann::json time_with_transfers(Context& c, const Holder& h, const DeviceMem& y,
                                   std::size_t y_bytes, const std::function<void()>& op, int runs) {
  std::vector<std::unique_ptr<PinnedMem>> host;
  std::size_t h2d = 0;
  for (const auto& [dev, bytes] : h.uploads) {
    host.push_back(std::make_unique<PinnedMem>(std::max<std::size_t>(bytes.size(), 1)));
    std::memcpy(host.back()->get(), bytes.data(), bytes.size());
    h2d += bytes.size();
  }
  PinnedMem out(std::max<std::size_t>(y_bytes, 1));
  auto run = [&] {
    for (std::size_t i = 0; i < h.uploads.size(); ++i)
      if (!h.uploads[i].second.empty())
        SPARSETUNE_CUDA(cudaMemcpyAsync(h.uploads[i].first->get(), host[i]->get(),
                                        h.uploads[i].second.size(), cudaMemcpyHostToDevice,
                                        c.stream));
    op();
    if (y_bytes)
      SPARSETUNE_CUDA(
          cudaMemcpyAsync(out.get(), y.get(), y_bytes, cudaMemcpyDeviceToHost, c.stream));
  };
  for (int i = 0; i < 2; ++i) c.time_once(run);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) ms.push_back(c.time_once(run));
  const Stats s = summarize(ms);
  return {{"median", s.median}, {"min", s.min},    {"max", s.max},     {"q1", s.q1},
          {"q3", s.q3},         {"runs", s.count}, {"h2d_bytes", h2d}, {"d2h_bytes", y_bytes}};
}

// out_bytes: SpMM's C values (0: the problem's value type).
OpCost cost_of(const Problem& p, std::int64_t n, int out_bytes = 0) {
  const int vb = dtype_bytes(p.dtype);
  if (p.op == "sptv") return sptv_cost(p.order, p.a.nnz(), p.mode_dim, p.a.rows, 4, vb);
  if (p.op == "spmm") return spmm_cost(p.a.rows, p.a.cols, p.a.nnz(), n, 4, vb, out_bytes);
  return spmv_cost(p.a.rows, p.a.cols, p.a.nnz(), 4, vb);
}

nlohmann::json run_spmv(Context& c, Problem& p, Holder& h, const Sparse& s, cusparseSpMVAlg_t alg,
                        int runs) {
  const DType t = p.dtype;
  const int vb = dtype_bytes(t);
  std::vector<double> xin = p.input(1);
  xin.resize(s.cols_p, 0.0);  // padded columns of blocked formats meet zeros
  void* x = h.upload_bytes(pack(xin, t));
  void* y = h.alloc(s.rows_p * vb);
  const DeviceMem& ymem = h.mem.back();
  cusparseDnVecDescr_t dx, dy;
  SPARSETUNE_SP(cusparseCreateDnVec(&dx, s.cols_p, x, value_type(t)));
  h.vec.push_back(dx);
  SPARSETUNE_SP(cusparseCreateDnVec(&dy, s.rows_p, y, value_type(t)));
  h.vec.push_back(dy);
  Scalars k;
  std::size_t size = 0;
  SPARSETUNE_SP(cusparseSpMV_bufferSize(c.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, k.one(t), s.A,
                                        dx, k.zero(t), dy, compute_type(t), alg, &size));
  void* buf = h.alloc(size);
  const double pre = c.time_once([&] {
    SPARSETUNE_SP(cusparseSpMV_preprocess(c.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, k.one(t), s.A,
                                          dx, k.zero(t), dy, compute_type(t), alg, buf));
  });
  auto op = [&] {
    SPARSETUNE_SP(cusparseSpMV(c.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, k.one(t), s.A, dx,
                               k.zero(t), dy, compute_type(t), alg, buf));
  };
  auto result = [&] {
    std::vector<char> raw(s.rows_p * vb);
    ymem.download(raw.data(), raw.size());
    return unpack(raw.data(), p.a.rows, t);
  };
  auto j = finish(c, p, op, ymem, result, p.reference(1), cost_of(p, 1), runs, pre, s.note);
  if (p.op == "sptv" && j.value("verified", false))
    j["with_transfers_ms"] = time_with_transfers(c, h, ymem, p.a.rows * vb, op, runs);
  return j;
}

// C is of type ct: the problem's value type, or fp32 beside fp16 A and B.
nlohmann::json run_spmm_layout(Context& c, Problem& p, Holder& h, const Sparse& s,
                               cusparseSpMMAlg_t alg, std::int64_t n, int runs,
                               cusparseOrder_t order, DType ct) {
  const DType t = p.dtype;
  const int cb = dtype_bytes(ct);
  const bool row_major = order == CUSPARSE_ORDER_ROW;
  const auto& bin = p.input(n);  // row-major cols × n
  std::vector<double> b(s.cols_p * n, 0.0);
  for (std::int64_t i = 0; i < p.a.cols; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      b[row_major ? i * n + j : j * s.cols_p + i] = bin[i * n + j];
  void* db = h.upload_bytes(pack(b, t));
  void* dc = h.alloc(s.rows_p * n * cb);
  const DeviceMem& cmem = h.mem.back();
  cusparseDnMatDescr_t B, C;
  SPARSETUNE_SP(
      cusparseCreateDnMat(&B, s.cols_p, n, row_major ? n : s.cols_p, db, value_type(t), order));
  h.mat.push_back(B);
  SPARSETUNE_SP(
      cusparseCreateDnMat(&C, s.rows_p, n, row_major ? n : s.rows_p, dc, value_type(ct), order));
  h.mat.push_back(C);
  Scalars k;
  const auto nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
  std::size_t size = 0;
  SPARSETUNE_SP(cusparseSpMM_bufferSize(c.handle, nt, nt, k.one(t), s.A, B, k.zero(t), C,
                                        compute_type(t), alg, &size));
  void* buf = h.alloc(size);
  auto prep = [&] {
    SPARSETUNE_SP(cusparseSpMM_preprocess(c.handle, nt, nt, k.one(t), s.A, B, k.zero(t), C,
                                          compute_type(t), alg, buf));
  };
  c.time_once(prep);  // as for SpMV: the second call is the one reported
  const double pre = c.time_once(prep);
  auto op = [&] {
    SPARSETUNE_SP(
        cusparseSpMM(c.handle, nt, nt, k.one(t), s.A, B, k.zero(t), C, compute_type(t), alg, buf));
  };
  auto result = [&] {
    std::vector<char> raw(s.rows_p * n * cb);
    cmem.download(raw.data(), raw.size());
    const auto all = unpack(raw.data(), s.rows_p * n, ct);
    std::vector<double> out(p.a.rows * n);
    for (std::int64_t i = 0; i < p.a.rows; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        out[i * n + j] = all[row_major ? i * n + j : j * s.rows_p + i];
    return out;
  };
  std::string note = s.note;
  if (!row_major) note += note.empty() ? "column-major B, C" : "; column-major B, C";
  if (t == DType::f16)
    note += std::string(note.empty() ? "" : "; ") +
            (ct == DType::f32 ? "fp32 C" : "fp16 C (cuSPARSE declines an fp32 C here)");
  // Blocked-ELL SpMM multiplies f32 data on tensor cores in TF32: its errors are of that size.
  const bool tf32 = alg == CUSPARSE_SPMM_BLOCKED_ELL_ALG1 && t == DType::f32;
  if (tf32) note += "; TF32 tolerance";
  return finish(c, p, op, cmem, result, p.reference(n), cost_of(p, n, cb), runs, pre, note, tf32);
}

// Row-major dense operands first (the reference layout); column-major where cuSPARSE wants it.
// f16: fp16 A and B with an fp32 C (compute type fp32), as the generated kernels take them; an
// fp16 C only where cuSPARSE declines that mix in both layouts.
nlohmann::json run_spmm(Context& c, Problem& p, const std::function<Sparse(Holder&)>& make,
                        cusparseSpMMAlg_t alg, std::int64_t n, int runs) {
  const auto in_layouts = [&](DType ct) {
    try {
      Holder h;
      return run_spmm_layout(c, p, h, make(h), alg, n, runs, CUSPARSE_ORDER_ROW, ct);
    } catch (const Unsupported&) {
      Holder h;
      return run_spmm_layout(c, p, h, make(h), alg, n, runs, CUSPARSE_ORDER_COL, ct);
    }
  };
  if (p.dtype != DType::f16) return in_layouts(p.dtype);
  try {
    return in_layouts(DType::f32);
  } catch (const Unsupported&) {
    return in_layouts(DType::f16);
  }
}

nlohmann::json run_coo_atomic(Context& c, Problem& p, int runs) {
  if (p.dtype == DType::f16) throw Unsupported("the COO atomic kernel has f32 and f64 variants");
  if (p.sptv_cubin.empty()) throw Error("no compiled COO atomic kernel was handed over");
  Module m(p.sptv_cubin);
  Holder h;
  h.keep_uploads = true;
  const DType t = p.dtype;
  const int vb = dtype_bytes(t);
  void* fiber = h.upload(p.fiber_of);
  void* kk = h.upload(p.kidx);
  void* val = h.upload_bytes(pack(p.a.val, t));
  void* v = h.upload_bytes(pack(p.input(1), t));
  void* y = h.alloc(p.a.rows * vb);
  const DeviceMem& ymem = h.mem.back();
  long long nnz = p.a.nnz();
  const std::string name = t == DType::f32 ? "sptv_coo_atomic_f32" : "sptv_coo_atomic_f64";
  const unsigned block = 256;
  const auto grid = static_cast<unsigned>(std::clamp<long long>(
      (nnz + block - 1) / block, 1, static_cast<long long>(c.prop.multiProcessorCount) * 32));
  auto op = [&] {
    SPARSETUNE_CUDA(cudaMemsetAsync(y, 0, p.a.rows * vb, c.stream));
    void* args[] = {&nnz, &fiber, &kk, &val, &v, &y};
    m.launch(name, {grid, 1, 1}, {block, 1, 1}, args, 0, c.stream, false);
  };
  auto result = [&] {
    std::vector<char> raw(p.a.rows * vb);
    ymem.download(raw.data(), raw.size());
    return unpack(raw.data(), p.a.rows, t);
  };
  auto j = finish(c, p, op, ymem, result, p.reference(1), cost_of(p, 1), runs, -1.0,
                  "one thread per non-zero, atomicAdd");
  if (j.value("verified", false))
    j["with_transfers_ms"] = time_with_transfers(c, h, ymem, p.a.rows * vb, op, runs);
  return j;
}

nlohmann::json run_named(Context& c, Problem& p, const std::string& name, std::int64_t n,
                         int runs) {
  auto spmv = [&](const std::function<Sparse(Holder&)>& make, cusparseSpMVAlg_t alg) {
    Holder h;
    h.keep_uploads = p.op == "sptv";
    return run_spmv(c, p, h, make(h), alg, runs);
  };
  auto csr = [&](Holder& h) { return make_csr(h, p); };
  auto coo = [&](Holder& h) { return make_coo(h, p); };
  if (p.op == "spmv" || p.op == "sptv") {
    if (name == "csr-alg1" || name == "unfold-csr-alg1") return spmv(csr, CUSPARSE_SPMV_CSR_ALG1);
    if (name == "csr-alg2" || name == "unfold-csr-alg2") return spmv(csr, CUSPARSE_SPMV_CSR_ALG2);
    if (name == "coo-atomic" && p.op == "sptv") return run_coo_atomic(c, p, runs);
  }
  if (p.op == "spmv") {
    if (name == "coo-alg1") return spmv(coo, CUSPARSE_SPMV_COO_ALG1);
    if (name == "coo-alg2") return spmv(coo, CUSPARSE_SPMV_COO_ALG2);
    if (name == "sell-alg1")
      return spmv([&](Holder& h) { return make_sell(h, p); }, CUSPARSE_SPMV_SELL_ALG1);
    if (name == "bsr-alg1")
      return spmv([&](Holder& h) { return make_bsr(h, p); }, CUSPARSE_SPMV_BSR_ALG1);
  }
  if (p.op == "spmm") {
    if (name == "csr-alg1") return run_spmm(c, p, csr, CUSPARSE_SPMM_CSR_ALG1, n, runs);
    if (name == "csr-alg2") return run_spmm(c, p, csr, CUSPARSE_SPMM_CSR_ALG2, n, runs);
    if (name == "csr-alg3") return run_spmm(c, p, csr, CUSPARSE_SPMM_CSR_ALG3, n, runs);
    if (name == "coo-alg4") return run_spmm(c, p, coo, CUSPARSE_SPMM_COO_ALG4, n, runs);
    if (name == "blocked-ell")
      return run_spmm(
          c, p, [&](Holder& h) { return make_blocked_ell(h, p); }, CUSPARSE_SPMM_BLOCKED_ELL_ALG1,
          n, runs);
    if (name == "bsr-alg1")
      return run_spmm(
          c, p, [&](Holder& h) { return make_bsr(h, p); }, CUSPARSE_SPMM_BSR_ALG1, n, runs);
  }
  throw Error("no baseline '" + name + "' for " + p.op);
}

nlohmann::json baseline(const nlohmann::json& req) {
  if (!g_problem.loaded) throw Error("no problem loaded");
  Context& c = context();
  const std::string name = req.at("name").get<std::string>();
  const std::int64_t n = g_problem.op == "spmm" ? req.value("n", std::int64_t{1}) : 1;
  if (n < 1) throw Error("n must be at least 1");
  const int runs = std::max(1, req.value("runs", 20));
  nlohmann::json r;
  try {
    r = run_named(c, g_problem, name, n, runs);
  } catch (const Unsupported& e) {
    r = {{"status", "unsupported"}, {"verified", false}, {"note", e.what()}};
  } catch (const Skipped& e) {
    r = {{"status", "skipped"}, {"verified", false}, {"note", e.what()}};
  }
  r["name"] = name;
  r["n"] = n;
  r["dtype"] = dtype_name(g_problem.dtype);
  return {{"result", r}};
}

nlohmann::json device_job(const nlohmann::json& req) {
  Context& c = context();
  nlohmann::json d = {{"name", c.prop.name},
                      {"arch", "sm_" + std::to_string(c.prop.major * 10 + c.prop.minor)},
                      {"sms", c.prop.multiProcessorCount},
                      {"l2_bytes", c.prop.l2CacheSize},
                      {"smem_per_block_optin", c.prop.sharedMemPerBlockOptin},
                      {"smem_per_sm", c.prop.sharedMemPerMultiprocessor},
                      {"memory_bytes", c.prop.totalGlobalMem}};
  if (req.value("bandwidth", false)) d["bandwidth_gbs"] = measure_bandwidth(c);
  return {{"device", d}};
}

nlohmann::json kernel_job(const nlohmann::json& req) {
  Context& c = context();
  Module m(read_file_bytes(req.at("cubin").get<std::string>()));
  long long n = req.value("n", 1024LL);
  if (n < 1) throw Error("n must be at least 1");
  DeviceMem out(n * sizeof(float));
  SPARSETUNE_CUDA(cudaMemset(out.get(), 0xff, out.bytes()));
  void* p = out.get();
  void* args[] = {&p, &n};
  m.launch(req.at("kernel").get<std::string>(), {static_cast<unsigned>((n + 255) / 256), 1, 1},
           {256, 1, 1}, args, 0, c.stream, true);
  std::vector<float> host(n);
  out.download(host.data(), out.bytes());
  double sum = 0.0;
  long long written = 0;
  for (float v : host)
    if (!std::isnan(v)) {
      sum += v;
      ++written;
    }
  return {{"sum", sum}, {"written", written}};
}

}  // namespace

nlohmann::json handle_gpu_job(const std::string& job, const nlohmann::json& req, bool* fatal) {
  try {
    if (job == "device") return device_job(req);
    if (job == "load") return load(req);
    if (job == "baseline") return baseline(req);
    if (job == "kernel") return kernel_job(req);
    if (job == "plan") return plan_job(req);
    if (job == "pipeline") return pipeline_job(req);
    if (job == "stream_overhead") return stream_overhead_job(req);
  } catch (const CudaError&) {
    *fatal = true;
    throw;
  }
  throw Error("unknown worker job '" + job + "'");
}

}  // namespace sparsetune::runtime
