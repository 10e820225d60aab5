// `attnlab suite`: every mechanism of a tier's manifest (--tier cpu: assets/configs/suite/,
// --tier reference: assets/configs/suite_reference/, meant for a GPU) trained on every standard
// synthetic task (core/training/headless/suite.h), then a leaderboard under --out:
// leaderboard.md, leaderboard.json and its figures (PDF, PNG, CSV, JSON). A board records its
// manifest's SHA-256; --reanalyze marks a board made under another manifest "stale".
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "app/cli/cli.h"
#include "app/cli/compare/cli_compare.h"
#include "app/cli/compare/leaderboard_stats.h"
#include "app/cli/progress.h"
#include "app/cli/repro/repro_provenance.h"
#include "app/figures/runs/leaderboard_figures.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/interrupt.h"
#include "core/base/version.h"
#include "core/config/config_set.h"
#include "core/json/json_member.h"
#include "core/training/headless/step_benchmark.h"
#include "core/training/headless/suite.h"
#include "render/plot/export/figure_export.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSuiteFooter =
    R"(Trains every mechanism of the suite manifest on every task, each (task, mechanism) pair at its
own learning rate: seed 0 at each rate of the grid (the manifest's multipliers of the task's
train.lr), the rate with the best accuracy on a validation set of fresh sequences from another
seed (never the reported eval set), then the remaining seeds at that rate. Writes OUT/
leaderboard.md, leaderboard.json and figures; runs live under OUT/<task>/<mechanism>/. Finished
runs are skipped and interrupted ones resume, so rerunning the same command continues. --shard
i/n runs every n-th pair (a Slurm array: one shard per task id; run once more without --shard,
or with --report-only, to write the whole leaderboard). --quick runs the manifest's quick slice
(seconds per run) for tests. --tier cpu (the default) is the manifest sized for a 2-core machine;
--tier reference the references' settings (configs/suite_reference/suite.json), meant for a GPU:
on a machine without one it prints its estimated time and starts only with --yes.)";

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

const json* find_cell(const json& board, const std::string& task, const std::string& mech) {
  for (const auto& c : board["cells"])
    if (c["task"] == task && c["mechanism"] == mech) return &c;
  return nullptr;
}

// "2/3 · 52.5": the seeds that solved (eval accuracy at least the threshold) of those finished,
// and the mean accuracy in points (all-or-nothing outcomes: no t-interval; leaderboard_stats.h).
std::string cell_text(const json& c) {
  if (c.value("status", "") == "diverged") return "diverged";
  if (c.value("status", "") == "not_trained") return "not trained";
  if (!json_member(c, "mean", json()).is_number()) return "pending";
  std::string s = std::to_string(c.value("solved", 0)) + "/" + std::to_string(c.value("n", 0)) +
                  " · " + fixed_number(100 * c["mean"].get<double>(), 1);
  if (c.value("status", "") == "pending") s += " (pending)";
  return s;
}

