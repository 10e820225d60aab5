#include "core/training/recording/run_recorder.h"

#include <filesystem>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/runs/directory/run_files.h"
#include "core/runs/formats/tensorboard_events.h"
#include "core/training/interventions/run_interventions.h"
#include "core/views/mechanism_view.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

RunSummary summarize_session(const TrainingSession& session, int64_t first_step, double elapsed,
                             bool diverged) {
  const ExperimentConfig& config = session.config();
  RunSummary s;
  s.mechanism = run_mechanism(config);
  s.task = config.task.name;
  s.steps = session.step();
  if (session.has_train_loss()) s.final_train_loss = session.last_train_loss();
  if (session.has_evaluation()) {  // else absent: never 0, which would read as a perfect score
    s.eval_loss = session.last_eval_loss();
    s.eval_accuracy = session.last_eval_accuracy();
  }
  s.baseline_loss = session.task().baseline_loss();
  s.parameters = session.parameters();
  s.attention_parameters = session.attention_parameters();
  s.steps_per_second = (session.step() - first_step) / std::max(1e-9, elapsed);
  s.seed = config.seed;
  s.device = session.device_name();
  s.diverged = diverged;
  return s;
}

json session_summary_json(TrainingSession& session, const RunSummary& summary, double elapsed) {
  json j = run_summary_json(session.config(), summary, elapsed);
  j["step_path"] = session.step_path();  // how the steps ran: a CUDA graph or eager, and why
  if (session.task().patch_dim() > 0) {
    // Image tasks evaluate on the shipped test split (never trained on): say so by name.
    int64_t examples = 0;
    for (const auto& b : session.task().eval_set()) examples += b.targets.size(0);
    j["test_accuracy"] = j["eval_accuracy"];
    j["test_loss"] = j["eval_loss"];
    j["test_examples"] = examples;
  }
  // The architecture's own measurements (conn: the final spectrum of I + C), under its name.
  if (ArchitectureMonitor* monitor = session.architecture_monitor())
    if (json own = monitor->summary(); !own.is_null())
      j[session.config().model.architecture] = std::move(own);
  return j;
}

void write_run_outputs(TrainingSession& session, const std::string& dir, const json& summary,
                       bool checkpoint) {
  const fs::path out(dir);
  if (checkpoint) session.save((out / "checkpoint").string());
  // The architecture's side files (conn: conn.json, and C.csv for `attnlab spectral`).
  if (ArchitectureMonitor* monitor = session.architecture_monitor())
    for (const ArchitectureFile& f : monitor->files()) {
      if (f.text.empty())
        write_run_json(dir, f.name, f.json, /*pretty=*/false);
      else
        write_file_atomic((out / f.name).string(), f.text);
    }
  // The mechanisms' views over training (for figures and comparisons; read_mechanism_frames).
  if (!session.mechanism_history().empty())
    write_run_json(dir, kMechanismViewsFile, mechanism_frames_to_json(session.mechanism_history()),
                   /*pretty=*/false);
  // summary.json last: it marks the run directory complete (null: the caller writes it).
  if (!summary.is_null()) write_run_json(dir, "summary.json", summary);
}

RunRecorder::RunRecorder(const std::string& dir, TrainingSession& session, const std::string& what)
    : lock_(dir, what, /*wait=*/false), first_step_(session.step()) {
  if (!run_files_present(dir).empty())
    throw Error("run directory " + dir + " already holds a run; the window records into a new one");
  write_run_config(dir, session.config());
  session.take_loss_interval();  // the first row covers the steps recorded here, no earlier ones
  const std::string metrics = (fs::path(dir) / "metrics.csv").string();
  write_file_atomic(metrics, std::string(kMetricsHeader) + "\n");
  metrics_.emplace(metrics);
  if (session.config().train.record_every > 0) {
    views_.emplace(dir, session);
    views_->take_seconds();  // before any timed interval
  }
}

void keep_checkpoint(TrainingSession& session, const std::string& dir) {
  if (keeps_checkpoint_at(session.config().train, session.step()))
    session.save(kept_checkpoint_dir(dir, session.step()));
}

void RunRecorder::on_step(TrainingSession& session) {
  ++timed_steps_;
  if (views_) views_->after_step(session);
  keep_checkpoint(session, dir());
}

