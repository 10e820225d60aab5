// Intervals over seeds (core/analysis/statistics.h) against printed t tables and sums worked by
// hand.
#include <doctest/doctest.h>

#include <cmath>

#include "core/analysis/statistics.h"
#include "core/analysis/verdict.h"
#include "core/base/error.h"

using namespace attn;

TEST_CASE("student t: quantiles match the printed table, the cdf inverts them") {
  // Two-sided 95% critical values (t_{0.975}) from a standard table.
  const std::pair<double, double> table[] = {{1, 12.706}, {2, 4.303}, {3, 3.182}, {4, 2.776},
                                             {9, 2.262},  {29, 2.045}, {120, 1.980}};
  for (const auto& [df, t] : table) {
    CAPTURE(df);
    CHECK(student_t_quantile(0.975, df) == doctest::Approx(t).epsilon(2e-4));
    CHECK(student_t_cdf(t, df) == doctest::Approx(0.975).epsilon(1e-4));
    CHECK(student_t_cdf(-t, df) == doctest::Approx(0.025).epsilon(1e-3));
  }
  CHECK(std::fabs(student_t_quantile(0.5, 5)) < 1e-10);
  CHECK(student_t_cdf(0.0, 7) == 0.5);
  CHECK(student_t_quantile(0.995, 4) == doctest::Approx(4.604).epsilon(2e-4));
  // df 1 is the Cauchy distribution: cdf(t) = 1/2 + atan(t)/pi.
  CHECK(student_t_cdf(3.0, 1) == doctest::Approx(0.5 + std::atan(3.0) / M_PI).epsilon(1e-12));
  CHECK_THROWS_AS(student_t_quantile(1.0, 3), Error);
  CHECK_THROWS_AS(student_t_cdf(1.0, 0), Error);
}

TEST_CASE("mean interval: by hand") {
  // 1..5: mean 3, sd sqrt(2.5), half-width t_{0.975,4} * sd / sqrt(5) = 2.7764 * 0.70711.
  const MeanInterval m = mean_interval({1, 2, 3, 4, 5});
  CHECK(m.n == 5);
  CHECK(m.mean == doctest::Approx(3));
  CHECK(m.sd == doctest::Approx(std::sqrt(2.5)));
  CHECK(m.lo == doctest::Approx(3 - 2.776445 * std::sqrt(2.5) / std::sqrt(5.0)).epsilon(1e-5));
  CHECK(m.hi == doctest::Approx(3 + 2.776445 * std::sqrt(2.5) / std::sqrt(5.0)).epsilon(1e-5));
  const MeanInterval one = mean_interval({0.7, NAN});
  CHECK(one.n == 1);
  CHECK(one.mean == doctest::Approx(0.7));
  CHECK(std::isnan(one.lo));
}

TEST_CASE("paired difference: the differences' interval and p-value") {
  // Differences 0.5, 1.5, 1.0, 1.0: mean 1, sd sqrt(1/6), t = 1 / (sd / 2) = 4.899 on 3 df.
  const PairedDifference d = paired_difference({2.5, 3.5, 4.0, 5.0}, {2.0, 2.0, 3.0, 4.0});
  CHECK(d.difference.n == 4);
  CHECK(d.difference.mean == doctest::Approx(1.0));
  CHECK(d.difference.sd == doctest::Approx(std::sqrt(1.0 / 6)));
  const double half = 3.182446 * std::sqrt(1.0 / 6) / 2;
  CHECK(d.difference.lo == doctest::Approx(1 - half).epsilon(1e-5));
  CHECK(d.difference.hi == doctest::Approx(1 + half).epsilon(1e-5));
  // Two-sided p of t = 4.899 on 3 df: 2 * (1 - F(4.899)); F from the cdf, checked against the
  // table: t_{0.99,3} = 4.541 < 4.899 < t_{0.995,3} = 5.841, so 0.01 < p < 0.02.
  CHECK(d.p_value > 0.01);
  CHECK(d.p_value < 0.02);
  CHECK(d.p_value == doctest::Approx(2 * student_t_cdf(-4.898979, 3)).epsilon(1e-6));
  CHECK_THROWS_AS(paired_difference({1, 2}, {1}), Error);
  // Resolving: with mean 1 and sd 2, n must satisfy t_{n-1} * 2 / sqrt(n) < 1 (n = 18 does).
  const int n = pairs_to_resolve(1.0, 2.0);
  CHECK(student_t_quantile(0.975, n - 1) * 2 / std::sqrt(n) < 1.0);
  CHECK(student_t_quantile(0.975, n - 2) * 2 / std::sqrt(n - 1) >= 1.0);
}

// Issue 34: verdicts from intervals (core/analysis/verdict.h), against values computed by hand.
TEST_CASE("verdict: the pseudo 'within 1 point' claim of the kernel reproduction is not resolved") {
  // Final test accuracies of the committed 2026-11-26 kernel report (docs/repro/kernel/loss.csv,
  // step 2500), seeds 1-3: pseudo against dot.
  const KeyedValues dot = {{1, 0.8705}, {2, 0.8765}, {3, 0.8690}};
  const KeyedValues pseudo = {{1, 0.8645}, {2, 0.8550}, {3, 0.8600}};
  const Verdict v = judge_within(pseudo, dot, 0.01);
  // Differences -0.0060, -0.0215, -0.0090: mean -0.0121667, sd 0.0082209; t(0.975, 2) = 4.303
  // from the table, half-width 4.303 * 0.0082209 / sqrt(3) = 0.0204236.
  CHECK(v.paired);
  CHECK(v.n == 3);
  CHECK(v.estimate == doctest::Approx(-0.0121667).epsilon(1e-4));
  CHECK(v.lo == doctest::Approx(-0.0121667 - 0.0204236).epsilon(1e-3));
  CHECK(v.hi == doctest::Approx(-0.0121667 + 0.0204236).epsilon(1e-3));
  // The interval holds -0.01: neither inside [-0.01, 0.01] nor wholly outside it.
  CHECK(v.verdict == "not resolved");
  CHECK(v.seeds_to_resolve > 3);
  // The old rule (difference of means within the tolerance) would have said "did not hold".
  CHECK(std::fabs(v.estimate) > 0.01);
}

