// The GL-free half of the GPU warp (render/gl/warp_scene.h): the uniforms prepared for the shader,
// evaluated with the shader's float32 arithmetic, against a naive double-precision softmax
// written here from the definition (no core/: render must stay independent of it).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "render/gl/warp_scene.h"

using attn::render::canvas_clip_transform;
using attn::render::evaluate_prepared;
using attn::render::prepare_warp;
using attn::render::PreparedWarp;
using attn::render::WarpInput;
using attn::render::WarpMode;

namespace {

// z = sum_j p_j W^V t_j with p = softmax((W^Q v) . (W^K t_j) / tau), straight from the definition.
// *size: the magnitude of the terms summed (max |v|, |u_j|; sum |l_j| |u_j| for the linear map),
// the scale float32 rounding is relative to.
void naive(const std::vector<double>& t, const WarpInput& in, WarpMode mode, double alpha, double x,
           double y, double* ox, double* oy, double* size) {
  const int n = static_cast<int>(t.size() / 2);
  const double qx = in.wq[0] * x + in.wq[1] * y, qy = in.wq[2] * x + in.wq[3] * y;
  std::vector<double> l(n);
  double m = -INFINITY;
  for (int j = 0; j < n; ++j) {
    const double kx = in.wk[0] * t[2 * j] + in.wk[1] * t[2 * j + 1];
    const double ky = in.wk[2] * t[2 * j] + in.wk[3] * t[2 * j + 1];
    l[j] = (qx * kx + qy * ky) / in.temperature;
    m = std::max(m, l[j]);
  }
  double s = 0, zx = 0, zy = 0, lx = 0, ly = 0, terms = 0;
  *size = std::max({1.0, std::abs(x), std::abs(y)});
  for (int j = 0; j < n; ++j) {
    const double ux = in.wv[0] * t[2 * j] + in.wv[1] * t[2 * j + 1];
    const double uy = in.wv[2] * t[2 * j] + in.wv[3] * t[2 * j + 1];
    const double e = std::exp(l[j] - m);
    s += e, zx += e * ux, zy += e * uy;
    lx += l[j] * ux, ly += l[j] * uy;
    terms += std::abs(l[j]) * std::hypot(ux, uy);
    *size = std::max(*size, std::hypot(ux, uy));
  }
  zx /= s, zy /= s;
  switch (mode) {
    case WarpMode::PreMapped:
      *ox = x, *oy = y;
      break;
    case WarpMode::Softmax:
      *ox = zx, *oy = zy;
      break;
    case WarpMode::Linear:
      *ox = lx, *oy = ly;
      *size = std::max(*size, terms);
      break;
    case WarpMode::Residual:
      *ox = x + alpha * zx, *oy = y + alpha * zy;
      break;
  }
}

}  // namespace

TEST_CASE("prepared warp uniforms reproduce the softmax, linear and residual maps") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-2, 2);
  for (int scene = 0; scene < 20; ++scene) {
    const int n = 1 + scene % 9;
    const double offset = scene >= 15 ? 800.0 : 0.0;  // a cluster far from the origin
    std::vector<double> t(2 * n);
    for (double& c : t) c = offset + u(rng);
    WarpInput in;
    in.tokens_xy = t.data();
    in.count = n;
    if (scene % 2) {
      for (double* m : {in.wq, in.wk, in.wv})
        for (int i = 0; i < 4; ++i) m[i] = u(rng);
      in.temperature = 0.5 + std::abs(u(rng));
    }
    PreparedWarp p;
    prepare_warp(in, &p);
    REQUIRE(p.count == n);
    REQUIRE(p.tokens.size() == static_cast<size_t>(4 * n));
    for (WarpMode mode :
         {WarpMode::PreMapped, WarpMode::Softmax, WarpMode::Linear, WarpMode::Residual}) {
      for (int k = 0; k < 50; ++k) {
        const double x = 3 * u(rng), y = 3 * u(rng);
        double ex = 0, ey = 0, size = 1;
        naive(t, in, mode, 0.4, x, y, &ex, &ey, &size);
        float gx, gy;
        evaluate_prepared(p, mode, 0.4f, static_cast<float>(x), static_cast<float>(y), &gx, &gy);
        // Float32, relative to the size of the terms (the far cluster's 800, or the linear
        // map's large sums).
        CHECK(std::abs(gx - ex) <= 1e-4 * size);
        CHECK(std::abs(gy - ey) <= 1e-4 * size);
      }
    }
  }
}

TEST_CASE("prepared warp: values are stored relative to their mean, keys too") {
  const std::vector<double> t = {1000, 1000, 1002, 1000, 1000, 1003};
  WarpInput in;
  in.tokens_xy = t.data();
  in.count = 3;
  PreparedWarp p;
  prepare_warp(in, &p);
  CHECK(p.value_origin[0] == doctest::Approx(1000.6667).epsilon(1e-6));
  CHECK(p.value_origin[1] == doctest::Approx(1001.0).epsilon(1e-6));
  CHECK(p.tokens[2] == doctest::Approx(-0.6667).epsilon(1e-4));  // u_0 - mean
  CHECK(p.tokens[0] == doctest::Approx(-0.6667).epsilon(1e-4));  // a_0 - mean (W = I)
  // A query far out along +x picks the token with the largest x: (1002, 1000).
  float zx, zy;
  evaluate_prepared(p, WarpMode::Softmax, 1, 1e6f, 0, &zx, &zy);
  CHECK(zx == doctest::Approx(1002.0));
  CHECK(zy == doctest::Approx(1000.0));
  // The linear map keeps the raw (uncentred) tokens: M = T T^T.
  CHECK(p.linear[0] == doctest::Approx(1000.0 * 1000 + 1002.0 * 1002 + 1000.0 * 1000));
  CHECK(p.linear[1] == doctest::Approx(1000.0 * 1000 + 1002.0 * 1000 + 1000.0 * 1003));
}

TEST_CASE("canvas clip transform maps the canvas rectangle onto its clip-space rectangle") {
  // A 400 x 200 canvas at (100, 50) on an 800 x 600 display, centred on (1, 2) at 50 px/unit.
  const auto c = canvas_clip_transform(100, 50, 500, 250, 1.0, 2.0, 50.0, 800, 600);
  auto clip = [&](double x, double y, float* cx, float* cy) {
    *cx = static_cast<float>(x * c.scale[0] + c.offset[0]);
    *cy = static_cast<float>(y * c.scale[1] + c.offset[1]);
  };
  float cx, cy;
  clip(1.0, 2.0, &cx, &cy);  // the centre -> pixel (300, 150)
  CHECK(cx == doctest::Approx(2.0 * 300 / 800 - 1));
  CHECK(cy == doctest::Approx(1 - 2.0 * 150 / 600));
  clip(1.0 - 4.0, 2.0 + 2.0, &cx, &cy);  // top-left corner: 4 units left, 2 up -> (100, 50)
  CHECK(cx == doctest::Approx(2.0 * 100 / 800 - 1));
  CHECK(cy == doctest::Approx(1 - 2.0 * 50 / 600));
}
