#include "graph/format.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/error.hpp"
#include "graph/half.hpp"
#include "graph/interpreter.hpp"

namespace sparsetune::graph {

namespace {

const char* kKinds[] = {"stored",   "constant", "linear", "step",
                        "periodic", "derived",  "table",  "packed"};
constexpr int kKindCount = 8;

std::int64_t expected_length(const PartFormat& p, Arr a) {
  switch (a) {
    case Arr::bmtb_first_bmw:
      return p.n_bmtb + 1;
    case Arr::bmw_first_bmt:
      return p.n_bmw + 1;
    case Arr::bmt_first_nz:
    case Arr::bmt_stride:
    case Arr::bmt_size:
    case Arr::bmt_row:
      return p.n_bmt;
    case Arr::bmw_row:
      return p.n_bmw;
    case Arr::bmtb_row:
    case Arr::bmtb_rows:
      return p.n_bmtb;
    case Arr::nz_col:
    case Arr::nz_col_hi:
    case Arr::nz_row_delta:
    case Arr::nz_val:
      return p.nnz_stored;
    case Arr::origin_row:
      return p.rows;
    case Arr::bmw_first_nz:
      return p.n_bmw + 1;
    case Arr::bmtb_first_nz:
      return p.n_bmtb + 1;
    case Arr::bmw_first_tc:
      return p.n_bmw + 1;
    case Arr::tc_bit:
      return p.n_tc * (p.tc_w / 4);  // 32-bit words of 8 x tc_w bits
    case Arr::tc_col:
      return p.n_tc * p.tc_w;
    case Arr::tc_ptr:
      return p.n_tc + 1;
  }
  return -1;
}

template <class T>
void put(std::vector<std::uint8_t>& out, T v) {
  const auto at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

io::NamedArray pack(const std::string& name, const FormatArray& a) {
  io::NamedArray n;
  n.name = name;
  n.dtype = a.dtype;
  n.shape = {a.length};
  auto& out = n.bytes;
  out.reserve(static_cast<std::size_t>(a.length) * io::dtype_size(a.dtype));
  if (a.dtype == "F64")
    for (double v : a.reals) put(out, v);
  else if (a.dtype == "F32")
    for (double v : a.reals) put(out, static_cast<float>(v));
  else if (a.dtype == "F16")
    for (double v : a.reals) put(out, float_to_half(static_cast<float>(v)));
  else if (a.dtype == "I8")
    for (auto v : a.ints) put(out, static_cast<std::int8_t>(v));
  else if (a.dtype == "I16")
    for (auto v : a.ints) put(out, static_cast<std::int16_t>(v));
  else if (a.dtype == "I32")
    for (auto v : a.ints) put(out, static_cast<std::int32_t>(v));
  else if (a.dtype == "I64")
    for (auto v : a.ints) put(out, v);
  else
    throw Error("format: array " + name + " has unsupported dtype " + a.dtype);
  return n;
}

// nz_col's 16-, 24- or 32-bit words: the column, the packed nz_row_delta above it (if any).
std::vector<std::uint64_t> col_words(const PartFormat& p) {
  const auto& col = p.array(Arr::nz_col);
  const auto d = p.arrays.find(arr_name(Arr::nz_row_delta));
  const bool packed = d != p.arrays.end() && d->second.model.kind == ArrayModel::Kind::Packed;
  const auto shift = packed ? d->second.model.a : 0;
  const std::uint64_t mask = (std::uint64_t{1} << col_word_bits(p)) - 1;
  std::vector<std::uint64_t> w(col.ints.size());
  for (std::size_t k = 0; k < w.size(); ++k)
    w[k] = (static_cast<std::uint64_t>(col.ints[k]) |
            (packed ? static_cast<std::uint64_t>(d->second.ints.at(k)) << shift : 0)) &
           mask;
  return w;
}

// nz_col as stored: its words, or their low 16 bits when split; as the signed type stores them
// (a top bit set reads back negative).
FormatArray stored_col(const PartFormat& p) {
  FormatArray a = p.array(Arr::nz_col);
  const auto w = col_words(p);
  for (std::size_t k = 0; k < w.size(); ++k)
    a.ints[k] = a.dtype == "I16" ? static_cast<std::int16_t>(w[k] & 0xffffu)
                                 : static_cast<std::int32_t>(w[k]);
  return a;
}

// Joins a split nz_col's low 16 bits and nz_col_hi back into its words; false when the
// description does not allow it (the caller names the part).
bool join_col_words(PartFormat& p) {
  const auto h = p.arrays.find(arr_name(Arr::nz_col_hi));
  if (h == p.arrays.end()) return true;
  const auto c = p.arrays.find(arr_name(Arr::nz_col));
  if (c == p.arrays.end() || !c->second.stored() || c->second.dtype != "I16" ||
      !h->second.stored() || h->second.dtype != "I8" || c->second.length != h->second.length)
    return false;
  auto& col = c->second.ints;
  auto& hi = h->second.ints;
  for (std::size_t k = 0; k < col.size(); ++k) {
    hi[k] &= 0xff;
    col[k] = (col[k] & 0xffff) | hi[k] << 16;
  }
  return true;
}

// Splits nz_col's stored words into the column and the packed nz_row_delta; false when the
// description does not allow it (the caller names the part).
bool unpack_row_delta(PartFormat& p) {
  const auto d = p.arrays.find(arr_name(Arr::nz_row_delta));
  if (d == p.arrays.end() || d->second.model.kind != ArrayModel::Kind::Packed) return true;
  const auto c = p.arrays.find(arr_name(Arr::nz_col));
  if (c == p.arrays.end() || !c->second.stored()) return false;
  const int bits = col_word_bits(p);
  const auto shift = d->second.model.a;
  if (bits == 0 || shift < 1 || shift >= bits || c->second.length != d->second.length) return false;
  const std::uint64_t word = (std::uint64_t{1} << bits) - 1, low = (std::uint64_t{1} << shift) - 1;
  auto& col = c->second.ints;
  auto& delta = d->second.ints;
  delta.resize(col.size());
  for (std::size_t k = 0; k < col.size(); ++k) {
    const auto w = static_cast<std::uint64_t>(col[k]) & word;
    delta[k] = static_cast<std::int64_t>(w >> shift);
    col[k] = static_cast<std::int64_t>(w & low);
  }
  return true;
}

template <class T>
T get(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

void unpack(const io::NamedArray& n, FormatArray& a, const std::string& where) {
  if (n.dtype != a.dtype)
    throw InputError(where, 0, "array " + n.name + " is " + n.dtype + ", described as " + a.dtype);
  if (n.shape.size() != 1 || n.shape[0] != a.length)
    throw InputError(
        where, 0, "array " + n.name + " does not have " + std::to_string(a.length) + " elements");
  const auto* p = n.bytes.data();
  const auto len = static_cast<std::size_t>(a.length);
  if (a.dtype[0] == 'F') {
    a.reals.resize(len);
    for (std::size_t i = 0; i < len; ++i) {
      a.reals[i] = a.dtype == "F64"   ? get<double>(p + 8 * i)
                   : a.dtype == "F32" ? get<float>(p + 4 * i)
                                      : half_to_float(get<std::uint16_t>(p + 2 * i));
      // A matrix's values are finite (its readers refuse others): a NaN or inf was written in.
      if (!std::isfinite(a.reals[i]))
        throw InputError(
            where, 0,
            "array " + n.name + " holds a value that is not finite at " + std::to_string(i));
    }
  } else {
    a.ints.resize(len);
    for (std::size_t i = 0; i < len; ++i)
      a.ints[i] = a.dtype == "I64"   ? get<std::int64_t>(p + 8 * i)
                  : a.dtype == "I32" ? get<std::int32_t>(p + 4 * i)
                  : a.dtype == "I16" ? get<std::int16_t>(p + 2 * i)
                                     : get<std::int8_t>(p + i);
  }
}

nlohmann::json model_json(const ArrayModel& m) {
  nlohmann::json j = {{"kind", kKinds[static_cast<int>(m.kind)]}};
  if (m.kind == ArrayModel::Kind::Stored || m.kind == ArrayModel::Kind::Derived) return j;
  if (m.kind == ArrayModel::Kind::Packed) return j["in"] = "nz_col", j["shift"] = m.a, j;
  j["a"] = m.a, j["b"] = m.b, j["c"] = m.c, j["p"] = m.p;
  j["exceptions"] = nlohmann::json::array();
  for (const auto& [i, v] : m.exceptions) j["exceptions"].push_back({i, v});
  if (m.kind == ArrayModel::Kind::Table) j["table"] = m.table;
  return j;
}

}  // namespace

const char* model_kind_name(ArrayModel::Kind k) { return kKinds[static_cast<int>(k)]; }

std::int64_t ArrayModel::formula(std::int64_t i) const {
  switch (kind) {
    case Kind::Stored:
    case Kind::Derived:
    case Kind::Packed:
      return 0;
    case Kind::Constant:
      return a;
    case Kind::Linear:
      return a * i + b;
    case Kind::Step:
      return a * (i / p) + b;
    case Kind::Periodic:
      return a * (i % p) + b * (i / p) + c;
    case Kind::Table: {
      const std::int64_t k = i / p;
      const std::int64_t v =
          a * (i % p) + (k >= 0 && k < static_cast<std::int64_t>(table.size()) ? table[k] : 0);
      return std::min(std::max(v, b), c);
    }
  }
  return 0;
}

std::int64_t ArrayModel::eval(std::int64_t i) const {
  if (!exceptions.empty()) {
    auto it = std::lower_bound(exceptions.begin(), exceptions.end(),
                               std::make_pair(i, std::numeric_limits<std::int64_t>::min()));
    if (it != exceptions.end() && it->first == i) return it->second;
  }
  return formula(i);
}

void derive_implied_threads(PartFormat& p) {
  if (p.implied_threads == 0) return;
  const bool warp = p.implied_threads == 1;
  const Arr prefix = warp ? Arr::bmw_first_nz : Arr::bmtb_first_nz;
  const auto& nz = p.array(prefix).ints;
  const auto& first_bmt = p.array(Arr::bmw_first_bmt).ints;
  const auto& first_bmw = p.array(Arr::bmtb_first_bmw).ints;
  const std::int64_t parents = warp ? p.n_bmw : p.n_bmtb;
  auto bad = [](const std::string& what) { return Error("format: implied threads: " + what); };
  std::vector<std::int64_t> first(p.n_bmt), stride(p.n_bmt), size(p.n_bmt), row(p.n_bmt);
  const std::vector<std::int64_t>* parent_row = nullptr;
  if (auto it = p.arrays.find(arr_name(warp ? Arr::bmw_row : Arr::bmtb_row)); it != p.arrays.end())
    parent_row = &it->second.ints;
  for (std::int64_t q = 0; q < parents; ++q) {
    // The parent's threads: [t0, t1) (a warp block's own, or all of a thread block's warps').
    const std::int64_t t0 = warp ? first_bmt.at(q) : first_bmt.at(first_bmw.at(q));
    const std::int64_t t1 = warp ? first_bmt.at(q + 1) : first_bmt.at(first_bmw.at(q + 1));
    const std::int64_t b = nz.at(q), e = nz.at(q + 1), k = t1 - t0;
    if (t0 < 0 || t1 > p.n_bmt || k < 0 || b > e || (k == 0) != (e == b) || k > e - b)
      throw bad("parent " + std::to_string(q) + " is inconsistent");
    for (std::int64_t t = t0; t < t1; ++t) {
      first[t] = b + (t - t0);
      stride[t] = k;
      size[t] = (e - first[t] + k - 1) / k;
      row[t] = parent_row ? parent_row->at(q) : -1;
    }
  }
  const std::pair<Arr, std::vector<std::int64_t>*> out[] = {{Arr::bmt_first_nz, &first},
                                                            {Arr::bmt_stride, &stride},
                                                            {Arr::bmt_size, &size},
                                                            {Arr::bmt_row, &row}};
  for (const auto& [a, v] : out) {
    auto it = p.arrays.find(arr_name(a));
    if (it != p.arrays.end() && it->second.model.kind == ArrayModel::Kind::Derived) {
      if (a == Arr::bmt_row && !parent_row) throw bad("bmt_row needs the parent's rows");
      it->second.ints = std::move(*v);
    }
  }
}

const FormatArray& PartFormat::array(Arr a) const {
  auto it = arrays.find(arr_name(a));
  if (it == arrays.end()) throw Error(std::string("format: part has no array ") + arr_name(a));
  return it->second;
}

std::vector<std::size_t> Format::launch_order() const {
  std::vector<std::size_t> order;
  if (storing_part >= 0 && static_cast<std::size_t>(storing_part) < parts.size())
    order.push_back(static_cast<std::size_t>(storing_part));
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (static_cast<int>(i) != storing_part) order.push_back(i);
  return order;
}

void check_layout(const std::string& layout, const std::string& op) {
  if (layout != "row" && layout != "col")
    throw Error("layout must be row or col, not '" + layout + "'");
  if (layout != "row" && op != "spmm")
    throw Error("layout " + layout + " is for op spmm (B and C), not " + op);
}

std::string value_dtype(const std::string& dtype) {
  if (dtype == "f64") return "F64";
  if (dtype == "f32") return "F32";
  if (dtype == "f16") return "F16";
  throw Error("unknown value type '" + dtype + "' (f64, f32 or f16)");
}

std::string int_dtype_for(std::int64_t lo, std::int64_t hi, int bits) {
  for (int b : {8, 16, 32}) {
    if (b > bits) break;
    const std::int64_t m = std::int64_t{1} << (b - 1);
    if (lo >= -m && hi < m) return "I" + std::to_string(b);
  }
  return bits <= 32 ? "I32" : "I64";
}

nlohmann::json format_description(const Format& f) {
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : f.parts) {
    nlohmann::json arrays = nlohmann::json::object();
    for (const auto& [name, a] : p.arrays)
      arrays[name] = {{"dtype", a.dtype}, {"length", a.length}, {"model", model_json(a.model)}};
    parts.push_back(
        {{"path", p.path},
         {"kernel", p.kernel},
         {"rows", p.rows},
         {"nnz_stored", p.nnz_stored},
         {"pad_entries", p.pad_entries},
         {"n_bmtb", p.n_bmtb},
         {"n_bmw", p.n_bmw},
         {"n_bmt", p.n_bmt},
         {"threads", p.threads},
         {"grid", p.grid},
         {"shmem_rows", p.shmem_rows},
         {"reductions", p.reductions},
         {"atomic", p.atomic},
         {"single_rounds", {p.single_bmtb_round, p.single_warp_round, p.single_thread_round}},
         {"implied_threads", p.implied_threads},
         {"arrays", arrays}});
    // SpMM's column tile; SpMV binaries keep their fields (and header hash) as they were.
    // (lanes only when several lanes share entries, so earlier SpMM binaries stay as they were.)
    if (f.op == "spmm")
      parts.back()["col_tile"] = p.col_lanes > 1
                                     ? nlohmann::json{p.col_tile, p.col_vec, p.col_lanes}
                                     : nlohmann::json{p.col_tile, p.col_vec};
    if (p.n_tc > 0) parts.back()["tc"] = {p.n_tc, p.tc_w};
    // Only when set, so earlier binaries keep their fields (and header hash).
    if (p.thread_loads > 1) parts.back()["thread_loads"] = p.thread_loads;
  }
  return parts;
}

io::SafetensorsFile to_safetensors(const Format& f, const std::string& tool_version) {
  io::SafetensorsFile s;
  nlohmann::json kernels = nlohmann::json::array(), launch = nlohmann::json::array();
  for (std::size_t i = 0; i < f.parts.size(); ++i) {
    const auto& p = f.parts[i];
    kernels.push_back(p.kernel);
    launch.push_back({{"kernel", p.kernel}, {"grid", p.grid}, {"block", p.threads}});
    for (const auto& [name, a] : p.arrays) {
      if (!a.stored()) continue;
      const std::string key = "p" + std::to_string(i) + "." + name;
      const bool words = name == arr_name(Arr::nz_col) && col_words_hold_more(p);
      s.arrays.push_back(words ? pack(key, stored_col(p)) : pack(key, a));
    }
  }
  s.metadata = {{"format", "sparsetune-format"},
                {"tool", "sparsetune"},
                {"version", tool_version},
                {"op", f.op},
                {"dtype", f.dtype},
                {"index_bits", std::to_string(f.index_bits)},
                {"shape", nlohmann::json({f.rows, f.cols}).dump()},
                {"nnz", std::to_string(f.nnz)},
                {"fingerprint", f.fingerprint},
                {"graph", f.graph.dump()},
                {"kernels", kernels.dump()},
                {"launch", launch.dump()},
                {"parts", format_description(f).dump()},
                {"store_only", f.store_only ? "true" : "false"}};
  if (f.col_major()) s.metadata["layout"] = f.layout;
  // Written only when set, so the binaries of other formats are unchanged.
  if (f.storing_part >= 0) s.metadata["storing_part"] = std::to_string(f.storing_part);
  if (f.op == "sptv") pack_sptv(f, s);
  return s;
}

namespace {

// Every number in a format's metadata is an integer: a float there (or an integer past int64,
// which the parser reads as a float) would make the integer reads below undefined. Iterative, as
// the metadata may nest deep. (Found by fuzz_format.)
void require_integers(const nlohmann::json& root, const std::function<Error(std::string)>& bad,
                      const char* key) {
  std::vector<const nlohmann::json*> todo = {&root};
  while (!todo.empty()) {
    const nlohmann::json* j = todo.back();
    todo.pop_back();
    if (j->is_number_float())
      throw bad(std::string("'") + key + "' holds " + j->dump() + " where integers belong");
    if (j->is_structured())
      for (const auto& child : *j) todo.push_back(&child);
  }
}

}  // namespace

Format from_safetensors(const io::SafetensorsFile& s, const std::string& source) {
  auto meta = [&](const char* k) -> const std::string& {
    auto it = s.metadata.find(k);
    if (it == s.metadata.end())
      throw InputError(source, 0, std::string("metadata has no '") + k + "'");
    return it->second;
  };
  auto bad = [&](const std::string& what) { return InputError(source, 0, what); };
  if (meta("format") != "sparsetune-format") throw bad("not a sparsetune format binary");
  Format f;
  try {
    f.op = meta("op");
    if (f.op != "spmv" && f.op != "sptv" && f.op != "spmm")
      throw bad("op '" + f.op + "' is not supported");
    f.dtype = meta("dtype");
    value_dtype(f.dtype);
    f.index_bits = std::stoi(meta("index_bits"));
    if (f.index_bits != 32 && f.index_bits != 64) throw bad("index_bits must be 32 or 64");
    const auto shape = nlohmann::json::parse(meta("shape"));
    require_integers(shape, bad, "shape");
    f.rows = shape.at(0).get<std::int64_t>();
    f.cols = shape.at(1).get<std::int64_t>();
    f.nnz = std::stoll(meta("nnz"));
    if (f.rows < 0 || f.cols < 0 || f.nnz < 0) throw bad("negative shape or nnz");
    f.fingerprint = meta("fingerprint");
    f.graph = nlohmann::json::parse(meta("graph"));
    const auto parts = nlohmann::json::parse(meta("parts"));
    require_integers(parts, bad, "parts");
    if (!parts.is_array()) throw bad("'parts' is not an array");
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto& j = parts[i];
      PartFormat p;
      p.path = j.at("path").get<std::string>();
      p.kernel = j.at("kernel").get<std::string>();
      p.rows = j.at("rows").get<std::int64_t>();
      p.nnz_stored = j.at("nnz_stored").get<std::int64_t>();
      p.pad_entries = j.at("pad_entries").get<std::int64_t>();
      p.n_bmtb = j.at("n_bmtb").get<std::int64_t>();
      p.n_bmw = j.at("n_bmw").get<std::int64_t>();
      p.n_bmt = j.at("n_bmt").get<std::int64_t>();
      p.threads = j.at("threads").get<int>();
      p.grid = j.at("grid").get<std::int64_t>();
      p.shmem_rows = j.at("shmem_rows").get<std::int64_t>();
      p.reductions = j.at("reductions").get<std::vector<std::string>>();
      p.atomic = j.at("atomic").get<bool>();
      const auto rounds = j.at("single_rounds");
      p.single_bmtb_round = rounds.at(0).get<bool>();
      p.single_warp_round = rounds.at(1).get<bool>();
      p.single_thread_round = rounds.at(2).get<bool>();
      p.implied_threads = j.at("implied_threads").get<int>();
      if (p.implied_threads < 0 || p.implied_threads > 2) throw bad("bad implied_threads");
      if (j.contains("tc")) {  // TC blocks of a dense unfolding
        p.n_tc = j.at("tc").at(0).get<std::int64_t>();
        p.tc_w = j.at("tc").at(1).get<int>();
        if (p.n_tc < 0 || p.n_tc > (std::int64_t{1} << 40) || p.tc_w < 1 || p.tc_w > 64)
          throw bad("part " + std::to_string(i) + ": bad TC block count or width");
      }
      const std::string where = "part " + std::to_string(i) + ": ";
      if (j.contains("thread_loads")) {
        p.thread_loads = j.at("thread_loads").get<int>();
        if (p.thread_loads < 1 || p.thread_loads > 8)
          throw bad(where + "thread_loads must be 1 to 8, not " + std::to_string(p.thread_loads));
      }
      if (f.op == "spmm") {
        const auto tile = j.at("col_tile");
        p.col_tile = tile.at(0).get<int>();
        p.col_vec = tile.at(1).get<int>();
        p.col_lanes = tile.size() > 2 ? tile.at(2).get<int>() : 1;
        if (p.col_tile < 1 || p.col_tile > 32 ||
            (p.col_vec != 1 && p.col_vec != 2 && p.col_vec != 4) || p.col_tile % p.col_vec ||
            tile.size() > 3 || p.col_lanes < 1 || p.col_lanes > 32 ||
            (p.col_lanes & (p.col_lanes - 1)) != 0)
          throw bad(where +
                    "col_tile must be [tn in 1..32, vec 1, 2 or 4 dividing tn(, lanes: a power "
                    "of two up to 32)]");
      }
      if (p.rows < 0 || p.nnz_stored < 0 || p.n_bmtb < 0 || p.n_bmw < 0 || p.n_bmt < 0 ||
          p.grid < 0 || p.shmem_rows < 0 || p.shmem_rows > 4096)
        throw bad(where + "negative or oversized count");
      if (p.threads < 32 || p.threads > 1024 || p.threads % 32)
        throw bad(where + "bad thread count");
      if ((p.grid == 0) != (p.n_bmtb == 0)) throw bad(where + "grid does not match the BMTB count");
      for (auto it = j.at("arrays").begin(); it != j.at("arrays").end(); ++it) {
        const auto which = arr_from_name(it.key());
        if (!which) throw bad(where + "unknown array '" + it.key() + "'");
        FormatArray a;
        a.dtype = it.value().at("dtype").get<std::string>();
        a.length = it.value().at("length").get<std::int64_t>();
        if (a.length != expected_length(p, *which))
          throw bad(where + "array " + it.key() + " has length " + std::to_string(a.length) +
                    ", expected " + std::to_string(expected_length(p, *which)));
        const bool real = *which == Arr::nz_val;
        if (real != (a.dtype[0] == 'F') || io::dtype_size(a.dtype) == 0 || a.dtype == "BF16" ||
            a.dtype[0] == 'U')
          throw bad(where + "array " + it.key() + " has dtype " + a.dtype);
        if (real && a.dtype != value_dtype(f.dtype))
          throw bad(where + "array " + it.key() + " has dtype " + a.dtype + ", the metadata's " +
                    "value type is " + f.dtype);
        const auto& m = it.value().at("model");
        const std::string kind = m.at("kind").get<std::string>();
        bool found = false;
        for (int k = 0; k < kKindCount; ++k)
          if (kind == kKinds[k]) a.model.kind = static_cast<ArrayModel::Kind>(k), found = true;
        if (!found || (real && !a.stored())) throw bad(where + "array " + it.key() + ": bad model");
        if (a.model.kind == ArrayModel::Kind::Derived) {
          if (!p.implied_threads || (*which != Arr::bmt_first_nz && *which != Arr::bmt_stride &&
                                     *which != Arr::bmt_size && *which != Arr::bmt_row))
            throw bad(where + "array " + it.key() + " cannot be derived");
        } else if (a.model.kind == ArrayModel::Kind::Packed) {
          // Filled from nz_col's words once every array is read (unpack_row_delta).
          if (*which != Arr::nz_row_delta || m.value("in", std::string()) != "nz_col")
            throw bad(where + "array " + it.key() +
                      " cannot be packed (only nz_row_delta, in nz_col)");
          a.model.a = m.at("shift").get<std::int64_t>();
        } else if (!a.stored()) {
          a.model.a = m.at("a").get<std::int64_t>();
          a.model.b = m.at("b").get<std::int64_t>();
          a.model.c = m.at("c").get<std::int64_t>();
          a.model.p = m.at("p").get<std::int64_t>();
          if (a.model.p < 1) throw bad(where + "array " + it.key() + ": model period < 1");
          if (a.model.kind == ArrayModel::Kind::Table) {
            a.model.table = m.at("table").get<std::vector<std::int64_t>>();
            // Every period the array spans has its offset, and the clamp is a range.
            if (a.model.b > a.model.c ||
                static_cast<std::int64_t>(a.model.table.size()) <
                    (a.length + a.model.p - 1) / a.model.p ||
                a.model.table.size() > kMaxModelTable)
              throw bad(where + "array " + it.key() + ": bad table model");
          }
          for (const auto& e : m.at("exceptions"))
            a.model.exceptions.push_back(
                {e.at(0).get<std::int64_t>(), e.at(1).get<std::int64_t>()});
          if (!std::is_sorted(a.model.exceptions.begin(), a.model.exceptions.end()))
            throw bad(where + "array " + it.key() + ": exceptions out of order");
          a.ints.resize(a.length);
          for (std::int64_t k = 0; k < a.length; ++k) a.ints[k] = a.model.eval(k);
        } else {
          const auto* n = s.find("p" + std::to_string(i) + "." + it.key());
          if (!n) throw bad(where + "array " + it.key() + " is missing");
          unpack(*n, a, source);
        }
        p.arrays[it.key()] = std::move(a);
      }
      if (!join_col_words(p))
        throw bad(where + "nz_col_hi needs a stored 16-bit nz_col and is an 8-bit array of its " +
                  "length");
      if (!unpack_row_delta(p))
        throw bad(where + "nz_row_delta is packed, but not into a stored 16-, 24- or 32-bit " +
                  "nz_col of its length with a shift inside the word");
      derive_implied_threads(p);
      // Every stored or computed column, padding included, lies in the matrix: the kernels read
      // x only for non-zero values, but a format whose columns leave x is corrupt either way.
      for (const char* cols : {"nz_col", "tc_col"})
        if (auto c = p.arrays.find(cols); c != p.arrays.end())
          for (std::int64_t k = 0; k < c->second.length && k < std::ssize(c->second.ints); ++k)
            if (c->second.ints[k] < 0 || c->second.ints[k] >= std::max<std::int64_t>(f.cols, 1))
              throw bad(where + "array " + cols + ": column " + std::to_string(c->second.ints[k]) +
                        " at entry " + std::to_string(k) + " is out of range");
      f.parts.push_back(std::move(p));
    }
    // Absent in binaries written before kernels could store: those kernels add into y.
    if (auto it = s.metadata.find("store_only"); it != s.metadata.end()) {
      if (it->second != "true" && it->second != "false")
        throw bad("store_only must be 'true' or 'false', not '" + it->second + "'");
      f.store_only = it->second == "true";
    }
    // Absent unless one part stores and the others add.
    if (auto it = s.metadata.find("storing_part"); it != s.metadata.end()) {
      std::size_t used = 0;
      const long long k = std::stoll(it->second, &used);
      if (used != it->second.size() || k < 0 || k >= static_cast<long long>(f.parts.size()))
        throw bad("storing_part must be a part's index (0 to " +
                  std::to_string(static_cast<long long>(f.parts.size()) - 1) + "), not '" +
                  it->second + "'");
      if (f.store_only) throw bad("storing_part is set, but so is store_only");
      if (f.op != "spmv" && f.op != "sptv")
        throw bad("storing_part is an SpMV and SpTV setting, but the op is " + f.op);
      f.storing_part = static_cast<int>(k);
    }
    // Absent in row-major binaries (and those written before column-major SpMM).
    if (auto it = s.metadata.find("layout"); it != s.metadata.end()) {
      if (f.op != "spmm") throw bad("layout is an SpMM setting, but the op is " + f.op);
      if (it->second != "row" && it->second != "col")
        throw bad("layout must be 'row' or 'col', not '" + it->second + "'");
      f.layout = it->second;
    }
    if (f.op == "sptv") unpack_sptv(s, f, source);
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("malformed metadata: ") + e.what());
  } catch (const std::invalid_argument&) {
    throw bad("malformed number in metadata");
  } catch (const std::out_of_range&) {
    throw bad("number out of range in metadata");
  }
  // A kernel that stores into y leaves a row it misses unwritten and keeps one of two writes:
  // the claim is checked by walking the format as the kernels do.
  if (f.store_only) {
    // Every row needs a local row of some part (checked first: the walk counts per row of y).
    std::int64_t local_rows = 0;
    for (const auto& p : f.parts) local_rows += p.rows;
    bool holds = local_rows >= f.rows;
    try {
      holds = holds && writes_each_row_once(f);
    } catch (const Error& e) {
      throw bad(e.what());
    }
    if (!holds)
      throw bad("store_only is set, but some row of y is not written exactly once without atomics");
  }
  // The storing part writes every row once and runs first: a row it missed would keep the
  // caller's y, a row it wrote twice would lose a share.
  if (f.storing_part >= 0) {
    bool holds = false;
    try {
      holds = writes_each_row_once(f, static_cast<std::size_t>(f.storing_part));
    } catch (const Error& e) {
      throw bad(e.what());
    }
    if (!holds)
      throw bad("storing_part " + std::to_string(f.storing_part) +
                " is set, but that part does not write every row of y exactly once without "
                "atomics");
  }
  return f;
}

