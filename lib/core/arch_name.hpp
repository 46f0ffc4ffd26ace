#pragma once
// GPU architecture names as NVRTC takes them and as model folders are named: sm_ and two or three
// digits, with an optional 'a' (sm_80, sm_90a, sm_100).
#include <cctype>
#include <string>

namespace sparsetune {

// The architecture's number (90 for sm_90a), or -1 when `arch` is not such a name.
inline int arch_number(const std::string& arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0) return -1;
  std::size_t i = 3;
  while (i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i]))) ++i;
  const bool ok =
      i >= 5 && i <= 6 && (i == arch.size() || (i + 1 == arch.size() && arch[i] == 'a'));
  return ok ? std::stoi(arch.substr(3, i - 3)) : -1;
}

}  // namespace sparsetune
