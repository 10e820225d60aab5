// Independent references for the geometry tests (tests/core/test_geometry*.cpp): a long-double
// softmax, long-double linear maps and singular values, a brute-force hull check, random scenes.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/analysis/geometry.h"

using namespace attn::geometry;
using attn::Error;

namespace attn::test::geometry_ref {

using Real = long double;
constexpr double kPi = 3.14159265358979323846;

inline double norm(Vec2 v) {
  return std::hypot(v.x, v.y);
}
inline double dist(Vec2 a, Vec2 b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}
inline double dot(Vec2 a, Vec2 b) {
  return a.x * b.x + a.y * b.y;
}
// Exact for small integers; the sign says which side of a -> b the point c is.
inline double cross(Vec2 a, Vec2 b, Vec2 c) {
  return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}
inline bool same(Vec2 a, Vec2 b) {
  return a.x == b.x && a.y == b.y;
}
inline double largest(const std::vector<Vec2>& points) {
  double m = 1;
  for (const Vec2& p : points) m = std::max({m, std::abs(p.x), std::abs(p.y)});
  return m;
}

// A random scene: 1..64 tokens at a random scale and offset, random matrices (sometimes the
// identity), temperature from 0.05 to 20.
inline Scene random_scene(std::mt19937_64& rng) {
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
inline Vec2 random_query(std::mt19937_64& rng) {
  const double angle = std::uniform_real_distribution<double>(0, 2 * kPi)(rng);
  const double r = std::pow(10.0, std::uniform_real_distribution<double>(-3, 3)(rng));
  return {r * std::cos(angle), r * std::sin(angle)};
}

// The formula itself, in long double: q = W^Q v, k_j = W^K t_j, softmax(q.k_j / tau), W^V t_j.
struct Reference {
  std::vector<Real> weights;
  Real zx = 0, zy = 0;
};
inline Reference reference_attend(const Scene& s, Vec2 v) {
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
inline RealMat reference_linear_map(const Scene& s) {
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
inline void reference_singular_values(const RealMat& m, Real& s1, Real& s2) {
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
inline void check_hull(const std::vector<Vec2>& points, const std::vector<Vec2>& hull, double tol) {
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

inline double distance_to_boundary(const std::vector<Vec2>& hull, Vec2 p) {
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < hull.size(); ++i) {
    const Vec2 a = hull[i], b = hull[(i + 1) % hull.size()];
    const Vec2 d{b.x - a.x, b.y - a.y};
    const double t = std::clamp(dot({p.x - a.x, p.y - a.y}, d) / dot(d, d), 0.0, 1.0);
    best = std::min(best, dist(p, {a.x + t * d.x, a.y + t * d.y}));
  }
  return best;
}

inline void check_message(const std::function<void()>& f, const std::string& want) {
  try {
    f();
    FAIL("accepted, expected: " << want);
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK_MESSAGE(msg.find(want) != std::string::npos, "message was: " << msg);
  }
}

}  // namespace attn::test::geometry_ref

