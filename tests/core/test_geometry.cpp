// The maps of the 2-D geometry of softmax attention (core/analysis/geometry.h) against independent
// references (tests/core/geometry_reference.h): a long-double softmax, a brute-force hull,
// support functions and long-double singular values.
#include <doctest/doctest.h>

#include "tests/core/geometry_reference.h"

using namespace attn::test::geometry_ref;

TEST_CASE("geometry: z is inside the hull of the value points for random configurations") {
  std::mt19937_64 rng(20240607);
  std::uniform_real_distribution<double> angle(0, 2 * kPi);
  int checked = 0;
  for (int config = 0; config < 3000; ++config) {
    const Scene s = random_scene(rng);
    const auto values = value_points(s);
    const auto hull = convex_hull(values);
    const double scale = largest(values);
    for (int k = 0; k < 4; ++k) {
      const Vec2 v = random_query(rng);
      std::vector<double> p;
      const Vec2 z = attend(s, v, &p);
      INFO("config " << config << ", n " << s.tokens.size() << ", v (" << v.x << ", " << v.y
                     << "), z (" << z.x << ", " << z.y << ")");
      REQUIRE(p.size() == s.tokens.size());
      double sum = 0;
      for (double w : p) {
        CHECK(w >= 0);
        sum += w;
      }
      CHECK(sum == doctest::Approx(1).epsilon(1e-12));
      CHECK(inside_hull(hull, z));
      // Independent of the hull code: a convex combination never beats the support function
      // h(d) = max_j u_j . d in any direction.
      for (int d = 0; d < 8; ++d) {
        const double a = angle(rng);
        const Vec2 dir{std::cos(a), std::sin(a)};
        double support = -std::numeric_limits<double>::infinity();
        for (const Vec2& u : values) support = std::max(support, dot(u, dir));
        CHECK(dot(z, dir) <= support + 1e-12 * scale);
      }
      ++checked;
    }
  }
  CHECK(checked == 12000);
}

TEST_CASE("geometry: attend and attention_weights equal the long-double formula") {
  std::mt19937_64 rng(7);
  for (int config = 0; config < 1000; ++config) {
    const Scene s = random_scene(rng);
    const double scale = largest(value_points(s));
    const Vec2 v = random_query(rng);
    const Reference ref = reference_attend(s, v);
    std::vector<double> p;
    const Vec2 z = attend(s, v, &p);
    INFO("config " << config);
    CHECK(std::abs(z.x - double(ref.zx)) <= 1e-10 * scale);
    CHECK(std::abs(z.y - double(ref.zy)) <= 1e-10 * scale);
    const auto weights = attention_weights(s, v);
    for (size_t j = 0; j < p.size(); ++j) {
      CHECK(std::abs(p[j] - double(ref.weights[j])) <= 1e-10);
      CHECK(weights[j] == p[j]);
    }
    const Vec2 warped = warp_point(s, v, Map::Softmax);
    CHECK(same(warped, z));
  }
}

TEST_CASE("geometry: convex hull against a brute-force hull (integer grids: exact)") {
  std::mt19937_64 rng(11);
  for (int config = 0; config < 400; ++config) {
    // Small integer grids: many duplicates and collinear points, exact cross products.
    const int n = 1 + int(rng() % 40), span = 1 + int(rng() % 6);
    std::vector<Vec2> points;
    for (int i = 0; i < n; ++i)
      points.push_back(
          {double(int(rng() % (2 * span + 1)) - span), double(int(rng() % (2 * span + 1)) - span)});
    INFO("config " << config << ", " << n << " points");
    check_hull(points, convex_hull(points), 0.0);
  }
  for (int config = 0; config < 300; ++config) {
    std::vector<Vec2> points;
    std::normal_distribution<double> gauss(0, 3);
    const int n = 1 + int(rng() % 64);
    for (int i = 0; i < n; ++i) points.push_back({gauss(rng), gauss(rng)});
    check_hull(points, convex_hull(points), 1e-12);
  }
}

