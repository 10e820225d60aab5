// The Compare panel's model (compare_panel.h is its view): the runs side by side (live ones,
// each its own Trainer thread, and saved run directories), the controls' state (the Vary key and
// values, the directory field, y scale, seed bands, each run's colour, the maps' layer and head),
// the overlay figure they give, the table's rows, the maps to show and the report. No ImGui:
// tests drive it without a window (tests/app/panel_models/test_compare.cpp).
// Contract:
//  - Never waits on a trainer: poll() only reads snapshots; commands are queued.
//  - Every live run is recorded as it trains, by its Trainer's RunRecorder exactly like the
//    window's own run (core/training/recording/run_recorder.h; TrainerOptions::run_dir):
//    config.json and a metrics.csv row per evaluation under save_root/run-<time>/<key=value>
//    (default: the runs root's compare/, which the Runs panel lists), checkpoint/ and summary.json
//    when it finishes, diverges or fails and when the window closes (close(): "window closed"), so
//    `attnlab compare`, `train --resume` and this panel can open it later. A run that cannot be
//    recorded says why in its row's saved text and is named by close().
//  - start_runs()/add_saved_run() return false with error() set (the key, value or file named)
//    and change nothing on bad input.
//  - overlay() is figures::loss_overlay (the figure `attnlab compare` writes) of every run in its
//    colour, with the y scale (auto: log when the loss curves span more than a decade) and seed
//    bands (runs that differ only in their seed as one mean line with an sd or 95% band) chosen;
//    rebuilt only when a run publishes, is added, saved or recoloured, or a control changes.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/runs/directory/run_dir.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

namespace attn::gui {

class CompareModel {
 public:
  CompareModel();
  ~CompareModel();  // stops and joins the live runs' threads
  CompareModel(const CompareModel&) = delete;
  CompareModel& operator=(const CompareModel&) = delete;

  void set_save_root(const std::string& dir) { save_root_ = dir; }
  const std::string& save_root() const { return save_root_; }
  // Starts one run per value of `key` ("v1,v2,..."; values parsed as JSON when valid) from
  // `base`, same seed, same data order.
  bool start_runs(const ExperimentConfig& base, const std::string& key, const std::string& values);
  bool add_saved_run(const std::string& dir);
  const std::string& error() const { return error_; }

  // Reads the live runs' snapshots (and whether each is recorded); called every frame.
  void poll();
  // Stops every live run, which saves its recording; returns the runs not recorded whole.
  std::vector<std::string> close();

  // The controls (the view binds widgets to them).
  char key[128] = "model.attention";
  char values[256] = "dot,ky";
  char dir[512] = "";
  int y_scale = 0;     // figures::YScale: auto, linear, log
  int seed_bands = 0;  // figures::SeedBands: each run, mean ± sd, mean ± 95% CI
  int layer = 0, head = 0;

  size_t size() const { return runs_.size(); }
  float* color(size_t run);  // the run's colour, RGB in [0, 1] (the view's colour picker)

  // The overlay of every run (live ones from their latest snapshot).
  const fig::Figure& overlay();
  bool log_y_shown() const { return log_y_shown_; }
  bool any_metrics() const;  // some run has a loss point
  bool any_maps() const;     // some live run has the probe's attention maps

  // One row of the table: a live run's snapshot or a saved run's summary (NaN: unknown).
  enum class SavedTone { Saved, Recording, Failed };
  struct Row {
    std::string label, state;
    double step, eval_loss, eval_accuracy, parameters, attention_parameters, steps_per_second;
    std::string saved;  // the recorded directory, "recording to DIR", or why it is not recorded
    SavedTone tone = SavedTone::Saved;
    std::string differs;  // its values of differing_keys(): "model.position=rope, seed=2"
  };
  Row row(size_t run) const;
  // The config keys whose values differ between the runs (app/panels/runs/config_diff_model.h),
  // sorted; recomputed when a run is added.
  const std::vector<std::string>& differing_keys() const;

  // The probe's attention maps at (layer, head) of every live run that has them, in run order.
  struct MapShown {
    std::string label;
    const float* color;
    const AttentionMap* map;
  };
  int map_layers() const;  // the most layers / heads of any run with maps (0: no maps)
  int map_heads() const;
  std::vector<MapShown> maps() const;

  // For ATTN_GUI_REPORT: each run's label, kind, state, step, eval loss, colour and saved
  // directory and "differs"; "differing_keys"; what the curves show (eval lines and bands), the y
  // scale and the seed bands.
  nlohmann::json report() const;

 private:
  struct Run;
  fig::Figure build_overlay();
  uint64_t overlay_key() const;

  std::vector<std::unique_ptr<Run>> runs_;
  std::string save_root_ = "runs/compare";  // set_save_root(): the runs root's compare/
  bool closed_ = false;
  std::string error_;
  bool log_y_shown_ = false;
  mutable std::vector<nlohmann::json> configs_;  // each run's resolved config, in run order
  mutable std::vector<std::string> differing_;
  std::vector<RunDirectory> overlay_dirs_;  // what overlay_'s curves point into
  fig::Figure overlay_;
  uint64_t overlay_key_ = 0;
};

}  // namespace attn::gui
