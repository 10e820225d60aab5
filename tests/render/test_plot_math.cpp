// EMA, ranges and axis ticks (render/plot/plot_math.h).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "render/plot/plot_math.h"

using namespace attn::render;

namespace {

// Closed form of the debiased EMA at step t (1-based): sum (1-b) b^(t-i) x_i / (1 - b^t).
double ema_brute(const std::vector<float>& x, size_t t, double beta) {
  double sum = 0;
  for (size_t i = 1; i <= t; ++i) sum += (1 - beta) * std::pow(beta, double(t - i)) * x[i - 1];
  return sum / (1 - std::pow(beta, double(t)));
}

bool is_nice(double step) {
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
  for (double m : {1.0, 2.0, 5.0})
    if (std::fabs(mantissa - m) < 1e-9 * m) return true;
  return false;
}

}  // namespace

TEST_CASE("debiased EMA equals the closed-form weighted mean") {
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(2.0f, 1.0f);
  std::vector<float> x(300);
  for (auto& v : x) v = noise(rng);
  for (double beta : {0.0, 0.5, 0.9, 0.99}) {
    const std::vector<float> y = ema_debiased(x, beta);
    REQUIRE(y.size() == x.size());
    for (size_t t = 1; t <= x.size(); t += 7)
      CHECK(y[t - 1] == doctest::Approx(ema_brute(x, t, beta)).epsilon(1e-5));
  }
}

TEST_CASE("debiasing: first value is the first sample, constants stay constant") {
  const std::vector<float> x = {3.5f, 1.0f, 2.0f};
  CHECK(ema_debiased(x, 0.99)[0] == doctest::Approx(3.5));
  const std::vector<float> flat(50, 4.25f);
  for (float v : ema_debiased(flat, 0.95)) CHECK(v == doctest::Approx(4.25));
  // A biased EMA would start at (1-b)*x = 0.2125 here.
  CHECK(ema_debiased(flat, 0.95)[1] == doctest::Approx(4.25));
}

TEST_CASE("EMA skips non-finite samples instead of propagating them") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> y = ema_debiased({1.0f, nan, 3.0f}, 0.5);
  CHECK(y[1] == doctest::Approx(1.0));
  CHECK(y[2] == doctest::Approx(ema_brute({1.0f, 3.0f}, 2, 0.5)));
  CHECK(std::isnan(ema_debiased({nan}, 0.5)[0]));
}

TEST_CASE("nice_step rounds up to 1, 2 or 5 times a power of ten") {
  CHECK(nice_step(0.7) == doctest::Approx(1.0));
  CHECK(nice_step(1.0) == doctest::Approx(1.0));
  CHECK(nice_step(1.1) == doctest::Approx(2.0));
  CHECK(nice_step(0.2) == doctest::Approx(0.2));
  CHECK(nice_step(3) == doctest::Approx(5.0));
  CHECK(nice_step(6e-4) == doctest::Approx(1e-3));
  CHECK(nice_step(420) == doctest::Approx(500));
}

TEST_CASE("linear ticks cover the range with nice steps") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> exponent(-6, 6), unit(-1, 1), width(0.01, 10);
  for (int trial = 0; trial < 2000; ++trial) {
    const double scale = std::pow(10.0, exponent(rng));
    const double lo = unit(rng) * scale, hi = lo + width(rng) * scale;
    const int target = 2 + trial % 8;
    const Ticks t = linear_ticks(lo, hi, target);
    INFO("lo=" << lo << " hi=" << hi << " target=" << target);
    REQUIRE(t.step > 0);
    CHECK(is_nice(t.step));
    REQUIRE(t.values.size() >= 2);
    CHECK(t.values.size() <= size_t(2 * target + 1));
    CHECK(t.values.front() - lo < t.step * (1 + 1e-9));
    CHECK(hi - t.values.back() < t.step * (1 + 1e-9));
    for (size_t i = 0; i < t.values.size(); ++i) {
      CHECK(t.values[i] >= lo);
      CHECK(t.values[i] <= hi);
      const double k = t.values[i] / t.step;  // on the grid of the step
      CHECK(std::fabs(k - std::round(k)) < 1e-6);
      if (i > 0) CHECK(t.values[i] - t.values[i - 1] == doctest::Approx(t.step));
    }
  }
}

TEST_CASE("linear ticks on a familiar range") {
  const Ticks t = linear_ticks(0.0, 1.0, 5);
  CHECK(t.step == doctest::Approx(0.2));
  REQUIRE(t.values.size() == 6);
  CHECK(t.values[3] == doctest::Approx(0.6));
  CHECK(format_tick(t.values[3], t) == "0.6");
  CHECK(format_tick(-0.0, t) == "0");
  const Ticks big = linear_ticks(0, 2000, 4);
  CHECK(format_tick(1500, big) == "1500");
}

TEST_CASE("log ticks sit on decades") {
  const Ticks t = log_ticks(0.01, 1000);
  REQUIRE(t.values.size() == 6);
  for (size_t i = 0; i < t.values.size(); ++i)
    CHECK(t.values[i] == doctest::Approx(std::pow(10.0, double(i) - 2)));
  CHECK(format_tick(0.01, t) == "0.01");
  // Too many decades: every m-th, still decades, at most max_count.
  const Ticks wide = log_ticks(1e-12, 1e12, 6);
  CHECK(wide.values.size() <= 6);
  CHECK(wide.values.size() >= 2);
  for (double v : wide.values) CHECK(std::fabs(std::log10(v) - std::round(std::log10(v))) < 1e-9);
  // Two decades: 1-2-5 steps, so the axis has more than two labels.
  const Ticks two = log_ticks(0.08, 3.0);
  const std::vector<double> expected2 = {0.1, 0.2, 0.5, 1, 2};
  REQUIRE(two.values.size() == expected2.size());
  for (size_t i = 0; i < expected2.size(); ++i)
    CHECK(two.values[i] == doctest::Approx(expected2[i]));
  // Less than two decades: 1-2-5 steps inside the range.
  const Ticks narrow = log_ticks(0.3, 4.0);
  const std::vector<double> expected = {0.5, 1, 2};
  REQUIRE(narrow.values.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    CHECK(narrow.values[i] == doctest::Approx(expected[i]));
  // Narrower still: linear ticks, inside the range.
  const Ticks tiny = log_ticks(2.1, 2.4);
  CHECK(tiny.values.size() >= 2);
  for (double v : tiny.values) CHECK((v >= 2.1 && v <= 2.4));
}

TEST_CASE("ranges ignore non-finite values and pad degenerate spans") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v = {2.0f, -1.0f, inf, std::nanf(""), 5.0f};
  Range r = value_range(v.data(), v.size());
  CHECK(r.lo == -1.0);
  CHECK(r.hi == 5.0);
  r = value_range(v.data(), v.size(), /*positive_only=*/true);
  CHECK(r.lo == 2.0);
  CHECK(value_range(v.data(), 0).empty());
  const Range flat = padded({3.0, 3.0}, 0.05, false);
  CHECK(flat.lo < 3.0);
  CHECK(flat.hi > 3.0);
  const Range lg = padded({0.1, 10.0}, 0.1, true);
  CHECK(lg.lo == doctest::Approx(std::pow(10.0, -1.2)));
  CHECK(lg.hi == doctest::Approx(std::pow(10.0, 1.2)));
  const Range m = merge({0, 1}, {-2, 0.5});
  CHECK(m.lo == -2);
  CHECK(m.hi == 1);
}
