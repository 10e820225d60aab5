#include "panels/neural_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/figures/figures.h"
#include "core/training/trainer.h"
#include "gui/export_dialog.h"
#include "gui/plot_draw.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

constexpr float kGap = 12.0f;
constexpr float kSliceHeight = 170.0f;
constexpr float kColorbarWidth = 14.0f;
constexpr float kColorbarRoom = kColorbarWidth + 52.0f;  // bar, ticks and their labels
constexpr ImU32 kContour = IM_COL32(255, 255, 255, 150);
constexpr ImU32 kLearnedColor = colors::kOrange;
constexpr ImU32 kDotColor = colors::kSkyBlue;
const ImVec4 kExactZero(0.40f, 0.80f, 0.55f, 1.0f);

ImTextureID texture_id(const render::Texture2D& t) {
  return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(t.id()));
}

// Finite min and max of a field; [0, 1] when it has none, widened when flat.
void field_range(const std::vector<float>& z, float* lo, float* hi) {
  const render::Range r = render::value_range(z.data(), z.size());
  *lo = r.empty() ? 0.0f : static_cast<float>(r.lo);
  *hi = r.empty() ? 1.0f : static_cast<float>(r.hi);
  if (!(*hi - *lo > 1e-6f)) *hi = *lo + 1.0f;
  // A bound within rounding of zero (the paraboloid's minimum) is zero: the colorbar then
  // labels it "0", not "5.5e-33".
  const float span = *hi - *lo;
  if (std::abs(*lo) < 1e-6f * span) *lo = 0.0f;
  if (std::abs(*hi) < 1e-6f * span) *hi = 0.0f;
}

// Contour lines at the nice tick values strictly inside the field's range.
std::vector<render::ContourSegment> contours(const std::vector<float>& z, int n, float lo,
                                             float hi) {
  std::vector<render::ContourSegment> out;
  for (double level : render::linear_ticks(lo, hi, 8).values) {
    if (level <= lo || level >= hi) continue;
    auto segments = render::contour_segments(z.data(), n, n, level);
    out.insert(out.end(), segments.begin(), segments.end());
  }
  return out;
}

// The field with its rows reversed: textures put their first row at the top, the plots y_max.
std::vector<float> flipped_rows(const std::vector<float>& z, int n) {
  std::vector<float> out(z.size());
  for (int r = 0; r < n; ++r)
    std::copy(z.begin() + static_cast<size_t>(r) * n, z.begin() + static_cast<size_t>(r + 1) * n,
              out.begin() + static_cast<size_t>(n - 1 - r) * n);
  return out;
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

nlohmann::json NeuralPanel::report_json() const {
  const Report& r = report_;
  return {{"drawn", r.drawn},
          {"surface_available", r.surface_available},
          {"surface_finite", r.surface_finite},
          {"layer", r.layer},
          {"head", r.head},
          {"grid", r.grid},
          {"step", r.step},
          {"contour_segments", r.contour_segments},
          {"slice_points", r.slice_points},
          {"table_heads", r.table_heads},
          {"gradients_present", r.gradients_present},
          {"score_bias_gradient_zero", r.score_bias_gradient_zero},
          {"note", r.note}};
}

void NeuralPanel::update_textures(const NeuralView& view) {
  const NeuralScoreSurface& s = view.surface;
  const int n = s.grid;
  field_range(s.learned, &learned_min_, &learned_max_);
  field_range(s.paraboloid, &paraboloid_min_, &paraboloid_max_);
  const auto learned = flipped_rows(s.learned, n), paraboloid = flipped_rows(s.paraboloid, n);
  learned_.upload_matrix(learned.data(), n, n, render::Colormap::Viridis, learned_min_,
                         learned_max_);
  paraboloid_.upload_matrix(paraboloid.data(), n, n, render::Colormap::Viridis, paraboloid_min_,
                            paraboloid_max_);
  learned_contours_ = contours(s.learned, n, learned_min_, learned_max_);
  paraboloid_contours_ = contours(s.paraboloid, n, paraboloid_min_, paraboloid_max_);
  if (!colorbar_.valid()) upload_colorbar(colorbar_, render::Colormap::Viridis);
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
  if (!ImGui::CollapsingHeader("Range, query and slice", ImGuiTreeNodeFlags_DefaultOpen)) return;
  ImGui::PushItemWidth(220);
  ImGui::DragFloatRange2("x range", &request_.x_min, &request_.x_max, 0.05f, -100.0f, 100.0f,
                         "%.2f");
  ImGui::SameLine();
  ImGui::DragFloatRange2("y range", &request_.y_min, &request_.y_max, 0.05f, -100.0f, 100.0f,
                         "%.2f");
  ImGui::SliderInt("grid", &request_.grid, 11, 161);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Samples per axis of the surface");
  ImGui::SameLine();
  float query[2] = {request_.query_x, request_.query_y};
  if (ImGui::DragFloat2("slice query q'", query, 0.02f, -100.0f, 100.0f, "%.2f"))
    request_.query_x = query[0], request_.query_y = query[1];
  ImGui::SliderAngle("key direction a", &request_.key_angle, -180.0f, 180.0f);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("The slice's keys are k'(t) = t (cos a, sin a)");
  ImGui::SameLine();
  ImGui::DragFloatRange2("t range", &request_.slice_min, &request_.slice_max, 0.05f, -100.0f,
                         100.0f, "%.2f");
  ImGui::PopItemWidth();
}

void NeuralPanel::draw_heatmap(const char* id, const char* title, const NeuralScoreSurface& s,
                               const std::vector<float>& z, const render::Texture2D& texture,
                               float vmin, float vmax,
                               const std::vector<render::ContourSegment>& lines, ImFont* font,
                               float width, float height) {
  ImGui::BeginGroup();
  ImGui::TextUnformatted(title);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, ImVec2(std::max(1.0f, width), std::max(1.0f, height)));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int n = s.grid;
  // Each sample is the centre of its texel: the axes extend half a step beyond the grid.
  const double dx = (s.xs.back() - s.xs.front()) / (n - 1),
               dy = (s.ys.back() - s.ys.front()) / (n - 1);
  render::Range xr, yr;
  xr.lo = s.xs.front() - dx / 2, xr.hi = s.xs.back() + dx / 2;
  yr.lo = s.ys.front() - dy / 2, yr.hi = s.ys.back() + dy / 2;
  const PlotArea a = draw_plot_frame(dl, p0, ImVec2(p0.x + width - kColorbarRoom, p0.y + height),
                                     xr, yr, false, font, "x");
  dl->AddImage(texture_id(texture), a.min, a.max);
  dl->PushClipRect(a.min, a.max, true);
  for (const render::ContourSegment& c : lines)
    dl->AddLine(ImVec2(a.px(s.xs.front() + c.x0 * dx), a.py(s.ys.front() + c.y0 * dy)),
                ImVec2(a.px(s.xs.front() + c.x1 * dx), a.py(s.ys.front() + c.y1 * dy)), kContour,
                1.0f);
  dl->PopClipRect();
  const ImVec2 b0(a.max.x + 8, a.min.y), b1(b0.x + kColorbarWidth, a.max.y);
  draw_colorbar_range(dl, b0, b1, colorbar_.id(), vmin, vmax, 7, font, colors::kText);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (hovered && a.contains(mouse)) {
    const int c =
        std::clamp(static_cast<int>(std::lround((a.x_at(mouse.x) - s.xs.front()) / dx)), 0, n - 1);
    const int r =
        std::clamp(static_cast<int>(std::lround((a.y_at(mouse.y) - s.ys.front()) / dy)), 0, n - 1);
    ImGui::SetTooltip("x = %.3f, y = %.3f: z = %.4g", s.xs[c], s.ys[r],
                      z[static_cast<size_t>(r) * n + c]);
  }
  ImGui::EndGroup();
}

void NeuralPanel::draw_slice(const NeuralScoreSurface& s, ImFont* font, float height) {
  ImGui::Text("Slice: query q' = (%.2f, %.2f) fixed, key k'(t) = t (cos a, sin a), a = %.0f deg",
              s.query_x, s.query_y, s.key_angle * 180.0 / M_PI);
  ImGui::SameLine();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kLearnedColor), "  learned score");
  ImGui::SameLine();
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kDotColor), "  dot product q'.k'");
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float width = std::max(1.0f, ImGui::GetContentRegionAvail().x);
  ImGui::InvisibleButton("##slice", ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  render::Range xr;
  xr.lo = s.slice_t.front(), xr.hi = s.slice_t.back();
  const render::Range yr = render::padded(
      render::merge(render::value_range(s.slice_learned.data(), s.slice_learned.size()),
                    render::value_range(s.slice_dot.data(), s.slice_dot.size())),
      0.06, false);
  const PlotArea a =
      draw_plot_frame(dl, p0, ImVec2(p0.x + width, p0.y + height), xr, yr, false, font, "t");
  const size_t m = s.slice_t.size();
  draw_series(dl, a, s.slice_t.data(), s.slice_dot.data(), m, kDotColor, 2.0f);
  draw_series(dl, a, s.slice_t.data(), s.slice_learned.data(), m, kLearnedColor, 2.0f);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (hovered && a.contains(mouse) && m >= 2) {
    const double t = a.x_at(mouse.x);
    const size_t i =
        std::min(m - 1, static_cast<size_t>(std::lround((t - xr.lo) / (xr.hi - xr.lo) * (m - 1))));
    dl->AddLine(ImVec2(a.px(s.slice_t[i]), a.min.y), ImVec2(a.px(s.slice_t[i]), a.max.y),
                IM_COL32(255, 255, 255, 90));
    ImGui::SetTooltip("t = %.3f, k' = (%.3f, %.3f)\nlearned score %.4g\ndot product  %.4g",
                      s.slice_t[i], s.slice_t[i] * std::cos(s.key_angle),
                      s.slice_t[i] * std::sin(s.key_angle), s.slice_learned[i], s.slice_dot[i]);
  }
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
  ImGui::TextDisabled("step %lld%s", static_cast<long long>(view.step),
                      view.request != request_ ? "  (updating)" : "");
  ImGui::SameLine();
  gui::export_button("neural-surface", snap);
  report_.drawn = true;
  report_.layer = s.layer;
  report_.head = s.head;
  report_.step = view.step;
  report_.note = s.note;

  if (s.available && s.grid >= 2 && !s.xs.empty() && !s.slice_t.empty()) {
    if (uploaded_ != view_ptr) {
      update_textures(view);
      uploaded_ = view_ptr;
    }
    ImGui::TextWrapped(
        "Figure 1 of the paper, live: q' = k' = (x, y). Scores are raw, before "
        "the 1/sqrt(Dh) softmax scale; softmax ignores a constant shift.");
    // The heatmaps take what the slice and the table leave of the window's height.
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const NeuralLayerInfo* shown = view.layer_info(s.layer);
    const float reserved = kSliceHeight + line * (4.5f + (shown ? shown->heads : 0));
    const float width = std::max(160.0f, std::floor((avail.x - kGap) / 2));
    const float side =
        std::clamp(std::min(width - kColorbarRoom, avail.y - reserved - line), 120.0f, 420.0f);
    char title[96];
    std::snprintf(title, sizeof title, "learned z(x, y): layer %d head %d", s.layer, s.head);
    // About square data areas (x and y often share a range): the tick labels take ~36 px.
    const float map_width = std::min(width, side + kColorbarRoom + 36.0f);
    draw_heatmap("##learned", title, s, s.learned, learned_, learned_min_, learned_max_,
                 learned_contours_, font, map_width, side);
    ImGui::SameLine(0, kGap);
    draw_heatmap("##paraboloid", "dot product z = x^2 + y^2", s, s.paraboloid, paraboloid_,
                 paraboloid_min_, paraboloid_max_, paraboloid_contours_, font, map_width, side);
    draw_slice(s, font, kSliceHeight);
    report_.surface_available = true;
    report_.grid = s.grid;
    report_.surface_finite = all_finite(s.learned) && all_finite(s.slice_learned);
    report_.contour_segments =
        static_cast<int>(learned_contours_.size() + paraboloid_contours_.size());
    report_.slice_points = static_cast<int>(s.slice_t.size());
  } else {
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.35f, 1.0f), "No score surface: %s.",
                       s.note.empty() ? "nothing computed yet" : s.note.c_str());
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
