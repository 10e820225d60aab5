#include "app/panels/attention/attention_panel.h"

#include <imgui.h>

#include <algorithm>
#include <string>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/widgets.h"

namespace attn::gui {
namespace {

bool is_ablated(const UiState& ui, const fig::Heatmap& map) {
  const auto& heads = ui.interventions.ablate;
  return std::find(heads.begin(), heads.end(), HeadRef{map.layer, map.head}) != heads.end();
}

}  // namespace

// Layer and colour scale (the figure builder's options), Export and the probe's status.
void AttentionPanel::toolbar(const Snapshot& snap, bool have) {
  // As many maps a row as fit at kMinMapFonts font sizes a side beside the colorbar and the
  // axis labels (about 6 font sizes); fewer columns stack the maps and the tile scrolls.
  const float font_px = ImGui::GetFontSize();
  model_.controls.columns =
      std::max(1, static_cast<int>((ImGui::GetContentRegionAvail().x - 6 * font_px) /
                                   ((kMinMapFonts + 1) * font_px)));
  layer_combo("##layer", &model_.controls.layer, snap.layers, 8 * font_px);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(7 * font_px);
  ImGui::Combo("scale", &model_.controls.scale, "shared\0per map\0fixed 0..1\0");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "shared: 0..the largest weight shown (colours compare across maps)\n"
        "per map: each map 0..its own max\nfixed: 0..1");
  if (have) model_.figure(snap);
  // Export beside the combos where it fits, else on the next line (at UI scale 2 it was cut).
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x <
      ImGui::CalcTextSize("Export...").x + 2 * ImGui::GetStyle().FramePadding.x)
    ImGui::NewLine();
  ImGui::BeginDisabled(!have);
  // What is on screen, crop and single-head view included (the map view of plot_).
  if (ImGui::SmallButton("Export...")) request_figure_export(plot_.on_screen(model_.shown()));
  ImGui::EndDisabled();
  const std::string status = AttentionModel::status(snap);
  if (!status.empty()) {
    // Beside the buttons where it fits, else on its own lines, wrapped (at UI scale 2 the token
    // legend was cut at the tile's edge; the line holds no decimal number ImGui could split).
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(status.c_str()).x) ImGui::NewLine();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", status.c_str());
    ImGui::PopStyleColor();
  }
}

const fig::Figure* AttentionPanel::shown_figure(const std::string& name) const {
  if (name != "attention" || model_.shown().panels.empty()) return nullptr;
  on_screen_ = plot_.on_screen(model_.shown());
  return &on_screen_;
}

nlohmann::json AttentionPanel::report() const {
  nlohmann::json r = model_.report();
  r["map_px"] = fit_.side();
  r["font_px"] = font_px_;
  r["ablated_step"] = ablated_step_;
  return r;
}

void AttentionPanel::draw_maps(FrameContext& frame) {
  const fig::Figure& figure = model_.shown();
  Trainer& trainer = frame.trainer;
  plot_.set_crop_presets(model_.crop_presets(frame.snap, [&] { return trainer.config(); }));
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // A least height in font sizes, and taller still until the smallest map is kMinMapFonts font
  // sizes a side (at UI scale 2 the crop controls left maps of about 15 px): the panel scrolls.
  font_px_ = ImGui::GetFontSize();
  const float h = fit_.height(avail.x, avail.y, 16 * font_px_, font_px_);
  plot_.draw(figure, ImVec2(avail.x, h), font);
  fit_.measured(plot_.smallest_map_px(figure), kMinMapFonts * font_px_, figure.rows);
  // Heads ablated in the Interventions panel are outlined (the maps are the ablated model's once
  // the trainer answers: later layers change, the ablated layer's own maps do not).
  for (const HeatmapRef& at : model_.ablated_maps(frame.ui.interventions.ablate)) {
    const fig::Heatmap& m = figure.panels[at.panel].heatmaps[at.heatmap];
    const ImVec2 a = plot_.to_screen(at.panel, m.x0, m.y0);
    const ImVec2 b = plot_.to_screen(at.panel, m.x1, m.y1);
    ImGui::GetWindowDrawList()->AddRect(ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
                                        ImVec2(std::max(a.x, b.x), std::max(a.y, b.y)),
                                        IM_COL32(255, 190, 0, 255), 0, 0, 3.0f);
  }
  if (const auto c = plot_.hover_cell(figure)) {
    ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
    const fig::Heatmap& map = figure.panels[c->panel].heatmaps[c->heatmap];
    const std::string text = model_.hover_text(frame.snap, {c->panel, c->heatmap}, c->row, c->col,
                                               c->value, is_ablated(frame.ui, map));
    ImGui::SetTooltip("%s", text.c_str());
    if (map.layer >= 0 && ImGui::IsMouseClicked(ImGuiMouseButton_Right))
      toggle_ablated_head(frame.trainer, frame.ui, {map.layer, map.head});
  }
}

void AttentionPanel::draw(FrameContext& frame) {
  probe_.draw(frame);
  const bool have = AttentionModel::has_maps(frame.snap);
  model_.controls.ablated = frame.ui.interventions.ablate;
  model_.controls.live = frame.ui.timeline_step < 0;
  toolbar(frame.snap, have);
  if (!have) {
    ImGui::TextDisabled("No attention maps yet.");
    return;
  }
  const std::string ablation = model_.ablation_status(frame.snap);
  const InterventionView* answer = model_.ablation_answer(frame.snap);
  ablated_step_ = answer ? answer->step : -1;
  if (!ablation.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.75f, 0.0f, 1.0f));  // the outline's
    ImGui::TextWrapped("%s", ablation.c_str());
    ImGui::PopStyleColor();
  }
  draw_maps(frame);
}

}  // namespace attn::gui
