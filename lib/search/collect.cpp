#include "search/collect.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "db/tuning_db.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_file.hpp"
#include "runtime/device.hpp"
#include "search/child_run.hpp"
#include "search/collect_loop.hpp"
#include "search/tune.hpp"

namespace sparsetune::search {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool is_matrix_file(const std::string& name) {
  for (const char* ext : {".mtx", ".mtx.gz", ".safetensors"})
    if (io::ends_with_nocase(name, ext)) return true;
  return false;
}

// "gen KIND [k=v ...]": the generator spec, its name and family; errors name `where`.
CollectItem parse_gen(const std::vector<std::string>& words, const std::string& where) {
  if (words.size() < 2) throw Error(where + ": 'gen' needs a generator kind");
  CollectItem it;
  it.source = where;
  gen::GenSpec spec;
  spec.kind = words[1];
  const gen::KindInfo* kind = nullptr;
  std::string kinds;
  for (const auto& k : gen::generator_kinds()) {
    if (k.name == spec.kind) kind = &k;
    kinds += (kinds.empty() ? "" : ", ") + k.name;
  }
  if (!kind) throw Error(where + ": no generator kind '" + spec.kind + "' (kinds: " + kinds + ")");
  if (kind->tensor) throw Error(where + ": '" + spec.kind + "' makes a tensor, not a matrix");
  for (std::size_t k = 2; k < words.size(); ++k) {
    const auto eq = words[k].find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(where + ": '" + words[k] + "' is not name=value");
    std::string key = words[k].substr(0, eq), value = words[k].substr(eq + 1);
    std::replace(key.begin(), key.end(), '-', '_');
    if (key == "family") {
      it.family = value;
    } else if (key == "seed") {
      try {
        std::size_t used = 0;
        spec.seed = std::stoull(value, &used);
        if (used != value.size()) throw std::invalid_argument("seed");
      } catch (const std::exception&) {
        throw Error(where + ": seed=" + value + " is not a whole number");
      }
    } else {
      const bool known = std::any_of(kind->params.begin(), kind->params.end(),
                                     [&](const gen::ParamInfo& p) { return p.name == key; });
      if (!known)
        throw Error(where + ": generator '" + spec.kind + "' has no parameter '" + key + "'");
      spec.params[key] = value;
    }
  }
  it.name = spec.kind;
  for (const auto& [k, v] : spec.params) it.name += "_" + k + "=" + v;
  it.name += "_seed=" + std::to_string(spec.seed);
  if (it.family.empty()) it.family = "gen:" + spec.kind;
  it.gen = spec;
  return it;
}

std::string resolve(const std::string& p, const fs::path& list_dir) {
  if (fs::path(p).is_absolute()) return p;
  std::error_code ec;
  const auto beside = list_dir / p;
  if (fs::exists(beside, ec)) return beside.string();
  return p;
}

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

// Writes a generated matrix once (an existing file of that name is the same matrix: the
// generators are deterministic for their parameters and seed).
void materialize(CollectItem& it, const std::string& gen_dir) {
  if (!it.gen) return;
  it.path = (fs::path(gen_dir) / (it.name + ".safetensors")).string();
  std::error_code ec;
  if (fs::exists(it.path, ec)) return;
  fs::create_directories(gen_dir, ec);
  gen::GeneratedMatrix m;
  try {
    m = gen::generate(*it.gen);
  } catch (const Error& e) {
    throw Error(it.source + ": " + e.what());
  }
  io::write_matrix(it.path, m.matrix);
}

std::vector<CollectItem> read_collect_list(const std::string& list_or_dir) {
  std::vector<CollectItem> items;
  std::error_code ec;
  if (fs::is_directory(list_or_dir, ec)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(list_or_dir, ec))
      if (e.is_regular_file() && is_matrix_file(e.path().filename().string()))
        files.push_back(e.path().string());
    if (ec) throw Error(list_or_dir + ": cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) items.push_back({f, f, matrix_name(f), "", std::nullopt});
    if (items.empty()) throw Error(list_or_dir + ": no .mtx, .mtx.gz or .safetensors file in it");
  } else if (is_matrix_file(list_or_dir)) {
    if (!fs::is_regular_file(list_or_dir, ec)) throw Error(list_or_dir + ": no such matrix file");
    items.push_back({list_or_dir, list_or_dir, matrix_name(list_or_dir), "", std::nullopt});
  } else {
    std::ifstream in(list_or_dir);
    if (!in) throw Error(list_or_dir + ": cannot read the list");
    const fs::path dir = fs::path(list_or_dir).parent_path();
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      std::istringstream words_in(line);
      std::vector<std::string> words;
      for (std::string w; words_in >> w;) words.push_back(w);
      if (words.empty()) continue;
      const std::string where = list_or_dir + ":" + std::to_string(n);
      if (words[0] == "gen") {
        items.push_back(parse_gen(words, where));
        continue;
      }
      if (words.size() > 2)
        throw Error(where + ": expected PATH [FAMILY], got " + std::to_string(words.size()) +
                    " fields");
      CollectItem it;
      it.source = where;
      it.path = resolve(words[0], dir);
      if (!fs::is_regular_file(it.path, ec))
        throw Error(where + ": no such matrix file: " + words[0]);
      it.name = matrix_name(it.path);
      it.family = words.size() > 1 ? words[1] : "";
      items.push_back(std::move(it));
    }
    if (items.empty()) throw Error(list_or_dir + ": the list names no matrix");
  }
  std::set<std::string> names;
  for (const auto& it : items)
    if (!names.insert(it.name).second)
      throw Error(it.source + ": a second matrix named '" + it.name + "'");
  return items;
}

