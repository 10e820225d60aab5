#include "render/plot/plot_math.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace attn::render {

std::vector<float> ema_debiased(const float* x, size_t n, double beta) {
  std::vector<float> y(n);
  if (!(beta > 0.0)) beta = 0.0;
  if (beta >= 1.0) beta = 0.999999;
  double acc = 0.0, correction = 1.0;  // correction = beta^t
  double last = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < n; ++i) {
    if (std::isfinite(x[i])) {
      acc = beta * acc + (1.0 - beta) * x[i];
      correction *= beta;
      last = acc / (1.0 - correction);
    }
    y[i] = static_cast<float>(last);
  }
  return y;
}

void Range::include(double v) {
  if (!std::isfinite(v)) return;
  lo = std::min(lo, v);
  hi = std::max(hi, v);
}

Range value_range(const float* v, size_t n, bool positive_only) {
  Range r;
  for (size_t i = 0; i < n; ++i)
    if (!positive_only || v[i] > 0.0f) r.include(v[i]);
  return r;
}

Range merge(Range a, Range b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

Range padded(Range r, double fraction, bool log_scale) {
  if (log_scale) {
    if (r.empty() || !(r.lo > 0.0)) return {1.0, 10.0};
    double llo = std::log10(r.lo), lhi = std::log10(r.hi);
    if (lhi - llo < 1e-6) llo -= 0.5, lhi += 0.5;
    const double pad = (lhi - llo) * fraction;
    return {std::pow(10.0, llo - pad), std::pow(10.0, lhi + pad)};
  }
  if (r.empty()) return {0.0, 1.0};
  if (r.hi - r.lo <= 1e-12 * std::max(1.0, std::fabs(r.lo))) {
    const double w = std::fabs(r.lo) > 0.0 ? std::fabs(r.lo) * 0.1 : 0.5;
    return {r.lo - w, r.hi + w};
  }
  const double pad = (r.hi - r.lo) * fraction;
  return {r.lo - pad, r.hi + pad};
}

double nice_step(double raw) {
  if (!(raw > 0.0) || !std::isfinite(raw)) return 1.0;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    // The tolerance keeps 0.2 (stored as 0.2000000000000000111) from becoming 0.5.
    if (m * decade >= raw * (1.0 - 1e-9)) return m * decade;
  }
  return 10.0 * decade;
}

namespace {
// The next nice step below `step` (1 -> 0.5 -> 0.2 -> 0.1).
double smaller_nice_step(double step) {
  const double decade = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  const double mantissa = step / decade;
  if (mantissa > 4.0) return 2.0 * decade;
  if (mantissa > 1.5) return decade;
  return 0.5 * decade;
}
}  // namespace

Ticks linear_ticks(double lo, double hi, int target_count) {
  Ticks t;
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo) return t;
  if (hi == lo) {
    t.values.push_back(lo);
    return t;
  }
  t.step = nice_step((hi - lo) / std::max(1, target_count));
  double first = 0, last = 0, eps = 0;
  for (int guard = 0; guard < 8; ++guard) {
    eps = t.step * 1e-9;
    first = std::ceil((lo - eps) / t.step);
    last = std::floor((hi + eps) / t.step);
    if (last - first >= 1.0) break;      // at least two ticks
    t.step = smaller_nice_step(t.step);  // rounding up overshot a range that straddles no grid
  }
  for (double k = first; k <= last; k += 1.0) {
    double v = k * t.step;            // k * step, not repeated addition: no accumulated drift
    if (std::fabs(v) < eps) v = 0.0;  // no "-0"
    t.values.push_back(std::clamp(v, lo, hi));
  }
  return t;
}

Ticks log_ticks(double lo, double hi, int max_count) {
  if (!(lo > 0.0) || !(hi > lo) || !std::isfinite(hi)) return linear_ticks(lo, hi);
  Ticks t;
  t.log = true;
  const double eps = 1e-9;
  const int k0 = static_cast<int>(std::ceil(std::log10(lo) - eps));
  const int k1 = static_cast<int>(std::floor(std::log10(hi) + eps));
  const int decades = k1 - k0 + 1;
  if (decades >= 3) {  // enough decades to read the scale from them alone
    const int every = std::max(1, (decades + max_count - 1) / std::max(1, max_count));
    for (int k = k0; k <= k1; ++k)
      if (k % every == 0) t.values.push_back(std::pow(10.0, k));
    if (t.values.size() >= 2) return t;
    t.values.clear();
  }
  // Narrower range: 1, 2, 5 multiples of each decade inside it.
  for (int k = k0 - 1; k <= k1; ++k)
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, k);
      if (v >= lo * (1 - eps) && v <= hi * (1 + eps)) t.values.push_back(v);
    }
  if (t.values.size() >= 2) return t;
  Ticks lin = linear_ticks(lo, hi, 4);
  lin.log = true;  // still drawn on a log axis
  return lin;
}

