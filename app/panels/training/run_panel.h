// Run panel: trainer controls (start, pause, step, reset, save/load, live learning rate), the
// run's status from the snapshot, and the experiment editor ("Apply & reset").
// Contract: the view of RunModel (run_model.h: what each control allows, the status, the
// editor's rules); this file makes only ImGui calls and hands the trainer its commands, all
// non-blocking, except trainer.config() on "Revert" and when a run is opened (a short copy under
// the trainer's lock, never a training step). Draws into the region the workspace gives it.
// report(): the model's, plus where Start, Reset (the last of the row of buttons), "Set peak lr"
// and "Apply & reset" were drawn ([x, y, w, h], window pixels: the tiles test checks Start and
// Apply lie inside the panel, reachable without scrolling; a button that does not fit beside the
// one before it wraps to the next row, so none runs past the tile's edge).
#pragma once
#include <array>

#include "app/gui/panel.h"
#include "app/panels/training/run_model.h"

namespace attn::gui {

class RunPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  void update(FrameContext& frame) override;
  nlohmann::json report() const override;

 private:
  void draw_controls(FrameContext& frame);
  void draw_apply_row(FrameContext& frame);
  void draw_experiment_fields(UiState& ui);
  bool draw_model_fields(ModelConfig& m);
  bool edit_attention_options(ModelConfig& m);

  RunModel model_;
  std::array<float, 4> start_rect_{}, apply_rect_{}, buttons_rect_{}, set_lr_rect_{};
};

}  // namespace attn::gui
