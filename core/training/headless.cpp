#include "core/training/headless.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include "core/analysis/connections.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/version.h"
#include "core/training/session.h"

namespace attn {
namespace {

// The process's peak resident memory so far (the whole run: data, model, optimiser, batches).
double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // KiB on Linux
}

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Keeps the header and the rows at or before `step` (a resumed run rewrites what came after
// its checkpoint).
std::string metrics_prefix(const fs::path& path, int64_t step) {
  std::ifstream in(path);
  std::string line, out;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      continue;
    }
    // A row cut short by a crash (fewer than 6 fields, or no number first) is dropped.
    if (std::count(line.begin(), line.end(), ',') != 5) continue;
    char* end = nullptr;
    const long long row_step = std::strtoll(line.c_str(), &end, 10);
    if (end == line.c_str() || *end != ',') continue;
    if (row_step <= step) out += line + "\n";
  }
  return out;
}

}  // namespace

RunSummary train_headless(ExperimentConfig config, const HeadlessOptions& o) {
  if (o.out_dir.empty()) throw Error("--out: an output directory is required");
  const fs::path out = o.out_dir;
  std::unique_ptr<TrainingSession> session;
  if (!o.resume_dir.empty()) {
    const fs::path ckpt = fs::path(o.resume_dir) / "checkpoint";
    config = TrainingSession::checkpoint_config(ckpt.string());
    if (o.steps) config.train.steps = *o.steps;
    if (o.seed && *o.seed != config.seed)
      throw Error("--seed " + std::to_string(*o.seed) + " differs from the resumed run's seed " +
                  std::to_string(config.seed) + "; a resumed run keeps its seed");
    session = std::make_unique<TrainingSession>(config);
    session->load(ckpt.string());
    if (session->step() >= config.train.steps && !o.steps)
      throw Error("run " + o.resume_dir + " already finished its " +
                  std::to_string(config.train.steps) + " steps; pass --steps N to extend it");
  } else {
    if (o.steps) config.train.steps = *o.steps;
    if (o.seed) config.seed = *o.seed;
    config = parse_config(to_json(config), "resolved config");  // re-validate the overrides
  }
  const int threads = o.threads > 0 ? o.threads
                      : config.threads > 0
                          ? config.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(threads);
  if (!session) session = std::make_unique<TrainingSession>(config);

  {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) throw Error("--out: cannot create " + out.string() + ": " + ec.message());
  }
  write_run_config(out.string(), config);

  const fs::path metrics_path = out / "metrics.csv";
  std::string previous = o.resume_dir.empty() ? "" : metrics_prefix(metrics_path, session->step());
  // The kept rows are rewritten whole first, then appended to row by row (one flush per eval):
  // a crash loses at most the row being written, which the next resume drops.
  write_file_atomic(metrics_path.string(), std::string(kMetricsHeader) + "\n" + previous);
  std::ofstream metrics(metrics_path, std::ios::app);
  if (!metrics) throw Error("cannot write " + metrics_path.string());

  auto log = [&](const std::string& s) {
    if (o.log) o.log(s);
  };
  const bool conn = config.model.architecture == "conn";
  log("training " + config.task.name + " with " +
      (conn ? std::string("the Connection Transformer (conn)")
            : config.model.attention.at(0) + " attention") +
      " on " + session->device_name() + ", " + std::to_string(session->parameters()) +
      " parameters, " + std::to_string(threads) + " threads");

  RunSummary summary;
  const auto& t = config.train;
  double interval_loss = 0;
  int64_t interval_steps = 0;
  auto interval_start = Clock::now();
  const auto run_start = Clock::now();
  const int64_t first_step = session->step();
  const int64_t stop_at = o.until ? std::min(*o.until, t.steps) : t.steps;
  if (stop_at <= session->step())
    throw Error("--until " + std::to_string(stop_at) + " is not after the run's current step " +
                std::to_string(session->step()));
  while (session->step() < stop_at) {
    const double lr = session->learning_rate();
    try {
      interval_loss += session->train_step();
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
      metrics << metrics_row(step, interval_loss / interval_steps, eval.loss, eval.accuracy, lr,
                             sps);
      metrics.flush();
      std::ostringstream line;
      line << "step " << step << "/" << t.steps << "  train " << std::fixed << std::setprecision(4)
           << interval_loss / interval_steps << "  eval " << eval.loss << "  acc " << eval.accuracy
           << "  " << std::setprecision(1) << sps << " steps/s";
      log(line.str());
      interval_loss = 0;
      interval_steps = 0;
      interval_start = Clock::now();
    }
    if (o.checkpoint_every > 0 && step % o.checkpoint_every == 0 && step < stop_at)
      session->save((out / "checkpoint").string());
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - run_start).count();
  session->save((out / "checkpoint").string());

  summary.mechanism = run_mechanism(config);
  summary.task = config.task.name;
  summary.steps = session->step();
  summary.final_train_loss = session->last_train_loss();
  summary.eval_loss = session->last_eval_loss();
  summary.eval_accuracy = session->last_eval_accuracy();
  summary.baseline_loss = session->task().baseline_loss();
  summary.parameters = session->parameters();
  summary.attention_parameters = session->attention_parameters();
  summary.steps_per_second = (session->step() - first_step) / std::max(1e-9, elapsed);
  summary.seed = config.seed;
  summary.device = session->device_name();

  json j = run_summary_json(config, summary, elapsed);
  j["peak_rss_mib"] = peak_rss_mib();
  if (session->task().patch_dim() > 0) {
    // Image tasks evaluate on the shipped test split (never trained on): say so by name.
    int64_t examples = 0;
    for (const auto& b : session->task().eval_set()) examples += b.targets.size(0);
    j["test_accuracy"] = summary.eval_accuracy;
    j["test_loss"] = summary.eval_loss;
    j["test_examples"] = examples;
  }
  if (conn) {
    // Spectra of I + C over training, the final C's eigenvalues and statistics.
    const json c = session->conn_json();
    j["conn"] = {{"spectral_radius", c["final"]["spectral_radius"]},
                 {"spectral_norm", c["final"]["spectral_norm"]},
                 {"frobenius", c["final"]["frobenius"]},
                 {"control", c["control"]},
                 {"control_events", c["control_events"]},
                 {"spec_formula_parameters", c["spec_formula_parameters"]}};
    write_run_json(out.string(), "conn.json", c, /*pretty=*/false);
    write_file_atomic((out / "C.csv").string(), session->conn_matrix_csv());  // `attnlab spectral`
  }
  write_run_json(out.string(), "summary.json", j);
  // Learned connection functions of `ky` layers over training (for figures and comparisons).
  if (!session->connection_history().empty())
    write_run_json(out.string(), "connections.json",
                   connection_frames_to_json(session->connection_history()), /*pretty=*/false);
  return summary;
}

}  // namespace attn
