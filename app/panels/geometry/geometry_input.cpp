#include "app/panels/geometry/geometry_input.h"

#include <cmath>

namespace attn::gui {
namespace {

namespace g = geometry;

constexpr float kHitRadius = 9.0f;  // pixels: how close a click must be to grab a point
constexpr float kDragThreshold = 3.0f;

double distance(ImVec2 a, ImVec2 b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

// The token under the mouse: the model's nearest within kHitRadius pixels.
int hit_token(const GeometryModel& s, const CanvasView& view, ImVec2 mouse) {
  return s.token_at(view.to_data(mouse), kHitRadius / view.pixels_per_unit);
}

}  // namespace

bool GeometryInput::is_hot(int token) const {
  return token == hovered_token_ || (gesture_.target == Target::Token && gesture_.token == token);
}

void GeometryInput::handle(GeometryModel& s, CanvasView& view) {
  const ImGuiIO& io = ImGui::GetIO();
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = io.MousePos;
  hovered_token_ = hovered ? hit_token(s, view, mouse) : -1;
  if (gesture_.button < 0 && hovered) press(s, view, mouse);
  if (gesture_.button >= 0) drag_or_release(s, view, mouse);
  if (hovered && io.MouseWheel != 0.0f) {
    view.zoom_about(mouse, std::pow(1.2, static_cast<double>(io.MouseWheel)));
  }
  if (hovered_token_ >= 0 && gesture_.button < 0) {
    const g::Vec2 t = s.scene.tokens[hovered_token_];
    const auto& weights = s.derived.weights;
    const double p =
        hovered_token_ < static_cast<int>(weights.size()) ? weights[hovered_token_] : NAN;
    ImGui::SetTooltip("t%d = (%.4g, %.4g)\np = %.4f\ndrag: move, right click: delete",
                      hovered_token_ + 1, t.x, t.y, p);
  }
}

void GeometryInput::press(GeometryModel& s, const CanvasView& view, ImVec2 mouse) {
  for (int b : {ImGuiMouseButton_Left, ImGuiMouseButton_Right, ImGuiMouseButton_Middle}) {
    if (!ImGui::IsMouseClicked(b)) continue;
    Gesture gs;
    gs.button = b;
    gs.press = mouse;
    gs.press_center_x = view.center_x;
    gs.press_center_y = view.center_y;
    // The nearest grabbable point: a token, the query, or the Gaussian's mean.
    double best = kHitRadius;
    const int token = hit_token(s, view, mouse);
    if (token >= 0) {
      best = distance(view.to_screen(s.scene.tokens[token]), mouse);
      gs.target = Target::Token, gs.token = token;
    }
    auto consider = [&](g::Vec2 p, Target t) {
      const double dist = distance(view.to_screen(p), mouse);
      if (dist < best) best = dist, gs.target = t, gs.token = -1;
    };
    consider(s.query, Target::Query);
    if (s.gaussian) consider(s.gaussian_params.mean, Target::Mean);
    const g::Vec2 at = view.to_data(mouse);
    const g::Vec2 where = gs.target == Target::Token   ? s.scene.tokens[gs.token]
                          : gs.target == Target::Query ? s.query
                                                       : s.gaussian_params.mean;
    gs.grab = {where.x - at.x, where.y - at.y};
    gesture_ = gs;
    break;
  }
}

void GeometryInput::drag_or_release(GeometryModel& s, CanvasView& view, ImVec2 mouse) {
  Gesture& gs = gesture_;
  const bool left = gs.button == ImGuiMouseButton_Left;
  if (ImGui::IsMouseDown(gs.button)) {
    if (!gs.dragged && distance(mouse, gs.press) > kDragThreshold) {
      gs.dragged = true;
      if (left && gs.target == Target::Token) ++s.edits.token_drags;
      if (left && gs.target == Target::Query) ++s.edits.query_drags;
    }
    if (!gs.dragged) return;
    const g::Vec2 at = view.to_data(mouse);
    const g::Vec2 to{at.x + gs.grab.x, at.y + gs.grab.y};
    if (left && gs.target == Target::Token) {
      s.move_token(gs.token, to);
    } else if (left && gs.target == Target::Query) {
      s.query = to;
    } else if (left && gs.target == Target::Mean) {
      s.move_mean(to);
    } else {  // pan: the data point under the press stays under the cursor
      view.center_x = gs.press_center_x - (mouse.x - gs.press.x) / view.pixels_per_unit;
      view.center_y = gs.press_center_y + (mouse.y - gs.press.y) / view.pixels_per_unit;
    }
    return;
  }
  // Released.
  if (!gs.dragged && left && gs.target == Target::None && !s.gaussian &&
      s.scene.tokens.size() < static_cast<size_t>(GeometryModel::kMaxTokens)) {
    s.add_token(view.to_data(gs.press));
  } else if (!gs.dragged && gs.button == ImGuiMouseButton_Right && gs.target == Target::Token &&
             s.delete_token(gs.token)) {
    hovered_token_ = -1;
  }
  gs = Gesture{};
}

}  // namespace attn::gui