// The leaderboard's title, provenance and how it was made.
void intro_section(std::ostringstream& md, const json& board, const std::string& command,
                   const std::string& when, double wall_minutes) {
  md << "# " << board["title"].get<std::string>() << "\n\n";
  md << "`" << command << "`: " << when << ", " << version_string() << ", "
     << std::thread::hardware_concurrency() << " cores, " << fixed_number(wall_minutes, 1)
     << " min for this invocation.\n\n";
  if (board.contains("run_commits")) {
    md << "Provenance: binary sha256 `"
       << (board["binary_sha256"].is_string() ? board["binary_sha256"].get<std::string>() : "-")
              .substr(0, 16)
       << "`, commit `" << board.value("commit", "-").substr(0, 12)
       << "`; the runs' commits (runs):";
    for (const auto& [commit, n] : board["run_commits"].items())
      md << " `" << commit.substr(0, 12) << "` (" << n.get<int>() << ")";
    md << ".\n\n";
  }
  if (board.contains("stale"))
    md << "> **Stale**: this board was " << board["stale"].get<std::string>() << ".\n\n";
  if (board["quick"].get<bool>())
    md << "> **Quick mode**: tiny runs that check the pipeline; the numbers say nothing about "
          "the mechanisms.\n\n";
  md << "Each cell: the seeds that solved the task (eval accuracy at least "
     << fixed_number(100 * board["threshold"].get<double>(), 0) << "% at the training length) of "
     << board["seeds"].get<int>()
     << ", then the mean eval accuracy (%). The outcomes are all or nothing, so leaderboard.json "
        "gives each cell's exact (Clopper-Pearson) interval of its solve rate, and mechanisms are "
        "compared by Fisher's exact test against the reference, Holm-adjusted over the board. A "
        "task whose reference ("
     << json_member(board, "reference", json("dot-rope")).get<std::string>()
     << ") solves fewer than 80% of its seeds is \"not learned at this budget\": no comparison "
        "is drawn there";
  if (json_member(board, "gate_on_reference", json(false)).get<bool>())
    md << ", and the other mechanisms are not trained on it (the reference trains first)";
  md << ". Each mechanism trains at its own learning "
        "rate, chosen from the grid ×";
  for (size_t i = 0; i < board["lr_grid"].size(); ++i)
    md << (i ? ", ×" : "") << board["lr_grid"][i].get<double>();
  md << " of the task's rate on a validation set (fresh sequences from another seed) with the "
        "first seed; the other seeds then train at that rate.";
  if (const int extend = json_member(board, "lr_extend", json(0)).get<int>(); extend > 0)
    md << " A best rate at the grid's edge grows the grid a grid step at a time, up to " << extend
       << (extend == 1 ? " time" : " times") << ".";
  md << " A chosen rate marked \"edge\" is still the lowest or highest tried.\n\n";
}

// A table's header: its `leading` columns' cells (e.g. "| task |"), then one column per
// mechanism.
void mechanism_columns(std::ostringstream& md, const json& board, const std::string& cells,
                       size_t leading) {
  md << cells;
  for (const auto& m : board["mechanisms"]) md << " " << m["name"].get<std::string>() << " |";
  md << "\n|";
  for (size_t i = 0; i < leading + board["mechanisms"].size(); ++i) md << "---|";
  md << "\n";
}

// Task by mechanism: each cell's accuracy at the training length.
void leaderboard_section(std::ostringstream& md, const json& board) {
  mechanism_columns(md, board, "| task |", 1);
  for (const auto& t : board["tasks"]) {
    md << "| " << t["name"].get<std::string>();
    if (!json_member(t, "learned_at_budget", json(true)).get<bool>())
      md << " (not learned at this budget: " << t["reference"].get<std::string>() << " solved "
         << t["reference_solved"][0].get<int>() << "/" << t["reference_solved"][1].get<int>()
         << ")";
    md << " |";
    for (const auto& m : board["mechanisms"]) {
      const json* c = find_cell(board, t["name"], m["name"]);
      md << " " << (c ? cell_text(*c) : "-") << " |";
    }
    md << "\n";
  }
  md << "\n![leaderboard](accuracy.png)\n\n([PDF](accuracy.pdf), [data CSV](accuracy.csv))"
        "\n\n";
}

// A cell's accuracy at its task's k-th longer length: "table" where the model cannot run there.
std::string length_text(const json* c, size_t k) {
  if (!c || !c->contains("length_eval") || k >= (*c)["length_eval"].size()) return "-";
  const json& l = (*c)["length_eval"][k];
  if (l.contains("refused")) return "table";
  if (l.contains("seeds_solved") && l["seeds_solved"].get<int>() == 0)
    return "not solved at training";
  if (!l["mean"].is_number()) return "-";
  std::string text = fixed_number(100 * l["mean"].get<double>(), 1);
  if (l["ci95"].is_array())
    text += " ± " + fixed_number(50 * (l["ci95"][1].get<double>() - l["ci95"][0].get<double>()), 1);
  return text;
}

