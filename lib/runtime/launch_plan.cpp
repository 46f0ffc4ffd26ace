#include "runtime/launch_plan.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "core/error.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/stats.hpp"

namespace sparsetune::runtime {

namespace {

using nlohmann::json;

const char* arg_key(PlanArg::Kind k) {
  switch (k) {
    case PlanArg::Kind::Buffer:
      return "buffer";
    case PlanArg::Kind::I32:
      return "i32";
    case PlanArg::Kind::I64:
      return "i64";
    case PlanArg::Kind::F32:
      return "f32";
    case PlanArg::Kind::F64:
      return "f64";
  }
  return "buffer";
}

json dim_json(const unsigned (&d)[3]) { return json::array({d[0], d[1], d[2]}); }

void dim_from(const json& j, unsigned (&d)[3], const std::string& what) {
  const std::int64_t lim = std::numeric_limits<std::int32_t>::max();
  if (j.is_number_integer()) {
    const auto v = j.get<std::int64_t>();
    if (v < 1 || v > lim) throw Error(what + " out of range");
    d[0] = static_cast<unsigned>(v);
    d[1] = d[2] = 1;
    return;
  }
  if (!j.is_array() || j.empty() || j.size() > 3) throw Error(what + " must be 1 to 3 sizes");
  for (std::size_t i = 0; i < 3; ++i) {
    const std::int64_t v = i < j.size() ? j[i].get<std::int64_t>() : 1;
    if (v < 1 || v > lim) throw Error(what + " out of range");
    d[i] = static_cast<unsigned>(v);
  }
}

}  // namespace

std::size_t plan_dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8") return 1;
  return 0;
}

json plan_to_json(const LaunchPlan& p) {
  json launches = json::array();
  for (const auto& l : p.launches) {
    json args = json::array();
    for (const auto& a : l.args) {
      const char* k = arg_key(a.kind);
      if (a.kind == PlanArg::Kind::Buffer)
        args.push_back({{k, a.buffer}});
      else if (a.kind == PlanArg::Kind::F32 || a.kind == PlanArg::Kind::F64)
        args.push_back({{k, a.f}});
      else
        args.push_back({{k, a.i}});
    }
    launches.push_back({{"kernel", l.kernel},
                        {"grid", dim_json(l.grid)},
                        {"block", dim_json(l.block)},
                        {"shared_bytes", l.shared_bytes},
                        {"args", args}});
  }
  return {{"name", p.name},
          {"launches", launches},
          {"output",
           {{"buffer", p.output},
            {"dtype", p.output_dtype},
            {"length", p.output_length},
            {"zero", p.zero_output},
            {"init", p.output_init}}},
          {"x", p.x},
          {"y_ref", p.y_ref},
          {"check", {{"dtype", p.check_dtype}, {"max_len", p.max_len}}},
          {"cost",
           {{"op", p.op},
            {"n", p.n},
            {"rows", p.rows},
            {"cols", p.cols},
            {"nnz", p.nnz},
            {"index_bytes", p.index_bytes},
            {"value_bytes", p.value_bytes}}}};
}

LaunchPlan plan_from_json(const json& j, const std::string& source) {
  LaunchPlan p;
  try {
    p.name = j.value("name", std::string());
    for (const auto& l : j.at("launches")) {
      PlanLaunch pl;
      pl.kernel = l.at("kernel").get<std::string>();
      dim_from(l.at("grid"), pl.grid, "grid of " + pl.kernel);
      dim_from(l.at("block"), pl.block, "block of " + pl.kernel);
      pl.shared_bytes = l.value("shared_bytes", std::int64_t{0});
      for (const auto& a : l.at("args")) {
        if (!a.is_object() || a.size() != 1) throw Error("an argument must be one {kind: value}");
        PlanArg arg;
        const std::string k = a.begin().key();
        const json& v = a.begin().value();
        if (k == "buffer") {
          arg.kind = PlanArg::Kind::Buffer;
          arg.buffer = v.get<std::string>();
        } else if (k == "i32" || k == "i64") {
          arg.kind = k == "i32" ? PlanArg::Kind::I32 : PlanArg::Kind::I64;
          arg.i = v.get<std::int64_t>();
        } else if (k == "f32" || k == "f64") {
          arg.kind = k == "f32" ? PlanArg::Kind::F32 : PlanArg::Kind::F64;
          arg.f = v.get<double>();
        } else {
          throw Error("unknown argument kind '" + k + "'");
        }
        pl.args.push_back(arg);
      }
      p.launches.push_back(std::move(pl));
    }
    const json& o = j.at("output");
    p.output = o.at("buffer").get<std::string>();
    p.output_dtype = o.at("dtype").get<std::string>();
    p.output_length = o.at("length").get<std::int64_t>();
    p.zero_output = o.value("zero", false);
    p.output_init = o.value("init", std::string());
    p.x = j.value("x", std::string("x"));
    p.y_ref = j.value("y_ref", std::string("y_ref"));
    p.check_dtype = j.at("check").at("dtype").get<std::string>();
    p.max_len = j.at("check").value("max_len", std::int64_t{0});
    const json& c = j.at("cost");
    p.op = c.value("op", std::string("spmv"));
    p.n = c.value("n", std::int64_t{1});
    p.rows = c.at("rows").get<std::int64_t>();
    p.cols = c.at("cols").get<std::int64_t>();
    p.nnz = c.at("nnz").get<std::int64_t>();
    p.index_bytes = c.value("index_bytes", 4);
    p.value_bytes = c.value("value_bytes", 4);
  } catch (const json::exception& e) {
    throw Error(source + ": bad launch plan: " + e.what());
  } catch (const Error& e) {
    throw Error(source + ": bad launch plan: " + e.what());
  }
  return p;
}

