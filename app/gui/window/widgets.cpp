#include "app/gui/window/widgets.h"

#include <imgui.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace attn::gui {

bool layer_combo(const char* id, int* choice, int layers, float width, bool allow_all) {
  const int fallback = allow_all ? -1 : 0;
  if (*choice < fallback || *choice >= layers) *choice = fallback;
  const int before = *choice;
  char current[32];
  std::snprintf(current, sizeof current, *choice < 0 ? "all layers" : "layer %d", *choice);
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo(id, current)) {
    if (allow_all && ImGui::Selectable("all layers", *choice < 0)) *choice = -1;
    for (int l = 0; l < layers; ++l) {
      char label[32];
      std::snprintf(label, sizeof label, "layer %d", l);
      if (ImGui::Selectable(label, *choice == l)) *choice = l;
    }
    ImGui::EndCombo();
  }
  return *choice != before;
}

bool dimmable_checkbox(const char* label, bool* value, bool dimmed) {
  if (dimmed) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  const bool clicked = ImGui::Checkbox(label, value);
  if (dimmed) ImGui::PopStyleColor();
  return clicked;
}

void table_row_label(const char* label) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(label);
}

bool seed_bands_combo(int* choice, const char* what) {
  ImGui::SetNextItemWidth(150);
  const bool changed = ImGui::Combo("seeds", choice, "each run\0mean ± sd\0mean ± 95% CI\0");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "%s that differ only in their seed: each its own line, or one mean line "
        "with a band (the sample sd, or the 95%% t-interval of the mean)",
        what);
  return changed;
}

float tooltip_width() {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float margin = 2 * (style.WindowPadding.x + style.DisplaySafeAreaPadding.x);
  return std::max(4 * ImGui::GetFontSize(),
                  std::min(40 * ImGui::GetFontSize(), ImGui::GetMainViewport()->Size.x - margin));
}

void tooltip(const char* format, ...) {
  const float width = tooltip_width();  // the main window's font, before the tooltip's
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  va_list args;
  va_start(args, format);
  ImGui::TextV(format, args);
  va_end(args);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

bool same_line_if_fits(float width) {
  const float next = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + width;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (next > right) return false;
  ImGui::SameLine();
  return true;
}

float button_width(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x;
}

float checkbox_width(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label, nullptr, true).x;
}

}  // namespace attn::gui
