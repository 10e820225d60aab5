// The Runs panel's model (runs_panel.h is its view): every run directory under the runs root
// and under any directory the user adds, each with its tick, the overlay figure of the ticked
// runs, the Open requests and their outcome, the Recent-runs list, and the report. No ImGui:
// tests drive it on a temporary runs directory (tests/app/panel_models/test_runs.cpp).
// Contract:
//  - Follows directories another process is writing: a background thread (RunWatcher,
//    core/runs/directory/run_list.h) rescans the list every 2 s and re-reads each run when its
//    files change, only the appended rows of a growing metrics.csv; update() only takes its newest
//    reading, it never reads a run's files. Never locks a run directory.
//  - add_dir() returns false with error() set (the path named) for a path that is not a
//    directory; a directory with no run yet is kept and rescanned (a run about to start), and
//    its runs replace it once they appear (its tick passes to them).
//  - Open: open() and update() return the checkpoint directories to load; the caller hands them
//    to the trainer (Trainer::load_checkpoint). The outcome is read from the trainer's snapshot
//    message: "loading" until it says the checkpoint loaded or failed (the error names the
//    checkpoint). An opened run whose checkpoint is rewritten is loaded again.
//  - A followed run whose directory is deleted keeps its last data, marked "(deleted)" in its
//    label, with a note naming the directory.
//  - overlay(): figures::loss_overlay of the ticked readable runs (Compare's figure, colours
//    figures::compare_color in list order, optionally seed groups as mean and band), rebuilt
//    only when the ticks, seed_bands, the own run or a ticked run's reading change.
//  - report(): [{path, metric_rows, state, step, selected, own, first_rows, reads, error, gone,
//    open, open_error, differs}] for every run listed.
//  - Test hook: ATTN_GUI_OPEN_RUN=DIR opens DIR (as its Open button does) once it is read.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "app/gui/ui_state.h"
#include "core/runs/directory/run_list.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

namespace attn::gui {

class RunsModel {
 public:
  explicit RunsModel(std::string runs_root);

  // A run directory or a folder of runs, listed from now on; select: tick its runs.
  bool add_dir(const std::string& dir, bool select);
  const std::string& error() const { return error_; }
  const std::string& root() const { return root_; }
  const std::string& note() const { return note_; }
  const std::string& deleted_note() const { return deleted_note_; }
  void rescan() { watcher_.poke(); }

  // The controls (the view binds widgets to them).
  int seed_bands = 0;  // figures::SeedBands: each ticked run, mean ± sd, mean ± 95% CI
  char add_field[512] = "";

  // Once a frame, drawn or not: File > Open run requests (ui.open_run_requests), the window's
  // own run (snap.run_dir), the watcher's newest reading, the Open outcome, and every half
  // second ui.recent_runs. `now`: seconds on any steady clock. Returns checkpoints to load.
  std::vector<std::string> update(const Snapshot& snap, UiState& ui, double now);

  // The listing, in the order first seen.
  size_t size() const { return entries_.size(); }
  const RunView& run(size_t i) const { return entries_.at(i)->run; }
  std::string label(size_t i) const { return label(*entries_.at(i)); }
  bool& selected(size_t i) { return entries_.at(i)->selected; }
  bool own(size_t i) const { return entries_.at(i)->run.dir == own_dir_; }
  bool can_open(size_t i) const;
  // The config keys whose values differ between the readable runs listed
  // (app/panels/runs/config_diff_model.h: "model.position", "seed", "train.lr"), sorted, and a
  // run's values of them ("" until it is read). Recomputed when a run is first read.
  const std::vector<std::string>& differing_keys() const { return differing_; }
  std::string differs(size_t i) const;
  // Each run's colour in the overlay (figures::compare_color's index; -1: not drawn).
  std::vector<int> color_indices() const;
  // Open button: the checkpoint to load ("" when it cannot: error() or note() says why).
  std::string open(size_t i, const Snapshot& snap);

  bool any_overlaid() const;  // some ticked run is readable
  const fig::Figure& overlay();
  uint64_t overlay_serial() const { return overlay_serial_; }  // bumped with each new overlay

  nlohmann::json report() const;

 private:
  struct Entry {
    RunView run;
    std::string name;  // label()'s text, computed once
    bool selected = false;
    nlohmann::json config;  // the run's resolved config once read (null before)
    explicit Entry(std::string dir) { run.dir = std::move(dir); }
  };
  Entry& add_entry(const std::string& dir);
  Entry* find(const std::string& dir);
  Entry& ensure(const std::string& dir);
  void merge(const std::vector<RunView>& views);
  void drop_placeholders();
  void update_differing();
  void note_deleted();
  std::vector<std::string> merge_latest(const Snapshot& snap);
  void update_recent(UiState& ui);
  std::string open_entry(Entry& e, const Snapshot& snap);
  void check_open(const Snapshot& snap);
  std::string label(const Entry& e) const;
  uint64_t overlay_key() const;

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
  std::vector<std::string> differing_;
  fig::Figure overlay_;
  uint64_t overlay_key_ = 0;
  uint64_t overlay_serial_ = 0;
};

}  // namespace attn::gui
