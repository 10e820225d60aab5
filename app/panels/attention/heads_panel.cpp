#include "app/panels/attention/heads_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "app/figures/catalog/figures.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/timeline.h"

namespace attn::gui {

nlohmann::json HeadsPanel::report() const {
  nlohmann::json r = model_.report();
  r["plot_px"] = plot_px_;
  r["map_px"] = map_px_;
  r["font_px"] = font_px_;
  return r;
}

// The metric of the map, the positions it averages over, the shared scale, the Export buttons
// and the status.
void HeadsPanel::toolbar(FrameContext& frame) {
  const auto& labels = figures::head_metric_labels();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 11);  // the longest metric name, any UI scale
  if (ImGui::BeginCombo("##metric", model_.metric_label().c_str())) {
    for (size_t i = 0; i < labels.size(); ++i)
      if (ImGui::Selectable(labels[i].second.c_str(), static_cast<int>(i) == model_.metric))
        model_.metric = static_cast<int>(i);
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The metric of the layer x head map");
  // Each control beside the last where it fits whole, else on the next line (at UI scale 2
  // "shared colour scale" was cut at the tile's edge).
  const ImGuiStyle& style = ImGui::GetStyle();
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x <
      ImGui::GetFontSize() * 5.5f + style.ItemInnerSpacing.x + ImGui::CalcTextSize("positions").x)
    ImGui::NewLine();
  positions_control(frame);
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < ImGui::GetFrameHeight() + style.ItemInnerSpacing.x +
                                             ImGui::CalcTextSize("shared colour scale").x)
    ImGui::NewLine();
  ImGui::Checkbox("shared colour scale", &model_.shared_scale);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("One colour scale for the map over every recorded step and head");
  // The Export buttons beside the controls where they fit, else on the next line (never cut).
  const float buttons = ImGui::CalcTextSize("Export...Export map...").x + 4 * style.FramePadding.x +
                        2 * style.ItemSpacing.x;
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < buttons) ImGui::NewLine();
  if (ImGui::SmallButton("Export...")) request_figure_export(model_.lines());
  ImGui::SameLine();
  ImGui::BeginDisabled(!model_.grid_ok());
  if (ImGui::SmallButton("Export map...")) request_figure_export(model_.grid());
  ImGui::EndDisabled();
  // The status goes beside the buttons where it fits, else on its own line (never clipped).
  const std::string status = model_.status();
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(status.c_str()).x) ImGui::NewLine();
  ImGui::TextDisabled("%s", status.c_str());
  if (!model_.positions_note().empty())
    ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.2f, 1.0f), "%s", model_.positions_note().c_str());
}

// "positions: answer | query | all": the task's scored positions come from the model's config,
// read again when the model changes (a run opened, a reset).
void HeadsPanel::positions_control(FrameContext& frame) {
  const auto& labels = HeadsModel::position_labels();
  int which = model_.positions();
  const bool new_model = frame.snap.generation != generation_;
  generation_ = frame.snap.generation;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5.5f);
  if (ImGui::BeginCombo("positions", labels[static_cast<size_t>(which)].c_str())) {
    for (size_t i = 0; i < labels.size(); ++i)
      if (ImGui::Selectable(labels[i].c_str(), static_cast<int>(i) == which))
        which = static_cast<int>(i);
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The query rows the map metrics average over: answer (the positions the task scores),\n"
        "query (from the first scored position on) or all (as attnlab export --positions)");
  if (which != model_.positions() || (new_model && which != 2))
    model_.set_positions(which, frame.trainer.config());
}

