// Recording a TrainingSession as a run directory (core/runs/run_writer.h's format), for
// `attnlab train` (core/training/headless.cpp) and for runs trained in the window (the Trainer,
// TrainerOptions::runs_root). Torch; internal to core.
// Contract:
//  - write_run_outputs() writes, in this order, the checkpoint (when asked), conn.json and C.csv
//    (Connection Transformer), connections.json (ky layers) and summary.json last: a present
//    summary means every other file is complete.
//  - RunRecorder owns one run directory for as long as it lives: it holds the directory's lock
//    (core/runs/run_lock.h; a second writer is refused), writes config.json and the metrics
//    header at construction, appends one metrics.csv row per evaluation as training goes, and
//    save() writes the checkpoint and summary (a pause, a reset, closing the window: summary
//    with "interrupted": true and "interrupted_by" saying which). Training again after a save
//    removes summary.json first (continue()), so a present summary never describes fewer steps
//    than the checkpoint beside it. Every method throws attn::Error naming the file on failure.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/runs/run_lock.h"
#include "core/runs/run_writer.h"
#include "core/training/session.h"

namespace attn {

// The summary fields of a session at its current step; steps_per_second over
// (step - first_step) / elapsed seconds.
RunSummary summarize_session(const TrainingSession& session, int64_t first_step, double elapsed,
                             bool diverged);

// run_summary_json plus what only the session knows: the image tasks' test_* keys and the
// Connection Transformer's spectral summary.
nlohmann::json session_summary_json(TrainingSession& session, const RunSummary& summary,
                                    double elapsed);

// See the contract above. `summary` is written as given (the caller adds its own keys).
void write_run_outputs(TrainingSession& session, const std::string& dir,
                       const nlohmann::json& summary, bool checkpoint);

class RunRecorder {
 public:
  // Locks dir (refused when another process writes it), refuses a directory that already holds a
  // run, writes config.json and the metrics header. `what` names the writer in the lock file.
  RunRecorder(const std::string& dir, TrainingSession& session, const std::string& what);

  const std::string& dir() const { return lock_.dir(); }
  // After every training step, with its loss.
  void on_step(double train_loss);
  // After an evaluation at the session's current step: appends its metrics row.
  void on_eval(const TrainingSession& session, const EvalResult& eval, double lr);
  // Before training continues after save(): summary.json is removed.
  void continue_training();
  // Checkpoint and summary. stopped_by: "" = finished (or diverged, from the session's state),
  // else the reason ("paused in the window", ...), written as "interrupted_by".
  void save(TrainingSession& session, const std::string& stopped_by, bool diverged);
  bool saved() const { return saved_; }
  int64_t metric_rows() const { return rows_; }

 private:
  using Clock = std::chrono::steady_clock;
  RunDirLock lock_;
  std::optional<MetricsAppender> metrics_;
  int64_t first_step_ = 0;
  double interval_loss_ = 0;
  int64_t interval_steps_ = 0;
  Clock::time_point interval_start_ = Clock::now();
  double train_seconds_ = 0;  // wall time spent training, excluding pauses
  Clock::time_point resumed_ = Clock::now();
  bool saved_ = false;
  int64_t rows_ = 0;
};

}  // namespace attn
