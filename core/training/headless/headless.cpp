#include "core/training/headless/headless.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "core/analysis/connections.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/interrupt.h"
#include "core/base/memory.h"
#include "core/base/version.h"
#include "core/models/architectures/architecture.h"
#include "core/models/memory_estimate.h"
#include "core/runs/directory/run_dir.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/directory/run_lock.h"
#include "core/runs/records/view_records.h"
#include "core/training/recording/run_recorder.h"
#include "core/training/session/session.h"
#include "core/training/threads/team_check.h"
#include "core/training/threads/thread_policy.h"

namespace attn {
namespace {

// The process's peak resident memory so far (the whole run: data, model, optimiser, batches).
double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
#ifdef __APPLE__
  return u.ru_maxrss / (1024.0 * 1024.0);  // bytes on macOS
#else
  return u.ru_maxrss / 1024.0;  // KiB on Linux
#endif
}

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Keeps the rows at or before `step` of a run's metrics.csv (a resumed run rewrites what came
// after its checkpoint); none when the file is absent.
std::string metrics_prefix(const fs::path& path, int64_t step) {
  if (!regular_file_or_absent(path.string())) return "";
  std::istringstream in(read_regular_file(path.string()));
  std::string line, out;
  bool header = true;
  StepOrder order(path.string());  // a mixed or edited file is refused, not carried on
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (header) {
      header = false;
      continue;
    }
    // A row cut short by a crash (fewer than 6 fields, or no number first) is dropped.
    if (std::count(line.begin(), line.end(), ',') != 5) continue;
    char* end = nullptr;
    const long long row_step = std::strtoll(line.c_str(), &end, 10);
    if (end == line.c_str() || *end != ',') continue;
    order.next(row_step, line_no);
    if (row_step <= step) out += line + "\n";
  }
  return out;
}

// The step of the last row of metrics_prefix's text (0 when it has none).
int64_t last_row_step(const std::string& rows) {
  if (rows.empty()) return 0;
  const size_t start = rows.rfind('\n', rows.size() - 2);
  return std::strtoll(rows.c_str() + (start == std::string::npos ? 0 : start + 1), nullptr, 10);
}

// The keys (dotted paths) where two configs differ, with both values: "train.lr (0.01 here,
// 0.003 there)".
void config_differences(const json& here, const json& there, const std::string& prefix,
                        std::vector<std::string>& out) {
  if (here.is_object() && there.is_object()) {
    for (const auto& [key, value] : here.items())
      config_differences(value, there.contains(key) ? there[key] : json(), prefix + key + ".", out);
    for (const auto& [key, value] : there.items())
      if (!here.contains(key)) config_differences(json(), value, prefix + key + ".", out);
    return;
  }
  if (here != there)
    out.push_back(prefix.substr(0, prefix.size() - 1) + ": " + here.dump() + " in config.json, " +
                  there.dump() + " in the checkpoint");
}

// A resumed run's config.json must state the config its checkpoint holds. Another model means a
// checkpoint copied from another run (it would resume under the wrong name); any other edit would
// be silently written back by the resume, so it is refused naming the keys. train.steps alone may
// differ (an extension killed before its first save wrote the new total there): the checkpoint's
// is kept, and `notice` says so.
void check_checkpoint_matches_run(const fs::path& run_dir, const ExperimentConfig& checkpoint,
                                  std::string& notice) {
  const fs::path path = run_dir / "config.json";
  if (!regular_file_or_absent(path.string())) return;
  ExperimentConfig written;
  try {
    written = load_config_file(path.string());
  } catch (const std::exception& e) {
    throw Error(path.string() + " cannot be read (" + e.what() +
                "); the run cannot be resumed under a config it does not state");
  }
  json a = to_json(written)["model"], b = to_json(checkpoint)["model"];
  if (a != b)
    throw Error("the checkpoint in " + (run_dir / "checkpoint").string() +
                " holds another model than " + path.string() +
                " describes (checkpoint: " + b.dump() + "; config.json: " + a.dump() +
                "); it was copied from another run. Resume that run instead.");
  if (written.train.steps != checkpoint.train.steps)
    notice = path.string() + " says train.steps " + std::to_string(written.train.steps) +
             "; the checkpoint's " + std::to_string(checkpoint.train.steps) +
             " is kept (give --steps N to change the run's length)";
  written.train.steps = checkpoint.train.steps;
  std::vector<std::string> edits;
  config_differences(to_json(written), to_json(checkpoint), "", edits);
  if (edits.empty()) return;
  std::string list;
  for (size_t i = 0; i < edits.size() && i < 6; ++i) list += (i ? "; " : "") + edits[i];
  if (edits.size() > 6) list += "; and " + std::to_string(edits.size() - 6) + " more";
  throw Error(path.string() + " was edited after the run was saved (" + list +
              "). A resumed run keeps its checkpoint's config, so --resume would write that back "
              "over the edit: undo it to continue the run, or train the edited config as a new "
              "run (attnlab train --config " +
              path.string() + " --out NEW_DIR)");
}

