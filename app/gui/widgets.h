// Small ImGui widgets the panels share.
#pragma once

namespace attn::gui {

// A "layer" combo: "all layers" (choice -1, when allow_all) or "layer l" for l < layers. A choice
// out of range is reset to -1 (or 0 without allow_all) first. Returns true when it changed.
bool layer_combo(const char* id, int* choice, int layers, float width, bool allow_all = true);

}  // namespace attn::gui
