// Intervals for results over seeds: Student-t quantiles and p-values (from the regularised
// incomplete beta function, no tables), a mean's confidence interval, and the paired difference
// of two arms that share seeds; for all-or-nothing outcomes the exact binomial interval and
// Fisher's exact test; the exact sign-flip permutation test; Holm's adjustment. Torch-free.
// Contract:
//  - student_t_cdf(t, df) is P(T <= t) for df > 0; student_t_quantile(p, df) its inverse for
//    0 < p < 1 (bisection to 1e-12 relative). Both throw attn::Error for df <= 0 or p outside.
//  - mean_interval ignores non-finite values; with n < 2 the interval is unknown: lo = hi = NaN.
//  - paired_difference(a, b) is over the differences a[i] - b[i] (the same seed at index i) of
//    the pairs where both are finite; a and b of different lengths throw attn::Error.
#pragma once
#include <cmath>
#include <vector>

namespace attn {

double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

struct MeanInterval {
  int n = 0;
  double mean = 0, sd = 0;  // sd: sample (n - 1)
  double lo = 0, hi = 0;    // the `level` t-interval of the mean; NaN when n < 2
};
MeanInterval mean_interval(const std::vector<double>& values, double level = 0.95);

struct PairedDifference {
  MeanInterval difference;    // of a - b
  double p_value = 1;         // two-sided, H0: mean difference 0 (NaN when n < 2)
  double se = NAN, df = NAN;  // the t statistic's standard error and degrees of freedom
};
// Two-sided p of the t statistic (estimate - boundary) / se on df degrees of freedom: the
// `level` interval excludes `boundary` exactly when it is below 1 - level. NaN when se or df is
// not finite; with se 0 it is 0 off the boundary and 1 on it.
double t_test_p(double estimate, double boundary, double se, double df);
PairedDifference paired_difference(const std::vector<double>& a, const std::vector<double>& b,
                                   double level = 0.95);

// Two arms whose values are not paired: Welch's interval for mean(a) - mean(b) (the
// Welch-Satterthwaite degrees of freedom) and its two-sided p-value. difference.n is the smaller
// sample; difference.sd the standard error times sqrt(n) of that sample is not meaningful, so it
// holds the standard error itself. Needs two finite values on each side, else lo = hi = NaN.
PairedDifference welch_difference(const std::vector<double>& a, const std::vector<double>& b,
                                  double level = 0.95);

struct Interval {
  double lo = 0, hi = 0;
};

// I_x(a, b), the regularised incomplete beta function (a, b > 0; x clamped to [0, 1]).
double regularized_incomplete_beta(double a, double b, double x);

// All-or-nothing outcomes: k solved of n. The Clopper-Pearson ("exact") `level` interval of the
// success probability, from the beta quantiles (bisection on I_x to 1e-12): [0, hi] when k = 0,
// [lo, 1] when k = n; always inside [0, 1]. Throws attn::Error unless 0 <= k <= n and n >= 1.
Interval clopper_pearson(int k, int n, double level = 0.95);

// Fisher's exact test of two arms' solved counts (k1 of n1 against k2 of n2), two-sided: the
// summed probability, under the hypergeometric law with the margins fixed, of every table no
// more probable than the observed one (relative tolerance 1e-7, as R's fisher.test). Throws
// attn::Error on counts outside 0 <= k <= n.
double fisher_exact_two_sided(int k1, int n1, int k2, int n2);

// The exact sign-flip permutation test of paired differences against `center`: the share of all
// 2^n sign flips of d[i] - center whose |mean| is at least the observed one (relative tolerance
// 1e-12), so two-sided; the smallest possible p is 2 / 2^n (0.25 at 3 pairs). Non-finite values
// are left out; fewer than 1 value gives NaN; more than 24 values throws attn::Error (2^24
// flips is the most it enumerates).
double sign_flip_p_value(const std::vector<double>& d, double center = 0);

// Holm's step-down adjustment of a family's p-values, in their order: sorted ascending, the
// i-th (from 0) of m is multiplied by m - i, made non-decreasing, capped at 1. NaN entries are
// not members of the family (m counts the finite ones) and stay NaN.
std::vector<double> holm_adjust(const std::vector<double>& p);

// `i` clamped to the metric's range [lo, hi] (an accuracy's interval never leaves [0, 1]).
Interval clamp_interval(Interval i, double lo, double hi);

// The smallest number of pairs whose `level` interval would exclude zero if the mean difference
// and sd stayed as observed (0 when the mean is 0 or the sd is not finite; capped at 10000).
int pairs_to_resolve(double mean, double sd, double level = 0.95);

}  // namespace attn