// Train short, test long: the same models on longer inputs, where the tasks have them.
void length_section(std::ostringstream& md, const json& board, bool extrapolation_figure) {
  bool any_length = false;
  for (const auto& t : board["tasks"]) any_length |= !t["extrapolate"].empty();
  if (!any_length) return;
  md << "## Train short, test long\n\nEval accuracy (%) of the same models on longer inputs "
        "(mean ± 95% half-width), over the seeds that solved the task at the training length "
        "only: a model that never learned the task says nothing about extrapolating it (\"not "
        "solved at training\"). \"table\": a learned position table has no rows beyond the "
        "training length, so the model cannot run there.\n\n";
  mechanism_columns(md, board, "| task | length |", 2);
  for (const auto& t : board["tasks"])
    for (size_t k = 0; k < t["extrapolate"].size(); ++k) {
      md << "| " << t["name"].get<std::string>() << " | " << t["extrapolate"][k].get<int>()
         << " (trained " << t.value("trained_length", 0) << ") |";
      for (const auto& m : board["mechanisms"])
        md << " " << length_text(find_cell(board, t["name"], m["name"]), k) << " |";
      md << "\n";
    }
  if (extrapolation_figure)
    md << "\n![extrapolation](extrapolation.png)\n\n([PDF](extrapolation.pdf), [data "
          "CSV](extrapolation.csv))\n\n";
}

// A cell's learning-rate grid: each rate's validation accuracy, the chosen one in bold.
std::string lr_grid_text(const json& c) {
  std::ostringstream md;
  bool first = true;
  for (const auto& g : c["lr_grid"]) {
    md << (first ? "" : ", ");
    first = false;
    const bool chosen = c["lr_chosen"].is_number() && g["lr"] == c["lr_chosen"];
    std::ostringstream lr;
    lr << g["lr"].get<double>();
    std::string acc = g.contains("validation_accuracy")
                          ? fixed_number(100 * g["validation_accuracy"].get<double>(), 1)
                          : (g["diverged"].get<bool>() ? "diverged" : "pending");
    md << (chosen ? "**" : "") << lr.str() << ": " << acc << (chosen ? "**" : "");
    if (chosen && (json_member(c, "lr_at_edge", json(false)).get<bool>() ||
                   json_member(c, "lr_interior", json(true)) == json(false)))
      md << " (edge)";
  }
  return md.str();
}

void rates_section(std::ostringstream& md, const json& board) {
  md << "## Learning rates and speed of learning\n\nPer cell: the grid's validation accuracy "
        "(%) at each rate (the chosen one in bold), and the mean step at which eval accuracy "
        "first reached "
     << fixed_number(100 * board["threshold"].get<double>(), 0)
     << "% (over the seeds that reached it: k/n).\n\n| task | mechanism | learning rates "
        "(validation accuracy) | steps to threshold | eval loss |\n|---|---|---|---|---|\n";
  for (const auto& c : board["cells"]) {
    if (c.value("status", "") == "not_trained") continue;
    md << "| " << c["task"].get<std::string>() << " | " << c["mechanism"].get<std::string>()
       << " | " << lr_grid_text(c) << " | ";
    if (json_member(c, "steps_to_threshold", json()).is_number())
      md << fixed_number(c["steps_to_threshold"].get<double>(), 0) << " ("
         << c["threshold_reached"].get<int>() << "/" << c["seeds"].get<int>() << ")";
    else
      md << "never (0/" << c["seeds"].get<int>() << ")";
    md << " | "
       << (json_member(c, "eval_loss", json()).is_number()
               ? fixed_number(c["eval_loss"].get<double>(), 3)
               : "-")
       << " |\n";
  }
}

