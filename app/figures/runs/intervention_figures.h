// The Interventions panel's figures (torch-free), shared by the window's Export buttons and
// `attnlab analyze --figure`: head importance and activation patching as layer x head heatmaps
// (core/views/intervention_view.h).
// Contract:
//  - importance_figure: the eval loss change (nats; accuracy: the accuracy change in points)
//    when each head is ablated alone, layer rows (layer 0 on top), head columns, on a diverging
//    scale centred on 0, each cell's value printed in it (up to 64 cells); the title names the
//    mode, the batches, the step and the baseline. The heatmap carries the exact changes (the
//    CSV equals them).
//  - patch_figure: the share of the clean-minus-corrupted metric each head restores, layer x
//    head; with by_position a second panel, one row per head ("L0 H1") and one column per
//    position (the clean probe's tokens as ticks, the positions where the probes differ marked
//    "*"). Cells without a value (a classifier's CLS alone) are NaN (blank).
//  - Both throw attn::Error for an empty table.
#pragma once
#include <string>

#include "core/base/decimal.h"
#include "core/views/intervention_view.h"
#include "render/plot/figure.h"

namespace attn::figures {

fig::Figure importance_figure(const ImportanceTable& table, bool accuracy = false);
// A layer x head heatmap panel (these figures', and the head metrics at a step): head columns,
// layer rows (layer 0 on top), each tick its index; `values` row-major, layers x heads, named
// `name`, with `label` on the colour bar.
fig::Panel layer_head_panel(const std::string& name, const std::string& label, int layers,
                            int heads, std::vector<float> values,
                            render::Colormap colormap = fig::Heatmap{}.colormap);
fig::Figure patch_figure(const PatchTable& table, bool by_position = true);

// "WHAT, step N: METRIC clean X (ANSWER), corrupted Y (ANSWER)": the title of a figure about one
// clean/corrupted probe pair (patching, attribution, path patching tables share these fields).
template <class Table>
std::string probe_pair_title(const std::string& what, const Table& t) {
  return what + ", step " + std::to_string(t.step) + ": " + t.metric + " clean " +
         fixed_decimal(t.clean_metric, 2) + " (" + t.clean_answer + "), corrupted " +
         fixed_decimal(t.corrupt_metric, 2) + " (" + t.corrupt_answer + ")";
}

}  // namespace attn::figures
