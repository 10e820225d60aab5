// Loss panel: train loss (faint raw curve behind a debiased EMA with a smoothing slider), eval
// loss (line with markers), the unigram baseline when the snapshot has one, and eval accuracy
// in a second panel. Log-y toggle; hovering shows the nearest point's value and step.
// Contract: the plot is figures::loss_figure built with the panel's controls as options
// (smoothing, log y, accuracy) and drawn by the screen painter (gui/plot/live_figure.h); Export
// sends that same figure to the Export dialog. The figure is rebuilt only when the snapshot
// (snapshot.serial) or a control changes.
// The eval-length row (token tasks with a length: length_eval.h) asks the trainer to evaluate the
// model at another length (Trainer::request_length_eval) and shows Snapshot::length_eval: loss
// and accuracy there beside the training length, or why the model cannot run there.
#pragma once
#include <cstdint>

#include "app/figures/figures.h"
#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "core/views/snapshot.h"

namespace attn::gui {

class LossPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  std::vector<std::string> figures(const Snapshot&) const override { return {"loss"}; }
  nlohmann::json report() const override { return report_; }

 private:
  figures::FigureOptions options() const;
  void draw_length_eval(FrameContext& frame);

  float smoothing_ = 0.6f;  // TensorBoard's default: smooth, but no long lag
  bool log_y_ = true;
  bool show_accuracy_ = true;
  LiveFigure plot_;
  fig::Figure figure_;
  uint64_t figure_serial_ = ~uint64_t(0);
  float built_smoothing_ = -1;
  bool built_log_y_ = false, built_accuracy_ = false;
  int eval_length_ = 0;     // the field
  int field_trained_ = -1;  // the training length the field was filled for
  std::string field_key_;
  uint64_t task_serial_ = ~uint64_t(0);  // the snapshot the task's length key was read at
  std::string task_key_;                 // "" when the task has no length
  int task_trained_ = 0;
  nlohmann::json report_ = nlohmann::json::object();
};

}  // namespace attn::gui
