// Sweeps: a grid of runs that differ in chosen config keys (and seeds), each its own run
// directory in the `attnlab train` layout, resumable and shardable so that a scheduler (a Slurm
// array job, GNU parallel) can fan it out. No torch in this header: the app includes it.
// Contract:
//  - parse_vary("key=v1,v2") splits on the first '=' and on ',' (a value is parsed as JSON
//    when it is valid JSON, else kept as a string, so "model.position=rope,alibi" and
//    "train.lr=1e-3,3e-3" both work). Throws attn::Error naming --vary for empty keys/values.
//  - plan_sweep() expands arms x grid (first axis slowest) x seeds, sets each cell's keys and
//    its seed (base seed + s) in the arm's JSON and validates it with parse_config, so a bad
//    key or value throws an Error that names the --vary assignment and the allowed values.
//  - Cell directories are "<group>/seed-<seed>" under the sweep's out dir, with group the arm
//    name and "key=value" parts joined by ",", characters outside [A-Za-z0-9._=,+-] replaced
//    by '_'. The order and names depend only on the plan, so index I names the same cell in
//    every process.
//  - A cell is done when its summary.json exists; partial when it has a checkpoint but no
//    summary (resumed from the checkpoint); anything else is started afresh.
//  - run_sweep() writes sweep.json (the plan) atomically, refuses an out dir whose sweep.json
//    describes a different plan, and runs the selected cells one after another (with a runner,
//    `jobs` at a time, each in its own process). Finished cells are never touched again.
//  - With `pack` N > 1 (or 1 with a pack_launcher) the selected cells go in packs of N, in order
//  (core/training/headless/
//    pack.h): a pack's cells train together in one process (a PackLauncher's, else this one on
//    threads) and start together, `jobs` packs at a time. Each cell is locked, resumed, retried
//    and counted as alone; a cell that fails or diverges never stops the others of its pack;
//    after a failed cell or a stop no further pack starts (as no further cell starts without
//    packs). Before anything is written the pack's memory is checked: the sum of its runs'
//    estimates (core/models/memory_estimate.h) must fit (attn::Error naming --pack otherwise).
//    Each pack that trained is recorded in OUT/pack.json (pack-<i>-of-<n>.json for a shard i/n):
//    {"pack": N, "packs": [{"cells", "exit_codes", "steps_per_second", "steps_per_second_sum",
//    "wall_seconds"}]}, and said in the log.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/json/json_path.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/headless/headless.h"
#include "core/training/headless/pack.h"

