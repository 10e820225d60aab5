// The benchmark suite (`attnlab suite`): every mechanism of a manifest trained on every task of
// it, each (task, mechanism) pair at its own learning rate, and a leaderboard of the results.
// Built on sweep.h's machinery (run directories, resumption, child processes). Torch-free header.
// Contract:
//  - load_suite() reads a manifest (assets/configs/suite/suite.json): "tasks" [{"name", "config"
//    (a file beside the manifest), "source", "extrapolate" [lengths], "quick",
//    "quick_extrapolate", "per_mechanism" {mechanism: overrides}}], "mechanisms"
//    [{"name", "position", "set" {key: value}, "quick"}], "seeds", "lr_grid" (multipliers of
//    each task's train.lr), "lr_extend" (0..10, default 0: how many grid steps a choice at the
//    grid's edge may grow it, as reproduce does; quick.lr_extend for the quick slice),
//    "threshold" (eval accuracy for steps_to_threshold and "solved"), "reference" (the mechanism
//    that judges each task's budget; default "dot-rope" when the suite has it, else the first),
//    "gate_on_reference" (bool, default false; quick.gate_on_reference in the quick slice) and
//    "quick" (overrides for every run, and optionally the "tasks" and "mechanisms" of the quick
//    slice).
//    Every pair's config is validated before anything trains; errors name the manifest, the task
//    or mechanism and the key.
//  - A pair's directory is "<task>/<mechanism>" under the out dir, holding grid/ (seed 0 of the
//    pair, once per learning rate) and seeds/ (seeds 1..S-1 at the chosen rate). Pairs are
//    independent: --shard i/n runs the pairs with index % n == i, both phases, so shards never
//    wait on each other.
//  - The rate is chosen on a validation set: fresh sequences drawn from another seed than the
//    reported eval set (length_eval.h's evaluate_validation), highest accuracy, ties (within
//    1e-9) to the lower loss. The reported eval set is never read for the choice. Diverged grid
//    runs are left out; a pair whose every grid run diverged reports no seeds.
//  - Gating (gate_on_reference, the reference among the selected mechanisms, no --shard):
//    run_suite trains every task's reference pair first, grid and seeds, and the other pairs only
//    on the tasks it learned (reference_result). A task it did not learn draws no comparison
//    (leaderboard_stats.h), so training the others there would spend the budget on nothing; their
//    cells read "not_trained". Shards stay independent, so they train every pair ungated.
//  - Finished runs are never retrained; an interrupted one resumes from its checkpoint.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/training/headless/sweep.h"
#include "core/training/headless/tuned_arms.h"

