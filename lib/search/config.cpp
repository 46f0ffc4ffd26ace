#include "search/config.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "features/matrix_features.hpp"
#include "graph/registry.hpp"

#ifndef SPARSETUNE_CONFIG_DIR
#define SPARSETUNE_CONFIG_DIR "configs"
#endif

namespace sparsetune::search {

namespace {

using nlohmann::json;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json parse(const std::string& text, const std::string& source, const char* format) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(source, 0, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object() || j.value("format", std::string()) != format)
    throw InputError(source, 0, std::string("expected {\"format\": \"") + format + "\", ...}");
  if (j.value("version", 0) != 1) throw InputError(source, 0, "unsupported version (expected 1)");
  return j;
}

// A field of an object with the expected JSON type, or the error naming `where`.
const json& field(const json& o, const char* name, json::value_t type, const std::string& source,
                  const std::string& where) {
  if (!o.is_object() || !o.contains(name))
    throw InputError(source, 0, where + ": missing \"" + name + "\"");
  const json& v = o.at(name);
  const bool ok = type == json::value_t::number_integer
                      ? v.is_number_integer()
                      : (type == json::value_t::number_float ? v.is_number() : v.type() == type);
  if (!ok) throw InputError(source, 0, where + "." + name + ": wrong type");
  return v;
}

void check_operator(const std::string& op, const std::string& source, const std::string& where) {
  if (!graph::find_operator(op))
    throw InputError(source, 0, where + ": no operator named '" + op + "'");
}

std::vector<std::string> names(const json& a, const std::string& source, const std::string& where) {
  if (!a.is_array()) throw InputError(source, 0, where + ": expected a list of operator names");
  std::vector<std::string> v;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    if (!a[i].is_string()) throw InputError(source, 0, w + ": expected an operator name");
    check_operator(a[i].get<std::string>(), source, w);
    v.push_back(a[i].get<std::string>());
  }
  return v;
}

AnnealOptions anneal(const json& j, const std::string& source, const std::string& where,
                     AnnealOptions a) {
  if (j.is_null()) return a;
  if (!j.is_object()) throw InputError(source, 0, where + ": expected an object");
  a.t0 = j.value("t0", a.t0);
  a.cooling = j.value("cooling", a.cooling);
  a.t_min = j.value("t_min", a.t_min);
  a.patience = j.value("patience", a.patience);
  if (!(a.t0 > 0) || !(a.cooling > 0 && a.cooling < 1) || !(a.t_min > 0) || a.patience < 1)
    throw InputError(source, 0,
                     where + ": need t0 > 0, 0 < cooling < 1, t_min > 0 and patience >= 1");
  return a;
}

