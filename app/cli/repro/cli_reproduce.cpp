// `attnlab reproduce --paper P`: a seed paper's headline comparison from the shipped configs
// under assets/configs/repro/<paper>/ (repro.json: app/cli/repro/repro_plan.h), every arm at its
// own learning rate chosen on a validation set (core/training/headless/tuned_arms.h), the speed and
// memory claims from an isolated benchmark (repro_bench.h), then a report directory: report.md
// (the arms and their rates, mean ± sd over seeds, the claim-by-claim verdicts with intervals of
// repro_claims.h, the benchmark) and its figures (PDF, PNG, CSV, JSON), and report.json.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "app/cli/cli.h"
#include "app/cli/compare/cli_compare.h"
#include "app/cli/progress.h"
#include "app/cli/repro/repro_bench.h"
#include "app/cli/repro/repro_claims.h"
#include "app/cli/repro/repro_corrections.h"
#include "app/cli/repro/repro_plan.h"
#include "app/cli/repro/repro_provenance.h"
#include "app/cli/repro/repro_scaling.h"
#include "app/cli/repro/repro_sections.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/base/version.h"
#include "render/plot/export/figure_export.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kPapers = {"condor", "conn", "kernel", "neural"};

constexpr const char* kReproduceFooter =
    R"(Each arm trains its first seed at every rate of its learning-rate grid, the rate with the
best validation figure is chosen on held-out data that is not the reported eval set (the lowest
loss for an arm a claim judges on eval_loss, else the highest accuracy, ties to the other), and
its other seeds train at that rate. Speed and memory come from `attnlab bench-step`
runs afterwards (benchmark.json; delete it to measure again). Progress goes to stderr; the table
and the report's path (or with --json report.json plus "report") to stdout. A run that diverged
is still reported, and the command then exits 3.)";

constexpr const char* kClaimsIntro = R"(## Claims

Each claim as the paper states it, its number, ours, the 95% t-interval of the difference
(paired by seed; for ratios, of the ratio), whether the setting is the paper's, and the verdict.
Every verdict turns on one boundary (0 for "better", the nearer tolerance for "within", the bound
for ratios and at_most); p raw is the t-test's p against it, beside it the exact sign-flip
permutation p over all 2^n flips (a check that assumes no normality; never below 2/2^n). Seeds
added after a look count as looks (repro.json's "looks", listed per claim with each look's p):
p looks = p raw x looks (Bonferroni over looks; its interval at 1 - 0.05/looks), and Holm's
step-down runs over the paper's measured, testable claims. **held** / **did not hold**: the
interval's side when p Holm < 0.05; **not resolved** otherwise. A claim on loss or accuracy whose
arm stays at its stated floor (repro.json's "learned") is **not testable**. Counts are exact. A
claim tested away from the paper's setting (repro.json's "paper_at") says so in its verdict.

)";

// The command that continues this reproduction: the same arguments (finished runs are skipped,
// checkpointed ones resume).
std::string continue_command(const ReproduceArgs& a) {
  std::string cmd = "attnlab reproduce --paper " + shell_word(a.paper);
  if (a.quick) cmd += " --quick";
  if (a.seeds > 0) cmd += " --seeds " + std::to_string(a.seeds);
  cmd += " --out " + shell_word(a.out);
  if (!a.configs.empty()) cmd += " --configs " + shell_word(a.configs);
  if (a.threads > 0) cmd += " --threads " + std::to_string(a.threads);
  if (a.jobs > 1) cmd += " -j " + std::to_string(a.jobs);
  if (a.slurm.pack > 0) cmd += " --pack " + std::to_string(a.slurm.pack);
  if (a.json) cmd += " --json";
  return cmd;
}

// OUT/invocations.json: one entry per invocation that trained (or tried to), so that a
// reproduction continued across several invocations reports its whole training time. A file
// that cannot be read is not overwritten: its record is skipped with a warning.
json record_invocation(const fs::path& out, const ReproduceArgs& a, double wall,
                       const TunedOutcome* outcome, const std::string& ended) {
  const fs::path file = out / "invocations.json";
  json all = json::array();
  std::error_code ec;
  try {
    if (fs::exists(file, ec)) all = read_json_file(file.string());
    if (!all.is_array()) throw Error(file.string() + " is not a list");
    json entry = {{"date", utc_now()},
                  {"command", continue_command(a)},
                  {"wall_seconds", wall},
                  {"cores", std::thread::hardware_concurrency()},
                  {"commit", commit_string()},
                  {"binary_sha256", this_binary_sha256()},
                  {"ended", ended}};
    if (outcome)
      entry.update({{"trained", outcome->ran},
                    {"resumed", outcome->resumed},
                    {"already_done", outcome->skipped}});
    all.push_back(entry);
    write_file_atomic(file.string(), all.dump(2) + "\n");
  } catch (const std::exception& e) {
    std::cerr << "attnlab reproduce: warning: this invocation's time is not recorded: " << e.what()
              << "\n";
  }
  return all;
}

