// Small ImGui widgets the panels share.
#pragma once

namespace attn::gui {

// A "layer" combo: "all layers" (choice -1, when allow_all) or "layer l" for l < layers. A choice
// out of range is reset to -1 (or 0 without allow_all) first. Returns true when it changed.
bool layer_combo(const char* id, int* choice, int layers, float width, bool allow_all = true);

// A checkbox whose label is drawn dimmed when `dimmed` (asked for but not shown now, e.g. for lack
// of room; the caller's tooltip says why). Returns true when it was clicked.
bool dimmable_checkbox(const char* label, bool* value, bool dimmed);

// Starts a table row whose first cell is `label`; the caller fills the next columns.
void table_row_label(const char* label);

// The "seeds" combo of the Runs and Compare panels: 0 each run its own line, 1 each seed group
// (runs that differ only in their seed) as a mean line with a band of the sample sd, 2 with the
// 95% t-interval of the mean (figures::SeedBands' order). `what` names the runs in the tooltip
// ("Runs", "Ticked runs"). Returns true when it changed.
bool seed_bands_combo(int* choice, const char* what);

}  // namespace attn::gui
