#include "app/panels/attention/attention_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/widgets.h"

namespace attn::gui {
namespace {

const char* token(const Snapshot& s, int i) {
  return i >= 0 && i < static_cast<int>(s.probe_tokens.size()) ? s.probe_tokens[i].c_str() : "?";
}

}  // namespace

figures::FigureOptions AttentionPanel::options() const {
  figures::FigureOptions o;
  o.layer = layer_choice_ < 0 ? figures::kAllLayers : layer_choice_;
  o.scale = static_cast<figures::AttentionScale>(scale_);
  return o;
}

void AttentionPanel::update(FrameContext& frame) {
  const Snapshot& s = frame.snap;
  report_ = {{"probe_text", s.probe_text},
             {"probe_error", s.probe_error},
             {"probe_tokens", s.probe_tokens},
             {"attention_step", s.attention_step},
             {"step", s.step},
             {"state", to_string(s.state)}};
}

void AttentionPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  probe_.draw(frame);

  // Toolbar: layer and colour scale (the figure builder's options).
  layer_combo("##layer", &layer_choice_, snap.layers, 120);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(110);
  ImGui::Combo("scale", &scale_, "shared\0per map\0fixed 0..1\0");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "shared: 0..the largest weight shown (colours compare across maps)\n"
        "per map: each map 0..its own max\nfixed: 0..1");
  const bool have = !snap.attention_maps().empty() && snap.heads > 0 && snap.layers > 0;
  if (have &&
      (snap.serial != built_serial_ || layer_choice_ != built_layer_ || scale_ != built_scale_)) {
    figure_ = figures::attention_figure(snap, options());
    built_serial_ = snap.serial, built_layer_ = layer_choice_, built_scale_ = scale_;
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(!have);
  if (ImGui::SmallButton("Export...")) request_figure_export(figure_);
  ImGui::EndDisabled();
  if (snap.attention_step >= 0) {
    // Beside the buttons where it fits, else on its own line (never clipped).
    char status[160];
    std::snprintf(status, sizeof status, "probe at step %lld, %zu tokens%s%s",
                  static_cast<long long>(snap.attention_step), snap.probe_tokens.size(),
                  snap.token_legend.empty() ? "" : "; ", snap.token_legend.c_str());
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(status).x) ImGui::NewLine();
    ImGui::TextDisabled("%s", status);
  }
  if (!have) {
    ImGui::TextDisabled("No attention maps yet.");
    return;
  }

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  plot_.draw(figure_, ImVec2(avail.x, std::max(60.0f, avail.y)), font);
  // Heads ablated in the Interventions panel are outlined (the maps are the unablated model's).
  const auto& ablated = frame.ui.interventions.ablate;
  for (size_t i = 0; i < figure_.panels.size() && !ablated.empty(); ++i)
    for (const fig::Heatmap& m : figure_.panels[i].heatmaps)
      if (std::find(ablated.begin(), ablated.end(), HeadRef{m.layer, m.head}) != ablated.end()) {
        const ImVec2 a = plot_.to_screen(static_cast<int>(i), m.x0, m.y0);
        const ImVec2 b = plot_.to_screen(static_cast<int>(i), m.x1, m.y1);
        ImGui::GetWindowDrawList()->AddRect(ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
                                            ImVec2(std::max(a.x, b.x), std::max(a.y, b.y)),
                                            IM_COL32(255, 190, 0, 255), 0, 0, 3.0f);
      }
  if (const auto c = plot_.hover_cell(figure_)) {
    ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
    const fig::Panel& panel = figure_.panels[static_cast<size_t>(c->panel)];
    const fig::Heatmap& map = panel.heatmaps[static_cast<size_t>(c->heatmap)];
    const bool is_ablated =
        std::find(ablated.begin(), ablated.end(), HeadRef{map.layer, map.head}) != ablated.end();
    // Row 0 is the first query (matrix convention): rows are queries, columns keys.
    ImGui::SetTooltip(
        "%s: query %d (%s) -> key %d (%s) = %.3f\nright-click: %s this head "
        "(Interventions)",
        panel.title.c_str(), c->row, token(snap, c->row), c->col, token(snap, c->col), c->value,
        is_ablated ? "restore" : "ablate");
    if (map.layer >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Right))
      toggle_ablated_head(frame.trainer, frame.ui, {map.layer, map.head});
  }
}

std::vector<std::string> AttentionPanel::figures(const Snapshot& snap) const {
  if (snap.attention_step < 0) return {};
  return {"attention"};
}

}  // namespace attn::gui
