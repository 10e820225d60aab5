// The geometry of softmax attention in 2-D: see core/analysis/geometry.h. Pure C++17, doubles.
#include "core/analysis/geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>

#include "core/base/enum_names.h"
#include "core/base/error.h"

namespace attn::geometry {
namespace {

constexpr double kPi = 3.14159265358979323846;

Vec2 add(Vec2 a, Vec2 b) {
  return {a.x + b.x, a.y + b.y};
}
Vec2 sub(Vec2 a, Vec2 b) {
  return {a.x - b.x, a.y - b.y};
}
Vec2 scale(Vec2 a, double s) {
  return {a.x * s, a.y * s};
}
double dot(Vec2 a, Vec2 b) {
  return a.x * b.x + a.y * b.y;
}
// z-component of (b - a) x (c - a): > 0 when a, b, c turn counter-clockwise.
double cross(Vec2 a, Vec2 b, Vec2 c) {
  return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
}
bool finite(Vec2 v) {
  return std::isfinite(v.x) && std::isfinite(v.y);
}

std::string num(double v) {
  std::ostringstream s;
  s.precision(15);
  s << v;
  return s.str();
}
std::string pair(Vec2 v) {
  return "(" + num(v.x) + ", " + num(v.y) + ")";
}

void check_range(long long value, long long lo, long long hi, const std::string& what) {
  if (value < lo || value > hi)
    throw Error(what + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                "], got " + std::to_string(value));
}

void check_matrix(const Mat2& m, const char* name) {
  const double e[4] = {m.a, m.b, m.c, m.d};
  for (int i = 0; i < 4; ++i) {
    if (!std::isfinite(e[i]))
      throw Error(std::string(name) + " entry [" + std::to_string(i / 2) + "][" +
                  std::to_string(i % 2) + "] is not finite (" + num(e[i]) + ")");
  }
}

void check_temperature(double t) {
  if (!(t > 0) || !std::isfinite(t))
    throw Error("temperature must be > 0 and finite, got " + num(t));
}

void check_alpha(double alpha) {
  if (!(alpha >= 0 && alpha <= 1)) throw Error("alpha must be in [0, 1], got " + num(alpha));
}

void check_extent(double extent) {
  if (!(extent > 0) || !std::isfinite(extent))
    throw Error("grid extent must be > 0 and finite, got " + num(extent));
}

// A validated scene with its per-token vectors computed once: logit_j = v . keys[j], where
// keys[j] = W^Q^T W^K t_j / tau (since (W^Q v).(W^K t) = v.(W^Q^T W^K t)), values[j] = W^V t_j.
class Prepared {
 public:
  explicit Prepared(const Scene& scene) : scene_(scene) {
    validate(scene);
    const Mat2 key_map = transpose(scene.wq) * scene.wk;
    keys_.reserve(scene.tokens.size());
    values_.reserve(scene.tokens.size());
    for (const Vec2& t : scene.tokens) {
      keys_.push_back(scale(key_map * t, 1.0 / scene.temperature));
      values_.push_back(scene.wv * t);
    }
  }

  // Softmax weights into `p` (resized). Max subtracted, so large logits never overflow.
  void weights(Vec2 v, std::vector<double>& p) const {
    if (!finite(v)) throw Error("the query " + pair(v) + " is not finite");
    const size_t n = keys_.size();
    p.resize(n);
    double max_logit = -std::numeric_limits<double>::infinity();
    bool all_finite = true;
    for (size_t j = 0; j < n; ++j) {
      p[j] = dot(v, keys_[j]);
      all_finite = all_finite && std::isfinite(p[j]);
      max_logit = std::max(max_logit, p[j]);
    }
    if (!all_finite) return weights_wide(v, p);
    double sum = 0;
    for (size_t j = 0; j < n; ++j) sum += (p[j] = std::exp(p[j] - max_logit));
    for (double& w : p) w /= sum;  // sum >= 1: the largest logit contributes exp(0)
  }

