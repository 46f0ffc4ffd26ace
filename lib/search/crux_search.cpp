#include "search/crux_search.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "graph/crux_graph.hpp"
#include "search/space.hpp"

namespace sparsetune::search {

namespace {

bool on_cuda_cores(const std::vector<graph::OpNode>& ops) {
  for (const auto& n : ops) {
    if (n.op == "CRUX_SPLIT" || n.op.rfind("TC_", 0) == 0) return false;
    for (const auto& b : n.branches)
      if (!on_cuda_cores(b)) return false;
  }
  return true;
}

}  // namespace

std::vector<graph::OpNode> fastest_cuda_core_ops(const std::vector<Scored>& history) {
  const Scored* best = nullptr;
  for (const auto& h : history)
    if (h.evaluation.ok && h.evaluation.time_us > 0 && !h.candidate.graph.ops.empty() &&
        on_cuda_cores(h.candidate.graph.ops) &&
        (!best || h.evaluation.time_us < best->evaluation.time_us))
      best = &h;
  return best ? best->candidate.graph.ops : std::vector<graph::OpNode>{};
}

CruxSearchResult search_crux(Evaluator& ev, const CruxSearchOptions& o) {
  CruxSearchResult r;
  auto cold = o.cold.empty() ? graph::csr_vector_ops() : o.cold;
  if (!o.cold.empty()) {  // a cold graph that is no valid branch of a crux: CSR-vector
    try {
      auto g = graph::crux_graph(0.5, 0.25, cold, o.encoding, o.width);
      graph::validate(g);
    } catch (const Error& e) {
      r.cold_note = std::string("the given cold graph is not a valid crux branch (") + e.what() +
                    "); CSR-vector instead";
      cold = graph::csr_vector_ops();
    }
  }
  r.cold = cold;
  std::vector<graph::Graph> graphs;
  const auto f = [&](CruxPoint p) {
    std::vector<Candidate> batch;
    for (const bool own : {false, true}) {
      if (own && (!o.own_rows_too || p.tau_r <= 0)) continue;  // no hot part: one graph
      Candidate c;
      c.graph = graph::crux_graph(p.tau_c, p.tau_r, cold, o.encoding, o.width, own);
      c.structure = graph_hash(c.graph);
      c.origin = "crux";
      batch.push_back(std::move(c));
    }
    const auto evals = ev.evaluate(batch);
    double best = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t i = 0; i < batch.size() && i < evals.size(); ++i) {
      const auto& e = evals[i];
      graphs.push_back(batch[i].graph);
      r.candidates.push_back(batch[i]);
      r.evaluations.push_back(e);
      if (e.ok && e.time_us > 0 && !(e.time_us >= best)) best = e.time_us;
    }
    return best;
  };
  r.bo = minimize_crux(f, o.bo);
  for (std::size_t i = 0; i < r.evaluations.size(); ++i)
    if (r.evaluations[i].ok && r.evaluations[i].time_us == r.bo.best_value && r.bo.best_value > 0) {
      r.best = graphs[i];
      r.best_evaluation = r.evaluations[i];
      break;
    }
  return r;
}

}  // namespace sparsetune::search
