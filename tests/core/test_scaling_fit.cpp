// core/analysis/scaling_fit.h: the log-log slopes of `attnlab reproduce`'s scaling claims
// (issue 49, item 5), checked against the normal equations solved by Cramer's rule in long
// double, and the verdict rule "slope at most 1.2" flipping at its boundary.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/analysis/scaling_fit.h"
#include "core/analysis/verdict.h"

using namespace attn;

namespace {

// Brute force: [n, Sx; Sx, Sxx] [a; b] = [Sy; Sxy], solved for b by Cramer's rule (uncentred,
// a different formula from the centred one under test).
double normal_equation_slope(const std::vector<double>& x, const std::vector<double>& y) {
  long double n = x.size(), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i], sy += y[i], sxx += (long double)x[i] * x[i], sxy += (long double)x[i] * y[i];
  }
  return static_cast<double>((n * sxy - sx * sy) / (n * sxx - sx * sx));
}

double sse(const std::vector<double>& x, const std::vector<double>& y, double b) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i] / x.size(), my += y[i] / y.size();
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += std::pow(y[i] - (my + b * (x[i] - mx)), 2);
  return s;
}

// Rounds of a cost y = 0.003 L^b at L 256..2048, each round's figures scaled by a fixed,
// deterministic "load" wobble of +-3%, as a shared machine gives.
std::vector<std::vector<double>> rounds_of(double b) {
  const double wobble[5][4] = {{1.02, 0.99, 1.01, 0.98},
                               {0.97, 1.03, 1.00, 1.02},
                               {1.01, 1.00, 0.98, 1.01},
                               {0.99, 1.02, 1.03, 0.99},
                               {1.00, 0.98, 1.00, 1.03}};
  std::vector<std::vector<double>> out(5);
  const double L[4] = {256, 512, 1024, 2048};
  for (int r = 0; r < 5; ++r)
    for (int i = 0; i < 4; ++i) out[r].push_back(0.003 * std::pow(L[i], b) * wobble[r][i]);
  return out;
}

}  // namespace

TEST_CASE("scaling fit: the least-squares slope is the normal equations' and minimises the SSE") {
  const std::vector<double> x = {256, 512, 1024, 2048, 4096};
  const std::vector<double> y = {0.11, 0.19, 0.43, 0.80, 1.71};
  const double b = least_squares_slope(x, y);
  CHECK(b == doctest::Approx(normal_equation_slope(x, y)).epsilon(1e-12));
  CHECK(sse(x, y, b) < sse(x, y, b + 1e-6));
  CHECK(sse(x, y, b) < sse(x, y, b - 1e-6));
  CHECK(std::isnan(least_squares_slope({3, 3, 3}, {1, 2, 3})));  // no spread in x
  CHECK(std::isnan(least_squares_slope({1}, {1})));
}

TEST_CASE("scaling fit: a power law's log-log slope is its exponent") {
  const std::vector<double> x = {32, 64, 128, 1024};
  for (double e : {0.5, 1.0, 1.7, 2.0}) {
    std::vector<double> y;
    for (double v : x) y.push_back(3.5 * std::pow(v, e));
    CHECK(loglog_slope(x, y) == doctest::Approx(e).epsilon(1e-12));
    std::vector<double> lx, ly;
    for (size_t i = 0; i < x.size(); ++i)
      lx.push_back(std::log(x[i])), ly.push_back(std::log(y[i]));
    CHECK(loglog_slope(x, y) == doctest::Approx(normal_equation_slope(lx, ly)).epsilon(1e-12));
  }
  CHECK(std::isnan(loglog_slope({1, 2}, {1, 0})));  // a non-positive cost has no logarithm
  CHECK(std::isnan(loglog_slope({0, 2}, {1, 2})));
}

TEST_CASE("scaling fit: the verdict 'slope at most 1.2' flips at its boundary") {
  const std::vector<double> L = {256, 512, 1024, 2048};
  const KeyedValues below = round_slopes(L, rounds_of(1.1));
  REQUIRE(below.size() == 5);
  for (const auto& [r, s] : below) CHECK(std::fabs(s - 1.1) < 0.05);
  CHECK(judge_at_most(below, 1.2).verdict == "held");
  CHECK(judge_at_most(round_slopes(L, rounds_of(1.3)), 1.2).verdict == "did not hold");
  // At the boundary itself the interval straddles it.
  const Verdict at = judge_at_most(round_slopes(L, rounds_of(1.2)), 1.2);
  CHECK(at.verdict == "not resolved");
  CHECK(at.lo < 1.2);
  CHECK(at.hi > 1.2);
  // A linear cost (ky's claim) against a quadratic one (dot's scores): both sides of 1.2.
  CHECK(judge_at_most(round_slopes(L, rounds_of(1.0)), 1.2).verdict == "held");
  CHECK(judge_at_most(round_slopes(L, rounds_of(2.0)), 1.2).verdict == "did not hold");
}
