// Intervals over seeds (core/analysis/statistics.h) against printed t tables and sums worked by
// hand.
#include <doctest/doctest.h>

#include <cmath>

#include "core/analysis/statistics.h"
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
