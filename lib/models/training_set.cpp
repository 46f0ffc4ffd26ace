#include "models/training_set.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "models/spmv_rank_features.hpp"

namespace sparsetune::models {

namespace {

nlohmann::json params_of(const db::Measurement& m) {
  nlohmann::json p = nlohmann::json::parse(m.params, nullptr, false);
  return p.is_object() ? p : nlohmann::json::object();
}

// A measured time of a correct operator graph of `op` (not a prediction, not a baseline, not a
// failure).
bool measured_graph(const db::Measurement& m, const std::string& op) {
  return m.ok && m.op == op && (op != "spmv" || m.n == 1) && m.time_us > 0 &&
         std::isfinite(m.time_us) && m.device != "cost-model" &&
         m.candidate.rfind("graph/", 0) == 0 && !params_of(m).value("predicted", false);
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

std::string text_hash(const std::string& text) {
  static const char* digits = "0123456789abcdef";
  const std::uint64_t v = fnv1a(text);
  std::string out;
  for (int s = 60; s >= 0; s -= 4) out += digits[(v >> s) & 15];
  return out;
}

namespace {

TrainingSet read_training_set(const db::TuningDb& db, const std::string& op,
                              const std::string& arch_in, bool allow_empty) {
  const auto all = db.measurements();
  std::string arch = arch_in;
  if (arch.empty()) {
    std::map<std::string, std::int64_t> per_arch;
    for (const auto& m : all)
      if (measured_graph(m, op)) ++per_arch[m.arch];
    if (per_arch.size() > 1) {
      std::string list;
      for (const auto& [a, n] : per_arch) list += (list.empty() ? "" : ", ") + a;
      throw Error(db.path() + ": measurements of several architectures (" + list +
                  "): say which with --arch");
    }
    if (!per_arch.empty()) arch = per_arch.begin()->first;
  }

  std::map<std::string, db::MatrixRow> matrices;
  for (auto& m : db.matrices()) matrices[m.fingerprint] = std::move(m);
  std::map<std::string, std::string> family;  // newest run's family per matrix
  for (const auto& r : db.runs())
    if (!r.family.empty()) family[r.fingerprint] = r.family;

  // (fingerprint, dtype, device, n) -> candidate -> (log times, the row)
  using Key = std::tuple<std::string, std::string, std::string, std::int64_t>;
  struct Acc {
    std::vector<double> logs;
    const db::Measurement* row = nullptr;
    double cost_model_us = -1;
  };
  std::map<Key, std::map<std::string, Acc>> groups;
  for (const auto& m : all) {
    if (!measured_graph(m, op) || m.arch != arch) continue;
    auto& a = groups[{m.fingerprint, m.dtype, m.device, m.n}][m.candidate];
    a.logs.push_back(std::log(m.time_us));
    if (!a.row) a.row = &m;
    const auto p = params_of(m);
    if (p.contains("predicted_us") && p["predicted_us"].is_number())
      a.cost_model_us = p["predicted_us"].get<double>();
  }

  TrainingSet t;
  t.arch = arch;
  for (auto& [key, cands] : groups) {
    const auto& [fp, dtype, device, n] = key;
    const auto it = matrices.find(fp);
    if (it == matrices.end()) {
      t.skipped.push_back({{"matrix", fp}, {"reason", "no matrix row"}});
      continue;
    }
    MatrixSet s;
    s.fingerprint = fp;
    s.matrix = it->second.name;
    s.name = op == "spmv" ? s.matrix : s.matrix + " n=" + std::to_string(n);
    s.n = n;
    s.dtype = dtype;
    s.device = device;
    s.rows = it->second.rows;
    s.cols = it->second.cols;
    s.nnz = it->second.nnz;
    s.family = family.count(fp) ? family[fp] : "";
    s.features = nlohmann::json::parse(it->second.features, nullptr, false);
    try {
      spmv_rank_matrix_part(s.features, dtype, s.name);  // every feature the model reads is there
    } catch (const Error& e) {
      t.skipped.push_back({{"matrix", s.name}, {"reason", e.what()}});
      continue;
    }
    for (auto& [cand, a] : cands) {
      Sample x;
      x.candidate = cand;
      try {
        x.graph = graph::graph_from_json(nlohmann::json::parse(a.row->graph), cand);
      } catch (const std::exception& e) {
        t.skipped.push_back({{"matrix", s.name}, {"candidate", cand}, {"reason", e.what()}});
        continue;
      }
      double sum = 0;
      for (double l : a.logs) sum += l;
      x.time_us = std::exp(sum / static_cast<double>(a.logs.size()));
      x.cost_model_us = a.cost_model_us;
      s.samples.push_back(std::move(x));
    }
    if (s.samples.empty()) continue;
    for (std::size_t k = 1; k < s.samples.size(); ++k)
      if (s.samples[k].time_us < s.samples[s.oracle].time_us) s.oracle = k;
    t.matrices.push_back(std::move(s));
  }
  if (t.matrices.empty() && !allow_empty)
    throw Error(db.path() + ": no measured " + (op == "spmv" ? "SpMV" : "SpMM") +
                " operator graph" + (arch.empty() ? std::string() : " of " + arch) +
                " with its matrix's features: nothing to train on (collect measures a corpus)");
  std::stable_sort(t.matrices.begin(), t.matrices.end(), [](const auto& x, const auto& y) {
    return std::tie(x.name, x.fingerprint, x.n, x.dtype, x.device) <
           std::tie(y.name, y.fingerprint, y.n, y.dtype, y.device);
  });
  std::string identity;
  char num[64];
  for (const auto& s : t.matrices) {
    if (std::find(t.devices.begin(), t.devices.end(), s.device) == t.devices.end())
      t.devices.push_back(s.device);
    for (const auto& x : s.samples) {
      std::snprintf(num, sizeof num, "%.6g", x.time_us);
      identity += s.fingerprint + '|' + s.dtype + '|' + s.device + '|' +
                  (op == "spmv" ? "" : std::to_string(s.n) + '|') + x.candidate + '|' + num + '\n';
      ++t.rows;
    }
  }
  t.fingerprint = "fnv1a-" + text_hash(identity);
  return t;
}

}  // namespace

TrainingSet read_spmv_training_set(const db::TuningDb& db, const std::string& arch,
                                   bool allow_empty) {
  return read_training_set(db, "spmv", arch, allow_empty);
}

TrainingSet read_spmm_training_set(const db::TuningDb& db, const std::string& arch,
                                   bool allow_empty) {
  return read_training_set(db, "spmm", arch, allow_empty);
}

}  // namespace sparsetune::models