void validate_plan(const LaunchPlan& p, const std::string& source) {
  auto bad = [&](const std::string& why) { return Error(source + ": bad launch plan: " + why); };
  for (const auto& [name, b] : p.buffers) {
    const std::size_t s = plan_dtype_size(b.dtype);
    if (s == 0) throw bad("buffer '" + name + "' has unknown dtype " + b.dtype);
    if (b.bytes.size() % s) throw bad("buffer '" + name + "' is not a whole number of elements");
  }
  if (p.buffers.count(p.output)) throw bad("the output '" + p.output + "' must not be stored");
  const std::size_t ys = plan_dtype_size(p.output_dtype);
  if (p.output_dtype != "F16" && p.output_dtype != "F32" && p.output_dtype != "F64")
    throw bad("output dtype must be F16, F32 or F64");
  if (ys == 0 || p.output_length < 0) throw bad("bad output length");
  auto ref = p.buffers.find(p.y_ref);
  if (ref == p.buffers.end()) throw bad("no reference buffer '" + p.y_ref + "'");
  if (ref->second.dtype != "F64" ||
      ref->second.bytes.size() != static_cast<std::size_t>(p.output_length) * 8)
    throw bad("the reference must hold the output's length of F64 values");
  auto x = p.buffers.find(p.x);
  if (x == p.buffers.end()) throw bad("no input buffer '" + p.x + "'");
  if (!p.output_init.empty()) {
    if (p.zero_output) throw bad("the output is both zeroed and initialised");
    auto init = p.buffers.find(p.output_init);
    if (init == p.buffers.end()) throw bad("no initial output buffer '" + p.output_init + "'");
    if (init->second.dtype != p.output_dtype ||
        init->second.bytes.size() != static_cast<std::size_t>(p.output_length) * ys)
      throw bad("the initial output '" + p.output_init + "' must hold the output's length of " +
                p.output_dtype + " values");
  }
  parse_dtype(p.check_dtype);
  if (p.max_len < 0 || p.rows < 0 || p.cols < 0 || p.nnz < 0) throw bad("negative sizes");
  if (p.op != "spmv" && p.op != "spmm") throw bad("op must be spmv or spmm, not " + p.op);
  if (p.op == "spmv" ? p.n != 1 : p.n < 1) throw bad("n = " + std::to_string(p.n) + " for " + p.op);
  // The output is y (rows) or C (rows x n); the input x (cols) or B (cols x n).
  if (p.output_length != p.rows * p.n)
    throw bad("the output holds " + std::to_string(p.output_length) +
              " values, not rows x n = " + std::to_string(p.rows * p.n));
  if (const std::size_t xs = plan_dtype_size(x->second.dtype);
      xs && x->second.bytes.size() / xs != static_cast<std::size_t>(p.cols * p.n))
    throw bad("the input '" + p.x + "' holds " + std::to_string(x->second.bytes.size() / xs) +
              " values, not cols x n = " + std::to_string(p.cols * p.n));
  if (p.index_bytes < 1 || p.value_bytes < 1) throw bad("bad cost sizes");
  for (const auto& l : p.launches) {
    if (l.kernel.empty()) throw bad("a launch names no kernel");
    if (l.shared_bytes < 0 || l.shared_bytes > (std::int64_t{1} << 30))
      throw bad("shared bytes of " + l.kernel + " out of range");
    for (const auto& a : l.args)
      if (a.kind == PlanArg::Kind::Buffer && a.buffer != p.output && !p.buffers.count(a.buffer))
        throw bad(l.kernel + " names a missing buffer '" + a.buffer + "'");
  }
}

