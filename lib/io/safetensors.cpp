#include "io/safetensors.hpp"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "io/file_bytes.hpp"

namespace sparsetune::io {

namespace {
// The reference implementation refuses headers above 100 MB; so do we, before allocating.
constexpr std::uint64_t kMaxHeader = 100'000'000;

struct DtypeSize {
  const char* name;
  std::size_t size;
};
constexpr DtypeSize kDtypes[] = {{"F64", 8},  {"F32", 4},     {"F16", 2},    {"BF16", 2},
                                 {"I64", 8},  {"I32", 4},     {"I16", 2},    {"I8", 1},
                                 {"U64", 8},  {"U32", 4},     {"U16", 2},    {"U8", 1},
                                 {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw InputError(source, 0, "safetensors: " + what);
}

// A non-negative JSON integer, or an error naming the field.
std::int64_t json_count(const nlohmann::json& v, const std::string& source,
                        const std::string& field) {
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      bad(source, field + " " + std::to_string(u) + " is too large");
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) {
    auto i = v.get<std::int64_t>();
    if (i < 0) bad(source, field + " is negative (" + std::to_string(i) + ")");
    return i;
  }
  bad(source, field + " is not a non-negative integer (" + v.dump() + ")");
}

// Product of a shape, or -1 on overflow.
std::int64_t shape_product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

struct Entry {
  ArrayView array;
  std::int64_t begin = 0, end = 0;
};
}  // namespace

std::int64_t NamedArray::elements() const { return shape_product(shape); }
std::int64_t ArrayView::elements() const { return shape_product(shape); }

const ArrayView* SafetensorsView::find(const std::string& name) const {
  for (const auto& a : arrays)
    if (a.name == name) return &a;
  return nullptr;
}

const NamedArray* SafetensorsFile::find(const std::string& name) const {
  for (const auto& a : arrays)
    if (a.name == name) return &a;
  return nullptr;
}

const NamedArray& SafetensorsFile::at(const std::string& name) const {
  if (const NamedArray* a = find(name)) return *a;
  throw Error("no array named '" + name + "'");
}

std::size_t dtype_size(std::string_view dtype) {
  for (const auto& d : kDtypes)
    if (dtype == d.name) return d.size;
  return 0;
}

std::vector<std::int64_t> get_int_array(const SafetensorsFile& f, const std::string& name) {
  const NamedArray& a = f.at(name);
  const std::size_t n = a.bytes.size() / std::max<std::size_t>(dtype_size(a.dtype), 1);
  std::vector<std::int64_t> out(n);
  auto widen = [&](auto tag) {
    using T = decltype(tag);
    for (std::size_t k = 0; k < n; ++k) {
      T x;
      std::memcpy(&x, a.bytes.data() + k * sizeof(T), sizeof(T));
      if constexpr (std::is_same_v<T, std::uint64_t>)
        if (x > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          throw Error("array '" + name + "': value " + std::to_string(x) + " exceeds int64");
      out[k] = static_cast<std::int64_t>(x);
    }
  };
  if (a.dtype == "I64")
    widen(std::int64_t{});
  else if (a.dtype == "I32")
    widen(std::int32_t{});
  else if (a.dtype == "I16")
    widen(std::int16_t{});
  else if (a.dtype == "I8")
    widen(std::int8_t{});
  else if (a.dtype == "U64")
    widen(std::uint64_t{});
  else if (a.dtype == "U32")
    widen(std::uint32_t{});
  else if (a.dtype == "U16")
    widen(std::uint16_t{});
  else if (a.dtype == "U8")
    widen(std::uint8_t{});
  else
    throw Error("array '" + name + "' has dtype " + a.dtype + ", expected an integer dtype");
  return out;
}

std::string safetensors_header(const SafetensorsFile& f) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!f.metadata.empty()) header["__metadata__"] = f.metadata;
  std::set<std::string> names;
  std::uint64_t offset = 0;
  for (const auto& a : f.arrays) {
    if (a.name.empty() || a.name == "__metadata__")
      throw Error("safetensors: invalid array name '" + a.name + "'");
    if (!names.insert(a.name).second)
      throw Error("safetensors: duplicate array name '" + a.name + "'");
    const std::size_t size = dtype_size(a.dtype);
    if (size == 0) throw Error("safetensors: array '" + a.name + "': unknown dtype " + a.dtype);
    const std::int64_t n = a.elements();
    if (n < 0 || static_cast<std::uint64_t>(n) * size != a.bytes.size())
      throw Error("safetensors: array '" + a.name + "': shape " + shape_text(a.shape) + " of " +
                  a.dtype + " does not match its " + std::to_string(a.bytes.size()) + " bytes");
    header[a.name] = {{"dtype", a.dtype},
                      {"shape", a.shape},
                      {"data_offsets", {offset, offset + a.bytes.size()}}};
    offset += a.bytes.size();
  }
  std::string text = header.dump();
  // Padding keeps the buffer 8-byte aligned, so a memory-mapped reader can use it in place.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const std::uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  out += text;
  return out;
}

