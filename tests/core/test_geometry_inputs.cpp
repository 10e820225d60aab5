// Geometry inputs and sampled views (core/analysis/geometry.h): Gaussian tokens against their moments and
// the tilt identity by Monte Carlo, grids and density, presets, parsing and bad-input messages.
#include <doctest/doctest.h>

#include "tests/core/geometry_reference.h"

using namespace attn::test::geometry_ref;

TEST_CASE("geometry: Gaussian samples converge to the mean and covariance") {
  const Gaussian g{{0.5, -1.0}, {2.0, 0.6, 0.6, 0.5}};
  const int n = 200000;
  const auto samples = sample_gaussian(g, n, 42);
  REQUIRE(samples.size() == size_t(n));
  double mx = 0, my = 0;
  for (const Vec2& t : samples) {
    mx += t.x / n;
    my += t.y / n;
  }
  double sxx = 0, sxy = 0, syy = 0;
  for (const Vec2& t : samples) {
    sxx += (t.x - mx) * (t.x - mx) / n;
    sxy += (t.x - mx) * (t.y - my) / n;
    syy += (t.y - my) * (t.y - my) / n;
  }
  CHECK(std::abs(mx - 0.5) <= 0.02);
  CHECK(std::abs(my + 1.0) <= 0.02);
  CHECK(std::abs(sxx - 2.0) <= 0.04);
  CHECK(std::abs(sxy - 0.6) <= 0.03);
  CHECK(std::abs(syy - 0.5) <= 0.02);
  // Deterministic for a seed, different across seeds.
  const auto again = sample_gaussian(g, 100, 42), other = sample_gaussian(g, 100, 43);
  for (int i = 0; i < 100; ++i) CHECK(same(again[i], samples[i]));
  CHECK_FALSE(same(other[0], samples[0]));
  // Singular PSD covariances: samples stay on the degenerate line.
  for (const Vec2& t : sample_gaussian({{1, 2}, {1, 1, 1, 1}}, 1000, 3))
    CHECK(std::abs((t.y - 2) - (t.x - 1)) <= 1e-12);
  for (const Vec2& t : sample_gaussian({{1, 2}, {0, 0, 0, 2}}, 1000, 3)) CHECK(t.x == 1);
  for (const Vec2& t : sample_gaussian({{1, 2}, {0, 0, 0, 0}}, 10, 3)) CHECK(same(t, {1, 2}));
}

TEST_CASE("geometry: the softmax map of many Gaussian tokens approaches the tilted mean") {
  const Gaussian g{{0.4, -0.3}, {0.8, 0.25, 0.25, 0.5}};
  Scene s;
  s.tokens = sample_gaussian(g, 20000, 2024);
  // W = I, tau = 1: exactly mu + Sigma v.
  for (double r : {0.0, 0.3, 0.7, 1.0}) {
    for (int k = 0; k < 12; ++k) {
      const Vec2 v{r * std::cos(2 * kPi * k / 12), r * std::sin(2 * kPi * k / 12)};
      const Vec2 exact = gaussian_tilted_mean(g, s, v);
      CHECK(exact.x == doctest::Approx(0.4 + 0.8 * v.x + 0.25 * v.y).epsilon(1e-14));
      CHECK(exact.y == doctest::Approx(-0.3 + 0.25 * v.x + 0.5 * v.y).epsilon(1e-14));
      const Vec2 z = attend(s, v);
      INFO("r " << r << ", k " << k << ": z (" << z.x << ", " << z.y << ") vs (" << exact.x << ", "
                << exact.y << ")");
      CHECK(dist(z, exact) <= 0.05);
    }
  }
  // Other matrices and a temperature: W^V (mu + Sigma W^K^T W^Q v / tau).
  s.wq = Mat2{0.8, 0.3, -0.2, 1.1};
  s.wk = Mat2{1.2, 0.0, 0.4, 0.7};
  s.wv = Mat2{0.5, -1.0, 1.0, 0.3};
  s.temperature = 1.5;
  for (int k = 0; k < 16; ++k) {
    const Vec2 v{std::cos(2 * kPi * k / 16), std::sin(2 * kPi * k / 16)};
    const Vec2 s_vec = transpose(s.wk) * (s.wq * v);
    const Vec2 tilted{0.4 + (0.8 * s_vec.x + 0.25 * s_vec.y) / 1.5,
                      -0.3 + (0.25 * s_vec.x + 0.5 * s_vec.y) / 1.5};
    const Vec2 want = s.wv * tilted;
    const Vec2 exact = gaussian_tilted_mean(g, s, v);
    CHECK(dist(exact, want) <= 1e-14);
    CHECK(dist(attend(s, v), exact) <= 0.05);
  }
}

TEST_CASE("geometry: grids, their warps and the density image") {
  const auto lines = grid_lines({3, 2.0, 5});
  REQUIRE(lines.size() == 6);
  for (const auto& line : lines) CHECK(line.size() == 5);
  // Vertical lines first, left to right, each bottom to top; then horizontal, bottom to top.
  CHECK(same(lines[0][0], {-2, -2}));
  CHECK(same(lines[0][4], {-2, 2}));
  CHECK(same(lines[1][2], {0, 0}));
  CHECK(same(lines[2][1], {2, -1}));
  CHECK(same(lines[3][0], {-2, -2}));
  CHECK(same(lines[3][4], {2, -2}));
  CHECK(same(lines[5][3], {1, 2}));
  const Scene s = preset("three");
  const GridSpec spec{4, 3.0, 9};
  const auto warped = warp_grid(s, spec, Map::Residual, 0.5);
  const auto plain = grid_lines(spec);
  REQUIRE(warped.size() == 8);
  for (size_t i = 0; i < warped.size(); ++i) {
    const auto mapped = map_points(s, plain[i], Map::Residual, 0.5);
    for (size_t k = 0; k < mapped.size(); ++k) CHECK(same(mapped[k], warped[i][k]));
  }
  const auto hull = convex_hull(s.tokens);
  for (const auto& line : warp_grid(s, spec, Map::Softmax))
    for (const Vec2& z : line) CHECK(inside_hull(hull, z));

  const auto points = warp_grid_points(s, 3, 1.0, Map::Linear);
  REQUIRE(points.size() == 9);
  CHECK(same(points[0], attend_linear(s, {-1, -1})));  // row 0 = bottom, left to right
  CHECK(same(points[1], attend_linear(s, {0, -1})));
  CHECK(same(points[8], attend_linear(s, {1, 1})));

  // Bins: row 0 at the bottom; the fullest bin is 1; outside and NaN points are dropped.
  const std::vector<Vec2> cloud = {{0.1, 0.1}, {0.2, 0.2}, {0.9, 0.1},       {0.1, 0.9},
                                   {1.0, 1.0}, {5, 5},     {std::nan(""), 0}};
  const auto image = density_image(cloud, {{0, 0}, {1, 1}}, 2);
  REQUIRE(image.size() == 4);
  CHECK(image[0] == 1.0f);  // bottom-left: 2 points
  CHECK(image[1] == 0.5f);  // bottom-right
  CHECK(image[2] == 0.5f);  // top-left
  CHECK(image[3] == 0.5f);  // top-right (the max corner counts)
  const auto empty = density_image({}, {{0, 0}, {1, 1}}, 3);
  CHECK(std::all_of(empty.begin(), empty.end(), [](float v) { return v == 0; }));
}

TEST_CASE("geometry: presets") {
  REQUIRE(preset_names() == std::vector<std::string>{"three", "five", "collinear", "far"});
  for (const auto& name : preset_names()) {
    const Scene s = preset(name);
    CHECK_NOTHROW(validate(s));
    CHECK(s.temperature == 1);
  }
  CHECK(convex_hull(preset("three").tokens).size() == 3);
  CHECK(convex_hull(preset("five").tokens).size() == 5);
  CHECK(convex_hull(preset("collinear").tokens).size() == 2);
  for (const Vec2& t : preset("far").tokens) CHECK(dist(t, {8, 8}) < 2);
  check_message([] { preset("square"); },
                "unknown preset 'square' (presets: three, five, collinear, far)");
}

