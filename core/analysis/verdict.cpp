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

// A verdict's figures (not yet judged): the t-interval `m` of the estimate and its bootstrap
// interval `boot`.
Verdict estimated(const MeanInterval& m, const Interval& boot) {
  Verdict r;
  r.n = m.n;
  r.estimate = m.mean;
  r.sd = m.sd;
  r.lo = m.lo;
  r.hi = m.hi;
  r.boot_lo = boot.lo;
  r.boot_hi = boot.hi;
  return r;
}

// a - b (of logs when `log`), paired on common keys when at least two pair, else Welch.
Verdict compare(const KeyedValues& a, const KeyedValues& b, bool log) {
  std::vector<double> x, y;
  for (const auto& [key, v] : a)
    if (const auto it = b.find(key); it != b.end()) {
      x.push_back(log ? std::log(v) : v);
      y.push_back(log ? std::log(it->second) : it->second);
    }
  PairedDifference d;
  Interval boot{NAN, NAN};
  bool paired = false;
  if (x.size() >= 2) {
    d = paired_difference(x, y);
    std::vector<double> diffs;
    for (size_t i = 0; i < x.size(); ++i) diffs.push_back(x[i] - y[i]);
    boot = bootstrap_mean_interval(diffs);
    paired = true;
  } else {
    const auto xa = values_of(a, log), yb = values_of(b, log);
    d = welch_difference(xa, yb);
    boot = bootstrap_difference_interval(xa, yb);
  }
  Verdict r = estimated(d.difference, boot);
  r.paired = paired;
  r.p_value = d.p_value;
  return r;
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

void resolve_count(Verdict& r, double margin) {
  if (r.verdict == "not resolved" && r.paired) r.seeds_to_resolve = pairs_to_resolve(margin, r.sd);
}

}  // namespace

Verdict judge_better(const KeyedValues& a, const KeyedValues& b, bool larger_is_better) {
  Verdict r = compare(a, b, false);
  r.verdict = side(r.lo, r.hi, 0.0, larger_is_better, false);
  resolve_count(r, r.estimate);
  return r;
}

Verdict judge_within(const KeyedValues& a, const KeyedValues& b, double tolerance) {
  Verdict r = compare(a, b, false);
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi))
    r.verdict = "not resolved";
  else if (r.lo >= -tolerance && r.hi <= tolerance)
    r.verdict = "held";
  else if (r.lo > tolerance || r.hi < -tolerance)
    r.verdict = "did not hold";
  else
    r.verdict = "not resolved";
  resolve_count(r, tolerance - std::fabs(r.estimate));
  return r;
}

Verdict judge_ratio(const KeyedValues& a, const KeyedValues& b, double bound, bool at_most) {
  Verdict r = compare(a, b, true);
  const double log_mean = r.estimate;
  r.estimate = std::exp(r.estimate);
  r.lo = std::exp(r.lo);
  r.hi = std::exp(r.hi);
  r.boot_lo = std::exp(r.boot_lo);
  r.boot_hi = std::exp(r.boot_hi);
  r.verdict = side(r.lo, r.hi, bound, !at_most, true);
  resolve_count(r, log_mean - std::log(bound));
  return r;
}

Verdict judge_at_most(const KeyedValues& a, double bound) {
  const std::vector<double> v = values_of(a, false);
  const MeanInterval m = mean_interval(v);
  Verdict r = estimated(m, bootstrap_mean_interval(v));
  r.verdict = side(m.lo, m.hi, bound, false, true);
  if (r.verdict == "not resolved") r.seeds_to_resolve = pairs_to_resolve(m.mean - bound, m.sd);
  return r;
}

}  // namespace attn
