#include "core/analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

void check_df(double df) {
  if (!(df > 0))
    throw Error("Student t: degrees of freedom must be positive, got " + std::to_string(df));
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
  if (r.difference.n >= 2) {
    r.se = r.difference.sd / std::sqrt(r.difference.n);
    r.df = r.difference.n - 1;
  }
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

double t_test_p(double estimate, double boundary, double se, double df) {
  if (!std::isfinite(se) || !std::isfinite(df) || !std::isfinite(estimate) || df <= 0) return kNaN;
  if (se == 0) return estimate == boundary ? 1.0 : 0.0;
  return 2 * student_t_cdf(-std::fabs((estimate - boundary) / se), df);
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
  const double df = (vx + vy) * (vx + vy) / (vx * vx / (x.n - 1) + vy * vy / (y.n - 1));
  r.se = se;
  r.df = df;
  const double half = student_t_quantile(0.5 + level / 2, df) * se;
  r.difference.lo = r.difference.mean - half;
  r.difference.hi = r.difference.mean + half;
  r.p_value = 2 * student_t_cdf(-std::fabs(r.difference.mean / se), df);
  return r;
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (!(a > 0 && b > 0)) throw Error("incomplete beta: a and b must be positive");
  return incomplete_beta(a, b, x);
}

namespace {

// The x in [0, 1] with I_x(a, b) = p (I_x rises with x).
double beta_quantile(double p, double a, double b) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (incomplete_beta(a, b, mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

void check_counts(int k, int n, const char* what) {
  if (n < 0 || k < 0 || k > n)
    throw Error(std::string(what) + ": solved count " + std::to_string(k) + " of " +
                std::to_string(n) + " (need 0 <= k <= n)");
}

double log_choose(int n, int k) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

}  // namespace

Interval clopper_pearson(int k, int n, double level) {
  check_counts(k, n, "Clopper-Pearson interval");
  if (n < 1) throw Error("Clopper-Pearson interval: needs at least one trial");
  const double alpha = 1 - level;
  // P(X >= k | p_lo) = alpha/2 and P(X <= k | p_hi) = alpha/2, through the beta distribution.
  Interval r;
  r.lo = k == 0 ? 0.0 : beta_quantile(alpha / 2, k, n - k + 1);
  r.hi = k == n ? 1.0 : beta_quantile(1 - alpha / 2, k + 1, n - k);
  return clamp_interval(r, 0, 1);
}

double fisher_exact_two_sided(int k1, int n1, int k2, int n2) {
  check_counts(k1, n1, "Fisher's exact test");
  check_counts(k2, n2, "Fisher's exact test");
  const int solved = k1 + k2, total = n1 + n2;
  // P(first arm has x solved) with both margins fixed: C(n1, x) C(n2, s - x) / C(N, s).
  auto log_p = [&](int x) {
    return log_choose(n1, x) + log_choose(n2, solved - x) - log_choose(total, solved);
  };
  const double observed = log_p(k1);
  double p = 0;
  for (int x = std::max(0, solved - n2); x <= std::min(n1, solved); ++x) {
    const double lp = log_p(x);
    if (lp <= observed + 1e-7) p += std::exp(lp);
  }
  return std::min(1.0, p);
}

double sign_flip_p_value(const std::vector<double>& d, double center) {
  std::vector<double> v;
  for (double x : d)
    if (std::isfinite(x)) v.push_back(x - center);
  if (v.empty()) return kNaN;
  if (v.size() > 24)
    throw Error("sign-flip test: " + std::to_string(v.size()) +
                " pairs (at most 24: it enumerates all 2^n flips)");
  double observed = 0;
  for (double x : v) observed += x;
  observed = std::fabs(observed);
  const double tol = 1e-12 * std::max(1.0, observed);
  const uint32_t flips = 1u << v.size();
  uint32_t extreme = 0;
  for (uint32_t mask = 0; mask < flips; ++mask) {
    double sum = 0;
    for (size_t i = 0; i < v.size(); ++i) sum += (mask >> i & 1u) ? -v[i] : v[i];
    if (std::fabs(sum) >= observed - tol) ++extreme;
  }
  return static_cast<double>(extreme) / flips;
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p.size(); ++i)
    if (std::isfinite(p[i])) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> out(p.size(), kNaN);
  const size_t m = order.size();
  double running = 0;
  for (size_t i = 0; i < m; ++i) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - i) * p[order[i]]));
    out[order[i]] = running;
  }
  return out;
}

Interval clamp_interval(Interval i, double lo, double hi) {
  if (std::isfinite(i.lo)) i.lo = std::clamp(i.lo, lo, hi);
  if (std::isfinite(i.hi)) i.hi = std::clamp(i.hi, lo, hi);
  return i;
}

int pairs_to_resolve(double mean, double sd, double level) {
  if (mean == 0 || !std::isfinite(mean) || !std::isfinite(sd)) return 0;
  for (int n = 2; n <= 10000; ++n)
    if (student_t_quantile(0.5 + level / 2, n - 1) * sd / std::sqrt(n) < std::fabs(mean)) return n;
  return 10000;
}

}  // namespace attn
