// Small ImGui widgets the panels share.
#pragma once
#include <imgui.h>

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

// A tooltip (ImGui::SetTooltip's arguments) whose text wraps at tooltip_width(): ImGui keeps a
// tooltip inside the window only when it fits, and at UI scale 2 on 1280x720 a one-line tooltip
// ran off the right edge.
void tooltip(const char* format, ...) IM_FMTARGS(1);
// The widest a tooltip's text may be: 40 font sizes, never more than the main viewport less its
// padding (a tooltip's window padding, the display's safe area) on both sides.
float tooltip_width();

// Before an item `width` pixels wide that follows the last one: ImGui::SameLine() where it fits
// in the rest of the row, else nothing, so it starts the next row (at UI scale 2 a row of
// buttons ran past the tile's edge). Returns whether it stays on the row.
bool same_line_if_fits(float width);
// A button's width for `label` (its visible part) at the current font and frame padding.
float button_width(const char* label);
// A checkbox's width with its `label`: the box, the inner spacing and the text.
float checkbox_width(const char* label);

}  // namespace attn::gui
