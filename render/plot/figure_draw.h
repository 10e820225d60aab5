// Laying out and drawing a Figure (render/plot/figure.h) on a page measured in points, through an
// abstract Painter that each backend implements (screen, cairo, SVG). No GL, no torch.
// Contract:
//  - Page coordinates are points (1/72 in), origin at the top-left, y downwards.
//  - layout_figure() is deterministic: the same figure, page and font metrics give the same
//    rectangles and texts in every backend, so the screen and the exports agree in layout.
//    It places every text (FigureLayout::texts) so that none overlaps another, leaves the page
//    or lies over another panel's plot area: small multiples wrap into more rows when columns
//    would be narrower than a readable plot (grid_columns()), titles fall back to
//    Panel::short_title and then to an ellipsis, tick labels thin out (every k-th label, or none
//    when fewer than two fit) and give way to other texts, and legends that do not fit inside
//    their plot go below the grid. render/plot/figure_check.h checks the result; a page much
//    too small for its figure (a custom height), or annotations placed on top of each other,
//    can still overlap.
//  - draw_figure() calls the painter in back-to-front order: background, per panel the grid,
//    heatmaps (clipped to the plot area), polygons, lines, scatters, point labels and
//    annotations, then the frame, ticks, colorbar, legend and the panel's texts; last the
//    figure-level items (shared colorbar, legend band, title, shared axis labels).
//  - A line's run of more than kLineKeepPoints finite points is drawn reduced to at most four
//    points per kLineColumnPt-wide column of its plot (render::decimate_polyline: the column's
//    first, lowest, highest and last point), in every backend alike: a curve of a million
//    points is drawn as a few thousand, keeps its extremes in every column (a pixel on screen,
//    about one at 300 dpi) and looks the same on screen and in an export. Hit testing and the
//    CSV use every point.
//  - Text is measured with TextMetrics so that backends that draw glyphs themselves (cairo) and
//    those that leave it to a viewer (SVG) use the same advance widths.
#pragma once
#include <string>
#include <vector>

#include "render/plot/figure.h"

