#include "io/tensor_container.hpp"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "io/file_bytes.hpp"

namespace sparsetune::io {

namespace {
constexpr std::int64_t kInt32Limit = std::int64_t{1} << 31;  // I32 holds indices below it

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw InputError(source, 0, "tensor container: " + what);
}

std::string index_name(int m) { return "idx" + std::to_string(m); }

// A decimal metadata integer >= `least`.
std::int64_t parse_count(std::string_view s, const std::string& source, const std::string& field,
                         std::int64_t least) {
  std::int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < least)
    bad(source, "__metadata__ '" + field + "' must be an integer >= " + std::to_string(least) +
                    " ('" + std::string(s) + "')");
  return v;
}

const std::string& meta(const std::map<std::string, std::string>& m, const std::string& source,
                        const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) bad(source, "__metadata__ lacks '" + key + "'");
  return it->second;
}

// A 1-D array of `n` elements of T's dtype, filled in parallel by fill(k).
template <class T, class Fill>
void add_filled(SafetensorsFile& f, const std::string& name, std::int64_t n, Fill&& fill) {
  NamedArray a;
  a.name = name;
  a.dtype = dtype_of<T>();
  a.shape = {n};
  a.bytes.resize(static_cast<std::size_t>(n) * sizeof(T));
  auto* out = reinterpret_cast<T*>(a.bytes.data());
  parallel_ranges(n, threads_for(n), [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t k = lo; k < hi; ++k) out[k] = fill(k);
  });
  f.arrays.push_back(std::move(a));
}

// The lowest position in [0, n) where bad_at(k) holds, or n; scanned in parallel.
template <class Pred>
std::int64_t first_where(std::int64_t n, Pred&& bad_at) {
  const int parts = threads_for(n);
  std::vector<std::int64_t> first(parts, n);
  parallel_for(parts, parts, [&](int p) {
    for (std::int64_t k = n * p / parts; k < n * (p + 1) / parts; ++k)
      if (bad_at(k)) {
        first[p] = k;
        return;
      }
  });
  return *std::min_element(first.begin(), first.end());
}

// Copies a little-endian array of U into `out`, widened to T.
template <class U, class T>
void widen(std::string_view bytes, std::vector<T>& out) {
  const auto n = static_cast<std::int64_t>(bytes.size() / sizeof(U));
  out.resize(n);
  const char* src = bytes.data();
  parallel_ranges(n, threads_for(n), [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t k = lo; k < hi; ++k) {
      U x;
      std::memcpy(&x, src + k * sizeof(U), sizeof(U));
      out[k] = static_cast<T>(x);
    }
  });
}

const ArrayView& array(const SafetensorsView& v, const std::string& source, const std::string& name,
                       std::int64_t n) {
  const ArrayView* a = v.find(name);
  if (!a) bad(source, "missing array '" + name + "'");
  if (a->shape.size() != 1 || a->shape[0] != n)
    bad(source, "array '" + name + "' must have shape [" + std::to_string(n) + "] (nnz)");
  return *a;
}
}  // namespace

SafetensorsFile tensor_to_safetensors(const SparseTensor& t) {
  const int order = t.order();
  if (order < 3 || order > kMaxTensorOrder)
    throw Error("a tensor container holds tensors of order 3 to " +
                std::to_string(kMaxTensorOrder) + ", not " + std::to_string(order));
  const std::int64_t n = t.nnz();
  if (static_cast<int>(t.idx.size()) != order)
    throw Error("tensor container: one index array per mode expected");
  std::string dims;
  for (int m = 0; m < order; ++m) {
    if (t.dims[m] < 1) throw Error("tensor container: dimension " + std::to_string(m) + " < 1");
    if (static_cast<std::int64_t>(t.idx[m].size()) != n)
      throw Error("tensor container: index array of mode " + std::to_string(m) +
                  " does not have nnz entries");
    const auto& c = t.idx[m];
    const std::int64_t k =
        first_where(n, [&](std::int64_t i) { return c[i] < 0 || c[i] >= t.dims[m]; });
    if (k < n)
      throw Error("cannot store entry " + std::to_string(k) + ": its index " +
                  std::to_string(c[k]) + " along mode " + std::to_string(m) +
                  " is outside the dimension " + std::to_string(t.dims[m]));
    dims += (m ? "," : "") + std::to_string(t.dims[m]);
  }
  const std::int64_t nonfinite =
      first_where(n, [&](std::int64_t k) { return !std::isfinite(t.val[k]); });
  if (nonfinite < n)
    throw Error("cannot store a non-finite value (entry " + std::to_string(nonfinite) + ")");
  SafetensorsFile f;
  f.metadata = {{"format", kTensorFormatName},
                {"version", kTensorFormatVersion},
                {"order", std::to_string(order)},
                {"dims", dims},
                {"nnz", std::to_string(n)}};
  for (int m = 0; m < order; ++m) {
    const auto& c = t.idx[m];
    if (t.dims[m] <= kInt32Limit)
      add_filled<std::int32_t>(f, index_name(m), n,
                               [&](std::int64_t k) { return static_cast<std::int32_t>(c[k]); });
    else
      add_filled<std::int64_t>(f, index_name(m), n, [&](std::int64_t k) { return c[k]; });
  }
  // Half the bytes when nothing is lost: values that are floats (an f32 tensor) stay exact.
  const bool narrow = first_where(n, [&](std::int64_t k) {
                        return static_cast<double>(static_cast<float>(t.val[k])) != t.val[k];
                      }) == n;
  if (narrow)
    add_filled<float>(f, "val", n, [&](std::int64_t k) { return static_cast<float>(t.val[k]); });
  else
    add_filled<double>(f, "val", n, [&](std::int64_t k) { return t.val[k]; });
  return f;
}

