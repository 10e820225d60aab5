#include "app/panels/mechanisms/neural_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/widgets.h"
#include "app/panels/mechanism_panels.h"
#include "core/training/trainer.h"

namespace attn::gui {
namespace {

constexpr ImU32 kMarker = IM_COL32(255, 255, 255, 220);
const ImVec4 kExactZero(0.40f, 0.80f, 0.55f, 1.0f);

}  // namespace

void NeuralPanel::draw_settings(const NeuralView& view) {
  // Layer: one of the neural layers. Shown as the one the trainer used when the panel's choice
  // is not a neural layer (the trainer falls back to the first).
  const int shown_layer = model_.shown_layer(view);
  char label[48];
  std::snprintf(label, sizeof label, "layer %d", shown_layer);
  ImGui::SetNextItemWidth(110);
  if (ImGui::BeginCombo("##layer", label)) {
    for (const NeuralLayerInfo& l : view.layers) {
      std::snprintf(label, sizeof label, "layer %d", l.layer);
      if (ImGui::Selectable(label, l.layer == shown_layer)) model_.select_layer(l.layer);
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  const NeuralLayerInfo* info = view.layer_info(shown_layer);
  const int heads = info ? info->heads : 1;
  const int head = model_.request().head;
  std::snprintf(label, sizeof label, "head %d", head);
  ImGui::SetNextItemWidth(100);
  if (ImGui::BeginCombo("##head", label)) {
    for (int h = 0; h < heads; ++h) {
      std::snprintf(label, sizeof label, "head %d", h);
      if (ImGui::Selectable(label, h == head)) model_.select_head(h);
    }
    ImGui::EndCombo();
  }
  if (info) {
    ImGui::SameLine();
    ImGui::TextDisabled("d' = %d%s, hidden %d, %s, Dh %d", info->reduced_dim,
                        info->down_projection ? "" : " (no down-projection)", info->hidden,
                        info->activation.c_str(), info->head_dim);
  }
  // Open at first in a tile with room for the controls and the figure; closed in a short one
  // (1280x720), where the controls would push the figure out of sight.
  ImGui::SetNextItemOpen(ImGui::GetContentRegionAvail().y >= 560.0f, ImGuiCond_Once);
  if (ImGui::CollapsingHeader("Range, query and slice")) draw_ranges();
}

void NeuralPanel::draw_ranges() {
  NeuralViewRequest& r = model_.request();
  // Two controls a line where the tile is wide enough (narrower fields in a narrow tile), else
  // one control per line.
  const float item_width =
      std::clamp(std::floor(ImGui::GetContentRegionAvail().x * 0.5f - 110.0f), 120.0f, 220.0f);
  ImGui::PushItemWidth(item_width);
  auto next = [item_width](const char* label) {
    same_line_if_fits(item_width + ImGui::GetStyle().ItemInnerSpacing.x +
                      ImGui::CalcTextSize(label).x);
  };
  ImGui::DragFloatRange2("x range", &r.x_min, &r.x_max, 0.05f, -100.0f, 100.0f, "%.2f");
  next("y range");
  ImGui::DragFloatRange2("y range", &r.y_min, &r.y_max, 0.05f, -100.0f, 100.0f, "%.2f");
  ImGui::SliderInt("grid", &r.grid, 11, 161);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Samples per axis of the surface");
  next("slice query q'");
  float query[2] = {r.query_x, r.query_y};
  if (ImGui::DragFloat2("slice query q'", query, 0.02f, -100.0f, 100.0f, "%.2f"))
    r.query_x = query[0], r.query_y = query[1];
  ImGui::SliderAngle("key direction a", &r.key_angle, -180.0f, 180.0f);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The slice's keys are k'(t) = t (cos a, sin a)");
  next("t range");
  ImGui::DragFloatRange2("t range", &r.slice_min, &r.slice_max, 0.05f, -100.0f, 100.0f, "%.2f");
  ImGui::PopItemWidth();
}

void NeuralPanel::draw_surface(const NeuralScoreSurface& s, ImFont* font, ImVec2 size) {
  const fig::Figure& figure = model_.figure();
  const int slice_panel = model_.slice_panel();
  plot_.draw(figure, size, font);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // A surface cell: its sample (cell (r, c) is the sample at xs[c], ys[r]) and score.
  if (const auto c = plot_.hover_cell(figure)) {
    if (c->row >= s.grid || c->col >= s.grid) return;
    dl->AddRect(c->min, c->max, kMarker);
    ImGui::SetTooltip("%s\nx = %.3f, y = %.3f: z = %.4g",
                      c->panel == 0 ? "learned score" : "dot product x^2 + y^2", s.xs[c->col],
                      s.ys[c->row], c->value);
    return;
  }
  // The slice: the sample nearest the mouse's t, both scores.
  const fig::FigureLayout& layout = plot_.layout();
  const size_t m = std::min({s.slice_t.size(), s.slice_learned.size(), s.slice_dot.size()});
  if (!ImGui::IsItemHovered() || layout.panels.size() <= static_cast<size_t>(slice_panel) || m < 2)
    return;
  const fig::PanelLayout& L = layout.panels[slice_panel];
  const ImVec2 a = plot_.to_screen(slice_panel, L.xmin, L.ymax);
  const ImVec2 b = plot_.to_screen(slice_panel, L.xmax, L.ymin);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mouse.x < a.x || mouse.x > b.x || mouse.y < a.y || mouse.y > b.y || !(b.x > a.x)) return;
  const double t = L.xmin + (mouse.x - a.x) / (b.x - a.x) * (L.xmax - L.xmin);
  size_t i = 0;
  for (size_t k = 1; k < m; ++k)
    if (std::abs(s.slice_t[k] - t) < std::abs(s.slice_t[i] - t)) i = k;
  const float x = plot_.to_screen(slice_panel, s.slice_t[i], L.ymin).x;
  dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), IM_COL32(255, 255, 255, 90));
  ImGui::SetTooltip("t = %.3f, k' = (%.3f, %.3f)\nlearned score %.4g\ndot product  %.4g",
                    s.slice_t[i], s.slice_t[i] * std::cos(s.key_angle),
                    s.slice_t[i] * std::sin(s.key_angle), s.slice_learned[i], s.slice_dot[i]);
}