// The run's own files at the top of out, before anything is written: each must be a regular file
// (a directory, a FIFO or a device there is refused, and so is a symbolic link, which a write
// would follow or replace: attnlab writes only files it made). With `replace` (--force) links and
// special files go with the run (clear_run_files removes the link, never its target); a
// directory is still refused, as clearing never removes one.
void check_run_file_types(const fs::path& out, bool replace) {
  for (const char* name : kRunFiles) {
    const fs::path path = out / name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;
      throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    if (S_ISREG(st.st_mode) || (replace && !S_ISDIR(st.st_mode))) continue;
    const std::string kind = S_ISLNK(st.st_mode)    ? "a symbolic link"
                             : S_ISDIR(st.st_mode)  ? "a directory"
                             : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                             : S_ISSOCK(st.st_mode) ? "a socket"
                                                    : "a device";
    throw Error(path.string() + " is " + kind + ", not a file attnlab wrote; attnlab writes " +
                name + " itself and never through or over what it did not make: move it away, " +
                "or choose another --out");
  }
}

// The out directory before training writes into it. Only attnlab's own run (its marker, see
// core/runs/directory/run_files.h) is ever replaced, and only with `force`; files of a run's names
// that attnlab did not mark are never touched. A run being continued loses its summary first, so
// that a kill while extending it never leaves an old summary beside a newer checkpoint. Whether the
// out directory may take this run, changing nothing: throws attn::Error when it holds files of a
// run's names that attnlab did not mark as its own, or attnlab's run without `force`, or files in
// checkpoint/ or a kept checkpoints/step-<N>/ that a save would replace. Returns whether a run
// there is to be replaced (`force`).
bool check_out_dir(const fs::path& out, const HeadlessOptions& o, bool same_as_resume) {
  const std::string dir = out.string();
  bool replace = false;
  if (!same_as_resume) {
    const auto present = run_files_present(dir);
    const bool ours = is_run_directory(dir);
    if (!present.empty() && !ours)
      throw Error("--out " + dir + " holds " + join_file_names(present) +
                  " that attnlab did not write (no " + kRunMarkerName +
                  " marker); attnlab never replaces files it did not write: choose another --out");
    if (ours && !present.empty() && !o.force) {
      std::error_code ec;
      const bool resumable = fs::exists(out / "checkpoint" / "state.json", ec);
      throw Error("--out " + dir + " already holds an attnlab run" +
                  (resumable
                       ? "; continue it with --resume " + dir + ", replace it with --force"
                       : " that has no checkpoint yet (stopped before its first save), so there is "
                         "nothing to resume; start it over with --force") +
                  " (removes only that run's files: " + join_file_names(present) +
                  "), or choose another --out");
    }
    if (ours && !o.resume_dir.empty()) {
      std::error_code ec;
      if (fs::equivalent(out, o.resume_dir, ec))  // reached through another path
        throw Error("--out " + dir + " is the --resume run itself; drop --force to continue it");
    }
    replace = ours && !present.empty();
  }
  // A checkpoint save replaces checkpoint/ whole: what the user put there would go with it.
  const auto foreign = foreign_checkpoint_entries(dir);
  if (!foreign.empty())
    throw Error((out / "checkpoint").string() + " holds " + join_file_names(foreign) +
                ", which attnlab did not write; a checkpoint save replaces that folder whole, so "
                "move them elsewhere first");
  // So does a kept checkpoint's (train.keep_checkpoints), when its step is trained again.
  const auto foreign_kept = foreign_kept_checkpoint_entries(dir);
  if (!foreign_kept.empty())
    throw Error("--out " + dir + " holds " + join_file_names(foreign_kept) +
                ", which attnlab did not write; a kept checkpoint's save replaces its step-<N> "
                "folder whole, so move them elsewhere first");
  return replace;
}

