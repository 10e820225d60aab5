// `attnlab compare`, `attnlab sweep` and `attnlab reproduce`: comparing runs and mechanisms
// headless. Shared helpers for the three live here so that the tables look the same.
#pragma once
#include <CLI/CLI.hpp>
#include <atomic>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/compare/cli_slurm.h"
#include "app/cli/progress.h"
#include "app/common/exit_codes.h"
#include "core/analysis/verdict.h"
#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/headless/sweep.h"
#include "render/plot/figure.h"

namespace attn {

// Exit codes (app/common/exit_codes.h): 0 done; 1 a run failed; 2 usage or input error (a message
// on stderr names the flag, key or file; no file is written); 3 a run diverged; 130/143 a run was
// interrupted.

struct CompareArgs {
  std::vector<std::string> dirs;
  bool json = false;
  bool json_groups = false;  // the seed groups instead of the table
  std::string export_path;
  double width_in = 7.0;
  std::string seed_bands;  // "", "sd" or "ci95"
};
CLI::App* add_command(CLI::App& app, CompareArgs& args);
int run_command(const CompareArgs& args);

struct SweepArgs {
  std::string config;
  std::vector<std::string> set;  // --set key=value on the base config (core/config/config_set.h)
  std::vector<std::string> vary;
  int seeds = 1;
  std::string out;
  int index = -1;
  std::string shard;
  bool list = false;
  int threads = 0;
  long long checkpoint_every = 0;
  int jobs = 1;
  bool quiet = false;
  bool json = false;
  std::vector<double> lr_grid;  // --lr-grid: tuned per group (app/cli/compare/sweep_tuned.cpp)
  int lr_extend = 2;            // --lr-extend
  SlurmArgs slurm;              // --slurm and its options (app/cli/compare/cli_slurm.h)
};
CLI::App* add_command(CLI::App& app, SweepArgs& args);
int run_command(const SweepArgs& args);
// `attnlab sweep --lr-grid`: every group of the plan (its cells less the seed) as a tuned arm
// (core/training/headless/tuned_arms.h), under OUT/<group>/{grid,seeds}; the closing table
// holds each group's chosen rate.
int run_tuned_sweep(const SweepArgs& args, const SweepPlan& plan);

// The pack size (core/training/headless/pack.h) for `cells` runs: --pack as given, never more
// than the cells; --pack 0 is 16 on a GPU (unless --threads > 1). 0 when the runs go one per
// process as without packs (--pack 0 on a CPU; --pack 1 with --threads > 1). Throws attn::Error
// for --threads > 1 with a pack of several runs (each packed run has one torch thread).
int resolve_pack(int requested, int threads, int cells);

// What the commands that train a whole campaign of runs share (reproduce, suite): the output
// directory, the quick slice, seeds per arm or cell (0: the manifest's), runs at a time, torch
// threads per run (0: the configs'), rewriting the report alone, and JSON output.
struct CampaignArgs {
  std::string out;
  bool quick = false, json = false, report_only = false;
  int seeds = 0;
  int jobs = 1, threads = 0;
};
// Registers them (--out required, --seeds 1..100, --jobs 1..64, --threads >= 0), their help in
// the command's words: what it writes (`product`: "report", "leaderboard"), what a seed count
// is per ("arm", "cell"), where the runs go, and what --json adds to the product's JSON.
struct CampaignWords {
  std::string product, unit, runs_under, json_extra;
};
void add_campaign_options(CLI::App* cmd, CampaignArgs& a, const CampaignWords& words);

struct ReproduceArgs : CampaignArgs {
  std::string paper;
  std::string configs;  // the repro configs' directory (default: find_data_path's)
  std::string shard;    // --shard i/n: the arms with index % n == i (a Slurm array task)
  SlurmArgs slurm;      // --slurm and its options (app/cli/compare/cli_slurm.h)
};
CLI::App* add_command(CLI::App& app, ReproduceArgs& args);
int run_command(const ReproduceArgs& args);

// `attnlab suite` (app/cli/compare/cli_suite.cpp, core/training/headless/suite.h).
struct SuiteArgs : CampaignArgs {
  std::string manifest, tasks, mechanisms, shard;
  std::vector<std::string> set;  // --set key=value on every cell, after the manifest's own
  bool reanalyze = false;        // --reanalyze: OUT/leaderboard.json's values, no run read
  std::string tier;              // --tier cpu|reference: the installed manifest ("" = cpu)
  bool yes = false;              // --yes: start a manifest meant for a GPU on a CPU
  SlurmArgs slurm;               // --slurm and its options (app/cli/compare/cli_slurm.h)
};
CLI::App* add_command(CLI::App& app, SuiteArgs& args);
int run_command(const SuiteArgs& args);

// Runs named in a comparison: the directories given, a sweep directory (its sweep.json)
// expanding to every cell directory that exists. `label` is the path relative to the sweep for
// cells, else the directory's name.
struct ComparedRun {
  RunDirectory run;
  std::string label;
};
std::vector<ComparedRun> load_compared_runs(const std::vector<std::string>& dirs);

// The per-run table (text, aligned columns) and its JSON rows (summary.json values unrounded).
std::string compare_table_text(const std::vector<ComparedRun>& runs);
nlohmann::json compare_table_json(const std::vector<ComparedRun>& runs);
// Runs that differ only by seed, grouped (core/runs/directory/seed_groups.h): mean ± sd per group
// and the paired interval of each group against the first; "" when no group has two finished runs.
struct ComparedSeedGroup {
  std::string name;  // the sweep cell's directory, else the first run's label
  std::string mechanism;
  std::vector<std::string> runs;  // the members' labels, in the order given
  std::vector<long long> seeds;
  Stat eval_loss, eval_accuracy;  // over the members' summary.json values
};
struct SeedGroupDifference {
  size_t group;        // index into groups; the difference is group - groups[0]
  const char* metric;  // "eval_loss" | "eval_accuracy"
  Verdict verdict;     // estimate, t-interval, p and its sign-flip check (judge_better)
};
struct SeedGroupComparison {
  std::vector<ComparedSeedGroup> groups;  // empty when no group has two finished runs
  std::vector<SeedGroupDifference> against_first;
};
SeedGroupComparison compare_seed_groups(const std::vector<ComparedRun>& runs);
std::string seed_groups_text(const std::vector<ComparedRun>& runs);
// {"groups": [{group, mechanism, runs, seeds, eval_loss, eval_accuracy}], "differences":
// [{group, against, metric, paired, n, difference, ci95, p_value, p_permutation}]}; both
// arrays empty when no group has two finished runs.
nlohmann::json seed_groups_json(const std::vector<ComparedRun>& runs);
// The per-group mean ± sd table as Markdown (reproduce reports, sweep's closing table), and as
// JSON rows (report.json, --json).
std::string group_table_markdown(const std::vector<GroupSummary>& groups);
nlohmann::json group_table_json(const std::vector<GroupSummary>& groups);

// Trains one sweep cell in a child process (`attnlab train`, this executable), so that its peak
// memory is its own; on Linux the child is killed when this process dies. Its output goes to
// stderr (this process's stdout carries results only). With h.threads 0 and jobs > 1 its
// thread count is chosen by measurement up to threads_per_job(jobs) (`--max-threads`), or is
// the smaller of that and its config's "threads" when the config fixes one. Returns its exit code
// (128 + the signal when one ended it).
int run_cell_in_child(const SweepCell& cell, const HeadlessOptions& h, bool quiet, int jobs);

// Runs sweep cells in children (run_cell_in_child) and keeps what their exit codes say, so that
// when run_sweep stops with an error the sweep's own code tells why: a cell interrupted
// (130/143; no further cell starts), a cell failed (1), else bad input (2: --index, --out,
// sweep.json of another sweep). Safe to call from several job threads.
class CellExits {
 public:
  int run(const SweepCell& cell, const HeadlessOptions& h, bool quiet, int jobs);
  // A run's exit code (`fresh`: it started afresh, not from a checkpoint), as run() keeps it.
  void record(int code, bool fresh);
  int code_for_failure() const;

