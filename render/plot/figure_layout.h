// Internal to render/plot: the layout engine behind layout_figure(), natural_height() and
// grid_columns() (render/plot/figure_draw.h), shared by figure_layout.cpp (grid, sizes, ticks)
// and figure_texts.cpp (placing texts and legends, resolving collisions). Not a public API.
#pragma once
#include <string>
#include <vector>

#include "render/plot/figure_draw.h"
#include "render/plot/plot_math.h"

namespace attn::fig::detail {

// Sizes derived from the page's font size, in points.
struct Metrics {
  double font, tick_font, title_font, pad, tick_len, bar_w;
  explicit Metrics(double font_pt)
      : font(font_pt),
        tick_font(std::max(4.0, font_pt - 1.0)),
        title_font(font_pt + 1.0),
        pad(0.4 * font_pt),
        tick_len(0.35 * font_pt),
        bar_w(0.8 * font_pt) {}
};

struct AxisTicks {
  std::vector<double> values;
  std::vector<std::string> labels;  // "" where thinned out
};

AxisTicks make_ticks(const Axis& a, double lo, double hi, int target);
double max_width(const std::vector<std::string>& labels, double size, const TextMetrics& m);
// s, or its longest prefix with an ellipsis that is at most `avail` wide ("" if none is).
std::string fitted(const std::string& s, double size, double avail, const TextMetrics& tm);
// Blanks labels centred at `pos` (page coordinate along the axis) with extents `ext` so that
// neighbours keep `space` apart: keeps every k-th label from the first, the smallest such k,
// and none when fewer than two would remain.
void thin(AxisTicks& t, const std::vector<double>& pos, const std::vector<double>& ext,
          double space);
bool overlaps(const Rect& a, const Rect& b);
bool inside(const Rect& inner, const Rect& outer);
Rect box_of(const PlacedText& t, const TextMetrics& m);
const Heatmap* colorbar_heatmap(const Panel& p);

// Per panel: what it shows, decided before sizes are known.
struct PanelPlan {
  render::Range rx, ry;
  int row = 0, col = 0;
  bool xt_labels = true, yt_labels = true;      // tick labels drawn
  bool own_xlabel = false, own_ylabel = false;  // its own axis labels drawn
  AxisTicks xt, yt;
  const Heatmap* cbar = nullptr;  // its own colorbar (not the shared one)
  double c_lo = 0, c_hi = 1;
  AxisTicks ct;
  std::vector<LegendEntry> entries;
  bool legend_in_band = false;
};

// A legend longer than kMaxLegendEntries keeps its first entries and ends in "+N more".
void fold_legend(std::vector<LegendEntry>& entries);

struct Colorbar {
  const Heatmap* h = nullptr;
  double lo = 0, hi = 1;
  AxisTicks ticks;
  std::string label;
};

// The horizontal and vertical structure of the grid, once sizes are known.
struct Grid {
  std::vector<double> left, right, col_x;  // per column: margins and the cell's left edge
  std::vector<double> top, bottom, row_y;  // per row: margins and the cell's top edge
  double plot_w = 1, plot_h = 1;
  double grid_bottom = 0;  // below the last row (before the shared x label and the band)
};

class Layout {
 public:
  Layout(const Figure& f, double width, double height, double font_pt, const TextMetrics& tm)
      : f_(f), w_(width), h_(height), m_(font_pt), tm_(tm) {}

  void prepare();  // what depends on neither the columns nor the page height
  int choose_columns();
  int choose_columns_for_page();  // run(): the height known, the largest square plots
                                  // places the grid too
  double natural_height();
  FigureLayout run();

 private:
  double asc(double s) const { return tm_.ascent(s); }
  double desc(double s) const { return tm_.descent(s); }
  double line_h(double s) const { return asc(s) + desc(s); }
  double title_block() const;
  double fig_xlabel_h() const;
  void wrap_title();
  void shared_colorbar();
  void place(int cols);
  void margins(Grid& g) const;
  double plot_width() const;
  void rows_extent(Grid& g) const;
  double fixed_height(const Grid& g) const;  // everything but the plots
  bool move_legends(double plot_w, double plot_h);
  std::vector<LegendEntry> band_entries() const;
  double band_height() const;
  void colorbar_ticks(Colorbar& c, double bar_h) const;
  void y_ticks(double plot_h);
  void x_ticks(int i, const PanelLayout& L);
  void panel_rects(const Grid& g);
  // figure_texts.cpp
  void add(PlacedText t) { out_.texts.push_back(std::move(t)); }
  void put(TextRole role, int panel, std::string text, double x, double y, double size,
           Anchor anchor, bool vertical) {
    add({std::move(text), x, y, size, anchor, vertical, {}, role, panel});
  }
  void place_title();
  void place_texts(const Grid& g);
  void place_panel_texts(int i, const Grid& g, const std::vector<double>& col_tick_w);
  void place_colorbar_texts(const Colorbar& c, const Rect& bar, double avail, int panel);
  void place_legend(int i);
  void place_band(double y);
  void place_point_labels(int i);
  void resolve_collisions();

  const Figure& f_;
  double w_, h_;
  Metrics m_;
  const TextMetrics& tm_;
  int count_ = 0, base_cols_ = 1, cols_ = 1, rows_ = 1;
  std::vector<PanelPlan> plans_;
  bool shared_cbar_ = false;
  Colorbar cbar_;
  std::string fig_xlabel_, fig_ylabel_;
  std::vector<std::string> figure_title_;
  double gap_ = 0, vgap_ = 0;
  FigureLayout out_;
};

}  // namespace attn::fig::detail
