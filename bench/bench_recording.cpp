// Benchmark (prints figures; not a test): the cost of recording views over training, attribution
// included (issue 48, item 4), as ratios measured side by side in one run.
//  1. Recording: steps/s of a training loop that evaluates every eval_every steps, with the
//     recorder SessionViews (core/training/recording/run_recorder.h) at record_every =
//     eval_every, against the same loop without it; the recording with and without
//     train.record_attribution. Rounds alternate the arms (off, views, views+attribution,
//     then the reverse: bench/bench_rounds.h); each arm's best round counts. Target:
//     views+attribution >= 0.97x off's steps/s.
//     Beside it, each arm's share of its wall time spent inside records, measured within each
//     run (robust to a load that changes between runs on a shared machine).
//  2. Attribution patching of every head on the recorded probe and its twin
//     (session_attribution) in forward-pass equivalents: its time over one eval-mode forward
//     pass of the same probe, alternating, medians of each. Target <= 3.
// One thread, on the machine as it is (say its load beside the figures).
// usage: bench_recording [--steps N] [--rounds R] [--task recall|copy|mqar] [--parts 1]
//   --rounds 0: the attribution's cost alone; --parts 1: one record's parts, each timed alone.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_rounds.h"
#include "core/base/error.h"
#include "core/base/memory.h"
#include "core/runs/directory/run_files.h"
#include "core/training/interventions/interventions.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/recording/run_recorder.h"
#include "core/training/session/session.h"

using namespace attn;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

ExperimentConfig bench_config(const std::string& task) {
  ExperimentConfig c;  // assets/configs/recall.json's model; copy and mqar on the same model
  c.name = "bench-recording";
  c.task.name = task;
  c.task.length = task == "mqar" ? 8 : 4;
  c.task.vocab = task == "mqar" ? 136 : 8;  // mqar: above its context (128), as Zoology asserts
  c.model.d_model = 128;
  c.model.heads = 2;
  c.model.layers = 2;
  c.model.attention.assign(2, "dot");
  c.train.batch_size = 64;
  c.train.lr = 1e-3;
  c.train.warmup = 50;
  c.train.eval_every = 50;
  c.train.eval_batches = 8;
  c.threads = 1;
  return c;
}

// Each recording run's share of its wall time spent inside records (SessionViews' own clock),
// views and views+attribution: the recording's cost measured within one run, so a load that
// changes between runs (a shared machine) moves both sides of the ratio alike.
std::vector<double> record_shares[2];
// Each recording run's share of its wall time spent opening and closing the recording outside
// its records (creating views.rec and the TensorBoard file; fsync at the end): once per run.
std::vector<double> once_shares[2];

// This process's CPU time (every thread), in seconds: what a run costs in work, whatever else
// the machine runs meanwhile (wall time on a shared 2-core machine drifts by +-15% per run).
double process_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Each arm's steps per CPU second (off, views, views+attribution), beside the wall-clock figures.
std::vector<double> cpu_rates[3];

// Steps/s of `steps` training steps with an evaluation every eval_every, recording into a fresh
// run directory when `record` (with or without attribution).
double steps_per_second(ExperimentConfig c, int64_t steps, bool record, bool attribution,
                        const fs::path& dir) {
  c.train.steps = steps;
  c.train.record_every = record ? c.train.eval_every : 0;
  c.train.record_attribution = attribution;
  fs::remove_all(dir);
  fs::create_directories(dir);
  TrainingSession session(c);
  std::optional<SessionViews> views;
  const auto t0 = Clock::now();
  const double cpu0 = process_cpu_seconds();
  double once = 0, inside = 0;  // outside records: opening and closing; inside records
  if (record) {
    mark_run_directory(dir.string());
    views.emplace(dir.string(), session);  // records step 0, as a run does
    inside = views->take_seconds();
    once = seconds_since(t0) - inside;
  }
  for (int64_t s = 0; s < steps; ++s) {
    session.train_step();
    if (session.step() % c.train.eval_every == 0) session.evaluate();
    if (views) views->after_step(session);
  }
  const auto t_end = Clock::now();
  if (views) {
    inside += views->take_seconds();
    views->finish(session);
  }
  const double total = seconds_since(t0);
  cpu_rates[record ? (attribution ? 2 : 1) : 0].push_back(steps / (process_cpu_seconds() - cpu0));
  if (views) {
    const double last = views->take_seconds();
    inside += last;
    once += seconds_since(t_end) - last;
    record_shares[attribution ? 1 : 0].push_back(inside / total);
    once_shares[attribution ? 1 : 0].push_back(once / total);
  }
  return steps / total;
}

// Attribution of every head against one forward pass of the probe, alternating, `reps` each.
void attribution_cost(const ExperimentConfig& config, int reps) {
  ExperimentConfig c = config;
  TrainingSession session(c);
  for (int i = 0; i < 50; ++i) session.train_step();
  const PatchProbes probes = patch_probes(session, "", "", "the probe", "its twin");
  const torch::Tensor probe = torch::tensor(probes.clean, torch::kInt64).unsqueeze(0);
  std::vector<double> forward, attribution;
  for (int r = 0; r < reps + 5; ++r) {  // the first 5 of each warm up
    auto t0 = Clock::now();
    {
      torch::NoGradGuard no_grad;
      session.model()->eval();
      session.model()->forward(probe);
      session.model()->train();
    }
    const double f = seconds_since(t0);
    t0 = Clock::now();
    session_attribution(session, probes);
    const double a = seconds_since(t0);
    if (r >= 5) forward.push_back(f), attribution.push_back(a);
  }
  const double fm = bench::median(forward), am = bench::median(attribution);
  std::printf(
      "attribution (every head, %d layers x %d heads, probe of %zu tokens): %.3f ms, forward "
      "%.3f ms: %.2f forward-pass equivalents (target <= 3)\n",
      c.model.layers, c.model.heads, probes.clean.size(), 1e3 * am, 1e3 * fm, am / fm);
}