std::map<std::string, PlanBuffer> read_plan_buffers(const std::filesystem::path& path,
                                                    std::vector<char>* cubin, json* plan_json) {
  const std::string file = path.string();
  const std::vector<char> blob = read_file_bytes(path);
  if (blob.size() < 8) throw Error(file + ": too short for a safetensors header");
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t{static_cast<unsigned char>(blob[i])} << (8 * i);
  if (n > blob.size() - 8) throw Error(file + ": header length past the end of the file");
  json header;
  try {
    header = json::parse(blob.begin() + 8, blob.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  } catch (const json::exception& e) {
    throw Error(file + ": bad header: " + e.what());
  }
  if (!header.is_object()) throw Error(file + ": bad header");
  const std::size_t data = 8 + n;
  std::map<std::string, PlanBuffer> out;
  try {
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") {
        if (plan_json && it.value().contains(kPlanMetadataKey))
          *plan_json = json::parse(it.value()[kPlanMetadataKey].get<std::string>());
        continue;
      }
      const std::string dtype = it.value().at("dtype").get<std::string>();
      const auto b = it.value().at("data_offsets").at(0).get<std::uint64_t>();
      const auto e = it.value().at("data_offsets").at(1).get<std::uint64_t>();
      if (e < b || e > blob.size() - data)
        throw Error(file + ": array '" + it.key() + "' lies outside the file");
      std::vector<char> bytes(blob.begin() + static_cast<std::ptrdiff_t>(data + b),
                              blob.begin() + static_cast<std::ptrdiff_t>(data + e));
      if (it.key() == kPlanCubinArray) {
        if (cubin) *cubin = std::move(bytes);
        continue;
      }
      out[it.key()] = {dtype, std::move(bytes)};
    }
  } catch (const json::exception& e) {
    throw Error(file + ": bad header: " + e.what());
  }
  return out;
}

namespace {

void write_arrays(const std::filesystem::path& path,
                  const std::vector<std::pair<std::string, const PlanBuffer*>>& arrays,
                  const json* plan) {
  json header = json::object();
  std::size_t offset = 0;
  for (const auto& [name, b] : arrays) {
    const std::size_t s = plan_dtype_size(b->dtype);
    if (s == 0) throw Error("buffer '" + name + "' has unknown dtype " + b->dtype);
    header[name] = {{"dtype", b->dtype},
                    {"shape", {b->bytes.size() / s}},
                    {"data_offsets", {offset, offset + b->bytes.size()}}};
    offset += b->bytes.size();
  }
  if (plan) header["__metadata__"] = {{kPlanMetadataKey, plan->dump()}};
  std::string text = header.dump();
  while (text.size() % 8) text += ' ';
  std::vector<char> out(8 + text.size() + offset);
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 8, text.data(), text.size());
  char* p = out.data() + 8 + text.size();
  for (const auto& [name, b] : arrays) {
    if (!b->bytes.empty()) std::memcpy(p, b->bytes.data(), b->bytes.size());
    p += b->bytes.size();
  }
  write_file_atomic(path, out.data(), out.size());
}

}  // namespace

void write_plan_buffers(const std::filesystem::path& path,
                        const std::map<std::string, PlanBuffer>& buffers) {
  std::vector<std::pair<std::string, const PlanBuffer*>> arrays;
  for (const auto& [name, b] : buffers) arrays.emplace_back(name, &b);
  write_arrays(path, arrays, nullptr);
}

void write_plan(const std::filesystem::path& path, const LaunchPlan& p) {
  std::vector<std::pair<std::string, const PlanBuffer*>> arrays;
  for (const auto& [name, b] : p.buffers) arrays.emplace_back(name, &b);
  const PlanBuffer cubin{"U8", p.cubin};
  if (!p.cubin.empty()) arrays.emplace_back(kPlanCubinArray, &cubin);
  const json j = plan_to_json(p);
  write_arrays(path, arrays, &j);
}

LaunchPlan read_plan(const std::filesystem::path& path,
                     const std::vector<std::filesystem::path>& inputs) {
  std::vector<char> cubin;
  json j;
  auto buffers = read_plan_buffers(path, &cubin, &j);
  if (j.is_null()) throw Error(path.string() + ": not a launch plan (no plan metadata)");
  LaunchPlan p = plan_from_json(j, path.string());
  p.cubin = std::move(cubin);
  p.buffers = std::move(buffers);
  for (const auto& in : inputs)
    for (auto& [name, b] : read_plan_buffers(in)) p.buffers.emplace(name, std::move(b));
  validate_plan(p, path.string());
  return p;
}

}  // namespace sparsetune::runtime