double total_wall_seconds(const json& invocations) {
  double total = 0;
  for (const auto& i : invocations) total += i.value("wall_seconds", 0.0);
  return total;
}

// Every leaf of a JSON object as "a.b.c" -> value.
void flatten(const json& j, const std::string& prefix, std::map<std::string, json>& out) {
  if (j.is_object()) {  // an empty object has no leaf to differ in
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  out[prefix] = j;
}

// The keys in which `arm`'s resolved config differs from `reference`'s ("name" and the seed
// aside): what besides the mechanism tells the two arms apart.
json config_differences(const json& arm, const json& reference) {
  std::map<std::string, json> a, b;
  flatten(arm, "", a);
  flatten(reference, "", b);
  json out = json::object();
  for (const auto& [key, value] : a) {
    if (key == "name" || key == "seed" || key == "train.lr") continue;
    const auto it = b.find(key);
    if (it == b.end() || it->second != value)
      out[key] = {{"arm", value}, {"reference", it == b.end() ? json(nullptr) : it->second}};
  }
  for (const auto& [key, value] : b)
    if (!a.count(key) && key != "name" && key != "seed" && key != "train.lr")
      out[key] = {{"arm", nullptr}, {"reference", value}};
  return out;
}

std::string value_text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.is_null() ? "(absent)" : v.dump();
}

// The arms table and each arm's part of report.json.
// Each seed's run is named relative to `runs_dir` (OUT/runs), as the grid's trials are, so that a
// committed report does not carry the machine's paths.
json arms_section(std::ostringstream& md, const ReproPlan& plan, const ReproRuns& runs,
                  const fs::path& runs_dir) {
  json arms = json::array();
  md << "## Arms\n\nEvery arm trains its first seed once per learning rate of its grid; the rate "
        "with the best figure on a held-out validation set (never the reported eval set) is "
        "chosen, and the other seeds train at it: the lowest loss for an arm a claim judges on "
        "eval loss, else the highest accuracy (\"chosen on\"). When the best rate is the lowest or "
        "highest "
        "tried, one more rate a grid step beyond it is tried (up to repro.json's lr_extend, "
     << (plan.arms.empty() ? 0 : plan.arms.front().extend)
     << "); a rate still marked \"the grid's edge\" might be bettered by a wider grid. \"differs\" "
        "lists every "
        "resolved config key in which the arm differs from the first arm of its task.\n\n"
        "| arm | differs from the first arm of its task | grid: rate (validation accuracy, loss) "
        "| chosen on | chosen rate | seeds |\n|---|---|---|---|---|---|\n";
  std::map<std::string, size_t> first_of_task;
  for (size_t k = 0; k < plan.arms.size(); ++k) {
    const TunedArm& arm = plan.arms[k];
    const ExperimentConfig parsed = parse_config(arm.config, arm.name);
    const json resolved = to_json(parsed);
    const auto [it, fresh] = first_of_task.emplace(parsed.task.name, k);
    const json reference = to_json(parse_config(plan.arms[it->second].config, ""));
    const json differs = fresh ? json::object() : config_differences(resolved, reference);
    std::string differ_text;
    for (const auto& [key, d] : differs.items())
      differ_text += (differ_text.empty() ? "" : "; ") + key + " " + value_text(d["arm"]) +
                     " (vs " + value_text(d["reference"]) + ")";
    if (fresh) differ_text = "(reference for task " + parsed.task.name + ")";
    if (!plan.notes[k].empty()) differ_text += ". " + plan.notes[k];
    const TunedRuns& t = runs.tuned[k];
    std::string grid;
    for (const auto& trial : t.choice.trials) {
      grid += (grid.empty() ? "" : "; ") + lr_text(trial.lr);
      if (!trial.finished)
        grid += " (pending)";
      else if (trial.diverged)
        grid += " (diverged)";
      else if (trial.validated)
        grid += " (" + fixed_number(trial.validation_accuracy, 4) + ", " +
                fixed_number(trial.validation_loss, 4) + ")";
    }
    const double chosen = t.choice.chosen >= 0 ? t.choice.trials[t.choice.chosen].lr : NAN;
    json seeds = json::array();
    for (const RunDirectory* r : runs.of(arm.name)) {
      json s = {{"seed", r->config.seed},
                {"run", fs::path(r->dir).lexically_relative(runs_dir).generic_string()}};
      for (const char* key : {"eval_loss", "eval_accuracy", "parameters", "attention_parameters",
                              "steps_per_second", "peak_rss_mib", "diverged"})
        if (r->summary.contains(key)) s[key] = r->summary[key];
      if (r->summary.contains("conn"))
        s["final_spectral_radius"] = r->summary["conn"].value("spectral_radius", NAN);
      seeds.push_back(s);
    }
    // A choice still at the edge after the grid's extensions may not be the best rate.
    const bool edge = t.choice.at_edge;
    md << "| " << arm.name << " | " << differ_text << " | " << grid << " | "
       << criterion_name(arm.criterion) << " | "
       << (std::isfinite(chosen) ? lr_text(chosen) + (edge ? " (the grid's edge)" : "") : "-")
       << " | " << seeds.size() << " of " << arm.seeds << " |\n";
    const json& entry = plan.manifest.at("arms").at(k);
    arms.push_back({{"name", arm.name},
                    {"config",
                     {{"file", entry.at("config")},
                      {"set", entry.value("set", json::object())},
                      {"differs", differs}}},
                    {"note", plan.notes[k]},
                    {"lr_grid", lr_trials_json(t.choice)},
                    {"lr_chosen", std::isfinite(chosen) ? json(chosen) : json(nullptr)},
                    {"lr_chosen_on", criterion_name(arm.criterion)},
                    {"lr_at_grid_edge", edge},
                    {"seeds_planned", arm.seeds},
                    {"seeds", seeds}});
  }
  md << "\n";
  return arms;
}

