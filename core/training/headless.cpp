#include "core/training/headless.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <sstream>
#include <thread>

#include "core/analysis/connections.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/interrupt.h"
#include "core/base/memory.h"
#include "core/base/version.h"
#include "core/runs/run_dir.h"
#include "core/runs/run_lock.h"
#include "core/runs/run_recorder.h"
#include "core/training/session.h"
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

const char* signal_name(int sig) {
  return sig == SIGINT    ? "SIGINT"
         : sig == SIGTERM ? "SIGTERM"
         : sig == SIGHUP  ? "SIGHUP"
                          : "a signal";
}

// A resumed run's config.json must describe the model its checkpoint holds: a checkpoint copied
// from another run (another mechanism, another size) would otherwise resume silently under the
// wrong name.
void check_checkpoint_matches_run(const fs::path& run_dir, const ExperimentConfig& checkpoint) {
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
}

// The out directory before training writes into it: a directory that holds another run is
// refused unless `force` (then emptied, summary first), and a run being continued loses its
// summary first, so that a kill while extending it never leaves an old summary beside a newer
// checkpoint.
void prepare_out_dir(const fs::path& out, const HeadlessOptions& o, bool same_as_resume) {
  if (!same_as_resume && holds_run(out.string())) {
    if (!o.force)
      throw Error("--out " + out.string() +
                  " already holds a run (config.json, metrics.csv, summary.json or checkpoint/); "
                  "continue it with --resume " +
                  out.string() + ", replace it with --force, or choose another --out");
    clear_run_directory(out.string());
  }
  std::error_code ec;
  fs::remove(out / "summary.json", ec);
  if (ec) throw Error("cannot remove " + (out / "summary.json").string() + ": " + ec.message());
}

// What training this config holds at least: each layer's attention (~4 D^2) and MLP
// (2 mlp_ratio D^2) weights, times weights, gradients, AdamW's two moments and the recovery copy.
// Embeddings and activations come on top, so this only refuses what can never fit.
void check_training_memory(const ExperimentConfig& c) {
  const double D = c.model.d_model, L = c.model.layers, R = c.model.mlp_ratio;
  const double parameters = L * (4 + 2 * R) * D * D;
  const double bytes = parameters * sizeof(float) * 5;
  if (bytes < 1e9) return;  // not worth a look at /proc
  char what[160];
  std::snprintf(what, sizeof what, "training d_model %d x %d layers (~%.3g parameters)",
                c.model.d_model, c.model.layers, parameters);
  require_memory(static_cast<uint64_t>(bytes), what,
                 "lower model.d_model or model.layers (or train on a machine with more memory)");
}

void save_checkpoint(TrainingSession& session, const fs::path& out) {
  session.save((out / "checkpoint").string());
}

}  // namespace

