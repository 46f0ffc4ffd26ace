#pragma once
// A one-line progress bar on stderr, drawn only when stderr is a terminal: candidates scored,
// best so far in GFLOP/s, time left of the budget.
#include <string>

#include "search/engine.hpp"

namespace sparsetune::search {

class ProgressBar {
 public:
  explicit ProgressBar(double budget_s, bool enable = true);  // enabled only on a terminal
  ~ProgressBar();
  void update(const Progress& p);
  void finish();  // clears the line
  bool enabled() const { return enabled_; }
  static std::string render(const Progress& p, double budget_s, int width);

 private:
  double budget_s_;
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace sparsetune::search
