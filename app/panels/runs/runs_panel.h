// Runs panel: every run directory under the runs root (where the window records its own runs,
// core/training/recording/run_recorder.h) and under any directory the user adds (`gui --run DIR`,
// the Add field), sweeps expanded to their cells. A table (name, mechanism, task, step, eval loss
// and accuracy, state, age); ticked runs are overlaid as figures::loss_overlay, the Compare panel's
// figure, colours and legend (runs that differ only in their seed optionally as one mean line
// with an sd or 95% band, the "seeds" combo); Open loads a run's checkpoint into the window so
// every view (attention, connections, C, surface) shows it. Contract:
//  - Follows directories another process is writing: a background thread (RunWatcher,
//    core/runs/run_list.h) rescans the list every 2 s and re-reads each run when its files
//    change, only the appended rows of a growing metrics.csv; the UI thread never reads a run's
//    files while drawing. An opened run whose checkpoint is rewritten is loaded again. Never
//    locks a run directory.
//  - Draws any number of runs and rows within a frame: the table draws only its visible rows,
//    the figure model reduces long lines (render/plot/figure_draw.h) and folds the legend, and
//    the overlay is drawn into a texture that is shown as it is until the overlay changes
//    (LiveFigure's cache key): bench_frames.sh --follow-rows / --follow-runs measure it.
//  - Open reports what the trainer did: "loading ..." until the trainer's snapshot says the
//    checkpoint loaded ("opened ... loaded") or failed (the error, naming the checkpoint).
//  - A followed run whose directory is deleted keeps its last data, marked "(deleted)" in the
//    table and the legend, with a note naming the directory.
//  - add_dir() returns false with error() set (the path named) for a path that is not a
//    directory; a directory with no run yet is kept and rescanned (a run about to start).
//  - report(): [{path, metric_rows, state, step, selected, own, first_rows, reads, error, gone,
//    open, open_error}] for every run listed (first_rows: rows at the first read; reads: how
//    many times it was read; open: "" or the last Open's outcome, "loading", "loaded" or
//    "failed", with open_error); the workspace puts it under "runs" in ATTN_GUI_REPORT.
//  - Test hook: ATTN_GUI_OPEN_RUN=DIR opens DIR (as its Open button does) once it is read.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "core/runs/run_list.h"

namespace attn::gui {

class RunsPanel : public Panel {
 public:
  explicit RunsPanel(std::string runs_root);

  // A run directory or a folder of runs, listed from now on; select: tick its runs for the
  // overlay.
  bool add_dir(const std::string& dir, bool select);
  const std::string& error() const { return error_; }
  // 0: each ticked run its own line; 1: seed groups as mean ± sd; 2: mean ± 95% CI.
  void set_seed_bands(int bands) { seed_bands_ = bands; }

  void draw(FrameContext& frame) override;
  void update(FrameContext& frame) override;
  nlohmann::json report() const override;

 private:
  struct Entry {
    RunView run;
    std::string name;  // label()'s text, computed once
    bool selected = false;
    explicit Entry(std::string dir) { run.dir = std::move(dir); }
  };
  Entry& add_entry(const std::string& dir);
  Entry* find(const std::string& dir);
  Entry& ensure(const std::string& dir);
  void merge(const std::vector<RunView>& views);
  void draw_table(FrameContext& frame);
  void open_run(Entry& e, Trainer& trainer, const Snapshot& snap);
  void check_open(const Snapshot& snap);
  std::string label(const Entry& e) const;

  std::string root_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::unordered_map<std::string, Entry*> index_;  // dir -> entry
  RunWatcher watcher_;
  uint64_t merged_serial_ = 0;
  std::string own_dir_;      // the window's own recording (snapshot.run_dir), normalised
  std::string own_dir_raw_;  // snapshot.run_dir as given, to normalise only when it changes
  std::unordered_set<std::string> dropped_;  // placeholders unfollowed (merge skips them)
  std::string opened_dir_;  // the run loaded with Open (followed: reloaded on a new checkpoint)
  int64_t opened_stamp_ = 0;
  // The last Open: the checkpoint asked for, the snapshot serial then, and its outcome.
  std::string open_path_, open_state_, open_error_, open_message_;
  uint64_t open_serial_ = 0;
  std::vector<std::string> pending_open_;  // asked to open before the run was read
  double last_recent_ = -1e9;
  std::string error_, note_, deleted_note_;
  char add_field_[512] = "";
  fig::Figure overlay_;
  uint64_t overlay_key_ = 0;
  uint64_t overlay_serial_ = 0;  // bumped with each new overlay_ (the screen's cache key)
  int seed_bands_ = 0;           // figures::SeedBands: each run, mean ± sd, mean ± 95% CI
  LiveFigure curves_;
};

}  // namespace attn::gui