// Each mechanism against the reference where the task was learned: Fisher's exact test.
void comparisons_section(std::ostringstream& md, const json& board) {
  const json comparisons = json_member(board, "comparisons", json::array());
  if (comparisons.empty()) return;
  md << "\n## Comparisons (solved counts, Fisher's exact test, Holm over the board)\n\n"
        "| task | mechanism | solved | reference solved | p | p (Holm) "
        "|\n|---|---|---|---|---|---|\n";
  for (const auto& c : comparisons)
    md << "| " << c["task"].get<std::string>() << " | " << c["mechanism"].get<std::string>()
       << " | " << c["solved"][0].get<int>() << "/" << c["solved"][1].get<int>() << " | "
       << c["against_solved"][0].get<int>() << "/" << c["against_solved"][1].get<int>() << " ("
       << c["against"].get<std::string>() << ") | " << fixed_number(c["p_fisher"].get<double>(), 3)
       << " | " << fixed_number(c["p_holm"].get<double>(), 3) << " |\n";
}

void tasks_section(std::ostringstream& md, const json& board) {
  md << "\n## Tasks\n\n";
  for (const auto& t : board["tasks"])
    md << "- **" << t["name"].get<std::string>() << "** (`" << t["task"].get<std::string>()
       << "`): " << t.value("source", "") << "\n";
  md << "\nPositions: ";
  bool first = true;
  for (const auto& m : board["mechanisms"]) {
    md << (first ? "" : "; ") << m["name"].get<std::string>() << " "
       << m["position"].get<std::string>();
    first = false;
  }
  md << ".\n";
}

std::string markdown(const json& board, const std::string& command, const std::string& when,
                     double wall_minutes, bool extrapolation_figure) {
  std::ostringstream md;
  intro_section(md, board, command, when, wall_minutes);
  leaderboard_section(md, board);
  length_section(md, board, extrapolation_figure);
  rates_section(md, board);
  comparisons_section(md, board);
  tasks_section(md, board);
  return md.str();
}

// The manifest: --manifest FILE, else the installed one of --tier (cpu by default).
std::string manifest_path(const SuiteArgs& a) {
  if (!a.manifest.empty()) {
    if (!a.tier.empty())
      throw Error("--tier " + a.tier + " and --manifest both name a manifest: give one of them");
    return a.manifest;
  }
  if (a.tier == "reference")
    return find_data_path_or_throw("configs/suite_reference/suite.json",
                                   "suite manifest (--tier reference)", "--manifest FILE");
  return find_data_path_or_throw("configs/suite/suite.json", "suite manifest (--tier cpu)",
                                 "--manifest FILE");
}

// A tier's promise its configs must keep outside the quick slice: every cell's eval set holds
// at least the manifest's "min_eval_sequences" (eval_batches x batch_size, --set included).
void check_eval_sets(const SuitePlan& plan, const json& manifest) {
  const json least = json_member(manifest, "min_eval_sequences", json(0));
  if (!least.is_number_integer() || least.get<int>() < 0)
    throw Error(plan.manifest + ": min_eval_sequences must be a whole number >= 0, got " +
                least.dump());
  if (plan.quick) return;
  for (const auto& p : plan.pairs) {
    const ExperimentConfig c = parse_config(p.config, p.dir);
    const int64_t n = int64_t{c.train.eval_batches} * c.train.batch_size;
    if (n < least.get<int>())
      throw Error(plan.manifest + ": task \"" + plan.tasks[p.task].name + "\" (" + p.dir +
                  ") evaluates " + std::to_string(n) +
                  " sequences (train.eval_batches x train.batch_size), fewer than the manifest's "
                  "min_eval_sequences " +
                  std::to_string(least.get<int>()));
  }
}

// The suite's plan from its manifest, the --tasks, --mechanisms and --seeds filters applied.
SuitePlan load_plan(const SuiteArgs& a) {
  const std::string manifest = manifest_path(a);
  SuiteFilter filter;
  filter.tasks = split_list(a.tasks);
  filter.mechanisms = split_list(a.mechanisms);
  filter.seeds = a.seeds;
  SuitePlan plan = load_suite(manifest, a.quick, filter);
  // --set after the manifest's own overrides, checked on every cell as its config.
  for (SuitePair& p : plan.pairs) {
    apply_config_sets(p.config, a.set);
    if (!a.set.empty()) parse_config(p.config, manifest + " (" + p.dir + ") with --set");
  }
  check_eval_sets(plan, read_config_json(manifest));
  return plan;
}

