#include "app/figures/models/image_rows_figure.h"

#include <algorithm>
#include <cmath>

#include "core/base/error.h"

namespace attn::figures {
namespace {

float finite_max(const std::vector<float>& v) {
  float m = 0;
  for (float w : v)
    if (std::isfinite(w)) m = std::max(m, w);
  return m;
}

int grid_side(size_t patches) {
  const int g = static_cast<int>(std::lround(std::sqrt(static_cast<double>(patches))));
  return g > 0 && static_cast<size_t>(g) * g == patches ? g : 0;
}

const std::vector<float>* overlay(const ImageAttentionRow& r, int layer, int column) {
  const size_t k = static_cast<size_t>(layer) * (r.heads + 1) + column;
  return k < r.cls.size() && grid_side(r.cls[k].size()) > 0 ? &r.cls[k] : nullptr;
}

std::vector<int> layers_of(const ImageAttentionRow& r, int layer) {
  std::vector<int> out;
  for (int l = 0; l < r.layers; ++l)
    if (layer < 0 || layer == l) out.push_back(l);
  return out;
}

bool shown(const ImageAttentionRow& r, int layer) {
  if (r.image.empty() || r.heads <= 0) return false;
  for (int l : layers_of(r, layer))
    for (int c = 0; c <= r.heads; ++c)
      if (overlay(r, l, c)) return true;
  return false;
}

// A panel over the picture's pixels: no axes, square pixels, row 0 at the top.
fig::Panel picture_panel(const ProbeImage& img) {
  fig::Panel p;
  p.y.inverted = true;
  p.x.visible = p.y.visible = false;
  p.x.min = p.y.min = 0;
  p.x.max = img.cols, p.y.max = img.rows;
  p.equal_aspect = true;
  p.legend = false;
  return p;
}

}  // namespace

fig::Figure image_attention_rows_figure(const std::vector<ImageAttentionRow>& rows,
                                        const ImageAttentionRowsOptions& o,
                                        std::vector<ImageAttentionCell>* cells) {
  if (!(o.alpha >= 0 && o.alpha <= 1))
    throw Error("overlay alpha " + std::to_string(o.alpha) + " is out of range: allowed [0, 1]");
  if (cells) cells->clear();
  std::vector<const ImageAttentionRow*> show;
  int max_heads = 0;
  for (const ImageAttentionRow& r : rows)
    if (shown(r, o.layer)) show.push_back(&r), max_heads = std::max(max_heads, r.heads);

  fig::Figure f;
  f.name = "image-attention";
  if (show.empty()) {
    f.title = "No image attention to show";
    return f;
  }
  const ProbeImage& first = show.front()->image;
  f.title = "CLS attention over test image " + std::to_string(first.index) + " (" +
            first.label_name + ")";
  for (size_t k = 0; k < show.size(); ++k) {
    const ImageAttentionRow& r = *show[k];
    f.title += (k == 0 ? ". " : "; ") + r.label + ": " + r.description;
    if (r.image.index != first.index)
      f.title += " (image " + std::to_string(r.image.index) + ", " + r.image.label_name + ")";
  }
  // The layers every row shows a block of panels for (a row without one leaves it empty).
  int max_layers = 0;
  for (const ImageAttentionRow* r : show) max_layers = std::max(max_layers, r->layers);
  std::vector<int> slots;
  for (int l = 0; l < max_layers; ++l)
    if (o.layer < 0 || o.layer == l) slots.push_back(l);
  const int block = 1 + max_heads + (o.show_mean ? 1 : 0);
  const int per_row = o.layers_per_row > 0 ? std::min<int>(o.layers_per_row, slots.size())
                                           : static_cast<int>(slots.size());
  const int lines = (static_cast<int>(slots.size()) + per_row - 1) / per_row;
  f.rows = static_cast<int>(show.size()) * lines;
  f.cols = block * per_row;

  // One scale for every overlay shown (the Shared mode's range).
  float shared = 0;
  for (const ImageAttentionRow* r : show)
    for (int l : layers_of(*r, o.layer))
      for (int c = 0; c <= r->heads; ++c)
        if (const auto* w = overlay(*r, l, c); w && (c < r->heads || o.show_mean))
          shared = std::max(shared, finite_max(*w));

  for (const ImageAttentionRow* r : show) {
    const ProbeImage& img = r->image;
    // Column titles on the first figure row only; each layer's block is named at its picture's
    // left (a tick label: it takes width, which a grid of squares has to spare, not height).
    auto empty = [&](int l) {
      f.panels.push_back(picture_panel(img));
      if (cells) cells->push_back({r->id, l, ImageAttentionCell::kNoCell, r->heads});
    };
    const fig::Heatmap picture = picture_heatmap(img, r->label + "_image");
    for (size_t k = 0; k < slots.size(); ++k) {
      const int l = slots[k];
      const bool titled = r == show.front() && static_cast<int>(k) < per_row;
      if (l >= r->layers) {  // a layer this row does not have
        for (int c = 0; c < block; ++c) empty(l);
        continue;
      }
      const std::string layer = std::to_string(l);
      fig::Panel pic = picture_panel(img);
      if (titled) pic.title = "image";
      pic.y.visible = true;
      pic.y.ticks = {{img.rows / 2.0, r->label + " L" + layer}};
      pic.heatmaps.push_back(picture);
      f.panels.push_back(pic);
      if (cells) cells->push_back({r->id, l, -1, r->heads});
      for (int column = 0; column < block - 1; ++column) {
        const bool mean = column == max_heads;
        const int c = mean ? r->heads : column;
        const std::vector<float>* w = c < r->heads || mean ? overlay(*r, l, c) : nullptr;
        if (!w) {  // a head this row does not have
          empty(l);
          continue;
        }
        fig::Panel p = picture_panel(img);
        if (titled) {
          p.title = mean ? "mean" : "head " + std::to_string(c);
          p.short_title = mean ? "mean" : "h" + std::to_string(c);
        }
        p.heatmaps.push_back(picture);
        fig::Heatmap over;
        over.name = r->label + "_layer" + layer + (mean ? "_mean" : "_head" + std::to_string(c));
        over.rows = over.cols = grid_side(w->size());
        over.values = *w;
        over.x1 = img.cols, over.y1 = img.rows;
        over.colormap = o.colormap;
        over.alpha = o.alpha;
        over.vmin = 0;
        over.vmax = o.scale == AttentionScale::Fixed    ? 1.0
                    : o.scale == AttentionScale::Shared ? shared
                                                        : finite_max(*w);
        if (!(over.vmax > 0)) over.vmax = 1;
        over.colorbar = true;
        over.colorbar_relative = o.scale == AttentionScale::PerMap;
        over.colorbar_label =
            std::string("CLS weight") + (o.scale == AttentionScale::Shared   ? " (shared scale)"
                                         : o.scale == AttentionScale::PerMap ? " (per map)"
                                                                             : "");
        p.heatmaps.push_back(over);
        f.panels.push_back(p);
        if (cells) cells->push_back({r->id, l, c, r->heads});
      }
    }
    for (size_t k = slots.size(); k < static_cast<size_t>(lines * per_row); ++k)
      for (int c = 0; c < block; ++c) empty(-1);
  }
  f.aspect = 0.2 + 1.0 * f.rows / f.cols;
  return f;
}

fig::Figure full_attention_map_figure(const std::string& title, const std::vector<float>& weights,
                                      int size, render::Colormap colormap) {
  if (size <= 0 || weights.size() != static_cast<size_t>(size) * size)
    throw Error("an attention map of " + std::to_string(weights.size()) +
                " weights is not square with side " + std::to_string(size));
  fig::Figure f;
  f.name = "image-attention-map";
  f.title = title;
  f.aspect = 0.85;
  std::vector<fig::Tick> ticks;
  for (int i = 0; i < size; ++i)
    ticks.push_back({i + 0.5, i == 0 ? std::string("CLS") : std::to_string(i)});
  fig::Panel p = fig::matrix_panel("key", "query", std::move(ticks));
  fig::Heatmap h = fig::square_heatmap("weights", size, weights);
  h.colormap = colormap;
  h.vmin = 0;
  h.vmax = std::max(1e-6f, finite_max(weights));
  h.colorbar = true;
  h.colorbar_label = "weight";
  p.heatmaps.push_back(h);
  f.panels.push_back(p);
  return f;
}

}  // namespace attn::figures
