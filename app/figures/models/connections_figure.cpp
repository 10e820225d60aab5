#include "app/figures/models/connections_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/base/error.h"
#include "render/plot/colormap.h"
#include "render/plot/plot_math.h"

namespace attn::figures {
namespace {

constexpr double kCurveWidth = 2.0;  // pt: the chosen frame's curves
constexpr double kFadedWidth = 0.75;
const char* const kMinus = "\xe2\x88\x92";  // U+2212, as the figures' own tick labels
const char* const kBeta = "\xce\xb2";       // U+03B2

fig::Color head_color(int h, float alpha = 1.0f) {
  fig::Color c = fig::Color::from(render::okabe_ito(h));
  c.a = alpha;
  return c;
}

std::string offset_label(int offset) {
  return offset < 0 ? kMinus + std::to_string(-offset) : std::to_string(offset);
}

// The t axis's label: where the current token is, under one or two plots a row; "t" under more
// (the guide line still marks it).
std::string t_axis_label(const ConnectionCurves& c, int plots_in_row) {
  if (plots_in_row > 2) return "t";
  char buf[64];
  std::snprintf(buf, sizeof buf, "t (%.3g = current token)",
                static_cast<double>(c.query_slot) / (c.window - 1));
  return buf;
}

const ConnectionCurves* find_layer(const ConnectionFrame& f, int layer) {
  for (const ConnectionCurves& c : f.layers)
    if (c.layer == layer) return &c;
  return nullptr;
}

bool same_shape(const ConnectionCurves& a, const ConnectionCurves& b) {
  return a.heads == b.heads && a.window == b.window && a.t.size() == b.t.size();
}

// One plot of the grid: a layer's heads [first, last).
struct Group {
  const ConnectionCurves* curves;
  int first, last;
};

// What every panel of one figure shares: the chosen frame, its layers, the faded frames, the
// ranges and the grid.
struct Build {
  const std::vector<ConnectionFrame>& history;
  const ConnectionsOptions& o;
  int index = 0;                                // the chosen frame
  std::vector<const ConnectionCurves*> layers;  // its layers shown
  std::vector<int> faded;                       // earlier frames drawn faded
  render::Range y{};                            // g's range, every plot
  float beta_max = 0;
  double pad = 0;  // the t axis's padding
  std::vector<Group> groups;
  int cols = 1, group_rows = 1;
  bool one_layer = true;
  ConnectionsFigure out;

