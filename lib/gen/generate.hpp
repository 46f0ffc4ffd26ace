#pragma once
// Parameter-driven front of the generators: a kind name and string parameters in, a matrix or
// tensor out. Every parameter is parsed and range-checked here, so callers (the CLI) hold no
// logic; an unknown parameter or a bad value throws sparsetune::Error naming it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "core/tensor.hpp"

namespace sparsetune::gen {

struct GenSpec {
  std::string kind;                           // one of generator_kinds()
  std::map<std::string, std::string> params;  // name -> value, as typed by a user
  std::uint64_t seed = 1;
};

struct GeneratedMatrix {
  std::string kind;
  bool is_tensor = false;
  Csr64 matrix;                                 // the result unless is_tensor
  SparseTensor tensor;                          // the result when is_tensor
  std::map<std::string, std::string> resolved;  // every parameter with the value used
};

struct ParamInfo {
  std::string name;           // e.g. "edge_factor"
  std::string default_value;  // shown in help; empty when the parameter is optional
  std::string help;
};

struct KindInfo {
  std::string name;
  std::string help;
  bool tensor = false;
  std::vector<ParamInfo> params;
};

// The kinds generate() accepts, with their parameters (what the CLI turns into options).
const std::vector<KindInfo>& generator_kinds();

GeneratedMatrix generate(const GenSpec& spec);

}  // namespace sparsetune::gen
