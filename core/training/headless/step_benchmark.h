// One arm's training step timed and measured alone, for speed and memory claims
// (`attnlab bench-step`, which `attnlab reproduce` runs once per arm and round, each in a fresh
// process). Torch-free header.
// Contract:
//  - Builds the training session (task, model, optimiser) on the CPU with one torch thread,
//    then records the floor (resident memory before the first step, Linux: VmRSS), resets the
//    process's peak (writing 5 to /proc/self/clear_refs), runs `warmup` steps, times `steps`
//    more (wall clock, the best of them and their mean), and reads the peak (VmHWM). The
//    increment, peak - floor, is what training adds over the process, its libraries, the
//    dataset and the parameters: gradients, optimiser state, activations, allocator caches.
//  - fused false turns attnlab's fused CPU kernels off (attention/fused_attention.h), so every
//    mechanism runs LibTorch ops; `fused_path` says whether a fused kernel ran at all during
//    the timed steps (dot with a learned or no position, neural with ReLU, gaussian).
//  - Where the peak cannot be reset or read (not Linux), memory figures are NaN.
//  - The increment depends on the allocator setting (`allocator`): under attnlab's kept heap it
//    follows how the heap fragments (it moved by a third between builds); with
//    MALLOC_MMAP_THRESHOLD_=131072 every block of 128 KiB or more is its own mapping, returned
//    when freed, so the peak follows the live tensors (builds agree to 0.1 MiB), at slower steps.
#pragma once
#include <string>

#include "core/config/config.h"

namespace attn {

struct StepBenchmark {
  int steps = 0, warmup = 0;
  double mean_seconds = 0;  // per step, over the timed steps
  double best_seconds = 0;  // the fastest timed step
  double floor_mib = 0, peak_mib = 0, increment_mib = 0;
  bool fused_enabled = true, fused_path = false;
  std::string allocator;  // core/base/memory.h's allocator_setting(): figures compare within one
};

StepBenchmark benchmark_training_steps(ExperimentConfig config, int warmup, int steps, bool fused);

// The GPU that device "auto" trains on: its name, "" in a build without CUDA or without a GPU
// (`attnlab suite --tier reference` refuses to start on such a machine unless asked).
std::string training_gpu_name();

}  // namespace attn
