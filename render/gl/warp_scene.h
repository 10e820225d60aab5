// The GL-free half of the GPU attention warp (shaders/warp.vert.glsl): what the shader is given,
// prepared on the CPU in double precision, and the data-to-clip-space transform of a canvas.
// Plain data only (render/ never sees core/): the panel converts its geometry::Scene to this.
// Contract:
//  - prepare_warp() computes, for n >= 1 tokens t_j (xy pairs), with W^Q, W^K, W^V row-major
//    2x2 and tau > 0 (checked by the caller: core's geometry::validate()):
//      key direction a_j = W^Q^T W^K t_j / tau (logit of a query v: l_j = v . a_j),
//      value u_j = W^V t_j,
//      linear map M = sum_j u_j a_j^T = W^V T T^T W^K^T W^Q / tau (the map without softmax),
//    and stores a_j and u_j relative to their means (softmax is unchanged by the key shift; the
//    value mean is added back in value_origin), as float32 vec4s (a.x, a.y, u.x, u.y).
//    `out` keeps its storage between calls (no allocation once it is large enough).
//  - evaluate_prepared() runs the shader's arithmetic on the CPU (float32, same order), for
//    tests that check the preparation without a GL context.
//  - ClipTransform maps data units to clip space for a canvas drawn at pixels [min, max] of a
//    display of size `display` (y up in data, down on screen), with equal scale on both axes.
#pragma once
#include <vector>

namespace attn::render {

// Matches the shader's u_mode.
enum class WarpMode { PreMapped = 0, Softmax = 1, Linear = 2, Residual = 3 };

struct WarpInput {
  const double* tokens_xy = nullptr;  // x0, y0, x1, y1, ...
  int count = 0;
  double wq[4] = {1, 0, 0, 1};  // row-major [[a, b], [c, d]]
  double wk[4] = {1, 0, 0, 1};
  double wv[4] = {1, 0, 0, 1};
  double temperature = 1.0;
};

struct PreparedWarp {
  std::vector<float> tokens;  // 4 floats per token: a_j - mean(a), u_j - mean(u)
  int count = 0;
  float value_origin[2] = {0, 0};
  float linear[4] = {0, 0, 0, 0};  // M, row-major
};

void prepare_warp(const WarpInput& in, PreparedWarp* out);

// The shader's map of one point (x, y) in float32; PreMapped returns the point itself.
void evaluate_prepared(const PreparedWarp& p, WarpMode mode, float alpha, float x, float y,
                       float* out_x, float* out_y);

struct ClipTransform {
  float scale[2] = {1, 1};
  float offset[2] = {0, 0};
};

// A canvas whose pixel rectangle [min_x, max_x] x [min_y, max_y] (screen, y down) shows data
// centred on (center_x, center_y) at `pixels_per_unit`, on a display display_w x display_h.
ClipTransform canvas_clip_transform(float min_x, float min_y, float max_x, float max_y,
                                    double center_x, double center_y, double pixels_per_unit,
                                    float display_w, float display_h);

}  // namespace attn::render