// The manifest's SHA-256 over its own bytes and its task configs' (in its order): a board
// records it, and --reanalyze compares it with the manifest it is given.
std::string manifest_fingerprint(const std::string& path) {
  const json m = read_config_json(path);
  std::string bytes = read_regular_file(path);
  for (const auto& t : m.at("tasks"))
    bytes += read_regular_file(
        (fs::path(path).parent_path() / t.at("config").get<std::string>()).string());
  return sha256_hex(bytes);
}

std::string duration_text(double seconds) {
  if (seconds < 3600) return fixed_number(seconds / 60, 1) + " min";
  if (seconds < 3 * 86400) return fixed_number(seconds / 3600, 1) + " h";
  return fixed_number(seconds / 86400, 1) + " days";
}

// The plan's training time on this machine, from a probe: per task, one training step of its
// reference pair (the manifest's reference, else its first), after one untimed, on one CPU thread
// at a batch of at most 8 (benchmark_training_steps), scaled linearly to the config's batch. A run
// costs its steps plus its evaluations (eval_batches forward passes, a third of a step each, every
// eval_every steps); a pair trains its grid and seeds - 1 more runs, plus up to lr_extend
// extensions; every mechanism is taken to cost what the reference does, and the length evaluations
// are left out. [low, high] seconds at `jobs` runs at a time, and one line per task.
std::pair<double, double> estimate_plan(const SuitePlan& plan, int jobs, std::string& detail) {
  double low = 0, high = 0;
  const int runs = static_cast<int>(plan.lr_grid.size()) + plan.seeds - 1;
  for (size_t t = 0; t < plan.tasks.size(); ++t) {
    const SuitePair* ref = nullptr;
    int pairs = 0;
    for (const auto& p : plan.pairs)
      if (p.task == static_cast<int>(t)) {
        ++pairs;
        if (!ref || p.mechanism == plan.reference_index) ref = &p;
      }
    if (!ref) continue;
    const ExperimentConfig c = parse_config(ref->config, ref->dir);
    ExperimentConfig probe = c;
    probe.train.batch_size = std::min(c.train.batch_size, 8);
    probe.train.eval_batches = 1;
    const double step = benchmark_training_steps(probe, 1, 1, true).mean_seconds *
                        c.train.batch_size / probe.train.batch_size;
    const double evals = c.train.eval_every > 0 ? double(c.train.steps) / c.train.eval_every : 0;
    const double run = step * (c.train.steps + evals * c.train.eval_batches / 3.0);
    low += run * runs * pairs;
    high += run * (runs + plan.lr_extend) * pairs;
    detail += "  " + plan.tasks[t].name + ": " + fixed_number(step, 3) + " s a step (batch " +
              std::to_string(c.train.batch_size) + "), " + std::to_string(c.train.steps) +
              " steps: " + duration_text(run) + " a run, " + std::to_string(runs) + " to " +
              std::to_string(runs + plan.lr_extend) + " runs for each of " + std::to_string(pairs) +
              " mechanisms\n";
  }
  return {low / std::max(1, jobs), high / std::max(1, jobs)};
}

// A manifest meant for a GPU ("meant_for": "gpu") on a machine without one: prints the estimated
// time, and refuses (true: nothing started or written) unless --yes.
bool refuse_without_gpu(const SuiteArgs& a, const SuitePlan& plan) {
  const json m = read_config_json(plan.manifest);
  if (json_member(m, "meant_for", json("cpu")) != "gpu" || !training_gpu_name().empty())
    return false;
  std::string detail;
  const auto [low, high] = estimate_plan(plan, a.jobs, detail);
  std::cerr << "attnlab suite: " << plan.manifest
            << " is meant for a GPU, and LibTorch sees none on this machine. Estimated time "
               "here at -j "
            << a.jobs << ": " << duration_text(low) << " to " << duration_text(high)
            << " (one timed step per task on one CPU thread, scaled; the higher figure if "
               "every grid grows lr_extend times):\n"
            << detail;
  if (a.yes) {
    std::cerr << "attnlab suite: --yes: starting on the CPU anyway\n";
    return false;
  }
  std::cerr << "attnlab suite: nothing started or written. Pass --yes to train on this CPU "
               "anyway.\n";
  return true;
}

