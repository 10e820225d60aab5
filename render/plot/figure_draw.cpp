#include "render/plot/figure_draw.h"

#include <algorithm>
#include <cmath>

#include "render/plot/plot_math.h"

namespace attn::fig {
namespace {

using render::Range;

struct AxisTicks {
  std::vector<double> values;
  std::vector<std::string> labels;
};

// Sizes derived from the page's font size, in points.
struct Metrics {
  double font, tick_font, title_font, pad, tick_len, line;
  explicit Metrics(const Page& p)
      : font(p.font_pt),
        tick_font(std::max(4.0, p.font_pt - 1.0)),
        title_font(p.font_pt + 1.0),
        pad(0.4 * p.font_pt),
        tick_len(0.35 * p.font_pt),
        line(std::max(0.5, p.line_pt)) {}
};

bool any_colorbar(const Panel& p) {
  for (const auto& h : p.heatmaps)
    if (h.colorbar && h.rows > 0 && h.cols > 0) return true;
  return false;
}

const Heatmap* colorbar_heatmap(const Panel& p) {
  for (auto it = p.heatmaps.rbegin(); it != p.heatmaps.rend(); ++it)
    if (it->colorbar && it->rows > 0 && it->cols > 0) return &*it;
  return nullptr;
}

void include_xy(Range& rx, Range& ry, const std::vector<double>& x, const std::vector<double>& y,
                bool xlog, bool ylog) {
  const size_t n = std::min(x.size(), y.size());
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) continue;
    if (!(xlog && x[i] <= 0)) rx.include(x[i]);
    if (!(ylog && y[i] <= 0)) ry.include(y[i]);
  }
}

// The data range of a panel on each axis: heatmap extents exactly, everything else padded.
void data_ranges(const Panel& p, Range& rx, Range& ry) {
  Range hx, hy, sx, sy;
  for (const auto& h : p.heatmaps) {
    hx.include(h.x0), hx.include(h.x1);
    hy.include(h.y0), hy.include(h.y1);
  }
  for (const auto& l : p.lines) include_xy(sx, sy, l.x, l.y, p.x.log, p.y.log);
  for (const auto& s : p.scatters) include_xy(sx, sy, s.x, s.y, p.x.log, p.y.log);
  for (const auto& g : p.polygons) include_xy(sx, sy, g.x, g.y, p.x.log, p.y.log);
  for (const auto& a : p.annotations) include_xy(sx, sy, {a.x}, {a.y}, p.x.log, p.y.log);
  auto fit = [](Range heat, Range other, bool log) {
    if (other.empty() && !heat.empty()) return heat;
    return render::merge(heat, render::padded(other, 0.04, log));
  };
  rx = fit(hx, sx, p.x.log);
  ry = fit(hy, sy, p.y.log);
}

Range resolve(const Axis& a, Range fitted) {
  if (a.min < a.max) return {a.min, a.max};
  if (fitted.empty()) return a.log ? Range{1, 10} : Range{0, 1};
  if (a.log && !(fitted.lo > 0)) return {1, 10};
  return fitted;
}

AxisTicks make_ticks(const Axis& a, double lo, double hi, int target) {
  AxisTicks t;
  if (!a.visible) return t;
  const double eps = 1e-9 * std::max(1.0, std::fabs(hi - lo));
  if (!a.ticks.empty()) {
    for (const auto& tk : a.ticks)
      if (tk.value >= lo - eps && tk.value <= hi + eps) {
        t.values.push_back(tk.value);
        t.labels.push_back(tk.label);
      }
    return t;
  }
  const render::Ticks ticks =
      a.log && lo > 0 ? render::log_ticks(lo, hi) : render::linear_ticks(lo, hi, target);
  for (double v : ticks.values) {
    if (!a.log && std::fabs(v) < 1e-9 * (hi - lo)) v = 0;  // rounding residue of a zero tick
    t.values.push_back(v);
    std::string label = render::format_tick(v, ticks);
    // A typographic minus sign (U+2212), as in print.
    if (!label.empty() && label[0] == '-') label = "\xe2\x88\x92" + label.substr(1);
    t.labels.push_back(label);
  }
  return t;
}

double max_width(const std::vector<std::string>& labels, double size, const TextMetrics& m) {
  double w = 0;
  for (const auto& s : labels) w = std::max(w, m.width(s, size));
  return w;
}

struct PanelPlan {
  Range rx, ry;
  AxisTicks xt, yt, ct;  // x, y and colorbar ticks
  double cbar_lo = 0, cbar_hi = 1;
  bool show_x_labels = true, show_y_labels = true;
};