std::string serialize_safetensors(const SafetensorsFile& f) {
  std::string out = safetensors_header(f);
  std::size_t total = out.size();
  for (const auto& a : f.arrays) total += a.bytes.size();
  out.reserve(total);
  for (const auto& a : f.arrays)
    out.append(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
  return out;
}

bool looks_like_safetensors(std::string_view bytes) {
  if (bytes.size() < 10) return false;
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return n >= 2 && n <= bytes.size() - 8 && bytes[8] == '{';
}

SafetensorsView parse_safetensors_view(std::string_view bytes, const std::string& source) {
  if (bytes.size() < 8)
    bad(source, "file is " + std::to_string(bytes.size()) +
                    " bytes, too short for the 8-byte header length");
  std::uint64_t header_len = 0;
  std::memcpy(&header_len, bytes.data(), 8);
  if (header_len > bytes.size() - 8)
    bad(source, "header length " + std::to_string(header_len) + " runs past the end of the " +
                    std::to_string(bytes.size()) + "-byte file (truncated?)");
  if (header_len > kMaxHeader)
    bad(source, "header length " + std::to_string(header_len) + " exceeds the 100 MB limit");
  const std::string_view text = bytes.substr(8, header_len);
  const std::string_view buffer = bytes.substr(8 + header_len);

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    bad(source, std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) bad(source, "header is not a JSON object");

  SafetensorsView f;
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& key = it.key();
    const auto& v = it.value();
    if (key == "__metadata__") {
      if (!v.is_object()) bad(source, "__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          bad(source, "__metadata__ field '" + m.key() + "' is not a string");
        f.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string field = "array '" + key + "'";
    if (key.empty()) bad(source, "an array has an empty name");
    if (!v.is_object()) bad(source, field + " is not an object");
    Entry e;
    e.array.name = key;
    if (!v.contains("dtype") || !v["dtype"].is_string()) bad(source, field + ": missing dtype");
    e.array.dtype = v["dtype"].get<std::string>();
    const std::size_t size = dtype_size(e.array.dtype);
    if (size == 0) bad(source, field + ": unknown dtype '" + e.array.dtype + "'");
    if (!v.contains("shape") || !v["shape"].is_array()) bad(source, field + ": missing shape");
    for (const auto& d : v["shape"])
      e.array.shape.push_back(json_count(d, source, field + " shape"));
    if (!v.contains("data_offsets") || !v["data_offsets"].is_array() ||
        v["data_offsets"].size() != 2)
      bad(source, field + ": data_offsets must be [begin, end]");
    e.begin = json_count(v["data_offsets"][0], source, field + " data_offsets begin");
    e.end = json_count(v["data_offsets"][1], source, field + " data_offsets end");
    if (e.begin > e.end)
      bad(source, field + ": data_offsets [" + std::to_string(e.begin) + ", " +
                      std::to_string(e.end) + "] end before they begin");
    if (static_cast<std::uint64_t>(e.end) > buffer.size())
      bad(source, field + ": data_offsets [" + std::to_string(e.begin) + ", " +
                      std::to_string(e.end) + "] run past the end of the " +
                      std::to_string(buffer.size()) + "-byte data buffer (truncated?)");
    const std::int64_t n = e.array.elements();
    if (n < 0 || static_cast<std::uint64_t>(n) > static_cast<std::uint64_t>(e.end - e.begin) ||
        static_cast<std::uint64_t>(n) * size != static_cast<std::uint64_t>(e.end - e.begin))
      bad(source, field + ": shape " + shape_text(e.array.shape) + " of " + e.array.dtype +
                      " needs " +
                      (n < 0 ? std::string("more than 2^63") : std::to_string(n * size)) +
                      " bytes but data_offsets give " + std::to_string(e.end - e.begin));
    entries.push_back(std::move(e));
  }

  // The arrays must tile the buffer exactly: no overlap, no gap, nothing left over.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::int64_t pos = 0;
  const Entry* prev = nullptr;
  for (const auto& e : entries) {
    if (e.begin < pos)
      bad(source, "arrays '" + prev->array.name + "' and '" + e.array.name + "' overlap");
    if (e.begin > pos)
      bad(source, "bytes [" + std::to_string(pos) + ", " + std::to_string(e.begin) +
                      ") of the data buffer belong to no array");
    pos = e.end;
    prev = &e;
  }
  if (static_cast<std::uint64_t>(pos) != buffer.size())
    bad(source, "the data buffer has " + std::to_string(buffer.size() - pos) +
                    " bytes after the last array");

  f.arrays.reserve(entries.size());
  for (auto& e : entries) {
    e.array.bytes = buffer.substr(e.begin, e.end - e.begin);
    f.arrays.push_back(std::move(e.array));
  }
  return f;
}

SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& source) {
  SafetensorsView v = parse_safetensors_view(bytes, source);
  SafetensorsFile f;
  f.metadata = std::move(v.metadata);
  f.arrays.reserve(v.arrays.size());
  for (auto& a : v.arrays) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(a.bytes.data());
    f.arrays.push_back({std::move(a.name), std::move(a.dtype), std::move(a.shape),
                        std::vector<std::uint8_t>(p, p + a.bytes.size())});
  }
  return f;
}

