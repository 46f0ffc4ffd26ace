#include "runtime/problem_file.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "runtime/kernel_cache.hpp"

namespace sparsetune::runtime {

namespace {
struct Array {
  std::string name;
  std::string dtype;  // "I64" or "F64"
  const void* data;
  std::size_t count;
};

void write_arrays(const std::filesystem::path& path, const std::vector<Array>& arrays,
                  const nlohmann::json& meta) {
  nlohmann::json header;
  std::size_t offset = 0;
  for (const auto& a : arrays) {
    const std::size_t bytes = a.count * 8;
    header[a.name] = {
        {"dtype", a.dtype}, {"shape", {a.count}}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  nlohmann::json m;
  for (auto it = meta.begin(); it != meta.end(); ++it) m[it.key()] = it.value().dump();
  header["__metadata__"] = m;
  std::string text = header.dump();
  while (text.size() % 8) text += ' ';  // keeps the data 8-byte aligned
  std::vector<char> out(8 + text.size() + offset);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 8, text.data(), text.size());
  char* p = out.data() + 8 + text.size();
  for (const auto& a : arrays) {
    if (a.count) std::memcpy(p, a.data, a.count * 8);
    p += a.count * 8;
  }
  write_file_atomic(path, out.data(), out.size());
}

struct Loaded {
  std::string file;
  nlohmann::json header;
  nlohmann::json meta;
  std::vector<char> blob;
  std::size_t data_start = 0;

  template <class T>
  std::vector<T> get(const std::string& name, const char* dtype) const {
    if (!header.contains(name)) throw Error(file + ": no array '" + name + "'");
    const auto& h = header[name];
    if (h.value("dtype", std::string()) != dtype)
      throw Error(file + ": array '" + name + "' is not " + dtype);
    const auto begin = h.at("data_offsets").at(0).get<std::uint64_t>();
    const auto end = h.at("data_offsets").at(1).get<std::uint64_t>();
    if (end < begin || (end - begin) % sizeof(T) || end > blob.size() - data_start)
      throw Error(file + ": array '" + name + "' lies outside the file");
    std::vector<T> v((end - begin) / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), blob.data() + data_start + begin, end - begin);
    return v;
  }
  std::int64_t meta_int(const std::string& key) const {
    if (!meta.contains(key)) throw Error(file + ": no '" + key + "' in the metadata");
    return nlohmann::json::parse(meta[key].get<std::string>()).get<std::int64_t>();
  }
};

Loaded load(const std::filesystem::path& path, const std::string& kind) {
  Loaded l;
  l.file = path.string();
  l.blob = read_file_bytes(path);
  if (l.blob.size() < 8) throw Error(l.file + ": too short for a safetensors header");
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t{static_cast<unsigned char>(l.blob[i])} << (8 * i);
  if (n > l.blob.size() - 8) throw Error(l.file + ": header length past the end of the file");
  try {
    l.header = nlohmann::json::parse(l.blob.begin() + 8, l.blob.begin() + 8 + n);
    l.meta = l.header.at("__metadata__");
  } catch (const nlohmann::json::exception& e) {
    throw Error(l.file + ": bad header: " + e.what());
  }
  l.data_start = 8 + n;
  if (!l.meta.contains("kind") || l.meta["kind"] != nlohmann::json(kind).dump())
    throw Error(l.file + ": not a " + kind + " problem file");
  return l;
}
}  // namespace

void write_problem(const std::filesystem::path& path, const Csr64& a) {
  write_arrays(path,
               {{"row_ptr", "I64", a.row_ptr.data(), a.row_ptr.size()},
                {"col_idx", "I64", a.col_idx.data(), a.col_idx.size()},
                {"val", "F64", a.val.data(), a.val.size()}},
               {{"kind", "matrix"}, {"rows", a.rows}, {"cols", a.cols}});
}

void write_problem(const std::filesystem::path& path, const SparseTensor& t) {
  std::vector<Array> arrays;
  std::vector<std::string> names;
  for (int m = 0; m < t.order(); ++m) names.push_back("idx" + std::to_string(m));
  for (int m = 0; m < t.order(); ++m)
    arrays.push_back({names[m], "I64", t.idx[m].data(), t.idx[m].size()});
  arrays.push_back({"val", "F64", t.val.data(), t.val.size()});
  arrays.push_back({"dims", "I64", t.dims.data(), t.dims.size()});
  write_arrays(path, arrays, {{"kind", "tensor"}, {"order", t.order()}});
}

Csr64 read_matrix_problem(const std::filesystem::path& path) {
  const Loaded l = load(path, "matrix");
  Csr64 a;
  a.rows = l.meta_int("rows");
  a.cols = l.meta_int("cols");
  a.row_ptr = l.get<std::int64_t>("row_ptr", "I64");
  a.col_idx = l.get<std::int64_t>("col_idx", "I64");
  a.val = l.get<double>("val", "F64");
  const auto nnz = static_cast<std::int64_t>(a.val.size());
  bool ok = a.rows >= 0 && a.cols >= 0 &&
            static_cast<std::int64_t>(a.row_ptr.size()) == a.rows + 1 &&
            static_cast<std::int64_t>(a.col_idx.size()) == nnz && a.row_ptr[0] == 0 &&
            a.row_ptr.back() == nnz;
  for (std::int64_t r = 0; ok && r < a.rows; ++r) ok = a.row_ptr[r] <= a.row_ptr[r + 1];
  for (std::int64_t k = 0; ok && k < nnz; ++k) ok = a.col_idx[k] >= 0 && a.col_idx[k] < a.cols;
  if (!ok) throw Error(l.file + ": inconsistent CSR arrays");
  return a;
}

SparseTensor read_tensor_problem(const std::filesystem::path& path) {
  const Loaded l = load(path, "tensor");
  SparseTensor t;
  const auto order = l.meta_int("order");
  t.dims = l.get<std::int64_t>("dims", "I64");
  t.val = l.get<double>("val", "F64");
  if (order < 1 || static_cast<std::int64_t>(t.dims.size()) != order)
    throw Error(l.file + ": inconsistent tensor order");
  for (int m = 0; m < order; ++m) {
    t.idx.push_back(l.get<std::int64_t>("idx" + std::to_string(m), "I64"));
    if (t.idx[m].size() != t.val.size()) throw Error(l.file + ": inconsistent tensor arrays");
    for (auto i : t.idx[m])
      if (i < 0 || i >= t.dims[m]) throw Error(l.file + ": tensor index out of range");
  }
  return t;
}

}  // namespace sparsetune::runtime