double log_or_linear(double v, bool log) {
  return log ? std::log10(v) : v;
}

}  // namespace

// background, text, axis, grid, legend background
Theme Theme::light() {
  return {Color::rgb(1, 1, 1), Color::rgb(0, 0, 0), Color::rgb(0.15f, 0.15f, 0.15f),
          Color::rgb(0.88f, 0.88f, 0.88f), Color::rgb(1, 1, 1, 0.85f)};
}

Theme Theme::dark() {
  return {Color::rgb(0.09f, 0.09f, 0.10f), Color::rgb(0.90f, 0.90f, 0.90f),
          Color::rgb(0.65f, 0.65f, 0.68f), Color::rgb(0.22f, 0.22f, 0.24f),
          Color::rgb(0.12f, 0.12f, 0.13f, 0.85f)};
}

double PanelLayout::page_x(double x) const {
  const double lo = log_or_linear(xmin, xlog), hi = log_or_linear(xmax, xlog);
  double t = (log_or_linear(x, xlog) - lo) / (hi - lo);
  if (xinverted) t = 1 - t;
  return plot.x + t * plot.w;
}

double PanelLayout::page_y(double y) const {
  const double lo = log_or_linear(ymin, ylog), hi = log_or_linear(ymax, ylog);
  double t = (log_or_linear(y, ylog) - lo) / (hi - lo);
  if (!yinverted) t = 1 - t;
  return plot.y + t * plot.h;
}

double PanelLayout::data_x(double px) const {
  double t = (px - plot.x) / plot.w;
  if (xinverted) t = 1 - t;
  const double lo = log_or_linear(xmin, xlog), hi = log_or_linear(xmax, xlog);
  const double v = lo + t * (hi - lo);
  return xlog ? std::pow(10.0, v) : v;
}

double PanelLayout::data_y(double py) const {
  double t = (py - plot.y) / plot.h;
  if (!yinverted) t = 1 - t;
  const double lo = log_or_linear(ymin, ylog), hi = log_or_linear(ymax, ylog);
  const double v = lo + t * (hi - lo);
  return ylog ? std::pow(10.0, v) : v;
}

std::vector<double> dash_pattern(LineStyle s, double width) {
  if (s == LineStyle::Dashed) return {4 * width + 2, 2 * width + 1.5};
  if (s == LineStyle::Dotted) return {width, 1.5 * width + 1};
  return {};
}

Color series_color(Color c, int auto_index) {
  return c.automatic() ? Color::from(render::okabe_ito(auto_index)) : c;
}

void value_limits(const Heatmap& h, double& vmin, double& vmax) {
  vmin = h.vmin, vmax = h.vmax;
  if (vmin < vmax) return;
  const size_t n = static_cast<size_t>(std::max(0, h.rows)) * std::max(0, h.cols);
  const Range r = render::value_range(h.values.data(), std::min(n, h.values.size()));
  if (h.colormap == render::Colormap::Diverging) {
    const double m = r.empty() ? 1.0 : std::max({std::fabs(r.lo), std::fabs(r.hi), 1e-12});
    vmin = -m, vmax = m;
  } else {
    vmin = r.empty() ? 0.0 : r.lo;
    vmax = r.empty() ? 1.0 : (r.hi > r.lo ? r.hi : r.lo + 1.0);
  }
}

std::vector<render::Rgba8> heatmap_pixels(const Heatmap& h, double& vmin, double& vmax) {
  value_limits(h, vmin, vmax);
  const size_t n = static_cast<size_t>(std::max(0, h.rows)) * std::max(0, h.cols);
  std::vector<render::Rgba8> out;
  if (h.values.size() < n) return out;
  render::colorize(h.values.data(), n, h.colormap, static_cast<float>(vmin),
                   static_cast<float>(vmax), out);
  return out;
}

