#include "core/training/headless/step_benchmark.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "core/attention/fused_attention.h"
#include "core/base/error.h"
#include "core/base/memory.h"
#include "core/training/session/session.h"

namespace attn {
namespace {

// A "VmRSS:" or "VmHWM:" line of /proc/self/status, in MiB; NaN when absent.
double status_mib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) / 1024.0;  // kB
  return std::numeric_limits<double>::quiet_NaN();
}

bool reset_peak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  return static_cast<bool>(out.flush());
}

}  // namespace

StepBenchmark benchmark_training_steps(ExperimentConfig config, int warmup, int steps, bool fused) {
  if (steps < 1) throw Error("bench-step: --steps must be at least 1");
  if (warmup < 0) throw Error("bench-step: --warmup must be at least 0");
  config.device = "cpu";
  config.threads = 1;
  config.train.steps = std::max<int64_t>(config.train.steps, warmup + steps);
  torch::set_num_threads(1);
  set_fused_kernels_enabled(fused);
  TrainingSession session(config);
  StepBenchmark b;
  b.steps = steps;
  b.warmup = warmup;
  b.fused_enabled = fused;
  b.allocator = allocator_setting();
  b.floor_mib = status_mib("VmRSS:");
  const bool peak_reset = reset_peak();
  for (int i = 0; i < warmup; ++i) session.train_step();
  reset_fused_path_taken();
  double total = 0, best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    session.train_step();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    total += s;
    best = std::min(best, s);
  }
  b.fused_path = fused_path_taken();
  b.mean_seconds = total / steps;
  b.best_seconds = best;
  b.peak_mib = peak_reset ? status_mib("VmHWM:") : std::numeric_limits<double>::quiet_NaN();
  b.increment_mib = b.peak_mib - b.floor_mib;
  return b;
}

std::string training_gpu_name() {
  return cuda_device_name();
}

}  // namespace attn
