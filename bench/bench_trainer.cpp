// Benchmark (prints figures; not a test):
//  1. ms per training step of the dot transformer at the docs/design/TARGETS.md anchor configs
//     (2-layer causal char LM on fortunes: d128/4 heads/seq 128/batch 16, and d64/seq 64/batch 4),
//     median after warm-up, same thread count as the anchor (2).
//  2. Trainer throughput with and without snapshot publishing (probe attention every 100 ms),
//     alternating A/B rounds in one run; prints the overhead in percent.
// usage: bench_trainer [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "core/base/memory.h"
#include "core/training/session/session.h"
#include "core/training/trainer.h"

using namespace attn;
using Clock = std::chrono::steady_clock;

namespace {

ExperimentConfig lm_config(int d, int seq, int batch) {
  ExperimentConfig c;
  c.task.name = "text";
  c.task.context = seq;
  c.model.d_model = d;
  c.model.heads = 4;
  c.model.layers = 2;
  c.model.attention.assign(2, "dot");
  c.train.batch_size = batch;
  c.train.steps = 1000000;
  c.train.eval_every = 1000000;
  c.train.eval_batches = 1;
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void step_time(const char* label, const ExperimentConfig& c, int warmup, int measured) {
  TrainingSession s(c);
  for (int i = 0; i < warmup; ++i) s.train_step();
  std::vector<double> ms;
  for (int i = 0; i < measured; ++i) {
    const auto t0 = Clock::now();
    s.train_step();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::printf("%-34s median %7.2f ms/step  (min %.2f, %d steps, %d threads)\n", label, median(ms),
              *std::min_element(ms.begin(), ms.end()), measured, torch::get_num_threads());
}

// Seconds for `steps` steps through the Trainer thread, from start() to Finished. Stores the
// trainer's own measure of publishing time over training time in *overhead.
double trainer_seconds(ExperimentConfig c, int64_t steps, bool publish, bool probe, int threads,
                       double* overhead = nullptr) {
  c.train.steps = steps;
  TrainerOptions o;
  o.threads = threads;
  o.publish_interval_ms = publish ? 100 : 1e15;
  o.probe_attention = probe;
  Trainer t(c, o);
  while (t.state() != TrainerState::Idle) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto t0 = Clock::now();
  t.start();
  while (t.state() != TrainerState::Finished) {
    if (t.state() == TrainerState::Error) {
      std::printf("error: %s\n", t.latest()->message.c_str());
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (overhead) *overhead = t.latest()->publish_overhead;
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  attn::keep_freed_memory_in_heap();  // as attnlab's main: the allocator it runs with
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  torch::set_num_threads(2);
  std::printf("== training step time (dot, 2-layer causal char LM on fortunes)\n");
  std::printf(
      "   anchor, docs/design/TARGETS.md (PyTorch 1.13 script, same machine class): 67.7 ms and "
      "7.4 ms\n");
  step_time("d128 h4 seq128 batch16", lm_config(128, 128, 16), 5, quick ? 10 : 40);
  step_time("d64 h4 seq64 batch4", lm_config(64, 64, 4), 10, quick ? 50 : 200);

  std::printf("== snapshot publishing overhead (Trainer thread, publish every 100 ms)\n");
  struct Case {
    const char* label;
    ExperimentConfig config;
    int64_t steps;
  };
  ExperimentConfig copy;
  copy.task.length = 8;
  copy.model.attention.assign(2, "dot");
  copy.train.eval_every = 1000000;
  copy.train.batch_size = 64;
  std::vector<Case> cases = {
      {"copy d64 batch64", copy, quick ? 300 : 800},
      {"fortunes d128 seq128 batch16", lm_config(128, 128, 16), quick ? 20 : 80}};
  for (auto& cs : cases) {
    double with = 0, without = 0, no_probe = 0, measured = 0, m;
    const int rounds = quick ? 1 : 4;
    for (int r = 0; r < rounds; ++r) {  // A B C, then C B A: a drift hits every mode alike
      if (r % 2 == 0)
        without += trainer_seconds(cs.config, cs.steps, false, false, 2);
      else
        with += trainer_seconds(cs.config, cs.steps, true, true, 2, &m);
      no_probe += trainer_seconds(cs.config, cs.steps, true, false, 2);
      if (r % 2 == 0)
        with += trainer_seconds(cs.config, cs.steps, true, true, 2, &m);
      else
        without += trainer_seconds(cs.config, cs.steps, false, false, 2);
      measured = std::max(measured, m);
    }
    std::printf(
        "%-30s %6.1f steps/s unpublished, %6.1f publishing (%+.2f%%), %6.1f publishing "
        "with attention probes (%+.2f%%)\n",
        cs.label, rounds * cs.steps / without, rounds * cs.steps / no_probe,
        100.0 * (no_probe - without) / without, rounds * cs.steps / with,
        100.0 * (with - without) / without);
    std::printf(
        "%-30s measured inside the trainer: publishing took %.2f%% of training time "
        "(worst of %d runs; the A/B figures above are within this machine's noise)\n",
        "", 100.0 * measured, rounds);
  }
  return 0;
}
