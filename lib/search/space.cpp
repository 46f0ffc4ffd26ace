#include "search/space.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "graph/registry.hpp"

namespace sparsetune::search {

namespace {

using graph::Operator;
using graph::OpNode;
using graph::Stage;

OpNode node_for(const Operator& op, std::mt19937_64& rng, const SearchSpace& space) {
  OpNode n{op.name(), nlohmann::json::object(), {}};
  std::bernoulli_distribution coin(0.5);
  for (const auto& s : op.params()) {
    // A parameter added later stays out at its default (the graph reads and hashes as before),
    // unless the space tunes it.
    if (s.implicit && !space.axis(op.name(), s.name)) continue;
    n.params[s.name] = s.fallback;
    if (s.type == graph::ParamType::Bool) n.params[s.name] = coin(rng);
  }
  // Dividing operators: the structure fixes how many parts (the grid fixes where).
  if (n.op == "ROW_DIV" || n.op == "COL_DIV")
    n.params["count"] = std::uniform_int_distribution<int>(2, 3)(rng);
  return n;
}

struct Grower {
  std::mt19937_64& rng;
  const SearchSpace& space;
  const PruneSet& prune;
  std::vector<std::string> placed;  // every operator placed so far, across branches

  // Appends one operator of `stage` that the rules allow; false when none.
  bool append(std::vector<OpNode>& ops, graph::GraphState& s, Stage stage, bool allow_div) {
    std::vector<const Operator*> pool;
    for (const auto* op : graph::operators())
      if (op->stage() == stage && op->name() != std::string("COMPRESS") &&
          prune.allows(op->name(), placed))
        pool.push_back(op);
    std::shuffle(pool.begin(), pool.end(), rng);
    for (const auto* op : pool) {
      OpNode n = node_for(*op, rng, space);
      if (!op->rule(s, n.params).empty()) continue;
      if (op->branches(n.params) > 0 && !allow_div) continue;
      op->advance(s, n.params);
      placed.push_back(n.op);
      ops.push_back(std::move(n));
      return true;
    }
    return false;
  }

  void finish(std::vector<OpNode>& ops, graph::GraphState s) {
    const int map = std::uniform_int_distribution<int>(1, space.max_mapping)(rng);
    for (int i = 0; (i < map || s.finest < 0) && i < 16; ++i)
      if (!append(ops, s, Stage::Mapping, false) && s.finest >= 0) break;
    if (s.op == "spmm" && !s.col_tiled) {  // every SpMM part says which columns a thread covers
      const auto* tile = graph::find_operator("COL_TILE");
      ops.push_back(node_for(*tile, rng, space));
      tile->advance(s, ops.back().params);
      placed.push_back("COL_TILE");
    }
    std::bernoulli_distribution extra(0.5);
    for (auto level : {graph::RedLevel::Thread, graph::RedLevel::Warp, graph::RedLevel::Block,
                       graph::RedLevel::Global}) {
      if (level != graph::RedLevel::Thread && !extra(rng)) continue;
      std::vector<const graph::ReductionOperator*> pool;
      for (const auto* op : graph::operators())
        if (const auto* r = dynamic_cast<const graph::ReductionOperator*>(op);
            r && r->level() == level && prune.allows(r->name(), placed))
          pool.push_back(r);
      std::shuffle(pool.begin(), pool.end(), rng);
      for (const auto* r : pool) {
        OpNode n = node_for(*r, rng, space);
        if (!r->rule(s, n.params).empty()) continue;
        r->advance(s, n.params);
        placed.push_back(n.op);
        ops.push_back(std::move(n));
        break;
      }
    }
  }

