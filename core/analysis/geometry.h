// The geometry of softmax attention in 2-D (seed 004, "Attention is... a convex hull";
// docs/design/MECHANISMS.md §5). Torch-free CPU reference for the Geometry panel, its GPU warp
// shader (which must agree with warp_point()) and `attnlab geometry`.
//
// A scene: tokens t_1..t_n in R^2, 2x2 matrices W^Q, W^K, W^V and a temperature tau > 0.
// For a query v:  q = W^Q v,  k_j = W^K t_j,  u_j = W^V t_j (the value points),
//   logits l_j = q.k_j / tau,  p = softmax(l),  z = F(v) = sum_j p_j u_j.
// z lies in the convex hull of the value points (the hull of the tokens when W^V = I).
// Without softmax, z = sum_j l_j u_j = M v with M = W^V T T^T W^K^T W^Q / tau (T = [t_1..t_n],
// 2 x n): a circle of radius r maps to the ellipse with semi-axes r*sigma_i along the left
// singular vectors of M (the eigenvectors of T T^T when every W = I); collinear tokens give a
// segment. Residual map: v + alpha F(v).
// Continuous tokens: for tokens drawn from N(mu, Sigma), the softmax map tends (many tokens) to
// the tilted mean W^V (mu + Sigma s) with s = W^K^T W^Q v / tau (= mu + Sigma v when W = I, tau = 1).
//
// Contract: functions taking a Scene call validate() first and throw attn::Error with a message
// naming the culprit (no tokens, a non-finite coordinate, tau <= 0, a non-finite matrix entry).
// Softmax is computed stably (max subtracted), so far-away queries never overflow; logits past
// double's range (|v| ~ 1e300, tau ~ 1e-300) are redone in long double. A non-finite query
// throws, and so does a value point W^V t_j that overflows (validate() checks it).
// Logits are evaluated as v . a_j with a_j = W^Q^T W^K t_j / tau (the same number as
// q.k_j / tau up to rounding). The per-point functions (attend, warp_point, ...) validate and
// prepare the scene on every call; the batch ones (map_points, warp_grid, ...) once per call.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn::geometry {

// Limits (checked; messages name them). Sizes past these are refused as absurd, not clipped.
constexpr int kMaxTokens = 1000000;
constexpr int kMinGridLines = 2, kMaxGridLines = 4096;
constexpr int kMinGridSamples = 2, kMaxGridSamples = 65536;
constexpr long long kMaxGridPoints = 1LL << 25;  // 2 * lines * samples (512 MiB of points)
constexpr int kMinCircleSamples = 3, kMaxCircleSamples = 1000000;
constexpr int kMinDensityGrid = 2, kMaxDensityGrid = 4096;  // n x n grid points
constexpr int kMinDensityBins = 1, kMaxDensityBins = 4096;
constexpr int kMaxGaussianSamples = 10000000;

struct Vec2 {
  double x = 0, y = 0;
};

// Row-major [[a, b], [c, d]]; identity by default.
struct Mat2 {
  double a = 1, b = 0, c = 0, d = 1;
};
Vec2 operator*(const Mat2& m, Vec2 v);
Mat2 operator*(const Mat2& m, const Mat2& n);
Mat2 transpose(const Mat2& m);
bool is_identity(const Mat2& m);  // exactly

struct Scene {
  std::vector<Vec2> tokens;
  Mat2 wq, wk, wv;
  double temperature = 1.0;
};

void validate(const Scene& scene);

// Softmax weights p_j of a query (sums to 1).
std::vector<double> attention_weights(const Scene& scene, Vec2 query);
// z = F(v) = sum_j p_j W^V t_j; optionally returns the weights.
Vec2 attend(const Scene& scene, Vec2 query, std::vector<double>* weights = nullptr);
// The map without softmax: z = sum_j l_j W^V t_j = M v.
Vec2 attend_linear(const Scene& scene, Vec2 query);
Mat2 linear_map(const Scene& scene);  // M above
std::vector<Vec2> value_points(const Scene& scene);  // W^V t_j

enum class Map { Softmax, Linear, Residual };
const char* map_name(Map m);  // "softmax" | "linear" | "residual"
// One point under a map (Residual: v + alpha F(v) with the softmax F). The GPU shader computes
// exactly this per vertex.
Vec2 warp_point(const Scene& scene, Vec2 v, Map map, double alpha = 1.0);

