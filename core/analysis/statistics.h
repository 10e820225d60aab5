// Intervals for results over seeds: Student-t quantiles and p-values (from the regularised
// incomplete beta function, no tables), a mean's confidence interval, and the paired difference
// of two arms that share seeds. Torch-free.
// Contract:
//  - student_t_cdf(t, df) is P(T <= t) for df > 0; student_t_quantile(p, df) its inverse for
//    0 < p < 1 (bisection to 1e-12 relative). Both throw attn::Error for df <= 0 or p outside.
//  - mean_interval ignores non-finite values; with n < 2 the interval is unknown: lo = hi = NaN.
//  - paired_difference(a, b) is over the differences a[i] - b[i] (the same seed at index i) of
//    the pairs where both are finite; a and b of different lengths throw attn::Error.
#pragma once
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
  MeanInterval difference;  // of a - b
  double p_value = 1;       // two-sided, H0: mean difference 0 (NaN when n < 2)
};
PairedDifference paired_difference(const std::vector<double>& a, const std::vector<double>& b,
                                   double level = 0.95);

// Two arms whose values are not paired: Welch's interval for mean(a) - mean(b) (the
// Welch-Satterthwaite degrees of freedom) and its two-sided p-value. difference.n is the smaller
// sample; difference.sd the standard error times sqrt(n) of that sample is not meaningful, so it
// holds the standard error itself. Needs two finite values on each side, else lo = hi = NaN.
PairedDifference welch_difference(const std::vector<double>& a, const std::vector<double>& b,
                                  double level = 0.95);

// Percentile bootstrap interval of the mean of `values` (finite ones), from `resamples`
// resamples drawn with a fixed seed, so that a report reproduces: a check on the t-interval
// that assumes no normality. NaN bounds with fewer than 2 values.
struct Interval {
  double lo = 0, hi = 0;
};
Interval bootstrap_mean_interval(const std::vector<double>& values, double level = 0.95,
                                 int resamples = 10000, unsigned seed = 12345);
// The same for mean(a) - mean(b), resampling each side on its own (unpaired).
Interval bootstrap_difference_interval(const std::vector<double>& a, const std::vector<double>& b,
                                       double level = 0.95, int resamples = 10000,
                                       unsigned seed = 12345);

// The smallest number of pairs whose `level` interval would exclude zero if the mean difference
// and sd stayed as observed (0 when the mean is 0 or the sd is not finite; capped at 10000).
int pairs_to_resolve(double mean, double sd, double level = 0.95);

}  // namespace attn
