// The figure model: a figure is plain data (no torch, no ImGui, no GL). Panels and the export
// command build figures from snapshots; render/plot/figure_draw.h lays one out on a page in points,
// and every backend (the screen, cairo's PDF and PNG, the SVG writer, the CSV writer) draws or
// writes the same laid-out figure, so what the user sees is what gets exported.
// Contract:
//  - A Figure is a grid of Panels (small multiples; rows x cols, row-major). Each panel has its
//    own axes; share_x / share_y put one range on every panel and label only the outer ones,
//    and an axis label every panel shares is drawn once for the whole grid. On a narrow page
//    the layout wraps each row of the grid into several (render/plot/figure_draw.h).
//  - Coordinates are data coordinates of the panel's axes. An Axis with min >= max is fitted to
//    the data (padded 4%); log axes need positive data.
//  - Heatmap cell (r, c) covers x in [x0 + c w, x0 + (c + 1) w), y in [y0 + r h, ...) with
//    w = (x1 - x0) / cols, h = (y1 - y0) / rows; row 0 is drawn at the top when the y axis is
//    inverted (matrix convention, Axis::inverted) and at the bottom otherwise.
//  - Colours: Color{} (alpha 0) means "automatic": series take Okabe-Ito colours in order.
//  - A line's runs of finite points are drawn as polylines; a run of one point as a dot (a
//    curve with one evaluation so far is visible, and the CSV still holds only its points).
//  - Colorbars: when two or more panels want one and all of them agree (colormap, label, and
//    value range, or all colorbar_relative), a single colorbar beside the grid serves them.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "render/plot/colormap.h"

namespace attn::fig {

struct Color {
  float r = 0, g = 0, b = 0, a = 0;  // a == 0: automatic
  bool automatic() const { return a == 0; }
  static Color rgb(float r, float g, float b, float a = 1) { return {r, g, b, a}; }
  static Color from(render::Rgba8 c) {
    return {c.r / 255.0f, c.g / 255.0f, c.b / 255.0f, c.a / 255.0f};
  }
};

struct Tick {
  double value = 0;
  std::string label;
};

struct Axis {
  std::string label;        // with units: "step", "loss (nats)"
  double min = 0, max = 0;  // min >= max: fitted to the data
  bool log = false;
  bool inverted = false;    // values grow downwards (matrix rows) / leftwards
  std::vector<Tick> ticks;  // empty: automatic 1-2-5 (or decade) ticks
  bool visible = true;      // false: no ticks, no labels, no frame on that side
};

enum class LineStyle { Solid, Dashed, Dotted };

struct LineSeries {
  std::string name;          // legend entry; empty: not in the legend
  std::vector<double> x, y;  // NaN breaks the line
  Color color;
  double width_pt = 1.0;
  LineStyle style = LineStyle::Solid;
};

enum class Marker { Circle, Square, Cross };

struct ScatterSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<std::string> labels;  // optional text next to each point
  Color color;
  double size_pt = 4.0;  // marker diameter
  Marker marker = Marker::Circle;
};

struct Polygon {
  std::string name;  // legend entry and CSV series; empty: not in the legend
  bool in_legend = true;  // false: drawn and in the CSV, not in the legend (a line's band)
  std::vector<double> x, y;
  Color stroke;               // automatic: the next palette colour
  Color fill = {0, 0, 0, 0};  // alpha 0: not filled (fill is never automatic)
  double width_pt = 1.0;
  bool closed = true;
  LineStyle style = LineStyle::Solid;
};

struct Heatmap {
  std::string name;  // CSV name of the matrix
  int rows = 0, cols = 0;
  std::vector<float> values;              // rows x cols, row-major
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // data extent
  render::Colormap colormap = render::Colormap::Viridis;
  double vmin = 0, vmax = 0;  // vmin >= vmax: the data's range (Diverging: +-max |v|)
  double alpha = 1.0;         // < 1: drawn over what lies below (attention over a picture)
  bool colorbar = true;       // a colorbar beside the panel, labelled colorbar_label
  std::string colorbar_label;
  // Each map has its own range (per-map scales): the colorbar runs from 0 (or "min" when a map
  // starts elsewhere) to "max" instead of stating values, and one such bar serves every map.
  bool colorbar_relative = false;
  // An attention map of one layer and head (rows queries, columns keys): the CSV names its cells
  // by layer, head, query, key and weight too. layer < 0: not an attention map.
  int layer = -1, head = -1;
  // A cut of a larger matrix (render/plot/map_view.h): the index of its first row and column in
  // the whole matrix, so the CSV names the cells (and queries and keys) as the whole map does.
  int first_row = 0, first_col = 0;
};

