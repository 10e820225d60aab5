// The 2-D geometry of softmax attention (core/geometry.h) against independent references: a
// long-double softmax written here, a brute-force hull, support functions, long-double singular
// values, the Gaussian tilt identity by Monte Carlo, and the messages of bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/geometry.h"

using namespace attn::geometry;
using attn::Error;

namespace {

using Real = long double;
constexpr double kPi = 3.14159265358979323846;

double norm(Vec2 v) {
  return std::hypot(v.x, v.y);
}
double dist(Vec2 a, Vec2 b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}
double dot(Vec2 a, Vec2 b) {
  return a.x * b.x + a.y * b.y;
}
// Exact for small integers; the sign says which side of a -> b the point c is.
double cross(Vec2 a, Vec2 b, Vec2 c) {
  return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}
bool same(Vec2 a, Vec2 b) {
  return a.x == b.x && a.y == b.y;
}
double largest(const std::vector<Vec2>& points) {
  double m = 1;
  for (const Vec2& p : points) m = std::max({m, std::abs(p.x), std::abs(p.y)});
  return m;
}

// A random scene: 1..64 tokens at a random scale and offset, random matrices (sometimes the
// identity), temperature from 0.05 to 20.
Scene random_scene(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> count(1, 64);
  std::uniform_real_distribution<double> unit(-1, 1), log_scale(-1, 1.3);
  std::normal_distribution<double> gauss(0, 1);
  Scene s;
  const int n = count(rng);
  const double spread = std::pow(10.0, log_scale(rng));
  const Vec2 offset = (rng() % 4 == 0) ? Vec2{8 * unit(rng), 8 * unit(rng)} : Vec2{};
  for (int j = 0; j < n; ++j)
    s.tokens.push_back({offset.x + spread * unit(rng), offset.y + spread * unit(rng)});
  auto random_matrix = [&] {
    return rng() % 3 == 0 ? Mat2{} : Mat2{gauss(rng), gauss(rng), gauss(rng), gauss(rng)};
  };
  s.wq = random_matrix();
  s.wk = random_matrix();
  s.wv = random_matrix();
  s.temperature = std::pow(10.0, std::uniform_real_distribution<double>(-1.3, 1.3)(rng));
  return s;
}

// A query at a random direction and a magnitude from 1e-3 to 1e3.
Vec2 random_query(std::mt19937_64& rng) {
  const double angle = std::uniform_real_distribution<double>(0, 2 * kPi)(rng);
  const double r = std::pow(10.0, std::uniform_real_distribution<double>(-3, 3)(rng));
  return {r * std::cos(angle), r * std::sin(angle)};
}

// The formula itself, in long double: q = W^Q v, k_j = W^K t_j, softmax(q.k_j / tau), W^V t_j.
struct Reference {
  std::vector<Real> weights;
  Real zx = 0, zy = 0;
};
Reference reference_attend(const Scene& s, Vec2 v) {
  const Real qx = Real(s.wq.a) * v.x + Real(s.wq.b) * v.y;
  const Real qy = Real(s.wq.c) * v.x + Real(s.wq.d) * v.y;
  std::vector<Real> logits;
  for (const Vec2& t : s.tokens) {
    const Real kx = Real(s.wk.a) * t.x + Real(s.wk.b) * t.y;
    const Real ky = Real(s.wk.c) * t.x + Real(s.wk.d) * t.y;
    logits.push_back((qx * kx + qy * ky) / s.temperature);
  }
  const Real m = *std::max_element(logits.begin(), logits.end());
  Reference r;
  Real sum = 0;
  for (Real l : logits) {
    r.weights.push_back(std::exp(l - m));
    sum += r.weights.back();
  }
  for (size_t j = 0; j < s.tokens.size(); ++j) {
    r.weights[j] /= sum;
    const Vec2 t = s.tokens[j];
    r.zx += r.weights[j] * (Real(s.wv.a) * t.x + Real(s.wv.b) * t.y);
    r.zy += r.weights[j] * (Real(s.wv.c) * t.x + Real(s.wv.d) * t.y);
  }
  return r;
}

// M = W^V T T^T W^K^T W^Q / tau in long double, entry by entry from the sum over tokens.
struct RealMat {
  Real a = 0, b = 0, c = 0, d = 0;
};
RealMat reference_linear_map(const Scene& s) {
  // z = sum_j (v . W^Q^T W^K t_j / tau) W^V t_j: column i of M is the image of e_i.
  RealMat m;
  for (const Vec2& t : s.tokens) {
    const Real kx = Real(s.wk.a) * t.x + Real(s.wk.b) * t.y;
    const Real ky = Real(s.wk.c) * t.x + Real(s.wk.d) * t.y;
    const Real ax = (Real(s.wq.a) * kx + Real(s.wq.c) * ky) / s.temperature;  // W^Q^T k / tau
    const Real ay = (Real(s.wq.b) * kx + Real(s.wq.d) * ky) / s.temperature;
    const Real ux = Real(s.wv.a) * t.x + Real(s.wv.b) * t.y;
    const Real uy = Real(s.wv.c) * t.x + Real(s.wv.d) * t.y;
    m.a += ux * ax;
    m.b += ux * ay;
    m.c += uy * ax;
    m.d += uy * ay;
  }
  return m;
}

// Singular values of a 2x2 matrix from the eigenvalues of M^T M (long double).
void reference_singular_values(const RealMat& m, Real& s1, Real& s2) {
  const Real p = m.a * m.a + m.c * m.c, q = m.a * m.b + m.c * m.d, r = m.b * m.b + m.d * m.d;
  const Real mean = (p + r) / 2, spread = std::sqrt((p - r) * (p - r) / 4 + q * q);
  const Real det = std::abs(m.a * m.d - m.b * m.c);
  s1 = std::sqrt(mean + spread);
  s2 = s1 > 0 ? det / s1 : 0;  // s1 s2 = |det|, precise where mean - spread would cancel
}

// Brute-force hull check. Every hull vertex is an input point, no repeats, strictly convex,
// every point on the left of (or on) every edge, starts at the lowest-then-leftmost point, and
// the vertices are exactly the ends of the brute-force hull edges (all points on the left, the
// collinear ones between the ends).
void check_hull(const std::vector<Vec2>& points, const std::vector<Vec2>& hull, double tol) {
  REQUIRE(!hull.empty());
  for (const Vec2& h : hull)
    CHECK(std::any_of(points.begin(), points.end(), [&](Vec2 p) { return same(p, h); }));
  for (size_t i = 0; i < hull.size(); ++i) {
    for (size_t k = i + 1; k < hull.size(); ++k) CHECK_FALSE(same(hull[i], hull[k]));
  }
  Vec2 lowest = points[0];
  for (const Vec2& p : points) {
    if (p.y < lowest.y || (p.y == lowest.y && p.x < lowest.x)) lowest = p;
  }
  CHECK(same(hull[0], lowest));
  const size_t n = hull.size();
  if (n >= 3) {
    for (size_t i = 0; i < n; ++i) {
      const Vec2 a = hull[i], b = hull[(i + 1) % n], c = hull[(i + 2) % n];
      CHECK(cross(a, b, c) > 0);  // counter-clockwise, no collinear vertex
      for (const Vec2& p : points) CHECK(cross(a, b, p) >= -tol);
    }
  } else if (n == 2) {
    for (const Vec2& p : points) CHECK(std::abs(cross(hull[0], hull[1], p)) <= tol);
  } else {
    for (const Vec2& p : points) CHECK(same(p, hull[0]));
  }
  if (n < 3 || tol != 0) return;  // the edge enumeration below needs exact arithmetic
  std::vector<Vec2> ends;
  for (const Vec2& a : points) {
    for (const Vec2& b : points) {
      if (same(a, b)) continue;
      bool edge = true;
      for (const Vec2& p : points) {
        const double c = cross(a, b, p);
        const double along = dot({b.x - a.x, b.y - a.y}, {p.x - a.x, p.y - a.y});
        if (c < 0 || (c == 0 &&
                      (along < 0 || along > dot({b.x - a.x, b.y - a.y}, {b.x - a.x, b.y - a.y})))) {
          edge = false;
          break;
        }
      }
      if (!edge) continue;
      for (Vec2 e : {a, b}) {
        if (std::none_of(ends.begin(), ends.end(), [&](Vec2 x) { return same(x, e); }))
          ends.push_back(e);
      }
    }
  }
  CHECK(ends.size() == hull.size());
  for (const Vec2& e : ends)
    CHECK(std::any_of(hull.begin(), hull.end(), [&](Vec2 h) { return same(h, e); }));
}

double distance_to_boundary(const std::vector<Vec2>& hull, Vec2 p) {
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < hull.size(); ++i) {
    const Vec2 a = hull[i], b = hull[(i + 1) % hull.size()];
    const Vec2 d{b.x - a.x, b.y - a.y};
    const double t = std::clamp(dot({p.x - a.x, p.y - a.y}, d) / dot(d, d), 0.0, 1.0);
    best = std::min(best, dist(p, {a.x + t * d.x, a.y + t * d.y}));
  }
  return best;
}

void check_message(const std::function<void()>& f, const std::string& want) {
  try {
    f();
    FAIL("accepted, expected: " << want);
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK_MESSAGE(msg.find(want) != std::string::npos, "message was: " << msg);
  }
}

}  // namespace

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
