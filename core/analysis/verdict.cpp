#include "core/analysis/verdict.h"

#include <algorithm>
#include <vector>

#include "core/analysis/statistics.h"

namespace attn {
namespace {

std::vector<double> values_of(const KeyedValues& k, bool log) {
  std::vector<double> out;
  for (const auto& [key, v] : k) out.push_back(log ? std::log(v) : v);
  return out;
}

// A verdict's figures (not yet judged) from the t statistic of `d`.
Verdict estimated(const PairedDifference& d) {
  Verdict r;
  r.n = d.difference.n;
  r.estimate = d.difference.mean;
  r.sd = d.difference.sd;
  r.lo = d.difference.lo;
  r.hi = d.difference.hi;
  r.se = d.se;
  r.df = d.df;
  r.p_value = d.p_value;
  return r;
}

// a - b (of logs when `log`), paired on common keys when at least two pair, else Welch.
// diffs: the paired differences (empty when unpaired), for the sign-flip check.
Verdict compare(const KeyedValues& a, const KeyedValues& b, bool log, std::vector<double>* diffs) {
  std::vector<double> x, y;
  for (const auto& [key, v] : a)
    if (const auto it = b.find(key); it != b.end()) {
      x.push_back(log ? std::log(v) : v);
      y.push_back(log ? std::log(it->second) : it->second);
    }
  if (x.size() >= 2) {
    Verdict r = estimated(paired_difference(x, y));
    for (size_t i = 0; i < x.size(); ++i) diffs->push_back(x[i] - y[i]);
    r.paired = true;
    return r;
  }
  return estimated(welch_difference(values_of(a, log), values_of(b, log)));
}

// The verdict of an interval against the claimed side of `bound`. `above`: the claim puts the
// quantity above the bound. `inclusive`: the bound itself is on the claimed side ("at most
// 0.95" holds at 0.95; "better" needs a difference, not zero).
std::string side(double lo, double hi, double bound, bool above, bool inclusive) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return "not resolved";
  // Inclusive bounds forgive rounding: a ratio of exactly 0.5 computed through logs.
  const double slack = inclusive ? 1e-9 * std::max(1.0, std::fabs(bound)) : 0.0;
  if (above ? (inclusive ? lo >= bound - slack : lo > bound)
            : (inclusive ? hi <= bound + slack : hi < bound))
    return "held";
  if (above ? hi < bound : lo > bound) return "did not hold";
  return "not resolved";
}

// The test against the decisive boundary: its p, the sign-flip check and the direction (the
// verdict an excluded boundary gives: the estimate's side of it).
void decide(Verdict& r, double boundary, bool held_above, const std::vector<double>& diffs) {
  r.boundary = boundary;
  r.p_decisive = t_test_p(r.estimate, boundary, r.se, r.df);
  if (!diffs.empty()) r.p_permutation = sign_flip_p_value(diffs, boundary);
  if (std::isfinite(r.estimate) && r.estimate != boundary)
    r.direction = (r.estimate > boundary) == held_above ? "held" : "did not hold";
}

void resolve_count(Verdict& r, double margin) {
  if (r.verdict == "not resolved" && r.paired) r.seeds_to_resolve = pairs_to_resolve(margin, r.sd);
}

}  // namespace

Verdict judge_better(const KeyedValues& a, const KeyedValues& b, bool larger_is_better) {
  std::vector<double> diffs;
  Verdict r = compare(a, b, false, &diffs);
  r.verdict = side(r.lo, r.hi, 0.0, larger_is_better, false);
  decide(r, 0.0, larger_is_better, diffs);
  resolve_count(r, r.estimate);
  return r;
}

Verdict judge_within(const KeyedValues& a, const KeyedValues& b, double tolerance) {
  std::vector<double> diffs;
  Verdict r = compare(a, b, false, &diffs);
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi))
    r.verdict = "not resolved";
  else if (r.lo >= -tolerance && r.hi <= tolerance)
    r.verdict = "held";
  else if (r.lo > tolerance || r.hi < -tolerance)
    r.verdict = "did not hold";
  else
    r.verdict = "not resolved";
  // The tolerance nearer the estimate decides: inside it the claim holds when the interval
  // excludes it, outside it the claim fails when the interval does.
  const double bound = r.estimate >= 0 ? tolerance : -tolerance;
  decide(r, bound, r.estimate < 0, diffs);
  resolve_count(r, tolerance - std::fabs(r.estimate));
  return r;
}

Verdict judge_ratio(const KeyedValues& a, const KeyedValues& b, double bound, bool at_most) {
  std::vector<double> diffs;
  Verdict r = compare(a, b, true, &diffs);
  const double log_mean = r.estimate;
  decide(r, std::log(bound), !at_most, diffs);
  r.boundary = bound;
  r.estimate = std::exp(r.estimate);
  r.lo = std::exp(r.lo);
  r.hi = std::exp(r.hi);
  r.verdict = side(r.lo, r.hi, bound, !at_most, true);
  resolve_count(r, log_mean - std::log(bound));
  return r;
}

Verdict judge_at_most(const KeyedValues& a, double bound) {
  const std::vector<double> v = values_of(a, false);
  PairedDifference d;
  d.difference = mean_interval(v);
  if (d.difference.n >= 2) {
    d.se = d.difference.sd / std::sqrt(d.difference.n);
    d.df = d.difference.n - 1;
  }
  d.p_value = NAN;
  Verdict r = estimated(d);
  r.verdict = side(r.lo, r.hi, bound, false, true);
  decide(r, bound, false, d.difference.n >= 2 ? v : std::vector<double>{});
  if (r.verdict == "not resolved") r.seeds_to_resolve = pairs_to_resolve(r.estimate - bound, r.sd);
  return r;
}

void interval_at_level(const Verdict& v, double level, bool ratio, double* lo, double* hi) {
  *lo = *hi = NAN;
  if (!std::isfinite(v.se) || !std::isfinite(v.df) || v.df <= 0) return;
  const double centre = ratio ? std::log(v.estimate) : v.estimate;
  const double half = student_t_quantile(0.5 + level / 2, v.df) * v.se;
  *lo = ratio ? std::exp(centre - half) : centre - half;
  *hi = ratio ? std::exp(centre + half) : centre + half;
}

}  // namespace attn