// Before the session and the out directory: the step's peak (core/models/memory_estimate.h),
// so a size that cannot fit is refused with the keys that set it and nothing on disk changes.
void check_training_memory(const ExperimentConfig& c) {
  require_memory_for(c, task_shape(c.task), MemoryUse::train, "training");
}

// --until past the run's end would be ignored (the run stops at train.steps): refused instead.
void check_until(const HeadlessOptions& o, const ExperimentConfig& config) {
  if (o.until && *o.until > config.train.steps)
    throw Error("--until " + std::to_string(*o.until) + " is past the run's end: train.steps is " +
                std::to_string(config.train.steps) + "; to train that long give --steps " +
                std::to_string(*o.until));
}

void save_checkpoint(TrainingSession& session, const fs::path& out) {
  session.save((out / "checkpoint").string());
}

// The checks of a --resume before anything is written: the checkpoint, its config against the
// run's config.json, the options against the run's step. Returns the loaded session; sets
// complete_only for a finished checkpoint whose summary was never written, and `notice` to what the
// user should hear before training (see check_checkpoint_matches_run).
std::unique_ptr<TrainingSession> load_resumed(ExperimentConfig& config, const HeadlessOptions& o,
                                              bool& complete_only, std::string& notice) {
  std::error_code ec;
  const fs::path ckpt = fs::path(o.resume_dir) / "checkpoint";
  // A save killed between its two renames left attnlab's own checkpoint beside its place.
  if (!fs::exists(ckpt / "state.json", ec)) recover_directory(ckpt.string());
  if (!fs::exists(ckpt / "state.json", ec)) {
    if (!fs::is_directory(o.resume_dir, ec))
      throw Error("--resume " + o.resume_dir + " is not an attnlab checkpoint: no such directory");
    if (!is_run_directory(o.resume_dir) && !fs::exists(fs::path(o.resume_dir) / "config.json", ec))
      throw Error(
          "--resume " + o.resume_dir +
          " is not an attnlab checkpoint: not a run directory (no checkpoint/, no config.json)");
    throw Error("--resume " + o.resume_dir +
                ": the run has no checkpoint yet (it was stopped before its first save; "
                "checkpoints are written at the end, at --until, on Ctrl-C or SIGTERM, and every "
                "--checkpoint-every N steps), so there is nothing to resume. Start it over: "
                "attnlab train --config " +
                (fs::path(o.resume_dir) / "config.json").string() + " --out " + o.resume_dir +
                " --force");
  }
  config = TrainingSession::checkpoint_config(ckpt.string());
  check_checkpoint_matches_run(o.resume_dir, config, notice);
  check_training_memory(config);
  if (o.steps) config.train.steps = *o.steps;
  if (o.steps) check_kept_checkpoints(config.train, "--steps " + std::to_string(*o.steps));
  check_until(o, config);
  if (o.seed && *o.seed != config.seed)
    throw Error("--seed " + std::to_string(*o.seed) + " differs from the resumed run's seed " +
                std::to_string(config.seed) + "; a resumed run keeps its seed");
  auto session = std::make_unique<TrainingSession>(config);
  session->load(ckpt.string());
  if (o.steps && *o.steps < session->step())
    throw Error("--steps " + std::to_string(*o.steps) +
                " is shorter than the run, which is at step " + std::to_string(session->step()) +
                " already; with --resume, --steps is the run's new total: give more than " +
                std::to_string(session->step()));
  if (session->step() >= config.train.steps && !o.steps) {
    if (summary_finished(o.resume_dir, session->step()))
      throw Error("run " + o.resume_dir + " already finished its " +
                  std::to_string(config.train.steps) + " steps; pass --steps N to extend it");
    complete_only = true;  // killed between the final checkpoint and its summary
  }
  return session;
}

// Every check of the out directory that needs no lock, in the order a user would fix them: the
// process writing it, whose run it is, the run files' types, its recording. Changes nothing.
// Returns whether a run there is to be replaced (--force).
bool check_out_dir_files(const fs::path& out, const HeadlessOptions& o, bool same_as_resume,
                         const TrainingSession& session, bool records) {
  const bool replace = check_out_dir(out, o, same_as_resume);
  check_run_file_types(out, replace);
  // The recording is appended to (a resume) or started: one SessionViews would refuse (not a
  // recording, another run's, another model's) is refused here by the same reading-only plan,
  // not after config.json and metrics.csv were rewritten. (Bytes it can skip are the recorder's
  // to move aside, after every check.)
  std::error_code ec;
  const fs::path views = out / kViewRecordsFile;
  if (records && !replace && fs::exists(fs::symlink_status(views, ec)))
    plan_view_recording(views.string(), view_run_of(out.string(), session.config()),
                        session.step() + 1);
  return replace;
}