namespace {

// The recorder of dir's views.rec for this session (see SessionViews): checked first, then made.
ViewRecorder open_views(const std::string& dir, const TrainingSession& session) {
  // Records after the session's step are the ones a resume from an earlier checkpoint trains
  // again; the one at its step is the checkpoint's model's, kept.
  ViewRecordingPlan plan =
      plan_view_recording((fs::path(dir) / kViewRecordsFile).string(),
                          view_run_of(dir, session.config()), session.step() + 1);
  if (plan.file.version == 0) plan.run.run_id = mark_run_directory(dir);  // the run's identity
  return ViewRecorder(std::move(plan));
}

}  // namespace

void add_causal_record(TrainingSession& session, ViewRecord& r) {
  const PatchProbes probes = patch_probes(session, "", "", "the probe", "its twin");
  const AttributionTable a = session_attribution(session, probes);
  r.attribution.metric = a.metric;
  r.attribution.clean = a.clean_metric;
  r.attribution.corrupt = a.corrupt_metric;
  r.attribution.layers = a.layers;
  r.attribution.heads = a.heads;
  r.attribution.values.assign(a.attribution.begin(), a.attribution.end());
  const LogitAttribution d = session_logit_attribution(session, probes.clean);
  r.dla.answer = d.answer;
  r.dla.answer_logit = d.answer_logit;
  r.dla.held_out = d.held_out;
  for (const auto& c : d.components) {
    r.dla.names.push_back(c.first);
    r.dla.values.push_back(static_cast<float>(c.second));
  }
}

SessionViews::SessionViews(const std::string& dir, TrainingSession& session)
    : recorder_(open_views(dir, session)),
      notes_(recorder_.notes()),
      every_(session.config().train.record_every),
      events_(run_events(dir)) {
  if (session.config().train.record_attribution) {
    try {  // the probes it would use: refused for images, a task without twins, no heads
      check_interventions_apply(session.config());
      patch_probes(session, "", "", "the probe", "its twin");
      attribution_ = true;
    } catch (const Error& e) {
      notes_.push_back(
          std::string("views.rec records no attribution (train.record_attribution): ") + e.what());
    }
  }
  if (recorder_.index().empty() || recorder_.index().back().step != session.step()) record(session);
}

