// layout_figure(): the grid, the plot areas and the ticks of a figure on its page (the texts are
// placed by figure_texts.cpp). Order of work: data ranges -> columns (from the width alone) ->
// rows (plot height) -> y ticks -> column margins (plot width) -> x ticks -> texts -> one pass
// that drops tick labels colliding with anything placed before them. Legends that do not fit
// their plot move to a band below the grid, which costs height, so the rows are sized again.
#include "render/plot/figure_layout.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace attn::fig {
namespace detail {
namespace {

using render::Range;

constexpr double kLineAspect = 0.68;  // natural plot height / width of a line plot
const std::string kEllipsis = "\xe2\x80\xa6";

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

double log_or_linear(double v, bool log) {
  return log ? std::log10(v) : v;
}

// Explicit ticks (tokens) keep a mark only where their label survived thinning.
void drop_unlabelled(AxisTicks& t) {
  AxisTicks kept;
  for (size_t k = 0; k < t.values.size(); ++k)
    if (!t.labels[k].empty())
      kept.values.push_back(t.values[k]), kept.labels.push_back(t.labels[k]);
  t = kept;
}

double bar_extent(const Metrics& m, const TextMetrics& tm, const AxisTicks& t, bool label) {
  return m.pad + m.bar_w + m.tick_len + 0.25 * m.font + max_width(t.labels, m.tick_font, tm) +
         (label ? 0.25 * m.font + tm.ascent(m.font) + tm.descent(m.font) : 0) + 0.2 * m.font;
}

}  // namespace

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
  const render::Ticks ticks = a.log && lo > 0 ? render::log_ticks(lo, hi, std::max(2, target + 2))
                                              : render::linear_ticks(lo, hi, target);
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

std::string fitted(const std::string& s, double size, double avail, const TextMetrics& tm) {
  if (tm.width(s, size) <= avail) return s;
  std::string t = s;
  while (!t.empty()) {
    size_t n = t.size() - 1;
    while (n > 0 && (static_cast<unsigned char>(t[n]) & 0xC0) == 0x80) --n;  // a UTF-8 start
    t.resize(n);
    while (!t.empty() && (t.back() == ' ' || t.back() == ',' || t.back() == '(')) t.pop_back();
    if (!t.empty() && tm.width(t + kEllipsis, size) <= avail) return t + kEllipsis;
  }
  return "";
}

void thin(AxisTicks& t, const std::vector<double>& pos, const std::vector<double>& ext,
          double space) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < t.labels.size(); ++i)
    if (!t.labels[i].empty()) idx.push_back(i);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return pos[a] < pos[b]; });
  if (idx.size() < 2) return;
  for (size_t k = 1; k <= idx.size(); ++k) {
    bool ok = true;
    for (size_t j = k; j < idx.size() && ok; j += k) {
      const size_t a = idx[j - k], b = idx[j];
      ok = pos[b] - pos[a] >= (ext[a] + ext[b]) / 2 + space;
    }
    if (!ok) continue;
    const size_t kept = (idx.size() + k - 1) / k;
    for (size_t j = 0; j < idx.size(); ++j)
      if (j % k != 0 || kept < 2) t.labels[idx[j]].clear();
    return;
  }
}

namespace {

// The most ticks, from `target` down to 2, whose labels keep `space` apart without thinning;
// at 2 (or for the axis's own ticks) the thinned set. measure(ticks, pos, ext) appends each
// label's page position and extent along the axis.
template <typename Measure>
AxisTicks fitted_ticks(const Axis& a, const render::Range& r, int target, double space,
                       Measure measure) {
  AxisTicks ticks;
  for (int t = target; t >= 2; --t) {
    ticks = make_ticks(a, r.lo, r.hi, t);
    std::vector<double> pos, ext;
    measure(ticks, pos, ext);
    AxisTicks thinned = ticks;
    thin(thinned, pos, ext, space);
    if (thinned.labels == ticks.labels || !a.ticks.empty() || t == 2) {
      ticks = thinned;
      break;
    }
  }
  if (!a.ticks.empty()) drop_unlabelled(ticks);
  return ticks;
}

}  // namespace

