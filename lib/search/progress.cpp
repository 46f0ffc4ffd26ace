#include "search/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace sparsetune::search {

ProgressBar::ProgressBar(double budget_s, bool enable)
    : budget_s_(budget_s), enabled_(enable && isatty(2) != 0) {}

ProgressBar::~ProgressBar() { finish(); }

std::string ProgressBar::render(const Progress& p, double budget_s, int width) {
  std::string bar;
  if (budget_s > 0 && p.seconds_left >= 0) {
    const double done = std::clamp(1.0 - p.seconds_left / budget_s, 0.0, 1.0);
    const int fill = static_cast<int>(done * width + 0.5);
    bar = "[" + std::string(fill, '#') + std::string(width - fill, '.') + "] ";
  }
  char tail[160];
  if (p.seconds_left >= 0)
    std::snprintf(tail, sizeof tail, "%d candidates, best %.2f GFLOP/s, %.0f s left", p.candidates,
                  p.best_gflops, p.seconds_left);
  else
    std::snprintf(tail, sizeof tail, "%d candidates, best %.2f GFLOP/s", p.candidates,
                  p.best_gflops);
  return bar + tail;
}

void ProgressBar::update(const Progress& p) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K%s", render(p, budget_s_, 24).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace sparsetune::search
