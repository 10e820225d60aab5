// `attnlab bench-step`: one config's training step timed and measured alone
// (core/training/headless/step_benchmark.h), one JSON object on stdout. `attnlab reproduce`
// runs it in a fresh process per arm and round for its speed and memory claims.
#include <iostream>

#include "app/cli/cli.h"
#include "core/base/error.h"
#include "core/config/config_set.h"
#include "core/training/headless/step_benchmark.h"

namespace attn {
using nlohmann::json;

// The printed object: each field under its own name (json's keys are sorted).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StepBenchmark, steps, warmup, mean_seconds, best_seconds,
                                   floor_mib, peak_mib, increment_mib, fused_enabled, fused_path,
                                   allocator)

CLI::App* add_command(CLI::App& app, BenchStepArgs& a) {
  auto* cmd = app.add_subcommand(
      "bench-step",
      "Time one config's training step alone (1 thread, CPU) and measure its memory increment");
  cmd->add_option("--config", a.config, "Experiment config (JSON)")->required();
  cmd->add_option("--set", a.set, kConfigSetHelp);
  cmd->add_option("--warmup", a.warmup, "Steps before timing (default 3)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--steps", a.steps, "Timed steps (default 20)")->check(CLI::Range(1, 100000));
  cmd->add_flag("--unfused", a.unfused,
                "Turn attnlab's fused CPU kernels off: every mechanism runs LibTorch ops");
  return with_footer(
      cmd,
      "Prints {\"mean_seconds\", \"best_seconds\", \"floor_mib\", \"peak_mib\", "
      "\"increment_mib\", \"fused_path\", \"allocator\", ...}: the increment is the peak "
      "resident memory over the floor measured before the first step (Linux). attnlab keeps "
      "freed blocks under 32 MiB in glibc's heap for speed (\"allocator\": \"kept heap\"), so "
      "the increment follows how that heap fragments and can differ by a third between builds; "
      "for a figure that follows the live tensors, run with MALLOC_MMAP_THRESHOLD_=131072 "
      "(steps then run slower: time them without it). `attnlab reproduce` times each arm one "
      "way and measures its memory the other, in two processes.");
}

int run_command(const BenchStepArgs& a) {
  try {
    const StepBenchmark b = benchmark_training_steps(load_config_with_sets(a.config, a.set),
                                                     a.warmup, a.steps, !a.unfused);
    std::cout << json(b).dump() << "\n";
    return kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "attnlab bench-step: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace attn
