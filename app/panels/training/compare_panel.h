// Compare panel: several runs side by side. Start N runs from the window's experiment varying
// one config key (each its own Trainer thread, the cores shared evenly), add saved run
// directories, and see overlaid eval loss / accuracy curves with per-run colours (Okabe-Ito by
// index, changeable with a colour picker), a table of final metrics, and the probe input's
// attention maps of every live run next to each other.
// Contract: the view of CompareModel (compare_model.h: the runs, their recording, the controls,
// the overlay figure, the rows, the report); this file makes only ImGui calls. The curves are the
// model's overlay drawn by the screen painter (gui/plot/live_figure.h), with a legend and a hover
// readout; Export writes that figure. update() polls the runs every frame, drawn or not.
#pragma once
#include <string>
#include <vector>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "app/panels/training/compare_model.h"

struct ImFont;

namespace attn::gui {

class ComparePanel : public Panel {
 public:
  // The panel table's set-up (app/panels/panel_table.cpp): see CompareModel.
  void set_save_root(const std::string& dir) { model_.set_save_root(dir); }
  bool start_runs(const ExperimentConfig& base, const std::string& key, const std::string& values) {
    return model_.start_runs(base, key, values);
  }
  bool add_saved_run(const std::string& dir) { return model_.add_saved_run(dir); }
  const std::string& error() const { return model_.error(); }
  // 0: each run its own line; 1: seed groups as mean ± sd; 2: mean ± 95% CI.
  void set_seed_bands(int bands) { model_.seed_bands = bands; }

  void draw(FrameContext& frame) override;
  void update(FrameContext&) override { model_.poll(); }
  std::vector<std::string> close() override { return model_.close(); }
  nlohmann::json report() const override { return model_.report(); }

 private:
  void draw_controls(const ExperimentConfig& base);
  void draw_curves(const fig::Figure& figure, ImFont* font, float height, UiState& ui);
  void draw_table();
  void draw_maps(ImFont* font);

  CompareModel model_;
  LiveFigure curves_;
};

}  // namespace attn::gui