FigureLayout layout_figure(const Figure& figure, const Page& page, const TextMetrics& tm) {
  const Metrics m(page);
  FigureLayout out;
  out.width_pt = page.width_pt;
  out.height_pt = page.height_pt;
  const int count = static_cast<int>(figure.panels.size());
  if (count == 0) return out;
  const int cols = std::max(1, figure.cols);
  const int rows = std::max(figure.rows, (count + cols - 1) / cols);

  // Ranges (shared ones unioned over every panel) and ticks.
  std::vector<PanelPlan> plans(count);
  Range all_x, all_y;
  for (int i = 0; i < count; ++i) {
    data_ranges(figure.panels[i], plans[i].rx, plans[i].ry);
    all_x = render::merge(all_x, plans[i].rx);
    all_y = render::merge(all_y, plans[i].ry);
  }
  bool any_title = false, any_xlabel = false;
  for (int i = 0; i < count; ++i) {
    const Panel& p = figure.panels[i];
    PanelPlan& plan = plans[i];
    plan.rx = resolve(p.x, figure.share_x ? all_x : plan.rx);
    plan.ry = resolve(p.y, figure.share_y ? all_y : plan.ry);
    const int row = i / cols, col = i % cols;
    plan.show_x_labels = !figure.share_x || row == rows - 1 || i + cols >= count;
    plan.show_y_labels = !figure.share_y || col == 0;
    plan.xt = make_ticks(p.x, plan.rx.lo, plan.rx.hi, std::max(3, 6 - cols));
    plan.yt = make_ticks(p.y, plan.ry.lo, plan.ry.hi, std::max(3, 6 - rows));
    if (const Heatmap* h = colorbar_heatmap(p)) {
      double lo, hi;
      value_limits(*h, lo, hi);
      plan.cbar_lo = lo, plan.cbar_hi = hi;
      Axis cax;
      plan.ct = make_ticks(cax, lo, hi, 4);
    }
    any_title = any_title || !p.title.empty();
    any_xlabel = any_xlabel || (!p.x.label.empty() && p.x.visible && plan.show_x_labels);
  }

  // Space around each plot area: the same down a column, so small multiples align; a column
  // without colorbars does not reserve room for one.
  std::vector<double> left(cols, 0.0), right(cols, 0.0);
  for (int i = 0; i < count; ++i) {
    const Panel& p = figure.panels[i];
    const int col = i % cols;
    double l = 0;
    if (p.y.visible) {
      l = m.tick_len + 0.25 * m.font + max_width(plans[i].yt.labels, m.tick_font, tm);
      if (!p.y.label.empty()) l += m.font * 1.25;
    }
    left[col] = std::max(left[col], l);
    if (any_colorbar(p)) {
      double r = m.pad + 0.8 * m.font + m.tick_len + 0.25 * m.font +
                 max_width(plans[i].ct.labels, m.tick_font, tm);
      const Heatmap* h = colorbar_heatmap(p);
      if (h && !h->colorbar_label.empty()) r += m.font * 1.25;
      right[col] = std::max(right[col], r);
    }
  }
  const double x_ticks = m.tick_len + tm.ascent(m.tick_font) + tm.descent(m.tick_font) + 1;
  const double bottom = x_ticks + (any_xlabel ? m.font * 1.3 : 0);
  const double top = any_title ? m.title_font * 1.35 : 0.35 * m.font;
  const double fig_title = figure.title.empty() ? 0 : m.title_font * 1.6;

  const double outer = m.pad;
  const double grid_x = outer, grid_y = outer + fig_title;
  const double grid_w = std::max(1.0, page.width_pt - 2 * outer);
  const double grid_h = std::max(1.0, page.height_pt - 2 * outer - fig_title);
  const double gap = 1.8 * m.font;
  // Columns share the width left after every column's margins equally.
  double margins = 0;
  for (int c = 0; c < cols; ++c) margins += left[c] + right[c];
  const double plot_w = std::max(1.0, (grid_w - gap * (cols - 1) - margins) / cols);
  std::vector<double> col_x(cols, grid_x);
  for (int c = 1; c < cols; ++c)
    col_x[c] = col_x[c - 1] + left[c - 1] + plot_w + right[c - 1] + gap;
  const double cell_h = (grid_h - gap * (rows - 1)) / rows;

  out.panels.resize(count);
  for (int i = 0; i < count; ++i) {
    const Panel& p = figure.panels[i];
    const PanelPlan& plan = plans[i];
    const int row = i / cols, col = i % cols;
    const double cy = grid_y + row * (cell_h + gap);
    // Shared axes leave out inner labels but keep the space, so every plot area is equal.
    Rect plot{col_x[col] + left[col], cy + top, plot_w, std::max(1.0, cell_h - top - bottom)};
    PanelLayout& L = out.panels[i];
    L.xmin = plan.rx.lo, L.xmax = plan.rx.hi, L.ymin = plan.ry.lo, L.ymax = plan.ry.hi;
    L.xlog = p.x.log, L.ylog = p.y.log, L.xinverted = p.x.inverted, L.yinverted = p.y.inverted;
    if (p.equal_aspect) {
      const double dx = log_or_linear(L.xmax, L.xlog) - log_or_linear(L.xmin, L.xlog);
      const double dy = log_or_linear(L.ymax, L.ylog) - log_or_linear(L.ymin, L.ylog);
      if (dx > 0 && dy > 0) {
        const double scale = std::min(plot.w / dx, plot.h / dy);
        const double w = dx * scale, h = dy * scale;
        plot.x += (plot.w - w) / 2, plot.y += (plot.h - h) / 2;
        plot.w = w, plot.h = h;
      }
    }
    L.plot = plot;
    if (any_colorbar(p)) {
      L.colorbar = {plot.x + plot.w + m.pad, plot.y, 0.8 * m.font, plot.h};
      L.cbar_min = plan.cbar_lo, L.cbar_max = plan.cbar_hi;
    }
  }
  return out;
}

