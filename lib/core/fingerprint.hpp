#pragma once
// A content fingerprint of a matrix: equal for equal matrices (dimensions, pattern and values),
// different with overwhelming probability otherwise. Keys the tuning database.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "core/tensor.hpp"

namespace sparsetune {

namespace detail {
// Word-at-a-time hashing: one multiply-rotate step per 64-bit word (fast on 10^8 words).
class WordHasher {
 public:
  void add(std::uint64_t w) {
    h_ ^= mix(w + 0x9e3779b97f4a7c15ull * ++count_);
    h_ = (h_ << 27 | h_ >> 37) * 0x94d049bb133111ebull;
  }
  template <class T>
  void add_all(const std::vector<T>& v) {
    add(v.size());
    for (const T& x : v) {
      std::uint64_t w = 0;
      std::memcpy(&w, &x, sizeof(T));
      add(w);
    }
  }
  std::uint64_t value() const { return mix(h_ ^ count_); }

 private:
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t h_ = 0x243f6a8885a308d3ull;
  std::uint64_t count_ = 0;
};
}  // namespace detail

// "csr1-" followed by 16 hex digits. Independent of the index width the CSR is stored with.
template <class I, class P>
std::string fingerprint(const Csr<I, P>& a) {
  detail::WordHasher h;
  h.add(static_cast<std::uint64_t>(a.rows));
  h.add(static_cast<std::uint64_t>(a.cols));
  h.add(a.row_ptr.size());
  for (auto p : a.row_ptr) h.add(static_cast<std::uint64_t>(p));
  h.add(a.col_idx.size());
  for (auto c : a.col_idx) h.add(static_cast<std::uint64_t>(c));
  h.add_all(a.val);
  static const char* digits = "0123456789abcdef";
  std::uint64_t v = h.value();
  std::string out = "csr1-";
  for (int s = 60; s >= 0; s -= 4) out += digits[(v >> s) & 15];
  return out;
}

// "tns1-" followed by 16 hex digits: a tensor's dimensions, coordinates (in its stored order)
// and values. Keys a tensor's rows in the tuning database.
inline std::string fingerprint(const SparseTensor& t) {
  detail::WordHasher h;
  h.add(t.dims.size());
  for (auto d : t.dims) h.add(static_cast<std::uint64_t>(d));
  for (const auto& m : t.idx) h.add_all(m);
  h.add_all(t.val);
  static const char* digits = "0123456789abcdef";
  std::uint64_t v = h.value();
  std::string out = "tns1-";
  for (int s = 60; s >= 0; s -= 4) out += digits[(v >> s) & 15];
  return out;
}

}  // namespace sparsetune
