// The Image attention panel's figures (torch-free): where the CLS token looks, over the test
// image, for several models side by side (the live run and saved runs), and the full S x S map of
// one head. The panel draws these on screen (gui/plot/live_figure.h) and its Export buttons write
// the same figures. figures::image_attention_figure (figures.h) is `attnlab export`'s figure of one
// run; this one holds rows of several, with the same pictures and overlays.
// Contract:
//  - Per input row (a row without maps or with an error shows nothing), per layer shown (every
//    layer, or the one chosen), a block of panels: the picture (grey), each head's CLS weights
//    on the patches drawn over the picture (grid x grid cells with the overlay's alpha), then
//    the head mean when asked for. layers_per_row blocks go side by side in a figure row (all of
//    a row's layers by default), so an input row takes one or more figure rows. A row with fewer
//    heads or layers than the widest leaves empty (framed) panels in their place.
//  - Each block is named left of its picture ("dot L0": row label and layer); the first figure
//    row's panels carry the column titles ("image", "head 0", ..., "mean"); the figure title
//    names the image and, per row, its description (model, step, prediction).
//  - Scales: Shared puts every overlay shown on 0 .. their largest weight, with one colorbar;
//    PerMap puts each on 0 .. its own largest, with one relative colorbar (0 .. "max"); Fixed
//    on 0 .. 1. The picture has no colorbar.
//  - Heatmaps carry the exact weights (the CSV equals them); cells[] says what each panel shows.
#pragma once
#include <string>
#include <vector>

#include "app/figures/catalog/figures.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

namespace attn::figures {

struct ImageAttentionRow {
  int id = 0;               // the caller's row index, returned in ImageAttentionCell::row
  std::string label;        // short: "live", "dot" (beside its pictures, heatmap names)
  std::string description;  // "dot, step 39, predicts Sandal (0.18)" (figure title)
  ProbeImage image;
  int layers = 0, heads = 0;
  // cls[layer * (heads + 1) + column]: head `column`'s CLS weights on the grid x grid patches,
  // column == heads their mean; empty where missing.
  std::vector<std::vector<float>> cls;
};

struct ImageAttentionRowsOptions {
  int layer = -1;  // -1: every layer; else that layer only
  render::Colormap colormap = render::Colormap::Hot;
  double alpha = 0.6;  // [0, 1]
  AttentionScale scale = AttentionScale::Shared;
  bool show_mean = true;
  // Layer blocks side by side in one figure row (0: every layer shown); a row of the input
  // takes as many figure rows as its layers need.
  int layers_per_row = 0;
};

// What a panel of the rows figure shows: row `row` (ImageAttentionRow::id), `layer`, and
// column -1 the picture, 0..heads-1 a head, heads the mean; kNoCell for an empty panel.
struct ImageAttentionCell {
  static constexpr int kNoCell = -2;
  int row = -1, layer = -1, column = kNoCell;
  int heads = 0;  // the row's head count (column == heads: the mean)
};

// Throws attn::Error for an alpha outside [0, 1]. cells (optional): one entry per panel.
fig::Figure image_attention_rows_figure(const std::vector<ImageAttentionRow>& rows,
                                        const ImageAttentionRowsOptions& options,
                                        std::vector<ImageAttentionCell>* cells = nullptr);

// One attention map, size x size (row = query, column = key; token 0 is CLS, token 1 + r g + c
// the patch at grid row r, column c), on 0 .. its largest weight with a colorbar; the ticks name
// the tokens ("CLS", then the patch's token index).
fig::Figure full_attention_map_figure(const std::string& title, const std::vector<float>& weights,
                                      int size, render::Colormap colormap);

}  // namespace attn::figures
