// Recording a TrainingSession as a run directory (core/runs/directory/run_writer.h's format), for
// `attnlab train` (core/training/headless/headless.cpp) and for runs trained in the window (the
// Trainer, TrainerOptions::runs_root). Torch; internal to core. Contract:
//  - write_run_outputs() writes, in this order, the checkpoint (when asked), conn.json and C.csv
//    (Connection Transformer), mechanism_views.json (the layers' mechanism views) and
//    summary.json last: a present summary means every other file is complete.
//  - RunRecorder owns one run directory for as long as it lives: it holds the directory's lock
//    (core/runs/directory/run_lock.h; a second writer is refused), writes config.json and the
//    metrics header at construction, appends one metrics.csv row per evaluation as training goes,
//    and save() writes the checkpoint and summary (a pause, a reset, closing the window: summary
//    with "interrupted": true and "interrupted_by" saying which). Training again after a save
//    removes summary.json first (continue()), so a present summary never describes fewer steps
//    than the checkpoint beside it. Every method throws attn::Error naming the file on failure.
//  - save() keeps what it can: it tries the checkpoint, the side files and summary.json each even
//    when an earlier one failed (a full disk may still take the small summary), lists what failed
//    under "save_errors" in the summary it manages to write, and then throws one attn::Error
//    naming the directory, each file that failed and why, and what was kept (metrics.csv's rows
//    stay as appended). A failed save() is tried again by the next one (closing the window).
//  - write_run_copy() writes the session as a whole run into another directory the caller has
//    locked (the window's Save to a directory the user picked): config.json, metrics.csv,
//    checkpoint/ and summary.json last.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/runs/directory/run_lock.h"
#include "core/runs/directory/run_writer.h"
#include "core/training/session/session.h"

namespace attn {

// The summary fields of a session at its current step; steps_per_second over
// (step - first_step) / elapsed seconds.
RunSummary summarize_session(const TrainingSession& session, int64_t first_step, double elapsed,
                             bool diverged);

// run_summary_json plus what only the session knows: the image tasks' test_* keys and the
// Connection Transformer's spectral summary.
nlohmann::json session_summary_json(TrainingSession& session, const RunSummary& summary,
                                    double elapsed);

// See the contract above. `summary` is written as given (the caller adds its own keys); a null
// summary is not written (the caller writes it).
void write_run_outputs(TrainingSession& session, const std::string& dir,
                       const nlohmann::json& summary, bool checkpoint);

// After a training step: writes the checkpoint train.keep_checkpoints keeps at the session's step
// (keeps_checkpoint_at) into kept_checkpoint_dir(dir, step) (core/runs/directory/run_files.h),
// atomically and laid out as checkpoint/ (TrainingSession::save); nothing at other steps. The
// window (RunRecorder::on_step) and `attnlab train` both keep through it. Throws attn::Error.
void keep_checkpoint(TrainingSession& session, const std::string& dir);

// The summary the window writes: session_summary_json plus "source": "gui" and, unless
// stopped_by is "" (finished), "interrupted": true and "interrupted_by": stopped_by.
nlohmann::json gui_summary_json(TrainingSession& session, int64_t first_step, double seconds,
                                const std::string& stopped_by, bool diverged);

// metrics.csv text from the session's own histories (a row per evaluation, the mean train loss
// since the previous one; lr and steps_per_s empty): for a model that is not being recorded.
std::string history_metrics_csv(const TrainingSession& session);

// The session as a whole run in `dir`, which the caller has locked and checked (it holds no run,
// or one this process wrote): summary.json removed first, then config.json, `metrics` as
// metrics.csv, the checkpoint and side files, `summary` last. Throws attn::Error naming the file.
void write_run_copy(TrainingSession& session, const std::string& dir, const std::string& metrics,
                    const nlohmann::json& summary);

// A session's recorded views (core/runs/records/view_records.h) in dir/views.rec, when
// train.record_every > 0: the step it starts at (the initial model, or the resumed one unless
// the file holds it already), every record_every steps, and the last step at finish(). The
// window (RunRecorder) and `attnlab train` (train_headless) both record through it. Throws
// attn::Error naming the file.
// Opening checks before it writes anything (plan_view_recording): a views.rec of another run
// (its identity) or of another model (its records' shape), one that is not a recording, or over
// 1 GiB is refused and left as it was. Then a new file is made for the run (its marker, and so
// its identity, first when it has none), or, on a resume, damaged bytes and the records after
// the resumed step are moved beside the file (never dropped), each said in notes().
// With train.record_attribution, each record also holds attribution patching of every head on
// the probe and the task's corrupted twin (session_attribution) and the direct logit attribution
// on the probe (session_logit_attribution), both at the record's step; a run whose model or task
// cannot give them (no heads, images, a task without twins) records without them and says why in
// notes().
// Fills r.attribution and r.dla from the session's model at its step, as SessionViews records
// them (the session's probe and Task::corrupted_twin of it). Throws attn::Error when the run
// cannot give them (see above).
void add_causal_record(TrainingSession& session, ViewRecord& r);

class SessionViews {
 public:
  SessionViews(const std::string& dir, TrainingSession& session);
  // What opening moved aside, one line each, for the run's log (empty as a rule).
  const std::vector<std::string>& notes() const { return notes_; }
  void after_step(TrainingSession& session);
  // Records the current step unless it is recorded, and flushes the file to disk.
  void finish(TrainingSession& session);
  // Flushes the records appended so far to disk (a periodic checkpoint).
  void sync();
  // Seconds spent recording since the last call (left out of steps_per_s).
  double take_seconds();