  std::vector<OpNode> list(graph::GraphState s, int depth) {
    std::vector<OpNode> ops;
    const int conv = std::uniform_int_distribution<int>(0, space.max_converting)(rng);
    for (int i = 0; i < conv; ++i) {
      if (!append(ops, s, Stage::Converting, depth < 1)) break;
      const auto* op = graph::find_operator(ops.back().op);
      if (const int parts = op->branches(ops.back().params); parts > 0) {
        for (int b = 0; b < parts; ++b) ops.back().branches.push_back(list(s, depth + 1));
        return ops;
      }
    }
    ops.push_back({"COMPRESS", nlohmann::json::object(), {}});
    graph::find_operator("COMPRESS")->advance(s, ops.back().params);
    placed.push_back("COMPRESS");
    finish(ops, s);
    return ops;
  }
};

void collect(const std::vector<OpNode>& ops, std::vector<std::string>& out) {
  for (const auto& n : ops) {
    out.push_back(n.op);
    for (const auto& b : n.branches) collect(b, out);
  }
}

void collect_slots(const std::vector<OpNode>& ops, const SearchSpace& space, std::vector<int> at,
                   std::vector<Slot>& out) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto here = at;
    here.push_back(static_cast<int>(i));
    for (const auto& [name, v] : ops[i].params.items())
      if (const auto* axis = space.axis(ops[i].op, name)) out.push_back({here, axis});
    for (std::size_t b = 0; b < ops[i].branches.size(); ++b) {
      auto sub = here;
      sub.push_back(static_cast<int>(b));
      collect_slots(ops[i].branches[b], space, sub, out);
    }
  }
}

OpNode& node_at(graph::Graph& g, const std::vector<int>& path) {
  std::vector<OpNode>* list = &g.ops;
  OpNode* n = &(*list)[path[0]];
  for (std::size_t k = 1; k + 1 < path.size(); k += 2) {
    list = &n->branches[path[k]];
    n = &(*list)[path[k + 1]];
  }
  return *n;
}

}  // namespace

graph::Graph grow_structure(std::mt19937_64& rng, const SearchSpace& space, const PruneSet& prune,
                            const graph::Graph* from, int attempts, const std::string& op) {
  graph::GraphState start;
  start.op = op;
  for (int t = 0; t < attempts; ++t) {
    Grower gr{rng, space, prune, {}};
    graph::Graph g;
    g.name = "search";
    g.op = op;
    // Keep the converting prefix and COMPRESS of `from` when it has no dividing operator.
    bool kept = false;
    if (from) {
      graph::GraphState s = start;
      std::vector<OpNode> prefix;
      for (const auto& n : from->ops) {
        if (!n.branches.empty()) break;
        const auto* op = graph::find_operator(n.op);
        if (!op || op->stage() != Stage::Converting) break;
        op->advance(s, n.params);
        prefix.push_back(n);
        gr.placed.push_back(n.op);
        if (n.op == "COMPRESS") {
          kept = true;
          break;
        }
      }
      if (kept) {
        g.ops = std::move(prefix);
        gr.finish(g.ops, s);
      }
    }
    if (!kept) g.ops = gr.list(start, 0);
    try {
      graph::validate(g, "grown graph");
    } catch (const graph::GraphError&) {
      continue;  // a rule the growth did not foresee: draw again
    }
    return g;
  }
  throw Error("search: no valid graph structure could be grown under the pruning rules");
}

std::vector<std::string> operator_names(const graph::Graph& g) {
  std::vector<std::string> out;
  collect(g.ops, out);
  return out;
}

std::string graph_key(const graph::Graph& g) {
  auto j = graph::graph_to_json(g);
  j.erase("name");
  return j.dump();
}

std::string graph_hash(const graph::Graph& g) {
  const std::string k = graph_key(g);
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : k) h = (h ^ c) * 0x100000001b3ull;
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (int s = 60; s >= 0; s -= 4) out += digits[(h >> s) & 15];
  return out;
}

std::vector<Slot> tunable_slots(const graph::Graph& g, const SearchSpace& space) {
  std::vector<Slot> out;
  collect_slots(g.ops, space, {}, out);
  return out;
}