std::vector<std::int64_t> grid(const json& o, const char* name, const std::string& source,
                               const std::string& where, double lo, double hi) {
  const json& a = field(o, name, json::value_t::array, source, where);
  if (a.empty()) throw InputError(source, 0, where + "." + name + ": empty grid");
  std::vector<std::int64_t> v;
  for (const auto& x : a) {
    if (!x.is_number_integer())
      throw InputError(source, 0, where + "." + name + ": grid values must be integers");
    const auto k = x.get<std::int64_t>();
    if (k < lo || k > hi)
      throw InputError(source, 0,
                       where + "." + name + ": " + std::to_string(k) +
                           " is outside the operator's " + "range [" +
                           std::to_string(static_cast<std::int64_t>(lo)) + ", " +
                           std::to_string(static_cast<std::int64_t>(hi)) + "]");
    v.push_back(k);
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

const char* discretization_name(Discretization d) {
  switch (d) {
    case Discretization::None:
      return "none";
    case Discretization::DivInRowLenMutation:
      return "DIV_IN_ROW_LEN_MUTATION";
    case Discretization::RowLenPow2Bins:
      return "ROW_LEN_POW2_BINS";
    case Discretization::Flag:
      return "FLAG";
  }
  return "none";
}

const ParamAxis* SearchSpace::axis(const std::string& op, const std::string& param) const {
  for (const auto& a : axes)
    if (a.op == op && a.param == param) return &a;
  return nullptr;
}

SearchSpace parse_search_space(const std::string& text, const std::string& source) {
  const json j = parse(text, source, "sparsetune-search-space");
  SearchSpace s;
  if (j.contains("limits")) {
    const json& l = j.at("limits");
    if (!l.is_object()) throw InputError(source, 0, "limits: expected an object");
    auto get = [&](const char* k, int& v, int lo) {
      if (!l.contains(k)) return;
      if (!l[k].is_number_integer() || l[k].get<int>() < lo)
        throw InputError(
            source, 0,
            std::string("limits.") + k + ": expected an integer >= " + std::to_string(lo));
      v = l[k].get<int>();
    };
    get("max_coarse_points", s.max_coarse_points, 1);
    get("max_fine_points", s.max_fine_points, 0);
    get("fine_measured", s.fine_measured, 0);
    get("max_structures", s.max_structures, 1);
    get("min_candidates", s.min_candidates, 0);
    get("max_converting", s.max_converting, 0);
    get("max_mapping", s.max_mapping, 1);
  }
  if (j.contains("annealing")) {
    const json& a = j.at("annealing");
    s.structures = anneal(a.value("structures", json()), source, "annealing.structures", {});
    s.parameters = anneal(a.value("parameters", json()), source, "annealing.parameters", {});
  }
  const json& params = field(j, "params", json::value_t::array, source, "search space");
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string where = "params[" + std::to_string(i) + "]";
    const json& e = params[i];
    ParamAxis a;
    a.op = field(e, "op", json::value_t::string, source, where).get<std::string>();
    a.param = field(e, "param", json::value_t::string, source, where).get<std::string>();
    check_operator(a.op, source, where);
    const graph::ParamSpec* spec = nullptr;
    const auto specs = graph::find_operator(a.op)->params();
    for (const auto& p : specs)
      if (p.name == a.param) spec = &p;
    if (!spec)
      throw InputError(source, 0, where + ": " + a.op + " has no parameter '" + a.param + "'");
    const std::string strategy = e.value("strategy", std::string("none"));
    double lo = spec->min, hi = spec->max;
    if (spec->type == graph::ParamType::IntList) {
      if (strategy == "DIV_IN_ROW_LEN_MUTATION" && a.op == "ROW_DIV")
        a.strategy = Discretization::DivInRowLenMutation;
      else if (strategy == "ROW_LEN_POW2_BINS" && a.op == "BIN")
        a.strategy = Discretization::RowLenPow2Bins;
      else
        throw InputError(
            source, 0,
            where + ": " + a.op + "." + a.param +
                " is a list; it needs a discretization strategy (DIV_IN_ROW_LEN_MUTATION"
                " for ROW_DIV, ROW_LEN_POW2_BINS for BIN)");
      lo = 1, hi = 1 << 20;
    } else if (spec->type == graph::ParamType::Bool) {
      if (strategy != "none")
        throw InputError(source, 0, where + ": strategy '" + strategy + "' applies to lists only");
      a.strategy = Discretization::Flag;  // grid values 0 and 1
      lo = 0, hi = 1;
    } else if (spec->type != graph::ParamType::Int) {
      throw InputError(source, 0, where + ": " + a.op + "." + a.param + " is not an integer");
    } else if (strategy != "none") {
      throw InputError(source, 0, where + ": strategy '" + strategy + "' applies to lists only");
    }
    a.coarse = grid(e, "coarse", source, where, lo, hi);
    a.fine = grid(e, "fine", source, where, lo, hi);
    if (s.axis(a.op, a.param))
      throw InputError(source, 0, where + ": " + a.op + "." + a.param + " is listed twice");
    s.axes.push_back(std::move(a));
  }
  return s;
}

Pruning parse_pruning(const std::string& text, const std::string& source) {
  const json j = parse(text, source, "sparsetune-pruning");
  Pruning p;
  if (j.contains("ban")) p.ban = names(j.at("ban"), source, "ban");
  if (!j.contains("rules")) return p;
  const json& rules = field(j, "rules", json::value_t::array, source, "pruning");
  // The feature names a rule may test: those of the AlphaSparse group.
  Csr64 one;
  one.rows = one.cols = 1;
  one.row_ptr = {0, 0};
  std::vector<std::string> known;
  for (const auto& f : features::alphasparse_features(one)) known.push_back(f.name);
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const std::string where = "rules[" + std::to_string(i) + "]";
    const json& r = rules[i];
    PruningRule rule;
    rule.name = field(r, "name", json::value_t::string, source, where).get<std::string>();
    rule.ban = names(field(r, "ban", json::value_t::array, source, where), source, where + ".ban");
    if (r.contains("after")) rule.after = names(r.at("after"), source, where + ".after");
    if (r.contains("ops")) {
      const json& o = r.at("ops");
      if (!o.is_array()) throw InputError(source, 0, where + ".ops: expected a list of ops");
      for (const auto& x : o) {
        if (!x.is_string() || (x != "spmv" && x != "spmm" && x != "sptv"))
          throw InputError(source, 0, where + ".ops: " + x.dump() + " is not spmv, spmm or sptv");
        rule.ops.push_back(x.get<std::string>());
      }
    }
    if (r.contains("when")) {
      const json& w = r.at("when");
      if (!w.is_array()) throw InputError(source, 0, where + ".when: expected a list");
      for (std::size_t k = 0; k < w.size(); ++k) {
        const std::string cw = where + ".when[" + std::to_string(k) + "]";
        Condition c;
        c.feature = field(w[k], "feature", json::value_t::string, source, cw).get<std::string>();
        if (std::find(known.begin(), known.end(), c.feature) == known.end())
          throw InputError(source, 0, cw + ": no feature named '" + c.feature + "'");
        const bool below = w[k].contains("below"), at_least = w[k].contains("at_least");
        if (below == at_least)
          throw InputError(source, 0, cw + ": give exactly one of \"below\" and \"at_least\"");
        c.below = below;
        c.threshold =
            field(w[k], below ? "below" : "at_least", json::value_t::number_float, source, cw)
                .get<double>();
        rule.when.push_back(c);
      }
    }
    p.rules.push_back(std::move(rule));
  }
  return p;
}

