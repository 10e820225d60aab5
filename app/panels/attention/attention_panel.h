// Attention panel: the probe input's attention maps as a grid of heatmaps (layers as rows,
// heads as columns; one layer or all), token labels on the axes where they fit, a hover readout
// "layer l, head h: query i (tok) -> key j (tok) = w" and one colorbar.
// Contract: the panel is an AttentionModel (attention_model.h: controls, the grid figure, the
// report) and this ImGui view of it. The grid is figures::attention_figure built with the
// controls as options and drawn by the screen painter (gui/plot/live_figure.h); Export sends that
// same figure to the Export dialog, as does the window's export (shown_figure). The crop line's
// "Crop" combo offers the task's regions (AttentionModel::crop_presets). Needs the GL context
// current; destroy before the window. The probe editor (panels/probe/probe_editor.h) above the maps
// takes the user's own probe input.
#pragma once
#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "app/gui/plot/map_fit.h"
#include "app/panels/attention/attention_model.h"
#include "app/panels/probe/probe_editor.h"

namespace attn::gui {

class AttentionPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  std::vector<std::string> figures(const Snapshot& snap) const override {
    return AttentionModel::figures(snap);
  }
  void update(FrameContext& frame) override { model_.observe(frame.snap); }
  // The model's report, plus "map_px": the smallest map's side on screen last frame (never below
  // kMinMapFonts font sizes where the tile's width allows; the tile scrolls), "font_px" and
  // "ablated_step" (the step of the ablated model's maps on screen; -1: the unablated maps).
  nlohmann::json report() const override;
  static constexpr float kMinMapFonts = 7;
  // "attention" as on screen, crop, zoom and single head included (the window's export).
  const fig::Figure* shown_figure(const std::string& name) const override;

 private:
  void toolbar(const Snapshot& snap, bool have);
  void draw_maps(FrameContext& frame);

  AttentionModel model_;
  ProbeEditor probe_;
  LiveFigure plot_;
  MapFit fit_;  // the maps' height: at least kMinMapFonts font sizes a side
  float font_px_ = 0;
  int64_t ablated_step_ = -1;
  mutable fig::Figure on_screen_;  // shown_figure()'s answer, made when asked
};

}  // namespace attn::gui