FigureLayout draw_figure(const Figure& figure, const Page& page, const TextMetrics& tm,
                         Painter& painter) {
  const FigureLayout layout = layout_figure(figure, page, tm);
  const Metrics m(page);
  const Theme& th = page.theme;
  painter.fill_rect({0, 0, page.width_pt, page.height_pt}, th.background);
  const int count = static_cast<int>(figure.panels.size());
  const int cols = std::max(1, figure.cols);
  const int rows = std::max(figure.rows, (count + cols - 1) / cols);

  for (int i = 0; i < count; ++i) {
    const Panel& p = figure.panels[i];
    const PanelLayout& L = layout.panels[i];
    const Rect& plot = L.plot;
    const int row = i / cols, col = i % cols;
    const bool show_x = !figure.share_x || row == rows - 1 || i + cols >= count;
    const bool show_y = !figure.share_y || col == 0;
    const AxisTicks xt = make_ticks(p.x, L.xmin, L.xmax, std::max(3, 6 - cols));
    const AxisTicks yt = make_ticks(p.y, L.ymin, L.ymax, std::max(3, 6 - rows));

    painter.push_clip(plot);
    if (p.grid) {
      for (double v : xt.values) {
        const double px[2] = {L.page_x(v), L.page_x(v)}, py[2] = {plot.y, plot.y + plot.h};
        painter.polyline(px, py, 2, th.grid, 0.5, LineStyle::Solid, false);
      }
      for (double v : yt.values) {
        const double px[2] = {plot.x, plot.x + plot.w}, py[2] = {L.page_y(v), L.page_y(v)};
        painter.polyline(px, py, 2, th.grid, 0.5, LineStyle::Solid, false);
      }
    }
    for (const Heatmap& h : p.heatmaps) {
      if (h.rows <= 0 || h.cols <= 0) continue;
      double vmin, vmax;
      std::vector<render::Rgba8> px = heatmap_pixels(h, vmin, vmax);
      if (px.empty()) continue;
      const double ax = L.page_x(h.x0), bx = L.page_x(h.x1);
      const double ay = L.page_y(h.y0), by = L.page_y(h.y1);
      // Image row 0 is drawn at the top: flip when data row 0 lies at the bottom of the page.
      const bool flip_rows = ay > by, flip_cols = ax > bx;
      if (flip_rows || flip_cols) {
        std::vector<render::Rgba8> f(px.size());
        for (int r = 0; r < h.rows; ++r)
          for (int c = 0; c < h.cols; ++c)
            f[static_cast<size_t>(r) * h.cols + c] =
                px[static_cast<size_t>(flip_rows ? h.rows - 1 - r : r) * h.cols +
                   (flip_cols ? h.cols - 1 - c : c)];
        px.swap(f);
      }
      painter.image({std::min(ax, bx), std::min(ay, by), std::fabs(bx - ax), std::fabs(by - ay)},
                    h.cols, h.rows, px, h.alpha);
    }
    int auto_index = 0;
    std::vector<Color> polygon_colors, line_colors, scatter_colors;
    for (const Polygon& g : p.polygons) {
      const Color stroke = series_color(g.stroke, auto_index);
      if (g.stroke.automatic()) ++auto_index;
      polygon_colors.push_back(stroke);
      std::vector<double> px, py;
      for (size_t k = 0; k < std::min(g.x.size(), g.y.size()); ++k) {
        px.push_back(L.page_x(g.x[k]));
        py.push_back(L.page_y(g.y[k]));
      }
      if (px.size() < 2) continue;
      if (g.fill.a > 0 && px.size() >= 3)
        painter.fill_polygon(px.data(), py.data(), static_cast<int>(px.size()), g.fill);
      if (g.width_pt > 0)
        painter.polyline(px.data(), py.data(), static_cast<int>(px.size()), stroke, g.width_pt,
                         g.style, g.closed);
    }
    for (const LineSeries& l : p.lines) {
      const Color c = series_color(l.color, auto_index);
      if (l.color.automatic()) ++auto_index;
      line_colors.push_back(c);
      std::vector<double> px, py;
      auto flush = [&] {
        if (px.size() >= 2)
          painter.polyline(px.data(), py.data(), static_cast<int>(px.size()), c,
                           std::max(0.5, l.width_pt), l.style, false);
        px.clear(), py.clear();
      };
      for (size_t k = 0; k < std::min(l.x.size(), l.y.size()); ++k) {
        const bool ok = std::isfinite(l.x[k]) && std::isfinite(l.y[k]) &&
                        !(L.xlog && l.x[k] <= 0) && !(L.ylog && l.y[k] <= 0);
        if (!ok) {
          flush();
          continue;
        }
        px.push_back(L.page_x(l.x[k]));
        py.push_back(L.page_y(l.y[k]));
      }
      flush();
    }
    for (const ScatterSeries& s : p.scatters) {
      const Color c = series_color(s.color, auto_index);
      if (s.color.automatic()) ++auto_index;
      scatter_colors.push_back(c);
      for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
        if (!std::isfinite(s.x[k]) || !std::isfinite(s.y[k])) continue;
        const double px = L.page_x(s.x[k]), py = L.page_y(s.y[k]);
        painter.marker(px, py, s.size_pt, s.marker, c);
        if (k < s.labels.size() && !s.labels[k].empty())
          painter.text(px + 0.5 * s.size_pt + 1, py - 0.5 * s.size_pt, s.labels[k], m.tick_font,
                       th.text, Anchor::Left, false);
      }
    }
    for (const Annotation& a : p.annotations)
      painter.text(L.page_x(a.x), L.page_y(a.y), a.text, m.tick_font,
                   a.color.automatic() ? th.text : a.color, a.anchor, false);
    painter.pop_clip();

    // Frame, ticks and labels.
    const double fx[4] = {plot.x, plot.x + plot.w, plot.x + plot.w, plot.x};
    const double fy[4] = {plot.y, plot.y, plot.y + plot.h, plot.y + plot.h};
    painter.polyline(fx, fy, 4, th.axis, m.line, LineStyle::Solid, true);
    const double bottom = plot.y + plot.h;
    for (size_t k = 0; k < xt.values.size(); ++k) {
      const double x = L.page_x(xt.values[k]);
      const double tx[2] = {x, x}, ty[2] = {bottom, bottom + m.tick_len};
      painter.polyline(tx, ty, 2, th.axis, m.line, LineStyle::Solid, false);
      if (show_x)
        painter.text(x, bottom + m.tick_len + tm.ascent(m.tick_font) + 0.5, xt.labels[k],
                     m.tick_font, th.text, Anchor::Center, false);
    }
    double label_left = plot.x - m.tick_len - 0.25 * m.font;
    double widest = max_width(yt.labels, m.tick_font, tm);
    for (size_t k = 0; k < yt.values.size(); ++k) {
      const double y = L.page_y(yt.values[k]);
      const double tx[2] = {plot.x - m.tick_len, plot.x}, ty[2] = {y, y};
      painter.polyline(tx, ty, 2, th.axis, m.line, LineStyle::Solid, false);
      if (show_y)
        painter.text(label_left, y + 0.35 * tm.ascent(m.tick_font), yt.labels[k], m.tick_font,
                     th.text, Anchor::Right, false);
    }
    if (show_x && p.x.visible && !p.x.label.empty())
      painter.text(plot.x + plot.w / 2,
                   bottom + m.tick_len + tm.ascent(m.tick_font) + tm.descent(m.tick_font) + 1 +
                       tm.ascent(m.font) + 0.5,
                   p.x.label, m.font, th.text, Anchor::Center, false);
    if (show_y && p.y.visible && !p.y.label.empty())
      painter.text(label_left - widest - 0.25 * m.font - tm.descent(m.font), plot.y + plot.h / 2,
                   p.y.label, m.font, th.text, Anchor::Center, true);
    if (!p.title.empty())
      painter.text(plot.x + plot.w / 2, plot.y - 0.45 * m.title_font, p.title, m.title_font,
                   th.text, Anchor::Center, false);

    // Colorbar: the map's gradient (top = max), ticks and label on the right.
    if (L.colorbar.w > 0) {
      const Heatmap* h = colorbar_heatmap(p);
      constexpr int kSteps = 256;
      std::vector<render::Rgba8> bar(kSteps);
      for (int k = 0; k < kSteps; ++k) {
        const double t = 1.0 - static_cast<double>(k) / (kSteps - 1);
        bar[k] = render::colormap_color(h->colormap, static_cast<float>(t));
      }
      const Rect& cb = L.colorbar;
      painter.image(cb, 1, kSteps, bar, 1.0);
      const double bx[4] = {cb.x, cb.x + cb.w, cb.x + cb.w, cb.x};
      const double by[4] = {cb.y, cb.y, cb.y + cb.h, cb.y + cb.h};
      painter.polyline(bx, by, 4, th.axis, m.line, LineStyle::Solid, true);
      Axis cax;
      const AxisTicks ct = make_ticks(cax, L.cbar_min, L.cbar_max, 4);
      const double right = cb.x + cb.w;
      for (size_t k = 0; k < ct.values.size(); ++k) {
        const double t = (ct.values[k] - L.cbar_min) / (L.cbar_max - L.cbar_min);
        const double y = cb.y + (1 - t) * cb.h;
        const double tx[2] = {right, right + m.tick_len}, ty[2] = {y, y};
        painter.polyline(tx, ty, 2, th.axis, m.line, LineStyle::Solid, false);
        painter.text(right + m.tick_len + 0.25 * m.font, y + 0.35 * tm.ascent(m.tick_font),
                     ct.labels[k], m.tick_font, th.text, Anchor::Left, false);
      }
      if (!h->colorbar_label.empty()) {
        const double x = right + m.tick_len + 0.25 * m.font +
                         max_width(ct.labels, m.tick_font, tm) + 0.25 * m.font + tm.ascent(m.font);
        painter.text(x, cb.y + cb.h / 2, h->colorbar_label, m.font, th.text, Anchor::Center, true);
      }
    }

    // Legend: named series, top-right inside the plot.
    if (p.legend) {
      struct Entry {
        std::string name;
        Color color;
        int kind;  // 0 line, 1 marker, 2 polygon
        LineStyle style;
        Marker marker;
      };
      std::vector<Entry> entries;
      for (size_t k = 0; k < p.polygons.size(); ++k)
        if (!p.polygons[k].name.empty())
          entries.push_back(
              {p.polygons[k].name, polygon_colors[k], 2, p.polygons[k].style, Marker::Circle});
      for (size_t k = 0; k < p.lines.size(); ++k)
        if (!p.lines[k].name.empty())
          entries.push_back({p.lines[k].name, line_colors[k], 0, p.lines[k].style, Marker::Circle});
      for (size_t k = 0; k < p.scatters.size(); ++k)
        if (!p.scatters[k].name.empty())
          entries.push_back(
              {p.scatters[k].name, scatter_colors[k], 1, LineStyle::Solid, p.scatters[k].marker});
      if (!entries.empty()) {
        double text_w = 0;
        for (const auto& e : entries) text_w = std::max(text_w, tm.width(e.name, m.tick_font));
        const double row_h = m.tick_font * 1.25, sample = 1.6 * m.font, pad = 0.3 * m.font;
        const double w = pad * 3 + sample + text_w, h = pad * 2 + row_h * entries.size();
        const Rect box{plot.x + plot.w - w - pad, plot.y + pad, w, h};
        painter.fill_rect(box, th.legend_background);
        for (size_t k = 0; k < entries.size(); ++k) {
          const Entry& e = entries[k];
          const double cy = box.y + pad + row_h * (k + 0.5);
          const double sx[2] = {box.x + pad, box.x + pad + sample}, sy[2] = {cy, cy};
          if (e.kind == 1)
            painter.marker(box.x + pad + sample / 2, cy, 0.6 * m.font, e.marker, e.color);
          else
            painter.polyline(sx, sy, 2, e.color, e.kind == 2 ? 1.5 : 1.2, e.style, false);
          painter.text(box.x + 2 * pad + sample, cy + 0.35 * tm.ascent(m.tick_font), e.name,
                       m.tick_font, th.text, Anchor::Left, false);
        }
      }
    }
  }
  if (!figure.title.empty())
    painter.text(page.width_pt / 2, m.pad + tm.ascent(m.title_font), figure.title, m.title_font,
                 th.text, Anchor::Center, false);
  return layout;
}

}  // namespace attn::fig
