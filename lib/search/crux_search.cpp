#include "search/crux_search.hpp"

#include <cmath>
#include <limits>

#include "graph/crux_graph.hpp"
#include "search/space.hpp"

namespace sparsetune::search {

CruxSearchResult search_crux(Evaluator& ev, const CruxSearchOptions& o) {
  CruxSearchResult r;
  const auto cold = o.cold.empty() ? graph::csr_vector_ops() : o.cold;
  std::vector<graph::Graph> graphs;
  const auto f = [&](CruxPoint p) {
    Candidate c;
    c.graph = graph::crux_graph(p.tau_c, p.tau_r, cold, o.encoding, o.width);
    c.structure = graph_hash(c.graph);
    c.origin = "crux";
    Evaluation e = ev.evaluate({c}).at(0);
    graphs.push_back(c.graph);
    r.candidates.push_back(c);
    r.evaluations.push_back(e);
    return e.ok && e.time_us > 0 ? e.time_us : std::numeric_limits<double>::quiet_NaN();
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
