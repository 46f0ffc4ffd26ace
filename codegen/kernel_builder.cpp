#include "codegen/kernel_builder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "codegen/templates.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "graph/registry.hpp"

namespace sparsetune::codegen {

namespace {

using graph::ArrayModel;
using graph::RedLevel;
using Sections = std::map<std::string, std::string>;

std::string section(const Sections& s, const std::string& name) {
  auto it = s.find(name);
  return it == s.end() ? std::string() : it->second;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// Re-indents a block of lines: the common leading indentation is replaced by `pad`.
std::string indent(const std::string& text, const std::string& pad) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  std::size_t common = std::string::npos;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    const auto first = line.find_first_not_of(' ');
    if (first != std::string::npos) common = std::min(common, first);
  }
  if (common == std::string::npos) common = 0;
  std::string out;
  for (const auto& l : lines)
    out += l.find_first_not_of(' ') == std::string::npos ? "\n" : pad + l.substr(common) + "\n";
  return out;
}

}  // namespace

bool index_fits_int32(const graph::Format& f) {
  constexpr std::int64_t kLimit = std::int64_t{1} << 30;
  auto ok = [](std::int64_t v) { return v > -kLimit && v < kLimit; };
  if (f.index_bits > 32) return false;  // the design's 64-bit indices, asked for or needed
  if (!ok(f.rows) || !ok(f.cols) || !ok(f.nnz)) return false;
  std::int64_t grid = 0;
  for (const auto& p : f.parts) {
    grid += p.grid;
    for (const std::int64_t v : {p.rows, p.nnz_stored + p.pad_entries, p.n_bmtb, p.n_bmw, p.n_bmt,
                                 p.n_tc, p.grid, p.shmem_rows})
      if (!ok(v)) return false;
    // Column words holding more than the column (a packed step, 24-bit halves) are unsigned bits
    // that the kernel masks or shifts before the cast; the columns themselves are below f.cols.
    const bool words = graph::col_words_hold_more(p);
    for (const auto& [name, a] : p.arrays) {
      if (!ok(a.length)) return false;
      // A tensor-core block's bit masks are read as unsigned bits, not as indices.
      if (!(words && name == "nz_col") && name != "tc_bit")
        for (const std::int64_t v : a.ints)
          if (!ok(v)) return false;
      const auto& m = a.model;
      if (a.held()) continue;
      for (const std::int64_t v : {m.a, m.b, m.c, m.p})
        if (!ok(v)) return false;
      for (const auto& [i, v] : m.exceptions)
        if (!ok(i) || !ok(v)) return false;
      // Every term of the formula at any index up to the length, bounded together.
      auto mag = [](std::int64_t v) { return std::abs(static_cast<double>(v)); };
      const double n = static_cast<double>(a.length) + 1.0;
      const double per = static_cast<double>(std::max<std::int64_t>(1, m.p));
      double bound = 0.0;
      switch (m.kind) {
        case ArrayModel::Kind::Constant:
          bound = mag(m.a);
          break;
        case ArrayModel::Kind::Linear:
          bound = mag(m.a) * n + mag(m.b);
          break;
        case ArrayModel::Kind::Step:
          bound = mag(m.a) * (n / per + 1.0) + mag(m.b);
          break;
        case ArrayModel::Kind::Periodic:
          bound = mag(m.a) * per + mag(m.b) * (n / per + 1.0) + mag(m.c);
          break;
        case ArrayModel::Kind::Table:
          bound = mag(m.a) * per + mag(m.b) + mag(m.c);
          for (const std::int64_t v : m.table) bound = std::max(bound, mag(m.a) * per + mag(v));
          break;
        default:
          break;
      }
      if (bound >= static_cast<double>(kLimit)) return false;
    }
  }
  return ok(grid);
}

