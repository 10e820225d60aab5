// Laying out and drawing a Figure (render/plot/figure.h) on a page measured in points, through an
// abstract Painter that each backend implements (screen, cairo, SVG). No GL, no torch.
// Contract:
//  - Page coordinates are points (1/72 in), origin at the top-left, y downwards.
//  - layout_figure() is deterministic: the same figure, page and font metrics give the same
//    rectangles in every backend, so the screen and the exports agree in layout.
//  - draw_figure() calls the painter in back-to-front order: background, per panel the frame,
//    heatmaps (clipped to the plot area), polygons, lines, scatters, annotations, then ticks,
//    labels, titles, legends and colorbars.
//  - Text is measured with TextMetrics so that backends that draw glyphs themselves (cairo) and
//    those that leave it to a viewer (SVG) use the same advance widths.
#pragma once
#include <string>
#include <vector>

#include "render/plot/figure.h"

namespace attn::fig {

struct Theme {
  Color background, text, axis, grid, legend_background;
  static Theme light();  // the export default: white page, black text
  static Theme dark();   // matches the window's dark style
};

struct Page {
  double width_pt = 252;   // 3.5 in
  double height_pt = 189;  // 3.5 in x 0.75
  double font_pt = 8;      // tick labels are font_pt - 1, titles font_pt + 1
  double line_pt = 0.75;   // frame and tick width (docs/design/FIGURES.md: >= 0.5 pt)
  Theme theme = Theme::light();
};

// Advance widths of a font: implemented by render/plot/figure_font.h (FreeType, the same font file on
// screen and in exports).
class TextMetrics {
 public:
  virtual ~TextMetrics() = default;
  virtual double width(const std::string& utf8, double size_pt) const = 0;
  virtual double ascent(double size_pt) const = 0;   // above the baseline, > 0
  virtual double descent(double size_pt) const = 0;  // below the baseline, > 0
};

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
  bool contains(double px, double py) const {
    return px >= x && px <= x + w && py >= y && py <= y + h;
  }
};

// One panel's plot area on the page and the data range it shows (after fitting).
struct PanelLayout {
  Rect plot;
  double xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  bool xlog = false, ylog = false, xinverted = false, yinverted = false;
  Rect colorbar;  // w == 0: none
  double cbar_min = 0, cbar_max = 1;
  // Data -> page and back.
  double page_x(double x) const;
  double page_y(double y) const;
  double data_x(double px) const;
  double data_y(double py) const;
};

struct FigureLayout {
  double width_pt = 0, height_pt = 0;
  std::vector<PanelLayout> panels;  // one per Figure::panels entry
};

class Painter {
 public:
  virtual ~Painter() = default;
  virtual void fill_rect(const Rect& r, Color c) = 0;
  // Open or closed polyline through n points (page coordinates).
  virtual void polyline(const double* x, const double* y, int n, Color c, double width_pt,
                        LineStyle style, bool closed) = 0;
  virtual void fill_polygon(const double* x, const double* y, int n, Color c) = 0;
  virtual void marker(double x, double y, double size_pt, Marker m, Color c) = 0;
  // Text with its baseline at y; anchor says where x is. vertical: rotated 90 degrees
  // counter-clockwise (reads bottom to top), anchored along the rotated baseline.
  virtual void text(double x, double y, const std::string& utf8, double size_pt, Color c,
                    Anchor anchor, bool vertical) = 0;
  // An image of cols x rows RGBA pixels (row 0 at the top of r), nearest-neighbour sampled.
  virtual void image(const Rect& r, int cols, int rows, const std::vector<render::Rgba8>& rgba,
                     double alpha) = 0;
  virtual void push_clip(const Rect& r) = 0;
  virtual void pop_clip() = 0;
};

FigureLayout layout_figure(const Figure& figure, const Page& page, const TextMetrics& metrics);
// Lays out and draws; returns the layout (for hover and clicks on screen).
FigureLayout draw_figure(const Figure& figure, const Page& page, const TextMetrics& metrics,
                         Painter& painter);

// The colour a series gets: its own, or Okabe-Ito colour `auto_index`.
Color series_color(Color c, int auto_index);
// On/off lengths in points for a dashed or dotted line (empty: solid).
std::vector<double> dash_pattern(LineStyle style, double width_pt);
// A heatmap's value range: vmin/vmax when vmin < vmax, else fitted to the data (Diverging:
// symmetric about zero).
void value_limits(const Heatmap& h, double& vmin, double& vmax);
// A heatmap's colours, with its (fitted) value range written to vmin/vmax.
std::vector<render::Rgba8> heatmap_pixels(const Heatmap& h, double& vmin, double& vmax);

}  // namespace attn::fig
