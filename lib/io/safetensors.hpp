#pragma once
// The safetensors layout: an 8-byte little-endian header length N, N bytes of JSON giving each
// array's dtype, shape and byte range, then the byte buffer. Readable with Python's
// `safetensors` or a few lines of numpy. The reader checks every size and offset, so a truncated
// or corrupted file is an InputError naming the file and the field, never a crash.
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/error.hpp"

namespace sparsetune::io {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian data; a big-endian host would need byte swaps");

// One named array: raw little-endian bytes plus the dtype and shape that describe them.
struct NamedArray {
  std::string name;
  std::string dtype;  // "F64", "F32", "F16", "BF16", "I64", ..., "U8", "BOOL"
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;

  std::int64_t elements() const;  // product of the shape (1 for a scalar)
};

struct SafetensorsFile {
  std::vector<NamedArray> arrays;               // in the order of their bytes in the file
  std::map<std::string, std::string> metadata;  // the "__metadata__" object

  const NamedArray* find(const std::string& name) const;
  // Throws Error when there is no array of that name.
  const NamedArray& at(const std::string& name) const;
};

// Bytes per element of a dtype; 0 when the dtype is unknown.
std::size_t dtype_size(std::string_view dtype);

template <class T>
constexpr const char* dtype_of() {
  if constexpr (std::is_same_v<T, double>)
    return "F64";
  else if constexpr (std::is_same_v<T, float>)
    return "F32";
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return "I64";
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return "I32";
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return "I16";
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return "I8";
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return "U64";
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return "U32";
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return "U16";
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return "U8";
  else
    static_assert(sizeof(T) == 0, "no safetensors dtype for this type");
}

// Appends an array holding `values` with the given shape (empty: a scalar). Throws Error when
// the shape does not match the number of values.
template <class T>
NamedArray& add_array(SafetensorsFile& f, const std::string& name, const std::vector<T>& values,
                      std::vector<std::int64_t> shape) {
  NamedArray a;
  a.name = name;
  a.dtype = dtype_of<T>();
  a.shape = std::move(shape);
  if (a.elements() != static_cast<std::int64_t>(values.size()))
    throw Error("array '" + name + "': shape does not match its " + std::to_string(values.size()) +
                " values");
  a.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  f.arrays.push_back(std::move(a));
  return f.arrays.back();
}

// Appends a one-dimensional array holding `values`.
template <class T>
NamedArray& add_array(SafetensorsFile& f, const std::string& name, const std::vector<T>& values) {
  return add_array(f, name, values, {static_cast<std::int64_t>(values.size())});
}

// The values of array `name`; throws Error when it is missing or its dtype is not T's.
template <class T>
std::vector<T> get_array(const SafetensorsFile& f, const std::string& name) {
  const NamedArray& a = f.at(name);
  if (a.dtype != dtype_of<T>())
    throw Error("array '" + name + "' has dtype " + a.dtype + ", expected " + dtype_of<T>());
  std::vector<T> v(a.bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), a.bytes.data(), v.size() * sizeof(T));
  return v;
}

// Reads any integer array (I8..I64, U8..U64) widened to int64; throws Error for other dtypes or
// unsigned values beyond int64.
std::vector<std::int64_t> get_int_array(const SafetensorsFile& f, const std::string& name);

// The 8-byte length and the JSON header (padded with spaces to a multiple of 8) that precede
// the arrays' bytes, which follow in the order of `arrays`. Throws Error for empty or duplicate
// names, unknown dtypes, or sizes that do not match.
std::string safetensors_header(const SafetensorsFile& f);

// The whole file as bytes.
std::string serialize_safetensors(const SafetensorsFile& f);

// One array of a file held in memory, its bytes a view into that memory (no copy: a reader of a
// large container widens or checks them in place).
struct ArrayView {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::string_view bytes;

  std::int64_t elements() const;
};

struct SafetensorsView {
  std::vector<ArrayView> arrays;  // in the order of their bytes in the file
  std::map<std::string, std::string> metadata;

  const ArrayView* find(const std::string& name) const;
};

// Parses and checks a whole file held in memory (every check of parse_safetensors); the views
// live as long as `bytes`. `source` names the file in error messages.
SafetensorsView parse_safetensors_view(std::string_view bytes, const std::string& source);

// Parses a whole file held in memory; `source` names it in error messages.
SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& source);

// The __metadata__ of the file at `path`, reading only its header (a gzip-compressed file is
// decompressed first); nullopt when the file does not start like safetensors.
std::optional<std::map<std::string, std::string>> read_safetensors_metadata(
    const std::string& path);

// True when the bytes look like safetensors: a plausible length followed by '{'.
bool looks_like_safetensors(std::string_view bytes);

void write_safetensors(const std::string& path, const SafetensorsFile& f);
SafetensorsFile read_safetensors(const std::string& path);

}  // namespace sparsetune::io
