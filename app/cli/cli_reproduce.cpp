// `attnlab reproduce --paper P`: one sweep per seed paper from the shipped configs under
// assets/configs/repro/<paper>/ (repro.json names the arms, each arm's config and key
// overrides ("set"), the seeds, the overrides of --quick, and the paper's claims), then a
// report directory: report.md (mean ± sd over seeds, the claim-by-claim table of
// app/cli/repro_claims.h) and its figures (PDF, PNG, CSV, JSON). Every arm of a task trains the
// same number of steps: a manifest whose arms differ is refused before anything trains.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "app/figures/compare_figures.h"
#include "cli/cli.h"
#include "cli/cli_compare.h"
#include "cli/data_paths.h"
#include "cli/progress.h"
#include "cli/repro_claims.h"
#include "core/base/error.h"
#include "core/base/interrupt.h"
#include "core/base/version.h"
#include "render/plot/colormap.h"
#include "render/plot/export/figure_export.h"
#include "render/plot/figure_font.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::vector<std::string> kPapers = {"condor", "conn", "kernel", "neural"};

std::string num(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

const GroupSummary* find_group(const std::vector<GroupSummary>& g, const std::string& name) {
  for (const auto& s : g)
    if (s.group == name) return &s;
  return nullptr;
}

// Curves for every run of the given groups, one colour per group: its index in the plan, so a
// group keeps its colour across a report's figures, unless the palette's wrap would give two of
// this figure's groups one colour (Condor's 8 arms against Okabe-Ito's 7 gave ky and ky-w32 the
// same blue); then the groups' order in this figure.
std::vector<figures::CompareCurve> group_curves(const SweepPlan& plan,
                                                const std::vector<RunDirectory>& runs,
                                                const std::vector<std::string>& groups) {
  std::vector<size_t> shown;
  for (size_t g = 0; g < plan.groups.size(); ++g)
    if (groups.empty() || std::find(groups.begin(), groups.end(), plan.groups[g]) != groups.end())
      shown.push_back(g);
  std::set<int> slots;
  for (size_t g : shown) slots.insert(static_cast<int>(g) % render::okabe_ito_count());
  const bool by_plan = slots.size() == shown.size();
  std::vector<figures::CompareCurve> out;
  for (size_t k = 0; k < shown.size(); ++k) {
    const size_t g = shown[k];
    const int colour = static_cast<int>(by_plan ? g : k);
    bool first = true;
    for (const auto& r : runs) {
      // Cell directories are <group>/seed-<s>.
      if (fs::path(r.dir).parent_path().filename().string() != plan.groups[g]) continue;
      const std::string label = first ? plan.groups[g] : plan.groups[g] + " (" + r.id + ")";
      out.push_back({&r, label, figures::compare_color(colour), first});
      first = false;
    }
  }
  return out;
}

// One point per finished group at (x, y) of its means, coloured as its curves.
std::vector<figures::ScatterPoint> group_points(const std::vector<GroupSummary>& groups,
                                                Stat GroupSummary::*x, Stat GroupSummary::*y) {
  std::vector<figures::ScatterPoint> points;
  for (size_t i = 0; i < groups.size(); ++i)
    if (groups[i].finished)
      points.push_back({groups[i].group, (groups[i].*x).mean, (groups[i].*y).mean,
                        figures::compare_color(static_cast<int>(i))});
  return points;
}

struct Report {
  std::ostringstream md;
  std::vector<std::string> figures;  // stems written
  std::string dir;
  void figure(const fig::Figure& f, const std::string& stem, const std::string& caption,
              double width_in = 7.0) {
    export_report_figure(f, dir, stem, width_in);
    figures.push_back(stem);
    md << "![" << caption << "](" << stem << ".png)\n\n"
       << caption << " ([PDF](" << stem << ".pdf), [data CSV](" << stem << ".csv))\n\n";
  }
};

void condor_section(Report& r, const SweepPlan& plan, const std::vector<GroupSummary>& g,
                    const std::vector<RunDirectory>& runs) {
  r.md << "The window is causal (keys i-W+1..i) with masked edges, so no position sees the "
          "token it predicts; the seed's centred window leaks it. dot-rope and dot-alibi are dot "
          "with model.position rope / alibi instead of the learned table: the relative-position "
          "baselines. ky-w4 .. ky-w32 vary the window W (ky itself is W 16).\n\n## Figures\n\n";
  r.figure(figures::loss_overlay(
               group_curves(plan, runs, {"ky", "window", "dot", "dot-rope", "dot-alibi"}),
               "fortunes, character LM"),
           "loss",
           "Eval loss, train loss (mean since the previous evaluation) over steps; a group's first "
           "seed solid, later ones dashed.");
  if (find_group(g, "ky-w4"))
    r.figure(figures::loss_overlay(group_curves(plan, runs, {"ky-w4", "ky-w8", "ky", "ky-w32"}),
                                   "fortunes, ky window ablation (W 4, 8, 16, 32)"),
             "window_ablation",
             "ky at window W 4, 8, 16 (the ky arm) and 32: eval and train loss.");
  for (const auto& run : runs)
    if (fs::path(run.dir).parent_path().filename() == "ky" && run.finished) {
      r.figure(figures::connection_curves_figure(run, ""), "connections",
               "Learned connection functions g_h(t), one line per head, of " +
                   fs::path(run.dir).parent_path().filename().string() + "/" + run.id +
                   " at its last step (t = 1 is the current token: a curve rising toward it "
                   "prefers recent tokens).");
      break;
    }
}

void conn_section(Report& r, const SweepPlan& plan, const std::vector<GroupSummary>& g,
                  const std::vector<RunDirectory>& runs) {
  r.md << "The task is associative recall (one lookup per query): attnlab has no multi-step "
          "lookup task, so this tests the lookup the seed's multi-step task is built from.\n\n";
  // rho(I + C) per control: final (summary.json) and maximum over training (conn.json).
  r.md << "### rho(I + C) under each stability control\n\n| run | control | final rho(I+C) | "
          "max rho over training | final norm ‖I+C‖_2 | control events "
          "|\n|---|---|---|---|---|---|\n";
  for (const auto& run : runs) {
    if (!run.finished || !run.summary.contains("conn")) continue;
    const auto& c = run.summary["conn"];
    double max_rho = 0;
    const fs::path cj = fs::path(run.dir) / "conn.json";
    if (fs::exists(cj))
      for (const auto& pt : read_json_file(cj).value("spectral_radius_estimate", json::array()))
        if (pt.at(0).get<double>() >= 1) max_rho = std::max(max_rho, pt.at(1).get<double>());
    r.md << "| " << fs::path(run.dir).parent_path().filename().string() << "/" << run.id << " | "
         << c.value("control", std::string("?")) << " | " << num(c.value("spectral_radius", 0.0), 3)
         << " | " << num(max_rho, 3) << " | " << num(c.value("spectral_norm", 0.0), 3) << " | "
         << c.value("control_events", 0) << " |\n";
  }
  r.md << "\n(max over steps >= 1: step 0 is the initial C.) Only norm-bound guarantees "
          "rho(I+C) <= r; the seed's spec control rescales C, which moves the eigenvalues of "
          "I + C toward 1, never below.\n\n## Figures\n\n";
  r.figure(figures::loss_overlay(group_curves(plan, runs, {}), "recall"), "loss",
           "Eval loss and accuracy over steps, every seed.");
  r.figure(figures::spectral_radius_figure(
               group_curves(plan, runs, {"conn-norm-bound", "conn-none", "conn-spec"}), ""),
           "spectral_radius",
           "rho(I + C) over training under each control (dotted: 1; dashed: the limit r).");
}

void kernel_section(Report& r, const SweepPlan& plan, const std::vector<GroupSummary>& g,
                    const std::vector<RunDirectory>& runs) {
  const auto* dot = find_group(g, "dot");
  r.md << "## Parameters\n\n| mechanism | d_model | attention, one layer | attention, all "
          "layers | whole model | attention vs dot | model vs dot "
          "|\n|---|---|---|---|---|---|---|\n";
  for (const auto& s : g) {
    int layers = 1, d = 0;
    for (const auto& c : plan.cells)
      if (c.group == s.group) {
        layers = c.config.model.layers;
        d = c.config.model.d_model;
        break;
      }
    const double a = s.attention_parameters.mean, p = s.parameters.mean;
    auto ratio = [](double x, double y) { return y > 0 ? num(x / y, 2) + "x" : "-"; };
    r.md << "| " << s.group << " | " << d << " | " << (s.finished ? num(a / layers, 0) : "-")
         << " | " << (s.finished ? num(a, 0) : "-") << " | " << (s.finished ? num(p, 0) : "-")
         << " | " << (dot && s.finished ? ratio(a, dot->attention_parameters.mean) : "-") << " | "
         << (dot && s.finished ? ratio(p, dot->parameters.mean) : "-") << " |\n";
  }
  r.md << "\n(gaussian runs at d_model 32 and batch 64, as the paper had to shrink it.)\n\n"
          "## Figures\n\n";
  r.figure(figures::loss_overlay(group_curves(plan, runs, {}), "Fashion-MNIST ViT"), "loss",
           "Loss and test accuracy over steps, every seed.");
  const auto pts = group_points(g, &GroupSummary::parameters, &GroupSummary::eval_accuracy);
  if (!pts.empty())
    r.figure(figures::scatter_figure("params_accuracy", "", "parameters (whole model)",
                                     "test accuracy (mean over seeds)", pts),
             "params_accuracy", "Test accuracy against the whole model's parameter count.", 3.5);
}

void neural_section(Report& r, const SweepPlan& plan, const std::vector<GroupSummary>& g,
                    const std::vector<RunDirectory>& runs) {
  r.md << "## Speed and memory (neural over dot)\n\n| task | time per step | peak RSS | "
          "parameters |\n|---|---|---|---|\n";
  for (const char* task : {"fortunes", "fmnist"}) {
    const auto* n = find_group(g, std::string(task) + "-neural");
    const auto* d = find_group(g, std::string(task) + "-dot");
    if (!n || !d || !n->finished || !d->finished) continue;
    r.md << "| " << task << " | " << num(d->steps_per_second.mean / n->steps_per_second.mean, 2)
         << "x | " << num(n->peak_rss_mib.mean / d->peak_rss_mib.mean, 2) << "x | "
         << num(n->parameters.mean / d->parameters.mean, 3) << "x |\n";
  }
  r.md << "\nTime per step is the inverse of steps/s (evaluations included); peak RSS is each "
          "run's own process (the dataset included), runs one after another with one thread "
          "each.\n\n## Figures\n\n";
  r.figure(figures::loss_overlay(group_curves(plan, runs, {"fortunes-neural", "fortunes-dot"}),
                                 "fortunes, character LM"),
           "loss_fortunes", "fortunes: eval and train loss; first seed solid, later ones dashed.");
  r.figure(figures::loss_overlay(group_curves(plan, runs, {"fmnist-neural", "fmnist-dot"}),
                                 "Fashion-MNIST ViT"),
           "loss_fmnist", "Fashion-MNIST: loss and test accuracy, every seed.");
  const auto pts = group_points(g, &GroupSummary::peak_rss_mib, &GroupSummary::steps_per_second);
  if (!pts.empty())
    r.figure(figures::scatter_figure("speed_memory", "", "peak RSS (MiB)", "steps/s", pts),
             "speed_memory", "Training speed against peak memory, mean over seeds.", 3.5);
}

constexpr const char* kReproduceFooter =
    R"(Progress goes to stderr; the table and the report's path (or with --json report.json plus
"report") to stdout. A run that diverged is still reported, and the command then exits 3.)";

