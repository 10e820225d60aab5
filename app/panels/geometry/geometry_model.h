// The Geometry explorer's model (geometry_panel.h is its view): everything the user edits
// (tokens, query v, W^Q, W^K, W^V, temperature, the views and the grid settings, the Gaussian of
// continuous tokens), the data derived from it (hull, circle images, predicted ellipses), the
// edits the canvas makes (add, delete, drag a token, the query or the Gaussian's mean), the
// exported figure and the report. No ImGui and no GL: tests drive it directly
// (tests/app/panel_models/test_geometry.cpp).
// Contract:
//  - Fields are edited in place (the controls bind widgets to them). Whoever changes the
//    tokens, the matrices, the temperature or the Gaussian calls changed() (the edit functions
//    below do); the query, the circles and the views are compared field by field instead.
//  - update_derived() recomputes `derived` only when its inputs changed (a moved query alone
//    recomputes z and the weights, not the circles); a scene that does not validate leaves its
//    message in derived.error and never throws.
//  - sync_gaussian_tokens() resamples the tokens from the Gaussian after a change (gaussian on).
//  - figure() is figures::geometry_figure of what is shown (the Export button's figure); a scene
//    that does not validate gives an empty figure whose title says why.
//  - report(): the scene and what is derived (tokens, query, z, weights, hull, bounding box, the
//    outer predicted ellipse, views, grid settings, edits); the view adds its screen positions.
//  - apply_view_setting / apply_bench_setting read the test and benchmark hooks'
//    strings (ATTN_GEOMETRY_VIEWS, ATTN_GEOMETRY_BENCH; formats in geometry_panel.h) and report
//    bad ones on stderr; from_environment() applies both.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/figures/catalog/figures.h"
#include "core/analysis/geometry.h"
#include "render/plot/figure.h"

namespace attn::gui {

class GeometryModel {
 public:
  static constexpr int kMaxTokens = 1024;  // render::WarpRenderer::kMaxTokens (the shader's)
  static constexpr int kMaxGridLines = 1024;

  struct Views {
    bool output = true;    // z and the weight lines
    bool hull = true;      // convex hull (shaded) and bounding box of the value points
    bool linear = false;   // circles under the map without softmax, and the predicted ellipse
    bool circles = true;   // circles under softmax
    bool grid = true;      // the warped grid
    bool density = false;  // the mapped grid points
  };
  // Valid for rev == the scene's rev and the query/circle settings recorded.
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
  };
  // Edits counted for the exit report.
  struct Edits {
    int tokens_added = 0, tokens_deleted = 0, token_drags = 0, query_drags = 0;
  };

  GeometryModel();                          // the first preset, a default Gaussian (off)
  static GeometryModel from_environment();  // with ATTN_GEOMETRY_VIEWS and _BENCH applied

  void changed() { ++rev; }
  void sync_gaussian_tokens();
  void update_derived();
  geometry::Map grid_map() const;
  // The data the view is fitted to: tokens, query, value points, the largest circle, origin.
  geometry::Box fit_box() const;

  // Edits with their bookkeeping (counts, the Gaussian's own tokens).
  void select_preset(int index);
  void set_gaussian(bool on);  // keeps the user's tokens aside while the Gaussian is on
  void add_token(geometry::Vec2 p);
  bool delete_token(int index);  // false for the last token or a bad index
  // The token nearest `at` within `radius` (data units), -1 when none (or Gaussian samples).
  int token_at(geometry::Vec2 at, double radius) const;
  // Drags: false when nothing moved (the same place, a bad index, Gaussian samples).
  bool move_token(int index, geometry::Vec2 to);
  bool move_mean(geometry::Vec2 to);  // the Gaussian's mean
  // Benchmark motion: token 0 circles about where it started, as if dragged.
  void bench_step(int64_t frame);

  figures::GeometryFigureInput figure_input() const;
  fig::Figure figure() const;
  nlohmann::json report() const;

  void apply_view_setting(const char* spec);
  void apply_bench_setting(const char* spec);

  // What the user edits.
  geometry::Scene scene;               // the tokens in use (own points or Gaussian samples)
  std::vector<geometry::Vec2> points;  // the user's tokens (kept while the Gaussian is on)
  geometry::Vec2 query{0.9, 0.6};
  Views views;
  float radius = 1.5f;  // the largest circle; the others at k/count of it
  int circle_count = 3;
  int circle_samples = 256;
  int grid_lines = 33;
  int grid_samples = 257;
  float grid_extent = 3.0f;
  int grid_mode = 0;  // 0 softmax, 1 residual, 2 linear
  float alpha = 0.5f;
  bool cpu_grid = false;
  bool coarse_while_moving = true;  // fewer samples per line while the grid changes every frame
  int density_n = 256;
  bool density_image = false;  // false: GPU point cloud
  bool gaussian = false;
  geometry::Gaussian gaussian_params;
  int gaussian_n = 400;
  int gaussian_seed = 1;
  std::string gaussian_error;  // the covariance is not positive semi-definite, ...
  uint64_t gaussian_rev = 0;   // rev at which the Gaussian was last sampled (0: resample)
  int preset = 0;

  uint64_t rev = 1;  // bumped by changed()
  Derived derived;
  Edits edits;

  // Benchmark hook.
  bool bench = false, bench_moving = false;
  std::vector<geometry::Vec2> bench_base;
};

}  // namespace attn::gui
