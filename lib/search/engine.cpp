#include "search/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "core/error.hpp"
#include "models/xgb_regressor.hpp"
#include "runtime/thread_pool.hpp"
#include "search/annealing.hpp"
#include "search/precheck.hpp"
#include "search/space.hpp"

namespace sparsetune::search {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kPruned = std::numeric_limits<double>::quiet_NaN();

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
        start_(Clock::now()),
        shape_(MatrixShape::of(a)) {
    if (opt_.batch <= 0) opt_.batch = std::max(1, eval_.preferred_batch());
  }

  // Scores a batch unless a limit is reached; returns the scores of those scored, in order. A
  // candidate bound to fail (precheck) is not designed: its score is NaN and it is not counted.
  std::vector<double> score(std::vector<Candidate> batch) {
    std::vector<double> out;
    if (should_stop()) return out;
    std::vector<Candidate> run;
    std::vector<std::size_t> at;  // index in `batch` of each candidate run
    std::size_t handled = batch.size();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (const auto why = bound_to_fail(batch[i].graph, shape_); !why.empty()) {
        note_pruned(batch[i], why);
        continue;
      }
      if (opt_.max_candidates > 0 &&
          r_.stats.candidates + static_cast<int>(run.size()) >= opt_.max_candidates) {
        handled = i;
        break;
      }
      at.push_back(i);
      run.push_back(std::move(batch[i]));
    }
    const auto evals =
        run.empty() ? std::vector<Evaluation>{} : eval_.evaluate_until(run, [this](double need) {
          return !should_stop() && (opt_.budget_s <= 0 || elapsed() + need < opt_.budget_s);
        });
    return record(run, at, evals, handled);
  }

  // Records evaluations of `run` (taken from positions `at` of a batch whose first `n` were run
  // or pruned); pruned positions score NaN; the result ends at the last position handled.
  std::vector<double> record(std::vector<Candidate>& run, const std::vector<std::size_t>& at,
                             const std::vector<Evaluation>& evals, std::size_t n) {
    std::vector<double> out;
    std::size_t next = 0;
    for (std::size_t k = 0; k < run.size() && k < evals.size(); ++k) {
      for (; next < at[k]; ++next) out.push_back(kPruned);
      ++next;
      Scored s{std::move(run[k]), evals[k]};
      ++r_.stats.candidates;
      (s.candidate.level == 3 ? r_.stats.fine : r_.stats.coarse)++;
      if (!s.evaluation.ok) {
        ++r_.stats.failures;
        auto& e = s.evaluation;
        if (e.category.empty()) e.category = classify_failure(e.failure);
        r_.stats.failure_log.add(e.category, e.failure, graph::describe(s.candidate.graph));
      }
      const double g = s.evaluation.ok ? s.evaluation.gflops : 0.0;
      if (s.evaluation.ok && (!have_best_ || g > r_.best.evaluation.gflops)) {
        r_.best = s;
        have_best_ = true;
      }
      out.push_back(g);
      if (opt_.on_scored) opt_.on_scored(s);
      r_.history.push_back(std::move(s));
    }
    // Pruned ones after the last scored are handled too when everything run was scored.
    if (evals.size() == run.size())
      for (; next < n; ++next) out.push_back(kPruned);
    report();
    return out;
  }

  void note_pruned(const Candidate& c, const std::string& why) {
    ++r_.stats.pruned;
    if (r_.stats.pruned_first.size() < 5)
      r_.stats.pruned_first.push_back(
          {{"graph", graph::describe(c.graph)}, {"origin", c.origin}, {"reason", why}});
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

  // One structure of a wave: its grid, the points scored and their scores.
  struct Visit {
    graph::Graph structure;
    std::string origin, id;
    std::vector<Slot> slots;
    std::vector<std::vector<std::int64_t>> points;  // coarse points left to score
    std::set<std::vector<std::int64_t>> done;
    std::vector<std::vector<double>> xs;
    std::vector<double> ys;
    double best = 0;
    bool scored = false;  // one of its candidates ran (pruned ones are never designed)
    std::optional<Annealer> ann;
  };

  // Levels 2 and 3 for a wave of structures; returns each one's best score (0 when nothing
  // worked). `own`: each one's score at its own parameters when already scored (seeds), else NaN.
  // One structure: its coarse grid in batches, in random order, until its annealer freezes.
  // Several (a measuring search): all their coarse grids in one batch, then all their fine
  // points in another, so the evaluator prepares candidates of every structure while it
  // measures; structure by structure, its preparing threads would idle between small batches.
  std::vector<double> search_structures(const std::vector<graph::Graph>& structures,
                                        const std::vector<std::string>& origins,
                                        const std::vector<double>& own) {
    std::vector<Visit> wave(structures.size());
    for (std::size_t w = 0; w < wave.size(); ++w) {
      Visit& v = wave[w];
      v.structure = structures[w];
      v.origin = origins[w];
      v.slots = tunable_slots(v.structure, space_);
      v.id = graph_hash(v.structure);
      // The structure's own parameters go first (a seed's are the known format's).
      v.points = grid_points(v.slots, false, space_.max_coarse_points, rng_);
      v.ann.emplace(space_.parameters, rng_());
      if (std::isnan(own[w])) {
        v.points.insert(v.points.begin(), std::vector<std::int64_t>(v.slots.size(), -1));
      } else {
        const auto p = current_values(v.structure, v.slots);
        v.done.insert(p);
        v.best = own[w];
        v.scored = true;
        if (!v.slots.empty()) v.xs.push_back(to_doubles(p)), v.ys.push_back(own[w]);
        v.ann->offer(own[w]);
      }
    }
    const std::size_t quota =
        wave.size() == 1 ? static_cast<std::size_t>(opt_.batch) : space_.max_coarse_points + 1;
    // Every return: counts the structures that had a candidate scored, gives each one's best.
    const auto finish = [&] {
      std::vector<double> b;
      for (const auto& v : wave) {
        b.push_back(v.best);
        r_.stats.structures += v.scored;
      }
      return b;
    };

    // Level 2: the coarse grids.
    for (std::vector<std::size_t> next(wave.size(), 0);;) {
      std::vector<Candidate> batch;
      std::vector<std::size_t> owner;
      for (std::size_t w = 0; w < wave.size(); ++w) {
        Visit& v = wave[w];
        for (std::size_t taken = 0; next[w] < v.points.size() && taken < quota && !v.ann->frozen();
             ++next[w]) {
          const auto& pt = v.points[next[w]];
          if (!v.done.insert(pt).second) continue;
          const bool is_own = !pt.empty() && pt[0] == -1;
          Candidate c;
          c.graph = is_own ? v.structure : with_point(v.structure, v.slots, pt, a_);
          c.structure = v.id;
          c.point = is_own ? current_values(v.structure, v.slots) : pt;
          c.origin = v.origin;
          c.level = 2;
          batch.push_back(std::move(c));
          owner.push_back(w);
          ++taken;
        }
      }
      if (batch.empty()) break;
      std::vector<std::vector<std::int64_t>> pts;
      for (const auto& c : batch) pts.push_back(c.point);
      const auto scores = score(std::move(batch));
      for (std::size_t k = 0; k < scores.size(); ++k) {
        Visit& v = wave[owner[k]];
        v.done.insert(pts[k]);
        if (std::isnan(scores[k])) continue;  // pruned: never designed
        v.scored = true;
        v.best = std::max(v.best, scores[k]);
        if (!v.slots.empty()) v.xs.push_back(to_doubles(pts[k])), v.ys.push_back(scores[k]);
        v.ann->offer(scores[k]);
      }
      if (scores.size() < pts.size()) return finish();  // a limit was reached
    }

    // Level 3: interpolate each grid to the fine one, score only the predicted best points.
    std::vector<Candidate> batch;
    std::vector<std::size_t> owner;
    for (std::size_t w = 0; w < wave.size() && !should_stop(); ++w) {
      Visit& v = wave[w];
      if (v.slots.empty() || space_.fine_measured <= 0 || v.xs.size() < 3) continue;
      models::XgbRegressor model({60, 4, 0.3, 1.0, opt_.seed, 1});
      model.fit(v.xs, v.ys);
      ++r_.stats.model_fits;
      auto fine = grid_points(v.slots, true, space_.max_fine_points, rng_);
      fine.erase(std::remove_if(fine.begin(), fine.end(),
                                [&](const auto& p) { return v.done.count(p) != 0; }),
                 fine.end());
      if (fine.empty()) continue;
      std::vector<std::vector<double>> fx;
      for (const auto& p : fine) fx.push_back(to_doubles(p));
      const auto pred = model.predict(fx);
      std::vector<std::size_t> order(fine.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t x, std::size_t y) { return pred[x] > pred[y]; });
      for (std::size_t k = 0;
           k < order.size() && k < static_cast<std::size_t>(space_.fine_measured); ++k) {
        Candidate c;
        c.graph = with_point(v.structure, v.slots, fine[order[k]], a_);
        c.structure = v.id;
        c.point = fine[order[k]];
        c.origin = v.origin;
        c.level = 3;
        c.graph.name = "search";
        batch.push_back(std::move(c));
        owner.push_back(w);
      }
    }
    if (batch.empty()) return finish();
    std::vector<double> coarse_best;
    for (const auto& v : wave) coarse_best.push_back(v.best);
    const auto scores = score(std::move(batch));
    for (std::size_t k = 0; k < scores.size(); ++k) {
      if (std::isnan(scores[k])) continue;
      Visit& v = wave[owner[k]];
      if (scores[k] > coarse_best[owner[k]]) ++r_.stats.fine_improved;
      v.best = std::max(v.best, scores[k]);
    }
    return finish();
  }

  // Structures scored together: as many as the evaluator's batch where candidates are measured
  // (each wave's two batches end with the preparing threads idle until the next one starts).
  std::size_t wave_size() const {
    return eval_.measures() ? static_cast<std::size_t>(std::max(1, opt_.batch)) : 1;
  }

  // The structure cap (space.json's max_structures) ends a search, except a measuring one with
  // time left that has not measured min_candidates yet: those go on to the budget.
  bool structures_left() const {
    if (r_.stats.structures < space_.max_structures) return true;
    return eval_.measures() && opt_.budget_s > 0 && r_.stats.candidates < space_.min_candidates;
  }

  // The seeds the pruning rules allow and that are not bound to fail, as level-2 candidates of
  // their own parameters, ordered by predicted time (predicted failures last; ties: fewer
  // operators, then fewer bytes, i.e. cheaper to design, then file order).
  std::vector<Candidate> ordered_seeds(const std::vector<graph::Graph>& seeds,
                                       std::set<std::string>& seen) {
    std::vector<Candidate> cands;
    std::vector<bool> pinned;
    for (const auto& g : seeds) {
      const bool pin = static_cast<int>(&g - seeds.data()) < opt_.pinned_seeds;
      bool allowed = true;
      std::vector<std::string> before;
      for (const auto& op : operator_names(g)) {
        allowed = allowed && prune_.allows(op, before);
        before.push_back(op);
      }
      if (!allowed || !seen.insert(graph_key(g)).second) continue;
      Candidate c;
      c.graph = g;
      c.structure = graph_hash(g);
      c.origin = "seed:" + g.name;
      c.level = 2;
      if (const auto why = bound_to_fail(g, shape_); !why.empty()) {
        note_pruned(c, why);
        continue;
      }
      cands.push_back(std::move(c));
      pinned.push_back(pin);
    }
    if (cands.empty()) return cands;
    Evaluator* pred = opt_.predictor;
    if (!pred && !eval_.measures()) pred = &eval_;
    if (!pred) {
      model_ =
          std::make_unique<CostModelEvaluator>(a_, opt_.dtype, models::DeviceSpec{}, opt_.spmm_n);
      pred = model_.get();
    }
    reuse_predictions_ = pred == &eval_;
    const auto p = pred->evaluate(cands);
    std::vector<std::size_t> order(cands.size());
    std::vector<double> bytes(cands.size(), 0.0);
    std::vector<std::size_t> ops(cands.size(), 0);
    for (std::size_t k = 0; k < order.size(); ++k) {
      order[k] = k;
      ops[k] = operator_names(cands[k].graph).size();
      if (k < p.size()) bytes[k] = p[k].detail.value("model_bytes", 0.0);
    }
    auto ok = [&](std::size_t k) { return k < p.size() && p[k].ok; };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      if (pinned[x] != pinned[y]) return static_cast<bool>(pinned[x]);
      if (pinned[x]) return x < y;
      if (ok(x) != ok(y)) return ok(x);
      if (ok(x) && p[x].time_us != p[y].time_us) return p[x].time_us < p[y].time_us;
      if (ops[x] != ops[y]) return ops[x] < ops[y];
      return bytes[x] < bytes[y];
    });
    std::vector<Candidate> out;
    seed_predictions_.clear();
    for (std::size_t k : order) {
      r_.stats.seed_order.push_back(
          {{"seed", cands[k].graph.name},
           {"predicted_us", ok(k) ? nlohmann::json(p[k].time_us) : nlohmann::json(nullptr)}});
      if (k < p.size()) seed_predictions_.push_back(p[k]);
      if (ok(k)) {
        // predicted_us stays the cost model's time (the report plots it against the measured
        // one); a learned ranking's time goes beside it.
        cands[k].predicted_us = p[k].detail.value("cost_model_us", p[k].time_us);
        if (p[k].detail.contains("learned_us")) cands[k].learned_us = p[k].time_us;
      }
      out.push_back(std::move(cands[k]));
    }
    return out;
  }

  SearchResult run(const std::vector<graph::Graph>& seeds, const graph::Graph& baseline) {
    r_.stats.banned = prune_.banned;
    r_.stats.rules_applied = prune_.applied;
    std::set<std::string> seen;
    // The reference point: CSR-vector exactly as the known format has it, scored whatever the
    // limits (without it there may be no answer at all).
    {
      std::vector<Candidate> c(1);
      c[0].graph = baseline;
      c[0].structure = graph_hash(baseline);
      c[0].origin = "baseline";
      c[0].level = 2;
      seen.insert(graph_key(baseline));
      record(c, {0}, eval_.evaluate(c), 1);
      if (!r_.history.empty()) r_.baseline = r_.history.front();
    }
    Annealer ann(space_.structures, rng_());
    graph::Graph current, best_structure;
    bool have_current = false;
    double best_score = -1;
    // Searches a wave of structures and offers each one's best to the structure annealer.
    auto visit = [&](const std::vector<graph::Graph>& gs, const std::vector<std::string>& origins,
                     const std::vector<double>& own) {
      const auto scores = search_structures(gs, origins, own);
      for (std::size_t k = 0; k < scores.size(); ++k) {
        if (ann.offer(scores[k]) || !have_current) current = gs[k], have_current = true;
        if (scores[k] > best_score) best_score = scores[k], best_structure = gs[k];
      }
    };
    // Level 1 starts with the known formats the rules allow, each at its own parameters, then
    // explores their grids in the same order, then grown structures.
    std::vector<Candidate> ordered;
    if (!should_stop()) ordered = ordered_seeds(seeds, seen);
    std::vector<double> own;
    if (!ordered.empty() && !should_stop()) {
      if (reuse_predictions_) {
        std::vector<std::size_t> at(ordered.size());
        std::size_t n = ordered.size();
        if (opt_.max_candidates > 0)
          n = std::min<std::size_t>(n, std::max(0, opt_.max_candidates - r_.stats.candidates));
        for (std::size_t k = 0; k < at.size(); ++k) at[k] = k;
        auto run = ordered;
        run.resize(n);
        at.resize(n);
        std::vector<Evaluation> ev(seed_predictions_.begin(), seed_predictions_.begin() + n);
        own = record(run, at, ev, n);
      } else {
        own = score(ordered);
      }
    }
    const std::size_t per_wave = wave_size();
    for (std::size_t k = 0; k < own.size() && !should_stop(); k += per_wave) {
      std::vector<graph::Graph> gs;
      std::vector<std::string> origins;
      const std::size_t end = std::min(own.size(), k + per_wave);
      for (std::size_t j = k; j < end; ++j)
        gs.push_back(ordered[j].graph), origins.push_back(ordered[j].origin);
      visit(gs, origins, std::vector<double>(own.begin() + k, own.begin() + end));
    }
    int misses = 0;
    while (!should_stop() && structures_left()) {
      if (ann.frozen()) {
        // Measured candidates are what a budget buys: while few were measured and time is
        // left, cool again from the best structure found instead of stopping.
        const bool reheat = eval_.measures() && opt_.budget_s > 0 &&
                            r_.stats.candidates < space_.min_candidates && have_current;
        if (!reheat) {
          r_.stats.stopped_by = "annealing";
          break;
        }
        ann = Annealer(space_.structures, rng_());
        current = best_structure;
        ++r_.stats.reheats;
      }
      std::vector<graph::Graph> gs;
      while (gs.size() < per_wave && misses <= 64) {
        const bool mutate = have_current && std::bernoulli_distribution(0.5)(rng_);
        graph::Graph g =
            grow_structure(rng_, space_, prune_, mutate ? &current : nullptr, 64, baseline.op);
        if (!seen.insert(graph_key(g)).second) {
          ++misses;
          continue;
        }
        misses = 0;
        gs.push_back(std::move(g));
      }
      if (gs.empty()) break;  // the allowed space is exhausted
      visit(gs, std::vector<std::string>(gs.size(), "grown"),
            std::vector<double>(gs.size(), kPruned));
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
      v.push_back(p.is_boolean()          ? std::int64_t{p.get<bool>()}
                  : p.is_number_integer() ? p.get<std::int64_t>()
                                          : -1);
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
  MatrixShape shape_;
  std::unique_ptr<CostModelEvaluator> model_;  // orders the seeds when the evaluator measures
  bool reuse_predictions_ = false;
  std::vector<Evaluation> seed_predictions_;  // in the seeds' order
  SearchResult r_;
  bool have_best_ = false;
};

}  // namespace

nlohmann::json SearchStats::to_json() const {
  return {{"structures", structures},
          {"candidates", candidates},
          {"failures", failure_log.to_json()},
          {"pruned", {{"total", pruned}, {"first", pruned_first}}},
          {"seed_order", seed_order},
          {"coarse_candidates", coarse},
          {"fine_candidates", fine},
          {"fine_improved", fine_improved},
          {"model_fits", model_fits},
          {"reheats", reheats},
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
