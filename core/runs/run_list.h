// Finding run directories and following them while another process writes them: what the
// window's Runs panel lists (app/panels/runs/) and what `attnlab gui --run DIR` follows.
// Torch-free; never locks (core/runs/run_lock.h: readers never do).
// Contract:
//  - find_run_dirs(root) returns root itself when it holds a run (config.json), else the run
//    directories below it, depth-first in name order, at most `depth` levels down: a sweep's
//    folder expands to its cells. Unreadable folders are skipped; a missing root gives none.
//  - FollowedRun::refresh() re-reads the directory only when metrics.csv, summary.json or the
//    checkpoint changed (size or modification time), so polling it every frame is cheap. Rows are
//    whole lines only: a last line without its newline (being appended right now) is not data
//    (parse_metrics_csv). It never throws: a run that cannot be read keeps its last good
//    reading and says why in error().
//  - state(): "live" (a writer holds the lock and no summary), "paused" (a writer holds the lock,
//    the summary says interrupted), "finished", "diverged", "stopped" (interrupted, no writer),
//    "incomplete" (no summary, no writer: killed), "unreadable" (never read).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/runs/run_dir.h"

namespace attn {

std::vector<std::string> find_run_dirs(const std::string& root, int depth = 3);

class FollowedRun {
 public:
  explicit FollowedRun(std::string dir) : dir_(std::move(dir)) {}

  // Re-reads what changed; returns true when something new was read.
  bool refresh();

  const std::string& dir() const { return dir_; }
  bool readable() const { return read_; }
  const RunDirectory& run() const { return run_; }  // valid when readable()
  const std::string& error() const { return error_; }
  const std::string& state() const { return state_; }
  int64_t metric_rows() const { return run_.rows; }
  int64_t last_step() const;  // the last metrics row's step (0 when none)
  // Seconds since any of its files last changed (for "age").
  double age_seconds() const;
  // Bumped whenever refresh() reads something new (the checkpoint included).
  uint64_t version() const { return version_; }
  // Metric rows at the first successful read (how far it was when the window started following).
  int64_t first_rows() const { return first_rows_; }
  // checkpoint/state.json's modification time (0 when absent): a new checkpoint was written.
  int64_t checkpoint_stamp() const { return checkpoint_stamp_; }

 private:
  std::string dir_;
  RunDirectory run_;
  bool read_ = false;
  std::string error_, state_ = "unreadable";
  std::string stamp_;  // sizes and times of the files last read
  int64_t checkpoint_stamp_ = 0;
  int64_t newest_change_ = 0;  // ns since the epoch
  uint64_t version_ = 0;
  int64_t first_rows_ = -1;
};

}  // namespace attn