// The paper's plan with its benchmark and claims, every part checked before anything runs.
struct ReproSetup {
  ReproPlan plan;
  json bench_spec;
  json scaling_spec;  // repro_scaling.h; null when the paper has none
};

ReproSetup load_setup(const ReproduceArgs& a) {
  if (std::find(kPapers.begin(), kPapers.end(), a.paper) == kPapers.end())
    throw Error("--paper " + a.paper + ": allowed: condor, conn, kernel, neural");
  const fs::path root = a.configs.empty()
                            ? fs::path(find_data_path_or_throw(
                                  "configs/repro", "reproduction configs", "--configs DIR"))
                            : fs::path(a.configs);
  ReproSetup s;
  s.plan = load_repro_plan(root.string(), a.paper, a.quick, a.seeds);
  std::vector<std::string> names, bench_arms;
  for (const auto& arm : s.plan.arms) names.push_back(arm.name);
  s.bench_spec = s.plan.manifest.value("benchmark", json());
  if (a.quick && s.bench_spec.is_object() && s.plan.manifest.contains("quick_benchmark"))
    for (const auto& [k, v] : s.plan.manifest["quick_benchmark"].items()) s.bench_spec[k] = v;
  validate_bench_spec(s.bench_spec, names, s.plan.dir + "/repro.json");
  if (s.bench_spec.is_object())
    for (const auto& n : s.bench_spec["arms"]) bench_arms.push_back(n.get<std::string>());
  s.scaling_spec = resolve_scaling_spec(s.plan.manifest, a.quick);
  validate_scaling_spec(s.scaling_spec, names, s.plan.dir + "/repro.json");
  validate_claims(s.plan.manifest.value("claims", json()), names, bench_arms, s.scaling_spec);
  validate_claim_rules(s.plan.manifest, names);
  check_seed_counts(s.plan, a.out, a.quick, a.seeds > 0);
  return s;
}

