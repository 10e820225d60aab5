#include "core/runs/run_recorder.h"

#include <filesystem>

#include "core/analysis/connections.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/runs/run_files.h"

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
  if (session.task().patch_dim() > 0) {
    // Image tasks evaluate on the shipped test split (never trained on): say so by name.
    int64_t examples = 0;
    for (const auto& b : session.task().eval_set()) examples += b.targets.size(0);
    j["test_accuracy"] = j["eval_accuracy"];
    j["test_loss"] = j["eval_loss"];
    j["test_examples"] = examples;
  }
  if (session.config().model.architecture == "conn") {
    // Spectra of I + C over training, the final C's eigenvalues and statistics.
    const json c = session.conn_json();
    j["conn"] = {{"spectral_radius", c["final"]["spectral_radius"]},
                 {"spectral_norm", c["final"]["spectral_norm"]},
                 {"frobenius", c["final"]["frobenius"]},
                 {"control", c["control"]},
                 {"control_events", c["control_events"]},
                 {"spec_formula_parameters", c["spec_formula_parameters"]}};
  }
  return j;
}

void write_run_outputs(TrainingSession& session, const std::string& dir, const json& summary,
                       bool checkpoint) {
  const fs::path out(dir);
  if (checkpoint) session.save((out / "checkpoint").string());
  if (session.config().model.architecture == "conn") {
    write_run_json(dir, "conn.json", session.conn_json(), /*pretty=*/false);
    write_file_atomic((out / "C.csv").string(), session.conn_matrix_csv());  // `attnlab spectral`
  }
  // Learned connection functions of `ky` layers over training (for figures and comparisons).
  if (!session.connection_history().empty())
    write_run_json(dir, "connections.json", connection_frames_to_json(session.connection_history()),
                   /*pretty=*/false);
  // summary.json last: it marks the run directory complete.
  write_run_json(dir, "summary.json", summary);
}

RunRecorder::RunRecorder(const std::string& dir, TrainingSession& session, const std::string& what)
    : lock_(dir, what, /*wait=*/false), first_step_(session.step()) {
  if (!run_files_present(dir).empty())
    throw Error("run directory " + dir + " already holds a run; the window records into a new one");
  write_run_config(dir, session.config());
  const std::string metrics = (fs::path(dir) / "metrics.csv").string();
  write_file_atomic(metrics, std::string(kMetricsHeader) + "\n");
  metrics_.emplace(metrics);
}

void RunRecorder::on_step(double train_loss) {
  interval_loss_ += train_loss;
  ++interval_steps_;
}

void RunRecorder::on_eval(const TrainingSession& session, const EvalResult& eval, double lr) {
  const double dt = std::chrono::duration<double>(Clock::now() - interval_start_).count();
  std::optional<double> train, sps;
  if (interval_steps_ > 0) {
    train = interval_loss_ / interval_steps_;
    sps = interval_steps_ / std::max(1e-9, dt);
  }
  metrics_->append(metrics_row(session.step(), train, eval.loss, eval.accuracy, lr, sps));
  ++rows_;
  interval_loss_ = 0;
  interval_steps_ = 0;
  interval_start_ = Clock::now();
}

void RunRecorder::continue_training() {
  if (!saved_) return;
  std::error_code ec;
  const fs::path summary = fs::path(dir()) / "summary.json";
  fs::remove(summary, ec);
  if (ec) throw Error("cannot remove " + summary.string() + ": " + ec.message());
  saved_ = false;
  resumed_ = interval_start_ = Clock::now();
  interval_loss_ = 0;
  interval_steps_ = 0;
}

void RunRecorder::save(TrainingSession& session, const std::string& stopped_by, bool diverged) {
  if (saved_) return;  // nothing trained since the last save
  metrics_->sync();
  train_seconds_ += std::chrono::duration<double>(Clock::now() - resumed_).count();
  const RunSummary s = summarize_session(session, first_step_, train_seconds_, diverged);
  json j = session_summary_json(session, s, train_seconds_);
  j["source"] = "gui";
  if (!stopped_by.empty()) {
    j["interrupted"] = true;
    j["interrupted_by"] = stopped_by;
  }
  write_run_outputs(session, dir(), j, /*checkpoint=*/true);
  saved_ = true;
}

}  // namespace attn
