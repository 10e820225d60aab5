// Loss panel: train loss (faint raw curve behind a debiased EMA with a smoothing slider), eval
// loss (line with markers), the unigram baseline when the snapshot has one, and eval accuracy
// in a second panel. Log-y toggle; hovering shows the nearest point's value and step.
// Contract: the view of LossModel (loss_model.h: the controls, the figure, the eval-length row);
// this file makes only ImGui calls. The plot is the model's figure drawn by the screen painter
// (gui/plot/live_figure.h); Export sends that same figure to the Export dialog.
// The eval-length row (token tasks with a length: length_eval.h) asks the trainer to evaluate the
// model at another length (Trainer::request_length_eval) and shows Snapshot::length_eval: loss
// and accuracy there beside the training length, or why the model cannot run there.
// report(): "length_eval" (the model's row report plus the field's and the button's screen
// rectangles [x0, y0, x1, y1]) while the row is shown, and "plot_px" ([w, h] of the figure,
// never shorter than LossModel::least_height: the tile scrolls instead) with "font_px".
#pragma once
#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "app/panels/training/loss_model.h"

namespace attn::gui {

class LossPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  std::vector<std::string> figures(const Snapshot&) const override { return {"loss"}; }
  nlohmann::json report() const override { return report_; }

 private:
  void draw_length_eval(FrameContext& frame);

  LossModel model_;
  LiveFigure plot_;
  nlohmann::json report_ = nlohmann::json::object();
};

}  // namespace attn::gui