bool overlaps(const Rect& a, const Rect& b) {
  const double ox = std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x);
  const double oy = std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y);
  return ox > 0.01 && oy > 0.01;
}

bool inside(const Rect& inner, const Rect& outer) {
  return inner.x >= outer.x - 0.01 && inner.y >= outer.y - 0.01 &&
         inner.x + inner.w <= outer.x + outer.w + 0.01 &&
         inner.y + inner.h <= outer.y + outer.h + 0.01;
}

Rect box_of(const PlacedText& t, const TextMetrics& m) {
  const double w = m.width(t.text, t.size_pt), asc = m.ascent(t.size_pt);
  const double desc = m.descent(t.size_pt);
  const double start = t.anchor == Anchor::Left ? 0 : t.anchor == Anchor::Center ? -w / 2 : -w;
  if (!t.vertical) return {t.x + start, t.y - asc, w, asc + desc};
  return {t.x - asc, t.y - start - w, asc + desc, w};
}

const Heatmap* colorbar_heatmap(const Panel& p) {
  for (auto it = p.heatmaps.rbegin(); it != p.heatmaps.rend(); ++it)
    if (it->colorbar && it->rows > 0 && it->cols > 0) return &*it;
  return nullptr;
}

double Layout::title_block() const {
  return figure_title_.empty() ? 0 : figure_title_.size() * m_.title_font * 1.2 + 0.5 * m_.pad;
}

double Layout::fig_xlabel_h() const {
  return fig_xlabel_.empty() ? 0 : line_h(m_.font) + 0.3 * m_.font;
}

void Layout::prepare() {
  count_ = static_cast<int>(f_.panels.size());
  base_cols_ = std::max(1, f_.cols);
  gap_ = (f_.share_y ? 1.2 : 1.8) * m_.font;
  vgap_ = 0.9 * m_.font;
  plans_.assign(count_, {});
  Range all_x, all_y;
  for (int i = 0; i < count_; ++i) {
    data_ranges(f_.panels[i], plans_[i].rx, plans_[i].ry);
    all_x = render::merge(all_x, plans_[i].rx);
    all_y = render::merge(all_y, plans_[i].ry);
  }
  for (int i = 0; i < count_; ++i) {
    const Panel& p = f_.panels[i];
    PanelPlan& pl = plans_[i];
    pl.rx = resolve(p.x, f_.share_x ? all_x : pl.rx);
    pl.ry = resolve(p.y, f_.share_y ? all_y : pl.ry);
    // Estimates until the plot sizes are known (their widths choose the columns).
    pl.xt = make_ticks(p.x, pl.rx.lo, pl.rx.hi, 5);
    pl.yt = make_ticks(p.y, pl.ry.lo, pl.ry.hi, 5);
  }
  // An axis label that every panel of a shared axis has is drawn once for the grid.
  auto common = [&](bool share, bool x) {
    std::string label;
    if (!share || count_ < 2) return label;
    for (const Panel& p : f_.panels) {
      const Axis& a = x ? p.x : p.y;
      if (!a.visible) continue;
      if (a.label.empty() || (!label.empty() && a.label != label)) return std::string();
      label = a.label;
    }
    return label;
  };
  fig_xlabel_ = common(f_.share_x, true);
  fig_ylabel_ = common(f_.share_y, false);
  shared_colorbar();

  // Legend entries per panel, in the colours the series are drawn in.
  for (int i = 0; i < count_; ++i) {
    const Panel& p = f_.panels[i];
    if (!p.legend) continue;
    const SeriesColors colors = series_colors(p);
    auto& e = plans_[i].entries;
    for (size_t k = 0; k < p.polygons.size(); ++k)
      if (!p.polygons[k].name.empty() && p.polygons[k].in_legend)
        e.push_back({p.polygons[k].name, colors.polygons[k], 2, p.polygons[k].style});
    for (size_t k = 0; k < p.lines.size(); ++k)
      if (!p.lines[k].name.empty())
        e.push_back({p.lines[k].name, colors.lines[k], 0, p.lines[k].style});
    for (size_t k = 0; k < p.scatters.size(); ++k)
      if (!p.scatters[k].name.empty())
        e.push_back(
            {p.scatters[k].name, colors.scatters[k], 1, LineStyle::Solid, p.scatters[k].marker});
    plans_[i].legend_in_band = f_.shared_legend;
    if (!f_.shared_legend) fold_legend(e);  // the band folds its own list (band_entries)
  }
  wrap_title();
}