TEST_CASE("geometry: hulls of collinear, duplicate and tiny point sets") {
  CHECK(convex_hull({}).empty());
  auto one = convex_hull({{2, 3}, {2, 3}, {2, 3}});
  REQUIRE(one.size() == 1);
  CHECK(same(one[0], {2, 3}));
  // Collinear: the segment's ends, lowest first.
  auto segment = convex_hull({{1, 1}, {3, 3}, {-2, -2}, {0, 0}, {3, 3}, {2, 2}});
  REQUIRE(segment.size() == 2);
  CHECK(same(segment[0], {-2, -2}));
  CHECK(same(segment[1], {3, 3}));
  auto horizontal = convex_hull({{4, 1}, {-1, 1}, {2, 1}});
  REQUIRE(horizontal.size() == 2);
  CHECK(same(horizontal[0], {-1, 1}));
  CHECK(same(horizontal[1], {4, 1}));
  // A square with edge midpoints, the centre and repeats: the four corners, counter-clockwise
  // from the bottom-left one.
  auto square = convex_hull({{1, 1},
                             {0, 1},
                             {-1, 1},
                             {-1, 0},
                             {0, 0},
                             {-1, -1},
                             {0, -1},
                             {1, -1},
                             {1, 0},
                             {1, 1},
                             {-1, -1}});
  REQUIRE(square.size() == 4);
  const Vec2 want[] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  for (int i = 0; i < 4; ++i) CHECK(same(square[i], want[i]));
  // Lowest-then-leftmost start when the bottom is an edge.
  auto trapezoid = convex_hull({{3, 0}, {0, 0}, {2, 2}, {1, 2}});
  REQUIRE(trapezoid.size() == 4);
  CHECK(same(trapezoid[0], {0, 0}));
  CHECK(same(trapezoid[1], {3, 0}));

  // inside_hull for each shape.
  CHECK(inside_hull(one, {2, 3}));
  CHECK_FALSE(inside_hull(one, {2, 3.001}));
  CHECK(inside_hull(segment, {0.5, 0.5}));
  CHECK(inside_hull(segment, {3, 3}));
  CHECK_FALSE(inside_hull(segment, {3.01, 3.01}));
  CHECK_FALSE(inside_hull(segment, {0.5, 0.6}));
  CHECK(inside_hull(square, {0, 0}));
  CHECK(inside_hull(square, {1, 0.3}));  // on the boundary
  CHECK(inside_hull(square, {1 + 1e-12, 0.3}));
  CHECK_FALSE(inside_hull(square, {1.001, 0.3}));
  CHECK_FALSE(inside_hull({}, {0, 0}));
  CHECK_FALSE(inside_hull(square, {std::nan(""), 0}));

  const Box box = bounding_box({{1, -2}, {-3, 4}, {0, 0}});
  CHECK(same(box.min, {-3, -2}));
  CHECK(same(box.max, {1, 4}));
  CHECK_THROWS_AS(bounding_box({}), Error);
}

