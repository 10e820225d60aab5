// LiveFigure: a panel's plot area as a figure of the figure model (render/plot/figure.h), drawn
// by the screen painter (gui/figure_view.h). The panel builds the figure from the snapshot with
// its controls as builder options, and its Export button sends that same figure to the Export
// dialog: what is on screen is what gets exported.
// Contract:
//  - draw() lays the figure out on a page of size / pixels_per_point points, where pixels per
//    point make the figure's font (fig::Page::font_pt) as large as the window's small font, in
//    the dark theme; the figure fills `size` exactly.
//  - hover() finds, for the mouse position of this frame, the line-series point nearest to it
//    (within radius_px, measured on screen) in the panel under the mouse; series without a name
//    are skipped when named_only.
//  - UI thread only, GL context current (heatmaps are textures); destroy before the window.
#pragma once
#include <imgui.h>

#include <optional>
#include <string>

#include "gui/figure_view.h"
#include "render/plot/figure.h"
#include "render/plot/figure_draw.h"

namespace attn::gui {

struct FigureHover {
  int panel = -1;
  int series = -1;  // index into figure.panels[panel].lines
  size_t point = 0;
  std::string name;
  double x = 0, y = 0;
  ImVec2 screen{0, 0};
};

class LiveFigure {
 public:
  // Returns false (and draws a note) when the figure font cannot be loaded.
  bool draw(const fig::Figure& figure, ImVec2 size, ImFont* font);
  std::optional<FigureHover> hover(const fig::Figure& figure, float radius_px = 10.0f,
                                   bool named_only = false) const;
  // The page the last draw used (the Export dialog's "as on screen" size).
  const fig::Page& page() const { return page_; }
  const fig::FigureLayout& layout() const { return layout_; }
  // Screen position of a point of panel `panel` in data coordinates.
  ImVec2 to_screen(int panel, double x, double y) const;

 private:
  FigureView view_;
  fig::FigureLayout layout_;
  fig::Page page_;
  bool hovered_ = false;
};

}  // namespace attn::gui
