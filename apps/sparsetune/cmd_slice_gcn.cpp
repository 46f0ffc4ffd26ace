// `sparsetune slice-gcn collect T.tns... -o T.csv` times sampled slices in every slice format on
// the GPU; `slice-gcn train --timings T.csv -o MODEL` labels slices from those times, trains
// Slice-GCN and reports held-out accuracy beside XGBoost's; `slice-gcn sp` re-derives stage 1's
// threshold from them; `slice-gcn merge` makes one label file of several collections.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "cli.hpp"
#include "graph/sptv_graph.hpp"
#include "io/file_bytes.hpp"
#include "io/slice_source.hpp"
#include "models/slice_training.hpp"
#include "search/slice_timings.hpp"
#include "search/sptv_tune.hpp"

namespace sparsetune::cli {

namespace {

// The folder a timings CSV names its tensors relative to.
std::string timings_dir(const std::string& timings) {
  const auto dir = std::filesystem::path(timings).parent_path().string();
  return dir.empty() ? "." : dir;
}

// "71.2 % / 88.6 % / 1.031x"
std::string time_line(const models::SliceTrainingReport::ByTime& b) {
  return fixed(100 * b.fastest, 1) + " % / " + fixed(100 * b.within_5pct, 1) + " % / " +
         fixed(b.slowdown, 3) + "x";
}

// The folder a timings CSV names its tensors from.
std::filesystem::path csv_folder(const std::string& csv) {
  return std::filesystem::absolute(csv).lexically_normal().parent_path();
}

// A tensor's name in a timings CSV of `folder`: relative to it, as train and sp look tensors up;
// lexically, so that a tensor linked into the folder is named by its link, not by where the link
// points.
std::string csv_name(const std::filesystem::path& folder, const std::filesystem::path& tensor) {
  return std::filesystem::absolute(tensor).lexically_normal().lexically_relative(folder).string();
}

// Labels measured on the GPU: every tensor, every mode asked, sampled slices in all formats.
void add_slice_gcn_collect(CLI::App& cmd, const GlobalOptions& g) {
  auto* c = cmd.add_subcommand(
      "collect", "Time sampled slices of tensors in each of the five slice formats on the GPU");
  struct Options {
    std::vector<std::string> tensors;
    std::string out;
    int mode = -1;
    search::SliceTimingOptions t;
  };
  auto o = std::make_shared<Options>();
  c->add_option("tensors", o->tensors,
                "Tensors (.tns, .tns.gz, .safetensors), and matrices (.mtx, .mtx.gz, "
                ".safetensors), each matrix one slice")
      ->required();
  c->add_option("-o,--out", o->out, "The CSV written (tensor,mode,slice,format,time_us)")
      ->required();
  c->add_option("--mode", o->mode, "The mode multiplied by v; -1: every mode")
      ->capture_default_str();
  c->add_option("--max-slices", o->t.max_slices, "Slices sampled per tensor and mode")
      ->capture_default_str();
  c->add_option("--min-nnz", o->t.min_nnz, "Smaller slices are not sampled")->capture_default_str();
  c->add_option("--target-rows", o->t.target_rows, "Fibers a slice's copies aim for")
      ->capture_default_str();
  c->add_option("--max-copies", o->t.max_copies, "Copies of a slice at most")
      ->capture_default_str();
  c->add_option("--slice-entries", o->t.slice_entries, "Entries of a slice's copies at most")
      ->capture_default_str();
  c->add_option("--slice-dense", o->t.slice_dense,
                "Dense values of a slice's copies at most; larger slices are not timed as Dense")
      ->capture_default_str();
  c->add_option("--design-entries", o->t.design_entries,
                "Entries of one design: the sampled slices are timed in batches of this size")
      ->capture_default_str();
  c->add_option("--dtype", o->t.dtype, "f32 or f64")->capture_default_str();
  c->add_option("--runs", o->t.runs, "Timed runs per slice and format")->capture_default_str();
  c->callback([o, &g] {
    const auto out_dir = csv_folder(o->out);
    std::vector<models::SliceTiming> all;
    std::vector<std::vector<std::string>> rows = {{"tensor", "mode", "slices", "records", "notes"}};
    nlohmann::json runs = nlohmann::json::array();
    std::string device;
    std::vector<std::string> unread;  // errors of the files that could not be read
    if (o->mode >= 0 && o->mode != io::kMatrixSliceMode)
      for (const auto& path : o->tensors)
        if (io::is_matrix_source(path))
          throw Error(path + ": a matrix is one slice, timed along mode " +
                      std::to_string(io::kMatrixSliceMode) + " only (got --mode " +
                      std::to_string(o->mode) + ")");
    for (const auto& path : o->tensors) {
      // Read once for all its modes; a file that cannot be read is reported, and the others
      // are still timed.
      io::SliceSource source;
      try {
        source = io::read_slice_source(path);
      } catch (const Error& e) {
        rows.push_back({path, "-", "0", "0", e.what()});
        runs.push_back({{"tensor", path}, {"error", e.what()}});
        unread.push_back(e.what());
        continue;
      }
      const SparseTensor& tensor = source.tensor;
      int first = o->mode < 0 ? 0 : o->mode, last = o->mode < 0 ? tensor.order() - 1 : o->mode;
      if (source.matrix) first = last = io::kMatrixSliceMode;
      for (int k = first; k <= last; ++k) {
        auto t = o->t;
        t.tensor = path;
        t.mode = k;
        t.label = csv_name(out_dir, path);
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = search::time_slices(tensor, t);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        device = r.device;
        std::set<std::int64_t> slices;
        for (const auto& x : r.records) slices.insert(x.slice);
        all.insert(all.end(), r.records.begin(), r.records.end());
        std::string notes;
        for (const auto& n : r.notes) notes += (notes.empty() ? "" : "; ") + n.get<std::string>();
        // The CSV so far, after every tensor and mode: a collection cut short keeps what it
        // measured.
        io::write_file_atomic(o->out,
                              "# measured on " + device + "\n" + search::slice_timings_csv(all));
        rows.push_back({path, std::to_string(k), std::to_string(slices.size()),
                        std::to_string(r.records.size()), notes.empty() ? "-" : notes});
        runs.push_back({{"tensor", path},
                        {"mode", k},
                        {"slices", slices.size()},
                        {"records", r.records.size()},
                        {"seconds", seconds},
                        {"notes", r.notes}});
      }
    }
    if (g.json)
      print_json({{"device", device}, {"runs", runs}, {"wrote", o->out}});
    else
      print_table(rows);
    if (!unread.empty())
      throw Error("slice-gcn collect: " + std::to_string(unread.size()) + " of " +
                  std::to_string(o->tensors.size()) +
                  " files could not be read (the others were timed): " + unread.front());
  });
}

}  // namespace

void add_slice_gcn_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand("slice-gcn", "Slice-GCN, the SpTV slice format classifier");
  cmd->require_subcommand(1);
  add_slice_gcn_collect(*cmd, g);
  auto* train = cmd->add_subcommand(
      "train", "Train from per-slice timings (CSV: tensor,mode,slice,format,time_us)");
  struct Options {
    std::string timings, out, arch = "sm_90", notes, holdout_like;
    double tie_tolerance = 0;
    models::SliceTrainingOptions t;
  };
  auto o = std::make_shared<Options>();
  train->add_option("--timings", o->timings, "Per-slice, per-format times measured on the GPU")
      ->required();
  train
      ->add_option("-o,--out", o->out,
                   "Model file (e.g. configs/models/sm_90/slice_gcn.safetensors)")
      ->required();
  train->add_option("--arch", o->arch, "Architecture the timings were measured on (sm_NN)")
      ->check([](const std::string& a) {
        const bool ok = a.size() >= 4 && a.rfind("sm_", 0) == 0 &&
                        a.find_first_not_of("0123456789", 3) == std::string::npos;
        return ok ? std::string() : "'" + a + "' is not an architecture such as sm_90";
      })
      ->capture_default_str();
  train->add_option("--epochs", o->t.train.epochs, "Training epochs")->capture_default_str();
  train
      ->add_flag("--sum-aggregation", o->t.shape.sum_aggregation,
                 "GraphConv sums its neighbours (PyTorch Geometric's layer) instead of averaging")
      ->capture_default_str();
  train->add_flag_callback(
      "--fiber-globals", [o] { o->t.shape.globals = features::kAllGlobals; },
      "Add the 5 features of the slice's non-empty fibers to the paper's 9 globals (the model "
      "and XGBoost both read them)");
  train->add_flag_callback(
      "--degree-buckets", [o] { o->t.shape.node_features = models::kGcnNodeFeaturesWithBuckets; },
      "Give each node its degree's power-of-two bucket (1, 2, 3-4, ..., 65 and more) after the "
      "4 node features");
  train
      ->add_option("--global-bins", o->t.shape.global_bins,
                   "Each global also enters piecewise-linearly over this many bins, their "
                   "edges the training slices' quantiles (0: standardized alone)")
      ->check(CLI::Range(0, models::kMaxGlobalBins))
      ->capture_default_str();
  train->add_option("--learning-rate", o->t.train.learning_rate, "Adam's step")
      ->capture_default_str();
  train
      ->add_option("--average-last", o->t.train.average_last,
                   "The model is the mean of its weights over this many last epochs (0: the "
                   "last epoch's)")
      ->check(kNonNegative)
      ->capture_default_str();
  train
      ->add_option("--weight-decay", o->t.train.weight_decay,
                   "Decoupled weight decay per step, times the learning rate (AdamW)")
      ->check(kNonNegative)
      ->capture_default_str();
  train
      ->add_option("--soft-labels", o->t.soft_labels,
                   "Learn from the measured times: a format slower than the fastest by a share "
                   "r gets the weight exp(-ln(1 + r) / THIS) (0: the label alone)")
      ->check(kNonNegative)
      ->capture_default_str();
  auto* folds = train
                    ->add_option("--folds", o->t.folds,
                                 "Cross-validation: cut the shuffled slices into this many parts "
                                 "and hold out the one --fold names")
                    ->check(CLI::Range(2, 100));
  train->add_option("--fold", o->t.fold, "The part held out (0-based), with --folds")
      ->needs(folds)
      ->capture_default_str();
  train->add_option("--holdout", o->t.holdout, "Share of slices held out for testing")
      ->capture_default_str();
  train
      ->add_option("--sp", o->t.sparsity_threshold,
                   "Stage 1's threshold: slices at least this dense are left out")
      ->capture_default_str();
  train->add_option("--seed", o->t.seed, "Seed of the weights and the split")
      ->capture_default_str();
  train
      ->add_option("--bag", o->t.bag,
                   "Train this many networks under the seeds SEED, SEED+1, ... on the same "
                   "slices; the model averages their probabilities")
      ->check(CLI::Range(1, models::SliceGcn::kMaxBag))
      ->capture_default_str();
  train
      ->add_option("--threads", o->t.train.threads,
                   "Threads sharing each batch (0: every core; the model is the same)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  train
      ->add_option("--tie-tolerance", o->tie_tolerance,
                   "Formats within this share of the fastest are tied; the label is the "
                   "lowest-numbered of them (CSR, COO, ELL, HYB, Dense)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  train->add_option("--notes", o->notes, "Stored with the model");
  train
      ->add_option("--holdout-like", o->holdout_like,
                   "Hold out exactly the slices this model file held out (instead of --holdout): "
                   "trainings compared on one split")
      ->check(CLI::ExistingFile)
      ->excludes(folds);
  train->callback([o, &g] {
    const auto labels = models::read_slice_labels(o->timings, o->tie_tolerance);
    models::SliceGcn model;
    o->t.train.seed = o->t.seed;
    if (!o->holdout_like.empty()) {
      models::GcnModelInfo like;
      models::SliceGcn::load(o->holdout_like, &like);
      if (like.test_slices.empty())
        throw Error("slice-gcn train --holdout-like: " + o->holdout_like +
                    " lists no held-out slices");
      o->t.test_keys = like.test_slices;
    }
    const auto r = models::train_slice_gcn(labels, timings_dir(o->timings), o->t, model);
    models::GcnModelInfo info;
    info.arch = o->arch;
    info.labels = "gpu";
    info.sparsity_threshold = o->t.sparsity_threshold;
    info.notes = o->notes;
    info.test_slices = r.test_keys;
    const std::time_t now = std::time(nullptr);
    char day[16];
    std::strftime(day, sizeof day, "%Y-%m-%d", std::gmtime(&now));
    info.date = day;
    model.save(o->out, info);
    const nlohmann::json j = {{"labelled", r.labelled},
                              {"tie_tolerance", o->tie_tolerance},
                              {"gcn_test_by_time", models::to_json(r.gcn_test_time)},
                              {"xgb_test_by_time", models::to_json(r.xgb_test_time)},
                              {"rule_test_by_time", models::to_json(r.rule_test_time)},
                              {"dense_excluded", r.dense_excluded},
                              {"train", r.train},
                              {"test", r.test},
                              {"per_class", r.per_class},
                              {"final_loss", r.losses.empty() ? 0.0 : r.losses.back()},
                              {"gcn_train_accuracy", r.gcn_train_accuracy},
                              {"gcn_test_accuracy", r.gcn_test_accuracy},
                              {"xgb_test_accuracy", r.xgb_test_accuracy},
                              {"globals", o->t.shape.globals},
                              {"global_bins", o->t.shape.global_bins},
                              {"bag", o->t.bag},
                              {"rule_test_accuracy", r.rule_test_accuracy},
                              {"model", o->out}};
    if (g.json) return print_json(j);
    print_table(
        {{"slices", std::to_string(r.labelled) + " labelled, " + std::to_string(r.dense_excluded) +
                        " left to stage 1 (Dense), " + std::to_string(r.train) + " trained on, " +
                        std::to_string(r.test) + " held out"},
         {"loss", fixed(r.losses.front(), 3) + " -> " + fixed(r.losses.back(), 3)},
         {"Slice-GCN", fixed(100 * r.gcn_test_accuracy, 1) + " % held out (" +
                           fixed(100 * r.gcn_train_accuracy, 1) + " % trained on" +
                           (o->t.bag > 1 ? "; a bag of " + std::to_string(o->t.bag) : "") + ")"},
         {"XGBoost", fixed(100 * r.xgb_test_accuracy, 1) + " % held out (" +
                         std::to_string(o->t.shape.globals) + " globals)"},
         {"rule", fixed(100 * r.rule_test_accuracy, 1) + " % held out (the structural rule)"},
         {"by time",
          "held out, the pick is the fastest / within 5 % / time over the fastest: "
          "Slice-GCN " +
              time_line(r.gcn_test_time) + ", XGBoost " + time_line(r.xgb_test_time) + ", rule " +
              time_line(r.rule_test_time)},
         {"decided",
          "held out, of the " + std::to_string(r.gcn_test_time.decided) +
              " slices whose runner-up is >= 1 % slower, the pick is the fastest: Slice-GCN " +
              fixed(100 * r.gcn_test_time.decided_fastest, 1) + " %, XGBoost " +
              fixed(100 * r.xgb_test_time.decided_fastest, 1) + " %, rule " +
              fixed(100 * r.rule_test_time.decided_fastest, 1) + " %"},
         {"wrote", o->out}});
  });

  // A model scored on other labels: slices of other tensors, other samples, another GPU.
  auto* ev = cmd->add_subcommand(
      "eval", "Score a Slice-GCN model on per-slice timings (slices it may never have seen)");
  struct EvalOptions {
    std::string timings, model, exclude;
    double sp = 0.23;
    bool test_split = false;
  };
  auto eo = std::make_shared<EvalOptions>();
  ev->add_option("--timings", eo->timings, "Per-slice, per-format times measured on the GPU")
      ->required();
  ev->add_option("--model", eo->model, "The model file (default: the shipped sm_90 one)");
  ev->add_option("--exclude", eo->exclude,
                 "Timings whose slices are left out (e.g. the ones the model was trained on)");
  ev->add_flag("--test-split", eo->test_split,
               "Only the slices the model held out of its training, as its file lists them");
  ev->add_option("--sp", eo->sp,
                 "Stage 1's threshold: denser slices are left out (default: the model's)");
  ev->callback([eo, ev, &g] {
    models::GcnModelInfo info;
    const std::string path = eo->model.empty() ? search::default_slice_model("sm_90") : eo->model;
    const auto model = models::SliceGcn::load(path, &info);
    const double sp = ev->count("--sp") ? eo->sp : info.sparsity_threshold;
    auto labels = models::read_slice_labels(eo->timings);
    std::size_t excluded = 0;
    if (!eo->exclude.empty()) {
      std::set<std::tuple<std::string, int, std::int64_t>> seen;
      for (const auto& t : models::read_slice_timings(eo->exclude))
        seen.insert({t.tensor, t.mode, t.slice});
      const auto before = labels.size();
      labels.erase(std::remove_if(labels.begin(), labels.end(),
                                  [&](const models::SliceLabel& l) {
                                    return seen.count({l.tensor, l.mode, l.slice}) > 0;
                                  }),
                   labels.end());
      excluded = before - labels.size();
    }
    if (eo->test_split) {
      if (info.test_slices.empty())
        throw Error("slice-gcn eval --test-split: " + path + " lists no held-out slices");
      const std::set<std::string> test(info.test_slices.begin(), info.test_slices.end());
      const auto before = labels.size();
      labels.erase(
          std::remove_if(labels.begin(), labels.end(),
                         [&](const models::SliceLabel& l) {
                           return !test.count(models::slice_key(l.tensor, l.mode, l.slice));
                         }),
          labels.end());
      excluded += before - labels.size();
    }
    const auto r = models::evaluate_slice_gcn(labels, timings_dir(eo->timings), sp, model);
    if (r.slices.empty())
      throw Error("slice-gcn eval: no labelled slice to score in " + eo->timings +
                  (excluded > 0 ? " (" + std::to_string(excluded) + " left out)" : std::string()));
    if (g.json) {
      nlohmann::json slices = nlohmann::json::array();
      const auto name = [](int f) {
        return graph::slice_format_name(static_cast<graph::SliceFormat>(f));
      };
      for (const auto& v : r.slices)
        slices.push_back(
            {{"slice", models::slice_key(v.label->tensor, v.label->mode, v.label->slice)},
             {"label", name(v.label->format)},
             {"gcn", name(v.gcn)},
             {"rule", name(v.rule)},
             {"log_probs", v.log_probs}});
      return print_json({{"model", path},
                         {"labelled", r.labelled},
                         {"excluded", excluded},
                         {"dense_excluded", r.dense_excluded},
                         {"scored", r.scored},
                         {"gcn_accuracy", r.gcn_accuracy},
                         {"rule_accuracy", r.rule_accuracy},
                         {"gcn_by_time", models::to_json(r.gcn_time)},
                         {"rule_by_time", models::to_json(r.rule_time)},
                         {"slices", slices}});
    }
    print_table({{"slices", std::to_string(r.labelled) + " labelled (" + std::to_string(excluded) +
                                " more left out by --exclude or --test-split), " +
                                std::to_string(r.dense_excluded) + " left to stage 1 (Dense), " +
                                std::to_string(r.scored) + " scored"},
                 {"Slice-GCN", fixed(100 * r.gcn_accuracy, 1) +
                                   " % right; the pick is the fastest / "
                                   "within 5 % / time over the fastest: " +
                                   time_line(r.gcn_time)},
                 {"rule", fixed(100 * r.rule_accuracy, 1) + " % right; " + time_line(r.rule_time)},
                 {"model", path}});
  });

  // What the models read of each labelled slice, as a table.
  auto* feat = cmd->add_subcommand(
      "features", "Write each labelled slice's global features, label and measured times as CSV");
  struct FeatureOptions {
    std::string timings, out;
  };
  auto fo = std::make_shared<FeatureOptions>();
  feat->add_option("--timings", fo->timings, "Per-slice, per-format times measured on the GPU")
      ->required();
  feat->add_option("-o,--out", fo->out, "CSV file (default: standard output)");
  feat->callback([fo] {
    const auto labels = models::read_slice_labels(fo->timings);
    const auto csv = models::labelled_features_csv(labels, timings_dir(fo->timings));
    if (fo->out.empty()) return static_cast<void>(std::fwrite(csv.data(), 1, csv.size(), stdout));
    io::write_file_atomic(fo->out, csv);
  });

  // Several collections as one label file.
  auto* merge = cmd->add_subcommand(
      "merge",
      "Merge per-slice timings of several collections: the geometric mean per slice "
      "and format");
  struct MergeOptions {
    std::vector<std::string> inputs;
    std::string out;
  };
  auto mo = std::make_shared<MergeOptions>();
  merge->add_option("timings", mo->inputs, "CSVs written by slice-gcn collect")
      ->required()
      ->check(CLI::ExistingFile);
  merge->add_option("-o,--out", mo->out, "The merged CSV")->required();
  merge->callback([mo, &g] {
    const auto out_dir = csv_folder(mo->out);
    std::vector<std::vector<models::SliceTiming>> collections;
    for (const auto& path : mo->inputs) {
      auto records = models::read_slice_timings(path);
      // Names are relative to their CSV; the merged file names them relative to itself.
      const auto dir = csv_folder(path);
      for (auto& r : records) r.tensor = csv_name(out_dir, dir / r.tensor);
      collections.push_back(std::move(records));
    }
    const auto merged = models::merge_slice_timings(collections);
    if (merged.empty())
      throw Error("slice-gcn merge: no slice timing in " + std::to_string(mo->inputs.size()) +
                  " file(s); nothing written to " + mo->out);
    const auto labels = models::label_slices(merged);
    std::map<std::string, int> label_of;
    for (const auto& l : labels) label_of[models::slice_key(l.tensor, l.mode, l.slice)] = l.format;
    std::string names;
    for (const auto& p : mo->inputs) names += " " + std::filesystem::path(p).filename().string();
    io::write_file_atomic(mo->out,
                          "# geometric mean of" + names + "\n" + search::slice_timings_csv(merged));
    // How often each collection alone names the merged label: the collections' noise.
    nlohmann::json agree = nlohmann::json::array();
    std::vector<std::vector<std::string>> rows = {{"collection", "slices", "same label as merged"}};
    for (std::size_t i = 0; i < collections.size(); ++i) {
      int same = 0;
      const auto own = models::label_slices(collections[i]);
      for (const auto& l : own)
        same += label_of.at(models::slice_key(l.tensor, l.mode, l.slice)) == l.format;
      const double share = own.empty() ? 0.0 : static_cast<double>(same) / own.size();
      agree.push_back({{"timings", mo->inputs[i]}, {"slices", own.size()}, {"same_label", share}});
      rows.push_back({mo->inputs[i], std::to_string(own.size()), fixed(100 * share, 1) + " %"});
    }
    if (g.json)
      return print_json({{"slices", labels.size()},
                         {"records", merged.size()},
                         {"collections", agree},
                         {"wrote", mo->out}});
    rows.push_back({"merged", std::to_string(labels.size()), "wrote " + mo->out});
    print_table(rows);
  });

  // sp from measured best formats (§4.3).
  auto* sp = cmd->add_subcommand(
      "sp", "Re-derive stage 1's threshold sp from per-slice timings of slices of many densities");
  struct SpOptions {
    std::string timings;
    double step = 0.01;
  };
  auto so = std::make_shared<SpOptions>();
  sp->add_option("--timings", so->timings, "Per-slice, per-format times (Dense among them)")
      ->required();
  sp->add_option("--step", so->step, "Width of a density group")->capture_default_str();
  sp->callback([so, &g] {
    const auto labels = models::read_slice_labels(so->timings);
    const auto inputs = models::labelled_inputs(labels, timings_dir(so->timings));
    std::vector<double> density;
    std::vector<int> best;
    for (std::size_t i = 0; i < labels.size(); ++i)
      density.push_back(inputs[i].density), best.push_back(labels[i].format);
    const auto d = models::derive_sparsity_threshold(density, best, so->step);
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& x : d.groups)
      groups.push_back({{"density", x.density}, {"slices", x.slices}, {"dense_share", x.share}});
    const nlohmann::json threshold =
        std::isnan(d.threshold) ? nlohmann::json(nullptr) : nlohmann::json(d.threshold);
    if (g.json) return print_json({{"groups", groups}, {"sp", threshold}, {"paper_sp", 0.23}});
    std::vector<std::vector<std::string>> rows = {{"density", "slices", "Dense best"}};
    for (const auto& x : d.groups)
      rows.push_back(
          {fixed(x.density, 3), std::to_string(x.slices), fixed(100 * x.share, 1) + " %"});
    rows.push_back({"sp",
                    threshold.is_null() ? "none (the densest group is not all Dense)"
                                        : fixed(d.threshold, 3) + " (paper: 0.23)",
                    ""});
    print_table(rows);
  });
}

}  // namespace sparsetune::cli
