#pragma once
// The edge-case scenario list every format family is run through, after Ginkgo's: degenerate
// shapes, empty rows and columns at every position, one dense row, a dense matrix, explicit
// zeros, duplicates, Poisson-imbalanced rows, tall and wide shapes. The CPU tests walk each
// format with the interpreter; the [gpu] tests run the generated kernels on the same list.
// `sparsetune gen scenario --name ID` writes one of them, so a failing check's reproducer is a
// command and a graph JSON.
#include <cstdint>
#include <string>
#include <vector>

#include "core/matrix.hpp"

namespace sparsetune::gen {

struct Scenario {
  std::string id;      // short name: `sparsetune gen scenario --name ID`
  std::string name;    // what it is
  std::string how;     // how it is built
  std::string recipe;  // the command that writes it
  Csr64 a;
  std::int64_t duplicates = 0;  // entries merged into an earlier one when the COO was converted
};

// `dense_row` is the length of the one dense row (10^5 by default; the GPU tests use 10^6).
std::vector<Scenario> scenarios(std::int64_t dense_row = 100000);

// One scenario by id; throws Error listing the ids for an unknown one.
Scenario scenario(const std::string& id, std::int64_t dense_row = 100000);

}  // namespace sparsetune::gen