// One colorbar for the figure when every panel that wants one agrees; else one per panel.
void Layout::shared_colorbar() {
  std::vector<const Heatmap*> bars;
  for (const Panel& p : f_.panels)
    if (const Heatmap* h = colorbar_heatmap(p)) bars.push_back(h);
  auto limits = [](const Heatmap* h) {
    double lo, hi;
    value_limits(*h, lo, hi);
    return std::make_pair(lo, hi);
  };
  shared_cbar_ = bars.size() >= 2;
  for (const Heatmap* h : bars)
    shared_cbar_ = shared_cbar_ && h->colormap == bars[0]->colormap &&
                   h->colorbar_label == bars[0]->colorbar_label &&
                   h->colorbar_relative == bars[0]->colorbar_relative &&
                   (h->colorbar_relative || limits(h) == limits(bars[0]));
  auto make_bar = [&](const Heatmap* h, const std::vector<const Heatmap*>& served) {
    Colorbar c;
    c.h = h;
    c.label = colorbar_text(*h);
    if (!h->colorbar_relative) {
      std::tie(c.lo, c.hi) = limits(h);
      c.ticks = make_ticks(Axis{}, c.lo, c.hi, 4);
      return c;
    }
    bool from_zero = true;
    for (const Heatmap* s : served) from_zero = from_zero && limits(s).first == 0;
    c.ticks.values = {0, 1};
    c.ticks.labels = {from_zero ? "0" : "min", "max"};
    return c;
  };
  if (shared_cbar_) {
    cbar_ = make_bar(bars[0], bars);
    return;
  }
  for (int i = 0; i < count_; ++i)
    if (const Heatmap* h = colorbar_heatmap(f_.panels[i])) {
      const Colorbar c = make_bar(h, {h});
      plans_[i].cbar = h, plans_[i].c_lo = c.lo, plans_[i].c_hi = c.hi, plans_[i].ct = c.ticks;
    }
}

// The figure title on as many lines as the page width needs: broken after ", " where that
// fits, else at spaces.
void Layout::wrap_title() {
  figure_title_.clear();
  const double avail = w_ - 2 * m_.pad;
  auto fits = [&](const std::string& s) { return tm_.width(s, m_.title_font) <= avail; };
  std::vector<std::string> words;  // a "word" is a clause when whole clauses fit
  const std::string& t = f_.title;
  for (size_t at = 0; at < t.size();) {
    size_t comma = t.find(", ", at);
    const std::string clause =
        t.substr(at, comma == std::string::npos ? std::string::npos : comma + 1 - at);
    if (fits(clause)) {
      words.push_back(clause);
    } else {
      for (size_t w = 0; w < clause.size();) {
        size_t sp = clause.find(' ', w);
        if (sp == std::string::npos) sp = clause.size();
        if (sp > w) words.push_back(clause.substr(w, sp - w));
        w = sp + 1;
      }
    }
    at = comma == std::string::npos ? t.size() : comma + 2;
  }
  std::string line;
  for (const std::string& word : words) {
    const std::string joined = line.empty() ? word : line + " " + word;
    if (!line.empty() && !fits(joined)) {
      figure_title_.push_back(fitted(line, m_.title_font, avail, tm_));
      line = word;
    } else {
      line = joined;
    }
  }
  if (!line.empty()) figure_title_.push_back(fitted(line, m_.title_font, avail, tm_));
}