TEST_CASE("geometry: the linear image of a circle is the predicted ellipse to 1e-9") {
  std::mt19937_64 rng(3);
  int full_rank = 0;
  for (int config = 0; config < 200; ++config) {
    Scene s = random_scene(rng);
    if (s.tokens.size() < 2) s.tokens.push_back({0.3, -1.7});
    const double r = std::pow(10.0, std::uniform_real_distribution<double>(-1, 1)(rng));
    const Ellipse e = predicted_linear_image(s, r);
    INFO("config " << config << ", r " << r << ", radii " << e.radius1 << ", " << e.radius2);
    CHECK(same(e.center, {0, 0}));
    CHECK(norm(e.axis1) == doctest::Approx(1).epsilon(1e-14));
    CHECK(std::abs(dot(e.axis1, e.axis2)) <= 1e-14);
    CHECK(e.radius1 >= e.radius2);
    // Radii: r times the singular values of M, computed another way.
    Real s1, s2;
    reference_singular_values(reference_linear_map(s), s1, s2);
    CHECK(std::abs(e.radius1 - r * double(s1)) <= 1e-9 * e.radius1);
    CHECK(std::abs(e.radius2 - r * double(s2)) <= 1e-9 * e.radius1);
    // Every mapped circle point satisfies the ellipse's implicit equation.
    const int samples = 720;
    const auto image = map_points(s, circle(r, samples), Map::Linear);
    if (e.radius2 < 1e-3 * e.radius1) continue;  // near-segments: checked in their own case
    ++full_rank;
    double worst = 0;
    for (const Vec2& p : image) {
      const double x1 = dot(p, e.axis1) / e.radius1, x2 = dot(p, e.axis2) / e.radius2;
      worst = std::max(worst, std::abs(std::hypot(x1, x2) - 1));
    }
    CHECK(worst <= 1e-9);
    // The extreme radii are max and min |M v| over the circle (dense sampling: a half step
    // of pi / N misses the maximum by a relative (pi / N)^2 / 2 < 1e-9).
    const auto dense = map_points(s, circle(r, 100000), Map::Linear);
    double most = 0, least = std::numeric_limits<double>::infinity();
    for (const Vec2& p : dense) {
      most = std::max(most, norm(p));
      least = std::min(least, norm(p));
    }
    const double step = kPi / 100000;
    CHECK(most <= e.radius1 * (1 + 1e-12));
    CHECK(most >= e.radius1 * (1 - 1e-9));
    CHECK(least >= e.radius2 * (1 - 1e-9));
    CHECK(least * least <=
          (e.radius2 * e.radius2 + e.radius1 * e.radius1 * step * step) * (1 + 1e-9));
    // Ellipse::point traces the same curve.
    for (int k = 0; k < 16; ++k) {
      const Vec2 p = e.point(2 * kPi * k / 16);
      CHECK(std::abs(std::hypot(dot(p, e.axis1) / e.radius1, dot(p, e.axis2) / e.radius2) - 1) <=
            1e-12);
    }
  }
  CHECK(full_rank > 100);
}

TEST_CASE("geometry: collinear tokens give a segment, zero maps give a point") {
  Scene s = preset("collinear");
  const Ellipse e = predicted_linear_image(s, 2.0);
  CHECK(e.radius2 <= 1e-12 * e.radius1);
  CHECK(std::abs(e.axis1.y / e.axis1.x - 0.5) <= 1e-12);  // along the tokens' line y = x / 2
  for (const Vec2& p : map_points(s, circle(2.0, 360), Map::Linear)) {
    CHECK(std::abs(dot(p, e.axis2)) <= 1e-9 * e.radius1);
    CHECK(std::abs(dot(p, e.axis1)) <= e.radius1 * (1 + 1e-12));
  }
  s.wq = Mat2{0, 0, 0, 0};  // rank 0
  const Ellipse zero = predicted_linear_image(s, 1.0);
  CHECK(zero.radius1 == 0);
  CHECK(zero.radius2 == 0);
  CHECK(norm(zero.axis1) == doctest::Approx(1));
  for (const Vec2& p : map_points(s, circle(1.0, 8), Map::Linear)) CHECK(same(p, {0, 0}));
  Scene origin;
  origin.tokens = {{0, 0}};
  CHECK(predicted_linear_image(origin, 3).radius1 == 0);
  CHECK(predicted_linear_image(preset("three"), 0).radius1 == 0);
}

TEST_CASE("geometry: with W = I the ellipse's axes are the eigenvectors of T T^T") {
  std::mt19937_64 rng(5);
  for (int config = 0; config < 100; ++config) {
    Scene s = random_scene(rng);
    s.wq = s.wk = s.wv = Mat2{};
    s.temperature = 1;
    double gxx = 0, gxy = 0, gyy = 0;
    for (const Vec2& t : s.tokens) {
      gxx += t.x * t.x;
      gxy += t.x * t.y;
      gyy += t.y * t.y;
    }
    const double r = 1.5;
    const Ellipse e = predicted_linear_image(s, r);
    const double scale = std::max(1.0, gxx + gyy);
    for (auto [axis, radius] : {std::pair{e.axis1, e.radius1}, std::pair{e.axis2, e.radius2}}) {
      const Vec2 g{gxx * axis.x + gxy * axis.y, gxy * axis.x + gyy * axis.y};
      CHECK(std::abs(g.x - radius / r * axis.x) <= 1e-12 * scale);
      CHECK(std::abs(g.y - radius / r * axis.y) <= 1e-12 * scale);
    }
  }
}

