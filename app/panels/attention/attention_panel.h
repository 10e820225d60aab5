// Attention panel: the probe input's attention maps as a grid of heatmaps (layers as rows,
// heads as columns; one layer or all), token labels on the axes where they fit, a hover readout
// "layer l, head h: query i (tok) -> key j (tok) = w" and one colorbar.
// Contract: the grid is figures::attention_figure built with the panel's controls (layer, colour
// scale) as options and drawn by the screen painter (gui/plot/live_figure.h); Export sends that
// same figure to the Export dialog. The figure is rebuilt only when the snapshot (serial) or a
// control changes. Needs the GL context current; destroy before the window. The probe editor
// (panels/probe/probe_editor.h) above the maps takes the user's own probe input.
#pragma once
#include <cstdint>

#include "app/figures/figures.h"
#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "app/panels/probe/probe_editor.h"
#include "core/views/snapshot.h"

namespace attn::gui {

class AttentionPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  std::vector<std::string> figures(const Snapshot& snap) const override;
  void update(FrameContext& frame) override;
  // probe_text, probe_error, probe_tokens, attention_step, step (for the probe editor's tests).
  nlohmann::json report() const override { return report_; }

 private:
  figures::FigureOptions options() const;

  int layer_choice_ = -1;  // -1: all layers
  int scale_ = 0;          // figures::AttentionScale: shared, per map, fixed 0..1
  ProbeEditor probe_;
  nlohmann::json report_;
  LiveFigure plot_;
  fig::Figure figure_;
  uint64_t built_serial_ = ~uint64_t(0);
  int built_layer_ = -3, built_scale_ = -1;
};

}  // namespace attn::gui
