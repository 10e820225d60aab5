// Verdicts on a claim from per-seed (or per-round) values of two arms: the interval of the
// difference (or ratio), its bootstrap check, and held / did not hold / not resolved. What
// `attnlab reproduce` (app/cli/repro/repro_claims.h) judges each claim by. Torch-free.
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
  std::string verdict = "not resolved";  // "held" | "did not hold" | "not resolved"
  bool paired = false;
  int n = 0;                  // pairs (paired), the smaller side (Welch) or values (one arm)
  double estimate = NAN;      // mean difference a - b, the ratio, or the arm's mean
  double sd = NAN;            // of the differences (log ratios; the values for one arm)
  double lo = NAN, hi = NAN;  // 95% t-interval of the estimate
  double boot_lo = NAN, boot_hi = NAN;  // 95% percentile bootstrap interval
  double p_value = NAN;                 // two-sided, against no difference (ratio 1)
  int seeds_to_resolve = 0;
};

Verdict judge_better(const KeyedValues& a, const KeyedValues& b, bool larger_is_better);
Verdict judge_within(const KeyedValues& a, const KeyedValues& b, double tolerance);
Verdict judge_ratio(const KeyedValues& a, const KeyedValues& b, double bound, bool at_most);
Verdict judge_at_most(const KeyedValues& a, double bound);

}  // namespace attn