void NeuralPanel::draw_parameter_table(const NeuralLayerInfo& info) {
  ImGui::Text(
      "Parameters of layer %d: norms per head (scalars: the value), and of the last "
      "gradient",
      info.layer);
  const NeuralModel::Table table = NeuralModel::parameter_table(info);
  if (table.columns.empty()) return;
  const float height = ImGui::GetTextLineHeightWithSpacing() * (info.heads + 1.6f);
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX;
  if (!ImGui::BeginTable("##parameters", static_cast<int>(table.columns.size()), kFlags,
                         ImVec2(0, height)))
    return;
  for (const std::string& c : table.columns) ImGui::TableSetupColumn(c.c_str());
  ImGui::TableHeadersRow();
  using Kind = NeuralModel::Cell::Kind;
  for (const auto& row : table.rows) {
    ImGui::TableNextRow();
    for (const NeuralModel::Cell& cell : row) {
      ImGui::TableNextColumn();
      if (cell.kind == Kind::NoGradient) {
        ImGui::TextDisabled("%s", cell.text.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("No backward pass yet");
      } else if (cell.kind == Kind::ExactZero) {
        // The point of showing it: softmax(s + c) = softmax(s), so the output cannot depend
        // on b_a and its gradient is exactly zero, not merely small.
        ImGui::TextColored(kExactZero, "%s", cell.text.c_str());
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip(
              "b_a shifts every score of a row equally and softmax is "
              "shift-invariant:\nthe loss does not depend on b_a, so its gradient "
              "is exactly 0 and it never trains.");
      } else {
        ImGui::TextUnformatted(cell.text.c_str());
      }
    }
  }
  ImGui::EndTable();
}

void NeuralPanel::draw_figure(const NeuralView& view, ImFont* font) {
  const NeuralScoreSurface& s = view.surface;
  if (!model_.surface_shown()) {
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.35f, 1.0f), "No score surface: %s.",
                       model_.missing_note(view).c_str());
    ImGui::TextWrapped(
        "Figure 1 restricts the scorer to d' = 2 (q' = k' = (x, y)). Set "
        "model.attention_options.neural.down to 2 to see it; the parameter table "
        "below is shown for any d'.");
    return;
  }
  ImGui::TextWrapped(
      "Figure 1 of the paper, live: q' = k' = (x, y). Scores are raw, before "
      "the 1/sqrt(Dh) softmax scale; softmax ignores a constant shift.");
  // The figure's grid follows the tile: the builder's three panels in a row where the tile is
  // wide; where it is narrow, two by two with the slice beside the learned surface and the
  // paraboloid (the fixed reference) below them, so that the live part shows first. The height
  // is what the parameter table leaves, within what the grid can use. Export writes the grid
  // shown.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const NeuralLayerInfo* shown = view.layer_info(s.layer);
  const float table_h = line * (2.6f + (shown ? shown->heads : 0));
  const float room = std::floor(avail.y - table_h - ImGui::GetStyle().ItemSpacing.y);
  const bool two_by_two = avail.x < 720.0f;
  model_.arrange(two_by_two);
  const float height =
      two_by_two ? std::clamp(room, std::floor(0.6f * avail.x), std::floor(0.9f * avail.x))
                 : std::clamp(room, 220.0f, std::max(220.0f, std::floor(0.42f * avail.x)));
  draw_surface(s, font, ImVec2(avail.x, height));
}

void NeuralPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  model_.update(snap);
  if (!model_.view()) {
    ImGui::TextWrapped(
        "No layer uses neural attention%s. Apply a config with \"neural\" in "
        "model.attention (e.g. assets/configs/neural_fortunes.json).",
        snap.attention_step < 0 ? " (or no probe has run yet)" : "");
    return;
  }
  const NeuralView& view = *model_.view();
  draw_settings(view);
  // Cheap for the trainer: it answers at once.
  if (const auto request = model_.take_request())
    frame.trainer.request_mechanism_view("neural", neural_request_to_json(*request));
  ImGui::TextDisabled("step %lld%s", static_cast<long long>(view.step),
                      view.request != model_.request() ? "  (updating)" : "");
  ImGui::SameLine();
  ImGui::BeginDisabled(!model_.figure_ok());
  if (ImGui::SmallButton("Export...")) request_figure_export(model_.figure());
  ImGui::EndDisabled();
  if (!model_.figure_ok() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", model_.figure_note().c_str());
  draw_figure(view, font);
  if (const NeuralLayerInfo* info = view.layer_info(view.surface.layer)) {
    ImGui::Separator();
    draw_parameter_table(*info);
  }
}

// The panel table's row (app/panels/mechanism_panels.h).
const bool kRegistered = register_mechanism_panel<NeuralPanel>(
    "neural", "neural", "Neural", TilePlace::Right, PanelOpens::WhenUsed);

}  // namespace attn::gui
