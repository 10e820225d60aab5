// Colormaps (render/plot/colormap.h).
#include <doctest/doctest.h>

#include <cmath>

#include "render/plot/colormap.h"

using namespace attn::render;

TEST_CASE("viridis endpoints match matplotlib") {
  const Rgba8 lo = viridis(0.0f), hi = viridis(1.0f);
  CHECK(int(lo.r) == 68);
  CHECK(int(lo.g) == 1);
  CHECK(int(lo.b) == 84);
  CHECK(int(hi.r) == 253);
  CHECK(int(hi.g) == 231);
  CHECK(int(hi.b) == 37);
  CHECK(int(hi.a) == 255);
  // Out of range and NaN clamp to the ends.
  CHECK(int(viridis(-3.0f).r) == 68);
  CHECK(int(viridis(7.0f).g) == 231);
  CHECK(int(viridis(std::nanf("")).b) == 84);
}

TEST_CASE("viridis luminance increases monotonically") {
  const auto& table = viridis_table();
  for (int i = 1; i < kViridisSize; ++i) {
    INFO("entry " << i);
    CHECK(relative_luminance(table[i][0], table[i][1], table[i][2]) >
          relative_luminance(table[i - 1][0], table[i - 1][1], table[i - 1][2]));
  }
  // The 8-bit output may wobble by rounding only (less than one quantum of luminance).
  double previous = -1;
  for (int i = 0; i <= 1000; ++i) {
    const double l = relative_luminance(viridis(i / 1000.0f));
    CHECK(l > previous - 1e-3);
    previous = std::max(previous, l);
  }
  CHECK(relative_luminance(viridis(1)) - relative_luminance(viridis(0)) > 0.7);
}

TEST_CASE("diverging map is white at zero and symmetric in saturation") {
  const Rgba8 zero = diverging(0.0f, 2.0f);
  CHECK(int(zero.r) == 255);
  CHECK(int(zero.g) == 255);
  CHECK(int(zero.b) == 255);
  const Rgba8 neg = diverging(-2.0f, 2.0f), pos = diverging(2.0f, 2.0f);
  CHECK(neg.b > neg.r);                                // blue for negative
  CHECK(pos.r > pos.b);                                // red for positive
  CHECK(int(diverging(-9.0f, 2.0f).b) == int(neg.b));  // clamped
  // Brightness falls off towards both ends.
  for (float v : {0.5f, 1.0f, 1.5f, 2.0f}) {
    CHECK(relative_luminance(diverging(v, 2.0f)) < relative_luminance(diverging(v - 0.5f, 2.0f)));
    CHECK(relative_luminance(diverging(-v, 2.0f)) < relative_luminance(diverging(-v + 0.5f, 2.0f)));
  }
  // Degenerate scale: everything is "zero".
  CHECK(int(diverging(1.0f, 0.0f).g) == 255);
}

TEST_CASE("colorize maps a matrix through the chosen map") {
  const float m[4] = {0.0f, 0.5f, 1.0f, -1.0f};
  std::vector<Rgba8> out;
  colorize(m, 4, Colormap::Viridis, 0.0f, 1.0f, out);
  REQUIRE(out.size() == 4);
  CHECK(int(out[0].r) == int(viridis(0).r));
  CHECK(int(out[1].g) == int(viridis(0.5f).g));
  CHECK(int(out[2].b) == int(viridis(1).b));
  CHECK(int(out[3].r) == int(viridis(0).r));              // below vmin clamps
  colorize(m, 4, Colormap::Diverging, -0.5f, 1.0f, out);  // scale = max(|vmin|, |vmax|) = 1
  CHECK(int(out[0].g) == 255);
  CHECK(int(out[2].r) == int(diverging(1, 1).r));
  CHECK(int(out[3].b) == int(diverging(-1, 1).b));
  // A cell without a value is the missing colour in every map, never the map's low end (a NaN
  // accuracy drawn as viridis(0) read as "0%").
  const float gaps[2] = {std::nanf(""), INFINITY};
  for (Colormap map : {Colormap::Viridis, Colormap::Diverging, Colormap::Gray, Colormap::Hot}) {
    colorize(gaps, 2, map, 0.0f, 1.0f, out);
    for (const Rgba8& c : out) {
      CHECK(int(c.r) == int(kMissingColor.r));
      CHECK(int(c.g) == int(kMissingColor.g));
      CHECK(int(c.b) == int(kMissingColor.b));
    }
  }
  CHECK(int(kMissingColor.r) != int(viridis(0).r));
}

TEST_CASE("gray and hot: black to white, luminance never falls") {
  for (auto ramp : {gray, hot}) {
    CHECK(relative_luminance(ramp(0.0f)) == doctest::Approx(0.0));
    CHECK(relative_luminance(ramp(1.0f)) == doctest::Approx(1.0));
    CHECK(int(ramp(std::nanf("")).r) == 0);
    CHECK(int(ramp(5.0f).g) == 255);  // clamped
    double previous = -1;
    for (int i = 0; i <= 1000; ++i) {
      const double l = relative_luminance(ramp(i / 1000.0f));
      CHECK(l >= previous);
      previous = l;
    }
  }
  // hot passes through pure red and yellow.
  CHECK(int(hot(1.0f / 3).r) == 255);
  CHECK(int(hot(1.0f / 3).g) == 0);
  CHECK(int(hot(2.0f / 3).g) == 255);
  CHECK(int(hot(2.0f / 3).b) == 0);
  const float m[2] = {2.0f, 4.0f};
  std::vector<Rgba8> out;
  colorize(m, 2, Colormap::Hot, 2.0f, 4.0f, out);
  CHECK(int(out[0].r) == 0);
  CHECK(int(out[1].b) == 255);
  colorize(m, 2, Colormap::Gray, 0.0f, 4.0f, out);
  CHECK(int(out[0].g) == 128);
}