void Layout::place(int cols) {
  const int k = (base_cols_ + cols - 1) / cols;  // rows per figure row
  cols_ = (base_cols_ + k - 1) / k;
  int last_row = 0;
  for (int i = 0; i < count_; ++i) {
    const int group = i / base_cols_, j = i % base_cols_;
    plans_[i].row = group * k + j / cols_;
    plans_[i].col = j % cols_;
    last_row = std::max(last_row, plans_[i].row);
  }
  const int groups = (count_ + base_cols_ - 1) / base_cols_;
  rows_ = k == 1 ? std::max(f_.rows, groups) : last_row + 1;
  std::vector<int> at(static_cast<size_t>(rows_) * cols_, -1);
  for (int i = 0; i < count_; ++i)
    at[static_cast<size_t>(plans_[i].row) * cols_ + plans_[i].col] = i;
  for (int i = 0; i < count_; ++i) {
    PanelPlan& pl = plans_[i];
    const Panel& p = f_.panels[i];
    const bool below =
        pl.row + 1 < rows_ && at[static_cast<size_t>(pl.row + 1) * cols_ + pl.col] >= 0;
    pl.xt_labels = p.x.visible && (!f_.share_x || !below);
    pl.yt_labels = p.y.visible && (!f_.share_y || pl.col == 0);
    pl.own_xlabel = pl.xt_labels && fig_xlabel_.empty() && !p.x.label.empty();
    pl.own_ylabel = pl.yt_labels && fig_ylabel_.empty() && !p.y.label.empty();
  }
}

void Layout::margins(Grid& g) const {
  g.left.assign(cols_, 0.0);
  g.right.assign(cols_, 0.0);
  for (int i = 0; i < count_; ++i) {
    const Panel& p = f_.panels[i];
    const PanelPlan& pl = plans_[i];
    double l = 0;
    if (p.y.visible) {
      l = m_.tick_len;
      if (pl.yt_labels) l += 0.25 * m_.font + max_width(pl.yt.labels, m_.tick_font, tm_);
      if (pl.own_ylabel) l += 0.25 * m_.font + line_h(m_.font);
    }
    // Half an x tick label may hang out of the plot at either end of the grid.
    const double half = pl.xt_labels ? 0.5 * max_width(pl.xt.labels, m_.tick_font, tm_) : 0;
    if (pl.col == 0) l = std::max(l, half - m_.pad);
    g.left[pl.col] = std::max(g.left[pl.col], l);
    double r = pl.cbar ? bar_extent(m_, tm_, pl.ct, !colorbar_text(*pl.cbar).empty()) : 0;
    if (pl.col == cols_ - 1) r = std::max(r, half - m_.pad);
    g.right[pl.col] = std::max(g.right[pl.col], r);
  }
  if (!fig_ylabel_.empty()) g.left[0] += line_h(m_.font) + 0.25 * m_.font;
  if (shared_cbar_) g.right[cols_ - 1] += bar_extent(m_, tm_, cbar_.ticks, !cbar_.label.empty());
  double sum = gap_ * (cols_ - 1);
  for (int c = 0; c < cols_; ++c) sum += g.left[c] + g.right[c];
  g.plot_w = std::max(1.0, (w_ - 2 * m_.pad - sum) / cols_);
  g.col_x.assign(cols_, m_.pad);
  for (int c = 1; c < cols_; ++c)
    g.col_x[c] = g.col_x[c - 1] + g.left[c - 1] + g.plot_w + g.right[c - 1] + gap_;
}

double Layout::plot_width() const {
  Grid g;
  margins(g);
  return g.plot_w;
}

int Layout::choose_columns() {
  const double min_w = 5.5 * m_.font;
  for (int c = base_cols_; c >= 1; --c) {
    const int k = (base_cols_ + c - 1) / c;
    if ((base_cols_ + k - 1) / k != c) continue;  // only even wraps
    place(c);
    if (plot_width() >= min_w) return cols_;
  }
  place(1);
  return cols_;
}