  Vec2 softmax(Vec2 v, std::vector<double>& p) const {
    weights(v, p);
    Vec2 z;
    for (size_t j = 0; j < p.size(); ++j) {
      z.x += p[j] * values_[j].x;
      z.y += p[j] * values_[j].y;
    }
    return z;
  }

  // Without softmax, from the definition: sum_j l_j u_j.
  Vec2 linear(Vec2 v) const {
    if (!finite(v)) throw Error("the query " + pair(v) + " is not finite");
    Vec2 z;
    for (size_t j = 0; j < keys_.size(); ++j) z = add(z, scale(values_[j], dot(v, keys_[j])));
    return z;
  }

  Vec2 warp(Vec2 v, Map map, double alpha, std::vector<double>& p) const {
    switch (map) {
      case Map::Softmax:
        return softmax(v, p);
      case Map::Linear:
        return linear(v);
      case Map::Residual:
        return add(v, scale(softmax(v, p), alpha));
    }
    throw Error("unknown map");
  }

 private:
  // Logits past double's range (huge queries, tokens or 1/tau): the same formula in long
  // double, whose exponent range holds any product of a few doubles on x86-64.
  void weights_wide(Vec2 v, std::vector<double>& p) const {
    using Real = long double;
    const Mat2& wq = scene_.wq;
    const Mat2& wk = scene_.wk;
    const Real qx = Real(wq.a) * v.x + Real(wq.b) * v.y;
    const Real qy = Real(wq.c) * v.x + Real(wq.d) * v.y;
    std::vector<Real> logits(scene_.tokens.size());
    Real max_logit = -std::numeric_limits<Real>::infinity();
    for (size_t j = 0; j < logits.size(); ++j) {
      const Vec2 t = scene_.tokens[j];
      const Real kx = Real(wk.a) * t.x + Real(wk.b) * t.y;
      const Real ky = Real(wk.c) * t.x + Real(wk.d) * t.y;
      logits[j] = (qx * kx + qy * ky) / Real(scene_.temperature);
      if (!std::isfinite(logits[j]))
        throw Error("attention logits overflow for the query " + pair(v) +
                    ": scale the tokens, matrices or temperature");
      max_logit = std::max(max_logit, logits[j]);
    }
    Real sum = 0;
    std::vector<Real> e(logits.size());
    for (size_t j = 0; j < e.size(); ++j) sum += (e[j] = std::exp(logits[j] - max_logit));
    for (size_t j = 0; j < e.size(); ++j) p[j] = static_cast<double>(e[j] / sum);
  }

