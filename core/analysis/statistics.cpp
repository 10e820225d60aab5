#include "core/analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <limits>
#include <string>

#include "core/base/error.h"

namespace attn {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Continued fraction of the incomplete beta function (modified Lentz's method).
double beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300, eps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < eps) break;
  }
  return h;
}

// I_x(a, b), the regularised incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
               b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

void check_df(double df) {
  if (!(df > 0)) throw Error("Student t: degrees of freedom must be positive, got " + std::to_string(df));
}

}  // namespace

double student_t_cdf(double t, double df) {
  check_df(df);
  if (std::isnan(t)) return kNaN;
  // Near 0, P(|T| < |t|) = I_{t^2/(df+t^2)}(1/2, df/2) keeps its digits; in the tails the
  // complement I_{df/(df+t^2)}(df/2, 1/2) does.
  if (t * t < df) {
    const double centre = incomplete_beta(0.5, df / 2, t * t / (df + t * t));
    return t >= 0 ? 0.5 + 0.5 * centre : 0.5 - 0.5 * centre;
  }
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  check_df(df);
  if (!(p > 0 && p < 1))
    throw Error("Student t: the probability must be in (0, 1), got " + std::to_string(p));
  double lo = -1, hi = 1;
  while (student_t_cdf(lo, df) > p) lo *= 2;
  while (student_t_cdf(hi, df) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, std::fabs(hi)); ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

MeanInterval mean_interval(const std::vector<double>& values, double level) {
  MeanInterval r;
  double sum = 0;
  for (double v : values)
    if (std::isfinite(v)) sum += v, ++r.n;
  if (r.n == 0) {
    r.mean = r.sd = r.lo = r.hi = kNaN;
    return r;
  }
  r.mean = sum / r.n;
  double ss = 0;
  for (double v : values)
    if (std::isfinite(v)) ss += (v - r.mean) * (v - r.mean);
  if (r.n < 2) {
    r.sd = 0;
    r.lo = r.hi = kNaN;
    return r;
  }
  r.sd = std::sqrt(ss / (r.n - 1));
  const double half = student_t_quantile(0.5 + level / 2, r.n - 1) * r.sd / std::sqrt(r.n);
  r.lo = r.mean - half;
  r.hi = r.mean + half;
  return r;
}

PairedDifference paired_difference(const std::vector<double>& a, const std::vector<double>& b,
                                   double level) {
  if (a.size() != b.size())
    throw Error("paired difference: " + std::to_string(a.size()) + " values against " +
                std::to_string(b.size()) + " (pairs need one of each per seed)");
  std::vector<double> d;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::isfinite(a[i]) && std::isfinite(b[i])) d.push_back(a[i] - b[i]);
  PairedDifference r;
  r.difference = mean_interval(d, level);
  if (r.difference.n < 2) {
    r.p_value = kNaN;
  } else if (r.difference.sd == 0) {
    r.p_value = r.difference.mean == 0 ? 1.0 : 0.0;
  } else {
    const double t = r.difference.mean / (r.difference.sd / std::sqrt(r.difference.n));
    r.p_value = 2 * student_t_cdf(-std::fabs(t), r.difference.n - 1);
  }
  return r;
}

PairedDifference welch_difference(const std::vector<double>& a, const std::vector<double>& b,
                                  double level) {
  const MeanInterval x = mean_interval(a, level), y = mean_interval(b, level);
  PairedDifference r;
  r.difference.n = std::min(x.n, y.n);
  r.difference.mean = x.mean - y.mean;
  r.difference.lo = r.difference.hi = r.p_value = kNaN;
  if (x.n < 2 || y.n < 2) return r;
  const double vx = x.sd * x.sd / x.n, vy = y.sd * y.sd / y.n, se = std::sqrt(vx + vy);
  r.difference.sd = se;
  if (se == 0) {
    r.difference.lo = r.difference.hi = r.difference.mean;
    r.p_value = r.difference.mean == 0 ? 1.0 : 0.0;
    return r;
  }
  const double df = (vx + vy) * (vx + vy) /
                    (vx * vx / (x.n - 1) + vy * vy / (y.n - 1));
  const double half = student_t_quantile(0.5 + level / 2, df) * se;
  r.difference.lo = r.difference.mean - half;
  r.difference.hi = r.difference.mean + half;
  r.p_value = 2 * student_t_cdf(-std::fabs(r.difference.mean / se), df);
  return r;
}

namespace {

std::vector<double> finite_values(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (std::isfinite(x)) out.push_back(x);
  return out;
}

double resampled_mean(const std::vector<double>& v, std::mt19937& rng) {
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  double sum = 0;
  for (size_t i = 0; i < v.size(); ++i) sum += v[pick(rng)];
  return sum / v.size();
}

Interval percentile_interval(std::vector<double> means, double level) {
  std::sort(means.begin(), means.end());
  const double tail = (1 - level) / 2;
  auto at = [&](double q) {
    const double pos = q * (means.size() - 1);
    const size_t i = static_cast<size_t>(pos);
    const double f = pos - i;
    return i + 1 < means.size() ? means[i] * (1 - f) + means[i + 1] * f : means[i];
  };
  return {at(tail), at(1 - tail)};
}

}  // namespace

Interval bootstrap_mean_interval(const std::vector<double>& values, double level, int resamples,
                                 unsigned seed) {
  const std::vector<double> v = finite_values(values);
  if (v.size() < 2 || resamples < 2) return {kNaN, kNaN};
  std::mt19937 rng(seed);
  std::vector<double> means(resamples);
  for (auto& m : means) m = resampled_mean(v, rng);
  return percentile_interval(std::move(means), level);
}

Interval bootstrap_difference_interval(const std::vector<double>& a, const std::vector<double>& b,
                                       double level, int resamples, unsigned seed) {
  const std::vector<double> x = finite_values(a), y = finite_values(b);
  if (x.size() < 2 || y.size() < 2 || resamples < 2) return {kNaN, kNaN};
  std::mt19937 rng(seed);
  std::vector<double> diffs(resamples);
  for (auto& d : diffs) d = resampled_mean(x, rng) - resampled_mean(y, rng);
  return percentile_interval(std::move(diffs), level);
}

int pairs_to_resolve(double mean, double sd, double level) {
  if (mean == 0 || !std::isfinite(mean) || !std::isfinite(sd)) return 0;
  for (int n = 2; n <= 10000; ++n)
    if (student_t_quantile(0.5 + level / 2, n - 1) * sd / std::sqrt(n) < std::fabs(mean)) return n;
  return 10000;
}

}  // namespace attn