namespace attn::fig {

// Line reduction for drawing (see the contract above).
constexpr int kLineKeepPoints = 1024;   // runs up to this many points are drawn as they are
constexpr double kLineColumnPt = 0.25;  // column width in points (288 columns per inch)
// A legend (a panel's own, or the band below the grid) lists at most this many entries: the
// first kMaxLegendEntries - 1 series and then "+N more" (two thousand runs overlaid would
// otherwise bury the plot and cost a frame to lay out).
constexpr int kMaxLegendEntries = 12;

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

// Advance widths of a font: implemented by render/plot/figure_font.h (FreeType, the same font file
// on screen and in exports).
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

enum class TextRole {
  FigureTitle,
  PanelTitle,
  AxisLabel,
  ColorbarLabel,
  Legend,
  PointLabel,  // a scatter point's label, inside its plot
  Annotation,  // inside its plot
  ColorbarTick,
  TickLabel,
};

// A text as the layout placed it; draw_figure() paints exactly these.
struct PlacedText {
  std::string text;
  double x = 0, y = 0;  // the anchor point on the baseline
  double size_pt = 8;
  Anchor anchor = Anchor::Left;
  bool vertical = false;  // reads bottom to top (Painter::text)
  Color color;            // automatic: the theme's text colour
  TextRole role = TextRole::TickLabel;
  int panel = -1;  // -1: figure-level
};

struct LegendEntry {
  std::string name;
  Color color;
  int kind = 0;  // 0 line, 1 marker, 2 polygon, 3 no sample (the "+N more" of a folded legend)
  LineStyle style = LineStyle::Solid;
  Marker marker = Marker::Circle;
  double x = 0, y = 0;  // the sample's left end, at its vertical centre
};

struct LegendLayout {
  Rect box;  // w == 0: no legend here
  double sample_pt = 0;
  std::vector<LegendEntry> entries;  // their names are in FigureLayout::texts
};

struct ColorbarLayout {
  Rect bar;                   // w == 0: none
  double vmin = 0, vmax = 1;  // the values at the bottom and top of the bar
  render::Colormap colormap = render::Colormap::Viridis;
  std::vector<double> ticks;  // tick marks (their labels are in FigureLayout::texts)
};

// One panel's plot area on the page and the data range it shows (after fitting).
struct PanelLayout {
  Rect plot;
  double xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  bool xlog = false, ylog = false, xinverted = false, yinverted = false;
  int row = 0, col = 0;                // its cell in the grid actually used
  std::string title;                   // as drawn (possibly shortened); empty: none
  std::vector<double> xticks, yticks;  // tick marks (data values)
  ColorbarLayout colorbar;             // its own colorbar (w == 0: none or the shared one)
  LegendLayout legend;                 // inside the plot (w == 0: none, or in the band)
  // Data -> page and back.
  double page_x(double x) const;
  double page_y(double y) const;
  double data_x(double px) const;
  double data_y(double py) const;
};

struct FigureLayout {
  double width_pt = 0, height_pt = 0;
  int rows = 0, cols = 0;           // the grid used (cols <= Figure::cols)
  std::vector<PanelLayout> panels;  // one per Figure::panels entry
  ColorbarLayout colorbar;          // one colorbar for every heatmap (bar.w == 0: none)
  LegendLayout legend;              // the band below the grid (box.w == 0: none)
  std::vector<PlacedText> texts;    // every text, in drawing order
};

class Painter {
 public:
  virtual ~Painter() = default;
  // draw_figure() calls this before drawing panel `index`'s items, and with -1 before the
  // figure-level ones; backends may ignore it.
  virtual void begin_panel(int index) {}
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

// The number of columns the layout uses on a page this wide: Figure::cols, or fewer (each row
// of the figure wrapped into several, balanced) when plots would be narrower than about 5.5
// font sizes.
int grid_columns(const Figure& figure, double width_pt, double font_pt, const TextMetrics& metrics);
// The page height a figure asks for at this width: width * Figure::aspect, unless its grid wraps
// or its plots would be flatter than 6 font sizes; then the height that gives every plot its
// natural shape (square for equal-aspect maps, 0.68 of the width otherwise).
double natural_height(const Figure& figure, double width_pt, double font_pt,
                      const TextMetrics& metrics);

// Hit testing on a laid-out figure (page points): the panel whose plot area holds (px, py), or
// -1; and the line-series point nearest to it within radius_pt in that panel.
int panel_at(const FigureLayout& layout, double px, double py);
struct PointHit {
  int panel = -1;
  int series = -1;  // index into Panel::lines; -1: no point within the radius
  int index = -1;   // the point's index in the series
  std::string name;
  double x = 0, y = 0;     // data coordinates
  double distance_pt = 0;  // from (px, py)
};
PointHit nearest_point(const Figure& figure, const FigureLayout& layout, double px, double py,
                       double radius_pt);

// The colour a series gets: its own, or Okabe-Ito colour `auto_index`.
Color series_color(Color c, int auto_index);
// The colours of a panel's polygons, lines and scatters, automatic ones in that order.
struct SeriesColors {
  std::vector<Color> polygons, lines, scatters;
};
SeriesColors series_colors(const Panel& panel);
// On/off lengths in points for a dashed or dotted line (empty: solid).
std::vector<double> dash_pattern(LineStyle style, double width_pt);
// A fitted range narrower than max(kFlatSpanAbsolute, kFlatSpanRelative * max |v|) holds values
// that are equal up to float noise: stretching it over the colormap would make identical heads
// look different, so such a heatmap is drawn in one colour and its colorbar says so.
constexpr double kFlatSpanAbsolute = 1e-6, kFlatSpanRelative = 1e-5;
// True when `h` fits its range to the data (vmin >= vmax), holds two finite values or more,
// and they span less than the minimum above.
bool heatmap_flat(const Heatmap& h);
// The colorbar's label: colorbar_label, after "equal within 1e-05 (one colour): " for a flat
// heatmap.
std::string colorbar_text(const Heatmap& h);
// A heatmap's value range: vmin/vmax when vmin < vmax, else fitted to the data (Diverging:
// symmetric about zero). A flat heatmap (heatmap_flat) gets [lo, lo + 1] (Diverging: +-max(1,
// max |v|)), so every value takes one colour.
void value_limits(const Heatmap& h, double& vmin, double& vmax);
// A heatmap's colours, with its (fitted) value range written to vmin/vmax.
std::vector<render::Rgba8> heatmap_pixels(const Heatmap& h, double& vmin, double& vmax);

}  // namespace attn::fig
