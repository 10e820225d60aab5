#include "app/figures/runs/causal_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/figures/runs/intervention_figures.h"
#include "core/base/decimal.h"
#include "core/base/error.h"

namespace attn::figures {

namespace {

// A heatmap panel of `rows` x `cols` values with the given tick labels, on a diverging scale.
fig::Panel grid(const std::string& title, const std::string& name, const std::string& x_label,
                const std::string& y_label, const std::vector<std::string>& cols,
                const std::vector<std::string>& rows, std::vector<float> values) {
  fig::Panel p = fig::matrix_panel(x_label, y_label);
  p.equal_aspect = false;
  p.title = title;
  const int every_col = cols.size() <= 16 ? 1 : static_cast<int>(cols.size() / 8);
  for (size_t i = 0; i < cols.size(); i += every_col)
    p.x.ticks.push_back({static_cast<double>(i) + 0.5, cols[i]});
  for (size_t i = 0; i < rows.size(); ++i)
    p.y.ticks.push_back({static_cast<double>(i) + 0.5, rows[i]});
  fig::Heatmap m;
  m.name = name;
  m.rows = static_cast<int>(rows.size());
  m.cols = static_cast<int>(cols.size());
  m.x0 = 0, m.x1 = m.cols, m.y0 = 0, m.y1 = m.rows;
  m.values = std::move(values);
  m.colormap = render::Colormap::Diverging;
  m.colorbar_label = "share restored";
  p.heatmaps.push_back(std::move(m));
  return p;
}

std::vector<std::string> head_labels(int layers, int heads) {
  std::vector<std::string> r;
  for (int l = 0; l < layers; ++l)
    for (int h = 0; h < heads; ++h) r.push_back("L" + std::to_string(l) + " H" + std::to_string(h));
  return r;
}

}  // namespace

fig::Figure attribution_figure(const AttributionTable& a, const PatchTable& p, bool by_position) {
  if (a.layers == 0 || p.empty()) throw Error("no attribution table to draw");
  const double span = a.clean_metric - a.corrupt_metric;
  auto share = [&](double v) { return static_cast<float>(span == 0 ? NAN : v / span); };
  std::vector<float> heads, at;
  for (double v : a.attribution) heads.push_back(share(v));
  for (double v : a.attribution_at) at.push_back(share(v));
  fig::Figure f;
  f.name = "attribution";
  f.step = a.step;
  f.title = probe_pair_title("attribution patching", a);
  fig::Panel est = layer_head_panel("attribution", "share (first order)", a.layers, a.heads,
                                    std::move(heads), render::Colormap::Diverging);
  est.title = "attribution (gradient estimate)";
  fig::Panel act = layer_head_panel("patched", "share restored", p.layers, p.heads, p.restored,
                                    render::Colormap::Diverging);
  act.title = "activation patching";
  f.panels.push_back(std::move(est));
  f.panels.push_back(std::move(act));
  f.rows = 1;
  f.cols = 2;
  if (by_position) {
    f.panels.push_back(grid("attribution per head and position", "attribution_at", "position",
                            "head", a.tokens, head_labels(a.layers, a.heads), std::move(at)));
    f.rows = 2;
  }
  f.aspect = std::clamp(0.3 + 0.08 * a.layers * (by_position ? a.heads : 1), 0.35, 1.0);
  return f;
}

fig::Figure path_patch_figure(const PathPatchTable& t) {
  if (t.layers == 0 || t.receivers.empty()) throw Error("no path patching table to draw");
  std::vector<std::string> receivers;
  for (const HeadRef& r : t.receivers)
    receivers.push_back("L" + std::to_string(r.layer) + " H" + std::to_string(r.head));
  std::vector<float> values;
  for (double v : t.effect) values.push_back(static_cast<float>(v));
  fig::Figure f;
  f.name = "path-patching";
  f.step = t.step;
  f.title = probe_pair_title("path patching", t);
  f.panels.push_back(grid("sender -> receiver (its query, key and value input)", "effect",
                          "receiver", "sender", receivers, head_labels(t.layers, t.heads),
                          std::move(values)));
  f.aspect = std::clamp(0.3 + 0.05 * t.layers * t.heads, 0.35, 1.0);
  return f;
}

fig::Figure recorded_attribution_figure(const RecordedAttribution& a, int64_t step) {
  if (a.empty()) throw Error("no recorded attribution at step " + std::to_string(step));
  fig::Figure f;
  f.name = "attribution";
  f.step = step;
  f.title = "attribution patching, " + a.metric + " (clean " + fixed_decimal(a.clean, 2) +
            ", corrupted " + fixed_decimal(a.corrupt, 2) + ")";
  // The metric names the panel: patch_heads reads the loss where the clean and corrupted answers
  // agree (an untrained model) and the logit difference once they differ.
  fig::Panel p = layer_head_panel("attribution", "attribution (metric units)", a.layers, a.heads,
                                  a.values, render::Colormap::Diverging);
  p.title = a.metric;
  f.panels.push_back(std::move(p));
  f.aspect = std::clamp(0.25 + 0.1 * a.layers, 0.3, 0.9);
  return f;
}

}  // namespace attn::figures
