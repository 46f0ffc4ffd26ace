#include "search/screen.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "search/space.hpp"

namespace sparsetune::search {

ScreenResult screen_then_confirm(const Csr64& sample, const SearchSpace& space,
                                 const PruneSet& prune, const std::vector<graph::Graph>& seeds,
                                 const graph::Graph& baseline, Evaluator& sample_eval,
                                 Evaluator& full_eval, const SearchOptions& opt,
                                 const ScreenOptions& screen) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  ScreenResult out;

  SearchOptions first = opt;
  first.budget_s = opt.budget_s > 0 ? opt.budget_s * screen.share : 0;
  first.on_scored = nullptr;  // the sample's times are not the matrix's
  out.sample = run_search(sample, space, prune, seeds, baseline, sample_eval, first);
  out.sample_s = elapsed();

  // The fastest distinct candidates on the sample, in that order.
  std::vector<const Scored*> ok;
  for (const auto& h : out.sample.history)
    if (h.evaluation.ok && h.evaluation.time_us > 0) ok.push_back(&h);
  std::stable_sort(ok.begin(), ok.end(), [](const Scored* x, const Scored* y) {
    return x->evaluation.time_us < y->evaluation.time_us;
  });
  std::vector<Candidate> picked;
  std::set<std::string> seen;
  for (const Scored* h : ok) {
    if (static_cast<int>(picked.size()) >= std::max(1, screen.confirm)) break;
    if (!seen.insert(graph_key(h->candidate.graph)).second) continue;
    Candidate c = h->candidate;
    c.origin = "screened:" + c.origin;
    picked.push_back(std::move(c));
  }

  const auto record = [&](const std::vector<Candidate>& cs, const std::vector<Evaluation>& es) {
    for (std::size_t i = 0; i < es.size() && i < cs.size(); ++i) {
      Scored s{cs[i], es[i]};
      if (opt.on_scored) opt.on_scored(s);
      out.confirmed.push_back(std::move(s));
    }
  };
  const auto any_ok = [&] {
    return std::any_of(out.confirmed.begin(), out.confirmed.end(),
                       [](const Scored& s) { return s.evaluation.ok; });
  };
  // All of them in one batch, designed at once on the preparing threads (each takes seconds on
  // the full matrix: one after another, the first alone left no time for the rest), as many as
  // fit in the time left. The sample's best is measured whatever the time left.
  if (!picked.empty()) {
    const auto go = [&](double need) {
      const bool stop = opt.stop && opt.stop->load();
      return !stop && (opt.budget_s <= 0 || elapsed() + need < opt.budget_s);
    };
    const auto measured = full_eval.evaluate_until(picked, go);
    if (measured.empty()) {
      const std::vector<Candidate> best(picked.begin(), picked.begin() + 1);
      record(best, full_eval.evaluate(best));
    } else {
      record(picked, measured);
    }
  }
  // CSR-vector when nothing confirmed ran correctly, so there is always an answer.
  if (!any_ok() && !seen.count(graph_key(baseline))) {
    Candidate ref;
    ref.graph = baseline;
    ref.structure = graph_hash(baseline);
    ref.origin = "baseline";
    const std::vector<Candidate> one{ref};
    record(one, full_eval.evaluate(one));
  }
  out.confirm_s = elapsed() - out.sample_s;
  return out;
}

}  // namespace sparsetune::search