// Interrupted: what is kept and the command that continues.
int interrupted_exit(const ReproduceArgs& a, const Interrupted& i, double wall) {
  // Array tasks run at once: invocations.json is not theirs to rewrite.
  if (!a.slurm.task) record_invocation(a.out, a, wall, nullptr, "interrupted");
  const int sig = i.signal;
  std::cerr << "attnlab reproduce: interrupted by " << stop_signal_name(sig)
            << "; the finished runs and a checkpoint of each interrupted run are kept under "
            << fs::absolute(fs::path(a.out) / "runs").string()
            << " (no report written yet). Continue with (finished runs are skipped, "
               "interrupted ones resume):\n  "
            << continue_command(a) << "\n";
  return a.slurm.task ? slurm_task_exit(128 + sig) : 128 + sig;
}

// Trains every arm (finished runs skipped, checkpointed ones resumed), then runs the isolated
// benchmark unless benchmark.json is there. Returns the exit code when it stopped early.
std::optional<int> train_arms(const ReproduceArgs& a, const ReproSetup& s, TunedOutcome* outcome,
                              double* wall) {
  const fs::path out = a.out, bench_file = out / "benchmark.json";
  CellConsole console(true, a.jobs);
  ProgressPrinter& progress = console.progress;
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Ctrl-C, kill and a closed terminal: the running runs checkpoint, no new run starts, and the
  // message says what is kept and how to continue.
  install_stop_signals();
  if (a.slurm.task) install_requeue_signal();  // USR1: checkpoint, then requeue
  try {
    if (!a.report_only && !a.slurm.report) {
      auto o = console.run_options<TunedRunOptions>((out / "runs").string(), a.threads,
                                                    a.quick ? 0 : 250);  // resumes mid-run
      if (!a.shard.empty()) parse_shard(a.shard, o.shard_index, o.shard_count);
      console.use_packs(o, resolve_pack(a.slurm.pack, a.threads, kMaxPack));
      *outcome = run_tuned_arms(s.plan.arms, o);
    }
    // A shard (an array task) trains its arms only; the benchmark runs once, with the report.
    if (a.slurm.task) slurm_task_done(a.out, a.shard);
    if (!a.report_only && a.shard.empty()) {
      std::error_code ec;
      if (s.bench_spec.is_object() && !fs::exists(bench_file, ec)) {
        const ReproBench b = run_repro_bench(s.plan, s.bench_spec, (out / "bench").string(),
                                             [&](const std::string& l) { progress(l); });
        write_file_atomic(bench_file.string(), bench_json(b).dump(2) + "\n");
      }
      // The scaling sweeps likewise: once, kept in scaling.json (delete it to measure again).
      const fs::path scaling_file = out / "scaling.json";
      if (s.scaling_spec.is_array() && !fs::exists(scaling_file, ec)) {
        const ScalingResults sc = run_scaling(s.plan, s.scaling_spec, (out / "scaling").string(),
                                              [&](const std::string& l) { progress(l); });
        write_file_atomic(scaling_file.string(), scaling_json(sc).dump(2) + "\n");
      }
    }
  } catch (const Interrupted& i) {
    progress.finish();
    return interrupted_exit(a, i, seconds());
  } catch (const std::exception& e) {
    progress.finish();
    std::cerr << "attnlab reproduce: " << e.what() << "\n";
    return console.exits.code_for_failure();
  }
  progress.finish();
  *wall = seconds();
  return std::nullopt;
}

// What the report says of its making: the command, date, jobs and threads of the invocation
// that trained (with --report-only, report.json's), and the wall time over every invocation.
struct ReportStamp {
  std::string command, date;
  int jobs = 1, threads = 1;
  double wall = 0;
  json invocations = json::array();
};

ReportStamp report_stamp(const ReproduceArgs& a, double wall, const TunedOutcome& outcome) {
  const fs::path out = a.out;
  ReportStamp st{continue_command(a), utc_now(), a.jobs, a.threads > 0 ? a.threads : 1, wall};
  std::error_code ec;
  if (!a.report_only)
    st.invocations = record_invocation(out, a, wall, &outcome, "finished");
  else if (fs::exists(out / "invocations.json", ec))
    st.invocations = read_json_file((out / "invocations.json").string());
  if (a.report_only && fs::exists(out / "report.json", ec)) {
    const json old = read_json_file((out / "report.json").string());
    st.command = old.value("command", st.command);
    st.date = old.value("date", st.date);
    st.wall = old.value("wall_seconds", st.wall);
    st.jobs = old.value("jobs", st.jobs);
    st.threads = old.value("threads", st.threads);
  }
  // Continued across invocations: the time of them all (an interrupted one included).
  if (st.invocations.is_array() && !st.invocations.empty())
    st.wall = total_wall_seconds(st.invocations);
  return st;
}

