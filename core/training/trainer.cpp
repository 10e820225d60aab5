#include "core/training/trainer.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "core/base/error.h"
#include "core/models/memory_estimate.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/directory/run_lock.h"
#include "core/runs/directory/run_writer.h"
#include "core/runs/formats/tensorboard_events.h"
#include "core/training/interventions/length_eval.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/recording/run_recorder.h"
#include "core/training/session/session.h"
#include "core/training/session/training_errors.h"
#include "core/training/threads/team_check.h"
#include "core/training/threads/thread_policy.h"

namespace attn {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

struct Command {
  enum class Kind {
    Start,
    Pause,
    Step,
    Reset,
    Reconfigure,
    SetLearningRate,
    Save,
    Load,
    SetMechanismView,
    SetProbeImage,
    SetProbeText,
    SetInterventions,
    SetLengthEval
  };
  explicit Command(Kind k) : kind(k) {}
  Command(Kind k, double v) : kind(k), value(v) {}
  Command(Kind k, std::string p) : kind(k), path(std::move(p)) {}
  explicit Command(ExperimentConfig c) : kind(Kind::Reconfigure), config(std::move(c)) {}
  Command(std::string mechanism, nlohmann::json request)
      : kind(Kind::SetMechanismView),
        path(std::move(mechanism)),
        view_request(std::move(request)) {}
  explicit Command(const InterventionRequest& r)
      : kind(Kind::SetInterventions), intervention_request(r) {}
  Kind kind;
  double value = 0;
  std::string path;
  std::optional<ExperimentConfig> config;
  nlohmann::json view_request;  // SetMechanismView's; `path` names the mechanism
  InterventionRequest intervention_request;
};

// The options' threads, else the config's, fix the count; otherwise it adapts between 1 and
// the usable cores less one, which stays free for the window's render thread (thread_policy.h).
ThreadPolicyOptions thread_policy_options(const TrainerOptions& o, const ExperimentConfig& c) {
  ThreadPolicyOptions p;
  p.fixed = o.threads > 0 ? o.threads : c.threads;
  p.max_threads = ThreadPolicy::default_max_threads(/*leave_core_for_ui=*/true);
  p.team_ready = [](int n) { return team_runs_promptly(n); };
  return p;
}

}  // namespace

struct Trainer::Impl {
  TrainerOptions options;

  // Shared with the UI thread; guarded by mu and held only for pointer swaps and queue pushes.
  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<Command> queue;
  bool quit = false;
  ExperimentConfig config;
  std::shared_ptr<const Snapshot> snapshot = std::make_shared<Snapshot>();
  std::atomic<TrainerState> state{TrainerState::Idle};

  // Trainer thread only.
  std::unique_ptr<TrainingSession> session;
  std::optional<ThreadPolicy> threads;  // per model: a reset or load measures afresh
  std::string message;
  uint64_t serial = 0;
  uint64_t generation = 0;
  Clock::time_point last_publish = Clock::now();
  int64_t last_publish_step = 0;
  Clock::time_point last_probe = Clock::now();
  double probe_seconds = 0;    // cost of the last attention probe
  double train_seconds = 0;    // in train_step/evaluate since the model was built
  double publish_seconds = 0;  // in publish() since the model was built
  Clock::time_point rate_start = Clock::now();
  int64_t rate_start_step = 0;
  double steps_per_second = 0;
  std::map<std::string, nlohmann::json> view_requests;  // the panels' latest, by mechanism
  // The Interventions panel's request and its answer, recomputed when the request changes and
  // every eval_every steps while it asks for something.
  InterventionRequest intervention_request;
  std::shared_ptr<const InterventionView> intervention_view;
  int length_eval_request = 0;  // the Loss panel's eval length; 0 = none
  std::shared_ptr<const LengthEvalView> length_eval_view;
  int64_t probe_index = -1;  // the Image attention panel's test image; -1 = the task's default
  std::string probe_text;    // the user's accepted probe ("" = the task's own)
  std::string probe_error;   // why the last typed probe was refused
  std::unique_ptr<RunRecorder> recorder;  // this model's run directory (options.runs_root)
  bool record_failed = false;             // this model could not be recorded at all
  bool run_dir_used = false;              // options.run_dir has been given to a model
  std::string record_error;               // why this model is not (wholly) recorded
  std::string source_dir;                 // the run the model was loaded from ("" = none)
  std::vector<std::string> unsaved;       // every recording failure so far (close())
  std::set<std::string> own_saves;        // directories Save wrote runs into (canonical)
  // Training time since the recorded run's last checkpoint (periodic or a save), for
  // options.checkpoint_every_s; restarted by every save and whenever training (re)starts.
  Clock::time_point checkpointed = Clock::now();