TEST_CASE("geometry: parsing") {
  const auto points = parse_points(" 1, 2 ;-3.5,4e-1; 0,0 ");
  REQUIRE(points.size() == 3);
  CHECK(same(points[1], {-3.5, 0.4}));
  const Mat2 m = parse_matrix("1,2,3,4", "--wq");
  CHECK((m.a == 1 && m.b == 2 && m.c == 3 && m.d == 4));
  CHECK(same(parse_point("-1.5, 2", "--query"), {-1.5, 2}));
  CHECK(parse_number(" 2.5 ", "--temperature") == 2.5);
  const Gaussian g = parse_gaussian("1,2;0.5,0.1,0.3");
  CHECK(same(g.mean, {1, 2}));
  CHECK((g.cov.a == 0.5 && g.cov.b == 0.1 && g.cov.c == 0.1 && g.cov.d == 0.3));
}

TEST_CASE("geometry: bad input is refused with a message naming the culprit") {
  struct Case {
    std::function<void()> run;
    const char* message;
  };
  Scene ok = preset("three");
  auto with = [&](auto change) {
    Scene s = ok;
    change(s);
    return s;
  };
  const Case cases[] = {
      {[&] { validate(with([](Scene& s) { s.tokens.clear(); })); }, "the scene has no tokens"},
      {[&] {
         attend(with([](Scene& s) { s.tokens[1].x = std::nan(""); }), {0, 0});
       },
       "token 2 (nan, 1) is not finite"},
      {[&] {
         attend(with([](Scene& s) { s.temperature = 0; }), {0, 0});
       },
       "temperature must be > 0 and finite, got 0"},
      {[&] {
         attend(with([](Scene& s) { s.temperature = -1; }), {0, 0});
       },
       "temperature must be > 0 and finite, got -1"},
      {[&] { linear_map(with([](Scene& s) { s.wk.c = INFINITY; })); },
       "W^K entry [1][0] is not finite (inf)"},
      {[&] {
         attend(ok, {std::nan(""), 0});
       },
       "the query (nan, 0) is not finite"},
      {[&] {
         attend(with([](Scene& s) {
                  s.wv = Mat2{1e300, 1e300, 0, 1};
                  s.tokens[0] = {1e10, 0};
                }),
                {0, 0});
       },
       "the value point W^V t_1 = (inf, 0) overflows"},
      {[&] {
         warp_point(ok, {0, 0}, Map::Residual, 2);
       },
       "alpha must be in [0, 1], got 2"},
      {[&] {
         map_points(ok, {{0, 0}}, Map::Residual, -0.5);
       },
       "alpha must be in [0, 1], got -0.5"},
      {[] {
         grid_lines({1, 3.0, 10});
       },
       "grid lines must be in [2, 4096], got 1"},
      {[] {
         grid_lines({100000, 3.0, 10});
       },
       "grid lines must be in [2, 4096], got 100000"},
      {[] {
         grid_lines({10, 3.0, 1});
       },
       "grid samples must be in [2, 65536], got 1"},
      {[] {
         grid_lines({10, 0.0, 10});
       },
       "grid extent must be > 0 and finite, got 0"},
      {[] {
         grid_lines({4096, 3.0, 65536});
       },
       "at most 33554432"},
      {[] { circle(1.0, 2); }, "circle samples must be in [3, 1000000], got 2"},
      {[] { circle(-1.0, 10); }, "circle radius must be >= 0 and finite, got -1"},
      {[&] { predicted_linear_image(ok, NAN); }, "circle radius must be >= 0 and finite"},
      {[&] { warp_grid_points(ok, 5000, 1.0, Map::Softmax); },
       "density grid size must be in [2, 4096], got 5000"},
      {[] {
         density_image({}, {{0, 0}, {1, 1}}, 0);
       },
       "density bins must be in [1, 4096], got 0"},
      {[] {
         density_image({}, {{0, 0}, {0, 1}}, 4);
       },
       "must be finite with max > min"},
      {[] {
         convex_hull({{0, 0}, {1, NAN}});
       },
       "convex hull: point 2 (1, nan) is not finite"},
      {[] {
         sample_gaussian({{0, 0}, {1, 0.5, 0.4, 1}}, 10, 1);
       },
       "must be symmetric: entry [0][1] (sxy) = 0.5 but entry [1][0] (syx) = 0.4"},
      {[] {
         sample_gaussian({{0, 0}, {-1, 0, 0, 1}}, 10, 1);
       },
       "entry [0][0] (sxx) = -1 is negative"},
      {[] {
         sample_gaussian({{0, 0}, {1, 0, 0, -2}}, 10, 1);
       },
       "entry [1][1] (syy) = -2 is negative"},
      {[] {
         sample_gaussian({{0, 0}, {1, 2, 2, 1}}, 10, 1);
       },
       "not positive semi-definite: entry [0][1] (sxy) = 2 but |sxy| must be <= sqrt(sxx syy) = 1"},
      {[] {
         sample_gaussian({{NAN, 0}, {1, 0, 0, 1}}, 10, 1);
       },
       "Gaussian mean (nan, 0)"},
      {[] {
         sample_gaussian({{0, 0}, {1, 0, 0, 1}}, 0, 1);
       },
       "Gaussian samples must be in [1, 10000000], got 0"},
      {[&] {
         gaussian_tilted_mean({{0, 0}, {1, 0, 0, 1}}, with([](Scene& s) { s.temperature = 0; }),
                              {1, 1});
       },
       "temperature must be > 0"},
      {[] { parse_points(""); }, "--tokens: no points given"},
      {[] { parse_points("  ", "--points"); }, "--points: no points given"},
      {[] { parse_points("1,2;3,x"); }, "--tokens: item 2 \"3,x\" is not two numbers"},
      {[] { parse_points("1,2;3"); }, "--tokens: item 2 \"3\" is not two numbers"},
      {[] { parse_points("1,2,3"); }, "--tokens: item 1 \"1,2,3\" is not two numbers"},
      {[] { parse_points("1,2;nan,1"); }, "--tokens: item 2 \"nan,1\" is not finite"},
      {[] { parse_points("inf,1"); }, "--tokens: item 1 \"inf,1\" is not finite"},
      {[] { parse_points("1,2;;3,4"); }, "--tokens: item 2 is empty"},
      {[] { parse_points("1,2;"); }, "--tokens: item 2 is empty"},
      {[] { parse_matrix("1,2,3", "--wq"); },
       "--wq: expected four numbers \"a,b,c,d\" (row-major), got \"1,2,3\""},
      {[] { parse_matrix("1,2,x,4", "--wk"); }, "--wk: entry 3 \"x\" is not a number"},
      {[] { parse_matrix("1,2,nan,4", "--wv"); }, "--wv: entry 3 \"nan\" is not finite"},
      {[] { parse_point("1", "--query"); }, "--query: expected two numbers \"x,y\", got \"1\""},
      {[] { parse_point("1,", "--query"); }, "--query: entry 2 \"\" is not a number"},
      {[] { parse_number("abc", "--temperature"); }, "--temperature: \"abc\" is not a number"},
      {[] { parse_gaussian("1,2"); }, "--gaussian: expected \"mx,my;sxx,sxy,syy\""},
      {[] { parse_gaussian("1,2;1,0"); }, "--gaussian (covariance): expected three numbers"},
      {[] { parse_gaussian("1,x;1,0,1"); }, "--gaussian (mean): entry 2 \"x\" is not a number"},
      {[] { parse_gaussian("0,0;1,3,1"); }, "--gaussian: Gaussian covariance is not positive"},
  };
  for (const auto& c : cases) {
    INFO("want: " << c.message);
    check_message(c.run, c.message);
  }
}
