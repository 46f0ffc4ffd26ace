#include "io/matrix_container.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/file_bytes.hpp"

namespace sparsetune::io {

namespace {
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

// Adds an index array, 32-bit when its largest possible value `bound` fits.
void add_indices(SafetensorsFile& f, const std::string& name, const std::vector<std::int64_t>& v,
                 std::int64_t bound) {
  if (bound <= kInt32Max)
    add_array(f, name, std::vector<std::int32_t>(v.begin(), v.end()));
  else
    add_array(f, name, v);
}

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw InputError(source, 0, "matrix container: " + what);
}

std::int64_t meta_count(const SafetensorsFile& f, const std::string& source,
                        const std::string& key) {
  auto it = f.metadata.find(key);
  if (it == f.metadata.end()) bad(source, "__metadata__ lacks '" + key + "'");
  const std::string& s = it->second;
  std::int64_t v = -1;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0)
    bad(source, "__metadata__ '" + key + "' is not a non-negative integer ('" + s + "')");
  return v;
}

// A 1-D integer array of exactly `n` elements, widened to int64.
std::vector<std::int64_t> index_array(const SafetensorsFile& f, const std::string& source,
                                      const std::string& name, std::int64_t n) {
  const NamedArray* a = f.find(name);
  if (!a) bad(source, "missing array '" + name + "'");
  if (a->shape.size() != 1 || a->shape[0] != n)
    bad(source, "array '" + name + "' must have shape [" + std::to_string(n) + "]");
  if (a->dtype != "I32" && a->dtype != "I64")
    bad(source, "array '" + name + "' has dtype " + a->dtype + ", expected I32 or I64");
  return get_int_array(f, name);
}

std::vector<double> value_array(const SafetensorsFile& f, const std::string& source,
                                std::int64_t n) {
  const NamedArray* a = f.find("val");
  if (!a) bad(source, "missing array 'val'");
  if (a->shape.size() != 1 || a->shape[0] != n)
    bad(source, "array 'val' must have shape [" + std::to_string(n) + "]");
  if (a->dtype != "F64") bad(source, "array 'val' has dtype " + a->dtype + ", expected F64");
  std::vector<double> v = get_array<double>(f, "val");
  for (std::size_t k = 0; k < v.size(); ++k)
    if (!std::isfinite(v[k]))
      bad(source, "val[" + std::to_string(k) + "] is not finite (NaN or Inf)");
  return v;
}

void check_range(const std::vector<std::int64_t>& v, std::int64_t bound, const std::string& source,
                 const std::string& name, const char* what) {
  for (std::size_t k = 0; k < v.size(); ++k)
    if (v[k] < 0 || v[k] >= bound)
      bad(source, name + "[" + std::to_string(k) + "] = " + std::to_string(v[k]) +
                      " is outside the " + std::to_string(bound) + " " + what);
}
}  // namespace

SafetensorsFile matrix_to_safetensors(const Csr64& a, Layout layout) {
  for (std::int64_t k = 0; k < a.nnz(); ++k)
    if (!std::isfinite(a.val[k]))
      throw Error("cannot store a non-finite value (entry " + std::to_string(k) + ")");
  SafetensorsFile f;
  f.metadata = {{"format", kMatrixFormatName},
                {"version", kMatrixFormatVersion},
                {"layout", layout == Layout::csr ? "csr" : "coo"},
                {"rows", std::to_string(a.rows)},
                {"cols", std::to_string(a.cols)},
                {"nnz", std::to_string(a.nnz())}};
  if (layout == Layout::csr) {
    add_indices(f, "row_ptr", a.row_ptr, a.nnz());
    add_indices(f, "col_idx", a.col_idx, a.cols - 1);
  } else {
    Coo64 c = csr_to_coo(a);
    add_indices(f, "row", c.row, a.rows - 1);
    add_indices(f, "col", c.col, a.cols - 1);
  }
  add_array(f, "val", a.val);
  return f;
}

bool is_matrix_container(const SafetensorsFile& f) {
  auto it = f.metadata.find("format");
  return it != f.metadata.end() && it->second == kMatrixFormatName;
}

