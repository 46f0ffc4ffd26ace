#pragma once
// The figures of a PredictorEval from its rows, shared by the evaluators.
#include "report/eval.hpp"

namespace sparsetune::report {

// Sorts e's rows worst share first and fills top-1 (`top1` rows picked the oracle), the
// geometric mean and minimum share, and the rows within 10 %.
void summarize(PredictorEval& e, int top1);

}  // namespace sparsetune::report