namespace {

// An integer literal: 64-bit, or plain `int` where the kernel's indices are 32-bit (idx32), so
// that a constant does not widen the arithmetic it enters.
std::string lit(std::int64_t v, bool idx32 = false) {
  if (idx32 && v >= INT32_MIN && v <= INT32_MAX)
    return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
  return v < 0 ? "(" + std::to_string(v) + "LL)" : std::to_string(v) + "LL";
}

// Whether a model's divisions can run on 32-bit `j = (int)i`: the array is short enough that
// every index the kernel passes fits, with room to spare. A 64-bit division by a constant costs
// several times the 32-bit one, and a DIA part evaluates its column formula once per entry.
bool narrow_division(const graph::FormatArray& a) {
  using Kind = ArrayModel::Kind;
  const auto& m = a.model;
  return (m.kind == Kind::Step || m.kind == Kind::Periodic || m.kind == Kind::Table) &&
         a.length < (std::int64_t{1} << 30) && m.p < (std::int64_t{1} << 30);
}

// The formula of a model as C, in terms of `i` (its divisions on `j`, the 32-bit copy of `i`,
// when `narrow`); a table model reads its offsets from the array named `table`.
std::string formula(const ArrayModel& m, bool narrow, const std::string& table, bool idx32) {
  const std::string idx = narrow ? "j" : "i";
  const std::string per = narrow ? std::to_string(m.p) : lit(m.p, idx32);
  auto term = [&](std::int64_t a, const std::string& x) {
    return a == 1 ? x : lit(a, idx32) + " * " + x;
  };
  auto sum = [&](std::vector<std::string> parts) {
    std::string s;
    for (const auto& p : parts)
      if (!p.empty()) s += (s.empty() ? "" : " + ") + p;
    return s.empty() ? lit(0, idx32) : s;
  };
  auto opt = [&](std::int64_t v) { return v == 0 ? std::string() : lit(v, idx32); };
  switch (m.kind) {
    case ArrayModel::Kind::Constant:
      return lit(m.a, idx32);
    case ArrayModel::Kind::Linear:
      return sum({m.a ? term(m.a, "i") : "", opt(m.b)});
    case ArrayModel::Kind::Step:
      return sum({m.a ? term(m.a, "(" + idx + " / " + per + ")") : "", opt(m.b)});
    case ArrayModel::Kind::Periodic:
      return sum({m.a ? term(m.a, "(" + idx + " % " + per + ")") : "",
                  m.b ? term(m.b, "(" + idx + " / " + per + ")") : "", opt(m.c)});
    case ArrayModel::Kind::Table:  // before the clamp, which the caller adds; `table` holds t[]
      return sum({m.a ? term(m.a, "(" + idx + " % " + per + ")") : "",
                  table + "[" + idx + " / " + per + "]"});
    case ArrayModel::Kind::Stored:
    case ArrayModel::Kind::Derived:
    case ArrayModel::Kind::Packed:
      break;
  }
  return lit(0, idx32);
}

struct StageCode {
  Sections sections;
  RedLevel level;
  std::string adapter;  // adapters.cu section used when a result enters this stage
};

class PartBuilder {
 public:
  // `atomic`: results reach C through atomics (the part's own choice, or fusion's); `device_fn`:
  // the part is a device function of the fused kernel, not a kernel of its own; `idx32`: the
  // format's indices are 32-bit (index_fits_int32, decided once for the whole source).
  PartBuilder(const graph::Format& f, const graph::PartFormat& p, std::size_t index, bool idx32,
              bool atomic = false, bool device_fn = false)
      : f_(f),
        p_(p),
        index_(index),
        atomic_(atomic || p.atomic),
        device_fn_(device_fn),
        idx32_(idx32) {
    for (const auto& r : p.reductions) {
      const auto* op = graph::find_reduction(r);
      if (!op) throw Error("format names an unknown reduction " + r);
      if (op->level() == RedLevel::Global) continue;
      Sections code = template_sections(std::string(op->fragment()) + ".cu");
      // A fragment is written against one value; SpMM's value is the part's C tile.
      if (spmm())
        for (auto& [name, text] : code) replace_all(text, "st_acc_t", "st_tile_t");
      // COL_TILE lanes: a fragment's lane-group variants (a warp of one group first), where it
      // has them; a section without one stays as it is.
      if (p.col_lanes > 1)
        for (const std::string s : {"bmw_end", "thread"}) {
          std::string v = p.col_lanes == 32 ? section(code, s + "_warp_lanes") : "";
          if (v.empty()) v = section(code, s + "_lanes");
          // $LANE_GROUP: the group's lane, shuffle mask and full-tile decision (skeleton.cu's
          // lane_group), one text for every fragment that walks its entries as a group.
          if (!v.empty())
            code[s] = fill_slots(
                v, {{"LANE_GROUP", section(template_sections("skeleton.cu"), "lane_group")}});
        }
      // `loads`: the thread level's batched variant (the rules keep it off SpMM and lane groups).
      if (op->level() == RedLevel::Thread && p.thread_loads > 1) {
        code["thread"] = section(code, "thread_loads");
        if (code["thread"].empty()) throw Error(r + " has no batched-loads fragment");
      }
      // $THREAD_RANGE: the thread block's first row and entry range (skeleton.cu's
      // thread_range), one text for every variant of the thread-level fragments.
      if (op->level() == RedLevel::Thread)
        code["thread"] = fill_slots(
            code["thread"],
            {{"THREAD_RANGE", section(template_sections("skeleton.cu"), "thread_range")}});
      stages_.push_back(
          {std::move(code), op->level(), op->level() == RedLevel::Warp ? "to_warp" : "to_block"});
    }
    if (stages_.empty() || stages_[0].level != RedLevel::Thread)
      throw Error("part " + std::to_string(index) + " has no thread-level reduction");
    // How results reach y: atomics, a plain store (store-only formats, the storing part) or a
    // plain add.
    const char* sink = atomic_                ? "gmem_atom_red.cu"
                       : f.part_stores(index) ? "gmem_store.cu"
                                              : "gmem_add.cu";
    Sections sink_code = template_sections(sink);
    if (spmm())  // a tile into C, row- or column-major
      sink_code["accept"] = section(sink_code, f.col_major() ? "accept_spmm_col" : "accept_spmm");
    stages_.push_back({std::move(sink_code), RedLevel::Global, "to_global"});
    side_ = 1;
    while (stages_[side_].level == RedLevel::Warp) ++side_;
  }