// `arg`, quoted for a POSIX shell when it needs it.
std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_./=+,:@%") == std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The command that continues this reproduction: the same arguments (finished runs are skipped,
// checkpointed ones resume).
std::string continue_command(const ReproduceArgs& a) {
  std::string cmd = "attnlab reproduce --paper " + shell_quote(a.paper);
  if (a.quick) cmd += " --quick";
  if (a.seeds > 0) cmd += " --seeds " + std::to_string(a.seeds);
  cmd += " --out " + shell_quote(a.out);
  if (!a.configs.empty()) cmd += " --configs " + shell_quote(a.configs);
  if (a.threads > 0) cmd += " --threads " + std::to_string(a.threads);
  if (a.jobs > 1) cmd += " -j " + std::to_string(a.jobs);
  if (a.json) cmd += " --json";
  return cmd;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

}  // namespace

CLI::App* add_reproduce_command(CLI::App& app, ReproduceArgs& a) {
  auto* cmd = app.add_subcommand(
      "reproduce",
      "Run a seed paper's headline comparison and write a report (Markdown + figures)");
  cmd->add_option("--paper", a.paper, "condor | conn | kernel | neural")->required();
  cmd->add_flag("--quick", a.quick,
                "Tiny runs (about a minute): checks the pipeline, not the claim");
  cmd->add_option("--seeds", a.seeds, "Seeds per arm (default: repro.json's, 3)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--out", a.out, "Report directory (runs under OUT/runs)")->required();
  cmd->add_option("--configs", a.configs,
                  "Repro configs directory (default: the installed ones, see attnlab --version)");
  cmd->add_option("--threads", a.threads, "Torch threads per run (default: the configs', 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--jobs,-j", a.jobs,
                  "Runs at a time (default 1; more perturbs the steps/s and memory columns)")
      ->check(CLI::Range(1, 64));
  cmd->add_flag("--json", a.json,
                "Print report.json (plus the report's path) instead of the table");
  return with_footer(cmd, kReproduceFooter);
}

