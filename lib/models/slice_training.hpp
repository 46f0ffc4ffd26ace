#pragma once
// Training Slice-GCN from measured labels (IAP-SpTV §4.2, §6.2): every labelled slice's input is
// built from its tensor (sliced as `tune --op sptv` slices it), slices that stage 1 sends to Dense
// are left out (the GCN never sees them), a deterministic share is held out, Slice-GCN is trained
// on the rest and scored on the held-out slices beside an XGBoost classifier on the 9 global
// features.
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/slice_gcn.hpp"
#include "models/slice_labels.hpp"

namespace sparsetune::models {

struct SliceTrainingOptions {
  double holdout = 0.2;              // share of the slices held out for testing
  double sparsity_threshold = 0.23;  // stage 1's sp: denser slices are not stage 2's business
  GcnShape shape;
  GcnTrainOptions train;
  std::uint64_t seed = 1;  // initial weights and the held-out split
  // When not empty, exactly these slices (slice_key() names, those among the labels) are held
  // out instead of a random share: trainings compared on one split (slice-gcn train
  // --holdout-like MODEL).
  std::vector<std::string> test_keys;
  // When > 1 (and test_keys is empty), cross-validation: the slices, shuffled by the seed, are cut
  // into `folds` equal parts and part `fold` (0-based) is held out instead of a `holdout` share.
  // Each slice is held out in exactly one of the folds runs.
  int folds = 0, fold = 0;
  // When > 0, the model learns from each slice's measured times instead of its label alone: the
  // target gives format f the weight exp(-ln(t_f / t_fastest) / soft_labels), normalized, so a
  // format 1 % slower than the fastest counts exp(-0.01 / soft_labels) as much. For a quarter
  // of the slices the runner-up is within 1 % and the label is the timing noise's pick
  // (docs/benchmarks.md); a one-hot target teaches that noise as firmly as a clear win.
  double soft_labels = 0;
  // When > 1, a bag: this many networks, the first under `seed` (weights) and train.seed (the
  // batches' order), the k-th under both plus k, trained on the same slices; the model averages
  // their probabilities (SliceGcn::add_member). One network's accuracy moves by several points
  // with the seed (docs/benchmarks.md, "Slice-GCN's labels at 2^21 fibers"); their mean, less.
  int bag = 1;
};

// The soft target of one slice (see SliceTrainingOptions::soft_labels); one-hot on the label
// when `margin` is 0. Formats not timed get 0.
std::vector<double> soft_target(const SliceLabel& l, double margin, int classes);

// A label is decided by the slice, not by the timing noise, when its runner-up is at least this
// much slower: two collections of the same build name the same fastest format for 79.5 % of all
// slices, and for 93 % of those above this margin (docs/benchmarks.md, 2026-11-26).
inline constexpr double kDecidedMargin = 1.01;

struct SliceTrainingReport {
  int labelled = 0, dense_excluded = 0, train = 0, test = 0;
  std::vector<int> per_class;          // training slices per format
  std::vector<std::string> test_keys;  // the held-out slices, as slice_key() names them
  std::vector<double> losses;          // mean loss per epoch
  double gcn_train_accuracy = 0, gcn_test_accuracy = 0, xgb_test_accuracy = 0;
  double rule_test_accuracy = 0;  // the structural rule (no model) on the held-out slices
  // Held out, judged by the measured times instead of the labels: the share of slices whose pick
  // is the fastest format measured, the share within 5 % of it, and the picks' time over the
  // fastest (geometric mean); and the share of picks that are the fastest among the slices
  // whose runner-up is at least kDecidedMargin slower (`decided` of them). {Slice-GCN, XGBoost,
  // the rule}.
  struct ByTime {
    double fastest = 0, within_5pct = 0, slowdown = 0;
    int decided = 0;
    double decided_fastest = 0;
  };
  ByTime gcn_test_time, xgb_test_time, rule_test_time;
};

// The input of each labelled slice, in the labels' order. Tensor paths are absolute or relative
// to `base_dir`. Throws Error when a tensor cannot be read or a slice is not a non-empty slice of
// its tensor.
std::vector<features::SliceInput> labelled_inputs(const std::vector<SliceLabel>& labels,
                                                  const std::string& base_dir);

// The labelled slices as a CSV table, for looking at what the models read: a row per slice with
// its key, density, every global feature (features::global_feature_names()), its label, the
// runner-up's margin and each format's time (empty where not timed).
std::string labelled_features_csv(const std::vector<SliceLabel>& labels,
                                  const std::string& base_dir);

// §4.3's experiment read back: slices grouped by density (rounded to `step`) with the share
// whose measured best format is Dense; sp is the lowest group density from which every group at
// or above it has Dense best for all its slices (NaN when the densest group does not).
struct SpGroup {
  double density = 0;
  int slices = 0, dense_best = 0;
  double share = 0;
};
struct SpDerivation {
  std::vector<SpGroup> groups;  // ascending by density
  double threshold = std::numeric_limits<double>::quiet_NaN();
};
SpDerivation derive_sparsity_threshold(const std::vector<double>& density,
                                       const std::vector<int>& best_format, double step = 0.01);

// Picks judged by the labels' measured times: the share that is the fastest format, within 5 %
// of it, the picks' time over the fastest (geometric mean; a format not timed counts as twice the
// fastest), and the right picks among the decided slices. One pick per label.
// {"fastest", "within_5pct", "slowdown", "decided", "decided_fastest"}, as the reports write it.
nlohmann::json to_json(const SliceTrainingReport::ByTime& b);

SliceTrainingReport::ByTime judge_picks(const std::vector<const SliceLabel*>& labels,
                                        const std::vector<int>& picks);

// A model scored on labelled slices it may never have seen (`slice-gcn eval`): the slices stage 1
// leaves to Dense (density >= sp) are left out, as in training.
struct SliceEvalReport {
  int labelled = 0, dense_excluded = 0, scored = 0;
  double gcn_accuracy = 0, rule_accuracy = 0;
  SliceTrainingReport::ByTime gcn_time, rule_time;
  // Each scored slice: its label, both picks and the model's log-probabilities (CSR, COO, ELL,
  // HYB, Dense), so that a user sees which slices were missed and by how much.
  struct Slice {
    const SliceLabel* label = nullptr;
    int gcn = 0, rule = 0;
    std::vector<double> log_probs;
  };
  std::vector<Slice> slices;
};
SliceEvalReport evaluate_slice_gcn(const std::vector<SliceLabel>& labels,
                                   const std::string& base_dir, double sparsity_threshold,
                                   const SliceGcn& model);

// Tensor paths in the labels are absolute or relative to `base_dir`. Throws Error when a tensor
// cannot be read, a slice is not a non-empty slice of its tensor, or nothing is left to train on.
SliceTrainingReport train_slice_gcn(const std::vector<SliceLabel>& labels,
                                    const std::string& base_dir, const SliceTrainingOptions& o,
                                    SliceGcn& model);

}  // namespace sparsetune::models