std::vector<CollectItem> shard_of(std::vector<CollectItem> items, const std::string& spec) {
  const auto bad = [&] {
    return Error("--shard " + spec + ": expected I/N with 0 <= I < N (as 0/4 ... 3/4)");
  };
  // A whole number filling the text from `p` to `end`.
  const auto whole = [](const char* p, const char* end, long& v) {
    const auto r = std::from_chars(p, end, v);
    return r.ec == std::errc() && r.ptr == end;
  };
  const auto slash = spec.find('/');
  long i = -1, n = 0;
  if (slash == std::string::npos || !whole(spec.data(), spec.data() + slash, i) ||
      !whole(spec.data() + slash + 1, spec.data() + spec.size(), n) || n < 1 || i < 0 || i >= n)
    throw bad();
  std::vector<CollectItem> kept;
  for (std::size_t k = static_cast<std::size_t>(i); k < items.size();
       k += static_cast<std::size_t>(n))
    kept.push_back(std::move(items[k]));
  return kept;
}

namespace {
std::string duration(double s) {
  const long t = static_cast<long>(s + 0.5);
  char b[32];
  if (t >= 3600)
    std::snprintf(b, sizeof b, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else if (t >= 60)
    std::snprintf(b, sizeof b, "%ldm%02lds", t / 60, t % 60);
  else
    std::snprintf(b, sizeof b, "%lds", t);
  return b;
}
}  // namespace

std::string render_progress(const CollectProgress& p, int width) {
  char head[64];
  const int w = static_cast<int>(std::to_string(p.total).size());
  std::snprintf(head, sizeof head, "[%*d/%d] %3d %%  ", w, p.index + 1, p.total,
                p.total ? 100 * p.index / p.total : 0);
  std::string tail = "  done " + std::to_string(p.done) + ", skipped " + std::to_string(p.skipped) +
                     ", failed " + std::to_string(p.failed) + "  elapsed " + duration(p.elapsed_s) +
                     "  ETA " + (p.eta_s < 0 ? std::string("?") : duration(p.eta_s));
  std::string name = p.name;
  const int room = width - static_cast<int>(std::string(head).size() + tail.size());
  if (room < static_cast<int>(name.size())) name = room > 3 ? name.substr(0, room - 3) + "..." : "";
  std::string line = head + name + tail;
  if (static_cast<int>(line.size()) > width)
    line.resize(static_cast<std::size_t>(std::max(0, width)));
  return line;
}

json CollectSummary::to_json() const {
  json rows = json::array();
  for (const auto& i : items) {
    json r = {{"name", i.name}, {"status", i.status}, {"seconds", i.seconds}};
    if (!i.reason.empty()) r["reason"] = i.reason;
    rows.push_back(r);
  }
  return {
      {"device", device},           {"done", done},       {"skipped", skipped}, {"failed", failed},
      {"interrupted", interrupted}, {"seconds", seconds}, {"matrices", rows}};
}

namespace {
// Field `key` of the search object of a tune's --json report (null when the file, the object or
// the field is missing or the file is not JSON).
json search_field(const std::string& tune_json, const char* key) {
  std::ifstream in(tune_json);
  if (!in) return json();
  const json j = json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("search") || !j["search"].is_object()) return json();
  return j["search"].value(key, json());
}
}  // namespace

std::string why_no_search(const std::string& tune_json) {
  const json note = search_field(tune_json, "note");
  return note.is_string() ? note.get<std::string>() : "";
}

double budget_needed(const std::string& tune_json) {
  const json b = search_field(tune_json, "budget_needed_s");
  return b.is_number() && b.get<double>() > 0 ? b.get<double>() : 0;
}