  std::string build() {
    std::string out;
    out += "// ---- part " + std::to_string(index_) +
           (p_.path.empty() ? "" : " (branch " + p_.path + ")") + ": " + chain() + "\n";
    out += "// " + std::to_string(p_.n_bmtb) + " BMTB, " + std::to_string(p_.n_bmw) + " BMW, " +
           std::to_string(p_.n_bmt) + " BMT; " + std::to_string(p_.nnz_stored) +
           " stored entries (" + std::to_string(p_.pad_entries) + " padding); launch <<<" +
           std::to_string(p_.grid) + ", " + std::to_string(p_.threads) + ">>>\n";
    std::vector<std::string> undefs;
    for (const auto& [name, a] : p_.arrays) {
      const std::string macro = "A_" + name;
      undefs.push_back(macro);
      if (a.model.kind == ArrayModel::Kind::Derived) {
        out += derived_macro(name);
        continue;
      }
      if (a.model.kind == ArrayModel::Kind::Packed) {  // above the column bits of nz_col's words
        out += "// " + name + ": packed into nz_col's words above bit " +
               std::to_string(a.model.a) + " (not stored)\n#define " + macro + "(i) ((st_idx_t)(" +
               col_word() + " >> " + std::to_string(a.model.a) + "))\n";
        continue;
      }
      if (a.stored()) {
        if (const int shift = packed_shift(); name == "nz_col" && shift > 0) {
          out += "#define " + macro + "(i) ((st_idx_t)(" + col_word() + " & " +
                 std::to_string((1u << shift) - 1) + "u))\n";
          continue;
        }
        if (name == "nz_col" && split()) {
          out +=
              "// nz_col: 24-bit words, the low 16 bits here and bits 16-23 in nz_col_hi\n"
              "#define " +
              macro + "(i) ((st_idx_t)" + col_word() + ")\n";
          continue;
        }
        out += name == "nz_val" ? "#define " + macro + "(i) st_load(p_" + name + "[(i)])\n"
                                : "#define " + macro + "(i) ((st_idx_t)p_" + name + "[(i)])\n";
        continue;
      }
      const std::string fn = "st_p" + std::to_string(index_) + "_" + name;
      out += "// " + name + ": " + graph::model_kind_name(a.model.kind) + " model" +
             (a.model.exceptions.empty()
                  ? ""
                  : " with " + std::to_string(a.model.exceptions.size()) + " exceptions") +
             " (not stored)\n";
      if (a.model.kind == ArrayModel::Kind::Table) {
        // The offsets live in constant memory: a warp reads one period's offset at a time.
        out += "static __constant__ st_idx_t " + fn + "_t[" + std::to_string(a.model.table.size()) +
               "] = {";
        for (std::size_t k = 0; k < a.model.table.size(); ++k)
          out += (k % 8 ? " " : "\n    ") + lit(a.model.table[k], idx32_) +
                 (k + 1 < a.model.table.size() ? "," : "");
        out += "};\n";
      }
      out += "static __device__ __forceinline__ st_idx_t " + fn + "(st_idx_t i) {\n";
      if (!a.model.exceptions.empty()) {
        out += "  switch (i) {\n";
        for (const auto& [i, v] : a.model.exceptions)
          out += "    case " + lit(i, idx32_) + ": return " + lit(v, idx32_) + ";\n";
        out += "    default: break;\n  }\n";
      }
      const bool narrow = narrow_division(a);
      if (narrow) out += "  const int j = (int)i;\n";
      if (a.model.kind == ArrayModel::Kind::Table) {
        out += "  const st_idx_t v = " + formula(a.model, narrow, fn + "_t", idx32_) + ";\n";
        out += "  return v < " + lit(a.model.b, idx32_) + " ? " + lit(a.model.b, idx32_) +
               " : v > " + lit(a.model.c, idx32_) + " ? " + lit(a.model.c, idx32_) + " : v;\n}\n";
      } else {
        out += "  return " + formula(a.model, narrow, "", idx32_) + ";\n}\n";
      }
      out += "#define " + macro + "(i) " + fn + "((st_idx_t)(i))\n";
    }
    std::string kernel = section(template_sections("skeleton.cu"), "kernel");
    const Sections& sk = template_sections("skeleton.cu");
    auto first_line = [](std::string s) { return s.substr(0, s.find('\n')); };
    const std::string bmtb = p_.single_bmtb_round ? "bmtb_once" : "bmtb_loop";
    replace_all(kernel, "$BMTB_LOOP", first_line(section(sk, device_fn_ ? bmtb + "_part" : bmtb)));
    if (device_fn_) {  // a range of the fused kernel's blocks: (st_block, st_grid) for blockIdx.x
      const std::string head = first_line(kernel);
      kernel = first_line(section(sk, "part_head")) + kernel.substr(head.size());
      replace_all(kernel, "$ARGS", first_line(section(sk, "part_args")) + "\n    $ARGS");
    }
    replace_all(kernel, "$BMW_LOOP",
                first_line(section(sk, p_.single_warp_round ? "bmw_once" : "bmw_loop")));
    replace_all(kernel, "$BMT_LOOP",
                first_line(section(sk, p_.single_thread_round ? "bmt_once" : "bmt_loop")));
    if (spmm() && p_.col_lanes > 1) {  // each group walks the round's thread blocks in turn
      const std::string round =
          first_line(section(sk, p_.single_thread_round ? "bmt_once" : "bmt_loop"));
      const auto at = kernel.find(round + " {\n");
      const auto eol = kernel.rfind('\n', at) + 1;
      const std::string pad = kernel.substr(eol, at - eol) + "  ";
      kernel.replace(at, round.size() + 3,
                     round + "\n" + pad + first_line(section(sk, "bmt_lanes")) + " {\n");
      replace_all(kernel, "const st_idx_t bmt = t0 + lane;",
                  first_line(section(sk, "bmt_lanes_index")));
    }
    std::string args = section(sk, spmm() ? "args_spmm" : "args_spmv");
    replace_all(kernel, "$ARGS", args.substr(0, args.find_last_not_of('\n') + 1));
    std::string params;
    for (const auto& [name, a] : p_.arrays)
      if (a.stored())
        params += ",\n    const " + c_type(a.dtype, graph::value_dtype(f_.dtype)) +
                  "* __restrict__ p_" + name;
    replace_all(kernel, "$PARAMS", params);
    std::map<std::string, std::string> slots;
    slots["OP_PROLOGUE"] =
        !spmm() ? "" : section(sk, p_.col_lanes > 1 ? "prologue_spmm_lanes" : "prologue_spmm");
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      slots["DECL"] += section(stages_[s].sections, "decl");
      slots["BMTB_BEGIN"] += section(stages_[s].sections, "bmtb_begin");
      slots["BMW_BEGIN"] += section(stages_[s].sections, "bmw_begin");
      slots["BMW_END"] += expand(section(stages_[s].sections, "bmw_end"), s + 1, 0);
      slots["BMTB_END"] += expand(section(stages_[s].sections, "bmtb_end"), s + 1, 0);
    }
    slots["THREAD"] = expand(section(stages_[0].sections, "thread"), 1, 0);
    kernel = fill_slots(kernel, slots);
    out += constants(kernel);
    for (const auto& m : undefs) out += "#undef " + m + "\n";
    return out;
  }

