#include "graph/random_graph.hpp"

#include <algorithm>
#include <cmath>

#include "graph/registry.hpp"

namespace sparsetune::graph {

namespace {

std::int64_t draw_int(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  // Log-uniform, so that small sizes are as likely as large ones.
  const double a = std::log(static_cast<double>(std::max<std::int64_t>(lo, 1)));
  const double b = std::log(static_cast<double>(std::max<std::int64_t>(hi, 1)) + 1.0);
  const double u = std::uniform_real_distribution<double>(a, b)(rng);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::exp(u)), lo, hi);
}

nlohmann::json draw_params(const Operator& op, std::mt19937_64& rng, const RandomGraphOptions& o) {
  nlohmann::json p = nlohmann::json::object();
  std::bernoulli_distribution coin(0.5);
  for (const auto& s : op.params()) {
    if (coin(rng)) continue;  // keep the default
    switch (s.type) {
      case ParamType::Bool:
        p[s.name] = coin(rng);
        break;
      case ParamType::Number:
        p[s.name] = std::uniform_real_distribution<double>(s.min, s.max)(rng);
        break;
      case ParamType::Int: {
        std::int64_t hi =
            static_cast<std::int64_t>(std::min<double>(s.max, static_cast<double>(o.max_block)));
        const auto lo = static_cast<std::int64_t>(s.min);
        if (s.name == "threads") {
          p[s.name] = 32 << std::uniform_int_distribution<int>(0, 3)(rng);
          break;
        }
        if (s.name == "max_rows" || s.name == "max_blocks") break;  // limits: keep the defaults
        if (s.name == "count") hi = std::min<std::int64_t>(hi, 4);
        p[s.name] = draw_int(rng, lo, std::max(lo, hi));
        break;
      }
      case ParamType::IntList: {
        const int n = std::uniform_int_distribution<int>(1, 2)(rng);
        std::vector<std::int64_t> v;
        std::int64_t at = 0;
        for (int i = 0; i < n; ++i) v.push_back(at += draw_int(rng, 1, o.max_block));
        p[s.name] = v;
        break;
      }
    }
  }
  return p;
}

// `p` with every default filled in the way validate() will (implicit parameters stay out), so
// preconditions see every parameter.
nlohmann::json with_defaults(const Operator& op, nlohmann::json p) {
  for (const auto& sp : op.params())
    if (!p.contains(sp.name) && !sp.implicit) p[sp.name] = sp.fallback;
  return p;
}

// Appends an operator of `stage` whose precondition holds (with fresh parameters); false if none.
bool append(std::vector<OpNode>& ops, GraphState& s, Stage stage, std::mt19937_64& rng,
            const RandomGraphOptions& o, bool allow_div) {
  std::vector<const Operator*> pool;
  for (const auto* op : operators())
    if (op->stage() == stage && op->name() != std::string("COMPRESS")) pool.push_back(op);
  std::shuffle(pool.begin(), pool.end(), rng);
  for (const auto* op : pool) {
    // Three draws, then the defaults alone (a parameter the op here refuses, such as a thread
    // reduction's `loads` for SpMM, then never keeps the operator out).
    for (int attempt = 0; attempt < 4; ++attempt) {
      OpNode n{
          op->name(),
          with_defaults(*op, attempt < 3 ? draw_params(*op, rng, o) : nlohmann::json::object()),
          {}};
      if (!op->rule(s, n.params).empty()) continue;
      if (op->branches(n.params) > 0 && !allow_div) break;
      op->advance(s, n.params);
      ops.push_back(std::move(n));
      return true;
    }
  }
  return false;
}

std::vector<OpNode> draw_list(std::mt19937_64& rng, const RandomGraphOptions& o, GraphState s,
                              int depth) {
  std::vector<OpNode> ops;
  const int conv = std::uniform_int_distribution<int>(0, o.max_converting)(rng);
  for (int i = 0; i < conv; ++i) {
    if (!append(ops, s, Stage::Converting, rng, o, depth < o.max_div_depth)) break;
    const auto* op = find_operator(ops.back().op);
    if (const int parts = op->branches(ops.back().params); parts > 0) {
      for (int b = 0; b < parts; ++b)
        ops.back().branches.push_back(draw_list(rng, o, s, depth + 1));
      return ops;
    }
  }
  ops.push_back({"COMPRESS", nlohmann::json::object(), {}});
  find_operator("COMPRESS")->advance(s, ops.back().params);
  const int map = std::uniform_int_distribution<int>(1, o.max_mapping)(rng);
  for (int i = 0; (i < map || s.finest < 0) && i < 64; ++i)
    if (!append(ops, s, Stage::Mapping, rng, o, false) && s.finest >= 0) break;
  if (s.op == "spmm" && !s.col_tiled) {
    // SpMM parts need a column tile (the mapping draw may not have placed one).
    const std::int64_t vecs[] = {1, 2, 4};
    ops.push_back({"COL_TILE",
                   {{"tn", draw_int(rng, 1, 32)},
                    {"vec", vecs[std::uniform_int_distribution<int>(0, 2)(rng)]}},
                   {}});
    find_operator("COL_TILE")->advance(s, ops.back().params);
  }
  // One reduction per level, thread level first.
  std::bernoulli_distribution extra(o.p_extra_reduction);
  for (RedLevel level : {RedLevel::Thread, RedLevel::Warp, RedLevel::Block, RedLevel::Global}) {
    if (level != RedLevel::Thread && !extra(rng)) continue;
    std::vector<const ReductionOperator*> pool;
    for (const auto* op : operators())
      // Tensor-core operators implement only parts TC_COMPRESS stored (never drawn here).
      if (const auto* r = dynamic_cast<const ReductionOperator*>(op);
          r && r->level() == level && r->tc_width() == 0)
        pool.push_back(r);
    const auto* r = pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)];
    OpNode n{r->name(), with_defaults(*r, draw_params(*r, rng, o)), {}};
    // Drawn parameters the op here refuses: the defaults alone.
    if (!r->rule(s, n.params).empty()) n.params = with_defaults(*r, nlohmann::json::object());
    if (!r->rule(s, n.params).empty()) continue;
    r->advance(s, n.params);
    ops.push_back(std::move(n));
  }
  return ops;
}

}  // namespace

Graph random_graph(std::mt19937_64& rng, const RandomGraphOptions& opt) {
  Graph g;
  g.name = "random";
  g.op = opt.op;
  GraphState s;
  s.op = opt.op;
  g.ops = draw_list(rng, opt, s, 0);
  validate(g, "random graph");
  return g;
}

}  // namespace sparsetune::graph
