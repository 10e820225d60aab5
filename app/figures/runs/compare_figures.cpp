#include "app/figures/runs/compare_figures.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/figures/models/connections_figure.h"
#include "core/analysis/connections.h"
#include "core/base/error.h"
#include "core/config/config.h"
#include "core/runs/directory/seed_groups.h"
#include "render/plot/colormap.h"
#include "render/plot/plot_math.h"

namespace attn::figures {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fig::LineSeries series_line(const Series& s, const std::string& name, fig::Color c) {
  fig::LineSeries l;
  l.name = name;
  l.color = c;
  l.width_pt = 1.25;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    l.x.push_back(static_cast<double>(s.steps[i]));
    l.y.push_back(s.values[i]);
  }
  return l;
}

// A band as a closed polygon: along lo, back along hi (NaN bounds leave no band).
fig::Polygon band_polygon(const MeanCurve& m, const std::string& name, fig::Color c) {
  fig::Polygon p;
  p.name = name;
  p.in_legend = false;  // its mean line names the group; the figure's title names the band
  for (size_t i = 0; i < m.steps.size(); ++i)
    if (std::isfinite(m.lo[i])) {
      p.x.push_back(m.steps[i]);
      p.y.push_back(m.lo[i]);
    }
  for (size_t i = m.steps.size(); i-- > 0;)
    if (std::isfinite(m.hi[i])) {
      p.x.push_back(m.steps[i]);
      p.y.push_back(m.hi[i]);
    }
  p.stroke = fig::Color::rgb(c.r, c.g, c.b, 0.35);  // alpha 0 would mean "automatic"
  p.fill = fig::Color::rgb(c.r, c.g, c.b, 0.22);
  p.width_pt = 0.5;
  return p;
}

}  // namespace

fig::Color compare_color(int index) {
  return fig::Color::from(render::okabe_ito(index));
}

fig::Figure loss_overlay(const std::vector<CompareCurve>& curves, const std::string& title,
                         const CompareOptions& options) {
  fig::Figure f;
  f.name = "loss";
  f.title = title;
  // Eval loss, train loss and accuracy in their own panels, every line named by its run, so
  // that the CSV says which run each point belongs to; one legend below names them all.
  f.shared_legend = true;
  auto panel = [](const char* t, const char* y) {
    fig::Panel p = fig::axes_panel("step", y, true);
    p.title = t;
    return p;
  };
  fig::Panel eval = panel("eval loss", "loss (nats)");
  fig::Panel train = panel("train loss", "loss (nats)");
  fig::Panel acc = panel("eval accuracy", "accuracy");
  // Padded past 0 and 1: a curve at exactly 1.0 stays off the frame.
  acc.y.min = -0.03;
  acc.y.max = 1.05;
  bool want_accuracy = false;
  render::Range losses;
  // Seed groups of two or more runs become one mean line and a band each.
  std::vector<bool> grouped(curves.size(), false);
  bool banded = false;
  if (options.seed_bands != SeedBands::Off) {
    std::vector<const RunDirectory*> dirs;
    std::vector<size_t> index;
    for (size_t i = 0; i < curves.size(); ++i)
      if (curves[i].run) {
        dirs.push_back(curves[i].run);
        index.push_back(i);
      }
    const BandKind kind = options.seed_bands == SeedBands::Sd ? BandKind::sd : BandKind::ci95;
    const std::string band_name = kind == BandKind::sd ? "± sd" : "95% CI";
    for (const SeedGroup& g : group_by_seed(dirs)) {
      if (g.members.size() < 2) continue;
      const CompareCurve& first = curves[index[g.members[0]]];
      // A sweep cell's label ends in its seed ("dot/seed-5"): the group is the rest.
      std::string base = first.label;
      if (const auto cut = base.rfind("/seed-"); cut != std::string::npos) base.erase(cut);
      // A cell's directory alone ("seed-5", a saved run's id): its parent names the group.
      if (base.rfind("seed-", 0) == 0 && !first.run->dir.empty()) {
        const std::string parent =
            fs::path(first.run->dir).lexically_normal().parent_path().filename().string();
        if (!parent.empty()) base = parent;
      }
      const std::string label = base + " (mean of " + std::to_string(g.members.size()) + " seeds)";
      for (size_t m : g.members) grouped[index[m]] = true;
      if (first.run->config.model.head == "classifier" || first.run->config.task.name != "text")
        want_accuracy = true;
      struct Target {
        Series RunDirectory::*series;
        fig::Panel* panel;
        double width;
      };
      for (const Target& t : {Target{&RunDirectory::eval_loss, &eval, 1.5},
                              Target{&RunDirectory::train_loss, &train, 1.0},
                              Target{&RunDirectory::eval_accuracy, &acc, 1.5}}) {
        const MeanCurve mc = mean_curve(dirs, g, t.series, kind);
        if (mc.steps.empty()) continue;
        if (t.panel != &acc)
          for (const auto* v : {&mc.lo, &mc.hi, &mc.mean}) {
            const std::vector<float> f(v->begin(), v->end());
            losses = render::merge(losses, render::value_range(f.data(), f.size(), true));
          }
        t.panel->polygons.push_back(band_polygon(mc, label + " " + band_name, first.color));
        banded = true;
        fig::LineSeries line;
        line.name = label;
        line.color = first.color;
        line.width_pt = t.width;
        line.x = mc.steps;
        line.y = mc.mean;
        t.panel->lines.push_back(std::move(line));
      }
    }
  }
  for (size_t i = 0; i < curves.size(); ++i) {
    const auto& c = curves[i];
    if (!c.run || grouped[i]) continue;
    const auto& cfg = c.run->config;
    // Accuracy means something for classifiers and the synthetic tasks; a character LM's
    // next-token accuracy is left out (its loss says more).
    if (cfg.model.head == "classifier" || cfg.task.name != "text") want_accuracy = true;
    for (const Series* s : {&c.run->eval_loss, &c.run->train_loss})
      losses = render::merge(losses, render::value_range(s->values.data(), s->values.size(), true));
    auto e = series_line(c.run->eval_loss, c.label, c.color);
    if (!c.show_in_legend) e.style = fig::LineStyle::Dashed;  // a group's later seeds
    if (!e.x.empty()) eval.lines.push_back(std::move(e));
    auto t = series_line(c.run->train_loss, c.label, c.color);
    t.width_pt = 0.75;
    if (!t.x.empty()) train.lines.push_back(std::move(t));
    auto a = series_line(c.run->eval_accuracy, c.label, c.color);
    if (!a.x.empty()) acc.lines.push_back(std::move(a));
  }
  if (banded) {
    const char* band = options.seed_bands == SeedBands::Sd
                           ? "shaded: ± one sd over seeds"
                           : "shaded: 95% interval of the mean over seeds";
    f.title = f.title.empty() ? band : f.title + " (" + band + ")";
  }
  const bool log =
      options.y_scale == YScale::Log ||
      (options.y_scale == YScale::Auto && !losses.empty() && losses.hi > 10 * losses.lo);
  eval.y.log = train.y.log = log;
  f.panels.push_back(std::move(eval));
  f.panels.push_back(std::move(train));
  f.cols = 2;
  f.aspect = 0.42;
  if (want_accuracy) {
    f.cols = 3;
    f.panels.push_back(std::move(acc));
    f.aspect = 0.34;
  }
  return f;
}