  // Implied threads strided over their parent (a warp block or a thread block): their
  // addressing is computed from the parent's entry range and the kernel's loop variables.
  std::string derived_macro(const std::string& name) const {
    const bool warp = p_.implied_threads == 1;
    const std::string first = warp ? "A_bmw_first_nz(bmw)" : "A_bmtb_first_nz(bmtb)";
    const std::string end = warp ? "A_bmw_first_nz(bmw + 1)" : "A_bmtb_first_nz(bmtb + 1)";
    const std::string t0 = warp ? "t_begin" : "A_bmw_first_bmt(w_begin)";
    const std::string t1 = warp ? "t_end" : "A_bmw_first_bmt(w_end)";
    std::string body;
    if (name == "bmt_first_nz") body = "(" + first + " + ((st_idx_t)(i) - " + t0 + "))";
    if (name == "bmt_stride") body = "(" + t1 + " - " + t0 + ")";
    if (name == "bmt_size") {
      // 32-bit division when every parent holds fewer than 2^31 entries (far cheaper on a GPU).
      const auto& prefix =
          p_.array(warp ? graph::Arr::bmw_first_nz : graph::Arr::bmtb_first_nz).ints;
      std::int64_t widest = 0;
      for (std::size_t q = 1; q < prefix.size(); ++q)
        widest = std::max(widest, prefix[q] - prefix[q - 1]);
      const std::string n = "(" + end + " - A_bmt_first_nz(i) + A_bmt_stride(i) - 1)";
      // Every parent with as many threads as entries gives each thread one entry: a constant
      // trip count. (The derived sizes already hold what the formula computes.)
      const auto& sizes = p_.array(graph::Arr::bmt_size).ints;
      if (!sizes.empty() &&
          std::all_of(sizes.begin(), sizes.end(), [](auto v) { return v == 1; })) {
        return "// bmt_size: one entry per thread (every parent has as many threads as entries)\n"
               "#define A_bmt_size(i) ((st_idx_t)1)\n";
      }
      body = widest < (std::int64_t{1} << 30)
                 ? "((st_idx_t)((unsigned)" + n + " / (unsigned)A_bmt_stride(i)))"
                 : "(" + n + " / A_bmt_stride(i))";
    }
    if (name == "bmt_row") body = warp ? "A_bmw_row(bmw)" : "A_bmtb_row(bmtb)";
    if (body.empty()) throw Error("array " + name + " cannot be derived");
    return "// " + name + ": derived from the " + (warp ? "warp" : "thread") +
           " block's entry range (implied strided threads)\n#define A_" + name + "(i) " + body +
           "\n";
  }

