#include "app/gui/window/widgets.h"

#include <imgui.h>

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

}  // namespace attn::gui
