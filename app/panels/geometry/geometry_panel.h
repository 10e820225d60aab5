// Geometry panel (seed 004, "Attention is... a convex hull"; docs/design/MECHANISMS.md section 5): tokens
// t_j in the plane, a query v, and what softmax attention does with them, z = softmax(v T) T^T.
// Works at once with no model: it never touches the trainer.
//  - Canvas: pan (drag empty space with the left, right or middle button), zoom (wheel, about
//    the cursor), axes and grid. Tokens: left-drag moves one, a left click on empty space adds
//    one, a right click on a token deletes it (one token always stays). The query v is a point
//    (drag it). A coordinates table and a "x,y;x,y" field type tokens exactly; presets are
//    core's geometry::preset_names().
//  - Editable W^Q, W^K, W^V (identity by default) and temperature.
//  - Views, each a toggle: z with the weights p_j as line widths to the value points; convex
//    hull shaded with its bounding box; circles of radius r (several, concentric) under the
//    linear map with the predicted ellipse dashed on top; the same circles under softmax;
//    the warped grid F(v) (or v + alpha F(v), or the linear map) up to 1024 x 1024 lines on
//    the GPU (shaders/warp.vert.glsl via render::WarpRenderer) with a CPU path
//    (geometry::warp_grid) to compare; density of the mapped grid points (GPU point cloud or a
//    CPU histogram image); continuous tokens sampled from a Gaussian with the exact tilted
//    mean W^V (mu + Sigma s) drawn over the sampled tokens' circle images.
// Contract: draws one ImGui window named "Geometry" (a close button when `open` is given;
// nothing when *open is false). Derived data (hull, circle images, CPU grid, density) is
// recomputed only when its inputs change; the GPU grid's vertex buffer only when its resolution
// changes, and a dragged token costs one small uniform upload. The grid and point cloud are
// drawn into an offscreen canvas (render::CanvasTarget) only when something they depend on
// changes, and shown as one image otherwise; while they change on consecutive frames (a drag)
// lines get at most 32768 vertices in all ("coarser lines while moving", on by default), and
// are redrawn in full once it stops. Files: the canvas and GL layer here and in
// geometry_panel.cpp, the left column, readout and exit report in geometry_controls.cpp,
// drawing helpers in geometry_canvas.*.
// Needs the GL context current; destroy before the window. Bad input (a non-finite entry) is
// shown in red, never thrown.
// Benchmark hook: ATTN_GEOMETRY_BENCH (read at construction) shows only
// the warped grid at LINES lines per axis (0: no grid) with TOKENS seeded random tokens, one of
// them moving every frame as if dragged (MOTION "drag"; "drag-full": without coarser lines while
// moving; "still": nothing moves), and gui_main shows no other panel; see
// tests/e2e/bench_geometry.sh. Format: LINES,TOKENS,gpu|cpu[,still|drag|drag-full].
// Test hook: ATTN_GEOMETRY_VIEWS="name,name,..." starts with exactly these views and settings
// on: output, hull, circles, linear, grid, density (GPU point cloud), density-image, gaussian,
// residual, linear-map, cpu (the CPU grid path), preset=NAME. Unknown names are reported on
// stderr and ignored.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/analysis/geometry.h"
#include "panels/geometry/geometry_canvas.h"
#include "render/gl/canvas_target.h"
#include "render/gl/gl_texture.h"
#include "render/gl/warp_renderer.h"

struct ImFont;
struct ImDrawList;
struct ImDrawCmd;

namespace attn::gui {

class GeometryPanel {
 public:
  GeometryPanel();
  void draw(bool* open, ImFont* small_font);
  // The last frame's state for the GUI's exit report (ATTN_GUI_REPORT) and tests.
  nlohmann::json report() const;

  struct Views {
    bool output = true;    // z and the weight lines
    bool hull = true;      // convex hull (shaded) and bounding box of the value points
    bool linear = false;   // circles under the map without softmax, and the predicted ellipse
    bool circles = true;   // circles under softmax
    bool grid = true;      // the warped grid
    bool density = false;  // the mapped grid points
  };

 private:
  enum class Target { None, Token, Query, Mean };
  struct Gesture {
    int button = -1;  // ImGuiMouseButton held, -1: none
    ImVec2 press;
    Target target = Target::None;
    int token = -1;
    geometry::Vec2 grab;  // target position minus the data point under the cursor at press
    double press_center_x = 0, press_center_y = 0;
    bool dragged = false;
  };
  // Everything the GL layer (warped grid, point cloud) depends on: it is redrawn into the
  // offscreen canvas only when this changes.
  struct GlKey {
    uint64_t rev = 0;
    bool gpu_path = false, grid = false, points = false;
    int lines = 0, samples = 0, mode = 0, density_n = 0, width = 0, height = 0;
    float extent = 0, alpha = 0;
    double center_x = 0, center_y = 0, pixels_per_unit = 0;
    bool operator==(const GlKey& o) const;
  };