  const Scene& scene_;
  std::vector<Vec2> keys_, values_;
};

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(
        trim(s.substr(start, at == std::string::npos ? std::string::npos : at - start)));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

// A whole string as a double (possibly non-finite); false if it is not a number.
bool to_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// Exactly `count` comma-separated finite numbers; `where` says which part of the option.
std::vector<double> parse_numbers(const std::string& text, size_t count, const std::string& option,
                                  const std::string& expected) {
  const auto parts = split(text, ',');
  if (parts.size() != count)
    throw Error(option + ": expected " + expected + ", got \"" + trim(text) + "\"");
  std::vector<double> values(count);
  for (size_t i = 0; i < count; ++i) {
    const std::string what =
        count == 1 ? option + ": \"" + parts[i] + "\""
                   : option + ": entry " + std::to_string(i + 1) + " \"" + parts[i] + "\"";
    const std::string in = count == 1 ? "" : " (in \"" + trim(text) + "\")";
    if (!to_double(parts[i], values[i])) throw Error(what + " is not a number" + in);
    if (!std::isfinite(values[i])) throw Error(what + " is not finite" + in);
  }
  return values;
}

}  // namespace

Vec2 operator*(const Mat2& m, Vec2 v) {
  return {m.a * v.x + m.b * v.y, m.c * v.x + m.d * v.y};
}

Mat2 operator*(const Mat2& m, const Mat2& n) {
  return {m.a * n.a + m.b * n.c, m.a * n.b + m.b * n.d, m.c * n.a + m.d * n.c,
          m.c * n.b + m.d * n.d};
}

Mat2 transpose(const Mat2& m) {
  return {m.a, m.c, m.b, m.d};
}

bool is_identity(const Mat2& m) {
  return m.a == 1 && m.b == 0 && m.c == 0 && m.d == 1;
}

void validate(const Scene& scene) {
  if (scene.tokens.empty()) throw Error("the scene has no tokens (at least one is needed)");
  if (scene.tokens.size() > static_cast<size_t>(kMaxTokens))
    throw Error("the scene has " + std::to_string(scene.tokens.size()) + " tokens, at most " +
                std::to_string(kMaxTokens) + " are allowed");
  for (size_t j = 0; j < scene.tokens.size(); ++j) {
    if (!finite(scene.tokens[j]))
      throw Error("token " + std::to_string(j + 1) + " " + pair(scene.tokens[j]) +
                  " is not finite");
  }
  check_temperature(scene.temperature);
  check_matrix(scene.wq, "W^Q");
  check_matrix(scene.wk, "W^K");
  check_matrix(scene.wv, "W^V");
  for (size_t j = 0; j < scene.tokens.size(); ++j) {
    // z is a convex combination of the value points: they must exist in double.
    const Vec2 u = scene.wv * scene.tokens[j];
    if (!finite(u))
      throw Error("the value point W^V t_" + std::to_string(j + 1) + " = " + pair(u) +
                  " overflows: scale the tokens or W^V down");
  }
}

std::vector<double> attention_weights(const Scene& scene, Vec2 query) {
  std::vector<double> p;
  Prepared(scene).weights(query, p);
  return p;
}

Vec2 attend(const Scene& scene, Vec2 query, std::vector<double>* weights) {
  std::vector<double> p;
  const Vec2 z = Prepared(scene).softmax(query, p);
  if (weights) *weights = std::move(p);
  return z;
}

Vec2 attend_linear(const Scene& scene, Vec2 query) {
  return Prepared(scene).linear(query);
}

Mat2 linear_map(const Scene& scene) {
  validate(scene);
  Mat2 gram{0, 0, 0, 0};  // T T^T
  for (const Vec2& t : scene.tokens) {
    gram.a += t.x * t.x;
    gram.b += t.x * t.y;
    gram.d += t.y * t.y;
  }
  gram.c = gram.b;
  const Mat2 m = scene.wv * gram * transpose(scene.wk) * scene.wq;
  const double s = 1.0 / scene.temperature;
  return {m.a * s, m.b * s, m.c * s, m.d * s};
}

std::vector<Vec2> value_points(const Scene& scene) {
  validate(scene);
  std::vector<Vec2> values;
  values.reserve(scene.tokens.size());
  for (const Vec2& t : scene.tokens) values.push_back(scene.wv * t);
  return values;
}

constexpr EnumName<Map> kMapNames[] = {
    {Map::Softmax, "softmax"}, {Map::Linear, "linear"}, {Map::Residual, "residual"}};

const char* map_name(Map m) {
  return enum_name(m, kMapNames);
}

Vec2 warp_point(const Scene& scene, Vec2 v, Map map, double alpha) {
  if (map == Map::Residual) check_alpha(alpha);
  std::vector<double> p;
  return Prepared(scene).warp(v, map, alpha, p);
}

std::vector<Vec2> convex_hull(std::vector<Vec2> points) {
  for (size_t i = 0; i < points.size(); ++i) {
    if (!finite(points[i]))
      throw Error("convex hull: point " + std::to_string(i + 1) + " " + pair(points[i]) +
                  " is not finite");
  }
  std::sort(points.begin(), points.end(),
            [](Vec2 a, Vec2 b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  points.erase(std::unique(points.begin(), points.end(),
                           [](Vec2 a, Vec2 b) { return a.x == b.x && a.y == b.y; }),
               points.end());
  if (points.size() <= 1) return points;

  // Lower chain left to right, then upper chain right to left; a vertex that does not turn
  // strictly left is dropped, so collinear points never become vertices.
  std::vector<Vec2> hull(2 * points.size());
  size_t k = 0;
  for (const Vec2& p : points) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], p) <= 0) --k;
    hull[k++] = p;
  }
  for (size_t i = points.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(hull[k - 2], hull[k - 1], points[i]) <= 0) --k;
    hull[k++] = points[i];
  }
  hull.resize(k - 1);  // the last point repeats the first
  // All collinear: the chains give [first, last] (ends of the segment).
  const auto lowest = std::min_element(hull.begin(), hull.end(), [](Vec2 a, Vec2 b) {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
  });
  std::rotate(hull.begin(), lowest, hull.end());
  return hull;
}