TEST_CASE("verdict: better holds, fails and stays unresolved by the interval's side") {
  // Paired differences 1, 2, 3: mean 2, sd 1, half-width 4.303 / sqrt(3) = 2.4843: [-0.48, 4.48].
  const KeyedValues base = {{1, 10}, {2, 10}, {3, 10}};
  const KeyedValues up = {{1, 11}, {2, 12}, {3, 13}};
  Verdict v = judge_better(up, base, true);
  CHECK(v.lo == doctest::Approx(2 - 2.48434).epsilon(1e-3));
  CHECK(v.verdict == "not resolved");
  // 4.303 * 1 / sqrt(n) < 2 first at n = 4? t(0.975, 3) = 3.182: 3.182 / 2 = 1.591 < 2: yes.
  CHECK(v.seeds_to_resolve == 4);
  // Differences 2.0, 2.1, 1.9: the interval [1.75, 2.25] excludes 0 upward.
  const KeyedValues clear = {{1, 12.0}, {2, 12.1}, {3, 11.9}};
  CHECK(judge_better(clear, base, true).verdict == "held");
  CHECK(judge_better(clear, base, false).verdict == "did not hold");  // a loss going up
  CHECK(judge_better(base, clear, false).verdict == "held");          // a loss going down
  // Only one seed pairs: Welch's interval over the two sides.
  const KeyedValues other_seeds = {{7, 12.0}, {8, 12.1}, {9, 11.9}};
  v = judge_better(other_seeds, base, true);
  CHECK_FALSE(v.paired);
  // base has sd 0, other_seeds sd 0.1: se 0.1 / sqrt(3) = 0.05774, Welch df 2, half-width
  // 4.303 * 0.05774 = 0.2484: [1.75, 2.25] excludes 0.
  CHECK(v.lo == doctest::Approx(2 - 0.2484).epsilon(1e-3));
  CHECK(v.verdict == "held");
}

TEST_CASE("welch_difference: degrees of freedom and interval by hand") {
  // a: mean 12, variance 4; b: mean 2, variance 1. se^2 = 4/3 + 1/3 = 5/3; df =
  // (5/3)^2 / ((4/3)^2 / 2 + (1/3)^2 / 2) = 2.7778 / 0.94444 = 2.9412.
  const PairedDifference d = welch_difference({10, 12, 14}, {1, 2, 3});
  const double se = std::sqrt(5.0 / 3.0), half = student_t_quantile(0.975, 2.9412) * se;
  CHECK(d.difference.mean == doctest::Approx(10));
  CHECK(d.difference.lo == doctest::Approx(10 - half).epsilon(1e-4));
  CHECK(d.difference.hi == doctest::Approx(10 + half).epsilon(1e-4));
  CHECK(student_t_quantile(0.975, 2.9412) > 3.182);  // between the table's df 3 and df 2
  CHECK(student_t_quantile(0.975, 2.9412) < 4.303);
}

TEST_CASE("bootstrap intervals: inside the data's range, around the mean, reproducible") {
  const std::vector<double> v = {1, 2, 3, 4, 5};
  const Interval a = bootstrap_mean_interval(v), b = bootstrap_mean_interval(v);
  CHECK(a.lo == b.lo);  // a fixed seed: a report reproduces
  CHECK(a.lo >= 1);
  CHECK(a.hi <= 5);
  CHECK(a.lo < 3);
  CHECK(a.hi > 3);
  CHECK(std::isnan(bootstrap_mean_interval({1}).lo));
  const Interval d = bootstrap_difference_interval({10, 11, 12}, {1, 2, 3});
  CHECK(d.lo >= 7);  // the extreme resamples: 10 - 3 and 12 - 1
  CHECK(d.hi <= 11);
}

TEST_CASE("ratio and at_most verdicts: bounds count as the claimed side") {
  // Per-round speeds with ratio exactly 0.5 each round: interval [0.5, 0.5].
  const KeyedValues a = {{0, 5}, {1, 6}, {2, 7}}, b = {{0, 10}, {1, 12}, {2, 14}};
  CHECK(judge_ratio(a, b, 0.5, true).verdict == "held");
  CHECK(judge_ratio(a, b, 0.6, false).verdict == "did not hold");
  CHECK(judge_ratio(a, b, 0.5, false).verdict == "held");
  CHECK(judge_ratio(a, b, 0.5, true).estimate == doctest::Approx(0.5));
  // A spectral radius held at its limit on every seed holds "at most 0.95".
  CHECK(judge_at_most({{1, 0.95}, {2, 0.95}, {3, 0.95}}, 0.95).verdict == "held");
  CHECK(judge_at_most({{1, 0.960}, {2, 0.961}, {3, 0.962}}, 0.95).verdict == "did not hold");
  CHECK(judge_at_most({{1, 0.90}, {2, 0.99}}, 0.95).verdict == "not resolved");
}