 private:
  std::atomic<int> interrupted_{0};
  std::atomic<bool> failed_{false};
};

// A pack (core/training/headless/pack.h) trained in a child process, `attnlab pack-run`: add()
// writes each fresh cell's config beside its directory (OUT/<cell>.cell.json, as
// run_cell_in_child does; a file that cannot be written throws there), run() writes the pack's
// spec (OUT/<first cell>.pack.json), runs the child, reads each run's exit code from its result
// (OUT/<first cell>.pack-result.json; every run gets the child's own code when it ended without
// one: killed, crashed), keeps them in `exits` and removes the files it wrote.
class ChildPack final : public PackLauncher {
 public:
  ChildPack(CellExits& exits, bool quiet) : exits_(exits), quiet_(quiet) {}
  void add(const SweepCell& cell, const HeadlessOptions& h) override;
  PackResult run() override;

 private:
  CellExits& exits_;
  bool quiet_;
  nlohmann::json spec_ = {{"runs", nlohmann::json::array()}};
  std::vector<std::string> files_;
};

// `attnlab pack-run --spec FILE --result FILE` (hidden): the child of ChildPack. Trains the runs
// the spec lists through train_pack, each run's directory locked unless its parent (the sweep)
// holds that lock, and writes pack_result_json to --result. Exit 2 for a spec it cannot read,
// 128 + the signal when a stop interrupted a run, else 0 (each run's own code is in the result).
struct PackRunArgs {
  std::string spec, result;
};
CLI::App* add_command(CLI::App& app, PackRunArgs& args);
int run_command(const PackRunArgs& args);

// What every command that trains cells shares (sweep, sweep --lr-grid, suite, reproduce): each
// cell a child process whose exit CellExits keeps, and progress on stderr (quiet: only the
// per-cell lines, not each run's "step" lines).
struct CellConsole {
  CellExits exits;
  ProgressPrinter progress;
  bool quiet = false;
  int jobs = 1;
  CellConsole(bool quiet_, int jobs_) : quiet(quiet_), jobs(jobs_) {}
  // Packs of `pack` cells (resolve_pack's, >= 1), each in a child process (ChildPack).
  template <class RunOptions>
  void use_packs(RunOptions& o, int pack) {
    if (pack < 1) return;
    o.pack = pack;
    o.pack_launcher = [this] { return std::make_unique<ChildPack>(exits, quiet); };
  }
  std::function<int(const SweepCell&, const HeadlessOptions&)> runner() {
    return [this](const SweepCell& c, const HeadlessOptions& h) {
      return exits.run(c, h, quiet, jobs);
    };
  }
  std::function<void(const std::string&)> log() {
    return [this](const std::string& line) {
      if (!quiet || line.find(": step ") == std::string::npos) progress(line);
    };
  }
  // The run options (SweepRunOptions, TunedRunOptions, SuiteRunOptions) of cells written under
  // `out`, `jobs` at a time through this console's runner and log, each with `threads` torch
  // threads (0: the config's) and a checkpoint every `checkpoint_every` steps (0: at the end).
  template <class RunOptions>
  RunOptions run_options(const std::string& out, int threads, int64_t checkpoint_every) {
    RunOptions o;
    o.out_dir = out;
    o.jobs = jobs;
    o.threads = threads;
    o.checkpoint_every = checkpoint_every;
    o.runner = runner();
    o.log = log();
    return o;
  }
};

// Reads --shard i/n into `o`, then runs `run()` (the sweep's cells or its tuned groups), and says
// what stopped it: interrupted (the finished and checkpointed `kept`, "cells" or "runs", are
// kept: 128 + the signal), bad input or a failed cell (console.exits' code), anything else (a
// failed run: kExitRunFailed). Returns that exit code, or nothing when the run went through.
template <class RunOptions, class Run>
std::optional<int> run_sweep_cells(CellConsole& console, const std::string& shard, RunOptions& o,
                                   const std::string& kept, Run run) {
  try {
    if (!shard.empty()) parse_shard(shard, o.shard_index, o.shard_count);
    run();
    console.progress.finish();
    return std::nullopt;
  } catch (const Interrupted& i) {
    console.progress.finish();
    std::cerr << "attnlab sweep: interrupted; finished and checkpointed " << kept
              << " are kept, run the same command again to continue\n";
    return 128 + i.signal;
  } catch (const Error& e) {
    console.progress.finish();
    std::cerr << "attnlab sweep: " << e.what() << "\n";
    return console.exits.code_for_failure();
  } catch (const std::exception& e) {
    console.progress.finish();
    std::cerr << "attnlab sweep: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

// A sweep's outcome (SweepOutcome, TunedOutcome: ran, resumed, skipped, diverged) as the line
// "sweep: 3 run, 1 resumed, 0 already done[, 1 diverged]" and as JSON with `groups` beside.
template <class Outcome>
std::string outcome_line(const Outcome& o) {
  return "sweep: " + std::to_string(o.ran) + " run, " + std::to_string(o.resumed) + " resumed, " +
         std::to_string(o.skipped) + " already done" +
         (o.diverged ? ", " + std::to_string(o.diverged) + " diverged" : "");
}
template <class Outcome>
nlohmann::json outcome_json(const Outcome& o, const std::vector<GroupSummary>& groups) {
  return {{"ran", o.ran},
          {"resumed", o.resumed},
          {"skipped", o.skipped},
          {"diverged", o.diverged},
          {"groups", group_table_json(groups)}};
}

// Writes `figure` as PDF, PNG and (beside them) CSV + JSON under dir/<stem>; returns the files.
std::vector<std::string> export_report_figure(const fig::Figure& figure, const std::string& dir,
                                              const std::string& stem, double width_in);

}  // namespace attn