bool inside_hull(const std::vector<Vec2>& hull, Vec2 p, double tol) {
  if (hull.empty() || !finite(p)) return false;
  double extent = 1;
  for (const Vec2& h : hull) extent = std::max({extent, std::abs(h.x), std::abs(h.y)});
  const double slack = tol * extent;
  if (hull.size() == 1) return std::hypot(p.x - hull[0].x, p.y - hull[0].y) <= slack;
  if (hull.size() == 2) {
    const Vec2 d = sub(hull[1], hull[0]);
    const double t = std::clamp(dot(sub(p, hull[0]), d) / dot(d, d), 0.0, 1.0);
    const Vec2 nearest = add(hull[0], scale(d, t));
    return std::hypot(p.x - nearest.x, p.y - nearest.y) <= slack;
  }
  for (size_t i = 0; i < hull.size(); ++i) {
    const Vec2 a = hull[i], b = hull[(i + 1) % hull.size()];
    // Signed distance of p to the left of edge a -> b.
    if (cross(a, b, p) < -slack * std::hypot(b.x - a.x, b.y - a.y)) return false;
  }
  return true;
}

Box bounding_box(const std::vector<Vec2>& points) {
  if (points.empty()) throw Error("bounding box of no points");
  Box box{points[0], points[0]};
  for (const Vec2& p : points) {
    box.min.x = std::min(box.min.x, p.x);
    box.min.y = std::min(box.min.y, p.y);
    box.max.x = std::max(box.max.x, p.x);
    box.max.y = std::max(box.max.y, p.y);
  }
  return box;
}

Vec2 Ellipse::point(double angle) const {
  return add(center,
             add(scale(axis1, radius1 * std::cos(angle)), scale(axis2, radius2 * std::sin(angle))));
}

Ellipse predicted_linear_image(const Scene& scene, double r) {
  if (!(r >= 0) || !std::isfinite(r))
    throw Error("circle radius must be >= 0 and finite, got " + num(r));
  const Mat2 m = linear_map(scene);
  // Closed-form SVD M = Rot(beta) diag(s1, s2) Rot(gamma) (s2 signed): the columns of Rot(beta)
  // are the left singular vectors, i.e. the ellipse's axes. Rank 1 gives s2 = 0 (a segment),
  // rank 0 gives s1 = s2 = 0 with the x axis.
  const double e = (m.a + m.d) / 2, f = (m.a - m.d) / 2, g = (m.c + m.b) / 2, h = (m.c - m.b) / 2;
  const double q = std::hypot(e, h), rr = std::hypot(f, g);
  const double beta = (std::atan2(h, e) + std::atan2(g, f)) / 2;
  Ellipse ellipse;
  ellipse.axis1 = {std::cos(beta), std::sin(beta)};
  ellipse.axis2 = {-std::sin(beta), std::cos(beta)};
  ellipse.radius1 = r * (q + rr);
  ellipse.radius2 = r * std::abs(q - rr);
  return ellipse;
}

