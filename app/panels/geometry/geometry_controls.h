// The Geometry explorer's ImGui widgets (app/panels/geometry/geometry_panel.h): the left column
// (Export..., preset, query, matrices and temperature, the token table and "x,y;x,y" field,
// the views, the Gaussian of continuous tokens) and the readout drawn over the canvas.
// Contract:
//  - draw() binds widgets to the scene's fields and calls scene.changed() for edits that need
//    it; what it cannot do itself (fit the view, forget a press on the canvas) it returns.
//  - Bad input (a non-finite entry, an unreadable token list, a bad covariance) is shown in
//    red, never thrown.
#pragma once
#include <imgui.h>

#include <string>

#include "app/panels/geometry/geometry_canvas.h"
#include "app/panels/geometry/geometry_gl_layer.h"
#include "app/panels/geometry/geometry_model.h"

namespace attn::gui {

class GeometryControls {
 public:
  explicit GeometryControls(const GeometryModel& s);  // the token field shows s's tokens

  struct Actions {
    bool fit_view = false;        // a preset was chosen, or "Fit view"
    bool cancel_gesture = false;  // the tokens were replaced under the cursor
  };
  Actions draw(GeometryModel& s, const GeometryGlLayer& gl, const CanvasView& view);
  // Readout in the canvas' top-left corner: v, z, the grid path, the ellipse, the Gaussian gap.
  static void draw_readout(ImFont* font, const GeometryModel& s, const GeometryGlLayer& gl,
                           const CanvasView& view);

 private:
  void draw_export_button(const GeometryModel& s);
  void draw_scene_controls(GeometryModel& s, Actions& actions);
  void draw_token_table(GeometryModel& s, const CanvasView& view);
  void draw_view_controls(GeometryModel& s, const GeometryGlLayer& gl);
  void draw_gaussian_controls(GeometryModel& s, Actions& actions);
  void show_tokens(const GeometryModel& s);  // puts the tokens in the text field

  char tokens_text_[512] = {};
  std::string tokens_text_error_;
};

}  // namespace attn::gui
