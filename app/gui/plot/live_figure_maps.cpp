// LiveFigure's map view (live_figure.h): the crop fields and the mouse and keyboard that drive
// fig::MapView (render/plot/map_view.h), whose model holds the state and the maths.
#include <imgui.h>
#include <imgui_internal.h>  // SetItemUsingMouseWheel: the wheel zooms, not scrolls

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/gui/plot/live_figure.h"

namespace attn::gui {
namespace {

constexpr float kWheelZoom = 1.25f;  // zoom factor per wheel notch
constexpr float kClickSlopPx = 4;    // a press that moved less than this is a click, not a drag
constexpr const char* kMapHelp =
    "Rows are queries, columns keys (C: the slot that sends, the slot that receives).\n"
    "Wheel: zoom about the mouse. Drag: pan. Double-click: the whole crop.\n"
    "Click a map: that map alone; click again or Esc: all.\n"
    "Crop: a region of the task, or the first and last row and column typed.\n"
    "Export writes what is shown, crop included.";

// The next item on this line when `width` pixels of it fit, else at the start of the next.
void same_line_or_next(float width) {
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < width) {
    ImGui::NewLine();
    ImGui::AlignTextToFramePadding();
  }
}

}  // namespace

// One line (two where the tile is narrow): a "Crop" combo of named regions (when set), "rows
// [first last] cols [first last]" (the crop, typed, applied when the field is left), "Whole
// map", what is showing and a Help button; the lines' height is taken off *size.
void LiveFigure::map_controls(ImVec2* size) {
  ImGui::PushID(this);
  const float y0 = ImGui::GetCursorPosY();
  const fig::CellRange &rows = map_view_.crop_rows(), &cols = map_view_.crop_cols();
  crop_edit_[0] = rows.begin, crop_edit_[1] = rows.end - 1;
  crop_edit_[2] = cols.begin, crop_edit_[3] = cols.end - 1;
  const float field = ImGui::CalcTextSize("0000").x * 2 + ImGui::GetStyle().FramePadding.x * 4 +
                      ImGui::GetStyle().ItemInnerSpacing.x;
  ImGui::AlignTextToFramePadding();
  if (!presets_.empty()) preset_combo();
  ImGui::TextUnformatted(presets_.empty() ? "crop: rows" : "rows");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kMapHelp);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(field);
  ImGui::InputInt2("##rows", crop_edit_);
  bool apply = ImGui::IsItemDeactivatedAfterEdit();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("first and last row (query) shown, 0-based");
  ImGui::SameLine();
  ImGui::TextUnformatted("cols");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(field);
  ImGui::InputInt2("##cols", crop_edit_ + 2);
  apply = apply || ImGui::IsItemDeactivatedAfterEdit();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("first and last column (key) shown, 0-based");
  if (apply)
    map_view_.set_crop({crop_edit_[0], crop_edit_[1] + 1}, {crop_edit_[2], crop_edit_[3] + 1});
  // "Whole map" on this line where it fits, else on the next (1280x720 clipped it to "Who").
  same_line_or_next(ImGui::CalcTextSize("Whole map").x + 2 * ImGui::GetStyle().FramePadding.x);
  ImGui::BeginDisabled(!map_view_.zoomed() && map_view_.selected() < 0);
  if (ImGui::SmallButton("Whole map")) {
    map_view_.clear_crop();
    map_view_.select(-1);
  }
  ImGui::EndDisabled();
  const fig::CellRange &vr = map_view_.visible_rows(), &vc = map_view_.visible_cols();
  char showing[64];
  std::snprintf(showing, sizeof showing, "showing %d-%d x %d-%d", vr.begin, vr.end - 1, vc.begin,
                vc.end - 1);
  // On this line where it fits with the Help button, else on the next (never clipped).
  same_line_or_next(ImGui::CalcTextSize(showing).x + ImGui::CalcTextSize("Help").x +
                    4 * ImGui::GetFontSize());
  ImGui::TextDisabled("%s", showing);
  const bool hovered_line = ImGui::IsItemHovered();
  ImGui::SameLine();
  // A visible button rather than a faint "(?)": the wheel, drag and click are not guessable.
  if (ImGui::SmallButton("Help")) ImGui::OpenPopup("map help");
  if (hovered_line || ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kMapHelp);
  if (ImGui::BeginPopup("map help")) {
    ImGui::TextUnformatted(kMapHelp);
    ImGui::EndPopup();
  }
  const float used = ImGui::GetCursorPosY() - y0;
  size->y = std::max(1.0f, size->y - used);
  ImGui::PopID();
}

