// Attention panel: the probe input's attention maps as a grid of heatmaps (layers as rows,
// heads as columns; one layer or all), token labels on the axes when cells are large enough,
// a hover readout "layer l head h: query i (tok) -> key j (tok) = w" and a viridis colorbar.
// Contract: draws one ImGui window named "Attention". Heatmaps are GL textures owned here,
// re-uploaded only when the maps change (the snapshot's generation and attention_step, so a
// reset that lands on the same step is still seen) or the colour scale changes; never every
// frame. Needs the GL context current; destroy before the window.
#pragma once
#include <cstdint>
#include <vector>

#include "core/views/snapshot.h"
#include "gui/panel.h"
#include "render/gl/gl_texture.h"

struct ImFont;

namespace attn::gui {

class AttentionPanel : public Panel {
 public:
  // open: the window's close button (may be null: no button).
  void draw(FrameContext& frame) override;
  std::vector<std::string> figures(const Snapshot& snap) const override;

 private:
  void update_textures(const Snapshot& snap);

  int layer_choice_ = -1;                // -1: all layers
  bool fixed_scale_ = false;             // true: 0..1, false: 0..max over the maps
  std::vector<render::Texture2D> maps_;  // parallel to snapshot.attention_maps()
  render::Texture2D colorbar_;
  uint64_t uploaded_key_ = 0;
  float vmax_ = 1.0f;
};

}  // namespace attn::gui