namespace attn {

struct VaryAxis {
  std::string key;                     // dotted config path: "model.attention", "train.lr"
  std::vector<nlohmann::json> values;  // in the order given
};

VaryAxis parse_vary(const std::string& spec);

// set_dotted / get_dotted: core/json/json_path.h.

// A named base config (a sweep from one --config has one arm with an empty name).
struct SweepArm {
  std::string name;
  nlohmann::json config;  // as written in the file (unresolved), overrides applied later
};

struct SweepCell {
  int index = 0;
  std::string arm;
  std::string group;  // arm and assignment: "model.position=rope"; "base" when both are empty
  std::string dir;    // relative to the sweep's out dir: "<group>/seed-<seed>"
  uint64_t seed = 0;
  nlohmann::json assignment = nlohmann::json::object();  // {"model.position": "rope"}
  ExperimentConfig config;                               // validated, seed set
};

struct SweepPlan {
  std::vector<SweepArm> arms;
  std::vector<VaryAxis> axes;
  int seeds = 1;
  std::vector<SweepCell> cells;
  std::vector<std::string> groups;  // distinct groups, in cell order
};

SweepPlan plan_sweep(const std::vector<SweepArm>& arms, const std::vector<VaryAxis>& axes,
                     int seeds);
// The manifest written to sweep.json: arms, axes, seeds and per cell index, group, dir, seed,
// assignment and config hash.
nlohmann::json sweep_manifest(const SweepPlan& plan);
std::string sanitize_run_name(const std::string& s);
// "model.position=rope" for a scalar string, "train.lr=0.001" for a number (JSON dump otherwise).
std::string assignment_text(const std::string& key, const nlohmann::json& value);

enum class CellState { Pending, Partial, Done };
CellState cell_state(const std::string& out_dir, const SweepCell& cell);
const char* to_string(CellState s);

// Parses "i/n" (0 <= i < n) for --shard; throws attn::Error naming --shard.
void parse_shard(const std::string& spec, int& index, int& count);

class PackLauncher;  // below

struct SweepRunOptions {
  std::string out_dir;                   // required
  std::optional<int> index;              // run only this cell (--index)
  int shard_index = 0, shard_count = 1;  // run cells with index % count == shard_index
  int threads = 0;                       // torch threads per run; 0: the config's (or all cores)
  int jobs = 1;  // cells at a time (> 1 only with a runner: each cell its own process)
  int64_t checkpoint_every = 0;  // also checkpoint every N steps, so a killed run resumes
  std::function<void(const std::string&)> log;  // progress lines; null = silent
  // Trains one cell into h.out_dir (h.resume_dir set: continue its checkpoint). Returns 0 when
  // it finished, 3 when it diverged, anything else when it failed. Null: train_headless in this
  // process. The CLI runs each cell in a child process instead, so that every run's peak
  // memory (summary.json peak_rss_mib) is its own.
  std::function<int(const SweepCell&, const HeadlessOptions& h)> runner;
  // Cells one process trains together (1 without a pack_launcher: one at a time through
  // `runner`, as without packs). See the contract.
  int pack = 1;
  // Makes the launcher of one pack; null: train_pack in this process.
  std::function<std::unique_ptr<PackLauncher>()> pack_launcher;
};

// One pack on its way: add() each cell (it may write the cell's files now, and throw: the
// cells after it are then never touched, so they stay "never started"), then run() trains them
// together and returns each one's exit code (as train_headless's CLI would exit) in order.
class PackLauncher {
 public:
  virtual ~PackLauncher() = default;
  virtual void add(const SweepCell& cell, const HeadlessOptions& h) = 0;
  virtual PackResult run() = 0;
};

struct SweepOutcome {
  int ran = 0, resumed = 0, skipped = 0, diverged = 0;
};

SweepOutcome run_sweep(const SweepPlan& plan, const SweepRunOptions& options);

// The packs one process trained, kept in its pack file (`path`: OUT/pack.json, or
// pack-<i>-of-<n>.json for a shard i/n of options' out_dir), rewritten after each pack.
struct PackBook {
  explicit PackBook(const SweepRunOptions& o);
  std::string path;
  int pack = 1;
  std::function<std::unique_ptr<PackLauncher>()> launcher;
  std::mutex mu;
  nlohmann::json packs = nlohmann::json::array();
  std::unique_ptr<PackLauncher> make() const;  // launcher's, else train_pack in this process
};
// One cell for run_sweep_packed: its sweep's plan and directory (opened already:
// open_sweep_dir), its index there, and that sweep's progress lines (null: silent).
struct PackedSweepCell {
  const SweepPlan* plan = nullptr;
  std::string out_dir;
  int index = 0;
  std::function<void(const std::string&)> log;
};
// Trains cells of one or several sweeps as one pack, each locked, resumed, retried and counted
// as run_sweep does with packs (o's threads and checkpoint_every), recorded in `book`. Returns
// the cells' outcome; throws as run_sweep (after the whole pack ended).
SweepOutcome run_sweep_packed(const std::vector<PackedSweepCell>& cells, const SweepRunOptions& o,
                              PackBook& book);
// The first part of run_sweep: writes out_dir/sweep.json when absent, or refuses (attn::Error)
// when the one there describes another plan. A plan that keeps every cell of the one there
// (same directory, seed and config) and adds cells (more seeds) grows it: sweep.json is
// rewritten, the finished runs count.
void open_sweep_dir(const SweepPlan& plan, const std::string& out_dir);

// Mean and sample standard deviation (n - 1; 0 when n < 2) of the finite values.
struct Stat {
  double mean = 0, sd = 0;
  int n = 0;
};
Stat mean_sd(const std::vector<double>& values);

// The seeds of one group, aggregated from their summary.json.
struct GroupSummary {
  std::string group, mechanism, task;
  int runs = 0, finished = 0;
  int diverged = 0;  // finished by diverging: counted here, left out of the statistics
  Stat eval_loss, eval_accuracy, steps_per_second, peak_rss_mib, parameters, attention_parameters;
};
// Groups the finished runs in order of first appearance; `group_of[i]` names runs[i]'s group.
std::vector<GroupSummary> aggregate_runs(const std::vector<RunDirectory>& runs,
                                         const std::vector<std::string>& group_of);
// Reads every cell directory of the plan that exists and aggregates per group (all groups of
// the plan appear, with finished = 0 when none has finished).
std::vector<GroupSummary> aggregate_sweep(const SweepPlan& plan, const std::string& out_dir,
                                          std::vector<RunDirectory>* runs_out = nullptr);
// "0.873 ± 0.004" (sd omitted when n < 2; "-" when n == 0).
std::string format_stat(const Stat& s, int precision);
nlohmann::json stat_json(const Stat& s);

}  // namespace attn
