// The connections figure: Condor's learned connection functions g_h(t) of the ky layers
// (docs/design/MECHANISMS.md section 1), built once here for the Connections panel, its Export,
// `attnlab export --figure connections`, compare and reproduce. Torch-free.
// Contract:
//  - Curves: one plot per layer with every head overlaid (legend), or one plot per head
//    ("small multiples"). x: t in [0, 1], padded by up to half a slot so the end slots' dots are
//    whole; its label says where the current token is. Slot values g_h(t_j) are dots on the
//    curve; a faint grey line marks the query's own slot (offset 0). One y range for every plot.
//  - beta_h = softmax_j g_h(t_j), optional: a row of bar plots under each row of curves (grouped
//    bars when overlaid), x ticks the key offsets i - j, a dashed line at the uniform share 1/W.
//  - history: up to that many earlier frames, evenly spaced from the first, drawn faded behind
//    the chosen one (older: fainter); frames whose layer has another shape are skipped.
//  - Head h is okabe_ito(h) everywhere (curve, dots, bars), the colour the panel's hover uses.
//  - Throws attn::Error when there are no ky curves, when `step` precedes the first frame, or
//    when `layer` is not a ky layer of the chosen frame (naming the ones it has).
#pragma once
#include <cstdint>
#include <vector>

#include "core/attention/ky/ky_view.h"
#include "core/views/mechanism_view.h"
#include "render/plot/figure.h"

namespace attn::figures {

struct ConnectionsOptions {
  int layer = -1;        // the ky layer (model index) to show; < 0: every ky layer
  int64_t step = -1;     // the frame recorded at or before this step; < 0: the latest
  bool overlaid = true;  // heads in one plot per layer; false: one plot per head
  bool beta = false;     // the beta row under the curves
  int history = 0;       // earlier frames drawn faded (0..8)
  int cols = 0;          // plots per row; 0: min(2, plots) overlaid, else the squarest grid
};
constexpr int kMaxConnectionHistory = 8;

// What each figure panel shows: the heads [first, last) of `layer`, curves or beta bars.
struct ConnectionsPanelRole {
  int layer = 0;
  bool beta = false;
  int first = 0, last = 0;
};

struct ConnectionsFigure {
  fig::Figure figure;
  std::vector<ConnectionsPanelRole> roles;  // one per figure panel
  int frame = -1;                           // index of the frame shown in the history
  int64_t step = -1;                        // its step
  int curves = 0, faded = 0;                // curve lines drawn for the frame, and faded ones
};

ConnectionsFigure build_connections_figure(const std::vector<ConnectionFrame>& history,
                                           const ConnectionsOptions& options);
// From the mechanisms' generic views over training (Snapshot::mechanism_views, a run's
// mechanism_views.json): ky's layers read by the names its observe() gives (ky_curves_of).
ConnectionsFigure build_connections_figure(const std::vector<MechanismFrame>& history,
                                           const ConnectionsOptions& options);

// Whether the views hold any ky layer's curves (the figure can be drawn).
bool connections_available(const std::vector<MechanismFrame>& history);
// Whether a layer's arrays have the sizes its heads, window and samples promise.
bool well_formed(const ConnectionCurves& c);
// The t axis's padding: up to half a slot, so the end slots' dots and bars are whole.
double connections_t_pad(int window);

}  // namespace attn::figures