std::optional<std::map<std::string, std::string>> read_safetensors_metadata(
    const std::string& path) {
  std::string head = read_file_prefix(path, 8);
  const bool gzipped = is_gzip(head);
  if (gzipped) head = read_file_decompressed(path);  // rare: decompress it all
  if (head.size() < 8) return std::nullopt;
  std::uint64_t n = 0;
  std::memcpy(&n, head.data(), 8);
  if (n < 2 || n > kMaxHeader) return std::nullopt;
  if (!gzipped && head.size() < 8 + n) head = read_file_prefix(path, 8 + n);
  if (head.size() < 8 + n || head[8] != '{') return std::nullopt;
  nlohmann::json header = nlohmann::json::parse(head.begin() + 8, head.begin() + 8 + n, nullptr,
                                                /*allow_exceptions=*/false);
  if (!header.is_object()) return std::nullopt;
  std::map<std::string, std::string> meta;
  auto it = header.find("__metadata__");
  if (it != header.end() && it->is_object())
    for (auto m = it->begin(); m != it->end(); ++m)
      if (m.value().is_string()) meta[m.key()] = m.value().get<std::string>();
  return meta;
}

void write_safetensors(const std::string& path, const SafetensorsFile& f) {
  AtomicFile out(path);
  out.write(safetensors_header(f));
  for (const auto& a : f.arrays)
    out.write({reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size()});
  out.commit();
}

SafetensorsFile read_safetensors(const std::string& path) {
  return parse_safetensors(read_file(path), path);
}

}  // namespace sparsetune::io
