#include "search/engine.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "core/error.hpp"
#include "models/xgb_regressor.hpp"
#include "search/annealing.hpp"
#include "search/space.hpp"

namespace sparsetune::search {

namespace {

using Clock = std::chrono::steady_clock;

class Driver {
 public:
  Driver(const Csr64& a, const SearchSpace& space, const PruneSet& prune, Evaluator& eval,
         const SearchOptions& opt)
      : a_(a),
        space_(space),
        prune_(prune),
        eval_(eval),
        opt_(opt),
        rng_(opt.seed),
        start_(Clock::now()) {}

  // Scores a batch unless a limit is reached; returns the scores of those scored.
  std::vector<double> score(std::vector<Candidate> batch) {
    std::vector<double> out;
    if (should_stop()) return out;
    if (opt_.max_candidates > 0)
      batch.resize(std::min<std::size_t>(batch.size(), opt_.max_candidates - r_.stats.candidates));
    if (batch.empty()) return out;
    const auto evals = eval_.evaluate(batch);
    for (std::size_t i = 0; i < batch.size() && i < evals.size(); ++i) {
      Scored s{std::move(batch[i]), evals[i]};
      ++r_.stats.candidates;
      (s.candidate.level == 3 ? r_.stats.fine : r_.stats.coarse)++;
      if (!s.evaluation.ok) ++r_.stats.failures;
      const double g = s.evaluation.ok ? s.evaluation.gflops : 0.0;
      if (s.evaluation.ok && (!have_best_ || g > r_.best.evaluation.gflops)) {
        r_.best = s;
        have_best_ = true;
      }
      out.push_back(g);
      r_.history.push_back(std::move(s));
    }
    report();
    return out;
  }

  bool should_stop() {
    if (!r_.stats.stopped_by.empty()) return true;
    if (opt_.stop && opt_.stop->load())
      r_.stats.stopped_by = "interrupted";
    else if (opt_.max_candidates > 0 && r_.stats.candidates >= opt_.max_candidates)
      r_.stats.stopped_by = "max-candidates";
    else if (opt_.budget_s > 0 && elapsed() >= opt_.budget_s)
      r_.stats.stopped_by = "budget";
    return !r_.stats.stopped_by.empty();
  }

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void report() {
    if (!opt_.progress) return;
    Progress p;
    p.candidates = r_.stats.candidates;
    p.structures = r_.stats.structures;
    p.best_gflops = have_best_ ? r_.best.evaluation.gflops : 0.0;
    p.seconds_left = opt_.budget_s > 0 ? std::max(0.0, opt_.budget_s - elapsed()) : -1.0;
    opt_.progress(p);
  }

  // Levels 2 and 3 for one structure; returns its best score (0 when nothing worked).
  double search_structure(const graph::Graph& structure, const std::string& origin) {
    const auto slots = tunable_slots(structure, space_);
    const std::string id = graph_hash(structure);
    ++r_.stats.structures;
    std::set<std::vector<std::int64_t>> done;
    std::vector<std::vector<double>> xs;
    std::vector<double> ys;
    double best = 0;

    // Level 2: the coarse grid in random order, annealing may end it early. The structure's own
    // parameters go first (a seed's are the known format's).
    auto points = grid_points(slots, false, space_.max_coarse_points, rng_);
    const std::vector<std::int64_t> own(slots.size(), -1);
    points.insert(points.begin(), own);
    Annealer ann(space_.parameters, rng_());
    for (std::size_t i = 0; i < points.size() && !ann.frozen();) {
      std::vector<Candidate> batch;
      std::vector<std::vector<std::int64_t>> pts;
      for (; i < points.size() && static_cast<int>(batch.size()) < opt_.batch; ++i) {
        if (!done.insert(points[i]).second) continue;
        const bool is_own = !points[i].empty() && points[i][0] == -1;
        Candidate c;
        c.graph = is_own ? structure : with_point(structure, slots, points[i], a_);
        c.structure = id;
        c.point = is_own ? current_values(structure, slots) : points[i];
        c.origin = origin;
        c.level = 2;
        pts.push_back(c.point);
        batch.push_back(std::move(c));
      }
      const auto scores = score(std::move(batch));
      for (std::size_t k = 0; k < scores.size(); ++k) {
        done.insert(pts[k]);
        best = std::max(best, scores[k]);
        if (!slots.empty()) xs.push_back(to_doubles(pts[k])), ys.push_back(scores[k]);
        ann.offer(scores[k]);
      }
      if (scores.size() < pts.size()) return best;  // a limit was reached
    }

    // Level 3: interpolate to the fine grid, score only the predicted best.
    if (slots.empty() || space_.fine_measured <= 0 || xs.size() < 3 || should_stop()) return best;
    models::XgbRegressor model({60, 4, 0.3, 1.0, opt_.seed, 1});
    model.fit(xs, ys);
    ++r_.stats.model_fits;
    auto fine = grid_points(slots, true, space_.max_fine_points, rng_);
    fine.erase(
        std::remove_if(fine.begin(), fine.end(), [&](const auto& p) { return done.count(p) != 0; }),
        fine.end());
    if (fine.empty()) return best;
    std::vector<std::vector<double>> fx;
    for (const auto& p : fine) fx.push_back(to_doubles(p));
    const auto pred = model.predict(fx);
    std::vector<std::size_t> order(fine.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return pred[x] > pred[y]; });
    std::vector<Candidate> batch;
    for (std::size_t k = 0;
         k < order.size() && static_cast<int>(batch.size()) < space_.fine_measured; ++k) {
      Candidate c;
      c.graph = with_point(structure, slots, fine[order[k]], a_);
      c.structure = id;
      c.point = fine[order[k]];
      c.origin = origin;
      c.level = 3;
      c.graph.name = "search";
      batch.push_back(std::move(c));
    }
    const double coarse_best = best;
    for (double s : score(std::move(batch))) {
      if (s > coarse_best) ++r_.stats.fine_improved;
      best = std::max(best, s);
    }
    return best;
  }