TEST_CASE("geometry: linear_map(scene) * v equals attend_linear(v), the sum over tokens") {
  std::mt19937_64 rng(9);
  for (int config = 0; config < 500; ++config) {
    const Scene s = random_scene(rng);
    const Vec2 v = random_query(rng);
    const Mat2 m = linear_map(s);
    const Vec2 direct = attend_linear(s, v), mapped = m * v;
    const RealMat ref = reference_linear_map(s);
    const double scale = std::max(
        1.0,
        double(std::abs(ref.a) + std::abs(ref.b) + std::abs(ref.c) + std::abs(ref.d)) * norm(v));
    CHECK(std::abs(direct.x - mapped.x) <= 1e-12 * scale);
    CHECK(std::abs(direct.y - mapped.y) <= 1e-12 * scale);
    CHECK(std::abs(double(ref.a * v.x + ref.b * v.y) - mapped.x) <= 1e-12 * scale);
    CHECK(std::abs(double(ref.c * v.x + ref.d * v.y) - mapped.y) <= 1e-12 * scale);
    CHECK(same(warp_point(s, v, Map::Linear), direct));
  }
  // The matrix helpers.
  const Mat2 a{1, 2, 3, 4}, b{0, 1, -1, 2};
  const Mat2 ab = a * b;
  CHECK((ab.a == -2 && ab.b == 5 && ab.c == -4 && ab.d == 11));
  const Mat2 at = transpose(a);
  CHECK((at.a == 1 && at.b == 3 && at.c == 2 && at.d == 4));
  CHECK(same(a * Vec2{1, -1}, {-1, -1}));
}

TEST_CASE("geometry: residual map, alpha 0 is the identity and alpha 1 is v + F(v)") {
  const Scene s = preset("five");
  std::mt19937_64 rng(1);
  for (int k = 0; k < 100; ++k) {
    const Vec2 v = random_query(rng);
    CHECK(same(warp_point(s, v, Map::Residual, 0.0), v));
    const Vec2 f = attend(s, v);
    const Vec2 full = warp_point(s, v, Map::Residual, 1.0);
    CHECK(same(full, {v.x + f.x, v.y + f.y}));
    const Vec2 half = warp_point(s, v, Map::Residual, 0.5);
    CHECK(same(half, {v.x + 0.5 * f.x, v.y + 0.5 * f.y}));
  }
  CHECK(std::string(map_name(Map::Softmax)) == "softmax");
  CHECK(std::string(map_name(Map::Linear)) == "linear");
  CHECK(std::string(map_name(Map::Residual)) == "residual");
}

