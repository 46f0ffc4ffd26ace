#include "models/predictors.hpp"

#include <ctime>

#include "core/error.hpp"

namespace sparsetune::models {

const std::vector<Predictor>& predictors() {
  static const std::vector<Predictor> all = {
      {"spmv-rank",
       "SpMV predict-only ranking: log time of a candidate graph from matrix features and the "
       "graph's operators and parameters (XGBoost)",
       &train_spmv_rank, nullptr, true},
      {"spmm-rank",
       "SpMM predict-only ranking: the same regression with log2(n) among the inputs, from the "
       "SpMM rows (collect --op spmm)",
       &train_spmm_rank, nullptr, true},
      {"crux",
       "MatXtract's crux (tau_c, tau_r) from the Table 2 features: the fastest point of each "
       "matrix's crux search, two XGBoost regressions",
       &train_crux},
      {"liteform-cell",
       "LiteForm's CELL or not for SpMM: CELL at least 1.1x both the best CSR-family graph and "
       "BSR, from the Table 2 features and N (XGBoost classifier)",
       &train_liteform_cell},
      {"liteform-partitions",
       "LiteForm's column partitions of CELL for SpMM: the count of the fastest CELL graph, from "
       "the Table 2 features and N (XGBoost classifier; eq. (1)-(2) similarities)",
       &train_liteform_partitions},
      {"slice-gcn",
       "IAP-SpTV's Slice-GCN: the fastest slice format from the slice's graph and its 9 global "
       "features, from the slices collect --op sptv timed (held-out slices, XGBoost beside it)",
       &train_slice_gcn_model, "it holds out slices, not matrices: slice-gcn train --holdout-like",
       true},
      {"row-order",
       "Mehrabi et al.'s row order for output-stationary SpMM: an XGBoost regression of each "
       "order's log time over the original's from Table II's features and N (the argmin), and "
       "the direct classifier beside it, from collect --op spmm --row-orders",
       &train_row_order_model},
  };
  return all;
}

const Predictor& find_predictor(const std::string& name) {
  std::string known;
  for (const auto& p : predictors()) {
    if (name == p.name) return p;
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  throw Error("no predictor named '" + name + "' (known: " + known + ", or all)");
}

namespace {
// "a, b or c": the predictors `keep` accepts.
std::string names_where(bool (*keep)(const Predictor&)) {
  std::vector<std::string> names;
  for (const auto& p : predictors())
    if (keep(p)) names.push_back(p.name);
  std::string s;
  for (std::size_t k = 0; k < names.size(); ++k)
    s += (k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + names[k];
  return s;
}
}  // namespace

void check_train_request(const std::string& model, const TrainOptions& opt, bool holdout_like) {
  const Predictor* p = model == "all" ? nullptr : &find_predictor(model);
  if (opt.bag > 1 && p && !p->bags)
    throw Error("train --bag averages the models of " +
                names_where([](const Predictor& q) { return q.bags; }) + ", not '" + model + "'");
  if (holdout_like && (!p || p->no_holdout_like))
    throw Error("train --holdout-like needs one model named by --model (" +
                names_where([](const Predictor& q) { return q.no_holdout_like == nullptr; }) +
                "), not '" + model + "'" + (p ? std::string(": ") + p->no_holdout_like : ""));
}

XgbOptions predictor_xgb(const TrainOptions& opt) {
  XgbOptions xo;
  xo.rounds = 200;
  xo.max_depth = 4;
  xo.eta = 0.1;
  xo.seed = opt.split.seed;
  xo.threads = opt.threads;
  return xo;
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace sparsetune::models
