// Verdicts on a claim from per-seed (or per-round) values of two arms: the interval of the
// difference (or ratio), the p-value of the test the verdict turns on, its exact sign-flip check,
// and held / did not hold / not resolved. What `attnlab reproduce` (app/cli/repro/repro_claims.h)
// judges each claim by. Torch-free.
// Contract:
//  - Values are keyed (seed, or benchmark round); keys present on both sides pair. With at
//    least two pairs the interval is the paired t-interval of the mean difference; otherwise
//    Welch's (unpaired) interval of the difference of the means.
//  - better:   held when the interval excludes 0 on the claimed side (lower for losses and
//              memory, higher for accuracy and speed), did not hold when it excludes 0 on the
//              other side, else not resolved.
//  - within:   held when the interval lies in [-tolerance, tolerance]; did not hold when it lies
//              wholly outside; else not resolved.
//  - ratio:    on the logs (a / b per pair), exponentiated: held when the interval lies on the
//              claimed side of `bound` (at most: hi <= bound; at least: lo >= bound), did not
//              hold when it lies wholly on the other side, else not resolved.
//  - at_most:  one arm's t-interval against `bound` (hi <= bound held, lo > bound did not).
//    Inclusive bounds allow a relative 1e-9 for rounding.
//  - boundary / p_decisive: every verdict turns on one boundary (better: 0; within: the
//    tolerance nearer the estimate; ratio and at_most: the bound; on the log scale for ratios).
//    p_decisive is the two-sided t-test p against it, so the 95% interval excludes it exactly
//    when p_decisive < 0.05, and `direction` is the verdict it gives when it does: a caller that
//    corrects for several claims or looks judges "direction if corrected p < 0.05".
//  - p_permutation: the exact sign-flip p (statistics.h) of the paired differences (one arm's
//    values for at_most) against the same boundary; NaN when unpaired. With n pairs it is never
//    below 2 / 2^n: a check on the t-test's normality, not a verdict.
//  - Fewer than two values on a side (two pairs when paired) give no interval: not resolved.
//  - seeds_to_resolve (not resolved, paired or one-arm only): the pairs that would make the
//    interval clear the decisive boundary if the mean and sd stayed as observed (0: unknown).
#pragma once
#include <cmath>
#include <map>
#include <string>

namespace attn {

using KeyedValues = std::map<long long, double>;

struct Verdict {
  std::string verdict = "not resolved";    // "held" | "did not hold" | "not resolved"
  std::string direction = "not resolved";  // the verdict if the boundary is excluded
  bool paired = false;
  int n = 0;                   // pairs (paired), the smaller side (Welch) or values (one arm)
  double estimate = NAN;       // mean difference a - b, the ratio, or the arm's mean
  double sd = NAN;             // of the differences (log ratios; the values for one arm)
  double lo = NAN, hi = NAN;   // 95% t-interval of the estimate
  double se = NAN, df = NAN;   // of the t statistic (log scale for ratios)
  double boundary = NAN;       // the decisive boundary, on the estimate's scale
  double p_value = NAN;        // two-sided, against no difference (ratio 1)
  double p_decisive = NAN;     // two-sided, against `boundary`
  double p_permutation = NAN;  // exact sign-flip, against `boundary`
  int seeds_to_resolve = 0;
};

Verdict judge_better(const KeyedValues& a, const KeyedValues& b, bool larger_is_better);
Verdict judge_within(const KeyedValues& a, const KeyedValues& b, double tolerance);
Verdict judge_ratio(const KeyedValues& a, const KeyedValues& b, double bound, bool at_most);
Verdict judge_at_most(const KeyedValues& a, double bound);

// The interval of a judged verdict at another level (e.g. 1 - 0.05 / looks), from its estimate,
// se and df (exponentiated for ratios); NaN bounds when it has none.
void interval_at_level(const Verdict& v, double level, bool ratio, double* lo, double* hi);

}  // namespace attn
