// Loss panel: train loss (faint raw curve behind a debiased EMA with a smoothing slider), eval
// loss (line with markers), the unigram baseline when the snapshot has one, and eval accuracy
// in a second small plot. Log-y toggle; hovering shows the values at the nearest step.
// Contract: draws one ImGui window named "Loss" from the snapshot only. The EMA is recomputed
// only when the series or the smoothing change (keyed on snapshot.serial).
#pragma once
#include <cstdint>
#include <vector>

#include "core/views/snapshot.h"
#include "gui/panel.h"

struct ImFont;

namespace attn::gui {

class LossPanel : public Panel {
 public:
  // open: the window's close button (may be null: no button).
  void draw(FrameContext& frame) override;
  std::vector<std::string> figures(const Snapshot&) const override { return {"loss"}; }

 private:
  void draw_loss_plot(const Snapshot& snap, ImFont* font, float height);
  void draw_accuracy_plot(const Snapshot& snap, ImFont* font, float height);

  float smoothing_ = 0.6f;  // TensorBoard's default: smooth, but no long lag
  bool log_y_ = true;
  bool show_accuracy_ = true;
  std::vector<float> ema_;
  uint64_t ema_serial_ = ~uint64_t(0);
  float ema_smoothing_ = -1;
  float hover_x_ = -1;  // screen x of the cursor over a plot this frame (-1: none)
};

}  // namespace attn::gui