// Another writer is named first: what it is doing says more than the files it has written.
void check_not_being_written(const fs::path& out, const HeadlessOptions& o) {
  if (!o.lock || o.wait) return;
  const std::string holder = run_lock_holder(out.string());
  if (!holder.empty())
    throw Error("run directory " + out.string() + " is being written by " + holder +
                "; wait for it (--wait), or choose another --out");
}

// The resumed session (load_resumed), or null with `config` taking the overrides, checked again:
// a new session is made once the thread count is set.
std::unique_ptr<TrainingSession> resume_or_configure(ExperimentConfig& config,
                                                     const HeadlessOptions& o, bool& complete_only,
                                                     std::string& notice) {
  if (!o.resume_dir.empty()) return load_resumed(config, o, complete_only, notice);
  if (o.steps) config.train.steps = *o.steps;
  if (o.seed) config.seed = *o.seed;
  config = parse_config(to_json(config), "resolved config");  // re-validate the overrides
  check_until(o, config);
  check_training_memory(config);
  return nullptr;
}

// --threads or the config's "threads" fix the count; otherwise it adapts (thread_policy.h).
ThreadPolicyOptions thread_options_for(const HeadlessOptions& o, const ExperimentConfig& config) {
  ThreadPolicyOptions thread_options;
  thread_options.fixed = o.threads > 0 ? o.threads : config.threads;
  thread_options.max_threads = ThreadPolicy::default_max_threads(/*leave_core_for_ui=*/false);
  if (o.max_threads > 0)
    thread_options.max_threads = std::min(thread_options.max_threads, o.max_threads);
  thread_options.team_ready = [](int n) { return team_runs_promptly(n); };
  return thread_options;
}

// The step training stops at (--until, else train.steps); refused when it is not after the
// session's step, unless only the summary is left to write.
int64_t stop_step(const HeadlessOptions& o, const ExperimentConfig& config,
                  const TrainingSession& session, bool complete_only) {
  const int64_t stop_at = o.until ? std::min(*o.until, config.train.steps) : config.train.steps;
  if (!complete_only && o.until && stop_at <= session.step())
    throw Error("--until " + std::to_string(stop_at) + " is not after the run's current step " +
                std::to_string(session.step()));
  if (!complete_only && stop_at <= session.step())
    throw Error("run " + o.resume_dir + " is at step " + std::to_string(session.step()) +
                " already, its train.steps; give --steps N (N > " + std::to_string(session.step()) +
                ") to extend it");
  return stop_at;
}

// The run's config and the kept metrics rows, written before training. A run being continued
// loses its summary first, so that a kill while extending it never leaves an old summary beside
// a newer checkpoint. The kept rows are rewritten whole, then appended to row by row: a crash
// loses at most the row being written, which the next resume drops.
void start_run_files(const fs::path& out, const ExperimentConfig& config,
                     const std::string& previous) {
  std::error_code ec;
  fs::remove(out / "summary.json", ec);
  if (ec) throw Error("cannot remove " + (out / "summary.json").string() + ": " + ec.message());
  write_run_config(out.string(), config);
  write_file_atomic((out / "metrics.csv").string(), std::string(kMetricsHeader) + "\n" + previous);
}

// The line that opens a run's log: what trains, where, and on how many threads.
std::string start_line(const ExperimentConfig& config, const TrainingSession& session,
                       const ThreadPolicy& threads, int max_threads) {
  const ArchitectureDescriptor& a = architecture_of(config.model);
  return "training " + config.task.name + " with " +
         (a.attention_layers ? config.model.attention.at(0) + " attention"
                             : a.summary + " (" + a.name + ")") +
         " on " + session.device_name() + ", " + std::to_string(session.parameters()) +
         " parameters, " +
         (threads.adaptive()
              ? "threads chosen by measurement (1 to " + std::to_string(max_threads) + ")"
              : std::to_string(threads.threads()) +
                    (threads.threads() == 1 ? " thread" : " threads"));
}