 private:
  void record(TrainingSession& session);
  ViewRecorder recorder_;
  std::vector<std::string> notes_;
  bool attribution_ = false;  // train.record_attribution, and the run can give it
  int64_t every_;
  double seconds_ = 0;
  std::shared_ptr<TensorBoardEvents> events_;  // each record's head metrics (run_events)
};

class RunRecorder {
 public:
  // Locks dir (refused when another process writes it), refuses a directory that already holds a
  // run, writes config.json and the metrics header. `what` names the writer in the lock file.
  RunRecorder(const std::string& dir, TrainingSession& session, const std::string& what);

  const std::string& dir() const { return lock_.dir(); }
  // After every training step (for steps_per_s; the losses are the session's LossInterval):
  // records the views (views.rec) every train.record_every steps and keeps the checkpoints
  // train.keep_checkpoints asks for (keep_checkpoint). The recording's time (not the kept
  // checkpoints') is left out of steps_per_s.
  void on_step(TrainingSession& session);
  // After an evaluation at the session's current step: appends its metrics row, whose train loss
  // is the session's interval since the last row (taken, so the session starts a new one).
  void on_eval(TrainingSession& session, const EvalResult& eval, double lr);
  // Before training continues after save(): summary.json is removed.
  void continue_training();
  // A periodic checkpoint while training goes on (TrainerOptions::checkpoint_every_s): metrics.csv
  // and views.rec flushed to disk, then checkpoint/ (atomically, as save() writes it); no summary,
  // so the run still reads as unfinished and `attnlab train --resume DIR` continues it if the
  // window dies. Throws attn::Error naming the file.
  void checkpoint(TrainingSession& session);
  // Checkpoint and summary. stopped_by: "" = finished (or diverged, from the session's state),
  // else the reason ("paused in the window", ...), written as "interrupted_by".
  void save(TrainingSession& session, const std::string& stopped_by, bool diverged);
  bool saved() const { return saved_; }
  // metrics.csv as recorded so far (flushed first); throws attn::Error naming the file.
  std::string metrics_csv();
  // Seconds spent training since this recording began, pauses excluded.
  double train_seconds() const;
  int64_t first_step() const { return first_step_; }
  int64_t metric_rows() const { return rows_; }

 private:
  using Clock = std::chrono::steady_clock;
  RunDirLock lock_;
  std::optional<MetricsAppender> metrics_;
  int64_t first_step_ = 0;
  int64_t timed_steps_ = 0;  // steps since interval_start_
  Clock::time_point interval_start_ = Clock::now();
  double train_seconds_ = 0;  // wall time spent training, excluding pauses
  Clock::time_point resumed_ = Clock::now();
  bool timing_ = true;  // resumed_ starts an interval of training not yet in train_seconds_
  bool saved_ = false;  // the last save() wrote everything
  bool summary_present_ = false;  // summary.json written by us and not removed since
  int64_t rows_ = 0;
  std::optional<SessionViews> views_;  // train.record_every > 0
};

}  // namespace attn
