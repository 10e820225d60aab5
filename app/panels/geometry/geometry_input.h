// The Geometry explorer's mouse input on its canvas (app/panels/geometry/geometry_panel.h).
// Contract:
//  - handle() reads the mouse over the canvas item just submitted (ImGui::IsItemHovered) and
//    edits the scene and the view: left-drag moves a token, the query v or the Gaussian's mean
//    (whichever is nearest within kHitRadius pixels); a left click on empty space adds a token
//    (not while the tokens are Gaussian samples, at most GeometryModel::kMaxTokens); a right
//    click on a token deletes it (one token always stays); dragging empty space with any button
//    pans; the wheel zooms about the cursor. A hovered token shows a tooltip.
//  - A gesture lives from its press to its release; cancel() forgets it (the window closed, the
//    tokens replaced), so a press seen before never acts afterwards.
#pragma once
#include <imgui.h>

#include "app/panels/geometry/geometry_canvas.h"
#include "app/panels/geometry/geometry_model.h"

namespace attn::gui {

class GeometryInput {
 public:
  void handle(GeometryModel& s, CanvasView& view);
  void cancel() { gesture_ = Gesture{}; }
  // Drawn larger: under the cursor, or being dragged.
  bool is_hot(int token) const;

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

  void press(GeometryModel& s, const CanvasView& view, ImVec2 mouse);
  void drag_or_release(GeometryModel& s, CanvasView& view, ImVec2 mouse);

  Gesture gesture_;
  int hovered_token_ = -1;
};

}  // namespace attn::gui