// A run whose summary is damaged would be dropped from its cell in silence: refused, naming
// each file, before any leaderboard is written.
bool refuse_damaged(const json& board) {
  if (board["damaged"].empty()) return false;
  for (const auto& problem : board["damaged"])
    std::cerr << "attnlab suite: " << problem.get<std::string>() << "\n";
  std::cerr << "attnlab suite: no leaderboard written: " << board["damaged"].size()
            << (board["damaged"].size() == 1 ? " run's summary.json is" : " runs' summary.json are")
            << " damaged. Restore the file, or remove it: that seed then counts as unfinished and "
               "`attnlab suite` (without --report-only) resumes or retrains it\n";
  return true;
}

// The command the leaderboard names (the options that change what it holds).
std::string suite_command(const SuiteArgs& a) {
  std::string command = "attnlab suite";
  if (a.quick) command += " --quick";
  if (!a.tasks.empty()) command += " --tasks " + a.tasks;
  if (!a.mechanisms.empty()) command += " --mechanisms " + a.mechanisms;
  if (a.seeds > 0) command += " --seeds " + std::to_string(a.seeds);
  if (a.jobs > 1) command += " -j " + std::to_string(a.jobs);
  if (a.slurm.pack > 0) command += " --pack " + std::to_string(a.slurm.pack);
  command += " --out " + a.out;
  return command;
}

// The board's command, date, wall time and machine. --report-only rewrites the leaderboard of an
// earlier invocation: its command, date and wall time are the ones that trained the runs.
void stamp_board(json& board, const SuiteArgs& a, double wall) {
  std::string command = suite_command(a);
  const std::string when = utc_now();
  double wall_shown = wall;
  std::string when_shown = when;
  if (a.report_only) {
    try {
      const json previous = read_json_file((fs::path(a.out) / "leaderboard.json").string());
      if (previous.contains("wall_seconds") && previous.contains("command")) {
        wall_shown = previous["wall_seconds"].get<double>();
        when_shown = previous.value("date", when_shown);
        command = previous["command"].get<std::string>();
        board["rewritten"] = when;
      }
    } catch (const std::exception&) {
      // no earlier leaderboard: this invocation's own figures
    }
  }
  board["wall_seconds"] = wall_shown;
  board["command"] = command;
  board["date"] = when_shown;
  board["machine"] = std::to_string(std::thread::hardware_concurrency()) + " cores";
}

// The leaderboard's figures (and the extrapolation one where the tasks have longer lengths),
// listed in board["figures"]; returns whether the extrapolation figure was drawn.
bool export_figures(json& board, const std::string& out) {
  std::vector<std::string> figures;
  bool drew_extrapolation = false;
  try {
    // Not "leaderboard": that figure's provenance JSON would be leaderboard.json, the board.
    export_report_figure(figures::leaderboard_figure(board), out, "accuracy", 7.5);
    figures.push_back("accuracy");
    if (figures::has_extrapolation(board)) {
      export_report_figure(figures::extrapolation_figure(board), out, "extrapolation", 7.5);
      figures.push_back("extrapolation");
      drew_extrapolation = true;
    }
  } catch (const Error& e) {
    std::cerr << "attnlab suite: no figure yet (" << e.what() << ")\n";
  }
  board["figures"] = figures;
  return drew_extrapolation;
}

