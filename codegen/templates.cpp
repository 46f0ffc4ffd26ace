#include "codegen/templates.hpp"

#include <mutex>
#include <sstream>

#include "core/error.hpp"

namespace sparsetune::codegen {

const std::map<std::string, std::string>& template_sections(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::map<std::string, std::string>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  for (const auto& f : template_files()) {
    if (name != f.name) continue;
    std::map<std::string, std::string> sections;
    std::istringstream in(f.text);
    std::string line, current;
    while (std::getline(in, line)) {
      if (line.rfind("//@ ", 0) == 0) {
        current = line.substr(4);
        sections[current];
        continue;
      }
      if (!current.empty()) sections[current] += line + "\n";
    }
    return cache[name] = std::move(sections);
  }
  throw Error("kernel template " + name + " is not embedded in this build");
}

}  // namespace sparsetune::codegen
