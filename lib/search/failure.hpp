#pragma once
// Why candidates failed, by category: every failed candidate carries one, the report counts them
// and keeps the first few messages, and the database stores "category: message".
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sparsetune::search {

// The categories, as they appear in the report.
namespace failure {
inline constexpr const char* kDesignRefused = "design-refused";  // a data rule (DesignError)
inline constexpr const char* kInvalidGraph = "invalid-graph";    // a graph rule (GraphError)
inline constexpr const char* kCompile = "compile";               // NVRTC refused the kernel
inline constexpr const char* kWorkerCrash = "worker-crash";      // the worker died running it
inline constexpr const char* kTimeout = "timeout";               // the worker was killed on time
inline constexpr const char* kVerification = "verification";     // ran, but the result is wrong
inline constexpr const char* kOutOfMemory = "out-of-memory";     // host or device memory
inline constexpr const char* kOther = "other";
}  // namespace failure

// The category of an exception thrown while designing or compiling a candidate.
std::string failure_category(const std::exception& e);
// The category of a message from an evaluator that did not name one (best effort, by wording).
std::string classify_failure(const std::string& message);

// Counts by category and the first `keep` messages (each cut to a few hundred characters: an
// NVRTC log can be long).
class FailureLog {
 public:
  explicit FailureLog(std::size_t keep = 5) : keep_(keep) {}
  void add(const std::string& category, const std::string& message, const std::string& graph_line);
  int total() const { return total_; }
  const std::map<std::string, int>& counts() const { return counts_; }
  // {"total": N, "by_category": {...}, "first": [{category, message, graph}]}
  nlohmann::json to_json() const;
  // "3 design-refused, 1 compile" (empty when none failed).
  std::string summary() const;

 private:
  std::size_t keep_;
  int total_ = 0;
  std::map<std::string, int> counts_;
  nlohmann::json first_ = nlohmann::json::array();
};

}  // namespace sparsetune::search