// --reanalyze of a board made under another manifest (or before boards recorded theirs, as the
// committed one of 2026-11-28): still re-analysed from its own per-seed values, but marked
// "stale" (said on stderr, in leaderboard.md and the JSON), and its cells keep the eval set size
// they were made with, not the manifest's.
void mark_stale(json& board, const SuitePlan& plan) {
  const std::string now = manifest_fingerprint(plan.manifest);
  const std::string then = json_member(board, "manifest_sha256", json("")).get<std::string>();
  if (then == now) {
    board.erase("stale");
    return;
  }
  board["stale"] =
      "made under another manifest than " + plan.manifest + " (" +
      (then.empty() ? std::string("it records no manifest SHA-256: it predates them")
                    : "manifest_sha256 " + then.substr(0, 16) + ", now " + now.substr(0, 16)) +
      "); its per-seed values are re-analysed as they are, with its own seeds, "
      "rates and eval set sizes, and running the suite again would not continue it";
  std::cerr << "attnlab suite: note: the leaderboard is stale: it was "
            << board["stale"].get<std::string>() << "\n";
}

// What made the board: "binary_sha256" of this binary (null without /proc), its "commit", and
// "run_commits" {commit: runs} over every run the cells count (summary.json's "commit";
// "unrecorded" for a run that predates it).
void record_provenance(json& board, const std::string& out) {
  std::map<std::string, int> commits;
  for (const auto& c : board["cells"])
    for (const auto& rel : json_member(c, "runs", json::array())) {
      std::string commit = "unrecorded";
      try {
        const json s =
            read_json_file((fs::path(out) / rel.get<std::string>() / "summary.json").string());
        commit = s.value("commit", commit);
      } catch (const std::exception&) {
        // counted under "unrecorded": suite_leaderboard already named a damaged summary
      }
      ++commits[commit];
    }
  board["binary_sha256"] = this_binary_sha256();
  board["commit"] = commit_string();
  board["run_commits"] = commits;
}

// leaderboard.md, leaderboard.json and the figures; prints the table (or the board with --json).
int write_leaderboard(const SuiteArgs& a, const SuitePlan& plan, double wall) {
  json board;
  if (a.reanalyze) {
    // The committed board's per-seed values, analysed again; no run is read or trained.
    board = read_json_file((fs::path(a.out) / "leaderboard.json").string());
    board["reanalyzed"] = utc_now();
    mark_stale(board, plan);
  } else {
    board = suite_leaderboard(plan, a.out);
    if (refuse_damaged(board)) return kExitUsage;
    board.erase("damaged");
    stamp_board(board, a, wall);
    board["manifest"] = plan.manifest;
    board["manifest_sha256"] = manifest_fingerprint(plan.manifest);
    board["tier"] = json_member(read_config_json(plan.manifest), "tier", json(nullptr));
    record_provenance(board, a.out);
  }
  analyze_leaderboard(board, plan);
  board["analysis_commit"] = commit_string();
  const bool drew_extrapolation = export_figures(board, a.out);
  const std::string md =
      markdown(board, board["command"].get<std::string>(), board["date"].get<std::string>(),
               board["wall_seconds"].get<double>() / 60, drew_extrapolation);
  fig::write_files_atomically(
      {{(fs::path(a.out) / "leaderboard.md").string(), md},
       {(fs::path(a.out) / "leaderboard.json").string(), board.dump(2) + "\n"}});
  if (a.json)
    std::cout << board.dump(2) << "\n";
  else
    std::cout << md.substr(0, md.find("## Learning rates"))
              << "leaderboard: " << (fs::path(a.out) / "leaderboard.md").string() << "\n";
  return kExitOk;
}

}  // namespace

