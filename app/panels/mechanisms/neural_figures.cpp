// Neural Attention's score-surface figure (neural_figures.h) and its row in the figure registry
// (app/figures/catalog/mechanism_figures.h).
#include "app/panels/mechanisms/neural_figures.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include "app/figures/catalog/mechanism_figures.h"
#include "core/base/error.h"
#include "render/plot/colormap.h"
#include "render/plot/plot_math.h"

namespace attn::figures {
namespace {

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

bool has_neural_surface(const Snapshot& s) {
  try {
    const auto view = neural_view_of(s.mechanism_history());
    return view && view->surface.available;
  } catch (const std::exception&) {
    return false;  // a malformed view: no figure to offer
  }
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

const bool kSurface = register_mechanism_figure(
    {"neural", "neural-surface", "Neural Attention's learned score surface and a slice",
     has_neural_surface,
     [](const Snapshot& s, const FigureOptions&) { return neural_surface_figure(s); }});

}  // namespace
}  // namespace attn::figures
