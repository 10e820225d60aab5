// The exit codes of attnlab, one table for every subcommand (docs/guide/cli.md, "Exit codes").
// Scripts and Slurm arrays branch on them, so a code means the same thing whichever command returns
// it.
#pragma once

namespace attn {

constexpr int kExitOk = 0;
constexpr int kExitRunFailed = 1;      // the input was fine but the work failed (I/O, a sweep cell,
                                       // a run the window trained and could not record)
constexpr int kExitUsage = 2;          // usage or bad input: a message on stderr names the culprit
constexpr int kExitDiverged = 3;       // training diverged (NaN/Inf loss); the run is still written
constexpr int kExitNoConvergence = 4;  // an iteration did not converge (best estimate printed)
constexpr int kExitInterrupted = 130;  // SIGINT (128 + 2), as the shell reports it
constexpr int kExitTerminated = 143;   // SIGTERM (128 + 15)
constexpr int kExitRequeue = 138;      // SIGUSR1 (128 + 10): a Slurm array task checkpointed for
                                       // its requeue (app/cli/compare/cli_slurm.h)

// The table as --help prints it at the end of every subcommand's help.
constexpr const char* kExitCodesHelp =
    "Exit codes: 0 ok, 1 run failed, 2 usage or bad input, 3 diverged, 4 did not converge, "
    "130/143 interrupted (SIGINT/SIGTERM), 138 checkpointed for a Slurm requeue (SIGUSR1).";

// A child's exit code as this process reports it: interruption passes through unchanged.
inline bool is_interruption(int code) {
  return code == kExitInterrupted || code == kExitTerminated || code == kExitRequeue;
}

}  // namespace attn