namespace attn {

struct SuiteTask {
  std::string name;       // the leaderboard's row: "mqar-64"
  nlohmann::json config;  // the base config, quick overrides applied
  std::string source;     // where the setting comes from (cited in the leaderboard)
  std::vector<int>
      extrapolate;  // lengths (of length_key) to evaluate every run at, beyond training
  // {mechanism name: overrides} applied after the mechanism's own: settings that depend on the
  // task, such as ky's window covering the whole training sequence.
  nlohmann::json per_mechanism = nlohmann::json::object();
};

struct SuiteMechanism {
  std::string name;                               // the leaderboard's column: "dot-rope"
  std::string position;                           // learned | rope | alibi | none | "slots" (conn)
  nlohmann::json set = nlohmann::json::object();  // its config overrides
};

struct SuitePair {
  int index = 0;
  int task = 0, mechanism = 0;  // into SuitePlan::tasks, ::mechanisms
  std::string dir;              // "<task>/<mechanism>"
  nlohmann::json config;        // the base config with the mechanism's overrides
};

// The share of the reference's seeds that must solve a task for the task to count as learned at
// its budget: 4 of 5, 3 of 3.
constexpr double kLearnedShare = 0.8;

struct SuitePlan {
  std::string title, manifest;
  bool quick = false;
  int seeds = 3;
  std::vector<double> lr_grid = {0.5, 1.0, 2.0};
  int lr_extend = 0;  // TunedArm::extend of every pair
  double threshold = 0.9;
  std::string reference;     // the manifest's "reference" (see above)
  int reference_index = -1;  // into mechanisms; -1 when a --mechanisms filter left it out
  bool gate = false;         // gate_on_reference
  std::vector<SuiteTask> tasks;
  std::vector<SuiteMechanism> mechanisms;
  std::vector<SuitePair> pairs;  // task-major
};

struct SuiteFilter {
  std::vector<std::string> tasks, mechanisms;  // empty: all (of the quick slice with --quick)
  int seeds = 0;                               // 0: the manifest's
};

SuitePlan load_suite(const std::string& manifest_path, bool quick, const SuiteFilter& filter = {});

// The pair as a tuned arm (tuned_arms.h): its dir, config, the plan's grid and seeds.
TunedArm suite_arm(const SuitePlan& plan, const SuitePair& pair);
// The pair's grid (one arm per learning rate, "lr=0.001", at the config's seed) and its other
// seeds at rate `lr`: tuned_arms.h's plans of suite_arm.
SweepPlan suite_grid_plan(const SuitePlan& plan, const SuitePair& pair);
SweepPlan suite_seeds_plan(const SuitePlan& plan, const SuitePair& pair, double lr);
// Reads the pair's finished grid runs and evaluates each on the validation set.
LrChoice choose_learning_rate(const SuitePlan& plan, const SuitePair& pair,
                              const std::string& out_dir);

// The reference's outcome on task `task` (an index into plan.tasks) from its runs under out_dir:
// `finished` when its grid and every seed at the chosen rate have finished; `solved` of `n` (the
// seeds that did not diverge) reached plan.threshold; `learned` when finished and solved >=
// kLearnedShare * n with n > 0. All zero when the plan has no reference pair.
struct ReferenceResult {
  bool finished = false, learned = false;
  int solved = 0, n = 0;
};
ReferenceResult reference_result(const SuitePlan& plan, int task, const std::string& out_dir);

// The suite runs its pairs as tuned arms (one arm a pair): run_tuned_arms' options and counts,
// `arms` counting the selected pairs.
using SuiteRunOptions = TunedRunOptions;
using SuiteOutcome = TunedOutcome;
// Writes suite.json (the plan) and runs the selected pairs' runs, `jobs` at a time
// (run_tuned_arms), gated as above (options.log names each task left untrained). Rethrows the first
// error or interruption after the running runs have stopped.
SuiteOutcome run_suite(const SuitePlan& plan, const SuiteRunOptions& options);

// The leaderboard of whatever has finished under out_dir: {"title", "quick", "seeds",
// "threshold", "lr_grid", "tasks" [{"name", "task", "source", "key", "trained_length",
// "extrapolate"}], "mechanisms" [{"name", "position"}], "cells" [{"task", "mechanism",
// "position", "seeds", "metric" ("eval_accuracy"), "values", "mean", "sd", "ci95" [lo, hi]
// (null with fewer than 2 seeds), "eval_loss", "lr_chosen", "lr_grid" [trials],
// "steps_to_threshold" (mean over the seeds that reached it, or null), "threshold_reached",
// "length_eval" [{"length", "mean", "ci95", "values"} or {"length", "refused"}], "status"
// ("done", "pending", "diverged", or "not_trained" with "why": gated off, nothing trained)}],
// "reference", "gate_on_reference", "damaged" [messages]}. "damaged" names each run whose
// summary.json cannot be read or whose eval_accuracy is not in [0, 1]; such a run is left out of
// its cell (a caller must say so, not publish the board as whole). Evaluates checkpoints for the
// validation choice and the extrapolation lengths (on the CPU).
nlohmann::json suite_leaderboard(const SuitePlan& plan, const std::string& out_dir);

}  // namespace attn