CLI::App* add_command(CLI::App& app, SuiteArgs& a) {
  auto* cmd = app.add_subcommand(
      "suite", "Train every mechanism on the standard synthetic tasks and write a leaderboard");
  cmd->add_option("--manifest", a.manifest,
                  "Suite manifest (default: the installed configs/suite/suite.json)");
  cmd->add_option("--tasks", a.tasks, "Only these tasks (comma-separated names)");
  cmd->add_option("--mechanisms", a.mechanisms, "Only these mechanisms (comma-separated names)");
  cmd->add_option("--shard", a.shard, "i/n: run every n-th pair, starting at i (Slurm arrays)");
  cmd->add_option("--set", a.set, kConfigSetHelp);
  cmd->add_option("--tier", a.tier,
                  "cpu (default): the installed configs/suite/suite.json, sized for a 2-core "
                  "machine; reference: configs/suite_reference/suite.json, the references' "
                  "generators and budgets, meant for a GPU")
      ->check(CLI::IsMember({"cpu", "reference"}));
  cmd->add_flag("--yes", a.yes,
                "Start a manifest meant for a GPU (--tier reference) on a machine without one; "
                "without it the suite prints its estimated time and refuses (exit 2)");
  cmd->add_flag(
      "--reanalyze", a.reanalyze,
      "Train and read no run: rebuild OUT/leaderboard.{md,json} and the figures from "
      "the per-seed values of OUT/leaderboard.json (the statistics of leaderboard_stats.h)");
  add_campaign_options(cmd, a, {"leaderboard", "cell", "OUT/<task>/<mechanism>", ""});
  add_slurm_options(cmd, a.slurm, "suite");
  return with_footer(cmd, kSuiteFooter);
}

int run_command(const SuiteArgs& a) {
  SuitePlan plan;
  CellConsole console(true, a.jobs);  // the children quiet, every line of the suite's own
  auto o = console.run_options<SuiteRunOptions>(a.out, a.threads, a.quick ? 0 : 500);
  try {
    plan = load_plan(a);
    if (a.reanalyze && !fs::is_regular_file(fs::path(a.out) / "leaderboard.json"))
      throw Error("--reanalyze: " + (fs::path(a.out) / "leaderboard.json").string() +
                  " is not there (it rebuilds a leaderboard from that file's own values)");
    if (!a.shard.empty()) parse_shard(a.shard, o.shard_index, o.shard_count);
    console.use_packs(o, resolve_pack(a.slurm.pack, a.threads, kMaxPack));
    // Training here (not a Slurm submission, a report or a reanalysis): a GPU tier on a CPU
    // starts only when asked.
    if (!a.report_only && !a.reanalyze && !a.slurm.any() && refuse_without_gpu(a, plan))
      return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "attnlab suite: " << e.what() << "\n";
    return kExitUsage;
  }
  if (a.slurm.any())
    return submit_suite_to_slurm(a.slurm, plan.pairs.size(), a.out,
                                 !a.shard.empty() ? "--shard"
                                 : a.report_only  ? "--report-only"
                                 : a.reanalyze    ? "--reanalyze"
                                                  : "");
  ProgressPrinter& progress = console.progress;
  const auto start = std::chrono::steady_clock::now();
  SuiteOutcome outcome;
  install_stop_signals();
  if (a.slurm.task) install_requeue_signal();  // USR1: checkpoint, then requeue
  if (!a.report_only && !a.reanalyze) {
    try {
      outcome = run_suite(plan, o);
    } catch (const Interrupted& i) {
      progress.finish();
      std::cerr << "attnlab suite: interrupted (signal " << i.signal
                << "); finished runs and checkpoints are kept under "
                << fs::absolute(a.out).string() << ". Run the same command again to continue.\n";
      return a.slurm.task ? slurm_task_exit(128 + i.signal) : 128 + i.signal;
    } catch (const std::exception& e) {
      progress.finish();
      std::cerr << "attnlab suite: " << e.what() << "\n";
      return console.exits.code_for_failure();
    }
  }
  progress.finish();
  // An array task trains its pairs only (and says so for slurm-status); the report job writes
  // the leaderboard.
  if (a.slurm.task) {
    try {
      slurm_task_done(a.out, a.shard);
    } catch (const std::exception& e) {
      std::cerr << "attnlab suite: " << e.what() << "\n";
      return kExitRunFailed;
    }
    return outcome.diverged ? kExitDiverged : kExitOk;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    const int code = write_leaderboard(a, plan, wall);
    if (code != kExitOk) return code;
  } catch (const std::exception& e) {
    std::cerr << "attnlab suite: writing the leaderboard: " << e.what() << "\n";
    return kExitRunFailed;
  }
  return outcome.diverged ? kExitDiverged : kExitOk;
}

}  // namespace attn