// One record's parts, each timed alone (medians of `reps`): where a record's time goes.
void record_parts(const ExperimentConfig& config, int reps) {
  ExperimentConfig c = config;
  TrainingSession session(c);
  for (int i = 0; i < 50; ++i) session.train_step();
  const PatchProbes probes = patch_probes(session, "", "", "the probe", "its twin");
  std::vector<Batch> batches =
      first_batches(session.task().eval_set(), c.train.record_importance_batches);
  for (Batch& b : batches)
    if (b.inputs.size(0) > c.train.batch_size) {
      b.inputs = b.inputs.narrow(0, 0, c.train.batch_size);
      b.targets = b.targets.narrow(0, 0, c.train.batch_size);
    }
  const std::vector<std::pair<std::string, std::function<void()>>> parts = {
      {"view_record (maps, induction, importance)", [&] { session.view_record(); }},
      {"probe maps",
       [&] { probe_model(session.model(), torch::tensor(probes.clean).unsqueeze(0)); }},
      {"head importance", [&] { head_importance(session.model(), batches, AblationMode::zero); }},
      {"attribution", [&] { session_attribution(session, probes); }},
      {"direct logit attribution", [&] { session_logit_attribution(session, probes.clean); }},
      {"one train step", [&] { session.train_step(); }},
  };
  for (const auto& [name, run] : parts) {
    std::vector<double> t;
    for (int r = 0; r < reps + 3; ++r) {
      const auto t0 = Clock::now();
      run();
      if (r >= 3) t.push_back(seconds_since(t0));
    }
    std::printf("  %-44s %8.3f ms (median of %d)\n", name.c_str(), 1e3 * bench::median(t), reps);
  }
}

}  // namespace

int main(int argc, char** argv) {
  attn::keep_freed_memory_in_heap();  // as attnlab's main: the allocator it runs with
  int64_t steps = 300;
  int rounds = 3;
  std::string task = "recall";
  bool parts = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--steps")
      steps = std::atoll(argv[i + 1]);
    else if (a == "--rounds")
      rounds = std::atoi(argv[i + 1]);
    else if (a == "--task")
      task = argv[i + 1];
    else if (a == "--parts")
      parts = std::atoi(argv[i + 1]) != 0;
  }
  try {
    torch::set_num_threads(1);
    const ExperimentConfig c = bench_config(task);
    if (parts) {  // --parts 1: one record's parts only
      std::printf("one record's parts (%s, d128 2x2 dot):\n", task.c_str());
      record_parts(c, 20);
      return 0;
    }
    std::printf("load average before: %s (%u cores)\n", bench::load_average().c_str(),
                std::thread::hardware_concurrency());
    if (rounds <= 0) {  // --rounds 0: the attribution's cost alone
      attribution_cost(c, 50);
      return 0;
    }
    const fs::path dir =
        fs::temp_directory_path() / ("attnlab-bench-recording-" + std::to_string(::getpid()));
    // Arms: 0 off, 1 views, 2 views + attribution.
    const auto sps = bench::alternating_rounds(
        3, rounds, [&](size_t arm) { return steps_per_second(c, steps, arm > 0, arm > 1, dir); },
        [](int r, const std::vector<std::vector<double>>& f) {
          std::printf(
              "round %d: best so far off %.1f, views %.1f, views+attribution %.1f steps/s\n", r + 1,
              bench::best(f[0]), bench::best(f[1]), bench::best(f[2]));
        });
    fs::remove_all(dir);
    const double off = bench::best(sps[0]), views = bench::best(sps[1]),
                 attributed = bench::best(sps[2]);
    std::printf(
        "recording (%s, d128 2x2 dot, batch 64, eval_every = record_every = 50, %lld steps, best "
        "of %d alternating rounds): views %.3fx, views+attribution %.3fx of off's steps/s "
        "(target >= 0.97x)\n",
        task.c_str(), static_cast<long long>(steps), rounds, views / off, attributed / off);
    std::printf(
        "the same runs in steps per CPU second of this process (its work, robust to other "
        "processes' load; best of %d): views %.3fx, views+attribution %.3fx of off's\n",
        rounds, bench::best(cpu_rates[1]) / bench::best(cpu_rates[0]),
        bench::best(cpu_rates[2]) / bench::best(cpu_rates[0]));
    for (int a = 0; a < 2; ++a) {
      std::vector<double>& v = record_shares[a];
      std::sort(v.begin(), v.end());
      std::printf(
          "time inside records, %s: %.2f%% of the run's wall time (best; median %.2f%%, "
          "worst %.2f%%): %.3fx steps/s within the run\n",
          a ? "views+attribution" : "views", 100 * v.front(), 100 * bench::median(v),
          100 * v.back(), 1 - v.front());
      std::printf(
          "  and opening and closing it outside records (files, fsync): %.2f%% of the "
          "run's wall time (median)\n",
          100 * bench::median(once_shares[a]));
    }
    attribution_cost(c, 50);
    std::printf("load average after: %s\n", bench::load_average().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_recording: %s\n", e.what());
    return 1;
  }
  return 0;
}