  std::thread thread;

  void post(Command c) {
    {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(std::move(c));
    }
    cv.notify_one();
  }

  void set_state(TrainerState s) { state.store(s); }

  void fail(TrainerState s, const std::string& what) {
    set_state(s);
    message = what;
    publish(false);
  }

  // A panel's view request to the session's layers; a refused one becomes the message.
  void apply_view_request(const std::string& mechanism, const nlohmann::json& request) {
    try {
      session->set_view_request(mechanism, request);
    } catch (const std::exception& e) {
      message = e.what();
    }
  }
  void apply_view_requests() {
    for (const auto& [mechanism, request] : view_requests) apply_view_request(mechanism, request);
  }

  // (Re)builds the session from the current config. On failure: Error state, no session.
  void build() {
    record_close("reset in the window");
    record_failed = false;
    record_error.clear();
    session.reset();
    ExperimentConfig c;
    {
      std::lock_guard<std::mutex> lock(mu);
      c = config;
    }
    intervention_view.reset();
    length_eval_view.reset();
    use_thread_policy(c);
    try {
      // Before anything is allocated: a size that cannot fit is an error message, not a crash.
      require_memory_for(c, task_shape(c.task), MemoryUse::train, "training");
      session = std::make_unique<TrainingSession>(c);
      apply_view_requests();
      apply_probe_index();
      apply_probe_text(probe_text);
      ++generation;
      source_dir.clear();
      train_seconds = publish_seconds = 0;
      message.clear();
      set_state(TrainerState::Idle);
      publish(true);
    } catch (const std::exception& e) {
      fail(TrainerState::Error, e.what());
    }
  }

  void use_thread_policy(const ExperimentConfig& c) {
    threads.emplace(thread_policy_options(options, c));
    torch::set_num_threads(threads->threads());
  }

  // Keeps the picked test image across resets and loads; a token task ignores it.
  bool apply_probe_index() {
    if (probe_index < 0 || !session || session->task().patch_dim() == 0) return true;
    try {
      session->set_probe_index(probe_index);
      return true;
    } catch (const std::exception& e) {
      message = std::string("probe image: ") + e.what();
      return false;
    }
  }

  // A recording failure: shown (message, and record_error until the model is replaced) and
  // kept for close(). Training goes on.
  void record_failure(const std::string& what) {
    message = record_error = what;
    if (std::find(unsaved.begin(), unsaved.end(), what) == unsaved.end()) unsaved.push_back(what);
  }

  // Runs one recording action; a failure is reported, and the next action is still tried (a
  // full disk may have room again; the final save keeps what it can).
  template <class F>
  void record(F&& action) {
    if (!recorder) return;
    try {
      action();
    } catch (const std::exception& e) {
      record_failure(std::string("recording failed: ") + e.what());
    }
  }

  bool recording_on() const {
    return !options.runs_root.empty() || (!options.run_dir.empty() && !run_dir_used);
  }

  // Makes this model's run directory (options.run_dir the first time, else a new one under the
  // runs root). Throws attn::Error naming the directory.
  void open_recorder() {
    std::string dir;
    if (!options.run_dir.empty() && !run_dir_used) {
      dir = options.run_dir;
      run_dir_used = true;
    } else {
      dir = new_run_dir(options.runs_root, session->config().name);
    }
    recorder = std::make_unique<RunRecorder>(dir, *session, "attnlab gui");
  }

  // Before a training step: the model's run directory is made at its first step; after a save
  // (a pause) its summary is removed before training continues.
  void record_begin() {
    if (record_failed || !session) return;
    if (!recorder) {
      if (!recording_on()) return;
      try {
        open_recorder();
      } catch (const std::exception& e) {
        record_failure(std::string("not recorded: ") + e.what());
        record_failed = true;
      }
      return;
    }
    record([&] { recorder->continue_training(); });
  }

  // Checkpoint and summary of the recorded run ("" = finished).
  void record_save(const std::string& stopped_by, bool diverged = false) {
    if (session) record([&] { recorder->save(*session, stopped_by, diverged); });
    checkpointed = Clock::now();
  }

