#include "panels/attention_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "gui/export_dialog.h"
#include "gui/plot_draw.h"
#include "render/plot/colormap.h"
#include "render/plot/plot_math.h"

namespace attn::gui {
namespace {

constexpr float kGap = 10.0f;          // between heatmaps
constexpr float kMinLabelCell = 9.0f;  // smaller cells get no token labels
constexpr float kColorbarWidth = 14.0f;

// Maps change only when the trainer probes again or rebuilds the model; the colour scale too.
uint64_t upload_key(const Snapshot& s, bool fixed_scale) {
  return (s.generation << 40) ^ (static_cast<uint64_t>(s.attention_step + 1) << 1) ^
         (fixed_scale ? 1u : 0u);
}

const char* token(const Snapshot& s, int i) {
  return i >= 0 && i < static_cast<int>(s.probe_tokens.size()) ? s.probe_tokens[i].c_str() : "?";
}

}  // namespace

void AttentionPanel::update_textures(const Snapshot& snap) {
  const uint64_t key = upload_key(snap, fixed_scale_);
  if (key == uploaded_key_ && maps_.size() == snap.attention_maps().size()) return;
  float vmax = 0.0f;
  for (const AttentionMap& m : snap.attention_maps())
    for (float w : m.weights)
      if (std::isfinite(w)) vmax = std::max(vmax, w);
  vmax_ = fixed_scale_ || vmax <= 0.0f ? 1.0f : vmax;
  maps_.resize(snap.attention_maps().size());
  for (size_t i = 0; i < snap.attention_maps().size(); ++i) {
    const AttentionMap& m = snap.attention_maps()[i];
    if (m.size > 0 && m.weights.size() == static_cast<size_t>(m.size) * m.size)
      maps_[i].upload_matrix(m.weights.data(), m.size, m.size, render::Colormap::Viridis, 0.0f,
                             vmax_);
  }
  if (!colorbar_.valid()) upload_colorbar(colorbar_, render::Colormap::Viridis);
  uploaded_key_ = key;
}

void AttentionPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* small_font = frame.small_font;
  ImFont* font = small_font ? small_font : ImGui::GetFont();
  const float fs = font->FontSize;

