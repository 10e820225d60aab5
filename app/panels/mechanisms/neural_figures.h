// Neural Attention's figure: the learned score surface of a neural layer with d' = 2
// ("neural-surface"), from the latest mechanism views (core/attention/neural/neural_view.h).
// Shown by the Neural panel's model (neural_model.h) and registered with the figure registry
// (app/figures/catalog/mechanism_figures.h), so `attnlab export`, the Export dialog and figures_for()
// offer it whenever a neural layer has a surface. Torch-free.
#pragma once
#include "app/figures/catalog/figures.h"
#include "core/attention/neural/neural_view.h"

namespace attn::figures {

// Whether the snapshot's latest views hold a neural surface (false for malformed views).
bool has_neural_surface(const Snapshot& s);
// The latest mechanism views' neural surface of the layer and head they were computed for; the
// view form draws a given one (the Neural panel's). Three panels: the learned surface and the
// paraboloid x^2 + y^2 as heatmaps with contours, and the slice along the key. Throws
// attn::Error unless a neural layer with d' = 2 has one.
fig::Figure neural_surface_figure(const Snapshot& s);
fig::Figure neural_surface_figure(const NeuralView& view);

}  // namespace attn::figures