  // While running: the periodic checkpoint (options.checkpoint_every_s) once that much training
  // has passed since the last one. A failure is reported like any recording failure and tried
  // again at the next interval.
  void record_periodic_checkpoint() {
    if (!recorder || options.checkpoint_every_s <= 0) return;
    const double since = std::chrono::duration<double>(Clock::now() - checkpointed).count();
    if (since < options.checkpoint_every_s) return;
    session->settle();
    record([&] { recorder->checkpoint(*session); });
    checkpointed = Clock::now();
  }

  // The model is about to be replaced or the trainer stops: save, then release the directory.
  void record_close(const std::string& stopped_by) {
    record_save(stopped_by);
    recorder.reset();
  }

  // The user's probe: parsed against the task, checked by one probe of the model (a mechanism
  // may refuse the length); refused text keeps the previous probe and sets probe_error.
  void apply_probe_text(const std::string& text) {
    if (!session || session->task().patch_dim() > 0) return;
    const std::vector<int64_t> previous = session->probe_tokens();
    try {
      session->set_probe_tokens(text.empty() ? std::vector<int64_t>{} : session->parse_probe(text));
      Snapshot check;
      session->probe_attention(check);
      probe_text = text;
      probe_error.clear();
    } catch (const std::exception& e) {
      // A new model refusing the kept probe (another task) falls back to the task's own.
      const bool kept = text == probe_text;
      session->set_probe_tokens(kept ? std::vector<int64_t>{} : previous);
      if (kept) probe_text.clear();
      probe_error = e.what();
    }
  }

  void restart_rate() {
    rate_start = Clock::now();
    rate_start_step = session ? session->step() : 0;
  }

  void update_rate() {
    const double dt = std::chrono::duration<double>(Clock::now() - rate_start).count();
    const int64_t steps = session->step() - rate_start_step;
    if (dt > 0.5 && steps > 0) {
      steps_per_second = steps / dt;
      restart_rate();
    } else if (steps_per_second == 0 && dt > 0 && steps > 0) {
      steps_per_second = steps / dt;
    }
  }

  // state_override: the state the snapshot reports (default: the current one).
  void publish(bool probe, std::optional<TrainerState> state_override = std::nullopt) {
    const auto t0 = Clock::now();
    auto s = std::make_shared<Snapshot>();
    s->serial = ++serial;
    s->generation = generation;
    s->state = state_override ? *state_override : state.load();
    s->message = message;
    s->run_dir = recorder ? recorder->dir() : "";
    s->source_dir = source_dir;
    s->record_error = record_error;
    s->probe_text = probe_text;
    s->probe_error = probe_error;
    s->steps_per_second = steps_per_second;
    if (threads) {
      s->threads = threads->threads();
      s->threads_reason = threads->reason();
    }
    if (session) {
      session->fill_snapshot(*s);
      if (probe && options.probe_attention) {
        const auto t0 = Clock::now();
        session->probe_attention(*s);
        last_probe = Clock::now();
        probe_seconds = std::chrono::duration<double>(last_probe - t0).count();
      } else {
        std::lock_guard<std::mutex> lock(mu);
        s->probe_tokens = snapshot->probe_tokens;
        s->probe_image = snapshot->probe_image;
        s->probe_probabilities = snapshot->probe_probabilities;
        s->layers = snapshot->layers;
        s->heads = snapshot->heads;
        s->attention_step = snapshot->attention_step;
        s->attention = snapshot->attention;  // shared, not copied
      }
    }
    s->interventions = intervention_view;
    s->length_eval = length_eval_view;
    last_publish = Clock::now();
    last_publish_step = s->step;
    publish_seconds += std::chrono::duration<double>(last_publish - t0).count();
    s->publish_overhead = train_seconds > 0 ? publish_seconds / train_seconds : 0.0;
    std::lock_guard<std::mutex> lock(mu);
    snapshot = std::move(s);
  }

