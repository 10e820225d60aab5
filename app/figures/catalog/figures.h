// Figure builders: turn what a panel shows (a Snapshot, or the geometry lab's inputs) into the
// plain figure model of render/plot/figure.h (the KY lab's: app/figures/models/ky_lab_figures.h).
// The window draws these on screen (Export dialog preview) and `attnlab export` writes them to
// files: one builder per figure, shared by both. Torch-free. Contract:
//  - figures_for(snapshot) lists the figures a run can give (depending on its model: `ky` adds
//    connections, any mechanism view adds mechanism-views, each mechanism's registered figures
//    follow (app/figures/catalog/mechanism_figures.h: the Connection Transformer's and Neural
//    Attention's, built beside their panels), an image task adds image-attention).
//  - build_figure() throws attn::Error for a name the snapshot cannot give, listing the names
//    it can, and for options out of range (smoothing outside [0, 1), overlay_alpha outside
//    [0, 1]). Heatmaps carry the exact snapshot values (the CSV export equals them); the loss
//    figure's raw series keep their names ("train", "eval") whatever the options.
//  - Panels carry short titles ("L0 H1") for narrow pages, and attention maps label their axes
//    with the probe's tokens when it has them (the layout thins them, or drops them, to fit).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/geometry.h"
#include "core/config/config.h"
#include "core/runs/records/view_records.h"
#include "core/views/snapshot.h"
#include "render/plot/export/figure_export.h"
#include "render/plot/figure.h"

namespace attn::figures {

struct FigureSpec {
  std::string name;
  std::string description;
};

// How attention heatmaps map weights to colours; the colorbar says which.
enum class AttentionScale {
  Shared,  // 0 .. the largest weight among the maps shown: colours compare across maps
  PerMap,  // 0 .. each map's own largest weight: one colorbar reading 0 .. "max"
  Fixed,   // 0 .. 1
};

// layer: attention and image-attention show this layer only; -1 is each figure's default (every
// layer for attention, the last one for image-attention) and kAllLayers every layer for both.
constexpr int kAllLayers = -2;

// What a panel shows on screen, so that its Export writes the same figure. The defaults are
// what `attnlab export` writes.
struct FigureOptions {
  int layer = -1;     // attention, image-attention (see kAllLayers), connections (< 0: all)
  int64_t step = -1;  // connections: the recorded frame at or before this step (-1: latest)
  // connections (app/figures/models/connections_figure.h): heads overlaid in one plot per layer or
  // one plot per head, the beta row, earlier frames drawn faded (0..8), plots per row (0: auto).
  bool connections_overlaid = true;
  bool connections_beta = false;
  int connections_history = 0;
  int connections_cols = 0;
  render::Colormap colormap = render::Colormap::Viridis;  // attention heatmaps
  AttentionScale scale = AttentionScale::Shared;          // attention and image-attention
  // image-attention: the overlays over the picture (one colormap for all), their opacity, and
  // the mean over heads as the last column.
  render::Colormap overlay_colormap = render::Colormap::Hot;
  double overlay_alpha = 0.6;
  bool show_mean = true;
  // loss: EMA factor in [0, 1) for the train curve (0: raw only; above 0 the raw curve is drawn
  // faded under the smoothed one, "train (EMA)"), a log y axis, and the eval accuracy panel.
  double smoothing = 0;
  bool log_y = true;
  bool show_accuracy = true;
};

std::vector<FigureSpec> figures_for(const Snapshot& snapshot);
fig::Figure build_figure(const std::string& name, const Snapshot& snapshot,
                         const FigureOptions& options = {});

// The JSON sidecar's provenance for a figure of this snapshot (run_id: the run directory's name,
// or "live" in the window).
fig::Provenance provenance_for(const Snapshot& s, const ExperimentConfig& config,
                               const std::string& run_id);

// The individual builders (build_figure dispatches to them).
fig::Figure loss_figure(const Snapshot& s, const FigureOptions& o = {});
fig::Figure attention_figure(const Snapshot& s, const FigureOptions& o);
fig::Figure connections_figure(const Snapshot& s, const FigureOptions& o);
fig::Figure image_attention_figure(const Snapshot& s, const FigureOptions& o);
// A recorded series as a line named `name` (step on x).
fig::LineSeries line_from(const Series& s, const std::string& name);
// A probe image as a grey heatmap over [0, cols] x [0, rows] (no colorbar), the picture the
// image-attention figures draw their overlays on.
fig::Heatmap picture_heatmap(const ProbeImage& img, const std::string& name);

// The Geometry panel's view, as its controls set it: the tokens t1..tn (and their value points
// W^V t_j when W^V is not the identity), the query v, the output z with its weight lines, the
// convex hull and bounding box of the values, the images of the query circles (k/count of the
// radius, k = 1..count) under softmax and, with `linear`, under the map without softmax with the
// predicted ellipses, and the warped grid. Only what `views` switches on is drawn, as on screen.
// Continuous (Gaussian) tokens: the samples as dots, and the exact tilted means dashed.
constexpr int kGeometryMaxWeightLines = 64;     // more tokens: z only (lines would be a fan)
constexpr int kGeometryMaxLabelledTokens = 16;  // more tokens: no t_j labels
struct GeometryFigureInput {
  geometry::Scene scene;
  geometry::Vec2 query;
  geometry::GridSpec grid;
  geometry::Map map = geometry::Map::Softmax;
  double alpha = 1.0;
  double circle_radius = 1.0;  // the largest query circle (0: none)
  int circle_count = 1;
  int circle_samples = 128;
  const geometry::Gaussian* gaussian = nullptr;  // the tokens are its samples
  struct Views {
    bool output = true;   // z and the weight lines
    bool hull = true;     // convex hull and bounding box of the value points
    bool linear = false;  // circles under the map without softmax, and the predicted ellipses
    bool circles = true;  // circles under softmax
    bool grid = true;     // the warped grid
  } views;
};
fig::Figure geometry_figure(const GeometryFigureInput& in);

// The head metrics over the recorded steps (core/runs/records/view_records.h): one panel per metric
// (in the order entropy, diagonal, previous_token, induction, effective_window; those absent are
// left out), one line per layer and head ("L0 h1"), x the step. Throws attn::Error when empty.
fig::Figure heads_figure(const std::vector<HeadMetric>& rows);
// One metric of every layer (rows) and head (columns) at one recorded step, as a heatmap with
// the values printed in the cells' CSV; throws attn::Error when `rows` hold none at `step`.
// shared_scale: one colour scale for the metric over every recorded step and head of `rows`
// (colours compare across steps as the timeline moves); else the step's own range.
fig::Figure heads_at_step_figure(const std::vector<HeadMetric>& rows, int64_t step,
                                 const std::string& metric, bool shared_scale = false);
// The same figure at several steps side by side (a filmstrip, for papers): column c is frames[c],
// row r its panel r (every frame must have the same panels); each panel keeps its frame's step
// (the CSV's step column) and says it in its title; heatmaps with a colorbar share one colour
// scale over every frame. Throws attn::Error for no frames or frames of different shapes.
fig::Figure filmstrip_figure(const std::vector<fig::Figure>& frames);
// The per-head metrics heads_figure draws, in its order, with their axis labels.
const std::vector<std::pair<std::string, std::string>>& head_metric_labels();

}  // namespace attn::figures