TEST_CASE("geometry: far-away queries never give NaN; the limit picks the extreme token") {
  const Scene s = preset("five");
  const auto hull = convex_hull(s.tokens);
  for (double r : {1e3, 1e6, 1e12}) {
    for (int k = 0; k < 360; ++k) {
      const Vec2 v{r * std::cos(2 * kPi * k / 360), r * std::sin(2 * kPi * k / 360)};
      std::vector<double> p;
      const Vec2 z = attend(s, v, &p);
      REQUIRE(std::isfinite(z.x));
      REQUIRE(std::isfinite(z.y));
      CHECK(inside_hull(hull, z));
      // Far queries land on the hull's boundary (the seed: circles approach the hull).
      CHECK(distance_to_boundary(hull, z) <= 1e-6);
    }
  }
  // Along +x the largest t.x wins: token (1.5, 0.2).
  const Vec2 z = attend(s, {1e6, 0});
  CHECK(z.x == doctest::Approx(1.5));
  CHECK(z.y == doctest::Approx(0.2));
  // Past double's exponent range (logits ~ 1e300 / 1e-300): the long-double path.
  if (std::numeric_limits<long double>::max_exponent > std::numeric_limits<double>::max_exponent) {
    Scene tiny = s;
    tiny.temperature = 1e-300;
    const Vec2 w = attend(tiny, {0, 1e300});  // along +y: token (0.4, 1.3)
    CHECK(w.x == doctest::Approx(0.4));
    CHECK(w.y == doctest::Approx(1.3));
  }
  // Small circles map near the centroid (W = I: z ~ mean + cov v).
  Vec2 centroid;
  for (const Vec2& t : s.tokens) centroid = {centroid.x + t.x / 5, centroid.y + t.y / 5};
  for (const Vec2& z0 : map_points(s, circle(1e-6, 32), Map::Softmax))
    CHECK(dist(z0, centroid) <= 1e-5);
}

// --- The blog's claims about the softmax map (seed 004; docs/guide/geometry.md) --------

namespace {

// Winding number of the closed polyline about p: the summed signed angles, in turns.
double winding_number(const std::vector<Vec2>& curve, Vec2 p) {
  double total = 0;
  for (size_t i = 0; i < curve.size(); ++i) {
    const Vec2 a{curve[i].x - p.x, curve[i].y - p.y};
    const Vec2 b{curve[(i + 1) % curve.size()].x - p.x, curve[(i + 1) % curve.size()].y - p.y};
    total += std::atan2(a.x * b.y - a.y * b.x, a.x * b.x + a.y * b.y);
  }
  return total / (2 * kPi);
}

// Whether two non-adjacent edges of the closed polyline cross or touch: orientation tests on
// every pair (O(n^2)), with a relative tolerance so that rounding near collinear edges does not
// count as a crossing.
bool self_intersects(const std::vector<Vec2>& c, double scale) {
  const size_t n = c.size();
  const double eps = 1e-13 * scale * scale;
  auto side = [&](Vec2 a, Vec2 b, Vec2 p) {
    const double s = cross(a, b, p);
    return s > eps ? 1 : (s < -eps ? -1 : 0);
  };
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 2; j < n; ++j) {
      if (i == 0 && j == n - 1) continue;  // the closing edge meets the first
      const Vec2 a = c[i], b = c[(i + 1) % n], p = c[j], q = c[(j + 1) % n];
      const int s1 = side(a, b, p), s2 = side(a, b, q), s3 = side(p, q, a), s4 = side(p, q, b);
      if (s1 * s2 < 0 && s3 * s4 < 0) return true;                            // a proper crossing
      if (same(a, p) || same(a, q) || same(b, p) || same(b, q)) return true;  // a repeated vertex
    }
  return false;
}

}  // namespace

TEST_CASE("geometry: images of circles under the softmax map are closed simple curves") {
  // z(v) = grad logsumexp(v T) is the gradient of a strictly convex function when the tokens
  // span the plane, hence injective: a circle maps to a simple closed curve around z(0).
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::vector<Scene> scenes = {preset("three"), preset("five"), preset("far")};
  for (int k = 0; k < 6; ++k) {
    Scene s;
    const int n = 3 + k * 3;
    for (int j = 0; j < n; ++j) s.tokens.push_back({2 * unit(rng), 2 * unit(rng)});
    scenes.push_back(s);
  }
  int curves = 0;
  for (size_t i = 0; i < scenes.size(); ++i)
    for (double r : {0.1, 0.5, 1.0, 2.5, 5.0}) {
      CAPTURE(i);
      CAPTURE(r);
      const auto image = map_points(scenes[i], circle(r, 720), Map::Softmax);
      const Vec2 center = attend(scenes[i], {0, 0});
      CHECK(std::abs(std::abs(winding_number(image, center)) - 1.0) < 1e-9);
      CHECK(!self_intersects(image, largest(scenes[i].tokens)));
      ++curves;
    }
  CHECK(curves == 45);
  // The check can fail: a figure-eight has winding 0 about its crossing's neighbourhood and
  // crosses itself.
  std::vector<Vec2> eight;
  for (int k = 0; k < 200; ++k) {
    const double t = 2 * kPi * (k + 0.5) / 200;  // the crossing falls inside two edges
    eight.push_back({std::sin(t), std::sin(t) * std::cos(t)});
  }
  CHECK(self_intersects(eight, 1.0));
}

