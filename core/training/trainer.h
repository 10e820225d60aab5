// Trainer: owns model, optimiser and data on a background thread.
// Contract:
//  - Every public method is thread-safe and non-blocking (except the destructor, which stops
//    and joins). Commands are queued and drained by the trainer between steps.
//  - latest() returns the newest immutable snapshot; it never waits for a training step.
//  - Failures never escape the thread: a divergence (NaN/Inf loss, gradient or weights, or a
//    loss blow-up; see DivergedError in core/training/session/session.h) -> Diverged, with the last
//    good weights restored: set_learning_rate() then start() resumes from them. Out of (GPU) memory
//    -> Error with a message saying so; any other exception -> Error. Each with a message in the
//    snapshot. reset() (or reconfigure()) recovers from any of them.
// No torch here: the window and panels include this header.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/views/intervention_view.h"
#include "core/views/snapshot.h"

namespace attn {

struct TrainerOptions {
  int threads = 0;  // torch intra-op threads; 0: the config's, else adaptive up to cores - 1 (one
                    // core stays free for the UI; core/training/threads/thread_policy.h)
  double publish_interval_ms = 100;  // publish at most this often while running...
  int64_t publish_every_steps = 0;   // ...or every N steps if > 0 (whichever comes first)
  bool probe_attention = true;       // compute attention maps for snapshots
  // Record every model trained into a new run directory under this root ("" = off), in the
  // format of `attnlab train` (core/training/recording/run_recorder.h): root/<name>-<timestamp>,
  // made at the model's first training step and locked while this Trainer has it; a metrics row at
  // every evaluation; checkpoint and summary.json on pause, finish, divergence, error, reset,
  // reconfigure, load and close() (all but finish marked "interrupted"). A recording failure (a
  // full disk, a read-only root) never stops training: it is kept in Snapshot::record_error
  // until the model is replaced, each later save is still tried (what can be kept is kept), and
  // close() returns it. Snapshot::run_dir names the directory.
  std::string runs_root;
  // Record the first model into exactly this directory instead of a new one under runs_root
  // (the Compare panel: <root>/run-<time>/<key=value>); it must not hold a run yet. Later
  // models (after a reset) go under runs_root, or are not recorded when it is "".
  std::string run_dir;
  // While training, the recorded run is checkpointed at least this often (seconds of training,
  // pauses excluded; RunRecorder::checkpoint: checkpoint/ written, metrics.csv and views.rec
  // flushed, no summary), so a window that dies (kill -9, an abort) loses at most this much
  // training and `attnlab train --resume DIR` continues the run. 0: only the saves above.
  double checkpoint_every_s = 60;
  // Tests only: called on the trainer thread before each training step with the step about to
  // run; an exception it throws is handled as one from the step (e.g. an injected OOM).
  std::function<void(int64_t step)> before_step;
};

class Trainer {
 public:
  explicit Trainer(ExperimentConfig config, TrainerOptions options = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  void start();                          // Idle/Paused -> Running (Finished: no-op)
  void pause();                          // Running -> Paused
  void step_once();                      // one step, then Paused
  void reset();                          // fresh model from the config, -> Idle
  void reconfigure(ExperimentConfig c);  // replace the config, then reset
  void set_learning_rate(double lr);     // overrides the schedule's peak lr from now on
  // Saves the model as a run; the snapshot's message says where, or "save failed: " and why.
  //  - "": into the model's own recorded run (checkpoint and an
  //    "interrupted" summary, "saved in the window"; the recording starts now if it has not).
  //  - a directory DIR (DIR/checkpoint names the same run): under DIR's lock, a whole run:
  //    config.json, metrics.csv, checkpoint/, summary.json last. Refused, naming DIR and why,
  //    when another writer holds DIR's lock (the holder named) or DIR holds a run (or a run's
  //    file) that this Trainer did not save there; nothing in DIR is touched then.
  void save_checkpoint(std::string dir = "");
  // Resumes a saved run (config from the checkpoint): a checkpoint directory, or a run directory
  // holding checkpoint/.
  void load_checkpoint(std::string dir);
  // Stops training, saves the recorded run ("window closed") and joins the trainer thread. Returns
  // every recording failure of this Trainer's life, each naming the directory, the file and why
  // (empty: everything trained was recorded, or recording was off). Call from the owning thread;
  // later calls return the same; the destructor calls it. No other method may be called after.
  std::vector<std::string> close();
  // What a mechanism's panel asks its layers to show (a JSON object of the mechanism's keys,
  // AttentionModule::set_view_request), e.g. the layer, head and range a panel shows.
  // Kept across resets and loads; the views are observed again at once and at every later
  // evaluation and probe (Snapshot::mechanism_views). A request a layer refuses is reported in
  // the snapshot's message.
  void request_mechanism_view(const std::string& mechanism, const nlohmann::json& request);

  // What the Interventions panel asks (heads to ablate and how, the importance table, a patch
  // between two probes). Kept across resets and loads; answered at once, then every
  // train.eval_every steps while it asks for something, and at the last step, in
  // Snapshot::interventions, on the first kInterventionBatches eval batches. Computed on the
  // trainer thread between steps, in eval mode: training is bit-identical with or without it.
  // Parts that fail say why in InterventionView::error; training is not disturbed.
  void request_interventions(const InterventionRequest& request);
  static constexpr int kInterventionBatches = 1;

  // The Loss panel's eval-length field: evaluate the model on its task rebuilt at `length`
  // (task.context or task.length; length_eval.h), at once and again at every evaluation, in
  // Snapshot::length_eval. 0 stops asking. Kept across resets and loads. A length the model
  // cannot run at (a learned position table) says why in LengthEvalView::error.
  void request_length_eval(int length);

  // Image tasks: probe test image `test_index` from now on (kept across resets and loads); the
  // snapshot's probe_image says which image the maps belong to. Out of range: a message in the
  // snapshot, the previous image kept.
  void request_probe_image(int64_t test_index);

  // Token tasks: probe this typed text from now on (TrainingSession::parse_probe; "" = the
  // task's own probe), kept across resets and loads; the maps are recomputed at once. Refused
  // text (an unknown character, too long) leaves the previous probe in place and says why in
  // Snapshot::probe_error; training is not disturbed.
  void request_probe(std::string text);

  TrainerState state() const;
  std::shared_ptr<const Snapshot> latest() const;
  ExperimentConfig config() const;  // the config of the current model

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn
