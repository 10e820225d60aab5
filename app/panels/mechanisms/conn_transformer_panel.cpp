#include "app/panels/mechanisms/conn_transformer_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/widgets.h"
#include "app/panels/mechanism_panels.h"

namespace attn::gui {
namespace {

constexpr float kGap = 12.0f;
constexpr ImU32 kMarker = IM_COL32(255, 255, 255, 220);

}  // namespace

ConnTransformerPanel::ConnTransformerPanel() {
  // C zooms, pans and crops as the attention maps do (wheel, drag, the crop line).
  live_[Model::kMatrix].map_view().set_any_heatmap(true);
}

const fig::Figure* ConnTransformerPanel::shown_figure(const std::string& name) const {
  const Model::Plot& plot = model_.plot(Model::kMatrix);
  if (!plot.ok || plot.figure.name != name) return ModelPanel::shown_figure(name);
  matrix_on_screen_ = live_[Model::kMatrix].on_screen(plot.figure);
  return &matrix_on_screen_;
}

bool ConnTransformerPanel::draw_plot(Model::PlotId id, ImFont* font, ImVec2 size,
                                     const char* label) {
  const Model::Plot& plot = model_.plot(id);
  ImGui::PushID(label);
  if (plot.ok) {
    live_[id].draw(plot.figure, size, font);
  } else {
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    ImGui::GetWindowDrawList()->AddText(font, font->FontSize, ImVec2(p0.x + 8, p0.y + 8),
                                        ImGui::GetColorU32(ImGuiCol_TextDisabled),
                                        plot.note.c_str(), nullptr, std::max(1.0f, size.x - 16));
  }
  ImGui::PopID();
  return plot.ok;
}

void ConnTransformerPanel::draw_matrix(const ConnView& v, ImFont* font, ImVec2 size) {
  if (!draw_plot(Model::kMatrix, font, size, "matrix")) return;
  const auto c = live_[Model::kMatrix].hover_cell(model_.plot(Model::kMatrix).figure);
  const std::vector<int>& order = model_.order();
  const int n = v.slots;
  if (!c || c->row >= n || c->col >= n || static_cast<int>(order.size()) != n) return;
  ImGui::GetWindowDrawList()->AddRect(c->min, c->max, kMarker);
  // The cell's display position maps back to the real slots through the order shown.
  const int i = order[c->row], j = order[c->col];
  ImGui::SetTooltip("C[%d, %d] = %.4g\nslot %d -> slot %d", i, j, c->value, i, j);
}

void ConnTransformerPanel::draw_eigenvalues(ImFont* font, ImVec2 size) {
  if (!draw_plot(Model::kEigenvalues, font, size, "eigen")) return;
  const LiveFigure& live = live_[Model::kEigenvalues];
  // LiveFigure::hover looks at lines only: the eigenvalues are a scatter, looked up here.
  const fig::FigureLayout& layout = live.layout();
  if (!ImGui::IsItemHovered() || layout.panels.empty()) return;
  const fig::PanelLayout& L = layout.panels[0];
  const ImVec2 a = live.to_screen(0, L.xmin, L.ymin), b = live.to_screen(0, L.xmax, L.ymax);
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (m.x < std::min(a.x, b.x) || m.x > std::max(a.x, b.x) || m.y < std::min(a.y, b.y) ||
      m.y > std::max(a.y, b.y))
    return;
  const fig::Panel& panel = model_.plot(Model::kEigenvalues).figure.panels[0];
  const fig::ScatterSeries* eig = nullptr;
  for (const fig::ScatterSeries& s : panel.scatters)
    if (s.name == "eigenvalues") eig = &s;
  if (!eig) return;
  float best_d2 = 10.0f * 10.0f;
  size_t best = eig->x.size();
  ImVec2 best_p;
  for (size_t k = 0; k < std::min(eig->x.size(), eig->y.size()); ++k) {
    const ImVec2 p = live.to_screen(0, eig->x[k], eig->y[k]);
    const float d2 = (p.x - m.x) * (p.x - m.x) + (p.y - m.y) * (p.y - m.y);
    if (d2 < best_d2) best_d2 = d2, best = k, best_p = p;
  }
  if (best == eig->x.size()) return;
  ImGui::GetWindowDrawList()->AddCircle(best_p, 6.0f, kMarker, 0, 1.5f);
  ImGui::SetTooltip("lambda = %.4f %+.4fi\n|lambda| = %.4f", eig->x[best], eig->y[best],
                    std::hypot(eig->x[best], eig->y[best]));
}

void ConnTransformerPanel::draw_spectra(ImFont* font, ImVec2 size, UiState& ui) {
  if (!draw_plot(Model::kSpectral, font, size, "spectral")) return;
  mark_timeline(live_[Model::kSpectral], ui);
  if (const auto h = live_[Model::kSpectral].hover(model_.plot(Model::kSpectral).figure)) {
    ImGui::GetWindowDrawList()->AddCircle(h->screen, 5.0f, kMarker, 0, 1.5f);
    ImGui::SetTooltip("%s = %.4f\nstep %.0f", h->name.c_str(), h->y, h->x);
  }
}

void ConnTransformerPanel::draw_trace(ImFont* font, ImVec2 size) {
  if (!draw_plot(Model::kTrace, font, size, "trace")) return;
  const LiveFigure& live = live_[Model::kTrace];
  // The points lie on the steps k = 0..K only: the step under the mouse, and there the slot
  // nearest the mouse (within 12 px) and the mean.
  const fig::FigureLayout& layout = live.layout();
  const fig::Panel& panel = model_.plot(Model::kTrace).figure.panels[0];
  if (!ImGui::IsItemHovered() || layout.panels.empty() || panel.lines.size() < 2) return;
  const fig::LineSeries &slots = panel.lines[0], &mean = panel.lines[1];
  const fig::PanelLayout& L = layout.panels[0];
  const ImVec2 a = live.to_screen(0, L.xmin, L.ymax), b = live.to_screen(0, L.xmax, L.ymin);
  const ImVec2 m = ImGui::GetIO().MousePos;
  const int steps = static_cast<int>(mean.x.size());
  if (m.x < a.x || m.x > b.x || m.y < a.y || m.y > b.y || !(b.x > a.x) || steps == 0) return;
  const double x = L.xmin + (m.x - a.x) / (b.x - a.x) * (L.xmax - L.xmin);
  const int k = std::clamp(static_cast<int>(std::lround(x)), 0, steps - 1);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float sx = live.to_screen(0, k, L.ymin).x;
  dl->AddLine(ImVec2(sx, a.y), ImVec2(sx, b.y), IM_COL32(255, 255, 255, 90));
  // slots holds steps points per slot, then a NaN.
  int best = -1;
  float best_d = 12.0f;
  ImVec2 best_p;
  for (size_t i = static_cast<size_t>(k), s = 0; i < slots.y.size(); i += steps + 1, ++s) {
    if (!std::isfinite(slots.y[i])) continue;
    const ImVec2 p = live.to_screen(0, k, slots.y[i]);
    if (std::abs(p.y - m.y) < best_d)
      best_d = std::abs(p.y - m.y), best = static_cast<int>(s), best_p = p;
  }
  if (best >= 0) {
    dl->AddCircle(best_p, 5.0f, kMarker, 0, 1.5f);
    ImGui::SetTooltip("after step %d%s\nslot %d: norm %.4f\nmean over slots: %.4f", k,
                      k == 0 ? " (compression)" : "", best,
                      slots.y[static_cast<size_t>(best) * (steps + 1) + k], mean.y[k]);
  } else {
    ImGui::SetTooltip("after step %d%s\nmean over slots: %.4f", k, k == 0 ? " (compression)" : "",
                      mean.y[k]);
  }
}

void ConnTransformerPanel::draw_toolbar(const Snapshot& snap) {
  // The matrix figure's control, then one Export button per figure on screen.
  bool reorder = model_.reorder();
  if (ImGui::Checkbox("reorder", &reorder)) model_.set_reorder(reorder);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Order C's slots by total |C| in and out, strongest first");
  model_.update(snap);
  struct Button {
    const char* label;
    Model::PlotId plot;
  };
  const Button buttons[] = {{"Export C...", Model::kMatrix},
                            {"Export eigenvalues...", Model::kEigenvalues},
                            {"Export rho over training...", Model::kSpectral},
                            {"Export trace...", Model::kTrace}};
  for (const Button& b : buttons) {
    const Model::Plot& plot = model_.plot(b.plot);
    same_line_if_fits(button_width(b.label));
    ImGui::BeginDisabled(!plot.ok);
    // What is on screen: C as zoomed or cropped (the other figures are sent unchanged).
    if (ImGui::SmallButton(b.label)) request_figure_export(live_[b.plot].on_screen(plot.figure));
    ImGui::EndDisabled();
    if (!plot.ok && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", plot.note.c_str());
  }
}

void ConnTransformerPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  if (!Model::shows(snap)) {
    ImGui::TextWrapped(
        "This panel shows the Connection Transformer (model.architecture \"conn\"): C, the "
        "spectra of I + C and the reasoning trace. The current model is not one; try "
        "assets/configs/conn_recall.json.");
    return;
  }
  model_.update(snap);  // decodes the view (again in draw_toolbar: nothing to do then)
  if (!model_.view()) return;
  const ConnView& v = *model_.view();
  ImGui::TextWrapped("%s", Model::summary(v).c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", Model::parameters_note(v).c_str());
  ImGui::PopStyleColor();
  draw_toolbar(snap);

  // The four figures in a grid: four in a row when the tile is wide and short enough that each
  // still gets a readable plot, two by two when not, one column when narrow; the statistics
  // below. Each plot keeps 16 x 14 font sizes at least (at 1280x720 four in a row were 170 px
  // tall): where the tile is shorter the panel scrolls.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImGuiStyle& style = ImGui::GetStyle();
  const float font_px = ImGui::GetFontSize();
  const float min_w = 16 * font_px, min_h = 14 * font_px;
  const float stats_h = 4.5f * ImGui::GetTextLineHeightWithSpacing();
  const float plots_h = avail.y - stats_h - style.ItemSpacing.y;
  const float four_w = (avail.x - 3 * kGap) / 4;
  int columns = 1;
  if (four_w >= min_w && plots_h >= min_h && plots_h < 1.3f * four_w)
    columns = 4;
  else if (avail.x >= 2 * min_w + kGap)
    columns = 2;
  const float cell_w = std::floor((avail.x - (columns - 1) * kGap) / columns);
  const int grid_rows = 4 / columns;
  const float cell_h =
      columns == 1
          ? std::max(min_h, cell_w * 0.7f)
          : std::max(min_h,
                     std::floor((plots_h - (grid_rows - 1) * style.ItemSpacing.y) / grid_rows));
  const ImVec2 cell(cell_w, cell_h);
  draw_matrix(v, font, cell);
  if (columns > 1) ImGui::SameLine(0, kGap);
  draw_eigenvalues(font, cell);
  if (columns == 4) ImGui::SameLine(0, kGap);
  draw_spectra(font, cell, frame.ui);
  if (columns > 1) ImGui::SameLine(0, kGap);
  draw_trace(font, cell);
  for (const std::string& line : Model::stats_lines(v)) ImGui::TextWrapped("%s", line.c_str());
}

// The panel table's row (app/panels/mechanism_panels.h).
const bool kRegistered = register_mechanism_panel<ConnTransformerPanel>(
    "conn", "conn", "Connection Transformer", TilePlace::Bottom, PanelOpens::InsteadOfAttention);

}  // namespace attn::gui
