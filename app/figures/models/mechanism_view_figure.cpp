#include "app/figures/models/mechanism_view_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/base/error.h"
#include "render/plot/colormap.h"

namespace attn::figures {
namespace {

std::string axis_label(const ViewAxis& a) {
  return a.unit.empty() ? a.name : a.name + " (" + a.unit + ")";
}

// "window 4, causal 1" from a view's layer-level scalars.
std::string scalars_text(const MechanismView& v) {
  std::string out;
  for (const ViewScalar& s : v.scalars) {
    if (s.head >= 0) continue;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.4g", s.value);
    out += (out.empty() ? "" : ", ") + s.name + " " + buf + (s.unit.empty() ? "" : " " + s.unit);
  }
  return out;
}

fig::Panel curves_panel(const MechanismView& v, const ViewCurves& c) {
  fig::Panel p = fig::axes_panel(axis_label(c.x), axis_label(c.y), true);
  p.title = "layer " + std::to_string(v.layer) + " " + v.mechanism + ": " + c.name;
  p.short_title = "L" + std::to_string(v.layer) + " " + c.name;
  p.legend = c.series.size() > 1;
  for (size_t s = 0; s < c.series.size(); ++s) {
    fig::LineSeries l;
    l.name = c.series[s];
    const float* y = c.series_values(s);
    for (size_t i = 0; i < c.xs.size(); ++i) {
      if (!std::isfinite(y[i]) || !std::isfinite(c.xs[i])) continue;
      l.x.push_back(c.xs[i]);
      l.y.push_back(y[i]);
    }
    l.color = fig::Color::from(render::okabe_ito(static_cast<int>(s)));
    p.lines.push_back(std::move(l));
  }
  return p;
}

fig::Panel matrix_panel(const MechanismView& v, const ViewMatrix& m) {
  fig::Panel p = fig::axes_panel(axis_label(m.cols), axis_label(m.rows));
  p.title = "layer " + std::to_string(v.layer) + " " + v.mechanism + ": " + m.name;
  p.short_title = "L" + std::to_string(v.layer) + " " + m.name;
  p.y.inverted = true;  // row 0 at the top, as matrices are read
  fig::Heatmap h;
  h.name = "layer" + std::to_string(v.layer) + "_" + m.name;
  h.rows = m.row_count;
  h.cols = m.col_count;
  h.values = m.values;
  h.x1 = m.col_count;
  h.y1 = m.row_count;
  h.colorbar_label = axis_label(m.value);
  p.heatmaps.push_back(std::move(h));
  return p;
}

const MechanismFrame& frame_at(const std::vector<MechanismFrame>& history, int64_t step) {
  if (history.empty()) throw Error("the run's mechanisms show no views (no layer observes itself)");
  if (step < 0) return history.back();
  auto it = std::upper_bound(history.begin(), history.end(), step,
                             [](int64_t s, const MechanismFrame& f) { return s < f.step; });
  if (it == history.begin())
    throw Error("--step " + std::to_string(step) +
                ": the first recorded mechanism view is at step " +
                std::to_string(history.front().step));
  return *(it - 1);
}

}  // namespace

fig::Figure build_mechanism_view_figure(const std::vector<MechanismFrame>& history,
                                        const MechanismViewOptions& o) {
  const MechanismFrame& frame = frame_at(history, o.step);
  fig::Figure f;
  f.name = "mechanism-views";
  f.step = frame.step;
  std::string have;
  for (const MechanismView& v : frame.layers) {
    have += (have.empty() ? "" : ", ") + std::to_string(v.layer);
    if (o.layer >= 0 && v.layer != o.layer) continue;
    const size_t first = f.panels.size();
    for (const ViewCurves& c : v.curves) f.panels.push_back(curves_panel(v, c));
    for (const ViewMatrix& m : v.matrices) f.panels.push_back(matrix_panel(v, m));
    const std::string scalars = scalars_text(v);
    if (f.panels.size() > first && !scalars.empty()) f.panels[first].title += " (" + scalars + ")";
  }
  if (f.panels.empty())
    throw Error(o.layer >= 0 && !frame.layer(o.layer)
                    ? "layer " + std::to_string(o.layer) + " shows no mechanism view at step " +
                          std::to_string(frame.step) + " (layers with one: " + have + ")"
                    : "the mechanism views at step " + std::to_string(frame.step) +
                          " hold no curve or matrix to draw");
  const int n = static_cast<int>(f.panels.size());
  f.cols = std::min(3, n);
  f.rows = (n + f.cols - 1) / f.cols;
  f.title = "Mechanism views, step " + std::to_string(frame.step);
  f.aspect = 0.62 * f.rows / f.cols + 0.12;
  return f;
}

}  // namespace attn::figures
