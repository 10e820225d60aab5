// Drawing a laid-out figure (figure_layout.cpp places everything; this file only paints), the
// data <-> page mapping, colours and hit testing.
#include "render/plot/figure_draw.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "render/plot/plot_math.h"

namespace attn::fig {
namespace {

using render::Range;

double log_or_linear(double v, bool log) {
  return log ? std::log10(v) : v;
}

void draw_heatmap(const Heatmap& h, const PanelLayout& L, Painter& painter) {
  if (h.rows <= 0 || h.cols <= 0) return;
  double vmin, vmax;
  std::vector<render::Rgba8> px = heatmap_pixels(h, vmin, vmax);
  if (px.empty()) return;
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

void draw_series(const Panel& p, const PanelLayout& L, Painter& painter) {
  const SeriesColors colors = series_colors(p);
  for (size_t k = 0; k < p.polygons.size(); ++k) {
    const Polygon& g = p.polygons[k];
    std::vector<double> px, py;
    for (size_t i = 0; i < std::min(g.x.size(), g.y.size()); ++i) {
      px.push_back(L.page_x(g.x[i]));
      py.push_back(L.page_y(g.y[i]));
    }
    if (px.size() < 2) continue;
    if (g.fill.a > 0 && px.size() >= 3)
      painter.fill_polygon(px.data(), py.data(), static_cast<int>(px.size()), g.fill);
    if (g.width_pt > 0)
      painter.polyline(px.data(), py.data(), static_cast<int>(px.size()), colors.polygons[k],
                       g.width_pt, g.style, g.closed);
  }
  // Lines: page x of every finite point, page y only of those drawn (a million points cost a
  // million additions, not a million logarithms).
  std::vector<double> px, vy, dx, dy;
  std::vector<size_t> keep;
  for (size_t k = 0; k < p.lines.size(); ++k) {
    const LineSeries& l = p.lines[k];
    auto flush = [&] {
      dx.clear(), dy.clear();
      if (px.size() > static_cast<size_t>(kLineKeepPoints)) {
        // Min/max per column: what a million points look like, in a few thousand.
        render::decimate_indices(px.data(), vy.data(), px.size(), L.plot.x, kLineColumnPt,
                                 static_cast<long>(std::ceil(L.plot.w / kLineColumnPt)), keep);
        for (size_t i : keep) dx.push_back(px[i]), dy.push_back(L.page_y(vy[i]));
      } else {
        dx.swap(px);
        for (double v : vy) dy.push_back(L.page_y(v));
      }
      if (dx.size() >= 2)
        painter.polyline(dx.data(), dy.data(), static_cast<int>(dx.size()), colors.lines[k],
                         std::max(0.5, l.width_pt), l.style, false);
      else if (dx.size() == 1)  // a lone point (one evaluation so far) would draw nothing
        painter.marker(dx[0], dy[0], 3 * std::max(0.5, l.width_pt), Marker::Circle,
                       colors.lines[k]);
      px.clear(), vy.clear();
    };
    const size_t n = std::min(l.x.size(), l.y.size());
    px.reserve(n), vy.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const bool ok = std::isfinite(l.x[i]) && std::isfinite(l.y[i]) && !(L.xlog && l.x[i] <= 0) &&
                      !(L.ylog && l.y[i] <= 0);
      if (!ok) {
        flush();
        continue;
      }
      px.push_back(L.page_x(l.x[i]));
      vy.push_back(l.y[i]);
    }
    flush();
  }
  for (size_t k = 0; k < p.scatters.size(); ++k) {
    const ScatterSeries& s = p.scatters[k];
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
        painter.marker(L.page_x(s.x[i]), L.page_y(s.y[i]), s.size_pt, s.marker, colors.scatters[k]);
  }
}

void draw_colorbar(const ColorbarLayout& c, const Page& page, Painter& painter) {
  if (c.bar.w <= 0) return;
  const Theme& th = page.theme;
  const double line = std::max(0.5, page.line_pt), tick = 0.35 * page.font_pt;
  constexpr int kSteps = 256;
  std::vector<render::Rgba8> bar(kSteps);
  for (int k = 0; k < kSteps; ++k)
    bar[k] = render::colormap_color(c.colormap, static_cast<float>(1.0 - k / (kSteps - 1.0)));
  const Rect& b = c.bar;
  painter.image(b, 1, kSteps, bar, 1.0);
  const double bx[4] = {b.x, b.x + b.w, b.x + b.w, b.x};
  const double by[4] = {b.y, b.y, b.y + b.h, b.y + b.h};
  painter.polyline(bx, by, 4, th.axis, line, LineStyle::Solid, true);
  for (double v : c.ticks) {
    const double y = b.y + (1 - (v - c.vmin) / (c.vmax - c.vmin)) * b.h;
    const double tx[2] = {b.x + b.w, b.x + b.w + tick}, ty[2] = {y, y};
    painter.polyline(tx, ty, 2, th.axis, line, LineStyle::Solid, false);
  }
}

void draw_legend(const LegendLayout& l, const Page& page, bool background, Painter& painter) {
  if (l.box.w <= 0) return;
  if (background) painter.fill_rect(l.box, page.theme.legend_background);
  for (const LegendEntry& e : l.entries) {
    if (e.kind == 3) continue;  // "+N more": its text only
    if (e.kind == 1) {
      painter.marker(e.x + l.sample_pt / 2, e.y, 0.6 * page.font_pt, e.marker, e.color);
      continue;
    }
    const double sx[2] = {e.x, e.x + l.sample_pt}, sy[2] = {e.y, e.y};
    painter.polyline(sx, sy, 2, e.color, e.kind == 2 ? 1.5 : 1.2, e.style, false);
  }
}

void draw_texts(const FigureLayout& layout, const Page& page, int panel, bool in_plot,
                Painter& painter) {
  for (const PlacedText& t : layout.texts) {
    const bool inner = t.role == TextRole::PointLabel || t.role == TextRole::Annotation;
    if (t.panel != panel || inner != in_plot) continue;
    painter.text(t.x, t.y, t.text, t.size_pt, t.color.automatic() ? page.theme.text : t.color,
                 t.anchor, t.vertical);
  }
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

SeriesColors series_colors(const Panel& p) {
  SeriesColors out;
  int auto_index = 0;
  auto next = [&](Color c) {
    const Color got = series_color(c, auto_index);
    if (c.automatic()) ++auto_index;
    return got;
  };
  for (const auto& g : p.polygons) out.polygons.push_back(next(g.stroke));
  for (const auto& l : p.lines) out.lines.push_back(next(l.color));
  for (const auto& s : p.scatters) out.scatters.push_back(next(s.color));
  return out;
}

namespace {

Range fitted_range(const Heatmap& h, size_t* finite = nullptr) {
  const size_t n =
      std::min(static_cast<size_t>(std::max(0, h.rows)) * std::max(0, h.cols), h.values.size());
  if (finite) {
    *finite = 0;
    for (size_t i = 0; i < n; ++i) *finite += std::isfinite(h.values[i]) ? 1 : 0;
  }
  return render::value_range(h.values.data(), n);
}

}  // namespace

bool heatmap_flat(const Heatmap& h) {
  if (h.vmin < h.vmax) return false;
  size_t finite = 0;
  const Range r = fitted_range(h, &finite);
  if (finite < 2) return false;
  const double magnitude = std::max(std::fabs(r.lo), std::fabs(r.hi));
  return r.hi - r.lo < std::max(kFlatSpanAbsolute, kFlatSpanRelative * magnitude);
}

std::string colorbar_text(const Heatmap& h) {
  if (!heatmap_flat(h)) return h.colorbar_label;
  // The note first: a label too long for the bar is cut at its end.
  char note[64];
  std::snprintf(note, sizeof note, "equal within %g (one colour)", kFlatSpanRelative);
  return h.colorbar_label.empty() ? note : note + (": " + h.colorbar_label);
}

void value_limits(const Heatmap& h, double& vmin, double& vmax) {
  vmin = h.vmin, vmax = h.vmax;
  if (vmin < vmax) return;
  const Range r = fitted_range(h);
  const bool flat = heatmap_flat(h);
  if (h.colormap == render::Colormap::Diverging) {
    const double top = r.empty() ? 1.0 : std::max(std::fabs(r.lo), std::fabs(r.hi));
    const double m = r.empty() ? 1.0 : flat ? std::max(1.0, top) : std::max(top, 1e-12);
    vmin = -m, vmax = m;
  } else {
    vmin = r.empty() ? 0.0 : r.lo;
    vmax = r.empty() ? 1.0 : (r.hi > r.lo && !flat ? r.hi : r.lo + 1.0);
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

FigureLayout draw_figure(const Figure& figure, const Page& page, const TextMetrics& tm,
                         Painter& painter) {
  const FigureLayout layout = layout_figure(figure, page, tm);
  const Theme& th = page.theme;
  const double line = std::max(0.5, page.line_pt), tick = 0.35 * page.font_pt;
  painter.fill_rect({0, 0, page.width_pt, page.height_pt}, th.background);
  for (size_t i = 0; i < figure.panels.size(); ++i) {
    const Panel& p = figure.panels[i];
    const PanelLayout& L = layout.panels[i];
    const Rect& plot = L.plot;
    painter.begin_panel(static_cast<int>(i));
    painter.push_clip(plot);
    if (p.grid) {
      for (double v : L.xticks) {
        const double px[2] = {L.page_x(v), L.page_x(v)}, py[2] = {plot.y, plot.y + plot.h};
        painter.polyline(px, py, 2, th.grid, 0.5, LineStyle::Solid, false);
      }
      for (double v : L.yticks) {
        const double px[2] = {plot.x, plot.x + plot.w}, py[2] = {L.page_y(v), L.page_y(v)};
        painter.polyline(px, py, 2, th.grid, 0.5, LineStyle::Solid, false);
      }
    }
    for (const Heatmap& h : p.heatmaps) draw_heatmap(h, L, painter);
    draw_series(p, L, painter);
    draw_texts(layout, page, static_cast<int>(i), true, painter);
    painter.pop_clip();

    // Frame and tick marks (the labels are among the texts).
    const double fx[4] = {plot.x, plot.x + plot.w, plot.x + plot.w, plot.x};
    const double fy[4] = {plot.y, plot.y, plot.y + plot.h, plot.y + plot.h};
    painter.polyline(fx, fy, 4, th.axis, line, LineStyle::Solid, true);
    const double bottom = plot.y + plot.h;
    for (double v : L.xticks) {
      const double x = L.page_x(v), tx[2] = {x, x}, ty[2] = {bottom, bottom + tick};
      painter.polyline(tx, ty, 2, th.axis, line, LineStyle::Solid, false);
    }
    for (double v : L.yticks) {
      const double y = L.page_y(v), tx[2] = {plot.x - tick, plot.x}, ty[2] = {y, y};
      painter.polyline(tx, ty, 2, th.axis, line, LineStyle::Solid, false);
    }
    draw_colorbar(L.colorbar, page, painter);
    draw_legend(L.legend, page, true, painter);
    draw_texts(layout, page, static_cast<int>(i), false, painter);
  }
  painter.begin_panel(-1);
  draw_colorbar(layout.colorbar, page, painter);
  draw_legend(layout.legend, page, false, painter);
  draw_texts(layout, page, -1, false, painter);
  return layout;
}

int panel_at(const FigureLayout& layout, double px, double py) {
  for (size_t i = 0; i < layout.panels.size(); ++i)
    if (layout.panels[i].plot.contains(px, py)) return static_cast<int>(i);
  return -1;
}

PointHit nearest_point(const Figure& figure, const FigureLayout& layout, double px, double py,
                       double radius_pt) {
  PointHit hit;
  hit.panel = panel_at(layout, px, py);
  if (hit.panel < 0 || hit.panel >= static_cast<int>(figure.panels.size())) return hit;
  const Panel& p = figure.panels[hit.panel];
  const PanelLayout& L = layout.panels[hit.panel];
  double best = radius_pt;
  for (size_t s = 0; s < p.lines.size(); ++s) {
    const LineSeries& l = p.lines[s];
    for (size_t i = 0; i < std::min(l.x.size(), l.y.size()); ++i) {
      if (!std::isfinite(l.x[i]) || !std::isfinite(l.y[i]) || (L.xlog && l.x[i] <= 0) ||
          (L.ylog && l.y[i] <= 0))
        continue;
      const double d = std::hypot(L.page_x(l.x[i]) - px, L.page_y(l.y[i]) - py);
      if (d > best) continue;
      best = d;
      hit.series = static_cast<int>(s), hit.index = static_cast<int>(i);
      hit.name = l.name, hit.x = l.x[i], hit.y = l.y[i], hit.distance_pt = d;
    }
  }
  return hit;
}

}  // namespace attn::fig