// The report's title and its line of provenance.
void report_header(ReproReport& r, const ReproduceArgs& a, const ReproPlan& plan,
                   const ReproRuns& runs, const ReportStamp& st, const TunedOutcome& outcome) {
  int total_runs = 0;  // the grid's trials (with its extensions) and the other seeds
  for (size_t k = 0; k < plan.arms.size(); ++k)
    total_runs += static_cast<int>(runs.tuned[k].choice.trials.size()) + plan.arms[k].seeds - 1;
  const size_t invocation_count = st.invocations.is_array() ? st.invocations.size() : 0;
  r.md << "# " << plan.title << "\n\n";
  r.md << "`" << st.command << "` — " << st.date << ", " << version_string() << ", "
       << std::thread::hardware_concurrency() << " cores; " << total_runs << " runs"
       << (st.jobs > 1 ? ", " + std::to_string(st.jobs) + " at a time"
                       : std::string(" one at a time"))
       << ", " << st.threads << " torch thread(s) each"
       << (a.report_only ? std::string()
                         : " (this invocation: " + std::to_string(outcome.ran) + " trained, " +
                               std::to_string(outcome.resumed) + " resumed, " +
                               std::to_string(outcome.skipped) + " already done)")
       << "; " << fixed_number(st.wall / 60, 1) << " min"
       << (invocation_count > 1
               ? " over " + std::to_string(invocation_count) + " invocations (invocations.json)"
               : std::string())
       << ". Configs: `assets/configs/repro/" << a.paper << "/`; runs: `runs/`.\n\n";
  if (a.quick)
    r.md << "> **Quick mode**: tens of steps on tiny models. This checks that the pipeline "
            "works; the numbers below say nothing about the paper's claims.\n\n";
}

// Every arm's seed group, in the plan's order (an arm without a finished run: empty).
std::vector<GroupSummary> arm_groups(const ReproPlan& plan, const ReproRuns& runs, int* diverged) {
  const auto found = aggregate_runs(runs.runs, runs.group_of);
  std::vector<GroupSummary> groups;
  for (const auto& arm : plan.arms) {
    GroupSummary s;
    s.group = arm.name;
    for (const auto& f : found)
      if (f.group == arm.name) s = f;
    *diverged += s.diverged;
    groups.push_back(s);
  }
  return groups;
}

