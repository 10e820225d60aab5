// MapFit (app/gui/plot/map_fit.h): the height that gives a figure of heatmaps maps of at least a
// least side, against a model of a tile: `rows` rows of square maps under `fixed` pixels of
// titles and controls, each map as tall as its row and at most `max_side` wide.
#include <doctest/doctest.h>

#include <algorithm>

#include "app/gui/plot/map_fit.h"

namespace {

float side_for(float height, int rows, float fixed, float max_side) {
  return std::clamp((height - fixed) / rows, 1.0f, max_side);
}

// Frames of height() and measured() until nothing changes; the last side.
float settle(attn::gui::MapFit& fit, float avail_h, int rows, float fixed, float max_side,
             float min_side) {
  float side = 0;
  for (int frame = 0; frame < 20; ++frame) {
    const float h = fit.height(500, avail_h, 240, 15);
    side = side_for(h, rows, fixed, max_side);
    fit.measured(side, min_side, rows);
  }
  return side;
}

}  // namespace

TEST_CASE("map fit: a short tile grows until the maps reach the least side, no further") {
  attn::gui::MapFit fit;
  // 300 px tall, 200 of them controls: two rows of 50 px maps (the bug: 15-30 px maps at scale 2).
  const float side = settle(fit, 300, 2, 200, 400, 105);
  CHECK(side >= 104.5f);
  CHECK(side <= 1.25f * 105);
  CHECK(fit.extra() > 0);
}

TEST_CASE("map fit: growth stops where the tile's width holds the maps back") {
  attn::gui::MapFit fit;
  const float side = settle(fit, 300, 2, 200, 60, 105);  // never wider than 60 px
  CHECK(side == doctest::Approx(60));
  CHECK(fit.extra() < 4 * 105);  // a bounded growth, not one per frame
}

TEST_CASE("map fit: a tall enough tile adds nothing; a new tile size starts over") {
  attn::gui::MapFit fit;
  CHECK(settle(fit, 800, 2, 200, 400, 105) == doctest::Approx(300));
  CHECK(fit.extra() == 0);
  settle(fit, 300, 2, 200, 400, 105);
  CHECK(fit.extra() > 0);
  fit.height(500, 900, 240, 15);  // the tile grew
  CHECK(fit.extra() == 0);
}
