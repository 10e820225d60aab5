// Plot maths without GL: smoothing, data ranges, axis ticks and their labels.
// Contract:
//  - ema_debiased(): y_t = beta * y_{t-1} + (1 - beta) * x_t with y_0 = 0, reported as
//    y_t / (1 - beta^t) for t = 1..n, so the first output equals the first sample and an early
//    curve is not dragged towards zero. beta in [0, 1); beta = 0 returns the input. Non-finite
//    samples are skipped (the previous smoothed value is repeated) so one NaN does not poison
//    the rest of the curve.
//  - Ranges ignore non-finite values; a Range with lo > hi is empty.
//  - linear_ticks(): step is 1, 2 or 5 times a power of ten; every tick lies in [lo, hi] and
//    the gaps between lo and the first tick and between the last tick and hi are < step, so the
//    ticks cover the range. log_ticks(): powers of ten inside [lo, hi] (every m-th decade when
//    there are too many); with fewer than three decades it uses 1, 2 and 5 multiples instead,
//    and falls back to linear ticks for ranges narrower than that.
//  - decimate_polyline(): see there; what the figure drawing does to long lines
//    (render/plot/figure_draw.h), so every backend draws the same reduced polyline.
#pragma once
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace attn::render {

std::vector<float> ema_debiased(const float* x, size_t n, double beta);
inline std::vector<float> ema_debiased(const std::vector<float>& x, double beta) {
  return ema_debiased(x.data(), x.size(), beta);
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  bool empty() const { return !(lo <= hi); }
  void include(double v);  // ignores non-finite values
};

// Min/max over the finite values (only the strictly positive ones when positive_only, for log
// axes).
Range value_range(const float* v, size_t n, bool positive_only = false);
Range merge(Range a, Range b);
// Adds `fraction` of the span on both sides (multiplicatively on log axes) and widens degenerate
// ranges, so a flat curve still gets a visible axis. An empty range becomes [0, 1] ([1, 10] log).
Range padded(Range r, double fraction, bool log_scale);

// The smallest of {1, 2, 5} x 10^k that is >= raw (raw > 0).
double nice_step(double raw);

struct Ticks {
  std::vector<double> values;
  double step = 0;  // linear spacing; 0 for log ticks
  bool log = false;
};
Ticks linear_ticks(double lo, double hi, int target_count = 5);
Ticks log_ticks(double lo, double hi, int max_count = 8);  // needs 0 < lo < hi

// Short label for a tick: enough decimals for the step ("0.25", "1500"), or %g style for log
// ticks and very large/small magnitudes ("1e-05").
std::string format_tick(double value, const Ticks& ticks);

// Reduces a polyline for drawing (min/max per column): consecutive points whose x falls in the
// same column of width `column` (columns counted from x0; every x left of x0 is one column, and
// so is every x at or right of x0 + columns * column) are replaced by at most four of them, in
// their order along the line: the column's first point, its lowest and its highest y, and its
// last point. So each column keeps its extremes, and the segments between columns are the
// original ones. A run of at most four points in a column is kept whole; a line whose points
// are never more than four to a column comes back unchanged. With x ascending the result has
// at most 4 * (columns + 2) points, however many went in. Writes to ox, oy (cleared first).
void decimate_polyline(const double* x, const double* y, size_t n, double x0, double column,
                       long columns, std::vector<double>& ox, std::vector<double>& oy);
// The indices decimate_polyline keeps, in order (keep is cleared first). y may be any monotonic
// function of the drawn y (the data values of a log or inverted axis): the same points are the
// extremes, so only the kept points need mapping to the page.
void decimate_indices(const double* x, const double* y, size_t n, double x0, double column,
                      long columns, std::vector<size_t>& keep);

// One straight piece of a contour line, in grid coordinates: x = column, y = row (fractional).
struct ContourSegment {
  float x0, y0, x1, y1;
};
// Marching squares: the segments where a rows x cols row-major field crosses `level`, with the
// crossing linearly interpolated along each cell edge. A saddle cell is split by the value at
// its centre (the mean of its corners). Cells with a non-finite corner are skipped.
std::vector<ContourSegment> contour_segments(const float* z, int rows, int cols, double level);

}  // namespace attn::render
