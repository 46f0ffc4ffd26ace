#include "graph/graph.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "graph/registry.hpp"

namespace sparsetune::graph {

namespace {

// Bounds on a graph's size: far beyond any useful format (the known ones have at most 20
// operators and one level of branches), so a hostile file is refused at once instead of taking
// the Designer's time or the parser's stack.
constexpr std::size_t kMaxOperators = 4096;
constexpr int kMaxDepth = 8;
constexpr int kMaxJsonDepth = 64;

std::vector<OpNode> ops_from_json(const nlohmann::json& j, const std::string& source,
                                  const std::string& where, std::size_t& count, int depth = 0) {
  if (!j.is_array()) throw GraphError(source + ": " + where + " must be an array of operators");
  if (depth > kMaxDepth)
    throw GraphError(source + ": " + where + ": branches nest deeper than " +
                     std::to_string(kMaxDepth) + " levels");
  count += j.size();
  if (count > kMaxOperators)
    throw GraphError(source + ": " + where + ": more than " + std::to_string(kMaxOperators) +
                     " operators in the graph");
  std::vector<OpNode> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& o = j[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!o.is_object() || !o.contains("op") || !o["op"].is_string())
      throw GraphError(source + ": " + at + " must be an object with a string \"op\"");
    OpNode n;
    n.op = o["op"].get<std::string>();
    for (auto it = o.begin(); it != o.end(); ++it) {
      if (it.key() == "op") continue;
      if (it.key() == "branches") {
        if (!it.value().is_array())
          throw GraphError(source + ": " + at + " (" + n.op + "): \"branches\" must be an array");
        for (std::size_t b = 0; b < it.value().size(); ++b)
          n.branches.push_back(ops_from_json(it.value()[b], source,
                                             at + ".branches[" + std::to_string(b) + "]", count,
                                             depth + 1));
        continue;
      }
      n.params[it.key()] = it.value();
    }
    out.push_back(std::move(n));
  }
  return out;
}

nlohmann::json ops_to_json(const std::vector<OpNode>& ops) {
  auto arr = nlohmann::json::array();
  for (const auto& n : ops) {
    nlohmann::json o = {{"op", n.op}};
    for (auto it = n.params.begin(); it != n.params.end(); ++it) o[it.key()] = it.value();
    if (!n.branches.empty()) {
      o["branches"] = nlohmann::json::array();
      for (const auto& b : n.branches) o["branches"].push_back(ops_to_json(b));
    }
    arr.push_back(std::move(o));
  }
  return arr;
}

std::string check_param(const ParamSpec& s, nlohmann::json& v) {
  auto in_range = [&](double x) { return x >= s.min && x <= s.max; };
  auto range = [&] {
    std::ostringstream os;
    if (s.type == ParamType::Number)
      os << " in [" << s.min << ", " << s.max << "]";
    else  // whole numbers in full: [1, 1073741824], not [1, 1.07374e+09]
      os << " in [" << static_cast<long long>(s.min) << ", " << static_cast<long long>(s.max)
         << "]";
    return os.str();
  };
  switch (s.type) {
    case ParamType::Bool:
      if (!v.is_boolean()) return "parameter '" + s.name + "' must be true or false";
      return "";
    case ParamType::Int:
      // An integral float within the parameter's range becomes an integer (converting one out of
      // int64's range would be undefined: found by fuzz_graph).
      if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
          in_range(v.get<double>()))
        v = static_cast<std::int64_t>(v.get<double>());
      if (!v.is_number_integer() || !in_range(v.get<double>()))
        return "parameter '" + s.name + "' must be an integer" + range();
      return "";
    case ParamType::Number:
      if (!v.is_number() || !std::isfinite(v.get<double>()) || !in_range(v.get<double>()))
        return "parameter '" + s.name + "' must be a number" + range();
      return "";
    case ParamType::IntList:
      if (!v.is_array()) return "parameter '" + s.name + "' must be a list of integers";
      for (auto& x : v)
        if (!x.is_number_integer() || !in_range(x.get<double>()))
          return "parameter '" + s.name + "' must hold integers" + range();
      return "";
  }
  return "";
}