bool is_tensor_container(const std::map<std::string, std::string>& metadata) {
  auto it = metadata.find("format");
  return it != metadata.end() && it->second == kTensorFormatName;
}

SparseTensor parse_tensor_container(std::string_view bytes, const std::string& source,
                                    TnsInfo* info) {
  const SafetensorsView v = parse_safetensors_view(bytes, source);
  const std::string& format = meta(v.metadata, source, "format");
  if (format != kTensorFormatName)
    bad(source, "not a sparsetune tensor container (__metadata__ format is '" + format + "')");
  const std::string& version = meta(v.metadata, source, "version");
  if (version != kTensorFormatVersion)
    bad(source, "unsupported container version '" + version + "' (this build reads version " +
                    kTensorFormatVersion + ")");
  const std::int64_t order = parse_count(meta(v.metadata, source, "order"), source, "order", 3);
  if (order > kMaxTensorOrder)
    bad(source, "order " + std::to_string(order) + " exceeds the supported maximum of " +
                    std::to_string(kMaxTensorOrder));
  SparseTensor t;
  {
    std::string_view d = meta(v.metadata, source, "dims");
    while (true) {
      const auto comma = d.find(',');
      t.dims.push_back(parse_count(d.substr(0, comma), source, "dims", 1));
      if (comma == std::string_view::npos) break;
      d.remove_prefix(comma + 1);
      if (t.order() > order) break;
    }
  }
  if (t.order() != order)
    bad(source, "__metadata__ 'dims' lists " + std::to_string(t.order()) +
                    " dimensions for order " + std::to_string(order));
  const std::int64_t n = parse_count(meta(v.metadata, source, "nnz"), source, "nnz", 0);
  for (const auto& a : v.arrays) {
    bool known = a.name == "val";
    for (int m = 0; m < order && !known; ++m) known = a.name == index_name(m);
    if (!known) bad(source, "unexpected array '" + a.name + "'");
  }

  t.idx.resize(order);
  for (int m = 0; m < order; ++m) {
    const std::string name = index_name(m);
    const ArrayView& a = array(v, source, name, n);
    if (a.dtype == "I32")
      widen<std::int32_t>(a.bytes, t.idx[m]);
    else if (a.dtype == "I64")
      widen<std::int64_t>(a.bytes, t.idx[m]);
    else
      bad(source, "array '" + name + "' has dtype " + a.dtype + ", expected I32 or I64");
    const auto& c = t.idx[m];
    const std::int64_t dim = t.dims[m];
    const std::int64_t k = first_where(n, [&](std::int64_t i) { return c[i] < 0 || c[i] >= dim; });
    if (k < n)
      bad(source, name + "[" + std::to_string(k) + "] = " + std::to_string(c[k]) +
                      " is outside mode " + std::to_string(m) + "'s dimension " +
                      std::to_string(dim) + " (indices are 0-based)");
  }
  const ArrayView& val = array(v, source, "val", n);
  if (val.dtype == "F64")
    widen<double>(val.bytes, t.val);
  else if (val.dtype == "F32")
    widen<float>(val.bytes, t.val);
  else
    bad(source, "array 'val' has dtype " + val.dtype + ", expected F32 or F64");
  const std::int64_t k = first_where(n, [&](std::int64_t i) { return !std::isfinite(t.val[i]); });
  if (k < n) bad(source, "val[" + std::to_string(k) + "] is not finite (NaN or Inf)");

  // Another writer's order: sorted, repeats summed, as read_tns returns a tensor.
  TnsInfo ti;
  ti.header = true;
  ti.stored_entries = n;
  ti.duplicates = sort_and_merge(t);  // leaves a tensor already in that order as it is
  if (ti.duplicates > 0)
    spdlog::warn("{}: {} duplicate entries were summed", source, ti.duplicates);
  if (info) *info = ti;
  return t;
}

void write_tensor_container(const std::string& path, const SparseTensor& t) {
  write_safetensors(path, tensor_to_safetensors(t));
}

SparseTensor read_tensor_container(const std::string& path, TnsInfo* info) {
  std::string bytes = read_file(path);
  if (is_gzip(bytes)) bytes = gunzip(bytes, path);
  return parse_tensor_container(bytes, path, info);
}

}  // namespace sparsetune::io
