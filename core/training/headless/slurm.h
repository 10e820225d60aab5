// Sweeps on a Slurm cluster: the pure half of `attnlab sweep --slurm` and `attnlab slurm-status`
// (app/cli/compare/cli_slurm.cpp runs sbatch, squeue and scontrol). No torch here.
// Contract:
//  - A sweep of C cells packed P to a task is T = ceil(C / P) array tasks; task t runs the cells
//    whose index % T == t (`attnlab sweep --shard t/T`), so a task id names the same cells in
//    every process and after every requeue.
//  - split_array_tasks(): task ids (any order, duplicates ignored) into sbatch submissions, each
//    an array whose indices (task - offset) stay below the cluster's MaxArraySize; array_spec()
//    writes one as "0-3,5" (+ "%K" when K > 0).
//  - OUT/slurm/jobs.json records every submission ({"command": "sweep" | "suite" | "reproduce",
//    "cells": C, "tasks": T, "pack": P, "arrays": [{"job",
//    "offset", "tasks"}], "reports": [job ids]}); the last array holding a task is its job.
//  - slurm_cell_status() decides each cell's state from its run directory (cell_state) and the
//    task's job state (squeue -t all, else sacct): finished (summary.json complete), running or
//    pending (its task's job is queued or running), failed (the job ended and the cell has a run
//    directory, or the job ended in a failed state), never started (no job, or the job ended
//    before reaching the cell). Failed and never-started cells are what --resubmit-failed
//    submits again (their whole tasks; the finished cells of a task are skipped).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/training/headless/sweep.h"

namespace attn {

struct ArrayChunk {
  int offset = 0;
  std::vector<int> tasks;  // absolute task ids, ascending; each - offset < max_array_size
};
std::vector<ArrayChunk> split_array_tasks(std::vector<int> tasks, int max_array_size);
std::string array_spec(const ArrayChunk& chunk, int max_parallel);

// MaxArraySize from `scontrol show config`; Slurm's default (1001) when the line is absent.
int parse_max_array_size(const std::string& scontrol_config);
// The job id of `sbatch --parsable` ("123" or "123;cluster"); throws attn::Error otherwise.
std::string parse_sbatch_job_id(const std::string& output);
// "JOBID STATE" lines (squeue -h -r -o "%i %T", sacct -n -P -X -o JobID,State with '|'):
// job id ("123_4") -> state ("RUNNING", "FAILED", "CANCELLED by 0" -> "CANCELLED").
std::map<std::string, std::string> parse_job_states(const std::string& text);

// `s` as one word for bash ('...' with embedded quotes escaped).
std::string shell_quote(const std::string& s);

// The batch script of every array task: requeue-safe (--requeue, USR1 `signal_seconds` before
// the time limit to the batch shell, which is attnlab itself through exec), output appended to
// OUT/slurm/task-<job>_<task>.log, run in `workdir`; `command` (attnlab and its arguments) gets
// "--shard <task>/<tasks> --slurm-task" with task = SLURM_ARRAY_TASK_ID + $1 (the offset).
struct SlurmScript {
  std::string job_name, workdir, out_dir;
  std::vector<std::string> command;
  int tasks = 1;
  int signal_seconds = 120;
};
std::string slurm_task_script(const SlurmScript& s);
// The report job: runs `command` once (no array, no requeue), output to OUT/slurm/report.log.
std::string slurm_report_script(const SlurmScript& s);

enum class SlurmCellState { Finished, Running, Pending, Failed, NeverStarted };
const char* to_string(SlurmCellState s);

struct SlurmCellStatus {
  int cell = 0, task = 0;
  std::string dir;
  std::string job;        // "123_4", empty when the task was never submitted
  std::string job_state;  // what squeue/sacct said, empty when neither knows the job
  SlurmCellState state = SlurmCellState::NeverStarted;
};
// The job ("<array job>_<index>") that last ran task t, or "" (jobs.json as above).
std::string slurm_task_job(const nlohmann::json& jobs, int task);
std::vector<SlurmCellStatus> slurm_cell_status(const SweepPlan& plan, const std::string& out_dir,
                                               const nlohmann::json& jobs,
                                               const std::map<std::string, std::string>& states);
// Suite and reproduce, whose cells (pairs, arms) have no single run directory to read: task t
// writes OUT/slurm/done/task-<t>.json (slurm_task_done_path) when it ends without error or
// interruption. Cell c (of jobs.json's "cells") is task c % tasks's: finished when that file is
// there; running or pending while the task's job is; failed when the job started (its log
// OUT/slurm/task-<job>.log exists, named in `dir`) and ended without it; else never started.
std::string slurm_task_done_path(const std::string& out_dir, int task);
std::vector<SlurmCellStatus> slurm_task_status(const std::string& out_dir,
                                               const nlohmann::json& jobs,
                                               const std::map<std::string, std::string>& states);
// The tasks to submit again: those with a failed or never-started cell and none running or
// pending, ascending.
std::vector<int> tasks_to_resubmit(const std::vector<SlurmCellStatus>& cells);

}  // namespace attn
