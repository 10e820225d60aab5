// Packs: several runs trained together in one process (`attnlab sweep|suite|reproduce --pack N`).
// No torch in this header: the app includes it.
// Contract:
//  - train_pack() trains each run on a thread of its own with one torch intra-op thread
//    (HeadlessOptions::threads is forced to 1), through train_headless, so each keeps its run
//    directory, recording, checkpoints, divergence recovery and exit code. Runs draw dropout and
//    initial weights from private streams (core/random/run_random.h), so a packed run's
//    metrics.csv equals, bit for bit, the same run trained alone with one thread (--threads 1),
//    its timing column (steps_per_s) aside.
//  - The runs start together: each waits (HeadlessOptions::on_start) until every run of the pack
//    has started or ended, so their steps/s cover one wall-clock window; `wall_seconds` is that
//    window, from the common start to the last run's end.
//  - A run that throws (bad input, a failed write, LibTorch) or diverges never stops the others:
//    its exit code is recorded (0 finished, 3 diverged, 2 refused before its first step, 1 failed
//    after it, 128 + the signal when a stop signal interrupted it, after its checkpoint) and its
//    error is logged through its own options.log.
//  - On a GPU build with a GPU, each run's thread takes its own CUDA stream from the pool, so the
//    runs' steps (graphed or eager) overlap on the device.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/training/headless/headless.h"

namespace attn {

struct PackRun {
  ExperimentConfig config;  // ignored when options.resume_dir is set (the checkpoint's wins)
  HeadlessOptions options;
  std::string refused;  // non-empty: not trained (its config could not be read), exit code 2
};

struct PackRunResult {
  int exit_code = 0;
  double steps_per_second = 0;  // summary.json's, 0 when the run ended without one
};

struct PackResult {
  std::vector<PackRunResult> runs;  // one per PackRun, in order
  double wall_seconds = 0;          // the common start to the last run's end
};

PackResult train_pack(const std::vector<PackRun>& runs);

// Whether this build computes on CUDA and a GPU is visible (the automatic pack size).
bool pack_gpu_present();

// `--pack` as given (0: automatic) for `cells` runs: 0 on a GPU is min(16, cells), on a CPU 1.
// A pack is never larger than the runs it holds (at least 1).
int choose_pack_size(int requested, int cells, bool gpu);

// A pack's outcome as JSON: {"wall_seconds", "runs": [{"exit_code", "steps_per_second"}]}, and
// back (throws attn::Error naming `what` when the document is not one of N runs).
nlohmann::json pack_result_json(const PackResult& r);
PackResult pack_result_from_json(const nlohmann::json& j, size_t runs, const std::string& what);

}  // namespace attn
