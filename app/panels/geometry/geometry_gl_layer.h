// The Geometry explorer's GL layer (app/panels/geometry/geometry_panel.h): the warped grid and
// the density of the mapped grid points, drawn on the GPU (render::WarpRenderer,
// shaders/warp.vert.glsl) or from core's CPU reference (geometry::warp_grid), and the CPU
// density image.
// Contract:
//  - The grid and point cloud are drawn into an offscreen canvas (render::CanvasTarget) only
//    when something they depend on changes (GlKey), and shown as one image otherwise. While they
//    change on consecutive frames (a drag) lines get at most kCoarseVertices vertices in all
//    (scene.coarse_while_moving), and are redrawn in full once it stops.
//  - The GPU's vertex buffer is rebuilt only when the grid's resolution changes; a new scene
//    costs one small uniform upload. The CPU grid and density points are recomputed only when
//    their inputs change. A failure of core's maths lands in scene.derived.error.
//  - No GL program at all (gpu_error() says why): the CPU grid as ImGui polylines.
//  - Needs the GL context current; destroy before the window.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

#include "app/panels/geometry/geometry_canvas.h"
#include "app/panels/geometry/geometry_model.h"
#include "render/gl/canvas_target.h"
#include "render/gl/gl_texture.h"
#include "render/gl/warp_renderer.h"

namespace attn::gui {

class GeometryGlLayer {
 public:
  // Forgets last frame's statistics (which path drew the grid); call once per frame.
  void begin_frame();
  // The CPU density image, where the point cloud cannot go on the GPU (view density on).
  void draw_density(ImDrawList* dl, GeometryModel& s, const CanvasView& view);
  // The warped grid and the GPU point cloud over view's canvas.
  void draw(ImDrawList* dl, GeometryModel& s, const CanvasView& view);
  // The canvas moved or was resized: the density image is binned again.
  void invalidate_density() { density_dirty_ = true; }

  // Statistics for the readout and the exit report.
  bool gpu_used() const { return gpu_used_; }  // last frame's grid path
  bool cpu_used() const { return cpu_used_; }
  int lines_drawn() const { return lines_drawn_; }
  int samples_drawn() const { return layer_samples_; }  // per line, of the last render
  int renders() const { return layer_renders_; }        // how many times the layer was redrawn
  int cpu_updates() const { return cpu_updates_; }
  double cpu_ms_last() const { return cpu_ms_last_; }
  double cpu_ms_mean() const { return cpu_updates_ > 0 ? cpu_ms_total_ / cpu_updates_ : 0.0; }
  bool gpu_available() const { return gpu_checked_ && gpu_error_.empty(); }
  const std::string& gpu_error() const { return gpu_error_; }
  // "cpu-image", "gpu-points" or "none": how the density view was last drawn.
  const char* density_path() const;

 private:
  // Everything the layer depends on: it is redrawn into the offscreen canvas only when this
  // changes.
  struct GlKey {
    uint64_t rev = 0;
    bool gpu_path = false, grid = false, points = false;
    int lines = 0, samples = 0, mode = 0, density_n = 0, width = 0, height = 0;
    float extent = 0, alpha = 0;
    double center_x = 0, center_y = 0, pixels_per_unit = 0;
    bool operator==(const GlKey& o) const;
  };
  struct CpuGridKey {
    uint64_t rev = 0;
    int lines = 0, samples = 0, mode = -1;
    float extent = 0, alpha = -1;
    bool operator==(const CpuGridKey& o) const;
  };

  void update_gpu(const GeometryModel& s);
  void update_cpu_grid(GeometryModel& s, int samples);
  void update_density_image(GeometryModel& s, const CanvasView& view);
  void render(GeometryModel& s, const CanvasView& view, const GlKey& key, int samples);
  void draw_cpu_grid_with_imgui(ImDrawList* dl, GeometryModel& s, const CanvasView& view);

  // GPU warp.
  render::WarpRenderer gpu_;
  render::PreparedWarp prepared_;
  std::vector<double> token_xy_;  // the tokens as xy pairs for prepare_warp (reused)
  uint64_t gpu_rev_ = 0;
  bool gpu_scene_ok_ = false;
  std::string gpu_error_;
  bool gpu_checked_ = false;
  render::CanvasTarget layer_;  // the grid and point cloud, redrawn only on change
  GlKey layer_key_;
  bool layer_valid_ = false, layer_coarse_ = false, changed_last_frame_ = false;
  int layer_samples_ = 0;
  int layer_renders_ = 0;
  int lines_drawn_ = 0;
  // CPU grid (and fallback).
  CpuGridKey cpu_key_;
  std::vector<float> cpu_xy_;
  double cpu_ms_last_ = 0, cpu_ms_total_ = 0;
  int cpu_updates_ = 0;
  bool cpu_used_ = false, gpu_used_ = false;
  std::vector<ImVec2> scratch_;
  // Density image.
  CpuGridKey density_key_;
  std::vector<geometry::Vec2> density_points_;
  geometry::Box density_window_;
  int density_bins_ = 0;
  std::vector<render::Rgba8> density_pixels_;
  render::Texture2D density_texture_;
  bool density_dirty_ = true;
};

}  // namespace attn::gui