// The training loop of one train_headless call: steps to stop_at, a metrics row and a log line
// every eval_every steps, a checkpoint every checkpoint_every.
class StepLoop {
 public:
  using Log = std::function<void(const std::string&)>;
  StepLoop(const ExperimentConfig& config, TrainingSession& session, ThreadPolicy& threads,
           SessionViews* views, MetricsAppender& metrics, const Log& log)
      : config_(config),
        session_(session),
        threads_(threads),
        views_(views),
        metrics_(metrics),
        log_(log) {}

  // Trains until stop_at, a divergence (sets `diverged`) or a stop signal (returned; 0: none).
  int run(int64_t stop_at, int64_t checkpoint_every, const fs::path& out, bool& diverged) {
    interval_start_ = Clock::now();
    while (session_.step() < stop_at) {
      if (const int sig = stop_signal()) {
        log_(std::string("interrupted by ") + stop_signal_name(sig) + " at step " +
             std::to_string(session_.step()) + ": saving the checkpoint");
        return sig;
      }
      const double lr = session_.learning_rate();
      if (!train_step()) {
        diverged = true;
        return 0;
      }
      if (views_) views_->after_step(session_);
      keep_checkpoint(session_, out.string());
      const int64_t step = session_.step();
      if (step % config_.train.eval_every == 0 || step == stop_at) write_row(step, lr);
      if (checkpoint_every > 0 && step % checkpoint_every == 0 && step < stop_at)
        save_checkpoint(session_, out);
    }
    return 0;
  }

 private:
  // One step, the thread count adapted to its time; false when training diverged.
  bool train_step() {
    try {
      const auto step_start = Clock::now();
      session_.train_step();
      const int chosen = threads_.chosen();
      if (threads_.record_step(std::chrono::duration<double>(Clock::now() - step_start).count()))
        torch::set_num_threads(threads_.threads());
      if (threads_.chosen() != chosen) log_("threads: " + threads_.reason());
    } catch (const DivergedError& e) {
      log_(std::string("diverged: ") + e.what());
      return false;
    }
    ++timed_steps_;
    // A GPU run says once how its steps run, when the graph is captured or refused.
    if (!said_step_path_ && session_.on_gpu() &&
        session_.step_path() != "cuda-graph (warming up)") {
      log_("steps: " + session_.step_path());
      said_step_path_ = true;
    }
    return true;
  }

  // The evaluation at `step`: its metrics row and its log line.
  void write_row(int64_t step, double lr) {
    const auto eval = session_.evaluate();
    const double dt = std::chrono::duration<double>(Clock::now() - interval_start_).count() -
                      (views_ ? views_->take_seconds() : 0.0);  // recording is not training
    const double sps = timed_steps_ / std::max(1e-9, dt);
    const auto interval = session_.take_loss_interval();
    const double train_loss = interval.sum / std::max<int64_t>(1, interval.steps);
    metrics_.append(metrics_row(step, train_loss, eval.loss, eval.accuracy, lr, sps));
    std::ostringstream line;
    line << "step " << step << "/" << config_.train.steps << "  train " << std::fixed
         << std::setprecision(4) << train_loss << "  eval " << eval.loss << "  acc "
         << eval.accuracy << "  " << std::setprecision(1) << sps << " steps/s";
    log_(line.str());
    timed_steps_ = 0;
    interval_start_ = Clock::now();
  }

  const ExperimentConfig& config_;
  TrainingSession& session_;
  ThreadPolicy& threads_;
  SessionViews* views_;
  MetricsAppender& metrics_;
  const Log& log_;
  int64_t timed_steps_ = 0;  // steps since interval_start_, for steps_per_s
  Clock::time_point interval_start_;
  bool said_step_path_ = false;
};

// A failed write (a full disk): keep what can be kept, say where the run stands.
[[noreturn]] void fail_with_checkpoint(const Error& e, TrainingSession& session,
                                       const fs::path& out) {
  std::string saved;
  try {
    save_checkpoint(session, out);
    saved = "; the checkpoint at step " + std::to_string(session.step()) +
            " was saved: continue with --resume " + out.string();
  } catch (const std::exception& e2) {
    saved = std::string("; the checkpoint could not be saved either: ") + e2.what();
  }
  throw Error(std::string(e.what()) + saved);
}