Csr64 matrix_from_safetensors(const SafetensorsFile& f, const std::string& source,
                              std::int64_t* duplicates) {
  if (duplicates) *duplicates = 0;
  auto format = f.metadata.find("format");
  if (format == f.metadata.end())
    bad(source, "not a sparsetune matrix container (__metadata__ has no 'format')");
  if (format->second == "sparsetune-tensor")
    bad(source, "this is a tensor container; a matrix file is needed here");
  if (format->second != kMatrixFormatName)
    bad(source,
        "not a sparsetune matrix container (__metadata__ format is '" + format->second + "')");
  auto version = f.metadata.find("version");
  if (version == f.metadata.end() || version->second != kMatrixFormatVersion)
    bad(source, "unsupported container version '" +
                    (version == f.metadata.end() ? std::string("(none)") : version->second) +
                    "' (this build reads version " + kMatrixFormatVersion + ")");
  auto layout = f.metadata.find("layout");
  if (layout == f.metadata.end() || (layout->second != "csr" && layout->second != "coo"))
    bad(source, "__metadata__ 'layout' must be 'csr' or 'coo'");
  const std::int64_t rows = meta_count(f, source, "rows");
  const std::int64_t cols = meta_count(f, source, "cols");
  const std::int64_t nnz = meta_count(f, source, "nnz");
  if (rows == std::numeric_limits<std::int64_t>::max()) bad(source, "too many rows");

  if (layout->second == "coo") {
    Coo64 c;
    c.rows = rows;
    c.cols = cols;
    c.row = index_array(f, source, "row", nnz);
    c.col = index_array(f, source, "col", nnz);
    c.val = value_array(f, source, nnz);
    check_range(c.row, rows, source, "row", "rows");
    check_range(c.col, cols, source, "col", "columns");
    try {
      check_memory_need(16.0 * (static_cast<double>(rows) + 1.0) + 16.0 * static_cast<double>(nnz),
                        "a " + std::to_string(rows) + "-row CSR");
      return coo_to_csr<std::int64_t, std::int64_t>(c, duplicates);
    } catch (const Error& e) {
      bad(source, e.what());
    } catch (const std::bad_alloc&) {
    } catch (const std::length_error&) {
    }
    bad(source, "a " + std::to_string(rows) + "-row CSR does not fit in memory");
  }

  Csr64 a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr = index_array(f, source, "row_ptr", rows + 1);
  a.col_idx = index_array(f, source, "col_idx", nnz);
  a.val = value_array(f, source, nnz);
  if (a.row_ptr[0] != 0) bad(source, "row_ptr[0] must be 0");
  for (std::int64_t r = 0; r < rows; ++r)
    if (a.row_ptr[r + 1] < a.row_ptr[r])
      bad(source, "row_ptr decreases at row " + std::to_string(r) + " (" +
                      std::to_string(a.row_ptr[r]) + " then " + std::to_string(a.row_ptr[r + 1]) +
                      ")");
  if (a.row_ptr[rows] != nnz)
    bad(source, "row_ptr ends at " + std::to_string(a.row_ptr[rows]) +
                    ", not at nnz = " + std::to_string(nnz));
  check_range(a.col_idx, cols, source, "col_idx", "columns");
  bool canonical = true;
  for (std::int64_t r = 0; r < rows && canonical; ++r)
    for (std::int64_t k = a.row_ptr[r] + 1; k < a.row_ptr[r + 1]; ++k)
      if (a.col_idx[k] <= a.col_idx[k - 1]) {
        canonical = false;
        break;
      }
  if (!canonical) return coo_to_csr<std::int64_t, std::int64_t>(csr_to_coo(a), duplicates);
  return a;
}

void write_matrix_container(const std::string& path, const Csr64& a, Layout layout) {
  write_safetensors(path, matrix_to_safetensors(a, layout));
}

Csr64 read_matrix_container(const std::string& path, std::int64_t* duplicates) {
  return matrix_from_safetensors(read_safetensors(path), path, duplicates);
}

}  // namespace sparsetune::io
