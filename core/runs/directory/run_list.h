// Finding run directories and following them while another process writes them: what the
// window's Runs panel lists (app/panels/runs/) and what `attnlab gui --run DIR` follows.
// Torch-free; never locks (core/runs/directory/run_lock.h: readers never do).
// Contract:
//  - find_run_dirs(root) returns root itself when it holds a run (config.json), else the run
//    directories below it, depth-first in name order, at most `depth` levels down: a sweep's
//    folder expands to its cells. Unreadable folders are skipped; a missing root gives none.
//  - FollowedRun::refresh() reads only what changed (size, modification time, inode): config.json
//    or summary.json changed -> the directory is read again; metrics.csv grew -> only the
//    appended bytes are parsed and their rows appended (a 12 MB file is not parsed again for
//    each new row); metrics.csv shrank, was replaced (new inode) or an appended row's step does
//    not follow the last one -> the file is parsed again whole. Rows are whole lines only: a
//    last line without its newline (being appended right now) is not data yet (as in
//    parse_metrics_csv). Polling it is cheap. It never throws: a run that cannot be read keeps
//    its last good reading and says why in error().
//  - A directory that disappears after it was read is "deleted" (gone() true): its last reading
//    is kept, error() says the directory is gone; it is read again if it comes back.
//  - state(): "live" (a writer holds the lock and no summary), "paused" (a writer holds the lock,
//    the summary says interrupted), "finished", "diverged", "stopped" (interrupted, no writer),
//    "incomplete" (no summary, no writer: killed), "deleted", "unreadable" (never read).
//  - RunWatcher follows directories on a background thread and publishes immutable views
//    (RunView) that the UI thread takes each frame without waiting on any file.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/runs/directory/run_dir.h"

namespace attn {

std::vector<std::string> find_run_dirs(const std::string& root, int depth = 3);

struct RunView;

class FollowedRun {
 public:
  explicit FollowedRun(std::string dir) : dir_(std::move(dir)) {}

  // Re-reads what changed; returns true when something new was read, or the state (a writer
  // stopped) or the error changed.
  bool refresh();

  const std::string& dir() const { return dir_; }
  bool readable() const { return read_; }
  bool gone() const { return gone_; }               // the directory disappeared after a read
  const RunDirectory& run() const { return run_; }  // valid when readable()
  // The same reading, shared and immutable (null until readable()): a new object whenever
  // refresh() reads something new, so another thread may keep the old one.
  std::shared_ptr<const RunDirectory> shared_run() const { return shared_; }
  const std::string& error() const { return error_; }
  const std::string& state() const { return state_; }
  int64_t metric_rows() const { return run_.rows; }
  int64_t last_step() const;  // the last metrics row's step (0 when none)
  // Seconds since any of its files last changed (for "age").
  double age_seconds() const;
  int64_t newest_change_ns() const { return newest_change_; }
  // Bumped whenever refresh() reads something new (the checkpoint included).
  uint64_t version() const { return version_; }
  // Metric rows at the first successful read (how far it was when the window started following).
  int64_t first_rows() const { return first_rows_; }
  // checkpoint/state.json's modification time (0 when absent): a new checkpoint was written.
  int64_t checkpoint_stamp() const { return checkpoint_stamp_; }
  // How metrics.csv was read: whole parses and appended-bytes reads (for tests and reports).
  uint64_t whole_reads() const { return whole_reads_; }
  uint64_t appended_reads() const { return appended_reads_; }
  // What the UI shows of it now (RunWatcher publishes these).
  RunView view() const;

 private:
  void read_metrics_whole(const std::string& path);
  bool read_metrics_appended(const std::string& path, uint64_t size);
  void update_state(bool locked);

  std::string dir_;
  RunDirectory run_;
  std::shared_ptr<const RunDirectory> shared_;
  bool read_ = false, gone_ = false;
  std::string error_, state_ = "unreadable";
  std::string meta_stamp_;  // sizes and times of config.json and summary.json last read
  std::string header_;      // metrics.csv's header line
  uint64_t metrics_offset_ = 0, metrics_inode_ = 0;  // bytes of whole lines parsed; the file
  int64_t metrics_mtime_ = 0;
  int64_t checkpoint_stamp_ = 0;
  int64_t newest_change_ = 0;  // ns since the epoch
  uint64_t version_ = 0, whole_reads_ = 0, appended_reads_ = 0;
  int64_t first_rows_ = -1;
};

// Seconds from a file time (ns since the file clock's epoch, FollowedRun::newest_change_ns) to
// now; 0 for 0.
double seconds_since_file_time(int64_t ns);

// What the UI shows of a followed run: a copy of FollowedRun's state at one moment.
struct RunView {
  std::string dir;
  bool readable = false, gone = false;
  std::shared_ptr<const RunDirectory> run;  // null until readable
  std::string state = "unreadable", error;
  uint64_t version = 0;
  int64_t rows = 0, first_rows = -1, last_step = 0, checkpoint_stamp = 0, newest_change_ns = 0;
};

// Follows run directories on its own thread: every `refresh_seconds` each followed directory
// is refreshed (FollowedRun), every `rescan_seconds` each root is searched again
// (find_run_dirs) and new runs under it are followed. latest() returns the newest list of
// views (every directory followed, in the order first seen), never waiting for a file.
// Thread-safe; the destructor stops and joins the thread.
class RunWatcher {
 public:
  explicit RunWatcher(double refresh_seconds = 0.5, double rescan_seconds = 2.0);
  ~RunWatcher();
  RunWatcher(const RunWatcher&) = delete;
  RunWatcher& operator=(const RunWatcher&) = delete;

  void add_root(const std::string& dir);  // searched for runs at every rescan
  void follow(const std::string& dir);    // followed even before it holds a run
  void unfollow(const std::string& dir);  // no longer followed (nor listed)
  void poke();                            // rescan and refresh now, not at the next tick
  std::shared_ptr<const std::vector<RunView>> latest() const;
  uint64_t serial() const;  // bumped with each published list

 private:
  void run();
  struct Shared;
  std::unique_ptr<Shared> s_;
  std::thread thread_;
};

}  // namespace attn