std::string format_tick(double value, const Ticks& ticks) {
  char buf[32];
  const double mag = std::fabs(value);
  if (value == 0.0) return "0";
  if ((ticks.log && ticks.step == 0.0) || mag >= 1e5 || mag < 1e-4) {
    std::snprintf(buf, sizeof buf, "%g", value);
    return buf;
  }
  int decimals = 0;
  if (ticks.step > 0.0 && ticks.step < 1.0)
    decimals = static_cast<int>(std::ceil(-std::log10(ticks.step) - 1e-9));
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(decimals, 0, 9), value);
  return buf;
}

std::vector<ContourSegment> contour_segments(const float* z, int rows, int cols, double level) {
  std::vector<ContourSegment> out;
  if (!z || rows < 2 || cols < 2) return out;
  // Where the edge from (xa, ya) valued va to (xb, yb) valued vb crosses the level.
  auto cross = [&](float xa, float ya, double va, float xb, float yb, double vb) {
    const double t = (level - va) / (vb - va);
    return std::pair<float, float>(static_cast<float>(xa + t * (xb - xa)),
                                   static_cast<float>(ya + t * (yb - ya)));
  };
  for (int r = 0; r + 1 < rows; ++r)
    for (int c = 0; c + 1 < cols; ++c) {
      // Corners clockwise from the top-left: a (c, r), b (c+1, r), d (c+1, r+1), e (c, r+1).
      const double a = z[r * cols + c], b = z[r * cols + c + 1], d = z[(r + 1) * cols + c + 1],
                   e = z[(r + 1) * cols + c];
      if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(d) || !std::isfinite(e))
        continue;
      const bool ia = a >= level, ib = b >= level, id = d >= level, ie = e >= level;
      const float x0 = static_cast<float>(c), x1 = x0 + 1, y0 = static_cast<float>(r), y1 = y0 + 1;
      // Crossings on the edges top (a-b), right (b-d), bottom (d-e), left (e-a), in that order.
      std::pair<float, float> p[4];
      bool has[4] = {ia != ib, ib != id, id != ie, ie != ia};
      if (has[0]) p[0] = cross(x0, y0, a, x1, y0, b);
      if (has[1]) p[1] = cross(x1, y0, b, x1, y1, d);
      if (has[2]) p[2] = cross(x1, y1, d, x0, y1, e);
      if (has[3]) p[3] = cross(x0, y1, e, x0, y0, a);
      auto add = [&](int i, int j) {
        out.push_back({p[i].first, p[i].second, p[j].first, p[j].second});
      };
      const int count = has[0] + has[1] + has[2] + has[3];
      if (count == 2) {
        int first = -1, second = -1;
        for (int i = 0; i < 4; ++i)
          if (has[i]) (first < 0 ? first : second) = i;
        add(first, second);
      } else if (count == 4) {  // saddle: a and d on one side, b and e on the other
        const bool centre = (a + b + d + e) * 0.25 >= level;
        if (centre == ia) {  // a joins d through the centre: cut off b and e
          add(0, 1);
          add(2, 3);
        } else {  // b joins e: cut off a and d
          add(3, 0);
          add(1, 2);
        }
      }
    }
  return out;
}

void decimate_indices(const double* x, const double* y, size_t n, double x0, double column,
                      long columns, std::vector<size_t>& keep) {
  keep.clear();
  if (!(column > 0)) {
    for (size_t i = 0; i < n; ++i) keep.push_back(i);
    return;
  }
  auto column_of = [&](double v) -> long {
    const double c = std::floor((v - x0) / column);
    if (!(c >= 0)) return -1;  // left of x0 (or NaN)
    return c >= static_cast<double>(columns) ? columns : static_cast<long>(c);
  };
  size_t start = 0;
  while (start < n) {
    const long c = column_of(x[start]);
    size_t end = start + 1, lo = start, hi = start;
    for (; end < n && column_of(x[end]) == c; ++end) {
      if (y[end] < y[lo]) lo = end;
      if (y[end] > y[hi]) hi = end;
    }
    if (end - start <= 4) {
      for (size_t i = start; i < end; ++i) keep.push_back(i);
    } else {
      const size_t take[4] = {start, std::min(lo, hi), std::max(lo, hi), end - 1};
      for (size_t k : take)
        if (keep.empty() || keep.back() != k) keep.push_back(k);
    }
    start = end;
  }
}

void decimate_polyline(const double* x, const double* y, size_t n, double x0, double column,
                       long columns, std::vector<double>& ox, std::vector<double>& oy) {
  std::vector<size_t> keep;
  decimate_indices(x, y, n, x0, column, columns, keep);
  ox.clear(), oy.clear();
  for (size_t k : keep) ox.push_back(x[k]), oy.push_back(y[k]);
}

}  // namespace attn::render