std::vector<Vec2> circle(double r, int samples) {
  if (!(r >= 0) || !std::isfinite(r))
    throw Error("circle radius must be >= 0 and finite, got " + num(r));
  check_range(samples, kMinCircleSamples, kMaxCircleSamples, "circle samples");
  std::vector<Vec2> points(samples);
  for (int k = 0; k < samples; ++k) {
    const double angle = 2 * kPi * k / samples;
    points[k] = {r * std::cos(angle), r * std::sin(angle)};
  }
  return points;
}

std::vector<Vec2> map_points(const Scene& scene, const std::vector<Vec2>& points, Map map,
                             double alpha) {
  if (map == Map::Residual) check_alpha(alpha);
  const Prepared prepared(scene);
  std::vector<double> p;
  std::vector<Vec2> out;
  out.reserve(points.size());
  for (const Vec2& v : points) out.push_back(prepared.warp(v, map, alpha, p));
  return out;
}

std::vector<std::vector<Vec2>> grid_lines(const GridSpec& spec) {
  check_range(spec.lines, kMinGridLines, kMaxGridLines, "grid lines");
  check_range(spec.samples, kMinGridSamples, kMaxGridSamples, "grid samples");
  check_extent(spec.extent);
  const long long points = 2LL * spec.lines * spec.samples;
  if (points > kMaxGridPoints)
    throw Error("grid of " + std::to_string(spec.lines) + " lines x " +
                std::to_string(spec.samples) + " samples has " + std::to_string(points) +
                " points (2 x lines x samples), at most " + std::to_string(kMaxGridPoints));
  auto coordinate = [&](int i, int count) {
    return -spec.extent + 2 * spec.extent * i / (count - 1);
  };
  std::vector<std::vector<Vec2>> lines;
  lines.reserve(2 * spec.lines);
  for (int vertical = 1; vertical >= 0; --vertical) {
    for (int i = 0; i < spec.lines; ++i) {
      const double fixed = coordinate(i, spec.lines);
      std::vector<Vec2> line(spec.samples);
      for (int s = 0; s < spec.samples; ++s) {
        const double along = coordinate(s, spec.samples);
        line[s] = vertical ? Vec2{fixed, along} : Vec2{along, fixed};
      }
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

std::vector<std::vector<Vec2>> warp_grid(const Scene& scene, const GridSpec& spec, Map map,
                                         double alpha) {
  if (map == Map::Residual) check_alpha(alpha);
  const Prepared prepared(scene);
  auto lines = grid_lines(spec);
  std::vector<double> p;
  for (auto& line : lines) {
    for (Vec2& v : line) v = prepared.warp(v, map, alpha, p);
  }
  return lines;
}

std::vector<Vec2> warp_grid_points(const Scene& scene, int n, double extent, Map map,
                                   double alpha) {
  check_range(n, kMinDensityGrid, kMaxDensityGrid, "density grid size");
  check_extent(extent);
  if (map == Map::Residual) check_alpha(alpha);
  const Prepared prepared(scene);
  std::vector<double> p;
  std::vector<Vec2> out;
  out.reserve(static_cast<size_t>(n) * n);
  for (int iy = 0; iy < n; ++iy) {
    const double y = -extent + 2 * extent * iy / (n - 1);
    for (int ix = 0; ix < n; ++ix) {
      const double x = -extent + 2 * extent * ix / (n - 1);
      out.push_back(prepared.warp({x, y}, map, alpha, p));
    }
  }
  return out;
}

std::vector<float> density_image(const std::vector<Vec2>& points, const Box& window, int bins) {
  check_range(bins, kMinDensityBins, kMaxDensityBins, "density bins");
  const double width = window.max.x - window.min.x, height = window.max.y - window.min.y;
  if (!finite(window.min) || !finite(window.max) || !(width > 0) || !(height > 0))
    throw Error("density window " + pair(window.min) + " - " + pair(window.max) +
                " must be finite with max > min");
  std::vector<float> image(static_cast<size_t>(bins) * bins, 0.0f);
  for (const Vec2& p : points) {
    const double fx = (p.x - window.min.x) / width, fy = (p.y - window.min.y) / height;
    if (!(fx >= 0 && fx <= 1 && fy >= 0 && fy <= 1)) continue;  // outside, or NaN
    const int col = std::min(bins - 1, static_cast<int>(fx * bins));
    const int row = std::min(bins - 1, static_cast<int>(fy * bins));
    image[static_cast<size_t>(row) * bins + col] += 1.0f;
  }
  const float peak = *std::max_element(image.begin(), image.end());
  if (peak > 0) {
    for (float& v : image) v /= peak;
  }
  return image;
}

void validate(const Gaussian& g) {
  if (!finite(g.mean)) throw Error("Gaussian mean " + pair(g.mean) + " is not finite");
  const Mat2& c = g.cov;
  const char* names[4] = {"[0][0] (sxx)", "[0][1] (sxy)", "[1][0] (syx)", "[1][1] (syy)"};
  const double e[4] = {c.a, c.b, c.c, c.d};
  for (int i = 0; i < 4; ++i) {
    if (!std::isfinite(e[i]))
      throw Error(std::string("Gaussian covariance entry ") + names[i] + " is not finite (" +
                  num(e[i]) + ")");
  }
  const double size = std::max({std::abs(c.a), std::abs(c.b), std::abs(c.c), std::abs(c.d)});
  if (std::abs(c.b - c.c) > 1e-12 * size)
    throw Error("Gaussian covariance must be symmetric: entry [0][1] (sxy) = " + num(c.b) +
                " but entry [1][0] (syx) = " + num(c.c));
  if (c.a < 0)
    throw Error("Gaussian covariance entry [0][0] (sxx) = " + num(c.a) +
                " is negative: a covariance is positive semi-definite");
  if (c.d < 0)
    throw Error("Gaussian covariance entry [1][1] (syy) = " + num(c.d) +
                " is negative: a covariance is positive semi-definite");
  const double off = (c.b + c.c) / 2;
  if (c.a * c.d - off * off < -1e-12 * std::max(c.a * c.d, off * off))
    throw Error("Gaussian covariance is not positive semi-definite: entry [0][1] (sxy) = " +
                num(off) + " but |sxy| must be <= sqrt(sxx syy) = " + num(std::sqrt(c.a * c.d)));
}

std::vector<Vec2> sample_gaussian(const Gaussian& g, int n, uint64_t seed) {
  validate(g);
  check_range(n, 1, kMaxGaussianSamples, "Gaussian samples");
  // Cholesky factor L (lower): valid for singular PSD covariances too (zero pivots give 0).
  const double sxy = (g.cov.b + g.cov.c) / 2;
  const double l11 = std::sqrt(g.cov.a);
  const double l21 = l11 > 0 ? sxy / l11 : 0.0;
  const double l22 = std::sqrt(std::max(0.0, g.cov.d - l21 * l21));
  // Box-Muller on raw mt19937_64 bits: the engine's output is fixed by the standard, unlike
  // std::normal_distribution's algorithm, so a seed gives the same tokens with any stdlib.
  std::mt19937_64 engine(seed);
  auto uniform = [&engine] { return static_cast<double>(engine() >> 11) * 0x1.0p-53; };  // [0,1)
  std::vector<Vec2> tokens(n);
  for (int i = 0; i < n; ++i) {
    const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));  // 1 - u in (0, 1]
    const double angle = 2 * kPi * uniform();
    const double z1 = radius * std::cos(angle), z2 = radius * std::sin(angle);
    tokens[i] = {g.mean.x + l11 * z1, g.mean.y + l21 * z1 + l22 * z2};
  }
  return tokens;
}

Vec2 gaussian_tilted_mean(const Gaussian& g, const Scene& scene, Vec2 v) {
  validate(g);
  check_temperature(scene.temperature);
  check_matrix(scene.wq, "W^Q");
  check_matrix(scene.wk, "W^K");
  check_matrix(scene.wv, "W^V");
  if (!finite(v)) throw Error("the query " + pair(v) + " is not finite");
  // Logits t . s with s = W^K^T W^Q v / tau; tilting N(mu, Sigma) by exp(t . s) gives
  // N(mu + Sigma s, Sigma), whose mean W^V maps to the value space.
  const Vec2 s = scale(transpose(scene.wk) * (scene.wq * v), 1.0 / scene.temperature);
  return scene.wv * add(g.mean, g.cov * s);
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"three", "five", "collinear", "far"};
  return names;
}

