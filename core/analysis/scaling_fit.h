// Fitting how a cost scales (issue 49, item 5: `attnlab reproduce`'s scaling benchmarks,
// app/cli/repro/repro_scaling.h). Torch-free.
#pragma once
#include <vector>

#include "core/analysis/verdict.h"

namespace attn {

// The least-squares slope of y on x over the first min(|x|, |y|) points; NaN with fewer than two
// points or no spread in x.
double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y);
// The slope of log(y) on log(x) (the exponent b of y = c x^b); NaN when a value is not positive.
double loglog_slope(const std::vector<double>& x, const std::vector<double>& y);
// One log-log slope per round: y_per_round[r] holds round r's figure at each x. Keyed by round,
// so that verdict.h's one-arm judge (judge_at_most) gives the interval over rounds.
KeyedValues round_slopes(const std::vector<double>& x,
                         const std::vector<std::vector<double>>& y_per_round);

}  // namespace attn