void SessionViews::record(TrainingSession& session) {
  const auto t0 = std::chrono::steady_clock::now();
  ViewRecord r = session.view_record();
  if (attribution_) add_causal_record(session, r);
  recorder_.append(r);
  events_->add_head_metrics(head_metrics(r));  // TensorBoard's copy
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void SessionViews::after_step(TrainingSession& session) {
  if (every_ > 0 && session.step() % every_ == 0) record(session);
}

void SessionViews::finish(TrainingSession& session) {
  if (recorder_.index().empty() || recorder_.index().back().step != session.step()) record(session);
  recorder_.sync();
}

void SessionViews::sync() {
  recorder_.sync();
}

double SessionViews::take_seconds() {
  const double s = seconds_;
  seconds_ = 0;
  return s;
}

void RunRecorder::on_eval(TrainingSession& session, const EvalResult& eval, double lr) {
  const double dt = std::chrono::duration<double>(Clock::now() - interval_start_).count() -
                    (views_ ? views_->take_seconds() : 0.0);
  const auto interval = session.take_loss_interval();
  std::optional<double> train, sps;
  if (interval.steps > 0) train = interval.sum / interval.steps;
  if (timed_steps_ > 0) sps = timed_steps_ / std::max(1e-9, dt);
  metrics_->append(metrics_row(session.step(), train, eval.loss, eval.accuracy, lr, sps));
  ++rows_;
  timed_steps_ = 0;
  interval_start_ = Clock::now();
}

void RunRecorder::continue_training() {
  if (summary_present_) {
    std::error_code ec;
    const fs::path summary = fs::path(dir()) / "summary.json";
    fs::remove(summary, ec);
    if (ec) throw Error("cannot remove " + summary.string() + ": " + ec.message());
    summary_present_ = false;
  }
  saved_ = false;
  if (!timing_) {
    resumed_ = interval_start_ = Clock::now();
    timing_ = true;
    timed_steps_ = 0;
  }
}

void RunRecorder::checkpoint(TrainingSession& session) {
  metrics_->sync();
  if (views_) views_->sync();
  session.save((fs::path(dir()) / "checkpoint").string());
}

namespace {

// The summary as the window writes it: "source": "gui", and "interrupted_by" unless finished.
json window_summary(TrainingSession& session, int64_t first_step, double seconds,
                    const std::string& stopped_by, bool diverged) {
  const RunSummary s = summarize_session(session, first_step, seconds, diverged);
  json j = session_summary_json(session, s, seconds);
  j["source"] = "gui";
  if (!stopped_by.empty()) {
    j["interrupted"] = true;
    j["interrupted_by"] = stopped_by;
  }
  return j;
}

}  // namespace

void RunRecorder::save(TrainingSession& session, const std::string& stopped_by, bool diverged) {
  if (saved_) return;  // nothing trained since the last save
  if (timing_) {
    train_seconds_ += std::chrono::duration<double>(Clock::now() - resumed_).count();
    timing_ = false;
  }
  // Each part is tried even when an earlier one failed: what can be kept is kept.
  std::vector<std::string> failed;
  auto attempt = [&](const std::string& what, auto&& action) {
    try {
      action();
    } catch (const std::exception& e) {
      failed.push_back(what + ": " + e.what());
    }
  };
  attempt("metrics.csv", [&] { metrics_->sync(); });
  if (views_ && !diverged)  // the last step too: the recording ends where the checkpoint is
    attempt("views.rec", [&] { views_->finish(session); });
  bool checkpoint = false;
  attempt("checkpoint", [&] {
    session.save((fs::path(dir()) / "checkpoint").string());
    checkpoint = true;
  });
  attempt("side files", [&] { write_run_outputs(session, dir(), nullptr, /*checkpoint=*/false); });
  json j = window_summary(session, first_step_, train_seconds_, stopped_by, diverged);
  if (!failed.empty()) j["save_errors"] = failed;
  bool summary = false;
  attempt("summary.json", [&] {
    write_run_json(dir(), "summary.json", j);
    summary = summary_present_ = true;
  });
  if (failed.empty()) {
    saved_ = true;
    return;
  }
  std::string what;
  for (const std::string& f : failed) what += (what.empty() ? "" : "; ") + f;
  std::string kept = "metrics.csv (" + std::to_string(rows_) + " rows)";
  if (checkpoint) kept += ", the checkpoint at step " + std::to_string(session.step());
  if (summary) kept += ", summary.json (listing what failed)";
  throw Error("run " + dir() + " was not saved whole at step " + std::to_string(session.step()) +
              ": " + what + "; kept: " + kept);
}

std::string RunRecorder::metrics_csv() {
  metrics_->sync();
  return read_regular_file((fs::path(dir()) / "metrics.csv").string(), uint64_t(1) << 30);
}

double RunRecorder::train_seconds() const {
  return train_seconds_ +
         (timing_ ? std::chrono::duration<double>(Clock::now() - resumed_).count() : 0.0);
}

json gui_summary_json(TrainingSession& session, int64_t first_step, double seconds,
                      const std::string& stopped_by, bool diverged) {
  return window_summary(session, first_step, seconds, stopped_by, diverged);
}

std::string history_metrics_csv(const TrainingSession& session) {
  Snapshot snap;
  session.fill_snapshot(snap);
  // A row per evaluation, with the mean train loss since the previous one.
  std::string csv = std::string(kMetricsHeader) + "\n";
  size_t t = 0;
  for (size_t i = 0; i < snap.eval_loss.steps.size(); ++i) {
    const int64_t step = snap.eval_loss.steps[i];
    double sum = 0;
    int n = 0;
    for (; t < snap.train_loss.steps.size() && snap.train_loss.steps[t] <= step; ++t, ++n)
      sum += snap.train_loss.values[t];
    std::optional<double> accuracy;
    if (i < snap.eval_accuracy.values.size()) accuracy = snap.eval_accuracy.values[i];
    csv += metrics_row(step, n ? std::optional<double>(sum / n) : std::nullopt,
                       snap.eval_loss.values[i], accuracy, std::nullopt, std::nullopt);
  }
  return csv;
}

void write_run_copy(TrainingSession& session, const std::string& dir, const std::string& metrics,
                    const json& summary) {
  const fs::path out(dir);
  std::error_code ec;
  fs::remove(out / "summary.json", ec);  // commit order: the summary goes first, comes last
  if (ec) throw Error("cannot remove " + (out / "summary.json").string() + ": " + ec.message());
  write_run_config(dir, session.config());
  write_file_atomic((out / "metrics.csv").string(), metrics);
  write_run_outputs(session, dir, summary, /*checkpoint=*/true);
}

}  // namespace attn
