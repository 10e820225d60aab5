// Arms trained at their own learning rate, for `attnlab reproduce` and `attnlab suite`: each
// arm's first seed (its config's seed) trains once per rate of a grid, the rate is chosen on a
// validation set, and the arm's other seeds train at that rate. Built on sweep.h's machinery
// (run directories, resumption, child processes). Torch-free header.
// Contract:
//  - An arm's directory holds grid/ (one cell per rate, "lr=<rate>/seed-<seed>") and seeds/
//    (seeds config seed + 1 .. + seeds - 1 at the chosen rate). The chosen grid run is the
//    arm's first seed: no run is trained twice.
//  - The rate is chosen on the validation set (length_eval.h's evaluate_validation: held-out
//    data that is neither trained on nor the reported eval set), on the arm's criterion: highest
//    accuracy, ties (within 1e-9) to the lower loss; or (LrCriterion::loss, an arm judged on its
//    loss) lowest loss, ties to the higher accuracy. A grid of one rate is chosen without
//    evaluating anything (so a task without a validation set can still run untuned). Diverged grid
//    runs are left out; an arm whose every grid run diverged trains no further seeds. The figures
//    are kept in the grid run's validation.json (with its config hash and step), so a report does
//    not evaluate again.
//  - With `extend` > 0 a choice at the grid's edge grows the grid: the next rate a grid step
//    (the ratio of the two outermost multipliers) beyond the edge trains in grid-ext<k>/, and the
//    choice is made again over every trial, until it lies inside or `extend` steps are used.
//  - run_tuned_arms() runs cells, not arms, `jobs` at a time: every arm's grid first, then an
//    arm's seeds as soon as its grid is done, so no core idles while work remains. --shard i/n
//    takes the arms with index % n == i, both phases, so shards never wait on each other.
//  - Finished runs are never retrained; an interrupted one resumes from its checkpoint.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/training/headless/sweep.h"

namespace attn {

// What a grid's rate is chosen on: the metric the arm is judged on (reproduce: a claim on
// eval_loss judges the arms it names on their loss).
enum class LrCriterion { accuracy, loss };
const char* criterion_name(LrCriterion c);  // "accuracy", "loss"

struct TunedArm {
  std::string name;
  std::string dir;                      // relative to the out dir
  nlohmann::json config;                // the arm's config (overrides applied)
  std::vector<double> lr_grid = {1.0};  // multipliers of config's train.lr
  int seeds = 3;
  // When the chosen rate is the grid's highest (lowest), train one more rate a grid step above
  // (below) it, up to this many times, so that the choice is not cut off by the grid.
  int extend = 0;
  LrCriterion criterion = LrCriterion::accuracy;
};

// A manifest's "lr_extend" (reproduce's repro.json, the suite's suite.json): `manifest`, then
// `quick` (null when not in quick mode), the later one winning; `fallback` when neither has it.
// Throws attn::Error naming `file` and the key ("quick.lr_extend") unless it is 0..10.
int read_lr_extend(const nlohmann::json& manifest, const nlohmann::json* quick,
                   const std::string& file, int fallback);

// The grid: one sweep arm per rate ("lr=0.001"), at the config's seed. Rates are rounded to
// three significant digits, as their directory names show them.
SweepPlan tuned_grid_plan(const TunedArm& arm);
// One more rate at the config's seed: extension k of the grid.
SweepPlan tuned_extension_plan(const TunedArm& arm, double lr);
// The other seeds (config seed + 1 .. + seeds - 1) at rate `lr`; no cells when seeds is 1.
SweepPlan tuned_seeds_plan(const TunedArm& arm, double lr);

struct LrTrial {
  double lr = 0;
  std::string run;  // directory, relative to the out dir
  bool finished = false, diverged = false;
  bool validated = false;  // validation figures computed (grids of more than one rate)
  double validation_loss = 0, validation_accuracy = 0;
};
struct LrChoice {
  std::vector<LrTrial> trials;  // in grid order, then the extensions in the order trained
  int chosen = -1;              // into trials; -1: none finished without diverging
  double next_rate = 0;         // an extension still to train (0: none)
  int next_extension = 0;       // its number k (grid-ext<k>)
  bool at_edge = false;         // chosen is the lowest or highest rate tried
};
// Reads the arm's finished grid runs and (for a grid of more than one rate) evaluates each on
// the validation set. Throws attn::Error when the task has no validation set.
LrChoice choose_tuned_rate(const TunedArm& arm, const std::string& out_dir);
// choose_tuned_rate's rule on trials from anywhere (a test's fake grid): the best of `grid`
// (trials in grid order; validated when `validate`), then, while every trial is finished and
// the best is the lowest or highest rate tried (a diverged rate counts as tried: it bounds the
// choice), `extension(next, k)` for k = 1..extend, `next` a grid step (the ratio of `lr_grid`'s
// two outermost multipliers on that side) beyond the edge. An unfinished extension stops the
// loop as next_rate/next_extension. at_edge: the choice still at the edge (the cap was hit).
LrChoice extend_lr_choice(std::vector<LrTrial> grid, const std::vector<double>& lr_grid, int extend,
                          bool validate,
                          const std::function<LrTrial(double lr, int extension)>& extension,
                          LrCriterion criterion = LrCriterion::accuracy);

// What has finished of an arm: the choice, and the runs at the chosen rate in seed order (the
// grid's run first), relative to the out dir.
struct TunedRuns {
  LrChoice choice;
  std::vector<std::string> runs;
  std::vector<std::string> unfinished;  // the chosen rate's seed runs not done (relative dirs)
  bool grid_done = false, all_done = false;
};
TunedRuns tuned_runs(const TunedArm& arm, const std::string& out_dir);
// The trials as JSON: [{"lr", "run", "finished", "diverged", "validation_loss",
// "validation_accuracy" (when validated)}].
nlohmann::json lr_trials_json(const LrChoice& choice);

struct TunedRunOptions {
  std::string out_dir;
  int shard_index = 0, shard_count = 1;
  int jobs = 1;  // runs at a time (> 1 only with a runner: each run its own process)
  int threads = 0;
  int64_t checkpoint_every = 0;
  // Progress lines, called from several threads, serialised here; prefixed with the arm's dir.
  std::function<void(const std::string&)> log;
  // Trains one run (sweep.h's runner); null: in this process, one run at a time.
  std::function<int(const SweepCell&, const HeadlessOptions&)> runner;
  // > 1 (or 1 with a pack_launcher): the queued runs go in packs of up to `pack`
  // (core/training/headless/sweep.h's run_sweep_packed), `jobs` packs at a time, recorded in
  // OUT/pack.json; pack_launcher as SweepRunOptions's (null: in this process, on threads).
  int pack = 1;
  std::function<std::unique_ptr<PackLauncher>()> pack_launcher;
};
struct TunedOutcome {
  int arms = 0, ran = 0, resumed = 0, skipped = 0, diverged = 0;
};
// Rethrows the first error or interruption of any run after the running ones have stopped.
TunedOutcome run_tuned_arms(const std::vector<TunedArm>& arms, const TunedRunOptions& options);

// "0.001", "0.0025": a rate as the grid names it.
std::string lr_text(double lr);

}  // namespace attn