// Convex hull, counter-clockwise, starting at the lowest-then-leftmost point, no repeated or
// collinear vertices (Andrew's monotone chain). Degenerate input gives 1 point (all equal) or
// 2 points (all collinear: the segment's ends).
std::vector<Vec2> convex_hull(std::vector<Vec2> points);
// Inside or on the boundary (within tol) of a hull from convex_hull (any of its 1-3+ shapes).
// tol is a distance relative to the hull's scale, max(1, largest |coordinate| of the hull), so
// rounding in far-away scenes is tolerated. An empty hull contains nothing.
bool inside_hull(const std::vector<Vec2>& hull, Vec2 p, double tol = 1e-9);

struct Box {
  Vec2 min, max;
};
Box bounding_box(const std::vector<Vec2>& points);  // points must be non-empty

// The predicted image of the circle of radius r under the linear map: centre 0, unit axes,
// semi-axes radius1 >= radius2 >= 0 (radius2 == 0: a segment).
struct Ellipse {
  Vec2 center, axis1, axis2;
  double radius1 = 0, radius2 = 0;
  Vec2 point(double angle) const;  // center + radius1 cos(a) axis1 + radius2 sin(a) axis2
};
Ellipse predicted_linear_image(const Scene& scene, double r);

// `samples` points on the circle of radius r around the origin, angle 2 pi k / samples.
std::vector<Vec2> circle(double r, int samples);
std::vector<Vec2> map_points(const Scene& scene, const std::vector<Vec2>& points, Map map,
                             double alpha = 1.0);

// The coordinate grid on [-extent, extent]^2: `lines` vertical and `lines` horizontal lines,
// each sampled at `samples` points (vertical lines first, left to right; then horizontal,
// bottom to top), mapped point by point. lines in [2, 4096], samples in [2, 65536].
struct GridSpec {
  int lines = 33;
  double extent = 3.0;
  int samples = 129;
};
std::vector<std::vector<Vec2>> grid_lines(const GridSpec& spec);  // unmapped
std::vector<std::vector<Vec2>> warp_grid(const Scene& scene, const GridSpec& spec, Map map,
                                         double alpha = 1.0);

// Density: the n x n grid points of [-extent, extent]^2 mapped by `map`, binned into a
// bins x bins histogram over `window` (row 0 = bottom), normalised to max 1.
std::vector<Vec2> warp_grid_points(const Scene& scene, int n, double extent, Map map,
                                   double alpha = 1.0);
std::vector<float> density_image(const std::vector<Vec2>& points, const Box& window, int bins);

// Continuous tokens.
struct Gaussian {
  Vec2 mean;
  Mat2 cov;  // symmetric positive semi-definite (checked; message names the entry)
};
// Finite mean; finite, symmetric (to 1e-12 relative) and PSD covariance. Throws naming the entry.
void validate(const Gaussian& g);
// n tokens drawn from the Gaussian, n in [1, kMaxGaussianSamples]: mean + L z with L the
// Cholesky factor (singular PSD covariances included) and z from Box-Muller on std::mt19937_64.
// Deterministic for a seed; cos/log/sqrt rounding may differ in the last bit across libms.
std::vector<Vec2> sample_gaussian(const Gaussian& g, int n, uint64_t seed);
// The exact many-token limit of the softmax map: W^V (mu + Sigma W^K^T W^Q v / tau). Uses the
// scene's matrices and temperature, not its tokens.
Vec2 gaussian_tilted_mean(const Gaussian& g, const Scene& scene, Vec2 v);

// The seed's scenes: "three" (3 tokens), "five" (5 tokens), "collinear", "far" (tokens far from
// the origin). The default scene is "three".
const std::vector<std::string>& preset_names();
Scene preset(const std::string& name);  // throws attn::Error listing the names

// Parsing for the CLI and the panel's text fields. Messages name the option and the position.
// "x1,y1;x2,y2;..." (at least one token, finite numbers).
std::vector<Vec2> parse_points(const std::string& text, const std::string& option = "--tokens");
// "a,b,c,d" row-major.
Mat2 parse_matrix(const std::string& text, const std::string& option);
Vec2 parse_point(const std::string& text, const std::string& option);
// One finite number.
double parse_number(const std::string& text, const std::string& option);
// "mx,my;sxx,sxy,syy" (the covariance's three distinct entries); validated.
Gaussian parse_gaussian(const std::string& text, const std::string& option = "--gaussian");

}  // namespace attn::geometry
