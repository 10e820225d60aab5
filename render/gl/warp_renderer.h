// WarpRenderer: the attention warp on the GPU (shaders/warp.vert.glsl, embedded at build time):
// the coordinate grid of [-extent, extent]^2 mapped by F(v) = softmax(v T) T^T (or the linear
// or residual map) and drawn as GL line strips, and the same grid's points as a point cloud.
// Contract:
//  - Every method needs the GL 3.3 core context current on the calling thread (the destructor
//    too: destroy before the window). Nothing is compiled until the first call that draws or
//    captures; ready() reports a compile/link failure once (the caller falls back to the CPU).
//  - Static data is rebuilt only when it changes: set_grid() rebuilds the line vertex buffer
//    only when (lines, samples) differ, set_point_grid() likewise; set_scene() uploads the
//    tokens (a 16 KiB uniform buffer, at most kMaxTokens) and is the only per-change cost of
//    dragging a token. Drawing sets uniforms and issues one glMultiDrawArrays per line family.
//  - Grid order (identical to attn::geometry::grid_lines()): `lines` vertical lines left to
//    right, then `lines` horizontal lines bottom to top, each sampled at `samples` points
//    (bottom to top, resp. left to right), line i at -extent + 2 extent i / (lines - 1).
//  - draw_*() use the caller's target, viewport, blending and scissor, and leave the program,
//    vertex array and buffer bindings changed: draw between CanvasTarget::begin() and end()
//    (render/gl/canvas_target.h), which restore them, or reset them yourself.
//  - capture_*() run the same vertex shader with transform feedback (rasterizer discarded) and
//    return the mapped points in data units, 2 floats per point, in vertex order: the GPU half of
//    the GPU-versus-CPU test. They restore the bindings they change.
#pragma once
#include <string>
#include <vector>

#include "render/gl/warp_scene.h"

namespace attn::render {

struct Rgba {
  float r = 1, g = 1, b = 1, a = 1;
};

class WarpRenderer {
 public:
  static constexpr int kMaxTokens = 1024;  // the shader's uniform array (std140 vec4s)

  WarpRenderer() = default;
  ~WarpRenderer();
  WarpRenderer(const WarpRenderer&) = delete;
  WarpRenderer& operator=(const WarpRenderer&) = delete;

  // Compiles and links on the first call. False (and *error set, if given) when the shader
  // cannot be built on this driver; every draw is then a no-op.
  bool ready(std::string* error = nullptr);
  void release();  // deletes every GL object (no-op when none)

  // Uploads the tokens; false when prepared.count > kMaxTokens or < 1 (nothing uploaded).
  bool set_scene(const PreparedWarp& prepared);
  int token_count() const { return scene_.count; }

  void set_grid(int lines, int samples);  // lines >= 2, samples >= 2
  int grid_lines() const { return lines_; }
  int grid_samples() const { return samples_; }
  void set_point_grid(int n);  // n x n points of [-1, 1]^2 (scaled by the extent when drawn)

  // The CPU path: already-mapped polylines (count of them, each `samples` points, xy floats)
  // drawn with the same program in PreMapped mode. Re-uploads into the same buffer when the
  // size is unchanged.
  void set_premapped_lines(const float* xy, int count, int samples);

  struct Style {
    Rgba vertical{0.34f, 0.71f, 0.91f, 0.6f};   // lines of constant x (before the map)
    Rgba horizontal{0.90f, 0.62f, 0.0f, 0.6f};  // lines of constant y
  };
  void draw_grid(WarpMode mode, float alpha, double extent, const ClipTransform& clip,
                 const Style& style);
  void draw_premapped(const ClipTransform& clip, const Style& style);
  void draw_points(WarpMode mode, float alpha, double extent, const ClipTransform& clip,
                   Rgba color);

  // Transform feedback of the current grid (lines * 2 * samples points), or of arbitrary
  // points (xy pairs, not scaled: input origin 0, scale 1).
  std::vector<float> capture_grid(WarpMode mode, float alpha, double extent);
  std::vector<float> capture_points(const std::vector<float>& xy, WarpMode mode, float alpha);

 private:
  struct Uniforms {
    int token_count = -1, value_origin = -1, linear = -1, mode = -1, alpha = -1;
    int input_origin = -1, input_scale = -1, clip_scale = -1, clip_offset = -1, color = -1;
  };
  void bind_common(WarpMode mode, float alpha, float origin, float scale,
                   const ClipTransform& clip);
  std::vector<float> capture(unsigned vao, int count, WarpMode mode, float alpha, float scale);

  bool tried_ = false, ok_ = false;
  std::string error_;
  unsigned program_ = 0, ubo_ = 0;
  Uniforms u_;
  PreparedWarp scene_;  // the uploaded copy (value origin, linear map, count)

  unsigned grid_vao_ = 0, grid_vbo_ = 0;
  int lines_ = 0, samples_ = 0;
  std::vector<int> firsts_, counts_;  // glMultiDrawArrays: one strip per line

  unsigned points_vao_ = 0, points_vbo_ = 0;
  int points_n_ = 0;

  unsigned premapped_vao_ = 0, premapped_vbo_ = 0;
  int premapped_count_ = 0, premapped_samples_ = 0;
  std::vector<int> premapped_firsts_, premapped_counts_;
};

}  // namespace attn::render
