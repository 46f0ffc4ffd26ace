#include "report/report.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/version.hpp"
#include "db/db_export.hpp"
#include "graph/graph.hpp"
#include "io/file_bytes.hpp"
#include "io/staged_folder.hpp"
#include "report/rows.hpp"

namespace sparsetune::report {

namespace {

using nlohmann::json;

// A known format's name ("seed:ell" -> "ell"), else the structure's hash, short.
std::string structure_of(const json& params, const std::string& candidate) {
  const std::string origin = params.value("origin", "");
  if (origin.rfind("seed:", 0) == 0) return origin.substr(5);
  if (origin == "baseline") return "csr-vector";
  std::string h = params.value("structure", "");
  if (h.empty()) h = candidate.substr(candidate.find('/') + 1);
  return "grown:" + h.substr(0, 8);
}

std::string describe_graph(const std::string& text) {
  try {
    return graph::describe(graph::graph_from_json(json::parse(text), "tuning database"));
  } catch (const std::exception&) {
    return "(graph not readable)";
  }
}

std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string csv_number(const std::optional<double>& v) { return v ? csv_number(*v) : ""; }

std::string python_program(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* p = std::getenv("SPARSETUNE_PYTHON"); p && *p) return p;
  // Debian's interpreter is the one python3-matplotlib installs into.
  if (::access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

// Runs `python script dir`; the renderer prints its own errors on stderr.
void run_renderer(const std::string& python, const std::string& script, const std::string& dir) {
  std::vector<std::string> args = {python, script, dir};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw Error(std::string("report: cannot start ") + python + ": " + std::strerror(errno));
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "report: cannot run %s: %s\n", python.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
    throw Error("report: python3-matplotlib is not installed for " + python +
                " (scripts/setup.sh installs it; --no-plots writes the CSV files only)");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw Error("report: " + python + " was not found (set SPARSETUNE_PYTHON, or --no-plots)");
  throw Error("report: the plot script failed (" +
              (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                 : "signal " + std::to_string(WTERMSIG(status))) +
              "); nothing was written");
}

}  // namespace

ReportData collect(const db::TuningDb& db) {
  ReportData d;
  std::map<std::string, db::MatrixRow> matrices;
  for (auto& m : db.matrices()) matrices[m.fingerprint] = m;

  // Newest search per key, and each matrix's family (the newest one given).
  std::map<RowKey, db::Run> searches;
  std::map<std::string, std::string> family;
  std::map<std::string, double> peak;  // per device
  for (const auto& r : db.runs()) {
    if (!r.from_database) searches[key_of(r)] = r;
    if (!r.family.empty()) family[r.fingerprint] = r.family;
    if (r.peak_gbs > 0) peak[r.device] = r.peak_gbs;
  }

  struct Acc {
    const db::Measurement* best = nullptr;
    const db::Measurement* baseline = nullptr;
    std::set<std::string> structures;
    std::int64_t candidates = 0, failures = 0;
  };
  const auto all = db.measurements();
  std::map<RowKey, Acc> acc;
  for (const auto& m : all) {
    const bool is_graph = m.candidate.rfind("graph/", 0) == 0;
    const bool is_cusparse = m.candidate.rfind("cusparse/", 0) == 0;
    if (!is_graph && !is_cusparse) continue;
    auto& a = acc[key_of(m)];
    if (is_cusparse) {
      if (m.ok && m.time_us > 0 && (!a.baseline || m.time_us < a.baseline->time_us))
        a.baseline = &m;
      continue;
    }
    ++a.candidates;
    if (!m.ok) {
      ++a.failures;
      continue;
    }
    const json p = params_of(m);
    a.structures.insert(p.value("structure", m.candidate));
    if (m.time_us > 0 && (!a.best || m.time_us < a.best->time_us)) a.best = &m;
    // A measured candidate the cost model had ranked: both times, for the plot.
    if (m.time_us > 0 && p.contains("predicted_us") && p["predicted_us"].is_number() &&
        p["predicted_us"].get<double>() > 0) {
      const auto it = matrices.find(m.fingerprint);
      d.predictions.push_back({it != matrices.end() ? it->second.name : m.fingerprint,
                               family.count(m.fingerprint) ? family[m.fingerprint] : "",
                               structure_of(p, m.candidate), p["predicted_us"].get<double>(),
                               m.time_us});
    }
  }

  std::set<std::string> devices;
  double log_sum = 0;
  int speedups = 0;
  for (const auto& [k, a] : acc) {
    if (!a.best && !a.baseline) continue;  // nothing ran correctly: nothing to show
    const auto& [fp, op, dtype, n, device] = k;
    MatrixResult r;
    r.fingerprint = fp;
    r.op = op_label(op, n);
    r.dtype = dtype;
    r.device = device;
    if (auto it = matrices.find(fp); it != matrices.end()) {
      r.name = it->second.name;
      r.rows = it->second.rows;
      r.cols = it->second.cols;
      r.nnz = it->second.nnz;
      const json f = json::parse(it->second.features, nullptr, false);
      if (f.is_object() && f.contains("alphasparse.row_nnz_var") &&
          f["alphasparse.row_nnz_var"].is_number())
        r.row_nnz_var = f["alphasparse.row_nnz_var"].get<double>();
    } else {
      r.name = fp;
    }
    r.family = family.count(fp) ? family[fp] : "";
    if (a.best) {
      r.tuned_us = a.best->time_us;
      const json p = params_of(*a.best);
      r.structure = structure_of(p, a.best->candidate);
      r.winner = describe_graph(a.best->graph);
      r.achieved_gbs = a.best->gbps;
    }
    if (a.baseline) {
      r.cusparse_us = a.baseline->time_us;
      r.cusparse_alg = a.baseline->candidate.substr(std::strlen("cusparse/"));
    }
    if (r.tuned_us && r.cusparse_us) {
      r.speedup = *r.cusparse_us / *r.tuned_us;
      log_sum += std::log(*r.speedup);
      ++speedups;
    }
    if (auto it = peak.find(device); it != peak.end()) {
      r.peak_gbs = it->second;
      if (r.achieved_gbs > 0) r.bandwidth_fraction = r.achieved_gbs / it->second;
    }
    if (auto it = searches.find(k); it != searches.end()) {
      r.search_s = it->second.search_s;
      r.wall_s = it->second.wall_s;
      r.candidates = it->second.candidates;
      r.structures = it->second.structures;
      r.failures = it->second.failures;
    } else {
      r.candidates = a.candidates;
      r.structures = static_cast<std::int64_t>(a.structures.size());
      r.failures = a.failures;
    }
    devices.insert(device);
    d.matrices.push_back(std::move(r));
  }
  std::sort(d.matrices.begin(), d.matrices.end(), [](const auto& x, const auto& y) {
    return std::tie(x.nnz, x.name, x.op, x.dtype, x.device) <
           std::tie(y.nnz, y.name, y.op, y.dtype, y.device);
  });

  d.summary = {{"database", db.path()},
               {"tool_version", kVersion},
               {"devices", std::vector<std::string>(devices.begin(), devices.end())},
               {"matrices", d.matrices.size()},
               {"with_cusparse", speedups},
               {"geomean_speedup", speedups > 0 ? json(std::exp(log_sum / speedups)) : json()},
               {"predictions", d.predictions.size()}};
  return d;
}

std::string matrices_csv(const ReportData& d) {
  std::string s =
      "name,family,fingerprint,op,dtype,device,rows,cols,nnz,row_nnz_var,tuned_us,cusparse_us,"
      "cusparse_alg,speedup,winner,structure,achieved_gbs,peak_gbs,bandwidth_fraction,search_s,"
      "wall_s,candidates,structures,failures\n";
  for (const auto& r : d.matrices) {
    const std::vector<std::string> cells = {csv_text(r.name),
                                            csv_text(r.family),
                                            csv_text(r.fingerprint),
                                            csv_text(r.op),
                                            csv_text(r.dtype),
                                            csv_text(r.device),
                                            std::to_string(r.rows),
                                            std::to_string(r.cols),
                                            std::to_string(r.nnz),
                                            csv_number(r.row_nnz_var),
                                            csv_number(r.tuned_us),
                                            csv_number(r.cusparse_us),
                                            csv_text(r.cusparse_alg),
                                            csv_number(r.speedup),
                                            csv_text(r.winner),
                                            csv_text(r.structure),
                                            csv_number(r.achieved_gbs),
                                            csv_number(r.peak_gbs),
                                            csv_number(r.bandwidth_fraction),
                                            csv_number(r.search_s),
                                            csv_number(r.wall_s),
                                            std::to_string(r.candidates),
                                            std::to_string(r.structures),
                                            std::to_string(r.failures)};
    for (std::size_t i = 0; i < cells.size(); ++i) s += (i ? "," : "") + cells[i];
    s += "\n";
  }
  return s;
}

std::string predictions_csv(const ReportData& d) {
  std::string s = "name,family,structure,predicted_us,measured_us\n";
  for (const auto& p : d.predictions)
    s += csv_text(p.name) + "," + csv_text(p.family) + "," + csv_text(p.structure) + "," +
         csv_number(p.predicted_us) + "," + csv_number(p.measured_us) + "\n";
  return s;
}

ReportOutcome write_report(const ReportOptions& o) {
  if (std::filesystem::is_directory(o.database))
    throw Error(o.database + ": a folder, not a tuning database (a .db file or a JSON export)");
  if (!std::filesystem::is_regular_file(o.database))
    throw Error(o.database + ": no such tuning database");
  io::StagedFolder::check_target(o.out_dir);
  ReportOutcome out;
  {
    const auto db = db::open_database(o.database);  // a database or a JSON export of one
    out.data = collect(*db);
  }
  io::StagedFolder staged(o.out_dir, io::StagedFolder::Outputs::one_run);
  staged.add("matrices.csv", matrices_csv(out.data));
  staged.add("predictions.csv", predictions_csv(out.data));
  staged.add("summary.json", out.data.summary.dump(2) + "\n");
  if (o.plots) {
    const std::string script = staged.staging_dir() + "/.render.py";
    io::write_file_atomic(script, render_script());
    const std::string python = python_program(o.python);
    run_renderer(python, script, staged.staging_dir());
    std::filesystem::remove(script);
    // An interpreter that exits 0 without running the script (a stand-in, a wrapper) wrote
    // nothing: a report without its page is a failure, not a success.
    if (!std::filesystem::is_regular_file(staged.staging_dir() + "/index.html"))
      throw Error("report: " + python +
                  " ran the plot script without writing index.html; nothing was written");
    staged.adopt_written();
  }
  staged.commit();
  out.files = staged.files();
  return out;
}

}  // namespace sparsetune::report
