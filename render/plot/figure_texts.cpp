// Placing a laid-out figure's texts (render/plot/figure_layout.h): titles shortened to the room
// they have, tick and axis labels, colorbar labels, legends (inside the plot, in the corner that
// hides the fewest data points, or in the band below the grid), point labels that avoid each
// other, and a last pass that drops tick labels colliding with anything placed before them.
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "render/plot/figure_layout.h"

namespace attn::fig::detail {

void fold_legend(std::vector<LegendEntry>& entries) {
  if (entries.size() <= static_cast<size_t>(kMaxLegendEntries)) return;
  const size_t shown = kMaxLegendEntries - 1;
  LegendEntry more;
  more.name = "+" + std::to_string(entries.size() - shown) + " more";
  more.kind = 3;
  entries.resize(shown);
  entries.push_back(std::move(more));
}

std::vector<LegendEntry> Layout::band_entries() const {
  std::vector<LegendEntry> out;
  std::unordered_set<std::string> seen;
  for (const PanelPlan& pl : plans_) {
    if (!pl.legend_in_band) continue;
    for (const LegendEntry& e : pl.entries)
      if (seen.insert(e.name).second) out.push_back(e);
  }
  fold_legend(out);
  // A name longer than a whole line of the band is shortened to one.
  const double avail = w_ - 2 * m_.pad - 1.9 * m_.font;
  for (LegendEntry& e : out) e.name = fitted(e.name, m_.tick_font, avail, tm_);
  return out;
}

namespace {

// Band entries flow across the page in lines, each line centred: sample, name, a space.
struct BandLine {
  std::vector<size_t> entries;
  double width = 0;
};

std::vector<BandLine> band_lines(const std::vector<LegendEntry>& entries, double avail,
                                 const Metrics& m, const TextMetrics& tm) {
  std::vector<BandLine> lines;
  for (size_t k = 0; k < entries.size(); ++k) {
    const double w = 1.6 * m.font + 0.3 * m.font + tm.width(entries[k].name, m.tick_font);
    if (lines.empty() ||
        (!lines.back().entries.empty() && lines.back().width + 1.2 * m.font + w > avail))
      lines.emplace_back();
    BandLine& l = lines.back();
    l.width += (l.entries.empty() ? 0 : 1.2 * m.font) + w;
    l.entries.push_back(k);
  }
  return lines;
}

}  // namespace

double Layout::band_height() const {
  const auto entries = band_entries();
  if (entries.empty()) return 0;
  const auto lines = band_lines(entries, w_ - 2 * m_.pad, m_, tm_);
  return lines.size() * m_.tick_font * 1.3 + 0.4 * m_.font;
}

void Layout::place_band(double y) {
  const auto entries = band_entries();
  if (entries.empty()) return;
  const auto lines = band_lines(entries, w_ - 2 * m_.pad, m_, tm_);
  const double row_h = m_.tick_font * 1.3, sample = 1.6 * m_.font;
  LegendLayout& L = out_.legend;
  L.box = {m_.pad, y, w_ - 2 * m_.pad, lines.size() * row_h};
  L.sample_pt = sample;
  for (size_t r = 0; r < lines.size(); ++r) {
    double x = w_ / 2 - lines[r].width / 2;
    const double cy = y + row_h * (r + 0.5);
    for (size_t k : lines[r].entries) {
      LegendEntry e = entries[k];
      e.x = x, e.y = cy;
      L.entries.push_back(e);
      const double tx = x + sample + 0.3 * m_.font;
      put(TextRole::Legend, -1, e.name, tx, cy + 0.35 * asc(m_.tick_font), m_.tick_font,
          Anchor::Left, false);
      x = tx + tm_.width(e.name, m_.tick_font) + 1.2 * m_.font;
    }
  }
}

void Layout::place_colorbar_texts(const Colorbar& c, const Rect& bar, double avail, int panel) {
  const double right = bar.x + bar.w, x = right + m_.tick_len + 0.25 * m_.font;
  for (size_t k = 0; k < c.ticks.values.size(); ++k) {
    if (c.ticks.labels[k].empty()) continue;
    const double t = (c.ticks.values[k] - c.lo) / (c.hi - c.lo);
    put(TextRole::ColorbarTick, panel, c.ticks.labels[k], x,
        bar.y + (1 - t) * bar.h + 0.35 * asc(m_.tick_font), m_.tick_font, Anchor::Left, false);
  }
  if (c.label.empty()) return;
  const std::string label = fitted(c.label, m_.font, avail, tm_);
  const double lx =
      x + max_width(c.ticks.labels, m_.tick_font, tm_) + 0.25 * m_.font + asc(m_.font);
  put(TextRole::ColorbarLabel, panel, label, lx, bar.y + bar.h / 2, m_.font, Anchor::Center, true);
}

void Layout::place_title() {
  for (size_t k = 0; k < figure_title_.size(); ++k)
    put(TextRole::FigureTitle, -1, figure_title_[k], w_ / 2,
        m_.pad + asc(m_.title_font) + k * m_.title_font * 1.2, m_.title_font, Anchor::Center,
        false);
}

void Layout::place_texts(const Grid& g) {
  place_title();
  // Per column, the widest y tick label drawn: axis labels line up down a column.
  std::vector<double> col_tick_w(cols_, 0.0);
  for (const PanelPlan& pl : plans_)
    if (pl.yt_labels)
      col_tick_w[pl.col] = std::max(col_tick_w[pl.col], max_width(pl.yt.labels, m_.tick_font, tm_));
  for (int i = 0; i < count_; ++i) place_panel_texts(i, g, col_tick_w);

  // Shared axis labels: centred on the plots they serve, just beyond their tick labels.
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300, low = -1e300, left = 1e300;
  for (int i = 0; i < count_; ++i) {
    const Rect& r = out_.panels[i].plot;
    const PanelPlan& pl = plans_[i];
    x0 = std::min(x0, r.x), x1 = std::max(x1, r.x + r.w);
    y0 = std::min(y0, r.y), y1 = std::max(y1, r.y + r.h);
    low = std::max(low, r.y + r.h + m_.tick_len + (pl.xt_labels ? line_h(m_.tick_font) + 1 : 0.5));
    left = std::min(left, r.x - m_.tick_len -
                              (pl.yt_labels ? 0.5 * m_.font + col_tick_w[pl.col] : 0.25 * m_.font));
  }
  if (!fig_xlabel_.empty())
    put(TextRole::AxisLabel, -1, fitted(fig_xlabel_, m_.font, w_ - 2 * m_.pad, tm_), (x0 + x1) / 2,
        low + 0.15 * m_.font + asc(m_.font), m_.font, Anchor::Center, false);
  if (!fig_ylabel_.empty()) {
    const double span = g.row_y.back() + g.top.back() + g.plot_h + g.bottom.back() - g.row_y[0];
    put(TextRole::AxisLabel, -1, fitted(fig_ylabel_, m_.font, span, tm_), left - desc(m_.font),
        (y0 + y1) / 2, m_.font, Anchor::Center, true);
  }
  if (shared_cbar_) {
    const Rect& bar = out_.colorbar.bar;
    const double span = g.row_y.back() + g.top.back() + g.plot_h - g.row_y[0];
    place_colorbar_texts(cbar_, bar, std::max(bar.h, span), -1);
  }
  place_band(g.grid_bottom + fig_xlabel_h() + 0.2 * m_.font);
}

void Layout::place_panel_texts(int i, const Grid& g, const std::vector<double>& col_tick_w) {
  const Panel& p = f_.panels[i];
  const PanelPlan& pl = plans_[i];
  PanelLayout& L = out_.panels[i];
  const Rect& plot = L.plot;
  const double bottom = plot.y + plot.h, cx = plot.x + plot.w / 2, cy = plot.y + plot.h / 2;
  // The cell: the unshrunk plot and half the gap on either side, its row's margins.
  const double cell_x0 = g.col_x[pl.col] + g.left[pl.col] - 0.4 * gap_;
  double cell_x1 = g.col_x[pl.col] + g.left[pl.col] + g.plot_w + 0.4 * gap_;
  if (L.colorbar.bar.w > 0) cell_x1 = std::min(cell_x1, L.colorbar.bar.x + L.colorbar.bar.w);
  if (out_.colorbar.bar.w > 0) cell_x1 = std::min(cell_x1, out_.colorbar.bar.x - 0.1 * m_.font);
  const double cell_y0 = g.row_y[pl.row];
  const double cell_y1 = cell_y0 + g.top[pl.row] + g.plot_h + g.bottom[pl.row];
  const double half_w =
      std::min({cx - cell_x0, cell_x1 - cx, cx - 0.5 * m_.pad, w_ - 0.5 * m_.pad - cx});

  if (!p.title.empty()) {
    std::string t = p.title;
    if (tm_.width(t, m_.title_font) > 2 * half_w && !p.short_title.empty()) t = p.short_title;
    L.title = fitted(t, m_.title_font, 2 * half_w, tm_);
    if (!L.title.empty())
      put(TextRole::PanelTitle, i, L.title, cx, plot.y - 0.45 * m_.title_font, m_.title_font,
          Anchor::Center, false);
  }
  if (pl.own_xlabel)
    put(TextRole::AxisLabel, i, fitted(p.x.label, m_.font, 2 * half_w, tm_), cx,
        bottom + m_.tick_len + line_h(m_.tick_font) + 1 + asc(m_.font) + 0.5, m_.font,
        Anchor::Center, false);
  if (pl.own_ylabel) {
    const double x = plot.x - m_.tick_len - 0.5 * m_.font - col_tick_w[pl.col] - desc(m_.font);
    const double span = 2 * std::min(cy - cell_y0, cell_y1 - cy);
    put(TextRole::AxisLabel, i, fitted(p.y.label, m_.font, span, tm_), x, cy, m_.font,
        Anchor::Center, true);
  }
  if (pl.cbar) {
    const Colorbar c{pl.cbar, pl.c_lo, pl.c_hi, pl.ct, colorbar_text(*pl.cbar)};
    place_colorbar_texts(c, L.colorbar.bar, cell_y1 - cell_y0, i);
  }
  place_legend(i);
  place_point_labels(i);
  if (pl.xt_labels)
    for (size_t k = 0; k < pl.xt.values.size(); ++k)
      if (!pl.xt.labels[k].empty())
        put(TextRole::TickLabel, i, pl.xt.labels[k], L.page_x(pl.xt.values[k]),
            bottom + m_.tick_len + asc(m_.tick_font) + 0.5, m_.tick_font, Anchor::Center, false);
  if (pl.yt_labels)
    for (size_t k = 0; k < pl.yt.values.size(); ++k)
      if (!pl.yt.labels[k].empty())
        put(TextRole::TickLabel, i, pl.yt.labels[k], plot.x - m_.tick_len - 0.25 * m_.font,
            L.page_y(pl.yt.values[k]) + 0.35 * asc(m_.tick_font), m_.tick_font, Anchor::Right,
            false);
}

// Inside the plot, in the corner that hides the fewest data points.
void Layout::place_legend(int i) {
  const PanelPlan& pl = plans_[i];
  PanelLayout& L = out_.panels[i];
  if (pl.entries.empty() || pl.legend_in_band) return;
  const Panel& p = f_.panels[i];
  const Rect& plot = L.plot;
  double text_w = 0;
  for (const auto& e : pl.entries) text_w = std::max(text_w, tm_.width(e.name, m_.tick_font));
  const double row_h = m_.tick_font * 1.25, sample = 1.6 * m_.font, pad = 0.3 * m_.font;
  const double w = pad * 3 + sample + text_w, h = pad * 2 + row_h * pl.entries.size();
  const double left = plot.x + pad, right = plot.x + plot.w - w - pad;
  const double top = plot.y + pad, low = plot.y + plot.h - h - pad;
  const Rect corners[4] = {
      {right, top, w, h}, {left, top, w, h}, {right, low, w, h}, {left, low, w, h}};
  int best = 0;
  size_t best_hidden = SIZE_MAX;
  for (int c = 0; c < 4; ++c) {
    size_t hidden = 0;
    auto count = [&](const std::vector<double>& xs, const std::vector<double>& ys) {
      for (size_t k = 0; k < std::min(xs.size(), ys.size()); ++k)
        if (std::isfinite(xs[k]) && std::isfinite(ys[k]) && !(L.xlog && xs[k] <= 0) &&
            !(L.ylog && ys[k] <= 0) && corners[c].contains(L.page_x(xs[k]), L.page_y(ys[k])))
          ++hidden;
    };
    for (const auto& l : p.lines) count(l.x, l.y);
    for (const auto& s : p.scatters) count(s.x, s.y);
    for (const auto& g : p.polygons) count(g.x, g.y);
    if (hidden < best_hidden) best = c, best_hidden = hidden;
  }
  const Rect& box = corners[best];
  L.legend.box = box;
  L.legend.sample_pt = sample;
  for (size_t k = 0; k < pl.entries.size(); ++k) {
    LegendEntry e = pl.entries[k];
    e.x = box.x + pad, e.y = box.y + pad + row_h * (k + 0.5);
    L.legend.entries.push_back(e);
    put(TextRole::Legend, i, e.name, box.x + 2 * pad + sample, e.y + 0.35 * asc(m_.tick_font),
        m_.tick_font, Anchor::Left, false);
  }
}

// Point labels beside their markers (right, left, above-right, below-right of it), skipped
// where none of those stays in the plot clear of the legend and the labels placed before;
// annotations at their anchor, moved inside the plot.
void Layout::place_point_labels(int i) {
  const Panel& p = f_.panels[i];
  const PanelLayout& L = out_.panels[i];
  const Rect& plot = L.plot;
  std::vector<Rect> taken;
  if (L.legend.box.w > 0) taken.push_back(L.legend.box);
  const double ts = m_.tick_font;
  for (const ScatterSeries& s : p.scatters)
    for (size_t k = 0; k < std::min({s.x.size(), s.y.size(), s.labels.size()}); ++k) {
      if (s.labels[k].empty() || !std::isfinite(s.x[k]) || !std::isfinite(s.y[k])) continue;
      const double px = L.page_x(s.x[k]), py = L.page_y(s.y[k]), r = 0.5 * s.size_pt + 1;
      const PlacedText options[4] = {
          {s.labels[k], px + r, py - r + 0.5 * asc(ts), ts, Anchor::Left, false, {}},
          {s.labels[k], px - r, py - r + 0.5 * asc(ts), ts, Anchor::Right, false, {}},
          {s.labels[k], px + r, py - r, ts, Anchor::Left, false, {}},
          {s.labels[k], px + r, py + r + asc(ts), ts, Anchor::Left, false, {}}};
      for (const PlacedText& o : options) {
        const Rect b = box_of(o, tm_);
        if (!inside(b, plot) ||
            std::any_of(taken.begin(), taken.end(), [&](const Rect& t) { return overlaps(b, t); }))
          continue;
        PlacedText t = o;
        t.role = TextRole::PointLabel, t.panel = i;
        add(t);
        taken.push_back(b);
        break;
      }
    }
  for (const Annotation& a : p.annotations) {
    PlacedText t{a.text, L.page_x(a.x), L.page_y(a.y),        ts, a.anchor,
                 false,  a.color,       TextRole::Annotation, i};
    const Rect b = box_of(t, tm_);
    t.x += std::max(0.0, plot.x - b.x) - std::max(0.0, b.x + b.w - plot.x - plot.w);
    t.y += std::max(0.0, plot.y - b.y) - std::max(0.0, b.y + b.h - plot.y - plot.h);
    add(t);
  }
}

// Tick labels (the least important texts) give way: dropped where they would leave the page,
// cross a plot area or a colorbar, or overlap a text placed with a higher priority.
void Layout::resolve_collisions() {
  std::vector<size_t> order(out_.texts.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return out_.texts[a].role < out_.texts[b].role; });
  const Rect page{0, 0, w_, h_};
  std::vector<Rect> blocked;
  for (const PanelLayout& L : out_.panels) {
    blocked.push_back(L.plot);
    if (L.colorbar.bar.w > 0) blocked.push_back(L.colorbar.bar);
  }
  if (out_.colorbar.bar.w > 0) blocked.push_back(out_.colorbar.bar);
  std::vector<Rect> kept;
  std::vector<bool> drop(out_.texts.size(), false);
  for (size_t k : order) {
    const PlacedText& t = out_.texts[k];
    const Rect b = box_of(t, tm_);
    const bool minor = t.role == TextRole::TickLabel || t.role == TextRole::ColorbarTick;
    if (minor) {
      auto hit = [&](const Rect& r) { return overlaps(b, r); };
      drop[k] = !inside(b, page) || std::any_of(kept.begin(), kept.end(), hit) ||
                std::any_of(blocked.begin(), blocked.end(), hit);
    }
    // Texts inside a plot (its legend, point labels) only meet each other there.
    const bool in_plot = t.role == TextRole::PointLabel || t.role == TextRole::Annotation ||
                         (t.role == TextRole::Legend && t.panel >= 0);
    if (!drop[k] && !in_plot) kept.push_back(b);
  }
  std::vector<PlacedText> texts;
  for (size_t k = 0; k < out_.texts.size(); ++k)
    if (!drop[k]) texts.push_back(std::move(out_.texts[k]));
  out_.texts = std::move(texts);
}

}  // namespace attn::fig::detail