int Layout::choose_columns_for_page() {
  const int by_width = choose_columns();
  bool maps = false;
  for (const Panel& p : f_.panels) maps |= p.equal_aspect;
  if (!maps || !(h_ > 0)) return by_width;
  // The width rule alone wraps a wide, short page (a screen tile) into a tall stack of tiny
  // maps. With the height known, take the even wrap whose square plots come out largest, as long
  // as plots keep 4 font sizes of width (what the fit test asks of every plot).
  int best = by_width;
  double best_side = -1;
  for (int c = base_cols_; c >= 1; --c) {
    const int k = (base_cols_ + c - 1) / c;
    if ((base_cols_ + k - 1) / k != c) continue;
    place(c);
    const double pw = plot_width();
    if (pw < 4 * m_.font) continue;
    Grid g;
    rows_extent(g);
    const double side = std::min(pw, (h_ - fixed_height(g)) / rows_);
    if (side > best_side + 1e-9) best_side = side, best = c;
  }
  place(best);
  return best;
}

void Layout::rows_extent(Grid& g) const {
  g.top.assign(rows_, 0.6 * m_.font);
  g.bottom.assign(rows_, 0.2 * m_.font);
  for (int i = 0; i < count_; ++i) {
    const Panel& p = f_.panels[i];
    const PanelPlan& pl = plans_[i];
    if (!p.title.empty()) g.top[pl.row] = std::max(g.top[pl.row], m_.title_font * 1.4);
    double b = 0.2 * m_.font;
    if (p.x.visible) {
      b = pl.xt_labels ? m_.tick_len + line_h(m_.tick_font) + 1 : m_.tick_len + 0.5;
      if (pl.own_xlabel) b += line_h(m_.font) + 0.5;
    }
    if (pl.yt_labels) b = std::max(b, 0.6 * m_.font);  // the lowest y tick label
    g.bottom[pl.row] = std::max(g.bottom[pl.row], b);
  }
}

double Layout::fixed_height(const Grid& g) const {
  double fixed = 2 * m_.pad + title_block() + fig_xlabel_h() + band_height() + vgap_ * (rows_ - 1);
  for (int r = 0; r < rows_; ++r) fixed += g.top[r] + g.bottom[r];
  return fixed;
}

// Panel legends that would cover much of their plot go to the band; true if any moved.
bool Layout::move_legends(double plot_w, double plot_h) {
  bool moved = false;
  for (int i = 0; i < count_; ++i) {
    PanelPlan& pl = plans_[i];
    if (pl.entries.empty() || pl.legend_in_band) continue;
    double pw = plot_w, ph = plot_h;  // an equal-aspect plot shrinks to its data's shape
    const Panel& p = f_.panels[i];
    if (p.equal_aspect) {
      const double dx = log_or_linear(pl.rx.hi, p.x.log) - log_or_linear(pl.rx.lo, p.x.log);
      const double dy = log_or_linear(pl.ry.hi, p.y.log) - log_or_linear(pl.ry.lo, p.y.log);
      const double scale = dx > 0 && dy > 0 ? std::min(plot_w / dx, plot_h / dy) : 0;
      if (scale > 0) pw = dx * scale, ph = dy * scale;
    }
    double text_w = 0;
    for (const auto& e : pl.entries) text_w = std::max(text_w, tm_.width(e.name, m_.tick_font));
    const double w = 0.9 * m_.font + 1.6 * m_.font + text_w;
    const double h = 0.6 * m_.font + m_.tick_font * 1.25 * pl.entries.size();
    if (w > 0.62 * pw || h > 0.62 * ph) pl.legend_in_band = moved = true;
  }
  return moved;
}

void Layout::colorbar_ticks(Colorbar& c, double bar_h) const {
  std::vector<double> pos, ext;
  for (double v : c.ticks.values) {
    pos.push_back(bar_h * (1 - (v - c.lo) / (c.hi - c.lo)));
    ext.push_back(line_h(m_.tick_font));
  }
  thin(c.ticks, pos, ext, 0.1 * m_.font);
}

// Final y ticks for plots `plot_h` tall: the most (up to 6) whose labels keep apart.
void Layout::y_ticks(double plot_h) {
  const int target = std::clamp(static_cast<int>(std::lround(plot_h / (3 * m_.tick_font))), 2, 6);
  for (int i = 0; i < count_; ++i) {
    const Axis& a = f_.panels[i].y;
    PanelPlan& pl = plans_[i];
    PanelLayout probe;
    probe.plot = {0, 0, 1, plot_h};
    probe.ymin = pl.ry.lo, probe.ymax = pl.ry.hi, probe.ylog = a.log, probe.yinverted = a.inverted;
    pl.yt =
        fitted_ticks(a, pl.ry, target, 0.15 * m_.font,
                     [&](const AxisTicks& t, std::vector<double>& pos, std::vector<double>& ext) {
                       for (double v : t.values)
                         pos.push_back(probe.page_y(v)), ext.push_back(line_h(m_.tick_font));
                     });
  }
}

// Final x ticks across the panel's width, then y labels thinned again for its real height (an
// equal-aspect plot may have shrunk).
void Layout::x_ticks(int i, const PanelLayout& L) {
  const Axis& a = f_.panels[i].x;
  PanelPlan& pl = plans_[i];
  const int target = std::clamp(static_cast<int>(std::lround(L.plot.w / (4 * m_.tick_font))), 2, 6);
  pl.xt = fitted_ticks(a, pl.rx, target, 0.35 * m_.font,
                       [&](const AxisTicks& t, std::vector<double>& pos, std::vector<double>& ext) {
                         for (size_t k = 0; k < t.values.size(); ++k) {
                           pos.push_back(L.page_x(t.values[k]));
                           ext.push_back(tm_.width(t.labels[k], m_.tick_font));
                         }
                       });
  std::vector<double> pos, ext;
  for (double v : pl.yt.values) pos.push_back(L.page_y(v)), ext.push_back(line_h(m_.tick_font));
  thin(pl.yt, pos, ext, 0.15 * m_.font);
  if (!f_.panels[i].y.ticks.empty()) drop_unlabelled(pl.yt);
}

void Layout::panel_rects(const Grid& g) {
  for (int i = 0; i < count_; ++i) {
    const Panel& p = f_.panels[i];
    PanelPlan& pl = plans_[i];
    PanelLayout& L = out_.panels[i];
    Rect plot{g.col_x[pl.col] + g.left[pl.col], g.row_y[pl.row] + g.top[pl.row], g.plot_w,
              g.plot_h};
    L.row = pl.row, L.col = pl.col;
    L.xmin = pl.rx.lo, L.xmax = pl.rx.hi, L.ymin = pl.ry.lo, L.ymax = pl.ry.hi;
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
    x_ticks(i, L);
    L.xticks = pl.xt.values, L.yticks = pl.yt.values;
    if (pl.cbar) {
      L.colorbar.bar = {plot.x + plot.w + m_.pad, plot.y, m_.bar_w, plot.h};
      L.colorbar.vmin = pl.c_lo, L.colorbar.vmax = pl.c_hi;
      L.colorbar.colormap = pl.cbar->colormap;
      Colorbar c{pl.cbar, pl.c_lo, pl.c_hi, pl.ct, colorbar_text(*pl.cbar)};
      colorbar_ticks(c, plot.h);
      pl.ct = c.ticks;
      L.colorbar.ticks = pl.ct.values;
    }
  }
  if (!shared_cbar_) return;
  // The shared colorbar: right of the grid, as tall as the maps it serves.
  double y0 = 1e300, y1 = -1e300;
  for (int i = 0; i < count_; ++i)
    if (colorbar_heatmap(f_.panels[i])) {
      const Rect& r = out_.panels[i].plot;
      y0 = std::min(y0, r.y), y1 = std::max(y1, r.y + r.h);
    }
  double x1 = g.col_x[cols_ - 1] + g.left[cols_ - 1] + g.plot_w;
  for (const PanelLayout& L : out_.panels) x1 = std::max(x1, L.plot.x + L.plot.w);
  out_.colorbar.bar = {x1 + m_.pad, y0, m_.bar_w, y1 - y0};
  out_.colorbar.vmin = cbar_.lo, out_.colorbar.vmax = cbar_.hi;
  out_.colorbar.colormap = cbar_.h->colormap;
  colorbar_ticks(cbar_, y1 - y0);
  out_.colorbar.ticks = cbar_.ticks.values;
}

