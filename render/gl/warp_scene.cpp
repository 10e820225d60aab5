#include "render/gl/warp_scene.h"

#include <algorithm>
#include <cmath>

namespace attn::render {
namespace {

// y = m x for a row-major 2x2 m.
void apply(const double m[4], double x, double y, double* ox, double* oy) {
  *ox = m[0] * x + m[1] * y;
  *oy = m[2] * x + m[3] * y;
}

}  // namespace

void prepare_warp(const WarpInput& in, PreparedWarp* out) {
  const int n = std::max(0, in.count);
  out->count = n;
  out->tokens.resize(static_cast<size_t>(n) * 4);
  // G = W^Q^T W^K / tau, so that l_j = (W^Q v) . (W^K t_j) / tau = v . (G t_j).
  const double* q = in.wq;
  const double* k = in.wk;
  const double g[4] = {
      (q[0] * k[0] + q[2] * k[2]) / in.temperature, (q[0] * k[1] + q[2] * k[3]) / in.temperature,
      (q[1] * k[0] + q[3] * k[2]) / in.temperature, (q[1] * k[1] + q[3] * k[3]) / in.temperature};
  double mean_a[2] = {0, 0}, mean_u[2] = {0, 0};
  double lin[4] = {0, 0, 0, 0};
  for (int j = 0; j < n; ++j) {
    double ax, ay, ux, uy;
    apply(g, in.tokens_xy[2 * j], in.tokens_xy[2 * j + 1], &ax, &ay);
    apply(in.wv, in.tokens_xy[2 * j], in.tokens_xy[2 * j + 1], &ux, &uy);
    mean_a[0] += ax, mean_a[1] += ay, mean_u[0] += ux, mean_u[1] += uy;
    lin[0] += ux * ax, lin[1] += ux * ay, lin[2] += uy * ax, lin[3] += uy * ay;
  }
  if (n > 0) mean_a[0] /= n, mean_a[1] /= n, mean_u[0] /= n, mean_u[1] /= n;
  for (int j = 0; j < n; ++j) {
    double ax, ay, ux, uy;
    apply(g, in.tokens_xy[2 * j], in.tokens_xy[2 * j + 1], &ax, &ay);
    apply(in.wv, in.tokens_xy[2 * j], in.tokens_xy[2 * j + 1], &ux, &uy);
    float* t = &out->tokens[static_cast<size_t>(j) * 4];
    t[0] = static_cast<float>(ax - mean_a[0]);
    t[1] = static_cast<float>(ay - mean_a[1]);
    t[2] = static_cast<float>(ux - mean_u[0]);
    t[3] = static_cast<float>(uy - mean_u[1]);
  }
  out->value_origin[0] = static_cast<float>(mean_u[0]);
  out->value_origin[1] = static_cast<float>(mean_u[1]);
  for (int i = 0; i < 4; ++i) out->linear[i] = static_cast<float>(lin[i]);
}

void evaluate_prepared(const PreparedWarp& p, WarpMode mode, float alpha, float x, float y,
                       float* out_x, float* out_y) {
  auto softmax_map = [&](float* zx, float* zy) {
    float m = -3.402823e38f;
    for (int j = 0; j < p.count; ++j)
      m = std::max(m, x * p.tokens[4 * j] + y * p.tokens[4 * j + 1]);
    float sum = 0, ax = 0, ay = 0;
    for (int j = 0; j < p.count; ++j) {
      const float e = std::exp(x * p.tokens[4 * j] + y * p.tokens[4 * j + 1] - m);
      sum += e;
      ax += e * p.tokens[4 * j + 2];
      ay += e * p.tokens[4 * j + 3];
    }
    *zx = p.value_origin[0] + ax / sum;
    *zy = p.value_origin[1] + ay / sum;
  };
  float zx = x, zy = y;
  switch (mode) {
    case WarpMode::PreMapped:
      break;
    case WarpMode::Softmax:
      softmax_map(&zx, &zy);
      break;
    case WarpMode::Linear:
      zx = p.linear[0] * x + p.linear[1] * y;
      zy = p.linear[2] * x + p.linear[3] * y;
      break;
    case WarpMode::Residual: {
      float fx, fy;
      softmax_map(&fx, &fy);
      zx = x + alpha * fx;
      zy = y + alpha * fy;
      break;
    }
  }
  *out_x = zx;
  *out_y = zy;
}

ClipTransform canvas_clip_transform(float min_x, float min_y, float max_x, float max_y,
                                    double center_x, double center_y, double pixels_per_unit,
                                    float display_w, float display_h) {
  // Screen: sx = cx_px + (x - center_x) * ppu, sy = cy_px - (y - center_y) * ppu.
  // Clip: 2 sx / W - 1 and 1 - 2 sy / H.
  const double cx_px = 0.5 * (min_x + max_x), cy_px = 0.5 * (min_y + max_y);
  const double w = std::max(1.0f, display_w), h = std::max(1.0f, display_h);
  ClipTransform t;
  t.scale[0] = static_cast<float>(2.0 * pixels_per_unit / w);
  t.scale[1] = static_cast<float>(2.0 * pixels_per_unit / h);
  t.offset[0] = static_cast<float>(2.0 * (cx_px - center_x * pixels_per_unit) / w - 1.0);
  t.offset[1] = static_cast<float>(1.0 - 2.0 * (cy_px + center_y * pixels_per_unit) / h);
  return t;
}

}  // namespace attn::render
