// Runs panel: every run directory under the runs root (where the window records its own runs,
// core/training/recording/run_recorder.h) and under any directory the user adds (`gui --run DIR`,
// the Add field), sweeps expanded to their cells. A table (name, mechanism, task, step, eval loss
// and accuracy, state, age); ticked runs are overlaid as figures::loss_overlay, the Compare panel's
// figure, colours and legend (runs that differ only in their seed optionally as one mean line
// with an sd or 95% band, the "seeds" combo); Open loads a run's checkpoint into the window so
// every view (attention, connections, C, surface) shows it.
// Contract: the view of RunsModel (runs_model.h: the listing and its following, the ticks, the
// overlay, Open and its outcome, the report); this file makes only ImGui calls and hands the
// model's checkpoints to the trainer.
//  - Draws any number of runs and rows within a frame: the table draws only its visible rows,
//    the figure model reduces long lines (render/plot/figure_draw.h) and folds the legend, and
//    the overlay is drawn into a texture that is shown as it is until the overlay changes
//    (LiveFigure's cache key): bench_frames.sh --follow-rows / --follow-runs measure it.
//  - report(): the model's; the workspace puts it under "runs" in ATTN_GUI_REPORT.
#pragma once
#include <string>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "app/panels/runs/runs_model.h"

namespace attn::gui {

class RunsPanel : public Panel {
 public:
  explicit RunsPanel(std::string runs_root) : model_(std::move(runs_root)) {}

  // The panel table's set-up (app/panels/panel_table.cpp): see RunsModel.
  bool add_dir(const std::string& dir, bool select) { return model_.add_dir(dir, select); }
  const std::string& error() const { return model_.error(); }
  // 0: each ticked run its own line; 1: seed groups as mean ± sd; 2: mean ± 95% CI.
  void set_seed_bands(int bands) { model_.seed_bands = bands; }

  void draw(FrameContext& frame) override;
  void update(FrameContext& frame) override;
  nlohmann::json report() const override { return model_.report(); }

 private:
  void draw_table(FrameContext& frame);
  void draw_row(FrameContext& frame, size_t row, int color);
  void draw_overlay(FrameContext& frame);

  RunsModel model_;
  LiveFigure curves_;
};

}  // namespace attn::gui