// report.md and report.json from what OUT holds; prints the table (or report.json with --json).
// Returns the exit code: kExitDiverged when a run diverged.
int write_report(const ReproduceArgs& a, const ReproSetup& s, const TunedOutcome& outcome,
                 double wall) {
  const ReproPlan& plan = s.plan;
  const fs::path out = a.out, runs_dir = out / "runs", bench_file = out / "benchmark.json";
  const ReproRuns runs = collect_repro_runs(plan, runs_dir.string());
  int diverged = 0;
  const std::vector<GroupSummary> groups = arm_groups(plan, runs, &diverged);
  std::error_code ec;
  std::unique_ptr<ReproBench> bench;
  if (fs::exists(bench_file, ec))
    bench = std::make_unique<ReproBench>(bench_from_json(read_json_file(bench_file.string())));
  std::unique_ptr<ScalingResults> scaling;
  if (fs::exists(out / "scaling.json", ec))
    scaling = std::make_unique<ScalingResults>(
        scaling_from_json(read_json_file((out / "scaling.json").string())));
  const ReportStamp st = report_stamp(a, wall, outcome);
  ReproReport r;
  r.dir = out.string();
  report_header(r, a, plan, runs, st, outcome);
  const json provenance = report_provenance(plan, runs);
  r.md << provenance_markdown(provenance, a.seeds);
  const json arms = arms_section(r.md, plan, runs, runs_dir);
  r.md << "## Results (mean ± sample sd over seeds, each arm at its chosen rate)\n\n"
       << group_table_markdown(groups)
       << "\nsteps/s and peak RSS here are the training runs' own (runs shared the cores); the "
          "claims about speed and memory use the isolated benchmark below.\n\n";
  // --quick's seeds and models are not the recorded looks' nor meant to learn: no rules.
  const auto claims = evaluate_claims(plan.manifest.value("claims", json()), runs, bench.get(),
                                      a.quick ? json::object() : plan.manifest, scaling.get());
  r.md << kClaimsIntro << claims_markdown(claims) << "\n";
  if (bench)
    r.md << "## Speed and memory (isolated benchmark)\n\n" << bench_markdown(*bench) << "\n";
  else if (s.bench_spec.is_object())
    r.md << "## Speed and memory\n\nThe benchmark has not run yet (benchmark.json is absent).\n\n";
  if (scaling)
    r.md << "## Scaling (isolated benchmark sweeps: scaling.json)\n\n"
         << scaling_markdown(*scaling);
  else if (s.scaling_spec.is_array())
    r.md << "## Scaling\n\nThe sweeps have not run yet (scaling.json is absent).\n\n";
  paper_section(r, plan, runs, groups);
  json report = {{"paper", a.paper},
                 {"quick", a.quick},
                 {"command", st.command},
                 {"date", st.date},
                 {"arms", arms},
                 {"claims", claims_json(claims)},
                 {"corrections",
                  {{"alpha", 0.05},
                   {"looks", "Bonferroni over looks: p_looks = min(1, looks x p_raw)"},
                   {"multiplicity", "Holm over the paper's measured testable claims"}}},
                 {"analysis_commit", commit_string()},
                 {"provenance", provenance},
                 {"seeds_override", a.seeds > 0 ? json(a.seeds) : json(nullptr)},
                 {"benchmark", bench ? bench_json(*bench) : json(nullptr)},
                 {"scaling", scaling ? scaling_json(*scaling) : json(nullptr)},
                 {"groups", group_table_json(groups)},
                 {"figures", r.figures},
                 {"wall_seconds", st.wall},
                 {"jobs", st.jobs},
                 {"threads", st.threads},
                 {"invocations", st.invocations}};
  fig::write_files_atomically({{(out / "report.md").string(), r.md.str()},
                               {(out / "report.json").string(), report.dump(2) + "\n"}});
  if (a.json) {
    report["report"] = (out / "report.md").string();
    std::cout << report.dump(2) << "\n";
  } else {
    std::cout << group_table_markdown(groups) << "report: " << (out / "report.md").string() << "\n";
  }
  return outcome.diverged > 0 || diverged > 0 ? kExitDiverged : kExitOk;
}

}  // namespace

CLI::App* add_command(CLI::App& app, ReproduceArgs& a) {
  auto* cmd = app.add_subcommand(
      "reproduce",
      "Run a seed paper's headline comparison and write a report (Markdown + figures)");
  cmd->add_option("--paper", a.paper, "condor | conn | kernel | neural")->required();
  cmd->add_option("--configs", a.configs,
                  "Repro configs directory (default: the installed ones, see attnlab --version)");
  cmd->add_option("--shard", a.shard,
                  "i/n: train only the arms with index % n == i and write no report (Slurm "
                  "arrays; run once more without --shard to write it)");
  add_campaign_options(cmd, a, {"report", "arm", "OUT/runs", " (plus the report's path)"});
  add_slurm_options(cmd, a.slurm, "reproduce");
  return with_footer(cmd, kReproduceFooter);
}

int run_command(const ReproduceArgs& a) {
  ReproSetup setup;
  try {
    setup = load_setup(a);
    int index = 0, count = 1;
    if (!a.shard.empty()) parse_shard(a.shard, index, count);
    resolve_pack(a.slurm.pack, a.threads, kMaxPack);  // --threads N with --pack M refused here
  } catch (const std::exception& e) {
    std::cerr << "attnlab reproduce: " << e.what() << "\n";
    return kExitUsage;
  }
  if (a.slurm.any())
    return submit_reproduce_to_slurm(a.slurm, setup.plan.arms.size(), a.out,
                                     !a.shard.empty() ? "--shard"
                                     : a.report_only  ? "--report-only"
                                                      : "");
  TunedOutcome outcome;
  double wall = 0;
  if (const std::optional<int> stopped = train_arms(a, setup, &outcome, &wall)) return *stopped;
  if (!a.shard.empty()) {  // a shard writes no report: the other shards' arms are not done
    std::cerr << "attnlab reproduce: shard " << a.shard << " trained; write the report with the "
              << "same command without --shard\n";
    return outcome.diverged > 0 ? kExitDiverged : kExitOk;
  }
  try {
    return write_report(a, setup, outcome, wall);
  } catch (const std::exception& e) {
    std::cerr << "attnlab reproduce: writing the report: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

}  // namespace attn