SearchSpace load_search_space(const std::string& path) {
  return parse_search_space(read_text(path), path);
}
Pruning load_pruning(const std::string& path) { return parse_pruning(read_text(path), path); }

bool PruneSet::allows(const std::string& op, const std::vector<std::string>& ops_so_far) const {
  if (std::find(banned.begin(), banned.end(), op) != banned.end()) return false;
  for (const auto& r : conditional) {
    if (std::find(r.ban.begin(), r.ban.end(), op) == r.ban.end()) continue;
    for (const auto& a : r.after)
      if (std::find(ops_so_far.begin(), ops_so_far.end(), a) != ops_so_far.end()) return false;
  }
  return true;
}

PruneSet prune_for(const Pruning& p, const std::vector<features::Feature>& alphasparse,
                   const std::string& op) {
  PruneSet s;
  s.banned = p.ban;
  for (const auto& r : p.rules) {
    bool holds = r.ops.empty() || std::find(r.ops.begin(), r.ops.end(), op) != r.ops.end();
    for (const auto& c : r.when) {
      const double v = features::feature_value(alphasparse, c.feature);
      holds = holds && (c.below ? v < c.threshold : v >= c.threshold);
    }
    if (!holds) continue;
    s.applied.push_back(r.name);
    if (r.after.empty())
      s.banned.insert(s.banned.end(), r.ban.begin(), r.ban.end());
    else
      s.conditional.push_back(r);
  }
  std::sort(s.banned.begin(), s.banned.end());
  s.banned.erase(std::unique(s.banned.begin(), s.banned.end()), s.banned.end());
  return s;
}

std::string default_search_config_dir() {
  if (const char* d = std::getenv("SPARSETUNE_CONFIG_DIR"); d && *d)
    return std::string(d) + "/search";
  return std::string(SPARSETUNE_CONFIG_DIR) + "/search";
}

std::string default_graphs_dir() {
  if (const char* d = std::getenv("SPARSETUNE_CONFIG_DIR"); d && *d)
    return std::string(d) + "/graphs";
  return std::string(SPARSETUNE_CONFIG_DIR) + "/graphs";
}

}  // namespace sparsetune::search
