#include "core/analysis/scaling_fit.h"

#include <algorithm>
#include <cmath>

namespace attn {

double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  if (n < 2) return NAN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0;  // centred sums: no cancellation at large x
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx > 0 ? sxy / sxx : NAN;
}

double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> lx, ly;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0)) return NAN;
    lx.push_back(std::log(x[i]));
    ly.push_back(std::log(y[i]));
  }
  return least_squares_slope(lx, ly);
}

KeyedValues round_slopes(const std::vector<double>& x,
                         const std::vector<std::vector<double>>& y_per_round) {
  KeyedValues out;
  for (size_t r = 0; r < y_per_round.size(); ++r)
    out[static_cast<long long>(r)] = loglog_slope(x, y_per_round[r]);
  return out;
}

}  // namespace attn