int run_reproduce_command(const ReproduceArgs& a) {
  SweepPlan plan;
  json manifest;
  try {
    if (std::find(kPapers.begin(), kPapers.end(), a.paper) == kPapers.end())
      throw Error("--paper " + a.paper + ": allowed: condor, conn, kernel, neural");
    fs::path root = a.configs;
    if (root.empty()) {
      root = find_data_path("configs/repro");
      if (root.empty()) {
        std::string tried;
        for (const auto& p : data_path_candidates("configs/repro")) tried += " " + p;
        throw Error("cannot find the reproduction configs (tried" + tried +
                    "); give --configs DIR");
      }
    }
    const fs::path dir = root / a.paper;
    manifest = read_json_file(dir / "repro.json");
    std::vector<SweepArm> arms;
    std::vector<std::string> names;
    for (const auto& arm : manifest.at("arms")) {
      SweepArm s;
      s.name = arm.at("name").get<std::string>();
      const fs::path file = dir / arm.at("config").get<std::string>();
      s.config = read_json_file(file);
      // The arm's own keys (a window, a position), then --quick's (the manifest's, the arm's).
      if (arm.contains("set"))
        for (const auto& [key, value] : arm["set"].items()) set_dotted(s.config, key, value);
      if (a.quick)
        for (const json* overrides : {static_cast<const json*>(&manifest), &arm})
          if (overrides->contains("quick"))
            for (const auto& [key, value] : (*overrides)["quick"].items())
              set_dotted(s.config, key, value);
      names.push_back(s.name);
      arms.push_back(std::move(s));
    }
    const int seeds = a.seeds > 0 ? a.seeds : manifest.value("seeds", 3);
    plan = plan_sweep(arms, {}, seeds);
    // Equal step budgets per task: arms trained for different lengths are no comparison.
    std::map<std::string, const SweepCell*> first_of_task;
    for (const auto& c : plan.cells) {
      const auto [it, fresh] = first_of_task.emplace(c.config.task.name, &c);
      const SweepCell& f = *it->second;
      if (!fresh && c.config.train.steps != f.config.train.steps)
        throw Error(dir.string() + "/repro.json: arm \"" + c.arm + "\" trains " +
                    std::to_string(c.config.train.steps) + " steps (train.steps) but arm \"" +
                    f.arm + "\" trains " + std::to_string(f.config.train.steps) +
                    " on the same task (" + c.config.task.name +
                    "): every arm of a task must train the same number of steps");
    }
    validate_claims(manifest.value("claims", json()), names);
  } catch (const std::exception& e) {
    std::cerr << "attnlab reproduce: " << e.what() << "\n";
    return kExitUsage;
  }

  const fs::path out = a.out, runs_dir = out / "runs";
  SweepRunOptions o;
  o.out_dir = runs_dir.string();
  o.threads = a.threads;
  o.checkpoint_every = a.quick ? 0 : 250;  // a long reproduction resumes mid-run
  o.jobs = a.jobs;
  CellExits exits;
  o.runner = [&](const SweepCell& c, const HeadlessOptions& h) {
    return exits.run(c, h, true, a.jobs);
  };
  ProgressPrinter progress;
  o.log = [&](const std::string& line) { progress(line); };
  const auto start = std::chrono::steady_clock::now();
  SweepOutcome outcome;
  // Ctrl-C, kill and a closed terminal: the running runs checkpoint, no new run starts, and the
  // message says what is kept and how to continue.
  install_stop_signals();
  try {
    outcome = run_sweep(plan, o);
  } catch (const Interrupted& i) {
    progress.finish();
    const int sig = i.signal;
    std::cerr << "attnlab reproduce: interrupted by "
              << (sig == SIGINT    ? "SIGINT"
                  : sig == SIGTERM ? "SIGTERM"
                  : sig == SIGHUP  ? "SIGHUP"
                                   : "a signal")
              << "; the finished runs and a checkpoint of each interrupted run are kept under "
              << fs::absolute(runs_dir).string()
              << " (no report written yet). Continue with (finished runs are skipped, "
                 "interrupted ones resume):\n  "
              << continue_command(a) << "\n";
    return 128 + sig;
  } catch (const std::exception& e) {
    std::cerr << "attnlab reproduce: " << e.what() << "\n";
    return exits.code_for_failure();
  }
  progress.finish();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  try {
    std::vector<RunDirectory> runs;
    const auto groups = aggregate_sweep(plan, runs_dir.string(), &runs);
    Report r;
    r.dir = out.string();
    r.md << "# " << manifest.value("title", a.paper) << "\n\n";
    r.md << "`attnlab reproduce --paper " << a.paper << (a.quick ? " --quick" : "") << " --seeds "
         << plan.seeds << "` — " << utc_now() << ", " << version_string() << ", "
         << std::thread::hardware_concurrency() << " cores; " << plan.cells.size()
         << (a.jobs > 1 ? " runs, " + std::to_string(a.jobs) + " at a time"
                        : std::string(" runs one after another"))
         << ", " << (a.threads > 0 ? a.threads : 1)
         << " torch thread(s) each (this invocation: " << outcome.ran << " trained, "
         << outcome.resumed << " resumed, " << outcome.skipped << " already done; "
         << num(wall / 60, 1) << " min). Configs: `assets/configs/repro/" << a.paper
         << "/`; runs: `runs/`.\n\n";
    if (a.quick)
      r.md << "> **Quick mode**: tens of steps on tiny models. This checks that the pipeline "
              "works; the numbers below say nothing about the paper's claims.\n\n";
    r.md << "## Results (mean ± sample sd over seeds)\n\n" << group_table_markdown(groups) << "\n";
    const auto claims = evaluate_claims(manifest.value("claims", json()), groups, runs);
    r.md << "## Claims\n\nEach claim as the paper states it, its number, ours (mean ± sd over "
            "seeds), whether the setting is the paper's, and the verdict (\"not resolved\": the "
            "difference of the means is within the seeds' spread).\n\n"
         << claims_markdown(claims) << "\n";
    if (a.paper == "condor") condor_section(r, plan, groups, runs);
    if (a.paper == "conn") conn_section(r, plan, groups, runs);
    if (a.paper == "kernel") kernel_section(r, plan, groups, runs);
    if (a.paper == "neural") neural_section(r, plan, groups, runs);
    r.md << "Steps/s were measured on a shared machine and drift by ±20% between runs; compare "
            "them within one report.\n";
    const json table = group_table_json(groups);
    const json report = {{"paper", a.paper},
                         {"quick", a.quick},
                         {"seeds", plan.seeds},
                         {"groups", table},
                         {"claims", claims_json(claims)},
                         {"figures", r.figures},
                         {"wall_seconds", wall}};
    fig::write_files_atomically({{(out / "report.md").string(), r.md.str()},
                                 {(out / "report.json").string(), report.dump(2) + "\n"}});
    if (a.json) {
      json printed = report;
      printed["report"] = (out / "report.md").string();
      std::cout << printed.dump(2) << "\n";
    } else {
      std::cout << group_table_markdown(groups) << "report: " << (out / "report.md").string()
                << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "attnlab reproduce: writing the report: " << e.what() << "\n";
    return kExitRunFailed;
  }
  return outcome.diverged ? kExitDiverged : kExitOk;
}

}  // namespace attn
