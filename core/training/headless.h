// Headless training: the `attnlab train` command as a library call (used by the CLI and tests).
// Writes into out_dir: config.json (fully resolved), metrics.csv, summary.json, checkpoint/
// (and for a Connection Transformer conn.json and C.csv).
// Throws attn::Error on bad input; never leaves a half-written checkpoint in place of a good one.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/config/config.h"
#include "core/runs/run_writer.h"  // RunSummary, and the format written

namespace attn {

struct HeadlessOptions {
  std::string out_dir;           // required
  std::optional<int64_t> steps;  // overrides train.steps
  std::optional<uint64_t> seed;  // overrides seed
  std::optional<int64_t> until;  // stop (and checkpoint) at this step; the schedule still
                                 // spans train.steps, so --resume continues seamlessly
  std::string resume_dir;        // continue the run saved there (its config wins)
  int threads = 0;               // 0 = all cores
  int64_t checkpoint_every = 0;  // > 0: also checkpoint every N steps (a killed run then
                                 // resumes from the last one; sweeps use it)
  std::function<void(const std::string&)> log;  // progress lines; null = silent
};

RunSummary train_headless(ExperimentConfig config, const HeadlessOptions& options);

}  // namespace attn