RunSummary train_headless(ExperimentConfig config, const HeadlessOptions& o) {
  if (o.out_dir.empty()) throw Error("--out: an output directory is required");
  const fs::path out = o.out_dir;
  const bool resuming = !o.resume_dir.empty();
  std::error_code ec;
  const bool same_as_resume =
      resuming && fs::exists(out, ec) && fs::equivalent(out, o.resume_dir, ec);
  std::unique_ptr<TrainingSession> session;
  bool complete_only = false;  // a finished checkpoint whose summary was never written
  if (resuming) {
    const fs::path ckpt = fs::path(o.resume_dir) / "checkpoint";
    config = TrainingSession::checkpoint_config(ckpt.string());
    check_checkpoint_matches_run(o.resume_dir, config);
    check_training_memory(config);
    if (o.steps) config.train.steps = *o.steps;
    if (o.seed && *o.seed != config.seed)
      throw Error("--seed " + std::to_string(*o.seed) + " differs from the resumed run's seed " +
                  std::to_string(config.seed) + "; a resumed run keeps its seed");
    session = std::make_unique<TrainingSession>(config);
    session->load(ckpt.string());
    if (session->step() >= config.train.steps && !o.steps) {
      if (summary_finished(o.resume_dir, session->step()))
        throw Error("run " + o.resume_dir + " already finished its " +
                    std::to_string(config.train.steps) + " steps; pass --steps N to extend it");
      complete_only = true;  // killed between the final checkpoint and its summary
    }
  } else {
    if (o.steps) config.train.steps = *o.steps;
    if (o.seed) config.seed = *o.seed;
    config = parse_config(to_json(config), "resolved config");  // re-validate the overrides
    check_training_memory(config);
  }
  // --threads or the config's "threads" fix the count; otherwise it adapts (thread_policy.h).
  ThreadPolicyOptions thread_options;
  thread_options.fixed = o.threads > 0 ? o.threads : config.threads;
  thread_options.max_threads = ThreadPolicy::default_max_threads(/*leave_core_for_ui=*/false);
  if (o.max_threads > 0)
    thread_options.max_threads = std::min(thread_options.max_threads, o.max_threads);
  thread_options.team_ready = [](int n) { return team_runs_promptly(n); };
  ThreadPolicy threads(thread_options);
  torch::set_num_threads(threads.threads());
  if (!session) session = std::make_unique<TrainingSession>(config);

  std::optional<RunDirLock> lock;
  if (o.lock) lock.emplace(out.string(), "attnlab train " + config.name, o.wait);
  prepare_out_dir(out, o, same_as_resume);
  write_run_config(out.string(), config);

  const fs::path metrics_path = out / "metrics.csv";
  // The earlier rows come from the run being resumed (which may be another directory).
  const std::string previous =
      resuming ? metrics_prefix(fs::path(o.resume_dir) / "metrics.csv", session->step()) : "";
  // The kept rows are rewritten whole first, then appended to row by row: a crash loses at most
  // the row being written, which the next resume drops.
  write_file_atomic(metrics_path.string(), std::string(kMetricsHeader) + "\n" + previous);
  MetricsAppender metrics(metrics_path.string());

  auto log = [&](const std::string& s) {
    if (o.log) o.log(s);
  };
  const bool conn = config.model.architecture == "conn";
  if (!complete_only)
    log("training " + config.task.name + " with " +
        (conn ? std::string("the Connection Transformer (conn)")
              : config.model.attention.at(0) + " attention") +
        " on " + session->device_name() + ", " + std::to_string(session->parameters()) +
        " parameters, " +
        (threads.adaptive() ? "threads chosen by measurement (1 to " +
                                  std::to_string(thread_options.max_threads) + ")"
                            : std::to_string(threads.threads()) +
                                  (threads.threads() == 1 ? " thread" : " threads")));
  else
    log("completing " + o.resume_dir + ": its checkpoint is at the last step (" +
        std::to_string(session->step()) + ") but its summary was never written");

  RunSummary summary;
  const auto& t = config.train;
  double interval_loss = 0;
  int64_t interval_steps = 0;
  auto interval_start = Clock::now();
  const auto run_start = Clock::now();
  const int64_t first_step = session->step();
  const int64_t stop_at = o.until ? std::min(*o.until, t.steps) : t.steps;
  if (!complete_only && stop_at <= session->step())
    throw Error("--until " + std::to_string(stop_at) + " is not after the run's current step " +
                std::to_string(session->step()));
  int interrupted_by = 0;
  try {
    while (session->step() < stop_at) {
      if ((interrupted_by = stop_signal()) != 0) {
        log(std::string("interrupted by ") + signal_name(interrupted_by) + " at step " +
            std::to_string(session->step()) + ": saving the checkpoint");
        break;
      }
      const double lr = session->learning_rate();
      try {
        const auto step_start = Clock::now();
        interval_loss += session->train_step();
        const int chosen = threads.chosen();
        if (threads.record_step(std::chrono::duration<double>(Clock::now() - step_start).count()))
          torch::set_num_threads(threads.threads());
        if (threads.chosen() != chosen) log("threads: " + threads.reason());
      } catch (const DivergedError& e) {
        summary.diverged = true;
        log(std::string("diverged: ") + e.what());
        break;
      }
      ++interval_steps;
      const int64_t step = session->step();
      if (step % t.eval_every == 0 || step == stop_at) {
        const auto eval = session->evaluate();
        const double dt = std::chrono::duration<double>(Clock::now() - interval_start).count();
        const double sps = interval_steps / std::max(1e-9, dt);
        metrics.append(
            metrics_row(step, interval_loss / interval_steps, eval.loss, eval.accuracy, lr, sps));
        std::ostringstream line;
        line << "step " << step << "/" << t.steps << "  train " << std::fixed
             << std::setprecision(4) << interval_loss / interval_steps << "  eval " << eval.loss
             << "  acc " << eval.accuracy << "  " << std::setprecision(1) << sps << " steps/s";
        log(line.str());
        interval_loss = 0;
        interval_steps = 0;
        interval_start = Clock::now();
      }
      if (o.checkpoint_every > 0 && step % o.checkpoint_every == 0 && step < stop_at)
        save_checkpoint(*session, out);
    }
    metrics.sync();
  } catch (const Error& e) {
    // A failed write (a full disk): keep what can be kept, say where the run stands.
    std::string saved;
    try {
      save_checkpoint(*session, out);
      saved = "; the checkpoint at step " + std::to_string(session->step()) +
              " was saved: continue with --resume " + out.string();
    } catch (const std::exception& e2) {
      saved = std::string("; the checkpoint could not be saved either: ") + e2.what();
    }
    throw Error(std::string(e.what()) + saved);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - run_start).count();
  if (!complete_only) save_checkpoint(*session, out);

  const RunSummary done = summarize_session(*session, first_step, elapsed, summary.diverged);
  json j = session_summary_json(*session, done, elapsed);
  j["peak_rss_mib"] = peak_rss_mib();
  if (interrupted_by) {
    j["interrupted"] = true;
    j["interrupted_by"] = signal_name(interrupted_by);
  }
  // The checkpoint was saved above; the mechanism's files, then summary.json last.
  write_run_outputs(*session, out.string(), j, /*checkpoint=*/false);
  if (interrupted_by) throw Interrupted{interrupted_by};
  return done;
}

}  // namespace attn
