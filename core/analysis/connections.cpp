#include "core/analysis/connections.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"

namespace attn {

CurveShape describe_curve(const std::vector<float>& t, const float* g, int window, int query_slot) {
  CurveShape s;
  const size_t n = t.size();
  if (n < 3) throw Error("describe_curve needs at least 3 samples");
  const auto [lo, hi] = std::minmax_element(g, g + n);
  s.range = *hi - *lo;
  const size_t peak = static_cast<size_t>(hi - g);
  s.peak_t = t[peak];
  s.peak_slot = static_cast<int>(std::lround(s.peak_t * (window - 1)));
  s.peak_offset = query_slot - s.peak_slot;

  // Trend: the signs of the significant steps, with runs merged.
  const double tol = std::max(0.02 * s.range, 1e-6);
  std::string signs;  // sequence of '+' / '-' after merging, ignoring flat steps
  double drift = 0;   // accumulate small steps so a slow steady change still counts
  for (size_t k = 1; k < n; ++k) {
    drift += g[k] - g[k - 1];
    if (std::abs(drift) < tol) continue;
    const char c = drift > 0 ? '+' : '-';
    if (signs.empty() || signs.back() != c) signs.push_back(c);
    drift = 0;
  }
  if (s.range < 1e-6 || signs.empty())
    s.trend = "flat";
  else if (signs == "+")
    s.trend = "increasing";
  else if (signs == "-")
    s.trend = "decreasing";
  else if (signs == "+-")
    s.trend = "peaked";
  else if (signs == "-+")
    s.trend = "dipped";
  else
    s.trend = "non-monotone";

  // Curvature: second differences, in slope units per unit t.
  double positive = 0, negative = 0;
  for (size_t k = 1; k + 1 < n; ++k) {
    const double h1 = t[k] - t[k - 1], h2 = t[k + 1] - t[k];
    const double change = (g[k + 1] - g[k]) / h2 - (g[k] - g[k - 1]) / h1;  // slope change
    (change > 0 ? positive : negative) += std::abs(change);
  }
  const double total = positive + negative;
  if (s.trend == "flat" || total * (t[n - 1] - t[0]) < 0.1 * s.range)
    s.curvature = "linear";
  else if (negative >= 0.9 * total)
    s.curvature = "concave";
  else if (positive >= 0.9 * total)
    s.curvature = "convex";
  else
    s.curvature = "mixed";

  char buf[160];
  if (s.trend == "flat") {
    std::snprintf(buf, sizeof buf, "flat (range %.3g): no preference among the window's slots",
                  s.range);
  } else {
    const char* where = s.peak_offset == 0  ? " (the current token)"
                        : s.peak_offset > 0 ? " (earlier tokens)"
                                            : " (later tokens)";
    std::snprintf(buf, sizeof buf, "%s, %s; peak at t = %.2f = offset %d%s; range %.3g",
                  s.trend.c_str(), s.curvature.c_str(), s.peak_t, s.peak_offset, where, s.range);
  }
  s.sentence = buf;
  return s;
}

}  // namespace attn