  void apply_bench_setting(const char* spec);
  void apply_view_setting(const char* spec);
  void draw_controls(ImFont* font);
  void draw_scene_controls();
  void draw_token_table();
  void draw_view_controls();
  void draw_readout(ImFont* font);
  void draw_canvas(ImFont* font);
  void handle_input();
  void draw_overlays(ImDrawList* dl, ImFont* font);
  void draw_tokens(ImDrawList* dl, ImFont* font);
  void draw_gl_layer(ImDrawList* dl);
  void render_gl_layer(const GlKey& key, int samples);
  void draw_cpu_grid_with_imgui(ImDrawList* dl);

  // Recomputation when inputs change (keys compared against the last computed ones).
  void scene_changed() { ++scene_rev_; }
  void sync_gaussian_tokens();
  void update_derived();
  void update_gpu();
  void update_cpu_grid(int samples);
  void update_density_image();
  int hit_token(ImVec2 mouse) const;
  void fit_view();
  geometry::Map grid_map() const;
  bool gaussian_tokens() const { return gaussian_; }

  // What the user edits.
  geometry::Scene scene_;               // the tokens in use (own points or Gaussian samples)
  std::vector<geometry::Vec2> points_;  // the user's tokens (kept while the Gaussian is on)
  geometry::Vec2 query_{0.9, 0.6};
  Views views_;
  float radius_ = 1.5f;  // the largest circle; the others at k/count of it
  int circle_count_ = 3;
  int circle_samples_ = 256;
  int grid_lines_ = 33;
  int grid_samples_ = 257;
  float grid_extent_ = 3.0f;
  int grid_mode_ = 0;  // 0 softmax, 1 residual, 2 linear
  float alpha_ = 0.5f;
  bool cpu_grid_ = false;
  bool coarse_while_moving_ = true;  // fewer samples per line while the grid changes every frame
  int density_n_ = 256;
  bool density_image_ = false;  // false: GPU point cloud
  bool gaussian_ = false;
  geometry::Gaussian gaussian_params_;
  int gaussian_n_ = 400;
  int gaussian_seed_ = 1;
  std::string gaussian_error_;  // the covariance is not positive semi-definite, ...
  char tokens_text_[512] = {};
  std::string tokens_text_error_;
  int preset_ = 0;

  // Derived, valid for scene_rev_ == derived_rev_ and the query/circle settings recorded.
  uint64_t scene_rev_ = 1;
  struct Derived {
    uint64_t rev = 0;
    geometry::Vec2 query;
    float radius = -1;
    int circle_count = -1, circle_samples = -1;
    bool circles = false, linear = false;
    std::string error;  // the scene does not validate
    std::vector<geometry::Vec2> values, hull;
    geometry::Box box;
    geometry::Vec2 output;
    std::vector<double> weights;
    bool inside = false;
    bool wv_identity = true;
    std::vector<std::vector<geometry::Vec2>> softmax_images, linear_images, ellipses, tilted_means;
    geometry::Ellipse outer_ellipse;
    // Gaussian tokens: the largest distance between a circle's image under the sampled tokens
    // and the exact tilted mean at the same query (how well they match; 0 for infinitely many).
    double gaussian_gap = 0;
  } d_;
  uint64_t gaussian_rev_ = 0;  // scene_rev_ at which the Gaussian was last sampled

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
  int layer_samples_ = 0;  // samples per line of the last render
  int layer_renders_ = 0;  // how many times the layer was redrawn
  // CPU grid (and fallback).
  struct CpuGridKey {
    uint64_t rev = 0;
    int lines = 0, samples = 0, mode = -1;
    float extent = 0, alpha = -1;
    bool operator==(const CpuGridKey& o) const {
      return rev == o.rev && lines == o.lines && samples == o.samples && mode == o.mode &&
             extent == o.extent && alpha == o.alpha;
    }
  } cpu_key_;
  std::vector<float> cpu_xy_;
  double cpu_ms_last_ = 0, cpu_ms_total_ = 0;
  int cpu_updates_ = 0;
  bool cpu_used_ = false, gpu_used_ = false;  // last frame's grid path
  // Density image.
  CpuGridKey density_key_;
  std::vector<geometry::Vec2> density_points_;
  geometry::Box density_window_;
  int density_bins_ = 0;
  std::vector<render::Rgba8> density_pixels_;
  render::Texture2D density_texture_;
  bool density_dirty_ = true;

  // Canvas.
  CanvasView view_;
  bool view_fitted_ = false;
  Gesture gesture_;
  int hovered_token_ = -1;
  std::vector<ImVec2> scratch_;

  // Benchmark hook.
  bool bench_ = false, bench_moving_ = false;
  std::vector<geometry::Vec2> bench_base_;

  // Report.
  int64_t frames_drawn_ = 0;
  bool drawn_ = false;
  int tokens_added_ = 0, tokens_deleted_ = 0, token_drags_ = 0, query_drags_ = 0;
  int grid_lines_drawn_ = 0;
};

}  // namespace attn::gui
