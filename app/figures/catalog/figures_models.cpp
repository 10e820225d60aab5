// Builders for the geometry of softmax attention, the head metrics over the recorded steps and
// the filmstrip of a figure at several steps.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/figures/catalog/figures.h"
#include "app/figures/runs/intervention_figures.h"
#include "core/base/error.h"
#include "render/plot/colormap.h"
#include "render/plot/figure_draw.h"
#include "render/plot/plot_math.h"

namespace attn::figures {
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
                                 const std::string& metric, bool shared_scale) {
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
  if (shared_scale) {
    double lo = 0, hi = 0;
    bool any = false;
    for (const HeadMetric& r : rows)
      if (r.metric == metric && r.layer >= 0 && r.head >= 0 && std::isfinite(r.value)) {
        lo = any ? std::min(lo, r.value) : r.value;
        hi = any ? std::max(hi, r.value) : r.value;
        any = true;
      }
    // A range too narrow to show (fig::heatmap_flat's) stays fitted: drawn flat, and said so.
    const double least = std::max(fig::kFlatSpanAbsolute,
                                  fig::kFlatSpanRelative * std::max(std::fabs(lo), std::fabs(hi)));
    for (fig::Heatmap& h : f.panels.back().heatmaps) {
      if (!any || hi - lo < least) continue;
      h.vmin = lo;
      h.vmax = hi;
      h.colorbar_label += (h.colorbar_label.empty() ? "" : ", ") + std::string("every step");
    }
  }
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
  // One row: every frame is titled "step N" alike, and what the frames' titles share (the
  // metric) moves to the strip's title, so no frame reads differently from its neighbours.
  // Several rows keep each row's title beside the step ("L0 H1, step N").
  std::string shared;
  if (rows == 1)
    for (const fig::Figure& f : frames) {
      const std::string& t = f.panels.front().title;
      if (!t.empty() && t != out.name &&
          (" / " + shared + " / ").find(" / " + t + " / ") == std::string::npos)
        shared += (shared.empty() ? "" : " / ") + t;
    }
  out.title = out.name + (shared.empty() ? "" : " (" + shared + ")") + " at steps " + steps;
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
      p.title = rows == 1 || p.title.empty() ? at : p.title + ", " + at;
      p.short_title = rows == 1 || short_title.empty() ? at : short_title + ", " + at;
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