Scene preset(const std::string& name) {
  Scene scene;
  if (name == "three") {
    // An uneven triangle around the origin: the seed's first scene.
    scene.tokens = {{1.2, 0.3}, {-0.9, 1.0}, {-0.3, -1.1}};
  } else if (name == "five") {
    // Five hull tokens: four axis ends shared among five tokens (the seed's grid scene).
    scene.tokens = {{1.5, 0.2}, {0.4, 1.3}, {-1.2, 0.8}, {-0.9, -1.0}, {0.8, -1.2}};
  } else if (name == "collinear") {
    // On the line y = x / 2: the linear image of a circle is a segment.
    scene.tokens = {{-1.5, -0.75}, {-0.5, -0.25}, {0.5, 0.25}, {1.5, 0.75}};
  } else if (name == "far") {
    // Around (8, 8): circles map almost onto the hull, points crowd at the tokens.
    scene.tokens = {{9.0, 8.0}, {7.5, 9.0}, {7.2, 7.1}, {8.6, 6.9}};
  } else {
    std::string list;
    for (const auto& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
    throw Error("unknown preset '" + name + "' (presets: " + list + ")");
  }
  return scene;
}

std::vector<Vec2> parse_points(const std::string& text, const std::string& option) {
  if (trim(text).empty())
    throw Error(option + ": no points given (expected \"x1,y1;x2,y2;...\", at least one)");
  const auto items = split(text, ';');
  std::vector<Vec2> points;
  points.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string where = option + ": item " + std::to_string(i + 1) + " \"" + items[i] + "\"";
    if (items[i].empty())
      throw Error(option + ": item " + std::to_string(i + 1) +
                  " is empty (expected \"x1,y1;x2,y2;...\")");
    const auto parts = split(items[i], ',');
    double x = 0, y = 0;
    if (parts.size() != 2 || !to_double(parts[0], x) || !to_double(parts[1], y))
      throw Error(where + " is not two numbers");
    if (!std::isfinite(x) || !std::isfinite(y)) throw Error(where + " is not finite");
    points.push_back({x, y});
  }
  if (points.size() > static_cast<size_t>(kMaxTokens))
    throw Error(option + ": " + std::to_string(points.size()) + " points, at most " +
                std::to_string(kMaxTokens));
  return points;
}

Mat2 parse_matrix(const std::string& text, const std::string& option) {
  const auto v = parse_numbers(text, 4, option, "four numbers \"a,b,c,d\" (row-major)");
  return {v[0], v[1], v[2], v[3]};
}

Vec2 parse_point(const std::string& text, const std::string& option) {
  const auto v = parse_numbers(text, 2, option, "two numbers \"x,y\"");
  return {v[0], v[1]};
}

double parse_number(const std::string& text, const std::string& option) {
  return parse_numbers(text, 1, option, "one number")[0];
}

Gaussian parse_gaussian(const std::string& text, const std::string& option) {
  const auto items = split(text, ';');
  if (items.size() != 2)
    throw Error(option + ": expected \"mx,my;sxx,sxy,syy\" (mean; covariance), got \"" +
                trim(text) + "\"");
  Gaussian g;
  g.mean = parse_point(items[0], option + " (mean)");
  const auto c =
      parse_numbers(items[1], 3, option + " (covariance)", "three numbers \"sxx,sxy,syy\"");
  g.cov = {c[0], c[1], c[1], c[2]};
  try {
    validate(g);
  } catch (const Error& e) {
    throw Error(option + ": " + e.what());
  }
  return g;
}

}  // namespace attn::geometry
