#include "search/crux_seeds.hpp"

#include "graph/crux_graph.hpp"
#include "models/crux_predictor.hpp"

namespace sparsetune::search {

CruxSeeds crux_seeds(const nlohmann::json& feature_row, const std::string& dtype, bool learned,
                     const std::string& models_dir, const std::string& arch) {
  CruxSeeds out;
  std::string why = "learned models are off";
  std::optional<models::CruxPredictor> cp;
  if (learned) cp = models::CruxPredictor::find(models_dir, arch, &why);
  if (!cp) {
    out.pick = {{"why_not_predicted", why}};
    return out;
  }
  const auto c = cp->predict(feature_row, dtype);
  out.first = CruxPoint{c.tau_c, c.tau_r};
  out.pick = {{"tau_c", c.tau_c}, {"tau_r", c.tau_r}, {"by", "the crux model (" + arch + ")"}};
  const int width = dtype == "f16" ? 8 : 4;
  graph::Graph g = graph::crux_graph(c.tau_c, c.tau_r, graph::csr_vector_ops(), 0, width);
  g.name = "crux-predicted";
  out.graphs.push_back(std::move(g));
  if (c.tau_r > 0) {  // and with the hot part owning its rows: one launch
    graph::Graph own = graph::crux_graph(c.tau_c, c.tau_r, graph::csr_vector_ops(), 0, width, true);
    own.name = "crux-predicted-own-rows";
    out.graphs.push_back(std::move(own));
  }
  return out;
}

}  // namespace sparsetune::search
