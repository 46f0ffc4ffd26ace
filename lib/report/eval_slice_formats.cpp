// `sparsetune eval`: Slice-GCN's (or the structural rule's) slice formats against the fastest
// format timed for each slice.
#include <cmath>

#include "models/slice_selector.hpp"
#include "models/slice_training.hpp"
#include "report/eval.hpp"
#include "report/eval_summary.hpp"

namespace sparsetune::report {

PredictorEval evaluate_slice_formats(const std::vector<models::SliceLabel>& labels,
                                     const std::string& base_dir, double sp,
                                     const models::SliceGcn* model) {
  const auto& classes = models::slice_format_classes();
  PredictorEval e;
  e.predictor = model ? "slice-gcn" : "slice-rule";
  e.note = std::string(model ? "Slice-GCN's stage 2" : "the structural rule (no model)") +
           " on the slices below sp = " + std::to_string(sp) + ", one row per slice";
  const auto inputs = models::labelled_inputs(labels, base_dir);
  int top1 = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto& l = labels[i];
    const auto& in = inputs[i];
    if (in.density >= sp) continue;  // stage 1 sends it to Dense
    const int pick = model ? model->predict(in)
                           : models::rule_format(in.globals, static_cast<double>(in.nonempty_rows));
    const double fastest = l.time_us[static_cast<std::size_t>(l.fastest)];
    const double t = l.time_us[static_cast<std::size_t>(pick)];
    PickResult p;
    p.name = models::slice_key(l.tensor, l.mode, l.slice);
    p.op = "sptv mode=" + std::to_string(l.mode);
    p.ranked = l.measured;
    p.pick = classes[static_cast<std::size_t>(pick)];
    p.best = classes[static_cast<std::size_t>(l.fastest)];
    p.pick_us = std::isfinite(t) ? t : 2 * fastest;
    p.oracle_us = fastest;
    p.share = p.oracle_us / p.pick_us;
    top1 += pick == l.fastest || t <= fastest;  // a tie in time is the fastest too
    e.matrices.push_back(std::move(p));
  }
  summarize(e, top1);
  return e;
}

}  // namespace sparsetune::report