fig::Figure connection_curves_figure(const RunDirectory& run, const std::string& title) {
  const std::vector<ConnectionFrame> frames = connection_frames_of(read_mechanism_frames(run.dir));
  if (frames.empty())
    throw Error(run.dir + " holds no connection curves (only runs with ky layers record them, in " +
                kMechanismViewsFile + ")");
  fig::Figure f = build_connections_figure(frames, {}).figure;
  if (!title.empty()) f.title = title;
  return f;
}

fig::Figure spectral_radius_figure(const std::vector<CompareCurve>& curves,
                                   const std::string& title) {
  fig::Figure f;
  f.name = "spectral_radius";
  f.title = title;
  fig::Panel panel;
  panel.x.label = "step";
  panel.y.label = "rho(I + C)";
  panel.grid = true;
  double limit = 0, last_step = 0;
  for (const auto& c : curves) {
    if (!c.run) continue;
    const fs::path p = fs::path(c.run->dir) / "conn.json";
    std::error_code ec;
    if (!fs::exists(p, ec)) continue;
    const json j = read_json_file(p.string());
    if (!j.contains("spectral_radius_estimate") || !j["spectral_radius_estimate"].is_array())
      throw Error(p.string() + " has no spectral_radius_estimate series");
    fig::LineSeries l;
    l.name = c.label;
    if (!c.show_in_legend) l.style = fig::LineStyle::Dashed;
    l.color = c.color;
    l.width_pt = 1.0;
    for (const auto& pt : j["spectral_radius_estimate"]) {
      l.x.push_back(pt.at(0).get<double>());
      l.y.push_back(pt.at(1).get<double>());
    }
    if (!l.x.empty()) last_step = std::max(last_step, l.x.back());
    if (j.value("control", std::string("none")) != "none") limit = j.value("limit", 0.0);
    panel.lines.push_back(std::move(l));
  }
  if (panel.lines.empty()) throw Error("no run among those compared has a conn.json");
  // y = 1: the boundary the seed's theory needs rho below; r: the control's limit.
  fig::LineSeries one;
  one.x = {0, last_step};
  one.y = {1, 1};
  one.color = fig::Color::rgb(0.4f, 0.4f, 0.4f);
  one.style = fig::LineStyle::Dotted;
  one.width_pt = 0.75;
  panel.lines.push_back(one);
  if (limit > 0) {
    fig::LineSeries r = one;
    r.y = {limit, limit};
    r.style = fig::LineStyle::Dashed;
    panel.lines.push_back(r);
    panel.annotations.push_back(
        {last_step, limit, "r = " + std::to_string(limit).substr(0, 4), fig::Anchor::Right, {}});
  }
  f.panels.push_back(std::move(panel));
  return f;
}

fig::Figure scatter_figure(const std::string& name, const std::string& title,
                           const std::string& x_label, const std::string& y_label,
                           const std::vector<ScatterPoint>& points) {
  fig::Figure f;
  f.name = name;
  f.title = title;
  fig::Panel panel;
  panel.x.label = x_label;
  panel.y.label = y_label;
  panel.grid = true;
  panel.legend = false;
  for (const auto& p : points) {
    fig::ScatterSeries s;
    s.name = p.label;
    s.x = {p.x};
    s.y = {p.y};
    s.labels = {p.label};
    s.color = p.color;
    s.size_pt = 5;
    panel.scatters.push_back(std::move(s));
  }
  f.panels.push_back(std::move(panel));
  return f;
}

}  // namespace attn::figures
