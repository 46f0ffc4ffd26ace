#pragma once
// Slice-GCN (IAP-SpTV §4.2): the format classifier of stage 2. Two GraphConv layers over the
// slice's bipartite row/column graph, h' = ReLU(h·W_self + agg_{neighbours}(h)·W_nbr + b), each
// of `conv` (256) channels, agg the mean (the default) or the sum (PyTorch Geometric's GraphConv,
// the paper's layer); the global mean pooling of both layers' outputs (2 × 256) joined with
// the 9 global features; an MLP of `hidden` (128) ReLU units and 5 outputs; LogSoftmax, trained
// with the NLL loss by backpropagation and Adam. Deterministic for a seed; fp64 throughout.
//
// Node features (4): is-row, is-column, log(1 + degree) / 4, degree / the largest degree on the
// node's side; optionally the degree's bucket after them (kGcnNodeFeaturesWithBuckets). Global
// features (the paper's 9, optionally the 5 fiber features after them) enter as log(1 + x),
// standardized by the mean and standard deviation of the training slices (stored with the weights):
// unscaled, rows and entries of 10^4 and more dwarf the pooled channels, and the MLP learned less
// from them than trees do.
#include <cstdint>
#include <string>
#include <vector>

#include "features/slice_graph.hpp"

namespace sparsetune::models {

// Node features with the degree's power-of-two bucket after the 4 (8 buckets: 1, 2, 3-4, ...,
// 33-64, 65 and more), one-hot: a format's padding and imbalance follow the fiber lengths'
// histogram, which the pooled first layer then sums directly.
inline constexpr int kGcnDegreeBuckets = 8;
inline constexpr int kGcnNodeFeaturesWithBuckets = 4 + kGcnDegreeBuckets;
// At most this many bins per global (GcnShape::global_bins).
inline constexpr int kMaxGlobalBins = 64;

struct GcnShape {
  int node_features = 4;  // 4, or kGcnNodeFeaturesWithBuckets
  int conv = 256;         // channels of each GraphConv layer
  int hidden = 128;       // MLP hidden units
  // The first `globals` of features::global_feature_names(): the paper's 9, or with the 5
  // fiber features (features::kFiberGlobals) 14.
  int globals = features::kPaperGlobals;
  int classes = 5;
  bool sum_aggregation = false;  // neighbours summed, as PyG's GraphConv does; mean otherwise
  // When > 0, each global also enters piecewise-linearly encoded over this many bins, their edges
  // the training slices' quantiles of log(1 + x): bin t reads clamp((v - e_t) / (e_{t+1} - e_t),
  // 0, 1). A tree splits a feature at thresholds; an MLP given one number per feature learns
  // such steps poorly, and this encoding hands it the thresholds (Gorishniy et al., "On
  // Embeddings for Numerical Features in Tabular Deep Learning", NeurIPS 2022).
  int global_bins = 0;
  bool operator==(const GcnShape&) const = default;
};

struct GcnTrainOptions {
  int epochs = 80;  // 40 underfit the labels of 2026-11-27 (docs/benchmarks.md)
  int batch = 16;
  double learning_rate = 1e-3;  // Adam
  std::uint64_t seed = 1;       // shuffling
  int threads = 0;              // a batch's samples in parallel (0: every core); same result
  // When > 0, the model is returned as the mean of its weights at the end of each of this many
  // last epochs (stochastic weight averaging): one epoch's weights follow the last batches'
  // noise, their mean does less.
  int average_last = 0;
  // Decoupled weight decay (AdamW): each step shrinks the weights by learning_rate * decay.
  double weight_decay = 0;
};

// What a saved model says about itself (metadata of its safetensors file).
struct GcnModelInfo {
  std::string arch = "sm_90";
  std::string date;                  // ISO date of training
  std::string labels = "gpu";        // where the labels came from ("gpu" or "synthetic")
  double sparsity_threshold = 0.23;  // stage 1's sp, kept with the model it was used with
  std::string notes;
  // The slices held out of training, as slice_key() names them (optional in the file: models
  // written before it have none), so `eval --test-split` scores only slices it never saw.
  std::vector<std::string> test_slices;
};

class SliceGcn {
 public:
  static constexpr int kFormatVersion = 2;  // 2: the globals' standardization stored
  // A bag of networks (add_member) is written as version 3: the first network's arrays under the
  // usual names, network k's under "bag.<k>.", and metadata `bag` = their count. A single
  // network is still written as version 2, and both versions load.
  static constexpr int kBagFormatVersion = 3;
  static constexpr int kMaxBag = 64;