  SearchResult run(const std::vector<graph::Graph>& seeds, const graph::Graph& baseline) {
    r_.stats.banned = prune_.banned;
    r_.stats.rules_applied = prune_.applied;
    std::set<std::string> seen;
    // The reference point: CSR-vector exactly as the known format has it.
    {
      Candidate c;
      c.graph = baseline;
      c.structure = graph_hash(baseline);
      c.origin = "baseline";
      c.level = 2;
      seen.insert(graph_key(baseline));
      score({c});
      if (!r_.history.empty()) r_.baseline = r_.history.front();
    }
    Annealer ann(space_.structures, rng_());
    graph::Graph current;
    bool have_current = false;
    auto visit = [&](const graph::Graph& g, const std::string& origin) {
      const double s = search_structure(g, origin);
      if (ann.offer(s) || !have_current) current = g, have_current = true;
    };
    // Level 1: the known formats the rules allow, then grown structures.
    for (const auto& g : seeds) {
      if (should_stop()) break;
      bool allowed = true;
      std::vector<std::string> before;
      for (const auto& op : operator_names(g)) {
        allowed = allowed && prune_.allows(op, before);
        before.push_back(op);
      }
      if (!allowed || !seen.insert(graph_key(g)).second) continue;
      visit(g, "seed:" + g.name);
    }
    int misses = 0;
    while (!should_stop() && r_.stats.structures < space_.max_structures) {
      if (ann.frozen()) {
        r_.stats.stopped_by = "annealing";
        break;
      }
      const bool mutate = have_current && std::bernoulli_distribution(0.5)(rng_);
      graph::Graph g = grow_structure(rng_, space_, prune_, mutate ? &current : nullptr);
      if (!seen.insert(graph_key(g)).second) {
        if (++misses > 64) break;  // the allowed space is exhausted
        continue;
      }
      misses = 0;
      visit(g, "grown");
    }
    if (r_.stats.stopped_by.empty()) r_.stats.stopped_by = "space";
    r_.stats.seconds = elapsed();
    if (!have_best_)
      throw Error("search: no candidate gave a correct result (" +
                  std::to_string(r_.stats.failures) + " failed)");
    return std::move(r_);
  }

 private:
  static std::vector<double> to_doubles(const std::vector<std::int64_t>& p) {
    return std::vector<double>(p.begin(), p.end());
  }

  // The values a structure's slots hold now (for the point of its own parameters).
  static std::vector<std::int64_t> current_values(const graph::Graph& g,
                                                  const std::vector<Slot>& slots) {
    std::vector<std::int64_t> v;
    for (const auto& s : slots) {
      const std::vector<graph::OpNode>* list = &g.ops;
      const graph::OpNode* n = &(*list)[s.path[0]];
      for (std::size_t k = 1; k + 1 < s.path.size(); k += 2) {
        list = &n->branches[s.path[k]];
        n = &(*list)[s.path[k + 1]];
      }
      const auto& p = n->params.at(s.axis->param);
      v.push_back(p.is_number_integer() ? p.get<std::int64_t>() : -1);
    }
    return v;
  }

  const Csr64& a_;
  const SearchSpace& space_;
  const PruneSet& prune_;
  Evaluator& eval_;
  SearchOptions opt_;
  std::mt19937_64 rng_;
  Clock::time_point start_;
  SearchResult r_;
  bool have_best_ = false;
};

}  // namespace

nlohmann::json SearchStats::to_json() const {
  return {{"structures", structures},
          {"candidates", candidates},
          {"failures", failures},
          {"coarse_candidates", coarse},
          {"fine_candidates", fine},
          {"fine_improved", fine_improved},
          {"model_fits", model_fits},
          {"seconds", seconds},
          {"stopped_by", stopped_by},
          {"banned_operators", banned},
          {"pruning_rules_applied", rules_applied}};
}

SearchResult run_search(const Csr64& a, const SearchSpace& space, const PruneSet& prune,
                        const std::vector<graph::Graph>& seeds, const graph::Graph& baseline,
                        Evaluator& eval, const SearchOptions& opt) {
  return Driver(a, space, prune, eval, opt).run(seeds, baseline);
}

std::vector<graph::Graph> load_graphs(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  if (ec) throw Error(dir + ": cannot list graphs: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<graph::Graph> out;
  for (const auto& f : files) out.push_back(graph::read_graph(f));
  return out;
}

}  // namespace sparsetune::search