// Wide tiles: the lines with the map beside them. Narrow ones (a 1280x720 window's tile): the
// map under the lines at the tile's width, so it is not squeezed to a strip.
void HeadsPanel::draw_figures(FrameContext& frame) {
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  const bool grid_ok = model_.grid_ok();
  const float spacing = ImGui::GetStyle().ItemSpacing.y;
  ImVec2 avail = ImGui::GetContentRegionAvail();
  avail.y -= attribution_height(avail.x) + spacing;  // the recorded attribution goes under
  const bool stacked = grid_ok && avail.x < 40 * ImGui::GetFontSize();
  const float grid_w = !grid_ok  ? 0.0f
                       : stacked ? avail.x
                                 : std::clamp(avail.x * 0.3f, 160.0f, 420.0f);
  const float lines_w =
      stacked ? avail.x : std::max(120.0f, avail.x - grid_w - ImGui::GetStyle().ItemSpacing.x);
  // Never below the plots' readable minimum: the child window around them scrolls instead.
  const float min_h = HeadsModel::min_height(model_.lines(), ImGui::GetFontSize());
  const float min_grid = 12 * ImGui::GetFontSize();
  const float h = std::max(min_h, stacked ? std::floor(0.62f * (avail.y - spacing)) : avail.y);
  const float grid_h = stacked ? std::max(min_grid, avail.y - h - spacing) : std::max(h, min_grid);
  ImGui::BeginGroup();
  lines_.draw(model_.lines(), ImVec2(lines_w, h), font);
  plot_px_["lines"] = {ImGui::GetItemRectSize().x, ImGui::GetItemRectSize().y};
  mark_timeline(lines_, frame.ui);
  if (const auto hv = lines_.hover(model_.lines())) {
    ImGui::GetWindowDrawList()->AddCircle(hv->screen, 5.0f, IM_COL32(255, 255, 255, 220), 0, 1.5f);
    const fig::Panel& p = model_.lines().panels[static_cast<size_t>(hv->panel)];
    ImGui::SetTooltip("%s", HeadsModel::line_text(hv->name, p.title, hv->y, hv->x).c_str());
  }
  ImGui::EndGroup();
  if (grid_ok) {
    if (!stacked) ImGui::SameLine();
    grid_.draw(model_.grid(), ImVec2(grid_w, grid_h), font);
    plot_px_["grid"] = {ImGui::GetItemRectSize().x, ImGui::GetItemRectSize().y};
    map_px_ = grid_.smallest_map_px(model_.grid());
    if (const auto c = grid_.hover_cell(model_.grid())) {
      ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
      ImGui::SetTooltip("%s", model_.cell_text(c->row, c->col, c->value).c_str());
    }
  } else if (!model_.grid_note().empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", model_.grid_note().c_str());
  }
  draw_attribution(font);
}

// The height the recorded attribution takes under the figures in a tile `width` wide: its heatmap
// and Export button, or the one line saying the step recorded none.
float HeadsPanel::attribution_height(float width) const {
  const float line = ImGui::GetFrameHeightWithSpacing();
  if (!model_.attribution_ok()) return line;
  return line +
         std::max(10 * ImGui::GetFontSize(), std::min(width * 0.3f, 16 * ImGui::GetFontSize()));
}

// The recorded attribution patching of the map's step under the figures, or one line saying
// the step recorded none.
void HeadsPanel::draw_attribution(ImFont* font) {
  if (!model_.attribution_ok()) {
    ImGui::TextDisabled("%s", model_.attribution_note().c_str());
    return;
  }
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = attribution_height(w) - ImGui::GetFrameHeightWithSpacing();
  if (ImGui::SmallButton("Export attribution...")) request_figure_export(model_.attribution());
  attribution_.draw(model_.attribution(), ImVec2(std::min(w, h * 2.5f), h), font);
  plot_px_["attribution"] = {ImGui::GetItemRectSize().x, ImGui::GetItemRectSize().y};
  if (const auto c = attribution_.hover_cell(model_.attribution())) {
    ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
    ImGui::SetTooltip("%s", model_.attribution_text(c->row, c->col, c->value).c_str());
  }
}

void HeadsPanel::draw(FrameContext& frame) {
  if (!frame.timeline) return;
  model_.collect(frame.timeline->records());
  if (model_.empty()) {
    ImGui::TextWrapped(
        "No recorded views yet. Runs record the probe's maps at every evaluation "
        "(train.record_every) into views.rec; the head metrics over training appear here as "
        "they are written. Open a recorded run (File > Open run) to see its history.");
    return;
  }
  // The map's step: the timeline's, or the newest with metrics while it follows the model.
  model_.build(model_.step_for(frame.ui.timeline_step));
  plot_px_ = nlohmann::json::object();
  map_px_ = 0;
  font_px_ = ImGui::GetFontSize();
  toolbar(frame);
  // The figures scroll inside the tile when their minimum height does not fit it.
  if (ImGui::BeginChild("##heads-figures", ImVec2(0, 0), false)) draw_figures(frame);
  ImGui::EndChild();
}

}  // namespace attn::gui
