#pragma once
// A gradient-boosted tree classifier (XGBoost C API, multi:softprob) over small dense tables: the
// comparison model of IAP-SpTV's stage 2, trained on the 9 global slice features alone.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/xgb_regressor.hpp"

namespace sparsetune::models {

class XgbClassifier {
 public:
  explicit XgbClassifier(int classes, XgbOptions opt = {});
  ~XgbClassifier();
  XgbClassifier(const XgbClassifier&) = delete;
  XgbClassifier& operator=(const XgbClassifier&) = delete;
  XgbClassifier(XgbClassifier&& o) noexcept;

  // Trains on rows x (all of one width) and labels in [0, classes); throws Error on an empty or
  // ragged table, a non-finite value, a label out of range, or a library failure.
  // `weights` (one per row, or empty) weigh the rows' losses.
  void fit(const std::vector<std::vector<double>>& x, const std::vector<int>& labels,
           const std::vector<double>& weights = {});
  // Class probabilities of each row (classes values per row).
  std::vector<std::vector<double>> predict_proba(const std::vector<std::vector<double>>& x) const;
  std::vector<int> predict(const std::vector<std::vector<double>>& x) const;
  double accuracy(const std::vector<std::vector<double>>& x, const std::vector<int>& labels) const;

  // The trained model in XGBoost's JSON model format; throws Error before fit().
  std::string save() const;
  // A model saved by save(), of `classes` classes over rows of `width` values; throws Error
  // naming `source` when the bytes are not one.
  static XgbClassifier load(std::string_view bytes, int classes, std::size_t width,
                            const std::string& source);
  int classes() const { return classes_; }

 private:
  int classes_;
  XgbOptions opt_;
  void* booster_ = nullptr;  // BoosterHandle
  std::size_t width_ = 0;
};

}  // namespace sparsetune::models
