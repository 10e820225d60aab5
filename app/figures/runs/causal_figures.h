// Figures of the causal analyses (torch-free; core/views/causal_view.h), for `attnlab analyze
// --figure`.
// Contract:
//  - attribution_figure: two layer x head heatmaps side by side, attribution patching's
//    estimate and activation patching's value for the same probes, both as the share of the
//    clean-minus-corrupted metric (so a cell where the linear estimate fails stands out); with
//    by_position a third panel, the estimate per head (rows "L0 H1") and position (the clean
//    probe's tokens as ticks). Diverging scale centred on 0.
//  - path_patch_figure: the sender x receiver matrix of shares restored, sender rows, receiver
//    columns ("L1 H0"); cells without a path (the receiver not in a later layer) are NaN.
//  - recorded_attribution_figure: one recorded step's attribution patching (views.rec,
//    core/runs/records/view_records.h) as a layer x head heatmap in the metric's units (not a
//    share: early in training clean and corrupted barely differ, and a share would blow up), the
//    clean and corrupted metric in the title; `attnlab export --figure attribution --steps`
//    draws one per step side by side on one colour scale (filmstrip_figure).
//  - All throw attn::Error for an empty table.
#pragma once
#include "core/runs/records/view_records.h"
#include "core/views/causal_view.h"
#include "core/views/intervention_view.h"
#include "render/plot/figure.h"

namespace attn::figures {

fig::Figure attribution_figure(const AttributionTable& attribution, const PatchTable& patch,
                               bool by_position);
fig::Figure path_patch_figure(const PathPatchTable& table);
fig::Figure recorded_attribution_figure(const RecordedAttribution& attribution, int64_t step);

}  // namespace attn::figures