  std::string chain() const {
    std::string s;
    for (const auto& r : p_.reductions) s += (s.empty() ? "" : " > ") + r;
    if (atomic_ && !p_.atomic) return s + " > atomic add (rows shared with other fused parts)";
    return s + (p_.atomic ? "" : f_.part_stores(index_) ? " > store" : " > add");
  }

 private:
  // The shift of a row step packed into nz_col's words (0: none is).
  int packed_shift() const {
    const auto d = p_.arrays.find(graph::arr_name(graph::Arr::nz_row_delta));
    return d != p_.arrays.end() && d->second.model.kind == ArrayModel::Kind::Packed
               ? static_cast<int>(d->second.model.a)
               : 0;
  }
  bool split() const { return p_.has(graph::Arr::nz_col_hi); }
  // nz_col's stored word at (i) as unsigned bits (the signed type's top bit is a bit of the
  // packed step), joined with nz_col_hi's byte when the words are 24 bits wide.
  std::string col_word() const {
    if (split())
      return "((unsigned)(unsigned short)p_nz_col[(i)] | "
             "(unsigned)(unsigned char)p_nz_col_hi[(i)] << 16)";
    return p_.array(graph::Arr::nz_col).dtype == "I16" ? "(unsigned)(unsigned short)p_nz_col[(i)]"
                                                       : "(unsigned)p_nz_col[(i)]";
  }

  std::string constants(std::string s) const {
    replace_all(s, "$THREADS", std::to_string(p_.threads));
    replace_all(s, "$WARPS", std::to_string(p_.threads / 32));
    replace_all(s, "$N_BMTB", lit(p_.n_bmtb, idx32_));
    replace_all(s, "$SHMEM_ROWS", std::to_string(std::max<std::int64_t>(1, p_.shmem_rows)));
    replace_all(s, "$KERNEL", p_.kernel);
    replace_all(s, "$COL_TILE", std::to_string(p_.col_tile));
    replace_all(s, "$COL_VEC", std::to_string(p_.col_vec));
    replace_all(s, "$COL_LANES", std::to_string(p_.col_lanes));
    replace_all(s, "$LOADS", std::to_string(p_.thread_loads));
    replace_all(s, "$COL_SPAN", std::to_string(p_.col_span()));
    return s;
  }

