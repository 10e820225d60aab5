// Marching-squares contours (render/plot/plot_math.h: contour_segments), used by the Neural panel.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "render/plot/plot_math.h"

using namespace attn::render;

TEST_CASE("contours of a linear ramp are straight lines at the interpolated crossing") {
  // z = column index on a 5 x 6 grid: the level 2.25 crosses every row between columns 2 and 3.
  const int rows = 5, cols = 6;
  std::vector<float> z(rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) z[r * cols + c] = static_cast<float>(c);
  const auto segments = contour_segments(z.data(), rows, cols, 2.25);
  REQUIRE(segments.size() == rows - 1);
  for (const ContourSegment& s : segments) {
    CHECK(s.x0 == doctest::Approx(2.25));
    CHECK(s.x1 == doctest::Approx(2.25));
    CHECK(std::abs(s.y1 - s.y0) == doctest::Approx(1.0));
  }
  CHECK(contour_segments(z.data(), rows, cols, 10.0).empty());  // outside the range
  CHECK(contour_segments(z.data(), 1, cols, 2.25).empty());     // no cells
}

TEST_CASE("contours of the paraboloid x^2 + y^2 lie on its circles") {
  const int n = 41;
  std::vector<float> z(n * n);
  auto coord = [&](float g) { return -2.0f + g * 0.1f; };  // grid index -> [-2, 2]
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) z[r * n + c] = coord(c) * coord(c) + coord(r) * coord(r);
  const auto segments = contour_segments(z.data(), n, n, 1.0);
  CHECK(segments.size() > 40);  // a closed circle of radius 1 through many cells
  double worst = 0;
  for (const ContourSegment& s : segments)
    for (auto [gx, gy] : {std::pair<float, float>{s.x0, s.y0}, {s.x1, s.y1}})
      worst = std::max(worst, std::abs(std::hypot(coord(gx), coord(gy)) - 1.0));
  CHECK(worst < 0.01);  // linear interpolation along edges of 0.1-wide cells
}

TEST_CASE("contours: a saddle cell gives two segments; non-finite cells are skipped") {
  // Corners a = 1 (top-left), b = 0, d = 1 (bottom-right), e = 0: a saddle at level 0.5.
  const float saddle[] = {1, 0, 0, 1};
  const auto segments = contour_segments(saddle, 2, 2, 0.5);
  REQUIRE(segments.size() == 2);
  // The centre (0.5) is >= the level, so a joins d: the segments cut off b and e.
  for (const ContourSegment& s : segments) {
    const bool cuts_b = (s.x0 == doctest::Approx(0.5) && s.y0 == doctest::Approx(0.0) &&
                         s.x1 == doctest::Approx(1.0) && s.y1 == doctest::Approx(0.5));
    const bool cuts_e = (s.x0 == doctest::Approx(0.5) && s.y0 == doctest::Approx(1.0) &&
                         s.x1 == doctest::Approx(0.0) && s.y1 == doctest::Approx(0.5));
    CHECK((cuts_b || cuts_e));
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float broken[] = {1, nan, 0, 1};
  CHECK(contour_segments(broken, 2, 2, 0.5).empty());
}
