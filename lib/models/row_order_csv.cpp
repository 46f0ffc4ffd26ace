// The CSV `row-orders collect` writes and `row-orders train` reads (models/row_order_model.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/row_orders.hpp"
#include "io/file_bytes.hpp"
#include "models/row_order_model.hpp"

namespace sparsetune::models {

namespace {

std::size_t order_count() { return row_orders::all_orders().size(); }
std::string order_name(std::size_t k) { return row_orders::name(row_orders::all_orders()[k]); }

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream s(line);
  while (std::getline(s, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

// The shortest text that reads back as the same double.
std::string number_text(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::string row_order_csv(const std::vector<RowOrderRecord>& records) {
  std::ostringstream s;
  s << "matrix,rows,cols,nnz,n";
  for (const auto& f : row_order_feature_names()) s << ',' << f;
  for (std::size_t k = 0; k < order_count(); ++k) s << ",t_" << order_name(k);
  for (std::size_t k = 0; k < order_count(); ++k) s << ",ms_" << order_name(k);
  s << ",cusparse_us,candidates,notes\n";
  for (const auto& r : records) {
    if (r.matrix.find_first_of(",\n") != std::string::npos)
      throw Error("row-order CSV: matrix name '" + r.matrix + "' holds a comma or a newline");
    s << r.matrix << ',' << r.rows << ',' << r.cols << ',' << r.nnz << ',' << r.n;
    for (double v : r.features) s << ',' << number_text(v);
    for (double v : r.time_us) s << ',' << number_text(v);
    for (double v : r.order_ms) s << ',' << number_text(v);
    s << ',' << number_text(r.cusparse_us) << ',' << row_orders::name(r.candidates);
    std::string notes = r.notes;
    std::replace(notes.begin(), notes.end(), ',', ';');
    std::replace(notes.begin(), notes.end(), '\n', ' ');
    s << ',' << notes << '\n';
  }
  return s.str();
}

std::vector<RowOrderRecord> read_row_order_csv(const std::string& path) {
  std::istringstream in(io::read_file_decompressed(path));
  std::string line;
  int no = 0;
  std::vector<std::string> header;
  std::vector<RowOrderRecord> out;
  const std::size_t nf = row_order_feature_names().size(), no_ = order_count();
  std::size_t width = 5 + nf + 2 * no_ + 1;
  bool has_cusparse = false, has_candidates = false;
  std::map<std::pair<std::string, std::int64_t>, int> line_of;  // (matrix, N) -> its line
  while (std::getline(in, line)) {
    ++no;
    // A file saved on Windows or by a spreadsheet: CR line ends and a UTF-8 byte-order mark.
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (line.empty() || line[0] == '#') continue;
    const auto where = path + ":" + std::to_string(no);
    auto cells = split_csv(line);
    if (header.empty()) {
      header = cells;
      std::vector<std::string> want = {"matrix", "rows", "cols", "nnz", "n"};
      for (const auto& f : row_order_feature_names()) want.push_back(f);
      for (std::size_t k = 0; k < no_; ++k) want.push_back("t_" + order_name(k));
      for (std::size_t k = 0; k < no_; ++k) want.push_back("ms_" + order_name(k));
      has_cusparse = header.size() > want.size() && header[want.size()] == "cusparse_us";
      if (has_cusparse) want.push_back("cusparse_us");
      has_candidates =
          has_cusparse && header.size() > want.size() && header[want.size()] == "candidates";
      if (has_candidates) want.push_back("candidates");
      want.push_back("notes");
      width = want.size();
      for (std::size_t i = 0; i < want.size(); ++i)
        if (i >= header.size() || header[i] != want[i])
          throw Error(where + ": column " + std::to_string(i + 1) + " must be '" + want[i] +
                      "' (the header of `row-orders collect`), found '" +
                      (i < header.size() ? header[i] : std::string()) + "'");
      continue;
    }
    if (cells.size() != width)
      throw Error(where + ": " + std::to_string(cells.size()) + " fields, expected " +
                  std::to_string(width));
    auto number = [&](std::size_t i) {
      try {
        std::size_t used = 0;
        const double v = std::stod(cells[i], &used);
        if (used != cells[i].size() || !std::isfinite(v)) throw std::invalid_argument("");
        return v;
      } catch (const std::exception&) {
        throw Error(where + ": field '" + header[i] + "' is not a finite number: '" + cells[i] +
                    "'");
      }
    };
    // A count: a whole number from `low` up to 2^53 (what a double holds exactly).
    auto count = [&](std::size_t i, double low) {
      const double v = number(i);
      if (v != std::floor(v) || v < low || v > 9007199254740992.0)
        throw Error(where + ": field '" + header[i] + "' must be a whole number from " +
                    std::to_string(static_cast<long long>(low)) + " up to 2^53, not '" + cells[i] +
                    "'");
      return static_cast<std::int64_t>(v);
    };
    RowOrderRecord r;
    r.matrix = cells[0];
    r.rows = count(1, 0);
    r.cols = count(2, 0);
    r.nnz = count(3, 0);
    r.n = count(4, 1);
    if (const auto [it, fresh] = line_of.try_emplace({r.matrix, r.n}, no); !fresh)
      throw Error(where + ": " + r.matrix + " at N = " + std::to_string(r.n) +
                  " again (first on line " + std::to_string(it->second) +
                  "): a CSV holds one collection; repeated ones go into a tuning database, "
                  "whose reading averages their times");
    std::size_t i = 5;
    for (std::size_t k = 0; k < nf; ++k) r.features.push_back(number(i++));
    for (std::size_t k = 0; k < no_; ++k) r.time_us.push_back(number(i++));
    for (std::size_t k = 0; k < no_; ++k) r.order_ms.push_back(number(i++));
    if (has_cusparse) r.cusparse_us = number(i++);
    // Files without the column were written when the matrix's order was the only rule.
    r.candidates = row_orders::Candidates::matrix;
    if (has_candidates) {
      try {
        r.candidates = row_orders::parse_candidates(cells[i]);
      } catch (const Error& e) {
        throw Error(where + ": field 'candidates': " + e.what());
      }
      ++i;
    }
    r.notes = cells[i];
    out.push_back(std::move(r));
  }
  if (header.empty()) throw Error(path + ": no header line (not a `row-orders collect` CSV)");
  return out;
}

}  // namespace sparsetune::models
