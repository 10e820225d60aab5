// Headless training: the `attnlab train` command as a library call (used by the CLI and tests).
// Writes into out_dir: config.json (fully resolved), metrics.csv, summary.json, checkpoint/
// (and for a Connection Transformer conn.json and C.csv; with train.keep_checkpoints, the kept
// checkpoints/step-<N>/, core/training/recording/run_recorder.h's keep_checkpoint).
// Contract (a run directory is complete or visibly incomplete, never mixed):
//  - out_dir is locked for the whole run (core/runs/directory/run_lock.h): a second writer is
//  refused
//    naming this process, or waits (`wait`). An out_dir that holds another run is refused
//    unless `force` (it is then emptied, summary.json first) or it is the run being resumed.
//  - summary.json is removed before training continues and written last, after the
//    checkpoint: present means finished (or "interrupted": true, see below). A checkpoint at
//    the last step without a summary (killed in between) is completed by --resume.
//  - Every metrics.csv row is checked: a failed write (a full disk) truncates the file to its
//    last complete row, saves the checkpoint if it can, and throws attn::Error saying both.
//  - Resuming A into another out_dir B starts B's metrics.csv with A's rows up to the
//    checkpoint. A checkpoint whose model differs from A/config.json is refused.
//  - A pending stop signal (core/base/interrupt.h) ends the run between steps: checkpoint,
//    summary.json with "interrupted": true and "interrupted_by", then throws Interrupted;
//    --resume continues exactly where it stopped.
// Throws attn::Error on bad input; never leaves a half-written checkpoint in place of a good one.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/config/config.h"
#include "core/runs/directory/run_writer.h"  // RunSummary, and the format written

namespace attn {

// A sweep holds each cell's lock while a child process trains it and names the cell in this
// environment variable; `attnlab train` into that directory then does not lock it again, but only
// when the lock is held by its parent process (run_lock_held_by): set by anyone else, the variable
// changes nothing.
inline constexpr const char* kRunLockHeldEnv = "ATTNLAB_RUN_LOCK_HELD";

struct HeadlessOptions {
  std::string out_dir;           // required
  std::optional<int64_t> steps;  // overrides train.steps
  std::optional<uint64_t> seed;  // overrides seed
  std::optional<int64_t> until;  // stop (and checkpoint) at this step; the schedule still
                                 // spans train.steps, so --resume continues seamlessly
  std::string resume_dir;        // continue the run saved there (its config wins)
  int threads = 0;               // > 0: fixed; 0: the config's, else adaptive (thread_policy.h)
  int max_threads = 0;           // > 0: the adaptive range's top (a sweep's share of the cores)
  int64_t checkpoint_every = 0;  // > 0: also checkpoint every N steps (a killed run then
                                 // resumes from the last one; sweeps use it)
  bool force = false;            // replace a run already in out_dir
  bool wait = false;             // wait for another writer of out_dir instead of refusing
  bool lock = true;              // false: the caller holds out_dir's lock (a sweep, its cell)
  std::function<void(const std::string&)> log;  // progress lines; null = silent
  // Called once, just before the first step is timed (a pack's runs wait there for each other,
  // so that their steps/s cover the same wall-clock window); null = none.
  std::function<void()> on_start;
};

RunSummary train_headless(ExperimentConfig config, const HeadlessOptions& options);

}  // namespace attn