  bool publish_due() const {
    if (options.publish_every_steps > 0 &&
        session->step() - last_publish_step >= options.publish_every_steps)
      return true;
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - last_publish).count();
    return ms >= options.publish_interval_ms;
  }

  // While running, the attention probe (a forward pass) is re-run only when the time since the
  // last one is at least kProbeBudget^-1 times its cost: its overhead stays under kProbeBudget
  // of training time whatever the model's size, while small models still refresh every publish.
  static constexpr double kProbeBudget = 0.01;
  bool probe_due() const {
    const double since = std::chrono::duration<double>(Clock::now() - last_probe).count();
    return since * kProbeBudget >= probe_seconds;
  }

  bool interventions_due(bool last) const {
    if (!session || !intervention_request.asks()) return false;
    if (!intervention_view || last) return true;
    // At every evaluation, like the length eval: train.record_every means only views.rec (0 =
    // none), so turning the recording off does not stop the panel's answers.
    return session->step() - intervention_view->step >= session->config().train.eval_every;
  }

  // Answers the request on the trainer thread (eval mode, no gradients, no random draws:
  // training is unchanged), on kInterventionBatches eval batches.
  void compute_interventions() {
    if (!session) return;
    if (!intervention_request.asks()) {
      intervention_view.reset();
      return;
    }
    intervention_view = std::make_shared<const InterventionView>(
        session_interventions(*session, intervention_request, kInterventionBatches));
  }

  // Answers the eval-length field on the trainer thread (eval mode, no gradients): training is
  // unchanged.
  void compute_length_eval() {
    if (!session || length_eval_request <= 0) {
      length_eval_view.reset();
      return;
    }
    auto v = std::make_shared<LengthEvalView>();
    v->length = length_eval_request;
    v->step = session->step();
    try {
      v->key = length_key(session->config().task);
      v->trained = task_length(session->config().task);
      const LengthEvalResult r = evaluate_at_length(*session, length_eval_request);
      v->tokens = r.tokens;
      v->batches = r.batches;
      v->figures = r.figures;
    } catch (const std::exception& e) {
      v->error = e.what();
    }
    length_eval_view = std::move(v);
  }

  // One training step with its eval and publish; handles every failure.
  void step() {
    try {
      const auto t0 = Clock::now();
      if (options.before_step) options.before_step(session->step());
      record_begin();
      const double lr = session->learning_rate();
      const auto step_start = Clock::now();
      session->train_step();
      if (threads->record_step(std::chrono::duration<double>(Clock::now() - step_start).count()))
        torch::set_num_threads(threads->threads());
      const auto& t = session->config().train;
      const bool last = session->step() >= session->total_steps();
      // A graphed GPU step leaves its loss on the device: read back before the window sees it.
      if (last || state.load() != TrainerState::Running || publish_due()) session->settle();
      record([&] { recorder->on_step(*session); });
      if (session->step() % t.eval_every == 0 || last) {
        const EvalResult eval = session->evaluate();
        record([&] { recorder->on_eval(*session, eval, lr); });
        if (length_eval_request > 0) compute_length_eval();
      }
      train_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
      update_rate();
      if (interventions_due(last)) compute_interventions();
      if (last) {
        // The final snapshot is published before state() says Finished, so whoever sees
        // Finished also finds the last step's snapshot in latest().
        message = "finished " + std::to_string(session->step()) + " steps";
        record_save("");
        publish(true, TrainerState::Finished);
        set_state(TrainerState::Finished);
      } else if (state.load() != TrainerState::Running) {
        // A single step (S) leaves the run paused; Stopping (the window closing) saves later.
        if (state.load() == TrainerState::Paused) record_save("paused in the window");
        publish(true);
      } else {
        record_periodic_checkpoint();
        if (publish_due()) publish(probe_due());
      }
    } catch (const DivergedError& e) {
      record_save("", /*diverged=*/true);
      fail(TrainerState::Diverged, e.what());
    } catch (const std::exception& e) {  // c10::Error, attn::Error, std::bad_alloc, ...
      if (is_allocation_failure(e)) session->release_memory();  // so the window keeps working
      const std::string what =
          training_failure_message(e, session->config(), session->step(), session->device_name());
      record_save("error: " + what);
      fail(TrainerState::Error, what);
    }
  }

  // Save into the model's own recorded run (made now if training has not begun).
  std::string save_own(TrainerState s) {
    if (!recorder) {
      if (record_failed) throw Error("this run is not recorded (" + record_error + ")");
      if (!recording_on())
        throw Error("this run is not recorded (no runs directory); type a directory to save into");
      open_recorder();
    }
    const bool done = s == TrainerState::Finished || s == TrainerState::Diverged;
    recorder->save(*session, done ? "" : "saved in the window", s == TrainerState::Diverged);
    return "saved checkpoint to " + recorder->dir();
  }

  // Save (see Trainer::save_checkpoint): "" = the own run; else a directory the user picked,
  // taken under its lock and refused when it holds a run this Trainer did not write.
  std::string save_to(const std::string& target, TrainerState s) {
    if (target.empty()) return save_own(s);
    fs::path dir = fs::path(target).lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();          // "runs/x/"
    if (dir.filename() == "checkpoint") dir = dir.parent_path();  // the run holding it
    if (dir.empty()) dir = ".";
    std::error_code ec;
    const std::string canonical = fs::weakly_canonical(fs::absolute(dir), ec).string();
    if (recorder && canonical == fs::weakly_canonical(fs::absolute(recorder->dir()), ec).string())
      return save_own(s);
    const std::string holder = run_lock_holder(dir.string());
    if (!holder.empty())
      throw Error(dir.string() + " is being written by " + holder +
                  " (a run directory has one writer); choose another directory, or clear the "
                  "field to save into this run's own");
    // Checked before the lock (a refused directory is not touched, its lock file included) and
    // again under it (a writer may have begun in between).
    auto refuse_foreign_run = [&] {
      if (own_saves.count(canonical)) return;
      const auto present = run_files_present(dir.string());
      if (!present.empty())
        throw Error(dir.string() + " already holds a run this window did not write (" +
                    join_file_names(present) +
                    "); attnlab never overwrites it: choose an empty or new directory");
    };
    refuse_foreign_run();
    const RunDirLock lock(dir.string(), "attnlab gui (Save)", /*wait=*/false);
    refuse_foreign_run();
    const bool done = s == TrainerState::Finished || s == TrainerState::Diverged;
    const nlohmann::json summary =
        gui_summary_json(*session, recorder ? recorder->first_step() : 0,
                         recorder ? recorder->train_seconds() : train_seconds,
                         done ? "" : "saved in the window", s == TrainerState::Diverged);
    own_saves.insert(canonical);  // from the first file written: ours to rewrite
    write_run_copy(*session, dir.string(),
                   recorder ? recorder->metrics_csv() : history_metrics_csv(*session), summary);
    rewrite_run_events(dir.string());  // TensorBoard's copy: one file, the copy's rows
    return "saved checkpoint to " + dir.string();
  }

  // Start (or resume) training; the first Start builds the session.
  void start(TrainerState s) {
    if (!session) return build();
    if (s == TrainerState::Idle || s == TrainerState::Paused || s == TrainerState::Diverged) {
      message.clear();
      set_state(TrainerState::Running);
      checkpointed = Clock::now();  // paused time is not training time
      restart_rate();
      publish(false);
    } else if (s == TrainerState::Finished) {
      message = "the run has finished; raise train.steps and apply, or reset";
      publish(false);
    }
  }

  // Save and say how it went (see save_to).
  void save(const std::string& target, TrainerState s) {
    if (!session) return;
    try {
      message = save_to(target, s);
    } catch (const std::exception& e) {
      message = std::string("save failed: ") + e.what();
    }
    publish(false);
  }

  // Load a checkpoint (or a run directory's) in place of the current run, which is kept as it
  // was when the load fails.
  void load(std::string path) {
    try {
      std::error_code ec;  // a run directory: its checkpoint
      if (fs::is_regular_file(fs::path(path) / "checkpoint" / "state.json", ec))
        path = (fs::path(path) / "checkpoint").string();
      // A run's checkpoint/: the run directory holds its recorded views.
      fs::path loaded_path = fs::path(path).lexically_normal();
      if (!loaded_path.has_filename()) loaded_path = loaded_path.parent_path();
      const std::string loaded_dir = loaded_path.filename() == "checkpoint"
                                         ? loaded_path.parent_path().string()
                                         : std::string();
      ExperimentConfig loaded = TrainingSession::checkpoint_config(path);
      auto fresh = std::make_unique<TrainingSession>(loaded);
      fresh->load(path);
      record_close("another run was loaded in the window");
      record_failed = false;
      record_error.clear();
      session = std::move(fresh);
      use_thread_policy(loaded);
      apply_view_requests();
      apply_probe_index();
      apply_probe_text(probe_text);
      ++generation;
      {
        std::lock_guard<std::mutex> lock(mu);
        config = loaded;
      }
      source_dir = loaded_dir;
      intervention_view.reset();
      compute_interventions();
      compute_length_eval();
      message = "loaded checkpoint " + path;
      set_state(TrainerState::Paused);
      publish(true);
    } catch (const std::exception& e) {  // the current run is kept as it was
      message = std::string("load failed: ") + e.what();
      publish(false);
    }
  }

  void handle(Command& c) {
    using K = Command::Kind;
    const TrainerState s = state.load();
    switch (c.kind) {
      case K::Start:
        return start(s);
      case K::Pause:
        if (s == TrainerState::Running) {
          set_state(TrainerState::Paused);
          record_save("paused in the window");
          publish(true);
        }
        return;
      case K::Step:
        if (session &&
            (s == TrainerState::Idle || s == TrainerState::Paused || s == TrainerState::Diverged)) {
          set_state(TrainerState::Paused);
          step();
        }
        return;
      case K::Reset:
        return build();
      case K::Reconfigure: {
        std::lock_guard<std::mutex> lock(mu);
        config = *c.config;
      }
        return build();
      case K::SetLearningRate:
        if (session) {
          session->set_peak_learning_rate(c.value);
          message = "peak learning rate set to " + std::to_string(c.value);
          publish(false);
        }
        return;
      case K::Save:
        return save(c.path, s);
      case K::SetInterventions:
        intervention_request = c.intervention_request;
        if (session) {
          compute_interventions();
          publish(false);
        }
        return;
      case K::SetLengthEval:
        length_eval_request = static_cast<int>(c.value);
        if (session) {
          compute_length_eval();
          publish(false);
        }
        return;
      case K::SetMechanismView:
        view_requests[c.path] = c.view_request;
        if (session) {
          apply_view_request(c.path, c.view_request);  // cheap: answer the panel at once
          publish(false);
        }
        return;
      case K::SetProbeImage: {
        const int64_t previous = probe_index;
        probe_index = static_cast<int64_t>(c.value);
        if (session) {
          if (!apply_probe_index()) probe_index = previous;
          publish(true);  // one forward pass of one image: answer the panel at once
        }
        return;
      }
      case K::SetProbeText:
        if (session) {
          apply_probe_text(c.path);
          publish(true);  // one forward pass of the probe: answer the panel at once
        }
        return;
      case K::Load:
        return load(c.path);
    }
  }

  void run() {
    build();
    for (;;) {
      std::deque<Command> commands;
      {
        std::unique_lock<std::mutex> lock(mu);
        if (state.load() != TrainerState::Running)
          cv.wait(lock, [&] { return quit || !queue.empty(); });
        if (quit) break;
        commands.swap(queue);
      }
      for (auto& command : commands) handle(command);
      if (state.load() == TrainerState::Running) step();
    }
    record_close("window closed");
  }
};