  const ConnectionFrame& frame() const { return history[index]; }
  // The same layer in an earlier frame, when it has the chosen one's shape.
  const ConnectionCurves* faded_curves(int frame_index, const ConnectionCurves& now) const {
    const ConnectionCurves* c = find_layer(history[frame_index], now.layer);
    return c && well_formed(*c) && same_shape(*c, now) ? c : nullptr;
  }
};

}  // namespace

bool well_formed(const ConnectionCurves& c) {
  const size_t h = static_cast<size_t>(std::max(0, c.heads));
  const size_t w = static_cast<size_t>(std::max(0, c.window));
  return c.heads > 0 && c.window >= 2 && c.t.size() >= 2 && c.g.size() == h * c.t.size() &&
         c.slot_g.size() == h * w && c.beta.size() == h * w;
}

bool connections_available(const std::vector<MechanismFrame>& history) {
  return has_ky_views(history);
}

double connections_t_pad(int window) {
  return std::clamp(0.5 / (window - 1), 0.04, 0.1);
}

namespace {

// The frame at or before o.step and its layers to show (throws naming what is missing).
void choose(Build& b) {
  const auto& history = b.history;
  const ConnectionsOptions& o = b.o;
  if (history.empty() || history.back().layers.empty())
    throw Error("the run has no ky layers, so no connection functions g_h(t)");
  b.index = static_cast<int>(history.size()) - 1;
  if (o.step >= 0) {
    while (b.index >= 0 && history[b.index].step > o.step) --b.index;
    if (b.index < 0)
      throw Error("--step " + std::to_string(o.step) +
                  ": the first recorded connection frame is at step " +
                  std::to_string(history.front().step));
  }
  std::string have;
  for (const ConnectionCurves& c : b.frame().layers) {
    have += (have.empty() ? "" : ", ") + std::to_string(c.layer);
    if ((o.layer < 0 || c.layer == o.layer) && well_formed(c)) b.layers.push_back(&c);
  }
  if (b.layers.empty())
    throw Error(o.layer >= 0 && !find_layer(b.frame(), o.layer)
                    ? "layer " + std::to_string(o.layer) + " has no connection functions at step " +
                          std::to_string(b.frame().step) + " (its ky layers: " + have + ")"
                    : "the connection data at step " + std::to_string(b.frame().step) +
                          " is malformed (array sizes)");
  // Earlier frames, evenly spaced from the first up to before this one.
  const int history_n = std::clamp(o.history, 0, kMaxConnectionHistory);
  for (int i = 0, m = std::min(history_n, b.index); i < m; ++i)
    b.faded.push_back(static_cast<int>(static_cast<int64_t>(i) * b.index / m));
}

// One y range for every plot, faded curves included; bars up to at least twice the uniform
// share 1/W, so near-uniform weights read as half-height bars at the uniform line.
void measure(Build& b) {
  b.y = render::value_range(b.layers[0]->g.data(), 0);
  for (const ConnectionCurves* c : b.layers) {
    b.y = render::merge(b.y, render::value_range(c->g.data(), c->g.size()));
    b.y = render::merge(b.y, render::value_range(c->slot_g.data(), c->slot_g.size()));
    for (int f : b.faded)
      if (const ConnectionCurves* old = b.faded_curves(f, *c))
        b.y = render::merge(b.y, render::value_range(old->g.data(), old->g.size()));
    b.beta_max = std::max(b.beta_max, std::min(1.0f, 2.0f / c->window));
    for (float v : c->beta)
      if (std::isfinite(v)) b.beta_max = std::max(b.beta_max, v);
    b.pad = std::max(b.pad, connections_t_pad(c->window));
  }
  b.y = render::padded(b.y, 0.08, false);
}

// The plots (a layer, or a head of it, each), the grid and the figure's title and layout.
void lay_out(Build& b) {
  const ConnectionsOptions& o = b.o;
  for (const ConnectionCurves* c : b.layers) {
    if (o.overlaid)
      b.groups.push_back({c, 0, c->heads});
    else
      for (int h = 0; h < c->heads; ++h) b.groups.push_back({c, h, h + 1});
  }
  const int n = static_cast<int>(b.groups.size());
  int cols = o.cols;
  if (cols <= 0) cols = o.overlaid ? std::min(2, n) : static_cast<int>(std::ceil(std::sqrt(n)));
  cols = std::clamp(cols, 1, n);
  // Panels fill the grid row by row: with the beta row every row must be full, so that each bar
  // plot sits under its curves.
  while (o.beta && n % cols != 0) --cols;
  b.cols = cols;
  b.group_rows = (n + cols - 1) / cols;
  b.one_layer = b.layers.size() == 1;

  fig::Figure& f = b.out.figure;
  f.name = "connections";
  f.step = b.frame().step;
  // Short enough for one line of a single-column page (3.5 in): "g_h(t) and beta_h, layers 0,
  // 1, step 6000"; the axes and the legend say the rest (beta's formula is in the contract).
  const std::string what =
      o.beta ? std::string("g_h(t) and ") + kBeta + "_h" : "Connections g_h(t)";
  if (b.one_layer) {
    const ConnectionCurves& c = *b.layers[0];
    f.title = what + ", layer " + std::to_string(c.layer) + " (W " + std::to_string(c.window) +
              ", " + (c.causal ? "causal" : "centred") + "), step " + std::to_string(f.step);
  } else {
    std::string names;
    for (const ConnectionCurves* c : b.layers)
      names += (names.empty() ? "" : ", ") + std::to_string(c->layer);
    f.title = what + ", layers " + names + ", step " + std::to_string(f.step);
  }
  f.cols = cols;
  f.rows = b.group_rows * (o.beta ? 2 : 1);
  // Without the beta row every plot shows g on one t and one g range: labelled once.
  f.share_x = f.share_y = !o.beta;
  f.shared_legend = o.overlaid && !b.one_layer;  // the same heads in every layer: one legend
  f.aspect = 0.62 * f.rows / f.cols + 0.12;
}

fig::LineSeries curve_line(const ConnectionCurves& c, int h) {
  fig::LineSeries l;
  const float* v = c.curve(h);
  for (size_t k = 0; k < c.t.size(); ++k) l.x.push_back(c.t[k]), l.y.push_back(v[k]);
  return l;
}

void curves_panel(Build& b, const Group& g) {
  const ConnectionsOptions& o = b.o;
  const ConnectionCurves& c = *g.curves;
  const int window = c.window;
  const double query_t = static_cast<double>(c.query_slot) / (window - 1);
  fig::Panel p;
  const std::string layer_name = "layer " + std::to_string(c.layer);
  if (o.overlaid) {
    if (!b.one_layer) p.title = layer_name;
  } else {
    p.title = (b.one_layer ? "" : layer_name + " ") + "head " + std::to_string(g.first);
    p.short_title =
        (b.one_layer ? "" : "L" + std::to_string(c.layer) + " ") + "h" + std::to_string(g.first);
  }
  p.x.min = -b.pad, p.x.max = 1 + b.pad;
  p.x.label = t_axis_label(c, o.beta ? b.cols : 1);
  p.y.min = b.y.lo, p.y.max = b.y.hi;
  p.y.label = "g_h(t)";
  p.grid = true;
  p.legend = o.overlaid;
  p.lines.push_back({"",
                     {query_t, query_t},
                     {b.y.lo, b.y.hi},
                     fig::Color::rgb(0.5f, 0.5f, 0.5f, 0.5f),
                     0.75,
                     fig::LineStyle::Solid});
  for (size_t i = 0; i < b.faded.size(); ++i) {
    const ConnectionCurves* old = b.faded_curves(b.faded[i], c);
    if (!old) continue;
    const float alpha = 0.08f + 0.32f * static_cast<float>(i + 1) / b.faded.size();
    for (int h = g.first; h < g.last; ++h) {
      fig::LineSeries l = curve_line(*old, h);
      l.color = head_color(h, alpha);
      l.width_pt = kFadedWidth;
      p.lines.push_back(std::move(l));
      ++b.out.faded;
    }
  }
  const double dot_pt = std::clamp(40.0 / window, 2.0, 4.5);
  for (int h = g.first; h < g.last; ++h) {
    fig::LineSeries l = curve_line(c, h);
    l.name = "head " + std::to_string(h);
    l.color = head_color(h);
    l.width_pt = kCurveWidth;
    p.lines.push_back(std::move(l));
    fig::ScatterSeries dots;
    const float* sv = c.slot_values(h);
    for (int j = 0; j < window; ++j)
      dots.x.push_back(static_cast<double>(j) / (window - 1)), dots.y.push_back(sv[j]);
    dots.color = head_color(h);
    dots.size_pt = dot_pt;
    p.scatters.push_back(std::move(dots));
    ++b.out.curves;
  }
  b.out.figure.panels.push_back(std::move(p));
  b.out.roles.push_back({c.layer, false, g.first, g.last});
}

void beta_panel(Build& b, const Group& g) {
  const ConnectionCurves& c = *g.curves;
  const int window = c.window;
  const double pad = b.pad;
  fig::Panel p;
  p.x.min = -pad, p.x.max = 1 + pad;
  p.x.label = "key offset i " + std::string(kMinus) + " j";
  for (int j = 0; j < window; ++j)
    p.x.ticks.push_back({static_cast<double>(j) / (window - 1), offset_label(c.query_slot - j)});
  p.y.min = 0, p.y.max = b.beta_max;
  p.y.label = kBeta;
  p.legend = false;
  // Bars centred on the slots (grouped by head when overlaid), inside the padded range.
  const int group = g.last - g.first;
  const double slot = 1.0 / (window - 1);
  const double group_w = std::min(slot * (group > 1 ? 0.8 : 0.6), 2 * pad);
  const double bar_w = group_w / group;
  for (int j = 0; j < window; ++j) {
    const double x0 = j * slot - group_w / 2;
    for (int h = g.first; h < g.last; ++h) {
      const float v = c.beta_values(h)[j];
      if (!std::isfinite(v)) continue;
      const double l = x0 + (h - g.first) * bar_w, r = l + bar_w * (group > 1 ? 0.85 : 1.0);
      const double top = std::clamp<double>(v, 0.0, b.beta_max);
      fig::Polygon bar;
      // Named for the CSV export (the beta plots have no legend).
      bar.name = (b.one_layer ? "" : "layer " + std::to_string(c.layer) + " ") + "beta head " +
                 std::to_string(h) + " slot " + std::to_string(j);
      bar.x = {l, r, r, l};
      bar.y = {0, 0, top, top};
      bar.stroke = bar.fill = head_color(h);
      bar.width_pt = 0;
      p.polygons.push_back(std::move(bar));
    }
  }
  p.lines.push_back({"",
                     {-pad, 1 + pad},
                     {1.0 / window, 1.0 / window},
                     fig::Color::rgb(0.55f, 0.55f, 0.55f),
                     0.75,
                     fig::LineStyle::Dashed});
  b.out.figure.panels.push_back(std::move(p));
  b.out.roles.push_back({c.layer, true, g.first, g.last});
}

}  // namespace

ConnectionsFigure build_connections_figure(const std::vector<ConnectionFrame>& history,
                                           const ConnectionsOptions& o) {
  Build b{history, o};
  choose(b);
  measure(b);
  lay_out(b);
  b.out.frame = b.index;
  b.out.step = b.frame().step;
  const int n = static_cast<int>(b.groups.size());
  for (int r = 0; r < b.group_rows; ++r) {
    const int begin = r * b.cols, end = std::min(n, begin + b.cols);
    for (int g = begin; g < end; ++g) curves_panel(b, b.groups[g]);
    if (o.beta)
      for (int g = begin; g < end; ++g) beta_panel(b, b.groups[g]);
  }
  return std::move(b.out);
}

ConnectionsFigure build_connections_figure(const std::vector<MechanismFrame>& history,
                                           const ConnectionsOptions& o) {
  return build_connections_figure(connection_frames_of(history), o);
}

}  // namespace attn::figures