  explicit SliceGcn(GcnShape shape = {}, std::uint64_t seed = 1);

  const GcnShape& shape() const { return shape_; }
  // All weights, one flat vector (the order of param_names()).
  std::vector<double>& params() { return w_; }
  const std::vector<double>& params() const { return w_; }

  // The globals' standardization: mean and standard deviation of log(1 + x) per feature, set by
  // train() from its samples (0 and 1 before).
  const std::vector<double>& global_mean() const { return gmean_; }
  const std::vector<double>& global_std() const { return gstd_; }
  // The bins' edges (shape().global_bins > 0): global_bins + 1 ascending values per global, set
  // by train() from its samples.
  const std::vector<double>& global_edges() const { return gedges_; }

  // Log-probabilities of the classes: of the bag's mean probabilities when it has members.
  std::vector<double> log_probs(const features::SliceInput& in) const;
  int predict(const features::SliceInput& in) const;
  // NLL loss of one sample; adds its gradient into `grad` (sized like params()) when given.
  double loss(const features::SliceInput& in, int label, std::vector<double>* grad) const;

  // Cross-entropy against a distribution over the classes (soft labels); the NLL of a label is
  // the case of a one-hot `target`.
  double loss(const features::SliceInput& in, const std::vector<double>& target,
              std::vector<double>* grad) const;

  // Trains on the samples; returns the mean loss of each epoch. With `targets` (one distribution
  // over the classes per sample), the loss is the cross-entropy against them instead of the
  // NLL of `labels`; `labels` still name each sample's class.
  std::vector<double> train(const std::vector<features::SliceInput>& x,
                            const std::vector<int>& labels, const GcnTrainOptions& o = {},
                            const std::vector<std::vector<double>>* targets = nullptr);
  double accuracy(const std::vector<features::SliceInput>& x, const std::vector<int>& labels) const;

  // A bag: another network of the same shape, trained on the same slices under another seed,
  // whose probabilities log_probs() and predict() average with this one's (and any other
  // member's). loss() and train() concern this network alone. Throws Error on another shape, a
  // member that is itself a bag, or more than kMaxBag networks in all.
  void add_member(SliceGcn member);
  int bag_size() const { return 1 + static_cast<int>(members_.size()); }

  // A safetensors file: one array per weight matrix, metadata naming the format version, the
  // shape, the feature lists, the classes and `info`. Written atomically.
  void save(const std::string& path, const GcnModelInfo& info) const;
  // Throws InputError naming the file and the field at fault.
  static SliceGcn load(const std::string& path, GcnModelInfo* info = nullptr);

 private:
  struct Layout;
  double run(const features::SliceInput& in, int label, const double* target,
             std::vector<double>* grad) const;
  std::vector<double> own_log_probs(const features::SliceInput& in) const;
  GcnShape shape_;
  std::vector<double> w_;
  std::vector<double> gmean_, gstd_;
  std::vector<double> gedges_;     // globals x (global_bins + 1), row by row
  std::vector<SliceGcn> members_;  // the rest of a bag (empty for one network)
};

// The nodes' input features, node by node (the rows, then the columns), `node_features` each
// (4 or kGcnNodeFeaturesWithBuckets).
std::vector<double> gcn_node_features(const features::SliceInput& in, int node_features);
bool valid_node_features(int node_features);

// The piecewise-linear encoding of `v` over the bins whose edges are `edges` (ascending; one
// more than the bins), written to out[0 .. edges.size() - 2]: 1 for a bin wholly below v, 0 for
// one wholly above, the covered share for the bin holding v; a bin of zero width reads 1 from
// its edge on.
void encode_piecewise(double v, const double* edges, int bins, double* out);

// The class names, in label order (0 CSR, 1 COO, 2 ELL, 3 HYB, 4 Dense).
const std::vector<std::string>& slice_format_classes();

}  // namespace sparsetune::models