void write_format(const std::string& path, const Format& f, const std::string& tool_version) {
  io::write_safetensors(path, to_safetensors(f, tool_version));
}

Format read_format(const std::string& path) {
  try {
    return from_safetensors(io::read_safetensors(path), path);
  } catch (const InputError&) {
    throw;                    // names the file already
  } catch (const Error& e) {  // a rule checked below the reader (implied threads, value types)
    const std::string what = e.what();
    if (what.rfind(path, 0) == 0) throw;
    throw Error(path + ": " + what);
  }
}

bool col_words_hold_more(const PartFormat& p) {
  const auto d = p.arrays.find(arr_name(Arr::nz_row_delta));
  return p.has(Arr::nz_col_hi) ||
         (d != p.arrays.end() && d->second.model.kind == ArrayModel::Kind::Packed);
}

int col_word_bits(const PartFormat& p) {
  if (p.has(Arr::nz_col_hi)) return 24;
  const auto c = p.arrays.find(arr_name(Arr::nz_col));
  if (c == p.arrays.end()) return 0;
  return c->second.dtype == "I16" ? 16 : c->second.dtype == "I32" ? 32 : 0;
}

bool pack_row_delta(PartFormat& p) {
  const auto d = p.arrays.find(arr_name(Arr::nz_row_delta));
  const auto c = p.arrays.find(arr_name(Arr::nz_col));
  if (d == p.arrays.end() || c == p.arrays.end() || !d->second.stored() || !c->second.stored())
    return false;
  const int bits = col_word_bits(p);
  const auto& col = c->second.ints;
  const auto& delta = d->second.ints;
  if (bits == 0 || col.empty() || col.size() != delta.size()) return false;
  const auto [clo, chi] = std::minmax_element(col.begin(), col.end());
  const auto [dlo, dhi] = std::minmax_element(delta.begin(), delta.end());
  if (*clo < 0 || *dlo < 0) return false;
  const int shift = std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(*chi))));
  if (shift + static_cast<int>(std::bit_width(static_cast<std::uint64_t>(*dhi))) > bits)
    return false;
  d->second.model = ArrayModel{};
  d->second.model.kind = ArrayModel::Kind::Packed;
  d->second.model.a = shift;
  return true;
}

bool split_col_words(PartFormat& p) {
  const auto c = p.arrays.find(arr_name(Arr::nz_col));
  if (c == p.arrays.end() || !c->second.stored() || c->second.dtype != "I32" ||
      c->second.ints.empty() || p.has(Arr::nz_col_hi))
    return false;
  const auto w = col_words(p);
  if (*std::max_element(w.begin(), w.end()) >> 24) return false;
  FormatArray hi;
  hi.dtype = "I8";
  hi.length = c->second.length;
  hi.ints.resize(w.size());
  for (std::size_t k = 0; k < w.size(); ++k) hi.ints[k] = static_cast<std::int64_t>(w[k] >> 16);
  c->second.dtype = "I16";
  p.arrays[arr_name(Arr::nz_col_hi)] = std::move(hi);
  return true;
}

std::int64_t stored_bytes(const Format& f) {
  std::int64_t n = 0;
  for (const auto& p : f.parts)
    for (const auto& [name, a] : p.arrays)
      if (a.stored()) n += a.length * static_cast<std::int64_t>(io::dtype_size(a.dtype));
  return n;
}

}  // namespace sparsetune::graph
