// Runs panel: every run directory under the runs root (where the window records its own runs,
// core/runs/run_recorder.h) and under any directory the user adds (`gui --run DIR`, the Add
// field), sweeps expanded to their cells. A table (name, mechanism, task, step, eval loss and
// accuracy, state, age); ticked runs are overlaid as figures::loss_overlay, the Compare panel's
// figure, colours and legend; Open loads a run's checkpoint into the window so every view
// (attention, connections, C, surface) shows it.
// Contract:
//  - Follows directories another process is writing: the list is rescanned every 2 s and each
//    run re-read when its files change (core/runs/run_list.h), whole metrics rows only. An opened
//    run whose checkpoint is rewritten is loaded again. Never locks a run directory.
//  - add_dir() returns false with error() set (the path named) for a path that is not a
//    directory; a directory with no run yet is kept and rescanned (a run about to start).
//  - report(): [{path, metric_rows, state, step, selected, own, first_rows, reads, error}] for
//    every run listed (first_rows: rows at the first read; reads: how many times it was read); the
//    workspace puts it under "runs" in ATTN_GUI_REPORT.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/runs/run_list.h"
#include "gui/live_figure.h"
#include "gui/panel.h"

namespace attn::gui {

class RunsPanel : public Panel {
 public:
  explicit RunsPanel(std::string runs_root);

  // A run directory or a folder of runs, listed from now on; select: tick its runs for the
  // overlay.
  bool add_dir(const std::string& dir, bool select);
  const std::string& error() const { return error_; }

  void draw(FrameContext& frame) override;
  void update(FrameContext& frame) override;
  nlohmann::json report() const override;

 private:
  struct Entry {
    FollowedRun run;
    bool selected = false;
    explicit Entry(std::string dir) : run(std::move(dir)) {}
  };
  Entry* find(const std::string& dir);
  Entry& ensure(const std::string& dir);
  void rescan();
  void draw_table(FrameContext& frame);
  void open_run(Entry& e, Trainer& trainer);
  std::string label(const Entry& e) const;

  std::string root_;
  std::vector<std::string> added_;  // folders the user added (rescanned like the root)
  std::vector<std::unique_ptr<Entry>> entries_;
  std::string own_dir_;     // the window's own recording (snapshot.run_dir)
  std::string opened_dir_;  // the run loaded with Open (followed: reloaded on a new checkpoint)
  int64_t opened_stamp_ = 0;
  double last_scan_ = -1e9, last_refresh_ = -1e9;
  std::string error_, note_;
  char add_field_[512] = "";
  fig::Figure overlay_;
  std::string overlay_key_;
  LiveFigure curves_;
};

}  // namespace attn::gui
