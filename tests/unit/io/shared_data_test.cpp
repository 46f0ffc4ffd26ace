// Every matrix and tensor shipped in ../shared parses with the sizes its SOURCES.tsv lists;
// tensors are checked against an independent count of the file's data lines.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/convert.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_file.hpp"
#include "io/matrix_market.hpp"
#include "io/tns.hpp"
#include "test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::io;

namespace {
struct Source {
  std::string file, field, symmetry;
  std::int64_t rows = 0, cols = 0, stored = 0;
};

std::vector<Source> matrix_sources() {
  std::ifstream in(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/SOURCES.tsv");
  std::vector<Source> out;
  std::string line;
  std::getline(in, line);  // column names
  while (std::getline(in, line)) {
    std::istringstream row(line);
    Source s;
    std::string rows, cols, stored;
    std::getline(row, s.file, '\t');
    std::getline(row, rows, '\t');
    std::getline(row, cols, '\t');
    std::getline(row, stored, '\t');
    std::getline(row, s.field, '\t');
    std::getline(row, s.symmetry, '\t');
    s.rows = std::stoll(rows);
    s.cols = std::stoll(cols);
    s.stored = std::stoll(stored);
    std::transform(s.symmetry.begin(), s.symmetry.end(), s.symmetry.begin(), ::tolower);
    out.push_back(s);
  }
  return out;
}
}  // namespace

TEST_CASE("all shared matrices parse with the sizes SOURCES.tsv lists", "[io][shared]") {
  const auto sources = matrix_sources();
  REQUIRE(sources.size() == 47);
  int parsed = 0, refused = 0;
  for (const auto& s : sources) {
    const std::string path = std::string(SPARSETUNE_SHARED_DIR) + "/matrices/" + s.file;
    INFO(s.file);
    if (s.field == "complex") {
      CHECK_THROWS_CONTAINING(read_matrix_market(path), s.file,
                              ":1: ", "complex matrices are not supported");
      ++refused;
      continue;
    }
    MtxInfo info;
    const Coo64 c = read_matrix_market(path, &info);
    CHECK(info.rows == s.rows);
    CHECK(info.cols == s.cols);
    CHECK(info.stored_entries == s.stored);
    CHECK(to_string(info.field) == s.field);
    CHECK(to_string(info.symmetry) == s.symmetry);
    const auto diagonal =
        std::count_if(c.row.begin(), c.row.end(),
                      [&, k = std::size_t{0}](auto r) mutable { return r == c.col[k++]; });
    if (s.symmetry == "general") {
      CHECK(c.nnz() == s.stored);
    } else {
      CHECK(c.nnz() == 2 * s.stored - diagonal);
    }
    CHECK(info.expanded_entries == c.nnz());
    std::int64_t dups = -1;
    const Csr64 a = coo_to_csr<std::int64_t, std::int64_t>(c, &dups);
    CHECK(a.nnz() + dups == c.nnz());
    // The direct CSR path (read_matrix) agrees with COO -> CSR.
    MtxInfo direct;
    CHECK(same_matrix(a, read_matrix(path, &direct)));
    CHECK(direct.duplicates == dups);
    CHECK(direct.expanded_entries == c.nnz());
    ++parsed;
  }
  CHECK(parsed == 44);
  CHECK(refused == 3);
}

TEST_CASE("all shared tensors parse; order, nnz and dimensions match an independent count",
          "[io][shared]") {
  const std::vector<std::string> names = {
      "KG_JF17K_3", "KG_JF17K_4", "KG_WikiPeople_3", "T2_d_LMOP", "TEvv", "aminoacid", "d_LMOP"};
  for (const auto& name : names) {
    const std::string path = std::string(SPARSETUNE_SHARED_DIR) + "/tensors/" + name + ".tns.gz";
    INFO(name);
    // Independent reference: count data lines and the largest index per mode with iostreams.
    std::istringstream text(read_file_decompressed(path));
    std::string line;
    std::int64_t lines = 0, ragged = 0;
    int order = -1;
    std::vector<std::int64_t> max_index;
    while (std::getline(text, line)) {
      std::istringstream tok(line);
      std::vector<std::string> t;
      for (std::string w; tok >> w;) t.push_back(w);
      if (t.empty() || t[0][0] == '#') continue;
      if (order < 0) {
        order = static_cast<int>(t.size()) - 1;
        max_index.assign(order, 0);
      }
      if (static_cast<int>(t.size()) != order + 1) ++ragged;
      for (int m = 0; m < order; ++m)
        max_index[m] = std::max<std::int64_t>(max_index[m], std::stoll(t[m]));
      ++lines;
    }
    REQUIRE(ragged == 0);
    TnsInfo info;
    const SparseTensor x = read_tns(path, &info);
    CHECK(x.order() == order);
    CHECK(info.stored_entries == lines);
    CHECK(x.nnz() + info.duplicates == lines);
    CHECK(x.dims == max_index);
    CHECK_FALSE(info.header);
  }
}