TEST_CASE("geometry: the softmax map is differentiable: central differences converge to J") {
  // The blog says the map is not differentiable in the tokens/queries; it is smooth. With logits
  // l_j = v . a_j, a_j = W^Q^T W^K t_j / tau, and u_j = W^V t_j:
  //   dz/dv = sum_j p_j u_j (a_j - abar)^T,  abar = sum_j p_j a_j   (a covariance).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(-1, 1), tau(0.5, 2.0);
  std::normal_distribution<double> gauss(0, 1);
  for (int config = 0; config < 40; ++config) {
    Scene s;  // logits of order one: the map is neither flat nor saturated
    for (int j = 0; j < 2 + config % 11; ++j)
      s.tokens.push_back({1.5 * unit(rng), 1.5 * unit(rng)});
    if (config % 3) {
      s.wq = Mat2{gauss(rng), gauss(rng), gauss(rng), gauss(rng)};
      s.wk = Mat2{gauss(rng), gauss(rng), gauss(rng), gauss(rng)};
      s.wv = Mat2{gauss(rng), gauss(rng), gauss(rng), gauss(rng)};
    }
    s.temperature = tau(rng);
    const Vec2 v = {std::uniform_real_distribution<double>(-1, 1)(rng),
                    std::uniform_real_distribution<double>(-1, 1)(rng)};
    std::vector<double> p;
    attend(s, v, &p);
    const Mat2 A = transpose(s.wq) * s.wk;
    Vec2 abar{0, 0};
    std::vector<Vec2> a, u;
    for (size_t j = 0; j < s.tokens.size(); ++j) {
      const Vec2 aj = A * s.tokens[j];
      a.push_back({aj.x / s.temperature, aj.y / s.temperature});
      u.push_back(s.wv * s.tokens[j]);
      abar = {abar.x + p[j] * a.back().x, abar.y + p[j] * a.back().y};
    }
    double J[2][2] = {{0, 0}, {0, 0}};
    for (size_t j = 0; j < p.size(); ++j) {
      const double d[2] = {a[j].x - abar.x, a[j].y - abar.y}, w[2] = {u[j].x, u[j].y};
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) J[r][c] += p[j] * w[r] * d[c];
    }
    double jnorm = 1e-300;
    for (auto& row : J)
      for (double x : row) jnorm = std::max(jnorm, std::abs(x));
    // Central differences with step h err by O(h^2 |z'''|); the error must shrink with h until
    // rounding takes over. Scale h by the logits' scale so every scene is in the smooth regime.
    double scale = 1e-300;
    for (const Vec2& aj : a) scale = std::max({scale, std::abs(aj.x), std::abs(aj.y)});
    std::vector<double> errors;
    for (double h : {1e-1, 1e-2, 1e-3}) {
      const double step = h / scale;
      double err = 0;
      for (int c = 0; c < 2; ++c) {
        const Vec2 dv = c == 0 ? Vec2{step, 0} : Vec2{0, step};
        const Vec2 zp = attend(s, {v.x + dv.x, v.y + dv.y}),
                   zm = attend(s, {v.x - dv.x, v.y - dv.y});
        err = std::max({err, std::abs((zp.x - zm.x) / (2 * step) - J[0][c]),
                        std::abs((zp.y - zm.y) / (2 * step) - J[1][c])});
      }
      errors.push_back(err / jnorm);
    }
    CAPTURE(config);
    CAPTURE(errors[0]);
    CAPTURE(errors[1]);
    CAPTURE(errors[2]);
    CHECK(errors[2] < 1e-5);
    CHECK(errors[2] <= errors[1] + 1e-9);
    CHECK(errors[1] <= errors[0] + 1e-9);
    // And in a token: dz/dt_0 = p_0 W^V + p_0 (u_0 - z) s^T, s = W^K^T W^Q v / tau (the
    // gradient of l_0 in t_0).
    const Vec2 z = attend(s, v);
    const Vec2 sv = transpose(s.wk) * (s.wq * v);
    const double sg[2] = {sv.x / s.temperature, sv.y / s.temperature};
    const double wv[2][2] = {{s.wv.a, s.wv.b}, {s.wv.c, s.wv.d}};
    const double du[2] = {u[0].x - z.x, u[0].y - z.y};
    double T[2][2], tnorm = 1e-300;
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) {
        T[r][c] = p[0] * wv[r][c] + p[0] * du[r] * sg[c];
        tnorm = std::max(tnorm, std::abs(T[r][c]));
      }
    std::vector<double> token_errors;
    for (double h : {1e-1, 1e-2, 1e-3}) {
      double err = 0;
      for (int c = 0; c < 2; ++c) {
        Scene sp = s, sm = s;
        (c == 0 ? sp.tokens[0].x : sp.tokens[0].y) += h;
        (c == 0 ? sm.tokens[0].x : sm.tokens[0].y) -= h;
        const Vec2 zp = attend(sp, v), zm = attend(sm, v);
        err = std::max({err, std::abs((zp.x - zm.x) / (2 * h) - T[0][c]),
                        std::abs((zp.y - zm.y) / (2 * h) - T[1][c])});
      }
      token_errors.push_back(err / tnorm);
    }
    CAPTURE(token_errors[2]);
    CHECK(token_errors[2] < 1e-3);
    CHECK(token_errors[2] <= token_errors[1] + 1e-9);
    CHECK(token_errors[1] <= token_errors[0] + 1e-9);
  }
}

