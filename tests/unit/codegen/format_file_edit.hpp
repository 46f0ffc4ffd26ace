#pragma once
// Format arrays and binaries in tests: a stored integer array, a known graph by name, the raw
// elements of a part-0 array as the file stores them, a binary with its part description edited,
// and the error reading one gives.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen_test_util.hpp"
#include "core/error.hpp"
#include "graph/format.hpp"
#include "io/safetensors.hpp"

namespace sparsetune::test {

// A stored integer array of the given storage type holding `v`.
inline graph::FormatArray int_array(const std::string& dtype, std::vector<std::int64_t> v) {
  graph::FormatArray a;
  a.dtype = dtype;
  a.length = static_cast<std::int64_t>(v.size());
  a.ints = std::move(v);
  return a;
}

inline graph::Graph known_graph(const std::string& name) {
  for (const auto& g : known_graphs())
    if (g.name == name) return g;
  throw Error("no graph " + name);
}

// The elements of array `name` of part 0 as the file holds them, `width` bytes each, read
// unsigned (little-endian).
inline std::vector<std::int64_t> file_elements(const std::string& bytes, const std::string& name,
                                               int width) {
  const auto st = io::parse_safetensors(bytes, "f");
  const auto* n = st.find("p0." + name);
  REQUIRE(n);
  std::vector<std::int64_t> v;
  for (std::size_t k = 0; k + width <= n->bytes.size(); k += width) {
    std::uint32_t w = 0;
    std::memcpy(&w, n->bytes.data() + k, width);
    v.push_back(w);
  }
  return v;
}

// The error reading the binary gives ("" when it reads).
inline std::string format_load_error(const std::string& bytes) {
  try {
    (void)graph::from_safetensors(io::parse_safetensors(bytes, "f"), "f");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The binary with its part descriptions ("parts" metadata) edited.
inline std::string with_parts(const std::string& bytes,
                              const std::function<void(nlohmann::json&)>& edit) {
  auto st = io::parse_safetensors(bytes, "f");
  auto parts = nlohmann::json::parse(st.metadata.at("parts"));
  edit(parts);
  st.metadata.at("parts") = parts.dump();
  return io::serialize_safetensors(st);
}

}  // namespace sparsetune::test