FigureLayout Layout::run() {
  out_ = {};
  out_.width_pt = w_, out_.height_pt = h_;
  out_.panels.resize(count_);
  if (count_ == 0) {  // the title alone (a figure that could not be built says why there)
    place_title();
    return out_;
  }
  choose_columns_for_page();
  out_.rows = rows_, out_.cols = cols_;
  Grid g;
  // Rows, sized again when legends move to the band below the grid (it takes height).
  for (int pass = 0; pass < 4; ++pass) {
    rows_extent(g);
    g.plot_h = std::max(1.0, (h_ - fixed_height(g)) / rows_);
    y_ticks(g.plot_h);
    if (!move_legends(plot_width(), g.plot_h)) break;
  }
  margins(g);
  g.row_y.assign(rows_, m_.pad + title_block());
  for (int r = 1; r < rows_; ++r)
    g.row_y[r] = g.row_y[r - 1] + g.top[r - 1] + g.plot_h + g.bottom[r - 1] + vgap_;
  g.grid_bottom = g.row_y[rows_ - 1] + g.top[rows_ - 1] + g.plot_h + g.bottom[rows_ - 1];
  panel_rects(g);
  place_texts(g);
  resolve_collisions();
  return out_;
}

double Layout::natural_height() {
  const double by_aspect = w_ * f_.aspect;
  if (count_ == 0) return by_aspect;
  const bool wrapped = choose_columns() < base_cols_;
  // The shape plots take by nature: equal-aspect maps their data's, line plots kLineAspect.
  double shape = 0;
  for (int i = 0; i < count_; ++i) {
    const Panel& p = f_.panels[i];
    const PanelPlan& pl = plans_[i];
    double r = kLineAspect;
    if (p.equal_aspect) {
      const double dx = log_or_linear(pl.rx.hi, p.x.log) - log_or_linear(pl.rx.lo, p.x.log);
      const double dy = log_or_linear(pl.ry.hi, p.y.log) - log_or_linear(pl.ry.lo, p.y.log);
      r = dx > 0 && dy > 0 ? std::clamp(dy / dx, 0.3, 2.0) : 1.0;
    }
    shape = std::max(shape, r);
  }
  Grid g;
  const double plot_w = plot_width();
  double plot_h = 1;
  for (int pass = 0; pass < 4; ++pass) {  // legends moving to the band take height
    rows_extent(g);
    plot_h = wrapped ? plot_w * shape : (by_aspect - fixed_height(g)) / rows_;
    if (!move_legends(plot_w, plot_h)) break;
  }
  const double least = std::max(4.5 * m_.font, std::min(6 * m_.font, plot_w * shape));
  if (!wrapped && plot_h >= least) return by_aspect;
  plot_h = std::max(plot_h, least);
  move_legends(plot_w, plot_h);
  rows_extent(g);
  return fixed_height(g) + rows_ * plot_h;
}

}  // namespace detail

FigureLayout layout_figure(const Figure& figure, const Page& page, const TextMetrics& tm) {
  detail::Layout l(figure, page.width_pt, page.height_pt, page.font_pt, tm);
  l.prepare();
  return l.run();
}

int grid_columns(const Figure& figure, double width_pt, double font_pt, const TextMetrics& tm) {
  if (figure.panels.empty()) return std::max(1, figure.cols);
  detail::Layout l(figure, width_pt, 0, font_pt, tm);
  l.prepare();
  return l.choose_columns();
}

double natural_height(const Figure& figure, double width_pt, double font_pt,
                      const TextMetrics& tm) {
  detail::Layout l(figure, width_pt, 0, font_pt, tm);
  l.prepare();
  return l.natural_height();
}

}  // namespace attn::fig
