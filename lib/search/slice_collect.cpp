#include "search/slice_collect.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "io/file_bytes.hpp"
#include "io/slice_source.hpp"
#include "models/slice_gcn.hpp"
#include "runtime/device.hpp"
#include "search/collect_loop.hpp"

namespace sparsetune::search {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Tensors, and matrices: each matrix one slice (io/slice_source.hpp).
bool is_tensor_file(const std::string& name) {
  for (const char* ext : {".tns", ".tns.gz", ".safetensors", ".mtx", ".mtx.gz"})
    if (io::ends_with_nocase(name, ext)) return true;
  return false;
}

std::string tensor_name(const std::string& path) {
  std::string n = fs::path(path).filename().string();
  for (const char* ext : {".tns.gz", ".tns", ".safetensors", ".mtx.gz", ".mtx"})
    if (io::ends_with_nocase(n, ext)) return n.substr(0, n.size() - std::string(ext).size());
  return n;
}

}  // namespace

std::vector<CollectItem> read_tensor_list(const std::string& list_or_dir) {
  std::error_code ec;
  std::vector<CollectItem> items;
  if (fs::is_directory(list_or_dir, ec)) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(list_or_dir, ec))
      if (e.is_regular_file() && is_tensor_file(e.path().filename().string()))
        files.push_back(e.path().string());
    if (ec) throw Error(list_or_dir + ": cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) items.push_back({f, f, tensor_name(f), "", std::nullopt});
    if (items.empty())
      throw Error(list_or_dir + ": no .tns, .tns.gz, .mtx, .mtx.gz or .safetensors file in it");
    return items;
  }
  if (is_tensor_file(list_or_dir)) {
    if (!fs::is_regular_file(list_or_dir, ec)) throw Error(list_or_dir + ": no such tensor file");
    return {{list_or_dir, list_or_dir, tensor_name(list_or_dir), "", std::nullopt}};
  }
  items = read_collect_list(list_or_dir);
  for (auto& it : items) {
    if (it.gen)
      throw Error(it.source +
                  ": collect --op sptv takes tensor files; write a generated tensor with "
                  "`sparsetune gen tensor` and list its file");
    it.name = tensor_name(it.path);
  }
  return items;
}

std::vector<db::Measurement> slice_measurements(const std::vector<models::SliceTiming>& records,
                                                const std::string& fingerprint,
                                                const std::string& dtype, const std::string& device,
                                                const std::string& arch) {
  std::vector<db::Measurement> out;
  for (const auto& r : records) {
    const std::string format = models::slice_format_classes().at(r.format);
    db::Measurement m = key_row({kSliceOp, dtype, device, arch}, fingerprint, r.mode);
    m.candidate = "slice/" + std::to_string(r.slice) + "/" + format;
    m.params = json{{"slice", r.slice}, {"format", format}}.dump();
    m.time_us = r.time_us;
    out.push_back(std::move(m));
  }
  return out;
}

CollectSummary collect_slices(const std::vector<CollectItem>& items, const SliceCollectOptions& o) {
  CollectKey key{kSliceOp, o.timing.dtype, "test-gpu", "sm_90"};
  if (!o.time_one) {
    const auto devices = runtime::list_devices();
    if (devices.empty())
      throw Error("collect --op sptv: " + runtime::device_status() +
                  ": the slices are timed on a GPU");
    key.device = devices.front().name;
    key.arch = devices.front().arch();
  }
  db::TuningDb db(o.db_path.empty() ? db::TuningDb::default_path() : o.db_path);
  auto list = items;
  return collect_each(
      list, db, key, o.stop, o.progress,
      [&](int, CollectItem& it, std::string& fp, std::int64_t& mode) -> ItemDone {
        const auto t0 = std::chrono::steady_clock::now();
        const auto source = io::read_slice_source(it.path);
        const SparseTensor& t = source.tensor;
        fp = fingerprint(t);
        db::MatrixRow row;
        row.fingerprint = fp;
        row.name = it.name;
        row.rows = t.dims.empty() ? 0 : t.dims[0];
        row.cols = t.dims.size() > 1 ? t.dims[1] : 1;
        row.nnz = t.nnz();
        row.features = json{
            {"path", fs::absolute(it.path).lexically_normal().string()},
            {"dims", t.dims},
            {"family",
             it.family}}.dump();
        db.put_matrix(row);
        int timed = 0;
        for (mode = 0; mode < t.order(); ++mode) {
          if (source.matrix && mode != io::kMatrixSliceMode) continue;
          if (db.last_search(fp, kSliceOp, key.dtype, mode, key.device)) continue;
          auto opt = o.timing;
          opt.tensor = it.path;
          opt.label = it.name;
          opt.mode = static_cast<int>(mode);
          const auto r = o.time_one ? o.time_one(t, opt) : time_slices(t, opt);
          if (r.records.empty())
            throw Error("mode " + std::to_string(mode) + ": no slice was timed" +
                        (r.notes.empty() ? std::string() : " (" + r.notes.dump() + ")"));
          for (const auto& m : slice_measurements(r.records, fp, key.dtype, key.device, key.arch))
            db.add(m);
          db.add_run(key_run(
              key, fp, mode, it.family, static_cast<std::int64_t>(r.records.size()),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
          ++timed;
        }
        if (timed == 0) return {"skipped", "every mode timed before on " + key.device};
        return {};
      });
}

}  // namespace sparsetune::search