std::vector<std::vector<std::int64_t>> grid_points(const std::vector<Slot>& slots, bool fine,
                                                   int cap, std::mt19937_64& rng) {
  std::vector<const std::vector<std::int64_t>*> axes;
  double total = 1;
  for (const auto& s : slots) {
    axes.push_back(fine ? &s.axis->fine : &s.axis->coarse);
    total *= static_cast<double>(axes.back()->size());
  }
  auto point_of = [&](std::uint64_t k) {
    std::vector<std::int64_t> p;
    for (const auto* a : axes) {
      p.push_back((*a)[k % a->size()]);
      k /= a->size();
    }
    return p;
  };
  std::vector<std::vector<std::int64_t>> out;
  if (cap <= 0) return out;
  if (total <= cap) {
    for (std::uint64_t k = 0; k < static_cast<std::uint64_t>(total); ++k)
      out.push_back(point_of(k));
    std::shuffle(out.begin(), out.end(), rng);
    return out;
  }
  // Too many: draw `cap` distinct combinations (total may exceed 64 bits: draw per axis).
  std::set<std::vector<std::int64_t>> seen;
  for (int tries = 0; static_cast<int>(out.size()) < cap && tries < cap * 20; ++tries) {
    std::vector<std::int64_t> p;
    for (const auto* a : axes)
      p.push_back((*a)[std::uniform_int_distribution<std::size_t>(0, a->size() - 1)(rng)]);
    if (seen.insert(p).second) out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::int64_t> row_len_mutation_bounds(const Csr64& a, int parts, std::int64_t ratio) {
  const std::int64_t rows = a.rows;
  std::vector<std::int64_t> out;
  if (parts < 2 || rows < parts) return out;
  // Row lengths averaged over windows, so that one odd row is no mutation.
  const std::int64_t w = std::max<std::int64_t>(1, rows / 512);
  const std::int64_t n = (rows + w - 1) / w;
  std::vector<double> mean(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t lo = k * w, hi = std::min(rows, lo + w);
    mean[k] = static_cast<double>(a.row_ptr[hi] - a.row_ptr[lo]) / static_cast<double>(hi - lo);
  }
  std::vector<std::pair<double, std::int64_t>> jumps;  // (change factor, first row after it)
  for (std::int64_t k = 1; k < n; ++k) {
    const double x = mean[k - 1] + 1, y = mean[k] + 1;
    const double f = std::max(x, y) / std::min(x, y);
    if (f >= static_cast<double>(ratio)) jumps.push_back({f, k * w});
  }
  std::stable_sort(jumps.begin(), jumps.end(),
                   [](const auto& p, const auto& q) { return p.first > q.first; });
  std::set<std::int64_t> cut;
  for (const auto& j : jumps)
    if (static_cast<int>(cut.size()) < parts - 1) cut.insert(j.second);
  for (int i = 1; static_cast<int>(cut.size()) < parts - 1 && i < 4 * parts; ++i) {
    const std::int64_t c = rows * i / parts;  // even cuts fill up
    if (c > 0 && c < rows) cut.insert(c);
  }
  out.assign(cut.begin(), cut.end());
  if (static_cast<int>(out.size()) > parts - 1) out.resize(parts - 1);
  return out;
}

std::vector<std::int64_t> pow2_bin_bounds(int parts, std::int64_t first) {
  std::vector<std::int64_t> out;
  std::int64_t b = std::max<std::int64_t>(1, first);
  for (int i = 0; i + 1 < parts; ++i, b *= 4) out.push_back(b);
  return out;
}

graph::Graph with_point(const graph::Graph& structure, const std::vector<Slot>& slots,
                        const std::vector<std::int64_t>& point, const Csr64& a) {
  graph::Graph g = structure;
  for (std::size_t i = 0; i < slots.size() && i < point.size(); ++i) {
    OpNode& n = node_at(g, slots[i].path);
    const auto& axis = *slots[i].axis;
    const int parts = static_cast<int>(n.branches.size());
    switch (axis.strategy) {
      case Discretization::None:
        n.params[axis.param] = point[i];
        break;
      case Discretization::DivInRowLenMutation: {
        const auto b = row_len_mutation_bounds(a, parts, point[i]);
        if (static_cast<int>(b.size()) == parts - 1) n.params[axis.param] = b;
        break;  // too few rows to cut: equal bands (count) stay
      }
      case Discretization::RowLenPow2Bins:
        n.params[axis.param] = pow2_bin_bounds(parts, point[i]);
        break;
      case Discretization::Flag:
        n.params[axis.param] = point[i] != 0;
        break;
    }
  }
  return g;
}

}  // namespace sparsetune::search
