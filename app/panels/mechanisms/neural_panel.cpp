#include "app/panels/mechanisms/neural_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include "app/figures/figures.h"
#include "app/gui/plot/export_dialog.h"
#include "core/training/trainer.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

constexpr ImU32 kMarker = IM_COL32(255, 255, 255, 220);
const ImVec4 kExactZero(0.40f, 0.80f, 0.55f, 1.0f);
// The builder's panels (figures::neural_surface_figure): learned surface, paraboloid, slice.
constexpr int kBuiltSlicePanel = 2;

// Segments of a NaN-separated contour series (each segment is two points and a NaN).
int count_segments(const fig::LineSeries& l) {
  int n = 0;
  for (double x : l.x) n += std::isnan(x) ? 1 : 0;
  return n;
}

// Moves to the next line unless an item `width` pixels wide still fits on this one.
void same_line_if_fits(float width) {
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// "4.2e-03" style with three significant digits, for the parameter table.
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

// The report's keys are the Report fields' names (tests/e2e read them).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NeuralPanel::Report, drawn, surface_available, surface_finite,
                                   layer, head, grid, step, contour_segments, slice_points,
                                   table_heads, gradients_present, score_bias_gradient_zero, note)

nlohmann::json NeuralPanel::report_json() const {
  return report_;
}

void NeuralPanel::rebuild(const Snapshot& snap) {
  built_ = snap.neural;
  contour_segments_ = 0;
  slice_panel_ = kBuiltSlicePanel;
  try {
    figure_ = figures::neural_surface_figure(snap);
    figure_ok_ = figure_.panels.size() == 3;
    figure_note_.clear();
  } catch (const std::exception& e) {
    figure_ = fig::Figure{};
    figure_ok_ = false;
    figure_note_ = e.what();
    return;
  }
  const NeuralScoreSurface& s = snap.neural->surface;
  // The slice in the panel's colours (learned score orange, dot product sky blue; the builder's
  // series order is learned, dot), and the figure's title stating its query and key direction.
  fig::Panel& slice = figure_.panels[kBuiltSlicePanel];
  if (slice.lines.size() == 2) {
    slice.lines[0].color = fig::Color::from(render::okabe_ito(1));
    slice.lines[1].color = fig::Color::from(render::okabe_ito(4));
    slice.lines[0].width_pt = slice.lines[1].width_pt = 1.5;
  }
  char where[96];
  std::snprintf(where, sizeof where, "; slice at q' = (%.2f, %.2f), a = %.0f\xc2\xb0", s.query_x,
                s.query_y, s.key_angle * 180.0 / M_PI);
  figure_.title += where;
  for (int k = 0; k < kBuiltSlicePanel; ++k)
    for (const fig::LineSeries& l : figure_.panels[k].lines) contour_segments_ += count_segments(l);
}

