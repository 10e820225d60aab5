#include "app/figures/models/ky_lab_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/base/error.h"
#include "render/plot/colormap.h"

namespace attn::figures {

std::optional<KyResult> ky_other_reading(const KyFunction& f, double x0, const KySettings& s) {
  if (s.kind != KyKind::poly && s.kind != KyKind::poly_literal) return std::nullopt;
  KySettings o = s;
  o.kind = s.kind == KyKind::poly ? KyKind::poly_literal : KyKind::poly;
  return ky_transform(f, x0, o);
}

namespace {

// Component i of every step's theta along h (NaN where a step has fewer components).
fig::LineSeries theta_line(const KyResult& r, size_t i) {
  fig::LineSeries line;
  for (const KyStep& st : r.history)
    line.x.push_back(st.h), line.y.push_back(i < st.theta.size() ? st.theta[i] : NAN);
  return line;
}

}  // namespace

fig::Figure ky_theta_figure(const KyResult& r, const KyResult* other, int component) {
  if (component >= static_cast<int>(r.theta.size()))
    throw Error("theta has " + std::to_string(r.theta.size()) + " components; component " +
                std::to_string(component) + " is out of range");
  fig::Figure f;
  f.name = "ky-theta";
  f.title = "KY transform of f at x0: theta(h) as h -> 0";
  f.aspect = 0.5;
  fig::Panel p;
  p.x.label = "h";
  p.x.log = true;
  p.y.label = "theta";
  p.grid = true;
  for (size_t i = 0; i < r.theta.size(); ++i) {
    if (component >= 0 && component != static_cast<int>(i)) continue;
    const fig::Color color = fig::Color::from(render::okabe_ito(static_cast<int>(i)));
    fig::Color pale = color;
    pale.a = 0.45f;
    if (other && i < other->theta.size()) {
      fig::LineSeries o = theta_line(*other, i);
      o.color = pale;
      p.lines.push_back(std::move(o));
    }
    fig::LineSeries line = theta_line(r, i);
    line.name = i < r.names.size() ? r.names[i] : "theta" + std::to_string(i);
    line.color = color;
    line.width_pt = 1.2;
    fig::ScatterSeries dots;
    dots.x = line.x, dots.y = line.y, dots.color = color, dots.size_pt = 3;
    fig::LineSeries limit;
    if (!line.x.empty()) {
      const auto [lo, hi] = std::minmax_element(line.x.begin(), line.x.end());
      limit.x = {*lo, *hi};
      limit.y = {r.theta[i], r.theta[i]};
    }
    limit.color = pale;
    limit.style = fig::LineStyle::Dashed;
    p.lines.push_back(std::move(line));
    p.lines.push_back(std::move(limit));
    p.scatters.push_back(std::move(dots));
  }
  f.panels.push_back(std::move(p));
  return f;
}

double ky_fit_span(const KyResult& r, const KySettings& s) {
  const int points = r.kind == KyKind::poly ? s.degree : 1;
  return std::max(points * s.h0, 1e-6) * 1.5;
}

fig::Figure ky_fit_figure(const KyResult& r, const KyFunction& fn, double x0, const KySettings& s,
                          int step_index) {
  if (r.history.empty()) throw Error("the KY transform has no steps to show");
  if (step_index < 0 || step_index >= static_cast<int>(r.history.size()))
    throw Error("step " + std::to_string(step_index) + " is outside the transform's " +
                std::to_string(r.history.size()) + " values of h (0.." +
                std::to_string(r.history.size() - 1) + ")");
  const KyStep& step = r.history[static_cast<size_t>(step_index)];
  const double span = ky_fit_span(r, s), lo = x0 - span, hi = x0 + span;
  constexpr int kSamples = 241;
  fig::LineSeries f_line, g_step, g_limit;
  double ymin = INFINITY, ymax = -INFINITY;
  auto widen = [&](double y) {
    if (std::isfinite(y)) ymin = std::min(ymin, y), ymax = std::max(ymax, y);
  };
  for (int i = 0; i < kSamples; ++i) {
    const double t = lo + (hi - lo) * i / (kSamples - 1), ft = fn.eval(t);
    f_line.x.push_back(t), f_line.y.push_back(ft);
    g_step.x.push_back(t), g_step.y.push_back(ky_connection(r.kind, step.theta, x0, t));
    g_limit.x.push_back(t), g_limit.y.push_back(ky_connection(r.kind, r.theta, x0, t));
    widen(ft);
  }
  fig::ScatterSeries dots;
  dots.name = "fit points";
  const int n_points = r.kind == KyKind::poly ? s.degree + 1 : 2;
  for (int j = 0; j < n_points; ++j) {
    const double t = x0 + j * step.h, ft = fn.eval(t);
    dots.x.push_back(t), dots.y.push_back(ft);
    widen(ft);
  }
  f_line.name = "f", f_line.color = fig::Color::rgb(0.63f, 0.63f, 0.63f), f_line.width_pt = 2;
  g_step.name = "g(t; theta(h))", g_step.color = fig::Color::from(render::okabe_ito(1));
  g_limit.name = "g(t; limit)", g_limit.color = fig::Color::from(render::okabe_ito(0));
  dots.color = fig::Color::from(render::okabe_ito(4));
  fig::Figure f;
  f.name = "ky-fit";
  char title[96];
  std::snprintf(title, sizeof title, "f and its connection functions at h = %.3g", step.h);
  f.title = title;
  f.aspect = 0.5;
  fig::Panel p;
  p.x.label = "t";
  p.x.min = lo, p.x.max = hi;
  // The range follows f; connection curves that run off it are clipped.
  if (ymin < ymax) {
    const double pad = 0.08 * (ymax - ymin);
    p.y.min = ymin - pad, p.y.max = ymax + pad;
  }
  p.grid = true;
  p.lines = {std::move(f_line), std::move(g_limit), std::move(g_step)};
  p.scatters.push_back(std::move(dots));
  f.panels.push_back(std::move(p));
  return f;
}

fig::Figure ky_convergence_figure(const KyResult& r, const KyFunction& fn, double x0, double lo,
                                  double hi) {
  if (r.history.empty()) throw Error("the KY transform has no steps to show");
  fig::Figure f;
  f.name = "ky-convergence";
  f.title = std::string("KY transform (") + ky_kind_name(r.kind) +
            ") at x0 = " + std::to_string(x0).substr(0, 6) +
            (r.converged ? ", converged" : ", not converged");
  f.cols = 2;
  f.aspect = 0.42;
  fig::Panel conv;
  conv.title = "Convergence";
  conv.x.label = "h";
  conv.y.label = "estimate change";
  conv.x.log = conv.y.log = true;
  conv.x.inverted = true;  // h shrinks to the right, as the procedure runs
  conv.grid = true;
  conv.legend = false;  // one curve, named by the axis (its name is for the CSV)
  fig::LineSeries err{"|theta_k - theta_k-1|", {}, {}, {}, 1.0, fig::LineStyle::Solid};
  fig::ScatterSeries pts{"", {}, {}, {}, {}, 3.0, fig::Marker::Circle};
  for (const auto& st : r.history)
    if (std::isfinite(st.error) && st.error > 0) {
      err.x.push_back(st.h), err.y.push_back(st.error);
      pts.x.push_back(st.h), pts.y.push_back(st.error);
    }
  conv.lines.push_back(err);
  pts.color = fig::Color::from(render::okabe_ito(0));
  conv.scatters.push_back(pts);
  f.panels.push_back(conv);
  fig::Panel g = fig::axes_panel("t", "value", true);
  g.title = "f and its connection g(t; theta)";
  g.short_title = "f and g(t; theta)";
  fig::LineSeries f_line{
      fn.label.empty() ? "f" : fn.label, {}, {}, {}, 1.25, fig::LineStyle::Solid};
  fig::LineSeries curve{"g(t; limit theta)", {}, {}, {}, 1.0, fig::LineStyle::Dashed};
  for (int i = 0; i <= 200; ++i) {
    const double t = lo + (hi - lo) * i / 200.0;
    f_line.x.push_back(t), f_line.y.push_back(fn.eval ? fn.eval(t) : NAN);
    if (!r.theta.empty())
      curve.x.push_back(t), curve.y.push_back(ky_connection(r.kind, r.theta, x0, t));
  }
  g.lines = {f_line, curve};
  f.panels.push_back(g);
  return f;
}

}  // namespace attn::figures
