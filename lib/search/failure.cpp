#include "search/failure.hpp"

#include <new>

#include "graph/operator.hpp"
#include "runtime/nvrtc.hpp"

namespace sparsetune::search {

namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

std::string failure_category(const std::exception& e) {
  if (dynamic_cast<const graph::DesignError*>(&e)) return failure::kDesignRefused;
  if (dynamic_cast<const graph::GraphError*>(&e)) return failure::kInvalidGraph;
  if (dynamic_cast<const runtime::CompileError*>(&e)) return failure::kCompile;
  if (dynamic_cast<const std::bad_alloc*>(&e)) return failure::kOutOfMemory;
  return classify_failure(e.what());
}

std::string classify_failure(const std::string& m) {
  if (has(m, "timed out")) return failure::kTimeout;
  if (has(m, "out of memory") || has(m, "of memory, more than") || has(m, "bad_alloc"))
    return failure::kOutOfMemory;
  if (has(m, "worker lost") || has(m, "killed by") || has(m, "malformed reply"))
    return failure::kWorkerCrash;
  if (has(m, "nvrtc") || has(m, "does not compile")) return failure::kCompile;
  if (has(m, "wrong result") || has(m, "verif") || has(m, "relative error"))
    return failure::kVerification;
  if (has(m, "design: ")) return failure::kDesignRefused;
  return failure::kOther;
}

void FailureLog::add(const std::string& category, const std::string& message,
                     const std::string& graph_line) {
  ++total_;
  ++counts_[category];
  if (first_.size() >= keep_) return;
  constexpr std::size_t kCut = 400;
  std::string m = message;
  if (m.size() > kCut) m = m.substr(0, kCut) + " [...]";
  first_.push_back({{"category", category}, {"message", m}, {"graph", graph_line}});
}

nlohmann::json FailureLog::to_json() const {
  nlohmann::json by = nlohmann::json::object();
  for (const auto& [k, v] : counts_) by[k] = v;
  return {{"total", total_}, {"by_category", by}, {"first", first_}};
}

std::string FailureLog::summary() const {
  std::string s;
  for (const auto& [k, v] : counts_) s += (s.empty() ? "" : ", ") + std::to_string(v) + " " + k;
  return s;
}

}  // namespace sparsetune::search
