// Compare panel: several runs side by side. Start N runs from the window's experiment varying
// one config key (each its own Trainer thread, the cores shared evenly), add saved run
// directories, and see overlaid eval loss / accuracy curves with per-run colours (Okabe-Ito by
// index, changeable with a colour picker), a table of final metrics, and the probe input's
// attention maps of every live run next to each other.
// Contract:
//  - Never waits on a trainer: the UI thread only reads snapshots and queues commands.
//  - Every live run is recorded as it trains, by its Trainer's RunRecorder exactly like the
//    window's own run (core/training/recording/run_recorder.h; TrainerOptions::run_dir):
//    config.json and a metrics.csv row per evaluation under save_root/run-<time>/<key=value>
//    (default: the runs root's compare/, which the Runs panel lists), checkpoint/ and summary.json
//    when it finishes, diverges or fails and when the window closes (close(): "window closed"), so
//    `attnlab compare`, `train --resume` and this panel can open it later. A run that cannot be
//    recorded shows why in the table's "saved" column and is named by close().
//  - start_runs()/add_saved_run() return false with error() set (the key, value or file named)
//    and change nothing on bad input.
//  - The curves are figures::loss_overlay (the figure `attnlab compare` writes) drawn by the
//    screen painter (gui/plot/live_figure.h), with a legend, a hover readout, and a log y axis when
//    the loss curves span more than a decade (or as the user picks); Export writes that figure.
//  - Runs that differ only in their seed can be drawn as one mean line with a band (sd or 95%
//    interval, the "seeds" combo), in the window and in the exported figure alike.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "core/config/config.h"
#include "core/runs/run_dir.h"
#include "core/views/snapshot.h"

struct ImFont;

namespace attn {
class Trainer;
}

namespace attn::gui {

class ComparePanel : public Panel {
 public:
  ComparePanel();
  ~ComparePanel();  // stops and joins the live runs' threads
  ComparePanel(const ComparePanel&) = delete;
  ComparePanel& operator=(const ComparePanel&) = delete;

  void set_save_root(const std::string& dir) { save_root_ = dir; }
  // Starts one run per value of `key` ("v1,v2,..."; values parsed as JSON when valid) from
  // `base`, same seed, same data order.
  bool start_runs(const ExperimentConfig& base, const std::string& key, const std::string& values);
  bool add_saved_run(const std::string& dir);
  const std::string& error() const { return error_; }
  // 0: each run its own line; 1: seed groups as mean ± sd; 2: mean ± 95% CI.
  void set_seed_bands(int bands) { seed_bands_ = bands; }

  // base: the experiment the window edits. Also saves finished live runs.
  void draw(FrameContext& frame) override;
  void update(FrameContext&) override { poll(); }
  // Reads the live runs' snapshots (and whether each is recorded) without drawing (called
  // every frame, even when the panel is not shown).
  void poll();
  // Stops every live run, which saves its recording; returns the runs not recorded whole.
  std::vector<std::string> close() override;

  // For ATTN_GUI_REPORT: each run's label, kind, state, step, eval loss/accuracy, colour and
  // saved directory.
  nlohmann::json report() const override;

 private:
  UiState* ui_ = nullptr;  // this frame's (the timeline's cursor and click requests)
  struct Run;
  fig::Figure overlay_figure();
  void draw_curves(const fig::Figure& figure, ImFont* font, float height);
  void draw_table();
  void draw_maps(ImFont* font);

  std::vector<std::unique_ptr<Run>> runs_;
  std::string save_root_ = "runs/compare";  // set_save_root(): the runs root's compare/
  bool closed_ = false;
  std::string error_;
  int seed_bands_ = 0;  // figures::SeedBands: each run, mean ± sd, mean ± 95% CI
  char key_[128] = "model.attention";
  char values_[256] = "dot,ky";
  char dir_[512] = "";
  int y_scale_ = 0;  // 0 auto, 1 linear, 2 log
  bool log_y_shown_ = false;
  std::vector<RunDirectory> overlay_dirs_;  // what overlay_figure()'s curves point into
  fig::Figure overlay_;                     // the last overlay_figure(), and what it was built from
  uint64_t overlay_key_ = 0;
  LiveFigure curves_;
  int layer_ = 0, head_ = 0;
};

}  // namespace attn::gui
