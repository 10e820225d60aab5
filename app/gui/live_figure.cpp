#include "gui/live_figure.h"

#include <algorithm>
#include <cmath>

namespace attn::gui {

bool LiveFigure::draw(const fig::Figure& figure, ImVec2 size, ImFont* font) {
  ImFont* f = font ? font : ImGui::GetFont();
  page_ = fig::Page{};
  page_.theme = fig::Theme::dark();
  const double pixels_per_point = std::max(0.5, static_cast<double>(f->FontSize) / page_.font_pt);
  page_.width_pt = std::max(40.0, size.x / pixels_per_point);
  page_.height_pt = std::max(30.0, size.y / pixels_per_point);
  layout_ = view_.draw(figure, page_, size, f);
  hovered_ = ImGui::IsItemHovered();
  return !layout_.panels.empty() || figure.panels.empty();
}

ImVec2 LiveFigure::to_screen(int panel, double x, double y) const {
  const fig::PanelLayout& p = layout_.panels.at(static_cast<size_t>(panel));
  const float s = view_.pixels_per_point();
  return ImVec2(view_.origin().x + static_cast<float>(p.page_x(x)) * s,
                view_.origin().y + static_cast<float>(p.page_y(y)) * s);
}

std::optional<FigureHover> LiveFigure::hover(const fig::Figure& figure, float radius_px,
                                             bool named_only) const {
  if (!hovered_ || layout_.panels.size() != figure.panels.size()) return std::nullopt;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float s = view_.pixels_per_point();
  const double px = (mouse.x - view_.origin().x) / s, py = (mouse.y - view_.origin().y) / s;
  std::optional<FigureHover> best;
  float best_d2 = radius_px * radius_px;
  for (size_t k = 0; k < figure.panels.size(); ++k) {
    if (!layout_.panels[k].plot.contains(px, py)) continue;
    const fig::Panel& panel = figure.panels[k];
    for (size_t si = 0; si < panel.lines.size(); ++si) {
      const fig::LineSeries& line = panel.lines[si];
      if (named_only && line.name.empty()) continue;
      for (size_t i = 0; i < std::min(line.x.size(), line.y.size()); ++i) {
        if (!std::isfinite(line.x[i]) || !std::isfinite(line.y[i])) continue;
        if (layout_.panels[k].ylog && line.y[i] <= 0) continue;
        const ImVec2 p = to_screen(static_cast<int>(k), line.x[i], line.y[i]);
        const float d2 = (p.x - mouse.x) * (p.x - mouse.x) + (p.y - mouse.y) * (p.y - mouse.y);
        if (d2 > best_d2) continue;
        best_d2 = d2;
        best = FigureHover{
            static_cast<int>(k), static_cast<int>(si), i, line.name, line.x[i], line.y[i], p};
      }
    }
  }
  return best;
}

}  // namespace attn::gui
