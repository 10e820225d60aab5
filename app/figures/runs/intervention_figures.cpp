#include "app/figures/runs/intervention_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/base/decimal.h"
#include "core/base/error.h"
#include "render/plot/figure_draw.h"  // heatmap_flat

namespace attn::figures {

namespace {

// Cell labels that tell the cells apart: `digits` decimals, more (up to 6) until their
// range spans five units of the last one, and two significant digits in scientific notation
// where every value is below 1e-3 (a 1e-5 range printed "0.00" in every cell). A heatmap the
// colour scale shows as equal (fig::heatmap_flat) keeps `digits`: its cells read equal too.
std::function<std::string(float)> cell_labels(const fig::Heatmap& m, int digits) {
  float lo = INFINITY, hi = -INFINITY, top = 0;
  for (const float v : m.values)
    if (std::isfinite(v))
      lo = std::min(lo, v), hi = std::max(hi, v), top = std::max(top, std::abs(v));
  if (!(lo < hi) || fig::heatmap_flat(m))
    return [digits](float v) { return fixed_decimal(v, digits); };
  if (top < 1e-3f)
    return [](float v) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1e", static_cast<double>(v));
      return std::string(text);
    };
  int d = digits;
  while (d < 6 && (static_cast<double>(hi) - lo) * std::pow(10.0, d) < 5) ++d;
  return [d](float v) { return fixed_decimal(v, d); };
}

// A layer x head heatmap panel on a diverging scale, with each cell's value printed in it when
// the grid is small enough to read.
fig::Panel head_grid(const std::string& title, const std::string& name, const std::string& label,
                     int layers, int heads, std::vector<float> values, int digits) {
  fig::Panel p = layer_head_panel(name, label, layers, heads, values, render::Colormap::Diverging);
  p.title = title;
  const auto text = cell_labels(p.heatmaps.front(), digits);
  // Dark text in either theme: readable on the pale cells near 0 and on the saturated ends of
  // the diverging map alike, whatever scale a filmstrip later puts the frames on.
  if (layers * heads <= 64)
    for (int l = 0; l < layers; ++l)
      for (int h = 0; h < heads; ++h) {
        const float v = values[static_cast<size_t>(l) * heads + h];
        if (std::isfinite(v))
          p.annotations.push_back({h + 0.5, l + 0.5, text(v), fig::Anchor::Center,
                                   fig::Color::rgb(0.08f, 0.08f, 0.08f)});
      }
  return p;
}

}  // namespace

fig::Panel layer_head_panel(const std::string& name, const std::string& label, int layers,
                            int heads, std::vector<float> values, render::Colormap colormap) {
  fig::Panel p = fig::matrix_panel("head", "layer");  // layer 0 on top, as the maps are listed
  for (int h = 0; h < heads; ++h) p.x.ticks.push_back({h + 0.5, std::to_string(h)});
  for (int l = 0; l < layers; ++l) p.y.ticks.push_back({l + 0.5, std::to_string(l)});
  fig::Heatmap m;
  m.name = name;
  m.rows = layers;
  m.cols = heads;
  m.x0 = 0, m.x1 = heads, m.y0 = 0, m.y1 = layers;
  m.values = std::move(values);
  m.colormap = colormap;
  m.colorbar_label = label;
  p.heatmaps.push_back(std::move(m));
  return p;
}

fig::Figure importance_figure(const ImportanceTable& t, bool accuracy) {
  if (t.empty()) throw Error("no head importance table to draw");
  std::vector<float> change;
  for (int l = 0; l < t.layers; ++l)
    for (int h = 0; h < t.heads; ++h)
      change.push_back(accuracy ? 100.0f * t.accuracy_change(l, h) : t.loss_change(l, h));
  fig::Figure f;
  f.name = accuracy ? "importance-accuracy" : "importance";
  f.step = t.step;
  f.title = std::string(ablation_mode_name(t.mode)) + " ablation, step " + std::to_string(t.step) +
            ", " + std::to_string(t.batches) + " eval batch" + (t.batches == 1 ? "" : "es") +
            " (baseline loss " + fixed_decimal(t.baseline.loss, 3) + ", accuracy " +
            fixed_decimal(100 * t.baseline.accuracy, 1) + "%)";
  f.panels.push_back(accuracy ? head_grid("accuracy", "accuracy_change", "accuracy change (points)",
                                          t.layers, t.heads, std::move(change), 1)
                              : head_grid("loss", "loss_change", "loss change (nats)", t.layers,
                                          t.heads, std::move(change), 2));
  f.aspect = std::clamp(0.25 + 0.1 * t.layers, 0.3, 0.9);
  return f;
}

fig::Figure patch_figure(const PatchTable& t, bool by_position) {
  if (t.empty()) throw Error("no patching table to draw");
  fig::Figure f;
  f.name = "patching";
  f.step = t.step;
  f.title = probe_pair_title("patching", t);
  f.panels.push_back(
      head_grid("per head", "restored", "share restored", t.layers, t.heads, t.restored, 2));
  if (by_position && t.positions > 0) {
    const int rows = t.layers * t.heads;
    fig::Panel p = fig::matrix_panel("position", "head");
    p.equal_aspect = false;
    p.title = "per head and position";
    // Ticks: the positions where the probes differ (starred) and the last one always, then a
    // spread of the others that keeps a gap around those, so the layout need not thin them.
    auto differs = [&](int i) {
      return std::find(t.differing.begin(), t.differing.end(), i) != t.differing.end();
    };
    auto label = [&](int i) {
      return (i < static_cast<int>(t.tokens.size()) ? t.tokens[i] : std::to_string(i)) +
             (differs(i) ? "*" : "");
    };
    const int every = t.positions <= 12 ? 1 : std::max(2, t.positions / 8);
    std::vector<int> keep;
    for (int i = 0; i < t.positions; ++i)
      if (differs(i) || i == t.positions - 1) keep.push_back(i);
    for (int i = 0; i < t.positions; i += every) {
      bool near = false;
      for (const int k : keep) near = near || (k != i && std::abs(k - i) < std::min(every, 2));
      if (!near && std::find(keep.begin(), keep.end(), i) == keep.end()) keep.push_back(i);
    }
    std::sort(keep.begin(), keep.end());
    for (const int i : keep) p.x.ticks.push_back({i + 0.5, label(i)});
    for (int r = 0; r < rows; ++r)
      p.y.ticks.push_back(
          {r + 0.5, "L" + std::to_string(r / t.heads) + " H" + std::to_string(r % t.heads)});
    fig::Heatmap m;
    m.name = "restored_at";
    m.rows = rows;
    m.cols = t.positions;
    m.x0 = 0, m.x1 = t.positions, m.y0 = 0, m.y1 = rows;
    m.values = t.restored_at;
    m.colormap = render::Colormap::Diverging;
    m.colorbar_label = "share restored";
    p.heatmaps.push_back(std::move(m));
    f.panels.push_back(std::move(p));
  }
  f.rows = static_cast<int>(f.panels.size());
  f.cols = 1;
  f.aspect = std::clamp(0.25 + 0.06 * t.layers * t.heads, 0.3, 1.0);
  return f;
}

}  // namespace attn::figures
