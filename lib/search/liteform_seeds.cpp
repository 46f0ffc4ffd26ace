#include "search/liteform_seeds.hpp"

#include <algorithm>
#include <optional>

#include "models/cell_predictor.hpp"
#include "search/spmm_seeds.hpp"

namespace sparsetune::search {

int place_liteform_seeds(std::vector<graph::Graph>& seeds, const Csr64& a, std::int64_t n,
                         const nlohmann::json& feature_row, bool learned,
                         const std::string& models_dir, const std::string& arch, bool measuring,
                         bool predict_only, nlohmann::json& pick) {
  auto is_cell = [](const graph::Graph& g) { return g.name.rfind("cell-p", 0) == 0; };
  // LiteForm's second predictor: CELL over its predicted column partitions is a seed too.
  std::string why_p = "learned models are off";
  const std::optional<models::PartitionPredictor> pp =
      learned ? models::PartitionPredictor::find(models_dir, arch, &why_p) : std::nullopt;
  if (pp) {
    const int parts = pp->predict(feature_row, n);
    pick["partitions"] = parts;
    const std::string name = "cell-p" + std::to_string(parts);
    if (parts <= a.cols && std::none_of(seeds.begin(), seeds.end(),
                                        [&](const graph::Graph& g) { return g.name == name; })) {
      seeds.push_back(cell_seed(a, n, parts));
    }
  } else {
    pick["partitions_why_not_predicted"] = why_p;
  }
  std::string why = "learned models are off";
  const std::optional<models::CellPredictor> cp =
      learned ? models::CellPredictor::find(models_dir, arch, &why) : std::nullopt;
  bool pin_cell = measuring;
  if (cp) {
    const double prob = cp->probability(feature_row, n);
    pin_cell = prob >= 0.5;
    pick["cell"] = pin_cell;
    pick["probability"] = prob;
    pick["by"] = "the liteform-cell model (" + arch + ")";
    if (!pin_cell && predict_only) std::erase_if(seeds, is_cell);
  } else {
    pick["why_not_predicted"] = why;
  }
  if (!pin_cell || seeds.empty()) return 0;
  std::stable_partition(seeds.begin() + 1, seeds.end(), is_cell);
  return static_cast<int>(std::count_if(seeds.begin(), seeds.end(), is_cell));
}

}  // namespace sparsetune::search