CollectSummary collect(const std::vector<CollectItem>& input, const CollectOptions& o) {
  // A (matrix, n)'s file name in the work folder: the matrix's, with its n for SpMM.
  auto tag = [&o](const CollectItem& it, int n) {
    return o.op == "spmv" ? it.name : it.name + "-n" + std::to_string(n);
  };
  if (o.budget_s <= 0) throw Error("collect: --budget must be more than 0 seconds");
  if (o.op != "spmv" && o.op != "spmm")
    throw Error("collect: --op must be spmv or spmm (got '" + o.op + "')");
  std::vector<int> ns = o.op == "spmv" ? std::vector<int>{1} : o.ns;
  if (ns.empty()) ns = {32, 128};
  for (int n : ns)
    if (n < 1) throw Error("collect: --n must be at least 1 (got " + std::to_string(n) + ")");
  if (o.dtype != "f64" && o.dtype != "f32")
    throw Error("collect: --dtype must be f64 or f32 (got '" + o.dtype + "')");
  std::string device, arch = "sm_90";
  if (o.compile_only) {
    device = "cost-model";  // the key tune --compile-only records its runs under
  } else {
    const auto devices = runtime::list_devices();
    if (devices.empty())
      throw Error("collect: " + runtime::device_status() +
                  ": collect measures on a GPU (--compile-only runs the search's CPU side only)");
    device = devices.front().name;
    arch = devices.front().arch();
  }
  const std::string db_path = o.db_path.empty() ? db::TuningDb::default_path() : o.db_path;
  db::TuningDb db(db_path);
  const std::string gen_dir =
      o.gen_dir.empty() ? (fs::path(db_path).parent_path() / "generated").string() : o.gen_dir;
  std::string work = o.work_dir;
  bool own_work = false;
  if (work.empty() && !o.run_one) {
    std::string tmpl = (fs::temp_directory_path() / "sparsetune-collect-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error("collect: cannot create a temporary folder");
    work = tmpl;
    own_work = true;
  }
  if (!work.empty()) {
    std::error_code ec;
    fs::create_directories(fs::path(work) / "logs", ec);
    if (ec) throw Error(work + ": cannot create the work folder: " + ec.message());
  }
  const double timeout = o.per_matrix_timeout_s > 0 ? o.per_matrix_timeout_s : 3 * o.budget_s + 60;

  // One unit per (matrix, n), each a copy of its item (materialize sets the copy's path).
  std::vector<CollectItem> units;
  std::vector<std::string> labels;
  std::vector<int> n_of;
  for (const auto& it : input)
    for (int n : ns) {
      units.push_back(it);
      labels.push_back(o.op == "spmv" ? it.name : it.name + " n=" + std::to_string(n));
      n_of.push_back(n);
    }
  // The work folder goes when this returns or throws.
  struct RemoveWork {
    const std::string& dir;
    bool own;
    ~RemoveWork() {
      std::error_code ec;
      if (own) fs::remove_all(dir, ec);
    }
  } remove_work{work, own_work};
  const CollectKey key{o.op, o.dtype, device, arch};
  return collect_each(
      units, db, key, o.stop, o.progress,
      [&](int i, CollectItem& it, std::string& fp, std::int64_t& n_row) -> ItemDone {
        const int n = n_of[static_cast<std::size_t>(i)];
        n_row = n;
        materialize(it, gen_dir);
        fp = fingerprint(io::read_matrix(it.path));
        if (db.last_search(fp, o.op, o.dtype, n, device))
          return {"skipped", "searched before on " + device};
        if (o.run_one) {
          o.run_one(it, o, n);
        } else {
          const std::string log = (fs::path(work) / "logs" / tag(it, n)).string();
          const auto tune_with = [&](double budget_s, double timeout_s) {
            std::vector<std::string> argv = {o.program,
                                             "tune",
                                             it.path,
                                             "--op",
                                             o.op,
                                             "--dtype",
                                             o.dtype,
                                             "--budget",
                                             fmt(budget_s),
                                             "--db",
                                             db_path,
                                             "-o",
                                             (fs::path(work) / "tuned" / tag(it, n)).string(),
                                             "--json"};
            if (o.op == "spmm") argv.insert(argv.end(), {"--n", std::to_string(n)});
            if (o.op == "spmv" && o.crux_share > 0)
              argv.insert(argv.end(), {"--crux-share", fmt(o.crux_share)});
            if (!it.family.empty()) argv.insert(argv.end(), {"--family", it.family});
            if (o.compile_only) argv.push_back("--compile-only");
            return run_child(argv, log + ".json", log + ".err", timeout_s, o.stop);
          };
          const auto failed = [&](const ChildResult& r) {
            const std::string said = r.timed_out ? "" : last_line(log + ".err");
            return Error(said.empty() ? r.how() : said + " (" + r.how() + ")");
          };
          auto r = tune_with(o.budget_s, timeout);
          if (r.interrupted) return {"interrupted", ""};
          if (!r.ok()) throw failed(r);
          // Starved: once more with the budget tune asked for, if the time limit allows it.
          const double needed = o.grow_budget ? budget_needed(log + ".json") : 0;
          const double timeout2 =
              o.per_matrix_timeout_s > 0 ? o.per_matrix_timeout_s : 3 * needed + 60;
          if (needed > o.budget_s && needed < timeout2 &&
              !db.last_search(fp, o.op, o.dtype, n, device)) {
            r = tune_with(needed, timeout2);
            if (r.interrupted) return {"interrupted", ""};
            if (!r.ok()) throw failed(r);
            if (db.last_search(fp, o.op, o.dtype, n, device))
              return {"done", "--budget grown to " + fmt(needed) + " s"};
          }
        }
        if (!db.last_search(fp, o.op, o.dtype, n, device)) {
          const std::string why =
              o.run_one ? ""
                        : why_no_search((fs::path(work) / "logs" / tag(it, n)).string() + ".json");
          throw Error(
              why.empty()
                  ? "tune ended without recording a completed search (is --budget too small?)"
                  : why);
        }
        return {};
      },
      labels);
}

}  // namespace sparsetune::search