  // Toolbar: layer selection and colour scale.
  char current[32];
  if (layer_choice_ < 0 || layer_choice_ >= snap.layers) layer_choice_ = -1;
  std::snprintf(current, sizeof current, layer_choice_ < 0 ? "all layers" : "layer %d",
                layer_choice_);
  ImGui::SetNextItemWidth(120);
  if (ImGui::BeginCombo("##layer", current)) {
    if (ImGui::Selectable("all layers", layer_choice_ < 0)) layer_choice_ = -1;
    for (int l = 0; l < snap.layers; ++l) {
      char label[32];
      std::snprintf(label, sizeof label, "layer %d", l);
      if (ImGui::Selectable(label, layer_choice_ == l)) layer_choice_ = l;
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::Checkbox("scale 0..1", &fixed_scale_);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Off: colours span 0..max over all maps");
  ImGui::SameLine();
  gui::export_button("attention", snap);
  ImGui::SameLine();
  if (snap.attention_step >= 0)
    ImGui::TextDisabled("  probe at step %lld, %zu tokens",
                        static_cast<long long>(snap.attention_step), snap.probe_tokens.size());

  if (snap.attention_maps().empty() || snap.heads <= 0 || snap.layers <= 0) {
    ImGui::TextDisabled("No attention maps yet.");
    return;
  }
  update_textures(snap);

  const int first_layer = layer_choice_ < 0 ? 0 : layer_choice_;
  const int rows = layer_choice_ < 0 ? snap.layers : 1;
  const int cols = snap.heads;
  const int n = std::max(1, snap.attention_maps().front().size);

  constexpr ImGuiWindowFlags kGridFlags =
      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  if (!ImGui::BeginChild("##grid", ImVec2(0, 0), false, kGridFlags)) {
    ImGui::EndChild();
    return;
  }
  // Layout: left margin (row title + query labels), top margin (column title + key labels),
  // colorbar on the right. Cell size decides whether token labels fit.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float title_h = fs + 6;
  float max_token_w = 0;
  for (const auto& t : snap.probe_tokens)
    max_token_w = std::max(max_token_w, font->CalcTextSizeA(fs, FLT_MAX, 0, t.c_str()).x);
  const float label_w = std::min(max_token_w, 48.0f) + 4;
  const float colorbar_w = kColorbarWidth + 44;
  auto map_side = [&](float left, float top) {
    const float w = (avail.x - left - colorbar_w - kGap * cols) / cols;
    const float h = (avail.y - top - kGap * rows) / rows;
    return std::floor(std::max(8.0f, std::min(w, h)));
  };
  const float row_title_w = font->CalcTextSizeA(fs, FLT_MAX, 0, "L00").x + 6;
  // Token labels only when the cells stay readable after making room for them.
  const bool labels = map_side(row_title_w + label_w, title_h + fs + 2) / n >= kMinLabelCell;
  const float left = row_title_w + (labels ? label_w : 0);
  const float top = title_h + (labels ? fs + 2 : 0);
  const float side = map_side(left, top);
  const float cell = side / n;

  ImGui::InvisibleButton("##maps", ImVec2(std::max(1.0f, avail.x), std::max(1.0f, avail.y)));
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();

  for (int c = 0; c < cols; ++c) {
    char title[32];
    std::snprintf(title, sizeof title, "head %d", c);
    const float x = origin.x + left + c * (side + kGap);
    dl->AddText(font, fs, ImVec2(x, origin.y), colors::kText, title);
  }
  for (int r = 0; r < rows; ++r) {
    const int layer = first_layer + r;
    const float y = origin.y + top + r * (side + kGap);
    char title[16];
    std::snprintf(title, sizeof title, "L%d", layer);
    dl->AddText(font, fs, ImVec2(origin.x, y), colors::kText, title);
    for (int c = 0; c < cols; ++c) {
      const size_t index = static_cast<size_t>(layer) * snap.heads + c;
      if (index >= snap.attention_maps().size() || !maps_[index].valid()) continue;
      const ImVec2 p0(origin.x + left + c * (side + kGap), y);
      const ImVec2 p1(p0.x + side, p0.y + side);
      dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(maps_[index].id())), p0, p1);
      // Query tokens left of the first column's maps, key tokens above the first row's.
      if (labels)
        draw_token_labels(dl, font, p0, cell, n, label_w, c == 0, r == 0, snap.probe_tokens,
                          colors::kDimText);
      if (hovered && mouse.x >= p0.x && mouse.x < p1.x && mouse.y >= p0.y && mouse.y < p1.y) {
        const AttentionMap& m = snap.attention_maps()[index];
        const int i = std::clamp(static_cast<int>((mouse.y - p0.y) / cell), 0, n - 1);
        const int j = std::clamp(static_cast<int>((mouse.x - p0.x) / cell), 0, n - 1);
        const ImVec2 c0(p0.x + j * cell, p0.y + i * cell);
        dl->AddRect(c0, ImVec2(c0.x + cell, c0.y + cell), IM_COL32(255, 80, 80, 255));
        const float w = static_cast<size_t>(i) * n + j < m.weights.size()
                            ? m.weights[static_cast<size_t>(i) * n + j]
                            : NAN;
        ImGui::SetTooltip("layer %d head %d: query %d (%s) -> key %d (%s) = %.3f", m.layer, m.head,
                          i, token(snap, i), j, token(snap, j), w);
      }
    }
  }

  // Colorbar with ticks 0..vmax, as tall as the grid.
  const float grid_h = rows * side + (rows - 1) * kGap;
  const ImVec2 b0(origin.x + left + cols * (side + kGap) + 4, origin.y + top);
  const ImVec2 b1(b0.x + kColorbarWidth, b0.y + grid_h);
  draw_colorbar(dl, b0, b1, colorbar_.id(), vmax_, 6, font, colors::kText);
  dl->AddText(font, fs, ImVec2(b0.x, origin.y), colors::kDimText,
              "weight");  // on the column-title line
  ImGui::EndChild();
}

std::vector<std::string> AttentionPanel::figures(const Snapshot& snap) const {
  if (snap.attention_step < 0) return {};
  return {"attention"};
}

}  // namespace attn::gui