// "Crop [name]": the preset the crop is, or "custom"; choosing one crops to it.
void LiveFigure::preset_combo() {
  const int shown = map_view_.preset_shown(presets_);
  ImGui::TextUnformatted("Crop");
  ImGui::SameLine();
  float width = ImGui::CalcTextSize("custom").x;
  for (const fig::CropPreset& p : presets_)
    width = std::max(width, ImGui::CalcTextSize(p.name.c_str()).x);
  ImGui::SetNextItemWidth(width + ImGui::GetFrameHeight() + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::BeginCombo("##crop preset", shown >= 0 ? presets_[shown].name.c_str() : "custom")) {
    for (size_t i = 0; i < presets_.size(); ++i) {
      const fig::CropPreset& p = presets_[i];
      if (ImGui::Selectable(p.name.c_str(), static_cast<int>(i) == shown)) map_view_.set_crop(p);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("rows (queries) %d-%d, columns (keys) %d-%d", p.rows.begin,
                          p.rows.end - 1, p.cols.begin, p.cols.end - 1);
    }
    ImGui::Selectable("custom", shown < 0, ImGuiSelectableFlags_Disabled);
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The task's regions: choose one to crop every map to it");
  ImGui::SameLine();
}

int LiveFigure::panel_under_mouse(double* x, double* y) const {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float s = view_.pixels_per_point();
  const double px = (mouse.x - view_.origin().x) / s, py = (mouse.y - view_.origin().y) / s;
  for (size_t k = 0; k < layout_.panels.size(); ++k)
    if (layout_.panels[k].plot.contains(px, py)) {
      *x = layout_.panels[k].data_x(px);
      *y = layout_.panels[k].data_y(py);
      return static_cast<int>(k);
    }
  return -1;
}

// After the figure's invisible button: wheel, drag, click, double-click and Esc.
void LiveFigure::map_input() {
  const ImGuiIO& io = ImGui::GetIO();
  if (map_view_.selected() >= 0 && ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
    map_view_.select(-1);
  const bool active = ImGui::IsItemActive();
  if (!hovered_ && !active) return;
  if (hovered_) ImGui::SetItemUsingMouseWheel();
  double x = 0, y = 0;
  const int k = panel_under_mouse(&x, &y);
  if (hovered_ && k >= 0 && io.MouseWheel != 0)
    map_view_.zoom_at(std::pow(kWheelZoom, io.MouseWheel), y, x);
  const bool dragged = io.MouseDragMaxDistanceSqr[0] > kClickSlopPx * kClickSlopPx;
  if (active && dragged && (io.MouseDelta.x != 0 || io.MouseDelta.y != 0) && k >= 0) {
    // Cells per pixel in the panel under the mouse (every map shows the same range).
    const fig::PanelLayout& L = layout_.panels[static_cast<size_t>(k)];
    const float s = view_.pixels_per_point();
    const double cols_per_px = map_view_.visible_cols().size() / (L.plot.w * s);
    const double rows_per_px = map_view_.visible_rows().size() / (L.plot.h * s);
    map_view_.pan(-io.MouseDelta.y * rows_per_px, -io.MouseDelta.x * cols_per_px);
  }
  if (!hovered_) return;
  if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) map_view_.reset();
  if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && !dragged && k >= 0)
    map_view_.select(map_view_.selected() >= 0 ? -1 : map_view_.source_panel(k));
}

}  // namespace attn::gui