void NeuralPanel::draw_settings(const NeuralView& view) {
  // Layer: one of the neural layers. Shown as the one the trainer used when the panel's choice
  // is not a neural layer (the trainer falls back to the first).
  const int shown_layer = view.layer_info(request_.layer) ? request_.layer : view.surface.layer;
  char label[48];
  std::snprintf(label, sizeof label, "layer %d", shown_layer);
  ImGui::SetNextItemWidth(110);
  if (ImGui::BeginCombo("##layer", label)) {
    for (const NeuralLayerInfo& l : view.layers) {
      std::snprintf(label, sizeof label, "layer %d", l.layer);
      if (ImGui::Selectable(label, l.layer == shown_layer)) request_.layer = l.layer;
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  const NeuralLayerInfo* info = view.layer_info(shown_layer);
  const int heads = info ? info->heads : 1;
  request_.head = std::clamp(request_.head, 0, std::max(0, heads - 1));
  std::snprintf(label, sizeof label, "head %d", request_.head);
  ImGui::SetNextItemWidth(100);
  if (ImGui::BeginCombo("##head", label)) {
    for (int h = 0; h < heads; ++h) {
      std::snprintf(label, sizeof label, "head %d", h);
      if (ImGui::Selectable(label, h == request_.head)) request_.head = h;
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
  if (!ImGui::CollapsingHeader("Range, query and slice")) return;
  // Two controls a line where the tile is wide enough (narrower fields in a narrow tile), else
  // one control per line.
  const float item_width =
      std::clamp(std::floor(ImGui::GetContentRegionAvail().x * 0.5f - 110.0f), 120.0f, 220.0f);
  ImGui::PushItemWidth(item_width);
  auto next = [item_width](const char* label) {
    same_line_if_fits(item_width + ImGui::GetStyle().ItemInnerSpacing.x +
                      ImGui::CalcTextSize(label).x);
  };
  ImGui::DragFloatRange2("x range", &request_.x_min, &request_.x_max, 0.05f, -100.0f, 100.0f,
                         "%.2f");
  next("y range");
  ImGui::DragFloatRange2("y range", &request_.y_min, &request_.y_max, 0.05f, -100.0f, 100.0f,
                         "%.2f");
  ImGui::SliderInt("grid", &request_.grid, 11, 161);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Samples per axis of the surface");
  next("slice query q'");
  float query[2] = {request_.query_x, request_.query_y};
  if (ImGui::DragFloat2("slice query q'", query, 0.02f, -100.0f, 100.0f, "%.2f"))
    request_.query_x = query[0], request_.query_y = query[1];
  ImGui::SliderAngle("key direction a", &request_.key_angle, -180.0f, 180.0f);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The slice's keys are k'(t) = t (cos a, sin a)");
  next("t range");
  ImGui::DragFloatRange2("t range", &request_.slice_min, &request_.slice_max, 0.05f, -100.0f,
                         100.0f, "%.2f");
  ImGui::PopItemWidth();
}

void NeuralPanel::draw_surface(const NeuralScoreSurface& s, ImFont* font, ImVec2 size) {
  plot_.draw(figure_, size, font);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // A surface cell: its sample (cell (r, c) is the sample at xs[c], ys[r]) and score.
  if (const auto c = plot_.hover_cell(figure_)) {
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
  if (!ImGui::IsItemHovered() || layout.panels.size() <= static_cast<size_t>(slice_panel_) || m < 2)
    return;
  const fig::PanelLayout& L = layout.panels[slice_panel_];
  const ImVec2 a = plot_.to_screen(slice_panel_, L.xmin, L.ymax);
  const ImVec2 b = plot_.to_screen(slice_panel_, L.xmax, L.ymin);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (mouse.x < a.x || mouse.x > b.x || mouse.y < a.y || mouse.y > b.y || !(b.x > a.x)) return;
  const double t = L.xmin + (mouse.x - a.x) / (b.x - a.x) * (L.xmax - L.xmin);
  size_t i = 0;
  for (size_t k = 1; k < m; ++k)
    if (std::abs(s.slice_t[k] - t) < std::abs(s.slice_t[i] - t)) i = k;
  const float x = plot_.to_screen(slice_panel_, s.slice_t[i], L.ymin).x;
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
  if (info.parameters.empty()) return;
  const auto& names = info.parameters.front();
  const int columns = 1 + 2 * static_cast<int>(names.size());
  const float height = ImGui::GetTextLineHeightWithSpacing() * (info.heads + 1.6f);
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX;
  if (!ImGui::BeginTable("##parameters", columns, kFlags, ImVec2(0, height))) return;
  ImGui::TableSetupColumn("head");
  for (const NeuralParameterStat& p : names) {
    const std::string value = p.scalar ? p.name : "|" + p.name + "|";
    const std::string grad = p.scalar ? "grad " + p.name : "|grad " + p.name + "|";
    ImGui::TableSetupColumn(value.c_str());
    ImGui::TableSetupColumn(grad.c_str());
  }
  ImGui::TableHeadersRow();
  for (size_t h = 0; h < info.parameters.size(); ++h) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%zu", h);
    for (const NeuralParameterStat& p : info.parameters[h]) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(number(p.value).c_str());
      ImGui::TableNextColumn();
      if (!p.has_gradient) {
        ImGui::TextDisabled("-");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("No backward pass yet");
      } else if (p.name == "b_a" && p.gradient == 0.0) {
        // The point of showing it: softmax(s + c) = softmax(s), so the output cannot depend
        // on b_a and its gradient is exactly zero, not merely small.
        ImGui::TextColored(kExactZero, "0 (exact)");
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip(
              "b_a shifts every score of a row equally and softmax is "
              "shift-invariant:\nthe loss does not depend on b_a, so its gradient "
              "is exactly 0 and it never trains.");
      } else {
        ImGui::TextUnformatted(number(p.gradient).c_str());
      }
    }
  }
  ImGui::EndTable();
}

void NeuralPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  Trainer& trainer = frame.trainer;
  ImFont* small_font = frame.small_font;
  report_ = Report{};
  ImFont* font = small_font ? small_font : ImGui::GetFont();
  if (!snap.neural) {
    ImGui::TextWrapped(
        "No layer uses neural attention%s. Apply a config with \"neural\" in "
        "model.attention (e.g. assets/configs/neural_fortunes.json).",
        snap.attention_step < 0 ? " (or no probe has run yet)" : "");
    return;
  }
  const std::shared_ptr<const NeuralView> view_ptr = snap.neural;
  const NeuralView& view = *view_ptr;
  draw_settings(view);
  if (request_ != sent_) {  // cheap for the trainer: it answers at once
    trainer.request_neural_view(request_);
    sent_ = request_;
  }
  const NeuralScoreSurface& s = view.surface;
  if (built_ != view_ptr) rebuild(snap);
  ImGui::TextDisabled("step %lld%s", static_cast<long long>(view.step),
                      view.request != request_ ? "  (updating)" : "");
  ImGui::SameLine();
  ImGui::BeginDisabled(!figure_ok_);
  if (ImGui::SmallButton("Export...")) request_figure_export(figure_);
  ImGui::EndDisabled();
  if (!figure_ok_ && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", figure_note_.c_str());
  report_.drawn = true;
  report_.layer = s.layer;
  report_.head = s.head;
  report_.step = view.step;
  report_.note = s.note;

  if (figure_ok_ && s.grid >= 2 && !s.xs.empty() && !s.slice_t.empty()) {
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
    const int slice_at = two_by_two ? 1 : kBuiltSlicePanel;
    if (slice_at != slice_panel_) {
      std::swap(figure_.panels[1], figure_.panels[2]);
      slice_panel_ = slice_at;
    }
    figure_.rows = two_by_two ? 2 : 1;
    figure_.cols = two_by_two ? 2 : 3;
    const float height =
        two_by_two ? std::clamp(room, std::floor(0.6f * avail.x), std::floor(0.9f * avail.x))
                   : std::clamp(room, 220.0f, std::max(220.0f, std::floor(0.42f * avail.x)));
    draw_surface(s, font, ImVec2(avail.x, height));
    report_.surface_available = true;
    report_.grid = s.grid;
    report_.surface_finite = all_finite(s.learned) && all_finite(s.slice_learned);
    report_.contour_segments = contour_segments_;
    const std::vector<fig::LineSeries>& slice = figure_.panels[slice_panel_].lines;
    report_.slice_points = slice.empty() ? 0 : static_cast<int>(slice[0].x.size());
  } else {
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.35f, 1.0f), "No score surface: %s.",
                       !s.note.empty()         ? s.note.c_str()
                       : !figure_note_.empty() ? figure_note_.c_str()
                                               : "nothing computed yet");
    ImGui::TextWrapped(
        "Figure 1 restricts the scorer to d' = 2 (q' = k' = (x, y)). Set "
        "model.attention_options.neural.down to 2 to see it; the parameter table "
        "below is shown for any d'.");
  }
  if (const NeuralLayerInfo* info = view.layer_info(s.layer)) {
    ImGui::Separator();
    draw_parameter_table(*info);
    report_.table_heads = static_cast<int>(info->parameters.size());
    bool all_gradients = !info->parameters.empty(), bias_zero = !info->parameters.empty();
    for (const auto& head : info->parameters)
      for (const NeuralParameterStat& p : head) {
        all_gradients = all_gradients && p.has_gradient;
        if (p.name == "b_a") bias_zero = bias_zero && p.has_gradient && p.gradient == 0.0;
      }
    report_.gradients_present = all_gradients;
    report_.score_bias_gradient_zero = bias_zero;
  }
}

std::vector<std::string> NeuralPanel::figures(const Snapshot& snap) const {
  for (const figures::FigureSpec& spec : figures::figures_for(snap))
    if (spec.name == "neural-surface") return {spec.name};
  return {};
}

}  // namespace attn::gui