Trainer::Trainer(ExperimentConfig config, TrainerOptions options) : impl_(new Impl) {
  impl_->options = options;
  impl_->config = std::move(config);
  impl_->thread = std::thread([this] { impl_->run(); });
}

Trainer::~Trainer() {
  close();
}

std::vector<std::string> Trainer::close() {
  if (impl_->thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      impl_->quit = true;
    }
    impl_->state.store(TrainerState::Stopping);
    impl_->cv.notify_one();
    impl_->thread.join();
  }
  return impl_->unsaved;  // the thread has ended: no race
}

void Trainer::start() {
  impl_->post(Command(Command::Kind::Start));
}
void Trainer::pause() {
  impl_->post(Command(Command::Kind::Pause));
}
void Trainer::step_once() {
  impl_->post(Command(Command::Kind::Step));
}
void Trainer::reset() {
  impl_->post(Command(Command::Kind::Reset));
}
void Trainer::reconfigure(ExperimentConfig c) {
  impl_->post(Command(std::move(c)));
}
void Trainer::set_learning_rate(double lr) {
  impl_->post(Command(Command::Kind::SetLearningRate, lr));
}
void Trainer::save_checkpoint(std::string dir) {
  impl_->post(Command(Command::Kind::Save, std::move(dir)));
}
void Trainer::load_checkpoint(std::string dir) {
  impl_->post(Command(Command::Kind::Load, std::move(dir)));
}

void Trainer::request_interventions(const InterventionRequest& request) {
  impl_->post(Command(request));
}

void Trainer::request_length_eval(int length) {
  impl_->post(Command(Command::Kind::SetLengthEval, length));
}

void Trainer::request_mechanism_view(const std::string& mechanism, const nlohmann::json& request) {
  impl_->post(Command(mechanism, request));
}

void Trainer::request_probe_image(int64_t test_index) {
  impl_->post(Command(Command::Kind::SetProbeImage, static_cast<double>(test_index)));
}

void Trainer::request_probe(std::string text) {
  impl_->post(Command(Command::Kind::SetProbeText, std::move(text)));
}

TrainerState Trainer::state() const {
  return impl_->state.load();
}

std::shared_ptr<const Snapshot> Trainer::latest() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->snapshot;
}

ExperimentConfig Trainer::config() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->config;
}

}  // namespace attn
