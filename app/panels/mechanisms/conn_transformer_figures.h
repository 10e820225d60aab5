// The Connection Transformer's figures (model.architecture conn), from its view in
// Snapshot::model_views (decoded by core/models/conn/conn_view.h): shown by its panel's model
// (conn_transformer_model.h) and registered with the figure registry
// (app/figures/catalog/mechanism_figures.h), so `attnlab export`, the Export dialog and
// figures_for() offer them: conn-matrix, conn-eigenvalues and conn-spectral for every conn run,
// conn-trace once a probe ran. Torch-free. Contract: each builder throws attn::Error unless the
// snapshot is a conn model holding what it draws (C, the eigenvalues of I + C, the spectral series,
// the trace).
#pragma once
#include "app/figures/catalog/figures.h"

namespace attn::figures {

// C as a diverging heatmap ("conn-matrix"), its step the recorded one (the snapshot's if none).
fig::Figure conn_matrix_figure(const Snapshot& s);
// The eigenvalues of I + C with the unit circle and, under a control, the limit r.
fig::Figure conn_eigenvalues_figure(const Snapshot& s);
// rho(I + C) and ||I + C||_2 over training, with 1 dotted and the limit r dashed.
fig::Figure conn_spectral_figure(const Snapshot& s);
// The reasoning trace of the probe ("conn-trace"): the norm of every slot's state after
// compression (k = 0) and after each of the K steps. One panel, two lines: "slots" (each slot's
// norms over k, one slot after another, each followed by a NaN point that breaks the line) and
// "mean over slots", with the mean's points as a scatter; the values are the snapshot's exactly.
// Throws attn::Error unless has_conn_trace(s) (a conn model that has run a probe).
bool has_conn_trace(const Snapshot& s);
fig::Figure conn_trace_figure(const Snapshot& s);

}  // namespace attn::figures
