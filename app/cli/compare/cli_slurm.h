// `attnlab sweep|suite|reproduce --slurm`, the array task's requeue on SIGUSR1, and
// `attnlab slurm-status`
// (core/training/headless/slurm.h holds the pure half: arrays, scripts, cell states).
// Contract:
//  - submit_sweep_to_slurm() writes OUT/sweep.json, OUT/slurm/task.sbatch and report.sbatch,
//    submits one array (`sbatch --parsable --array=0-M%K`; several when M reaches the cluster's
//    MaxArraySize, `scontrol show config`) whose task t runs `attnlab sweep <the same arguments>
//    --shard t/T --slurm-task`, then a report job (--dependency=afterany on the arrays) that runs
//    `attnlab slurm-status --out OUT --report`. Every submission is recorded in
//    OUT/slurm/jobs.json. With --resubmit-failed (on the command, or slurm-status's) it submits
//    only the tasks whose cells failed or never started (slurm-status), and a new report job
//    after them. A suite and a reproduction work the same way; their cells (pairs, arms) are
//    judged by the done mark each task writes (slurm_task_done; core's slurm_task_status).
//  - Refused with exit 2 before anything is written: --slurm with --index, --shard, --list or
//    --lr-grid; no sbatch on PATH; a sweep submitted already (jobs.json exists) without
//    --resubmit-failed; --resubmit-failed without jobs.json.
//  - In a task (--slurm-task), SIGUSR1 is a stop signal (core/base/interrupt.h: the running
//    cell checkpoints, and its log and summary name SIGUSR1), then slurm_task_exit() requeues the
//    task (`scontrol requeue <job>_<task>`) and exits 138 (kExitRequeue); the requeued task skips
//    its finished cells and resumes the interrupted one from its checkpoint.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/training/headless/sweep.h"

namespace attn {

// --pack's largest value.
inline constexpr int kMaxPack = 4096;

struct SlurmArgs {
  bool submit = false;            // --slurm
  std::vector<std::string> args;  // --slurm-arg, passed to every sbatch
  int pack = 0;                   // --pack: a pack's runs (0: automatic); an array task's cells
  int max_parallel = 0;           // %K of --array; 0: no limit
  bool resubmit_failed = false;   // --resubmit-failed
  bool task = false;              // --slurm-task: this process is an array task
  bool report = false;            // --slurm-report: this process is reproduce's report job
  bool any() const { return submit || resubmit_failed; }
};
// `what`: "sweep", "suite" or "reproduce" (which also gets the hidden --slurm-report).
void add_slurm_options(CLI::App* cmd, SlurmArgs& a, const std::string& what = "sweep");

// `conflicts`: the options given that --slurm cannot take (e.g. "--index"), empty when none.
int submit_sweep_to_slurm(const SlurmArgs& a, const SweepPlan& plan, const std::string& out,
                          const std::string& conflicts);

// `attnlab suite --slurm`: the same arrays over the suite's `pairs` (task t runs `attnlab suite
// <the same arguments> --shard t/T --slurm-task`, which trains its pairs and writes no
// leaderboard), then a report job running `attnlab suite <the same arguments> --report-only`,
// which writes OUT/leaderboard.{md,json}.
int submit_suite_to_slurm(const SlurmArgs& a, size_t pairs, const std::string& out,
                          const std::string& conflicts);
// `attnlab reproduce --slurm`: the same arrays over the reproduction's `arms` (task t runs
// `attnlab reproduce <the same arguments> --shard t/T --slurm-task`: its arms' grids and seeds),
// then a report job running `attnlab reproduce <the same arguments> --slurm-report`, which
// trains nothing, runs the benchmark when OUT/benchmark.json is absent, and writes the report.
int submit_reproduce_to_slurm(const SlurmArgs& a, size_t arms, const std::string& out,
                              const std::string& conflicts);
// A suite's or reproduction's array task whose shard ("t/T") ended without error: marks task t
// done (OUT/slurm/done/task-<t>.json) for slurm-status. Throws attn::Error when it cannot.
void slurm_task_done(const std::string& out, const std::string& shard);

// In an array task: SIGUSR1 asks for a stop (core/base/interrupt.h's stop_signal() says SIGUSR1).
void install_requeue_signal();
// The task's exit code from the sweep's: after a SIGUSR1 stop, requeues the task and returns
// kExitRequeue (138); otherwise `code`.
int slurm_task_exit(int code);

struct SlurmStatusArgs {
  std::string out;
  bool json = false;
  bool report = false;
  SlurmArgs slurm;  // --resubmit-failed with its --slurm-arg and --max-parallel
};
CLI::App* add_command(CLI::App& app, SlurmStatusArgs& args);
int run_command(const SlurmStatusArgs& args);

}  // namespace attn