  // Lines "<pad>$SLOT" become the slot's code at that indentation.
  static std::string fill_slots(const std::string& text,
                                const std::map<std::string, std::string>& slots) {
    std::istringstream in(text);
    std::string out;
    for (std::string line; std::getline(in, line);) {
      const auto first = line.find_first_not_of(' ');
      if (first != std::string::npos && line[first] == '$') {
        const std::string name = line.substr(first + 1);
        if (auto it = slots.find(name); it != slots.end()) {
          if (!it->second.empty()) out += indent(it->second, line.substr(0, first));
          continue;
        }
      }
      out += line + "\n";
    }
    return out;
  }

  // Replaces lines "$EMIT(row, v)" by stage `next`'s accept code and "$SIDE(row, v)" by the side
  // sink's, recursively.
  std::string expand(const std::string& text, std::size_t next, int depth) const {
    std::istringstream in(text);
    std::string out;
    for (std::string line; std::getline(in, line);) {
      const auto first = line.find_first_not_of(' ');
      const bool emit = first != std::string::npos && line.compare(first, 6, "$EMIT(") == 0;
      const bool side = first != std::string::npos && line.compare(first, 6, "$SIDE(") == 0;
      if (!emit && !side) {
        out += line + "\n";
        continue;
      }
      const std::string args = line.substr(first + 6, line.rfind(')') - first - 6);
      int level = 0;
      std::size_t comma = std::string::npos;
      for (std::size_t i = 0; i < args.size() && comma == std::string::npos; ++i) {
        if (args[i] == '(' || args[i] == '[') ++level;
        if (args[i] == ')' || args[i] == ']') --level;
        if (args[i] == ',' && level == 0) comma = i;
      }
      if (comma == std::string::npos) throw Error("fragment: $EMIT needs (row, value)");
      const std::size_t target = side ? side_ : next;
      out += indent(accept(target, args.substr(0, comma), args.substr(comma + 1), depth, side),
                    line.substr(0, first));
    }
    return out;
  }

  std::string accept(std::size_t stage, const std::string& row, const std::string& v, int depth,
                     bool side) const {
    const auto& st = stages_.at(stage);
    const std::string r = "r" + std::to_string(depth), val = "v" + std::to_string(depth);
    std::string body = section(st.sections, "accept");
    replace_all(body, "IN_ROW", r);
    replace_all(body, "IN_V", val);
    std::string code = "{\n";
    code += indent(section(template_sections("adapters.cu"), side ? "side" : st.adapter), "  ");
    code += "  const st_idx_t " + r + " = " + trim(row) + ";\n";
    code += std::string("  const ") + (spmm() ? "st_tile_t " : "st_acc_t ") + val + " = " +
            trim(v) + ";\n";
    code += "  (void)" + r + ";\n";
    code += indent(expand(body, stage + 1, depth + 1), "  ");
    code += "}\n";
    return code;
  }

  bool spmm() const { return f_.op == "spmm"; }

  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  }

  const graph::Format& f_;
  const graph::PartFormat& p_;
  std::size_t index_;
  bool atomic_ = false, device_fn_ = false;
  bool idx32_ = false;  // st_idx_t is int: literals stay int
  std::vector<StageCode> stages_;
  std::size_t side_ = 1;
};

}  // namespace

std::string c_type(const std::string& dtype, const std::string& value_dtype) {
  if (dtype == "I8") return "signed char";
  if (dtype == "I16") return "short";
  if (dtype == "I32") return "int";
  if (dtype == "I64") return "long long";
  if (dtype == "F64" || dtype == "F32" || dtype == "F16") return "st_val_t";
  throw Error("no kernel type for dtype " + dtype + " (values " + value_dtype + ")");
}

