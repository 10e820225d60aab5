// Builders for the Connection Transformer, Neural Attention's score surface and the geometry of
// softmax attention.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/figures/figures.h"
#include "app/figures/intervention_figures.h"
#include "core/base/error.h"
#include "core/views/conn_view.h"
#include "core/attention/neural/neural_view.h"
#include "render/plot/colormap.h"
#include "render/plot/plot_math.h"

namespace attn::figures {
namespace {

const ConnView& conn_of(const Snapshot& s) {
  if (!s.conn) throw Error("the run is not a Connection Transformer (model.architecture conn)");
  return *s.conn;
}

fig::Polygon circle_polygon(double r, const std::string& name, fig::Color c, fig::LineStyle st) {
  fig::Polygon g;
  g.name = name;
  for (int i = 0; i < 256; ++i) {
    const double a = 2 * M_PI * i / 256;
    g.x.push_back(r * std::cos(a)), g.y.push_back(r * std::sin(a));
  }
  g.stroke = c;
  g.width_pt = 0.75;
  g.style = st;
  return g;
}

// Contour lines of a grid x grid field over xs/ys as one NaN-separated line series.
fig::LineSeries contours(const std::vector<float>& z, const std::vector<float>& xs,
                         const std::vector<float>& ys, int levels, fig::Color c) {
  fig::LineSeries l;
  l.color = c;
  l.width_pt = 0.5;
  const int n = static_cast<int>(xs.size());
  if (n < 2 || static_cast<int>(ys.size()) != n || static_cast<int>(z.size()) != n * n) return l;
  const render::Range r = render::value_range(z.data(), z.size());
  if (r.empty() || !(r.hi > r.lo)) return l;
  auto at = [](const std::vector<float>& v, float idx) {
    const int i = std::clamp(static_cast<int>(idx), 0, static_cast<int>(v.size()) - 2);
    return v[i] + (idx - i) * (v[i + 1] - v[i]);
  };
  for (int k = 1; k <= levels; ++k) {
    const double level = r.lo + (r.hi - r.lo) * k / (levels + 1);
    for (const auto& seg : render::contour_segments(z.data(), n, n, level)) {
      l.x.push_back(at(xs, seg.x0)), l.y.push_back(at(ys, seg.y0));
      l.x.push_back(at(xs, seg.x1)), l.y.push_back(at(ys, seg.y1));
      l.x.push_back(NAN), l.y.push_back(NAN);
    }
  }
  return l;
}

}  // namespace

fig::Figure conn_matrix_figure(const Snapshot& s) {
  const ConnView& v = conn_of(s);
  if (!v.matrix || v.matrix->empty()) throw Error("C has not been recorded yet");
  fig::Panel p = fig::matrix_panel("slot j (receives)", "slot i (sends)");
  fig::Heatmap h = fig::square_heatmap("C", v.slots, *v.matrix);
  h.colormap = render::Colormap::Diverging;
  h.colorbar_label = "C_ij";
  p.heatmaps.push_back(h);
  const int64_t step = v.matrix_step < 0 ? s.step : v.matrix_step;
  fig::Figure f = fig::single_panel_figure(
      "conn-matrix", "Connection matrix C, step " + std::to_string(step), std::move(p), 0.85);
  f.step = step;
  return f;
}

fig::Figure conn_eigenvalues_figure(const Snapshot& s) {
  const ConnView& v = conn_of(s);
  if (v.eigen_re.empty()) throw Error("the eigenvalues of I + C have not been computed yet");
  fig::Panel p = fig::axes_panel("Re \xce\xbb", "Im \xce\xbb", true);
  p.equal_aspect = true;
  p.polygons.push_back(
      circle_polygon(1.0, "unit circle", fig::Color::rgb(0.3f, 0.3f, 0.3f), fig::LineStyle::Solid));
  if (v.control != "none" && v.limit > 0)
    p.polygons.push_back(
        circle_polygon(v.limit, "limit r = " + std::to_string(v.limit).substr(0, 4),
                       fig::Color::from(render::okabe_ito(5)), fig::LineStyle::Dashed));
  fig::ScatterSeries eig;
  eig.name = "eigenvalues";
  for (size_t i = 0; i < v.eigen_re.size(); ++i)
    eig.x.push_back(v.eigen_re[i]), eig.y.push_back(v.eigen_im[i]);
  eig.color = fig::Color::from(render::okabe_ito(0));
  eig.size_pt = 3;
  p.scatters.push_back(eig);
  char title[96];
  std::snprintf(title, sizeof title, "Eigenvalues of I + C, step %lld (rho = %.3f)",
                static_cast<long long>(v.eigen_step), v.exact_radius);
  fig::Figure f = fig::single_panel_figure("conn-eigenvalues", title, std::move(p), 0.9);
  f.step = v.eigen_step;
  return f;
}

fig::Figure conn_spectral_figure(const Snapshot& s) {
  const ConnView& v = conn_of(s);
  if (v.spectral_radius.empty()) throw Error("no spectral measurements recorded (tracking off?)");
  fig::Panel p = fig::axes_panel("step", "value", true);
  auto to_line = [](const Series& se, const std::string& name, int colour) {
    fig::LineSeries l = line_from(se, name);
    l.color = fig::Color::from(render::okabe_ito(colour));
    return l;
  };
  p.lines.push_back(to_line(v.spectral_radius, "rho(I + C)", 0));
  if (!v.spectral_norm.empty()) p.lines.push_back(to_line(v.spectral_norm, "||I + C||_2", 1));
  const double x0 = v.spectral_radius.steps.front(), x1 = v.spectral_radius.steps.back();
  p.lines.push_back(
      {"1", {x0, x1}, {1.0, 1.0}, fig::Color::rgb(0.4f, 0.4f, 0.4f), 0.75, fig::LineStyle::Dotted});
  if (v.control != "none" && v.limit > 0)
    p.lines.push_back({"limit r",
                       {x0, x1},
                       {v.limit, v.limit},
                       fig::Color::from(render::okabe_ito(5)),
                       0.75,
                       fig::LineStyle::Dashed});
  return fig::single_panel_figure("conn-spectral",
                                  "Spectral radius and norm of I + C (control: " + v.control + ")",
                                  std::move(p));
}

bool has_conn_trace(const Snapshot& s) {
  return s.conn && s.conn->slots > 0 && s.conn->trace.size() >= static_cast<size_t>(s.conn->slots);
}

fig::Figure conn_trace_figure(const Snapshot& s) {
  const ConnView& v = conn_of(s);
  if (!has_conn_trace(s)) throw Error("the reasoning trace has not been recorded yet (no probe)");
  const int n = v.slots, rows = static_cast<int>(v.trace.size()) / n;
  fig::Figure f;
  f.name = "conn-trace";
  f.title = "Reasoning trace of the probe, step " + std::to_string(v.trace_step);
  f.step = v.trace_step;
  fig::Panel p = fig::axes_panel("step k (0: after compression)", "slot-state norm", true);
  if (rows <= 12)
    for (int k = 0; k < rows; ++k) p.x.ticks.push_back({double(k), std::to_string(k)});
  if (rows == 1) p.x.min = -0.5, p.x.max = 0.5;  // else fitted: the end markers show whole
  fig::LineSeries slots{
      "slots", {}, {}, fig::Color::from(render::okabe_ito(4)), 0.5, fig::LineStyle::Solid};
  fig::LineSeries mean{"mean over slots",    {}, {}, fig::Color::from(render::okabe_ito(1)), 1.75,
                       fig::LineStyle::Solid};
  double top = 0;
  for (int slot = 0; slot < n; ++slot) {
    for (int k = 0; k < rows; ++k) {
      const double x = v.trace[static_cast<size_t>(k) * n + slot];
      slots.x.push_back(k), slots.y.push_back(x);
      if (std::isfinite(x)) top = std::max(top, x);
    }
    slots.x.push_back(NAN), slots.y.push_back(NAN);
  }
  for (int k = 0; k < rows; ++k) {
    double sum = 0;
    for (int slot = 0; slot < n; ++slot) sum += v.trace[static_cast<size_t>(k) * n + slot];
    mean.x.push_back(k), mean.y.push_back(sum / n);
  }
  p.y.min = 0;
  p.y.max = top > 0 ? top * 1.06 : 1;
  p.lines = {slots, mean};
  fig::ScatterSeries dots{"", mean.x, mean.y, {}, mean.color, 4.0, fig::Marker::Circle};
  p.scatters.push_back(dots);
  f.panels.push_back(p);
  return f;
}

fig::Figure neural_surface_figure(const Snapshot& s) {
  const auto view = neural_view_of(s.mechanism_history());
  if (!view)
    throw Error("neural-surface needs a neural layer with d' = 2 (model.neural.reduced_dim 2)");
  return neural_surface_figure(*view);
}

fig::Figure neural_surface_figure(const NeuralView& view) {
  if (!view.surface.available)
    throw Error("neural-surface needs a neural layer with d' = 2 (model.neural.reduced_dim 2)");
  const NeuralScoreSurface& sf = view.surface;
  fig::Figure f;
  f.name = "neural-surface";
  f.step = view.step;
  f.title = "Neural Attention score surface, layer " + std::to_string(sf.layer) + ", head " +
            std::to_string(sf.head) + ", step " + std::to_string(view.step);
  f.cols = 3;
  f.aspect = 0.38;
  auto surface_panel = [&](const std::vector<float>& z, const std::string& title,
                           const std::string& name) {
    fig::Panel p = fig::axes_panel("x", "y");
    p.title = title;
    p.equal_aspect = true;
    p.legend = false;
    fig::Heatmap h;
    h.name = name;
    h.rows = h.cols = sf.grid;
    h.values = z;
    // Sample centres xs[0]..xs[n-1]: the cells extend half a spacing beyond them.
    const double dx = sf.grid > 1 ? (sf.xs.back() - sf.xs.front()) / (sf.grid - 1) : 1;
    const double dy = sf.grid > 1 ? (sf.ys.back() - sf.ys.front()) / (sf.grid - 1) : 1;
    h.x0 = sf.xs.front() - dx / 2, h.x1 = sf.xs.back() + dx / 2;
    h.y0 = sf.ys.front() - dy / 2, h.y1 = sf.ys.back() + dy / 2;
    h.colormap = render::Colormap::Magma;
    h.colorbar_label = "score";
    p.heatmaps.push_back(h);
    p.lines.push_back(contours(z, sf.xs, sf.ys, 7, fig::Color::rgb(1, 1, 1, 0.7f)));
    return p;
  };
  f.panels.push_back(surface_panel(sf.learned, "learned z(x, y)", "learned"));
  f.panels.back().short_title = "learned z";
  f.panels.push_back(surface_panel(sf.paraboloid, "x\xc2\xb2 + y\xc2\xb2", "paraboloid"));
  fig::Panel slice = fig::axes_panel("t", "score", true);
  slice.title = "slice along the key";
  slice.short_title = "slice";
  fig::LineSeries learned{"learned", {}, {}, {}, 1.25, fig::LineStyle::Solid};
  fig::LineSeries dot{"q'\xc2\xb7k'", {}, {}, {}, 1.0, fig::LineStyle::Dashed};
  for (size_t i = 0; i < sf.slice_t.size(); ++i) {
    learned.x.push_back(sf.slice_t[i]), learned.y.push_back(sf.slice_learned[i]);
    dot.x.push_back(sf.slice_t[i]), dot.y.push_back(sf.slice_dot[i]);
  }
  slice.lines = {learned, dot};
  f.panels.push_back(slice);
  return f;
}

namespace {

std::string short_number(double v) {  // 3 significant digits, as the screen's labels
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// A closed curve through `points` (the first point again at the end), dashed when `dashed`.
fig::LineSeries closed_line(const std::vector<geometry::Vec2>& points, const std::string& name,
                            fig::Color color, double width, bool dashed = false) {
  fig::LineSeries l{name,  {},    {},
                    color, width, dashed ? fig::LineStyle::Dashed : fig::LineStyle::Solid};
  for (const geometry::Vec2& v : points) l.x.push_back(v.x), l.y.push_back(v.y);
  if (!l.x.empty()) l.x.push_back(l.x.front()), l.y.push_back(l.y.front());
  return l;
}

// The warped grid as one line, its grid lines separated by NaN points.
fig::LineSeries warped_grid_line(const GeometryFigureInput& in) {
  fig::LineSeries grid{"warped grid",        {}, {}, fig::Color::rgb(0.6f, 0.6f, 0.65f, 0.8f), 0.5,
                       fig::LineStyle::Solid};
  for (const auto& line : geometry::warp_grid(in.scene, in.grid, in.map, in.alpha)) {
    for (const auto& v : line) grid.x.push_back(v.x), grid.y.push_back(v.y);
    grid.x.push_back(NAN), grid.y.push_back(NAN);
  }
  return grid;
}

// The convex hull of the value points, filled, and their bounding box, dashed.
void add_hull(fig::Panel& p, const std::vector<geometry::Vec2>& values) {
  fig::Polygon hull;
  hull.name = "convex hull of values";
  for (const auto& v : geometry::convex_hull(values)) hull.x.push_back(v.x), hull.y.push_back(v.y);
  hull.stroke = fig::Color::from(render::okabe_ito(0));
  hull.fill = fig::Color::rgb(0.0f, 0.447f, 0.698f, 0.12f);
  p.polygons.push_back(hull);
  const geometry::Box box = geometry::bounding_box(values);
  fig::Polygon frame;
  frame.name = "bounding box";
  frame.x = {box.min.x, box.max.x, box.max.x, box.min.x};
  frame.y = {box.min.y, box.min.y, box.max.y, box.max.y};
  frame.stroke = fig::Color::rgb(0.55f, 0.55f, 0.6f);
  frame.style = fig::LineStyle::Dashed;
  p.polygons.push_back(frame);
}

// The images of the query circles (radius k/count of the largest), largest last (the screen's
// order): under the map without softmax with the predicted ellipses, and under softmax with the
// exact tilted means of continuous tokens.
void add_query_circles(fig::Panel& p, const GeometryFigureInput& in) {
  using namespace geometry;
  const GeometryFigureInput::Views& views = in.views;
  const int count = in.circle_radius > 0 ? std::max(1, in.circle_count) : 0;
  for (int k = 1; k <= count && (views.circles || views.linear); ++k) {
    const double r = in.circle_radius * k / count;
    const auto ring = circle(r, std::max(8, in.circle_samples));
    const std::string which = count > 1 ? " (r = " + short_number(r) + ")" : "";
    if (views.linear) {
      p.lines.push_back(closed_line(map_points(in.scene, ring, Map::Linear),
                                    "linear image of the query circle" + which,
                                    fig::Color::from(render::okabe_ito(2)), 1.5));
      const Ellipse e = predicted_linear_image(in.scene, r);
      fig::Polygon ell;
      ell.name = "predicted ellipse" + which;
      for (int i = 0; i < 128; ++i) {
        const Vec2 v = e.point(2 * M_PI * i / 128);
        ell.x.push_back(v.x), ell.y.push_back(v.y);
      }
      ell.stroke = fig::Color::from(render::okabe_ito(1));
      ell.style = fig::LineStyle::Dashed;
      p.polygons.push_back(ell);
    }
    if (!views.circles) continue;
    p.lines.push_back(closed_line(map_points(in.scene, ring, Map::Softmax),
                                  "softmax image of the query circle" + which,
                                  fig::Color::from(render::okabe_ito(5)), 1.0));
    if (!in.gaussian) continue;
    std::vector<Vec2> tilted;
    for (const Vec2& v : ring) tilted.push_back(gaussian_tilted_mean(*in.gaussian, in.scene, v));
    p.lines.push_back(closed_line(tilted, "exact tilted mean" + which,
                                  fig::Color::rgb(0.55f, 0.55f, 0.6f), 1.0, /*dashed=*/true));
  }
}

// z's weight lines to the values, the tokens t_j (and the values W^V t_j when they differ), the
// query v and the output z.
void add_points(fig::Panel& p, const GeometryFigureInput& in,
                const std::vector<geometry::Vec2>& values) {
  const int n = static_cast<int>(values.size());
  std::vector<double> weights;
  const geometry::Vec2 out = geometry::attend(in.scene, in.query, &weights);
  if (in.views.output && n <= kGeometryMaxWeightLines && !in.gaussian)
    // z to each value, as opaque and wide as its weight (the screen also prints the weights on
    // the lines; on a page they would cover the token labels).
    for (int j = 0; j < n; ++j) {
      const float w = static_cast<float>(weights[j]);
      fig::Color c = fig::Color::from(render::okabe_ito(j));
      c.a = 0.3f + 0.7f * w;
      p.lines.push_back({"",
                         {out.x, values[j].x},
                         {out.y, values[j].y},
                         c,
                         0.5 + 3.0 * w,
                         fig::LineStyle::Solid});
    }
  const bool labelled = n <= kGeometryMaxLabelledTokens && !in.gaussian;
  fig::ScatterSeries tokens{in.gaussian ? "sampled tokens t_j" : "tokens t_j",
                            {},
                            {},
                            {},
                            fig::Color::from(render::okabe_ito(0)),
                            in.gaussian ? 1.5 : 4.0,
                            fig::Marker::Circle};
  for (int j = 0; j < n; ++j) {
    tokens.x.push_back(in.scene.tokens[j].x), tokens.y.push_back(in.scene.tokens[j].y);
    if (labelled) tokens.labels.push_back("t" + std::to_string(j + 1));
  }
  p.scatters.push_back(tokens);
  if (!geometry::is_identity(in.scene.wv)) {
    fig::ScatterSeries vals{
        "values W\xe1\xb5\x9b t_j", {}, {}, {}, fig::Color::from(render::okabe_ito(0)), 3.5,
        fig::Marker::Square};
    for (int j = 0; j < n; ++j) vals.x.push_back(values[j].x), vals.y.push_back(values[j].y);
    p.scatters.push_back(vals);
  }
  p.scatters.push_back({"query v",
                        {in.query.x},
                        {in.query.y},
                        {"v"},
                        fig::Color::from(render::okabe_ito(3)),
                        5.0,
                        fig::Marker::Cross});
  if (in.views.output)
    p.scatters.push_back({"output z",
                          {out.x},
                          {out.y},
                          {"z"},
                          fig::Color::from(render::okabe_ito(5)),
                          5.0,
                          fig::Marker::Square});
}

}  // namespace

fig::Figure geometry_figure(const GeometryFigureInput& in) {
  geometry::validate(in.scene);
  fig::Figure f;
  f.name = "geometry";
  f.title = std::string("Softmax attention geometry (") + geometry::map_name(in.map) + " map)";
  f.aspect = 0.9;
  fig::Panel p = fig::axes_panel("x", "y");
  p.equal_aspect = true;
  if (in.views.grid) p.lines.push_back(warped_grid_line(in));
  const auto values = geometry::value_points(in.scene);
  if (in.views.hull) add_hull(p, values);
  add_query_circles(p, in);
  add_points(p, in, values);
  f.panels.push_back(p);
  return f;
}

const std::vector<std::pair<std::string, std::string>>& head_metric_labels() {
  static const std::vector<std::pair<std::string, std::string>> labels = {
      {"entropy", "entropy (nats)"},
      {"diagonal", "diagonal mass"},
      {"previous_token", "previous-token mass"},
      {"induction", "induction score"},
      {"effective_window", "ky effective window (90%)"},
      {"spectral_radius", "rho(I + C)"}};
  return labels;
}

fig::Figure heads_at_step_figure(const std::vector<HeadMetric>& rows, int64_t step,
                                 const std::string& metric) {
  int layers = 0, heads = 0;
  for (const HeadMetric& r : rows)
    if (r.step == step && r.metric == metric && r.layer >= 0 && r.head >= 0)
      layers = std::max(layers, r.layer + 1), heads = std::max(heads, r.head + 1);
  if (layers == 0) throw Error("no " + metric + " of any head at step " + std::to_string(step));
  std::vector<float> values(static_cast<size_t>(layers) * heads, std::nanf(""));
  for (const HeadMetric& r : rows)
    if (r.step == step && r.metric == metric && r.layer >= 0 && r.head >= 0)
      values[static_cast<size_t>(r.layer) * heads + r.head] = static_cast<float>(r.value);
  std::string label = metric;
  for (const auto& [name, text] : head_metric_labels())
    if (name == metric) label = text;
  fig::Figure f;
  f.name = "heads-step";
  f.title = label + " at step " + std::to_string(step);
  f.panels.push_back(layer_head_panel(metric, label, layers, heads, std::move(values)));
  f.aspect = std::clamp(0.25 + 0.12 * layers, 0.3, 0.9);
  return f;
}

fig::Figure filmstrip_figure(const std::vector<fig::Figure>& frames) {
  if (frames.empty()) throw Error("a filmstrip needs at least one step");
  const size_t rows = frames.front().panels.size();
  for (const fig::Figure& f : frames)
    if (f.panels.size() != rows)
      throw Error("the " + f.name + " figure has " + std::to_string(f.panels.size()) +
                  " panels at step " + std::to_string(f.step) + " and " + std::to_string(rows) +
                  " at step " + std::to_string(frames.front().step) + ": not one filmstrip");
  // One colour scale: the range over every frame of the heatmaps that have a colorbar.
  double lo = 0, hi = 0;
  bool any = false, diverging = false;
  for (const fig::Figure& f : frames)
    for (const fig::Panel& p : f.panels)
      for (const fig::Heatmap& h : p.heatmaps) {
        if (!h.colorbar) continue;
        diverging |= h.colormap == render::Colormap::Diverging;
        for (const float v : h.values) {
          if (!std::isfinite(v)) continue;
          lo = any ? std::min(lo, double(v)) : v;
          hi = any ? std::max(hi, double(v)) : v;
          any = true;
        }
      }
  if (diverging) hi = std::max(std::abs(lo), std::abs(hi)), lo = -hi;
  lo = std::min(lo, 0.0);  // weights and C read from 0 (or symmetric)
  fig::Figure out;
  out.name = frames.front().name;
  std::string steps;
  for (const fig::Figure& f : frames) steps += (steps.empty() ? "" : ", ") + std::to_string(f.step);
  out.title = frames.front().name + " at steps " + steps;
  out.rows = static_cast<int>(rows);
  out.cols = static_cast<int>(frames.size());
  out.share_x = frames.front().share_x;
  out.share_y = frames.front().share_y;
  out.shared_legend = frames.front().shared_legend;
  out.aspect = std::min(1.6, 0.2 + 0.9 * out.rows / out.cols);
  for (size_t r = 0; r < rows; ++r)
    for (const fig::Figure& f : frames) {
      fig::Panel p = f.panels[r];
      const std::string at = "step " + std::to_string(f.step);
      const std::string short_title = p.short_title.empty() ? p.title : p.short_title;
      p.title = p.title.empty() ? at : p.title + ", " + at;
      p.short_title = short_title.empty() ? at : short_title + " @" + std::to_string(f.step);
      p.step = f.step;
      for (fig::Heatmap& h : p.heatmaps)
        if (h.colorbar && any) {
          h.vmin = lo;
          h.vmax = hi > lo ? hi : lo + 1;
          h.colorbar_relative = false;
        }
      out.panels.push_back(std::move(p));
    }
  return out;
}

fig::Figure heads_figure(const std::vector<HeadMetric>& rows) {
  if (rows.empty()) throw Error("the run has no recorded views, so no head metrics over time");
  fig::Figure f;
  f.name = "heads";
  f.title = "Head metrics on the probe over training";
  f.shared_legend = true;  // the same heads in every panel
  for (const auto& [metric, label] : head_metric_labels()) {
    std::vector<std::pair<int, int>> heads;  // (layer, head) in first-seen order
    std::vector<fig::LineSeries> lines;
    for (const HeadMetric& r : rows) {
      if (r.metric != metric) continue;
      const auto key = std::make_pair(r.layer, r.head);
      auto it = std::find(heads.begin(), heads.end(), key);
      if (it == heads.end()) {
        heads.push_back(key);
        fig::LineSeries l;
        l.name = r.layer < 0 ? std::string("model")
                             : "L" + std::to_string(r.layer) + " h" + std::to_string(r.head);
        l.color = fig::Color::from(render::okabe_ito(static_cast<int>(lines.size())));
        lines.push_back(std::move(l));
        it = heads.end() - 1;
      }
      fig::LineSeries& l = lines[static_cast<size_t>(it - heads.begin())];
      l.x.push_back(static_cast<double>(r.step));
      l.y.push_back(r.value);
    }
    if (lines.empty()) continue;
    fig::Panel p = fig::axes_panel("step", "", true);  // the title names the metric
    p.title = label;
    p.lines = std::move(lines);
    f.panels.push_back(std::move(p));
  }
  f.cols = std::min<int>(2, static_cast<int>(f.panels.size()));
  f.rows = (static_cast<int>(f.panels.size()) + f.cols - 1) / f.cols;
  f.share_x = true;
  f.aspect = 0.45 * f.rows / f.cols + 0.15;
  return f;
}

}  // namespace attn::figures
