// The Connection Transformer's figures (conn_transformer_figures.h) and their rows in the figure
// registry (app/figures/catalog/mechanism_figures.h).
#include "app/panels/mechanisms/conn_transformer_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/figures/catalog/mechanism_figures.h"
#include "core/base/error.h"
#include "core/models/conn/conn_view.h"
#include "render/plot/colormap.h"
#include "render/plot/plot_math.h"

namespace attn::figures {
namespace {

// The snapshot's conn view, decoded (core/models/conn/conn_view.h).
ConnView conn_of(const Snapshot& s) {
  const std::shared_ptr<const ConnView> v = conn_view_of(s);
  if (!v) throw Error("the run is not a Connection Transformer (model.architecture conn)");
  return *v;
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

bool is_conn(const Snapshot& s) {
  return s.model_view("conn") != nullptr;
}

}  // namespace

fig::Figure conn_matrix_figure(const Snapshot& s) {
  const ConnView v = conn_of(s);
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
  const ConnView v = conn_of(s);
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
  // "at step N": the step they were computed at (every eigen_every steps), which the model may
  // have moved on from; one line, so the window's plot and its export lay out alike.
  char title[96];
  std::snprintf(title, sizeof title, "Eigenvalues of I + C at step %lld (rho = %.3f)",
                static_cast<long long>(v.eigen_step), v.exact_radius);
  fig::Figure f = fig::single_panel_figure("conn-eigenvalues", title, std::move(p), 0.9);
  f.step = v.eigen_step;
  return f;
}

fig::Figure conn_spectral_figure(const Snapshot& s) {
  const ConnView v = conn_of(s);
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
  fig::Figure f = fig::single_panel_figure(
      "conn-spectral", "Spectral radius and norm of I + C (control: " + v.control + ")",
      std::move(p));
  f.shared_legend = true;  // below the plot: inside, four entries covered the curves
  return f;
}
bool has_conn_trace(const Snapshot& s) {
  const MechanismView* v = s.model_view("conn");
  const ViewMatrix* t = v ? v->find_matrix("trace") : nullptr;
  return t && t->col_count > 0 && t->row_count >= 1;
}

fig::Figure conn_trace_figure(const Snapshot& s) {
  const ConnView v = conn_of(s);
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
namespace {

// In figures_for's order: C, the spectrum, the spectral series, then the trace once recorded.
const bool kMatrix = register_mechanism_figure(
    {"conn", "conn-matrix", "the connection matrix C (diverging colormap)", is_conn,
     [](const Snapshot& s, const FigureOptions&) { return conn_matrix_figure(s); }});
const bool kEigenvalues = register_mechanism_figure(
    {"conn", "conn-eigenvalues", "eigenvalues of I + C with the unit and limit circles", is_conn,
     [](const Snapshot& s, const FigureOptions&) { return conn_eigenvalues_figure(s); }});
const bool kSpectral = register_mechanism_figure(
    {"conn", "conn-spectral", "rho(I + C) and ||I + C||_2 over training", is_conn,
     [](const Snapshot& s, const FigureOptions&) { return conn_spectral_figure(s); }});
const bool kTrace = register_mechanism_figure(
    {"conn", "conn-trace", "every slot's state norm on the probe over the reasoning steps",
     has_conn_trace, [](const Snapshot& s, const FigureOptions&) { return conn_trace_figure(s); }});

}  // namespace
}  // namespace attn::figures
