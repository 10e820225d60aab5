// Geometry panel (seed 004, "Attention is... a convex hull"; docs/design/MECHANISMS.md section 5):
// tokens t_j in the plane, a query v, and what softmax attention does with them, z = softmax(v T)
// T^T. Works at once with no model: it never touches the trainer.
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
// recomputed only when its inputs change; the GL layer is redrawn only when something it
// depends on changes (geometry_gl_layer.h).
// Files, one responsibility each:
//   geometry_model.*     what the user edits and what is derived from it (no ImGui, no GL)
//   geometry_gl_layer.*  the warped grid and density: GPU warp, offscreen canvas, CPU path
//   geometry_input.*     mouse gestures on the canvas (drag, add, delete, pan, zoom)
//   geometry_controls.*  the left column's widgets and the readout over the canvas
//   geometry_canvas.*    the view transform and stateless drawing helpers
//   geometry_panel.*     the window, the canvas' overlays (hull, circles, tokens), the report
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
#include <nlohmann/json.hpp>
#include <vector>

#include "app/gui/panel.h"
#include "app/panels/geometry/geometry_canvas.h"
#include "app/panels/geometry/geometry_controls.h"
#include "app/panels/geometry/geometry_gl_layer.h"
#include "app/panels/geometry/geometry_input.h"
#include "app/panels/geometry/geometry_model.h"

struct ImFont;
struct ImDrawList;

namespace attn::gui {

class GeometryPanel : public Panel {
 public:
  GeometryPanel();
  void draw(FrameContext& frame) override;
  void update(FrameContext& frame) override;
  // The last frame's state for the GUI's exit report (ATTN_GUI_REPORT) and tests.
  nlohmann::json report() const override;

 private:
  void draw_canvas(ImFont* font);
  void fit_view();
  void draw_overlays(ImDrawList* dl, ImFont* font);
  void draw_tokens(ImDrawList* dl, ImFont* font);

  GeometryModel model_;  // with the test and benchmark hooks applied (before controls_)
  GeometryControls controls_{model_};
  GeometryInput input_;
  GeometryGlLayer gl_;
  CanvasView view_;
  bool view_fitted_ = false;
  std::vector<ImVec2> scratch_;  // polylines' screen points, reused between frames

  // Report.
  int64_t frames_drawn_ = 0;
  bool drawn_ = false;
};

}  // namespace attn::gui