namespace {

// The graph for the header comment, wrapped between operators.
std::string graph_comment(const std::string& graph_name, const std::string& graph_line) {
  std::string s =
      "// Operator graph \"" + (graph_name.empty() ? std::string("unnamed") : graph_name) + "\":\n";
  std::string line;
  for (std::size_t at = 0; at < graph_line.size();) {
    std::size_t next = graph_line.find(" > ", at);
    next = next == std::string::npos ? graph_line.size() : next + 3;
    if (!line.empty() && line.size() + (next - at) > 92) {
      s += "//   " + line + "\n";
      line.clear();
    }
    line += graph_line.substr(at, next - at);
    at = next;
  }
  if (!line.empty()) s += "//   " + line + "\n";
  return s;
}

// The kernel parameters of a part's stored arrays, in name order, each named `prefix` + name.
std::string array_params(const graph::Format& f, const graph::PartFormat& p,
                         const std::string& prefix) {
  std::string params;
  for (const auto& [name, a] : p.arrays)
    if (a.stored())
      params += ",\n    const " + c_type(a.dtype, graph::value_dtype(f.dtype)) + "* __restrict__ " +
                prefix + name;
  return params;
}

// The fused kernel: the operation's arguments and every part's arrays (p<i>_<name>),
// dispatching each range of blocks to its part's device function.
std::string fused_kernel(const graph::Format& f, bool idx32) {
  const Sections& sk = template_sections("skeleton.cu");
  const bool spmm = f.op == "spmm";
  std::string kernel = section(sk, "fused");
  std::string args = section(sk, spmm ? "args_spmm" : "args_spmv");
  replace_all(kernel, "$ARGS", args.substr(0, args.find_last_not_of('\n') + 1));
  std::string params, dispatch;
  std::int64_t first = 0;
  for (std::size_t i = 0; i < f.parts.size(); ++i) {
    const auto& p = f.parts[i];
    if (p.n_bmtb == 0) continue;
    if (dispatch.empty()) replace_all(kernel, "$THREADS", std::to_string(p.threads));  // shared
    const std::string prefix = "p" + std::to_string(i) + "_";
    params += array_params(f, p, prefix);
    std::string call = p.kernel + "(st_b - " + lit(first, idx32) + ", " + lit(p.grid, idx32) +
                       (spmm ? ", B, ldb, C, ldc, n, alpha, beta" : ", x, y, alpha, beta");
    for (const auto& [name, a] : p.arrays)
      if (a.stored()) call += ", " + prefix + name;
    first += p.grid;
    dispatch += std::string(dispatch.empty() ? "if" : "} else if") + " (st_b < " +
                lit(first, idx32) + ") {\n  " + call + ");\n";
  }
  dispatch += "}\n";
  replace_all(kernel, "$PARAMS", params);
  replace_all(kernel, "$KERNEL", kFusedKernel);
  std::string out;
  std::istringstream in(kernel);
  for (std::string line; std::getline(in, line);)
    out += line.find("$DISPATCH") != std::string::npos ? indent(dispatch, "  ") : line + "\n";
  return out;
}

// The parts' kernels after the prelude (or, fused, their device functions and the one kernel),
// and the scaling kernel of an adding format.
void add_parts(const graph::Format& f, bool idx32, KernelSource& k, const char* scale_section,
               const char* scale_name, const Fusion& u = {}) {
  for (std::size_t i = 0; i < f.parts.size(); ++i) {
    k.source += "\n";
    if (f.parts[i].n_bmtb == 0) {
      k.source += "// ---- part " + std::to_string(i) + ": no entries, no kernel\n";
      continue;
    }
    PartBuilder b(f, f.parts[i], i, idx32, u.fused && u.atomic[i], u.fused);
    k.source += b.build();
  }
  if (!u.fused)  // in the order they run
    for (const std::size_t i : f.launch_order())
      if (f.parts[i].n_bmtb > 0) k.kernels.push_back(f.parts[i].kernel);
  if (u.fused) {
    k.source += "\n" + fused_kernel(f, idx32);
    k.kernels.push_back(kFusedKernel);
  }
  if (f.scales_output_first()) {  // also with no work: beta times the output is the answer
    std::string scale = section(template_sections("skeleton.cu"), scale_section);
    replace_all(scale, "$KERNEL", scale_name);
    k.source += "\n" + scale;
    k.scale_kernel = scale_name;
  }
}

// SpMM C = alpha A B + beta C: the same parts, each kernel over a grid of (BMTB, column tiles).
KernelSource build_spmm_kernels(const graph::Format& f, const std::string& graph_name,
                                const std::string& graph_line, const char* what) {
  KernelSource k;
  const auto& prelude = template_sections("prelude.cu");
  std::string& s = k.source;
  s += "// Generated by sparsetune " + std::string(kVersion) + ". Do not edit.\n";
  s += "// SpMM C = A B for one " + std::to_string(f.rows) + " x " + std::to_string(f.cols) +
       " matrix (" + std::to_string(f.nnz) + " non-zeros, fingerprint " + f.fingerprint +
       ") and a\n" + "// dense " + (f.col_major() ? "column" : "row") + "-major B of n columns; " +
       what + ".\n";
  s += graph_comment(graph_name, graph_line);
  s += "// C = alpha A B + beta C, as cuSPARSE computes it; beta = 0 never reads C.\n";
  s += f.store_only
           ? "// Store-only: every row of C is written exactly once per column tile, so the "
             "kernels store\n// alpha A B + beta C in one pass.\n"
           : "// Adding: " + std::string(kScaleKernelSpmm) +
                 " first sets C = beta C (zeros when beta = 0), then the parts add\n// alpha "
                 "times their results (atomically where rows are shared).\n";
  const Fusion u = plan_fusion(f);
  if (u.fused)
    s += "// All parts in one launch (" + std::string(kFusedKernel) +
         ", horizontal fusion): part i takes its own range\n// of grid x, grid y the column "
         "tiles; it takes B, ldb, C, ldc, n, alpha, beta and every part's\n// stored arrays, "
         "part by part in name order (see kernel.h).\n\n";
  else
    s += "// One kernel per part, launched in order on one stream over a grid of (its BMTB grid, "
         "column\n// tiles); each takes B, ldb, C, ldc, n, alpha, beta and the part's stored "
         "arrays in name order\n// (see kernel.h)." +
         (u.why.empty() ? std::string() : "\n// Not fused into one launch: " + u.why + ".") +
         "\n\n";
  // One scan of the format's arrays decides the index type of every part's kernel.
  const bool idx32 = index_fits_int32(f);
  k.index_bits = idx32 ? 32 : 64;
  s += section(prelude, "common");
  s += section(prelude, idx32 ? "idx32" : "idx64");
  s += section(prelude, f.dtype);
  s += section(prelude, "spmm");
  if (f.col_major()) s += section(prelude, "spmm_col");  // B and C strided by ldb and ldc
  add_parts(f, idx32, k, f.col_major() ? "scale_c_col" : "scale_c", kScaleKernelSpmm, u);
  return k;
}

}  // namespace