void walk(std::vector<OpNode>& ops, GraphState s, const std::string& source,
          const std::string& where) {
  auto fail = [&](const std::string& at, const std::string& op, const std::string& what) {
    throw GraphError(source + ": " + at + (op.empty() ? "" : " (" + op + ")") + ": " + what);
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto& n = ops[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    const Operator* op = find_operator(n.op);
    if (!op) fail(at, n.op, "unknown operator");
    const auto specs = op->params();
    for (auto it = n.params.begin(); it != n.params.end(); ++it) {
      bool known = false;
      for (const auto& sp : specs) known = known || sp.name == it.key();
      if (!known) fail(at, n.op, "unknown parameter '" + it.key() + "'");
    }
    for (const auto& sp : specs) {
      if (!n.params.contains(sp.name)) {
        if (sp.implicit) continue;
        if (sp.fallback.is_null()) fail(at, n.op, "missing parameter '" + sp.name + "'");
        n.params[sp.name] = sp.fallback;
      }
      if (auto e = check_param(sp, n.params[sp.name]); !e.empty()) fail(at, n.op, e);
    }
    if (auto rule = op->rule(s, n.params); !rule.empty()) fail(at, n.op, "rule: " + rule);
    op->advance(s, n.params);
    const int parts = op->branches(n.params);
    if (parts > 0) {
      if (i + 1 != ops.size())
        fail(at, n.op,
             "rule: a dividing operator ends its list; later operators go in its branches");
      if (static_cast<int>(n.branches.size()) != parts)
        fail(at, n.op,
             "rule: makes " + std::to_string(parts) + " parts and needs one branch per part, got " +
                 std::to_string(n.branches.size()));
      for (std::size_t b = 0; b < n.branches.size(); ++b)
        walk(n.branches[b], s, source, at + ".branches[" + std::to_string(b) + "]");
      return;
    }
    if (!n.branches.empty()) fail(at, n.op, "only dividing operators have branches");
  }
  const std::string end = where + " (end)";
  if (!s.compressed) fail(end, "", "rule: every part needs COMPRESS before it is mapped");
  if (s.finest < 0) fail(end, "", "rule: every part needs a *_BLOCK mapping operator");
  if (s.op == "spmm" && !s.col_tiled)
    fail(end, "", "rule: every spmm part needs COL_TILE (the columns of B each thread covers)");
  bool thread_red = false;
  for (const auto& r : s.reductions) {
    const auto* red = find_reduction(r);
    thread_red = thread_red || (red && red->level() == RedLevel::Thread);
  }
  if (!thread_red)
    fail(end, "",
         "rule: every part needs a thread-level reduction (THREAD_TOTAL_RED or THREAD_BITMAP_RED)");
}

// A parameter for one line: a list longer than 8 items (SLICE_DIV's per-slice parts) shows its
// first 8 and its length.
std::string short_value(const nlohmann::json& v) {
  if (!v.is_array() || v.size() <= 8) return v.dump();
  std::string s = "[";
  for (std::size_t i = 0; i < 8; ++i) s += v[i].dump() + ",";
  return s + "... " + std::to_string(v.size()) + " items]";
}

void describe_ops(const std::vector<OpNode>& ops, std::string& out) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& n = ops[i];
    if (i) out += " > ";
    out += n.op;
    if (!n.params.empty()) {
      out += "(";
      bool first = true;
      for (auto it = n.params.begin(); it != n.params.end(); ++it) {
        if (!first) out += ",";
        first = false;
        out += it.key() + "=" + short_value(it.value());
      }
      out += ")";
    }
    if (!n.branches.empty()) {
      out += " [";
      for (std::size_t b = 0; b < n.branches.size(); ++b) {
        if (b) out += " | ";
        describe_ops(n.branches[b], out);
      }
      out += "]";
    }
  }
}

}  // namespace

Graph graph_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw GraphError(source + ": a graph is a JSON object");
  if (j.contains("format") && j["format"] != "sparsetune-graph")
    throw GraphError(source + ": \"format\" must be \"sparsetune-graph\"");
  if (j.contains("version") && j["version"] != 1)
    throw GraphError(source + ": unsupported graph version " + j["version"].dump());
  Graph g;
  if (j.contains("name")) {
    if (!j["name"].is_string()) throw GraphError(source + ": \"name\" must be a string");
    g.name = j["name"].get<std::string>();
  }
  if (j.contains("op")) {
    if (j["op"] != "spmv" && j["op"] != "sptv" && j["op"] != "spmm")
      throw GraphError(source + ": op " + j["op"].dump() + " is not supported (spmv, sptv, spmm)");
    g.op = j["op"].get<std::string>();
  }
  if (!j.contains("ops")) throw GraphError(source + ": missing \"ops\"");
  std::size_t count = 0;
  g.ops = ops_from_json(j["ops"], source, "ops", count);
  return g;
}

Graph parse_graph(const std::string& text, const std::string& source) {
  // JSON nested deeper than any graph needs is refused before parsing: copying or walking it
  // later would recurse as deep. (A linear scan: the parser's own depth callback is far slower.)
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (depth > kMaxJsonDepth)
      throw GraphError(source + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                       " levels");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // also a number out of range (406)
    throw InputError(source, 0, std::string("not valid JSON: ") + e.what());
  }
  try {
    Graph g = graph_from_json(j, source);
    validate(g, source);
    return g;
  } catch (const nlohmann::json::exception& e) {  // a value of the wrong JSON type
    throw GraphError(source + ": " + e.what());
  }
}

nlohmann::json graph_to_json(const Graph& g) {
  nlohmann::json j = {{"format", "sparsetune-graph"}, {"version", 1}};
  if (!g.name.empty()) j["name"] = g.name;
  j["op"] = g.op;
  j["ops"] = ops_to_json(g.ops);
  return j;
}

void validate(Graph& g, const std::string& source) {
  GraphState s;
  s.op = g.op;
  walk(g.ops, s, source, "ops");
}

Graph read_graph(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open graph file " + path);
  if (std::filesystem::is_directory(path)) throw Error(path + " is a folder, not a graph file");
  const auto size = std::filesystem::file_size(path);
  if (size > kMaxGraphBytes)
    throw Error(path + ": " + std::to_string(size) +
                " bytes is too large for a graph file (at most " + std::to_string(kMaxGraphBytes) +
                ")");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_graph(text, path);
}

void write_graph(const std::string& path, const Graph& g) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp);
    out << graph_to_json(g).dump(2) << "\n";
    if (!out.flush()) throw Error("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error("cannot write " + path);
  }
}

std::string describe(const Graph& g) {
  std::string out;
  describe_ops(g.ops, out);
  return out;
}

}  // namespace sparsetune::graph