// The summary of a run that stopped: summary.json (with the peak memory and the signal that
// stopped it, if one did) and the mechanism's files; the checkpoint is saved already.
RunSummary write_summary(TrainingSession& session, const fs::path& out, int64_t first_step,
                         double elapsed, bool diverged, int interrupted_by) {
  const RunSummary done = summarize_session(session, first_step, elapsed, diverged);
  json j = session_summary_json(session, done, elapsed);
  j["peak_rss_mib"] = peak_rss_mib();
  if (interrupted_by) {
    j["interrupted"] = true;
    j["interrupted_by"] = stop_signal_name(interrupted_by);
  }
  write_run_outputs(session, out.string(), j, /*checkpoint=*/false);
  return done;
}

}  // namespace

RunSummary train_headless(ExperimentConfig config, const HeadlessOptions& o) {
  if (o.out_dir.empty()) throw Error("--out: an output directory is required");
  const fs::path out = o.out_dir;
  const bool resuming = !o.resume_dir.empty();
  std::error_code ec;
  const bool same_as_resume =
      resuming && fs::exists(out, ec) && fs::equivalent(out, o.resume_dir, ec);
  // Every check comes before anything in either directory is written, removed or renamed: a
  // refused command leaves every file as it was (tests/e2e/train_refusals.sh checks each path).
  check_not_being_written(out, o);
  bool complete_only = false;  // a finished checkpoint whose summary was never written
  std::string notice;
  std::unique_ptr<TrainingSession> session = resume_or_configure(config, o, complete_only, notice);
  const ThreadPolicyOptions thread_options = thread_options_for(o, config);
  ThreadPolicy threads(thread_options);
  torch::set_num_threads(threads.threads());
  if (!session) session = std::make_unique<TrainingSession>(config);
  const int64_t stop_at = stop_step(o, config, *session, complete_only);

  // The earlier rows come from the run being resumed (which may be another directory); read
  // here to refuse a damaged file before anything changes, and again under the lock (--wait).
  const fs::path resumed_metrics = fs::path(o.resume_dir) / "metrics.csv";
  if (resuming) metrics_prefix(resumed_metrics, session->step());
  const bool records = config.train.record_every > 0 && !complete_only;
  check_out_dir_files(out, o, same_as_resume, *session,
                      records);  // before the lock creates anything there
  std::optional<RunDirLock> lock;
  if (o.lock) lock.emplace(out.string(), "attnlab train " + config.name, o.wait);
  // Under the lock, the checks again (another process may have written since); then the writes.
  const bool replace = check_out_dir_files(out, o, same_as_resume, *session, records);
  const std::string previous = resuming ? metrics_prefix(resumed_metrics, session->step()) : "";
  if (replace) clear_run_files(out.string());
  std::optional<SessionViews> views;  // views.rec, train.record_every > 0
  if (records) {
    views.emplace(out.string(), *session);
    views->take_seconds();  // before any timed interval
  }
  start_run_files(out, config, previous);
  MetricsAppender metrics((out / "metrics.csv").string());

  const StepLoop::Log log = [&](const std::string& s) {
    if (o.log) o.log(s);
  };
  if (!notice.empty()) log(notice);
  if (views)
    for (const auto& note : views->notes()) log(note);  // what the recorder moved aside
  if (!complete_only)
    log(start_line(config, *session, threads, thread_options.max_threads));
  else
    log("completing " + o.resume_dir + ": its checkpoint is at the last step (" +
        std::to_string(session->step()) + ") but its summary was never written");

  // The checkpoint's unfinished interval continues only when it spans exactly the steps since the
  // last kept row (a checkpoint from the window, which writes its own rows, may not).
  if (session->loss_interval().steps != session->step() - last_row_step(previous))
    session->take_loss_interval();
  if (o.on_start) o.on_start();
  const auto run_start = Clock::now();
  const int64_t first_step = session->step();
  int interrupted_by = 0;
  bool diverged = false;
  try {
    StepLoop loop(config, *session, threads, views ? &*views : nullptr, metrics, log);
    interrupted_by = loop.run(stop_at, o.checkpoint_every, out, diverged);
    metrics.sync();
    if (views && !diverged) views->finish(*session);
  } catch (const Error& e) {
    fail_with_checkpoint(e, *session, out);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - run_start).count();
  if (!complete_only) save_checkpoint(*session, out);
  // The checkpoint was saved above; the mechanism's files, then summary.json last.
  const RunSummary done =
      write_summary(*session, out, first_step, elapsed, diverged, interrupted_by);
  if (interrupted_by) throw Interrupted{interrupted_by};
  return done;
}

}  // namespace attn