KernelSource build_kernels(const graph::Format& f, const std::string& graph_name,
                           const std::string& graph_line) {
  KernelSource k;
  const auto& prelude = template_sections("prelude.cu");
  std::string& s = k.source;
  const char* what = f.dtype == "f64"   ? "fp64 values, fp64 accumulation"
                     : f.dtype == "f32" ? "fp32 values, fp32 accumulation"
                                        : "fp16 values and x, fp32 accumulation and y";
  s += "// Generated by sparsetune " + std::string(kVersion) + ". Do not edit.\n";
  if (f.op == "spmm")
    return build_spmm_kernels(
        f, graph_name, graph_line,
        f.dtype == "f16" ? "fp16 values and B, fp32 accumulation and C" : what);
  s += "// SpMV y = A x for one " + std::to_string(f.rows) + " x " + std::to_string(f.cols) +
       " matrix (" + std::to_string(f.nnz) + " non-zeros, fingerprint " + f.fingerprint + "); " +
       what + ".\n";
  s += graph_comment(graph_name, graph_line);
  s += "// y = alpha A x + beta y, as cuSPARSE computes it; beta = 0 never reads y.\n";
  if (f.store_only)
    s += "// Store-only: every row of y is written exactly once by one thread over all parts, "
         "so\n// the kernels store alpha A x + beta y in one pass.\n";
  else if (f.storing_part >= 0)
    s += "// Storing first: part " + std::to_string(f.storing_part) +
         " writes every row of y exactly once and runs first, storing alpha A x + beta y;\n// "
         "the other parts then add alpha times their results (atomically where rows are "
         "shared).\n";
  else
    s += "// Adding: " + std::string(kScaleKernel) +
         " first sets y = beta y (zeros when beta = 0), then the parts add\n// alpha times "
         "their results (atomically where rows are shared).\n";
  const Fusion u = plan_fusion(f);
  if (u.fused)
    s += "// All parts in one launch (" + std::string(kFusedKernel) +
         ", horizontal fusion): part i takes its own range\n// of grid x; it takes x, y, alpha, "
         "beta and every part's stored arrays, part by part in\n// name order (see kernel.h).\n\n";
  else
    s += std::string("// One kernel per part, launched ") +
         (f.storing_part >= 0 ? "storing part first, then by part index," : "in order") +
         " on one stream; each takes x, y, alpha,\n// beta and the part's stored arrays in name "
         "order (see kernel.h)." +
         (u.why.empty() ? std::string() : "\n// Not fused into one launch: " + u.why + ".") +
         "\n\n";
  // One scan of the format's arrays decides the index type of every part's kernel.
  const bool idx32 = index_fits_int32(f);
  k.index_bits = idx32 ? 32 : 64;
  s += section(prelude, "common");
  s += section(prelude, idx32 ? "idx32" : "idx64");
  s += section(prelude, f.dtype);
  add_parts(f, idx32, k, "scale_y", kScaleKernel, u);
  return k;
}

}  // namespace sparsetune::codegen