TEST_CASE("geometry: attention over N(mu, Sigma) samples tends to mu + Sigma v within its error") {
  // The blog says continuous attention over all vectors gives 0; for Gaussian tokens the limit
  // is the tilted mean mu + Sigma v. The estimate z = sum w_j t_j / sum w_j (w_j = e^{v.t_j}) is
  // self-normalised importance sampling: its standard error per coordinate is
  // sqrt(sum w_j^2 (t_j - z)^2) / sum w_j (the delta method), from the same samples.
  const Gaussian g{{0.4, -0.3}, {0.8, 0.25, 0.25, 0.5}};
  Scene s;
  s.tokens = sample_gaussian(g, 200000, 4242);
  for (int k = 0; k < 8; ++k) {
    const Vec2 v{0.8 * std::cos(2 * kPi * k / 8), 0.8 * std::sin(2 * kPi * k / 8)};
    const Vec2 exact{0.4 + 0.8 * v.x + 0.25 * v.y, -0.3 + 0.25 * v.x + 0.5 * v.y};
    std::vector<double> p;
    const Vec2 z = attend(s, v, &p);
    double se_x = 0, se_y = 0;  // p_j = w_j / sum w
    for (size_t j = 0; j < p.size(); ++j) {
      se_x += p[j] * p[j] * (s.tokens[j].x - z.x) * (s.tokens[j].x - z.x);
      se_y += p[j] * p[j] * (s.tokens[j].y - z.y) * (s.tokens[j].y - z.y);
    }
    se_x = std::sqrt(se_x);
    se_y = std::sqrt(se_y);
    CAPTURE(k);
    CHECK(se_x < 0.01);  // enough samples to resolve the limit
    CHECK(se_y < 0.01);
    CHECK(std::abs(z.x - exact.x) <= 4 * se_x);
    CHECK(std::abs(z.y - exact.y) <= 4 * se_y);
    // Far from 0: |mu + Sigma v| is the tilted mean, not the origin.
    CHECK(std::hypot(exact.x, exact.y) > 20 * std::max(se_x, se_y));
  }
}
