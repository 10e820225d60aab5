// Interventions panel: why the model needs a head. Pick heads (click a cell of the importance
// map, or right-click a map in the Attention panel) and an ablation mode (zero, mean, uniform),
// and see the eval loss, accuracy and the probe's prediction with those heads ablated; the
// importance map (each head ablated alone: the eval loss change) and the activation-patching
// map (the share of the clean-minus-corrupted metric each head restores; by position below),
// each with a colorbar and an Export button (figures::importance_figure / patch_figure, the
// figures `attnlab analyze --figure` writes); side by side in a wide tile, one at a time (chosen
// by a pair of buttons) in a narrow one.
// Contract: the panel is an InterventionsModel (interventions_model.h: its controls, the
// request's changes, the figures, the summary, the report) and this ImGui view of it. The
// panel's request lives in UiState::interventions and goes to the trainer
// (Trainer::request_interventions) whenever a control changes it; the trainer answers on its
// thread between steps, on Trainer::kInterventionBatches eval batches, and again every recorded
// step while training. At a recorded step (the timeline) the importance map is the one recorded
// there (zero ablation); the ablation and the patch are the model's at the step they name. Under
// the maps, the attribution patching and direct logit attribution recorded at the timeline's step
// (views.rec; while Latest the newest record, its line naming the model's step), or one line
// saying that step recorded none; live without a recording, nothing.
// Ablated heads are outlined on the importance map. report(): "ablate", "mode", "importance",
// "patch", "step", "error", "ablated_loss", "baseline_loss", "importance_step", and for the
// GUI tests' clicks the screen rectangles [x0, y0, x1, y1] of the last frame's importance cells
// ("cells": {"L.H": rect}) and Patch button ("patch_button"); "recorded_step",
// "recorded_attribution", "recorded_dla". No torch; GL context current.
#pragma once
#include <memory>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "app/panels/attention/interventions_model.h"

namespace attn::gui {

class InterventionsPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  void update(FrameContext& frame) override {
    model_.observe(frame.ui.interventions, frame.snap.interventions.get());
  }
  // The model's report plus "plot_px": {"importance"|"patch": [w, h]} the maps drawn last frame
  // (never below a least height in font sizes: the tile scrolls), and "font_px".
  nlohmann::json report() const override;
  std::vector<std::string> figures(const Snapshot& snap) const override {
    return InterventionsModel::figures(snap);
  }
  const fig::Figure* shown_figure(const std::string& name) const override {
    return model_.shown_figure(name);
  }

 private:
  bool controls(InterventionRequest& r);
  bool patch_controls(InterventionRequest& r);
  void summary(const Snapshot& snap, int64_t timeline_step);
  bool toolbar(const InterventionView& v);
  void draw_importance(FrameContext& frame, ImVec2 size, ImFont* font);
  void draw_patch(const PatchTable& p, ImVec2 size, ImFont* font);
  void draw_recorded(ImVec2 size, ImFont* font);

  InterventionsModel model_;
  LiveFigure importance_plot_, patch_plot_, recorded_plot_;
  nlohmann::json plot_px_ = nlohmann::json::object();  // report()'s "plot_px"
  float font_px_ = 0;
  std::shared_ptr<const ViewRecord> record_;  // the timeline's, shown by draw_recorded
};

}  // namespace attn::gui