enum class Anchor { Left, Center, Right };

struct Annotation {
  double x = 0, y = 0;  // data coordinates
  std::string text;
  Anchor anchor = Anchor::Left;
  Color color;  // automatic: the text colour
};

struct Panel {
  std::string title;
  std::string short_title;  // drawn when the title does not fit over the plot ("L0 H1")
  Axis x, y;
  bool equal_aspect = false;      // one data unit is as long on both axes
  bool grid = false;              // light grid lines at the ticks
  bool legend = true;             // a legend when any series has a name
  std::vector<Heatmap> heatmaps;  // drawn first, in order
  std::vector<Polygon> polygons;
  std::vector<LineSeries> lines;
  std::vector<ScatterSeries> scatters;
  std::vector<Annotation> annotations;
  int64_t step = -1;  // the training step its data is from when it differs by panel (filmstrips)
};

struct Figure {
  std::string name;   // "loss", "attention", ... (export file stem, CSV names)
  std::string title;  // above the grid; empty: none
  int rows = 1, cols = 1;
  std::vector<Panel> panels;  // rows * cols at most, row-major
  bool share_x = false, share_y = false;
  // One legend below the grid listing the named series of every panel with `legend` once (by
  // name), instead of one per panel: for panels that show the same series (runs compared, heads
  // per layer). A panel's own legend also goes there when it would cover much of its plot.
  bool shared_legend = false;
  double aspect = 0.75;  // height / width of the whole page when the height is not given
  int64_t step = -1;     // the training step the data is from (CSV "step"); -1: several or none
};

// A figure of one panel.
inline Figure single_panel_figure(std::string name, std::string title, Panel panel,
                                  double aspect = 0.75) {
  Figure f;
  f.name = std::move(name);
  f.title = std::move(title);
  f.aspect = aspect;
  f.panels.push_back(std::move(panel));
  return f;
}

// A plot panel with its axis labels and, when `grid`, light grid lines at the ticks.
inline Panel axes_panel(std::string x_label, std::string y_label, bool grid = false) {
  Panel p;
  p.x.label = std::move(x_label);
  p.y.label = std::move(y_label);
  p.grid = grid;
  return p;
}

// A panel for a square matrix (attention maps, C): row 0 at the top, square cells, no legend
// (the colorbar gives the scale). ticks, when given, label both axes at the cell centres.
inline Panel matrix_panel(std::string x_label, std::string y_label, std::vector<Tick> ticks = {}) {
  Panel p = axes_panel(std::move(x_label), std::move(y_label));
  p.y.inverted = true;
  p.equal_aspect = true;
  p.legend = false;
  p.x.ticks = std::move(ticks);
  p.y.ticks = p.x.ticks;
  return p;
}

// Tick labels at the cell centres of a matrix over `size` tokens (the layout thins them to what
// fits); none when the labels do not match the size.
inline std::vector<Tick> token_ticks(const std::vector<std::string>& labels, int size) {
  std::vector<Tick> ticks;
  if (static_cast<int>(labels.size()) != size) return ticks;
  for (int i = 0; i < size; ++i) ticks.push_back({i + 0.5, labels[i]});
  return ticks;
}

// A size x size heatmap covering [0, size]^2, one cell per unit.
inline Heatmap square_heatmap(std::string name, int size, std::vector<float> values) {
  Heatmap h;
  h.name = std::move(name);
  h.rows = h.cols = size;
  h.values = std::move(values);
  h.x1 = h.y1 = size;
  return h;
}

}  // namespace attn::fig
