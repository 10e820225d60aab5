#include "app/gui/plot/live_figure.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "app/gui/ui_state.h"

namespace attn::gui {
namespace {
bool g_capture = false;
}  // namespace

void LiveFigure::set_capture(bool on) {
  g_capture = on;
}
std::vector<CapturedFigure>& LiveFigure::captured() {
  static std::vector<CapturedFigure> figures;
  return figures;
}

bool LiveFigure::draw(const fig::Figure& source, ImVec2 size, ImFont* font, uint64_t cache_key) {
  ImFont* f = font ? font : ImGui::GetFont();
  // Attention maps go through the map view: crop fields above, the cut figure drawn.
  const fig::Heatmap* map = map_view_.map_of(source);
  maps_ = map != nullptr;
  if (maps_) {
    map_view_.set_size(map->rows, map->cols);
    if (map_view_.selected() >= static_cast<int>(source.panels.size())) map_view_.select(-1);
    map_controls(&size);
  }
  // The whole grid is drawn as it is (no copy per frame); a zoom, crop or single head is cut.
  cut_ = maps_ && (map_view_.zoomed() || map_view_.selected() >= 0);
  if (cut_) shown_ = map_view_.apply(source);
  shown_alone_ = cut_ ? map_view_.selected() : -1;  // map_input() may change it after the draw
  const fig::Figure& figure = cut_ ? shown_ : source;
  page_ = fig::Page{};
  page_.theme = fig::Theme::dark();
  const double pixels_per_point = std::max(0.5, static_cast<double>(f->FontSize) / page_.font_pt);
  page_.width_pt = std::max(40.0, size.x / pixels_per_point);
  page_.height_pt = std::max(30.0, size.y / pixels_per_point);
  // The window is cleared to this same colour (gui/window/window.cpp), so the page background is
  // not painted again: one fill fewer per figure for a software rasteriser.
  fig::Page screen_page = page_;
  screen_page.theme.background.a = 0;
  layout_ = cache_key != 0 ? view_.draw_cached(figure, screen_page, size, f, cache_key)
                           : view_.draw(figure, screen_page, size, f);
  hovered_ = ImGui::IsItemHovered();
  if (g_capture) {
    const ImVec2 p0 = ImGui::GetItemRectMin(), p1 = ImGui::GetItemRectMax();
    captured().push_back({figure, page_, p0.x, p0.y, p1.x - p0.x, p1.y - p0.y});
  }
  if (maps_) map_input();
  return !layout_.panels.empty() || figure.panels.empty();
}

float LiveFigure::smallest_map_px(const fig::Figure& figure) const {
  float least = 0;
  for (size_t p = 0; p < figure.panels.size(); ++p)
    for (const fig::Heatmap& m : figure.panels[p].heatmaps) {
      const ImVec2 a = to_screen(static_cast<int>(p), m.x0, m.y0);
      const ImVec2 b = to_screen(static_cast<int>(p), m.x1, m.y1);
      if (a.x < -1e5f || b.x < -1e5f) continue;  // not shown (another head alone)
      const float side = std::min(std::abs(b.x - a.x), std::abs(b.y - a.y));
      if (side > 0 && (least == 0 || side < least)) least = side;
    }
  return least;
}

float LiveFigure::colorbar_label_height(const fig::Figure& figure, ImFont* font) {
  float label = 0;
  for (const fig::Panel& p : figure.panels)
    for (const fig::Heatmap& m : p.heatmaps)
      if (m.colorbar)
        label = std::max(
            label,
            font->CalcTextSizeA(font->FontSize, FLT_MAX, 0, fig::colorbar_text(m).c_str()).x);
  if (label == 0) return 0;
  const float rows = static_cast<float>(std::max(1, figure.rows));
  return rows * (label + 4 * font->FontSize) + 3 * font->FontSize;
}

ImVec2 LiveFigure::to_screen(int panel, double x, double y) const {
  if (cut_) {
    if (shown_alone_ >= 0) panel = panel == shown_alone_ ? 0 : -1;
    if (panel < 0 ||
        panel >= static_cast<int>(std::min(shown_.panels.size(), layout_.panels.size())))
      return ImVec2(-1e6f, -1e6f);  // not shown: off screen
    const fig::Panel& shown = shown_.panels[static_cast<size_t>(panel)];
    if (shown.x.min < shown.x.max) x = std::clamp(x, shown.x.min, shown.x.max);
    if (shown.y.min < shown.y.max) y = std::clamp(y, shown.y.min, shown.y.max);
  }
  const fig::PanelLayout& p = layout_.panels.at(static_cast<size_t>(panel));
  const float s = view_.pixels_per_point();
  return ImVec2(view_.origin().x + static_cast<float>(p.page_x(x)) * s,
                view_.origin().y + static_cast<float>(p.page_y(y)) * s);
}

void LiveFigure::draw_step_cursor(int64_t step) const {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float s = view_.pixels_per_point();
  for (size_t k = 0; k < layout_.panels.size(); ++k) {
    const fig::PanelLayout& p = layout_.panels[k];
    const double x = static_cast<double>(step);
    if (x < std::min(p.xmin, p.xmax) || x > std::max(p.xmin, p.xmax)) continue;
    const float sx = view_.origin().x + static_cast<float>(p.page_x(x)) * s;
    const float y0 = view_.origin().y + static_cast<float>(p.plot.y) * s;
    const float y1 = view_.origin().y + static_cast<float>(p.plot.y + p.plot.h) * s;
    draw->AddLine(ImVec2(sx, y0), ImVec2(sx, y1), IM_COL32(255, 200, 60, 220), 1.5f);
  }
}

std::optional<double> LiveFigure::clicked_x() const {
  if (!hovered_ || !ImGui::IsMouseClicked(ImGuiMouseButton_Left)) return std::nullopt;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float s = view_.pixels_per_point();
  const double px = (mouse.x - view_.origin().x) / s, py = (mouse.y - view_.origin().y) / s;
  for (const fig::PanelLayout& p : layout_.panels)
    if (p.plot.contains(px, py)) return p.data_x(px);
  return std::nullopt;
}

fig::Figure LiveFigure::on_screen(const fig::Figure& figure) const {
  return map_view_.map_of(figure) ? map_view_.apply(figure, true) : figure;
}

void mark_timeline(const LiveFigure& plot, UiState& ui) {
  if (ui.timeline_step >= 0) plot.draw_step_cursor(ui.timeline_step);
  if (const auto x = plot.clicked_x()) ui.timeline_request = std::max<int64_t>(0, std::llround(*x));
}

std::optional<FigureHover> LiveFigure::hover(const fig::Figure& figure, float radius_px,
                                             bool named_only) const {
  if (!hovered_ || layout_.panels.size() != figure.panels.size()) return std::nullopt;
  const auto hit = view_.hover(figure, layout_, ImGui::GetIO().MousePos, radius_px);
  if (!hit || !hit->on_point || (named_only && hit->name.empty())) return std::nullopt;
  return FigureHover{hit->panel, hit->series, static_cast<size_t>(hit->index),      hit->name,
                     hit->x,     hit->y,      to_screen(hit->panel, hit->x, hit->y)};
}

std::optional<CellHover> LiveFigure::hover_cell(const fig::Figure& source) const {
  // With maps, the cut figure is searched and the answer given in the caller's terms.
  const fig::Figure& figure = cut_ ? shown_ : source;
  if (!hovered_ || layout_.panels.size() != figure.panels.size()) return std::nullopt;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float s = view_.pixels_per_point();
  const double px = (mouse.x - view_.origin().x) / s, py = (mouse.y - view_.origin().y) / s;
  for (size_t k = 0; k < figure.panels.size(); ++k) {
    const fig::PanelLayout& L = layout_.panels[k];
    if (!L.plot.contains(px, py)) continue;
    const double x = L.data_x(px), y = L.data_y(py);
    const auto& maps = figure.panels[k].heatmaps;
    for (size_t hi = maps.size(); hi-- > 0;) {
      const fig::Heatmap& h = maps[hi];
      if (h.rows <= 0 || h.cols <= 0 || h.x1 == h.x0 || h.y1 == h.y0) continue;
      const double w = (h.x1 - h.x0) / h.cols, hh = (h.y1 - h.y0) / h.rows;
      const int col = static_cast<int>(std::floor((x - h.x0) / w));
      const int row = static_cast<int>(std::floor((y - h.y0) / hh));
      if (col < 0 || col >= h.cols || row < 0 || row >= h.rows) continue;
      const int panel = shown_alone_ >= 0 ? shown_alone_ : static_cast<int>(k);
      CellHover c{panel, static_cast<int>(hi), h.first_row + row, h.first_col + col, 0};
      const size_t index = static_cast<size_t>(row) * h.cols + col;
      c.value = index < h.values.size() ? h.values[index] : NAN;
      const ImVec2 a = to_screen(panel, h.x0 + col * w, h.y0 + row * hh);
      const ImVec2 b = to_screen(panel, h.x0 + (col + 1) * w, h.y0 + (row + 1) * hh);
      c.min = ImVec2(std::min(a.x, b.x), std::min(a.y, b.y));
      c.max = ImVec2(std::max(a.x, b.x), std::max(a.y, b.y));
      return c;
    }
  }
  return std::nullopt;
}

}  // namespace attn::gui
