#version 330 core
// The attention warp F(v) = softmax(v T) T^T of shared/design/MECHANISMS.md section 5, evaluated
// per vertex: the same map as attn::geometry::warp_point() (core/geometry.h), in float32.
// The CPU prepares the tokens in double precision (render/warp_scene.h, prepare_warp()):
//   key direction a_j = W^Q^T W^K t_j / tau, so the logit of a query v is l_j = v . a_j;
//   value u_j = W^V t_j.
// Both are uploaded relative to their means (the key mean does not change the softmax: it adds
// the same v . mean to every logit; the value mean is added back), so tokens far from the
// origin keep float32's precision instead of losing it to a large common offset.
// Softmax is stable: the largest logit is subtracted before exp, so no query overflows.
layout(location = 0) in vec2 a_position;

// Must match render::WarpRenderer::kMaxTokens (16 KiB: the smallest uniform block GL 3.3 allows).
const int kMaxTokens = 1024;
layout(std140) uniform WarpTokens {
  vec4 u_tokens[kMaxTokens];  // xy: a_j - mean(a), zw: u_j - mean(u)
};
uniform int u_token_count;
uniform vec2 u_value_origin;  // mean(u)
uniform mat2 u_linear;        // M = W^V T T^T W^K^T W^Q / tau (the map without softmax)
// 0: positions are already mapped (the CPU path), 1: softmax F(v), 2: linear M v,
// 3: residual v + alpha F(v).
uniform int u_mode;
uniform float u_alpha;
// Grid vertices are stored in [-1, 1]^2 and scaled here, so zooming the grid's extent never
// rebuilds the vertex buffer.
uniform vec2 u_input_origin;
uniform vec2 u_input_scale;
// Data units to clip space (the canvas's pan and zoom): clip = z * u_clip_scale + u_clip_offset.
uniform vec2 u_clip_scale;
uniform vec2 u_clip_offset;

out vec2 v_warped;  // the mapped point in data units (captured by transform feedback in tests)

vec2 softmax_map(vec2 v) {
  float m = -3.402823e38;
  for (int j = 0; j < u_token_count; ++j) m = max(m, dot(v, u_tokens[j].xy));
  float sum = 0.0;
  vec2 acc = vec2(0.0);
  for (int j = 0; j < u_token_count; ++j) {
    float e = exp(dot(v, u_tokens[j].xy) - m);
    sum += e;
    acc += e * u_tokens[j].zw;
  }
  return u_value_origin + acc / sum;
}

void main() {
  vec2 v = u_input_origin + u_input_scale * a_position;
  vec2 z = v;
  if (u_mode == 1) {
    z = softmax_map(v);
  } else if (u_mode == 2) {
    z = u_linear * v;
  } else if (u_mode == 3) {
    z = v + u_alpha * softmax_map(v);
  }
  v_warped = z;
  gl_Position = vec4(z * u_clip_scale + u_clip_offset, 0.0, 1.0);
}
