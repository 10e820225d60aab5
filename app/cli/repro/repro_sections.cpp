#include "app/cli/repro/repro_sections.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <set>

#include "app/cli/cli.h"
#include "app/cli/compare/cli_compare.h"
#include "app/figures/runs/compare_figures.h"
#include "core/base/error.h"
#include "render/plot/colormap.h"

namespace attn {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const GroupSummary* find_group(const std::vector<GroupSummary>& g, const std::string& name) {
  for (const auto& s : g)
    if (s.group == name) return &s;
  return nullptr;
}

// Curves for every run of the given groups, one colour per group: its index in the plan, so a
// group keeps its colour across a report's figures, unless the palette's wrap would give two of
// this figure's groups one colour (Condor's 8 arms against Okabe-Ito's 7 gave ky and ky-w32 the
// same blue); then the groups' order in this figure.
std::vector<figures::CompareCurve> group_curves(const ReproPlan& plan, const ReproRuns& runs,
                                                const std::vector<std::string>& groups) {
  std::vector<size_t> shown;
  for (size_t g = 0; g < plan.arms.size(); ++g)
    if (groups.empty() ||
        std::find(groups.begin(), groups.end(), plan.arms[g].name) != groups.end())
      shown.push_back(g);
  std::set<int> slots;
  for (size_t g : shown) slots.insert(static_cast<int>(g) % render::okabe_ito_count());
  const bool by_plan = slots.size() == shown.size();
  std::vector<figures::CompareCurve> out;
  for (size_t k = 0; k < shown.size(); ++k) {
    const size_t g = shown[k];
    const int colour = static_cast<int>(by_plan ? g : k);
    bool first = true;
    const std::string& name = plan.arms[g].name;
    for (const RunDirectory* r : runs.of(name)) {
      const std::string label = first ? name : name + " (" + r->id + ")";
      out.push_back({r, label, figures::compare_color(colour), first});
      first = false;
    }
  }
  return out;
}

// A report's loss figure: each arm's seeds as their mean with the 95% interval of the mean shaded
// (five seeds of five arms as 25 lines hid every difference).
fig::Figure seed_band_overlay(const std::vector<figures::CompareCurve>& curves,
                              const std::string& title) {
  figures::CompareOptions options;
  options.seed_bands = figures::SeedBands::Ci95;
  return figures::loss_overlay(curves, title, options);
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

void condor_section(ReproReport& r, const ReproPlan& plan, const std::vector<GroupSummary>& g,
                    const ReproRuns& runs) {
  r.md << "The window is causal (keys i-W+1..i) with masked edges, so no position sees the "
          "token it predicts; the seed's centred window leaks it. dot-rope and dot-alibi are dot "
          "with model.position rope / alibi instead of the learned table: the relative-position "
          "baselines. ky-w4 .. ky-w32 vary the window W (ky itself is W 16).\n\n## Figures\n\n";
  r.figure(
      seed_band_overlay(group_curves(plan, runs, {"ky", "window", "dot", "dot-rope", "dot-alibi"}),
                        "fortunes, character LM"),
      "loss",
      "Eval loss, train loss (mean since the previous evaluation) over steps: each arm's mean "
      "over its seeds, the 95% interval of the mean shaded.");
  if (find_group(g, "ky-w4"))
    r.figure(seed_band_overlay(group_curves(plan, runs, {"ky-w4", "ky-w8", "ky", "ky-w32"}),
                               "fortunes, ky window ablation (W 4, 8, 16, 32)"),
             "window_ablation",
             "ky at window W 4, 8, 16 (the ky arm) and 32: eval and train loss, mean over seeds "
             "with the 95% interval shaded.");
  for (const RunDirectory* run : runs.of("ky"))
    if (run->finished) {
      r.figure(figures::connection_curves_figure(*run, ""), "connections",
               "Learned connection functions g_h(t), one line per head, of ky/" + run->id +
                   " at its last step (t = 1 is the current token: a curve rising toward it "
                   "prefers recent tokens).");
      break;
    }
}

void conn_section(ReproReport& r, const ReproPlan& plan, const std::vector<GroupSummary>& g,
                  const ReproRuns& runs) {
  r.md << "The task is associative recall (one lookup per query): attnlab has no multi-step "
          "lookup task, so this tests the lookup the seed's multi-step task is built from.\n\n";
  // rho(I + C) per control: final (summary.json) and maximum over training (conn.json).
  r.md << "### rho(I + C) under each stability control\n\n| run | control | final rho(I+C) | "
          "max rho over training | final norm ‖I+C‖_2 | control events "
          "|\n|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < runs.runs.size(); ++i) {
    const RunDirectory& run = runs.runs[i];
    if (!run.finished || !run.summary.contains("conn")) continue;
    const auto& c = run.summary["conn"];
    double max_rho = 0;
    const fs::path cj = fs::path(run.dir) / "conn.json";
    if (fs::exists(cj))
      for (const auto& pt : read_json_file(cj).value("spectral_radius_estimate", json::array()))
        if (pt.at(0).get<double>() >= 1) max_rho = std::max(max_rho, pt.at(1).get<double>());
    r.md << "| " << runs.group_of[i] << "/" << run.id << " | "
         << c.value("control", std::string("?")) << " | "
         << fixed_number(c.value("spectral_radius", 0.0), 3) << " | " << fixed_number(max_rho, 3)
         << " | " << fixed_number(c.value("spectral_norm", 0.0), 3) << " | "
         << c.value("control_events", 0) << " |\n";
  }
  r.md << "\n(max over steps >= 1: step 0 is the initial C.) Only norm-bound guarantees "
          "rho(I+C) <= r; the seed's spec control rescales C, which moves the eigenvalues of "
          "I + C toward 1, never below.\n\n## Figures\n\n";
  r.figure(seed_band_overlay(group_curves(plan, runs, {}), "recall"), "loss",
           "Eval loss and accuracy over steps: mean over seeds, the 95% interval shaded.");
  r.figure(figures::spectral_radius_figure(
               group_curves(plan, runs, {"conn-norm-bound", "conn-none", "conn-spec"}), ""),
           "spectral_radius",
           "rho(I + C) over training under each control (dotted: 1; dashed: the limit r).");
}

void kernel_section(ReproReport& r, const ReproPlan& plan, const std::vector<GroupSummary>& g,
                    const ReproRuns& runs) {
  const auto* dot = find_group(g, "dot");
  r.md << "## Parameters\n\n| mechanism | d_model | attention, one layer | attention, all "
          "layers | whole model | attention vs dot | model vs dot "
          "|\n|---|---|---|---|---|---|---|\n";
  for (const auto& s : g) {
    int layers = 1, d = 0;
    for (const auto& arm : plan.arms)
      if (arm.name == s.group) {
        const ExperimentConfig c = parse_config(arm.config, arm.name);
        layers = c.model.layers;
        d = c.model.d_model;
        break;
      }
    const double a = s.attention_parameters.mean, p = s.parameters.mean;
    auto ratio = [](double x, double y) { return y > 0 ? fixed_number(x / y, 2) + "x" : "-"; };
    r.md << "| " << s.group << " | " << d << " | "
         << (s.finished ? fixed_number(a / layers, 0) : "-") << " | "
         << (s.finished ? fixed_number(a, 0) : "-") << " | "
         << (s.finished ? fixed_number(p, 0) : "-") << " | "
         << (dot && s.finished ? ratio(a, dot->attention_parameters.mean) : "-") << " | "
         << (dot && s.finished ? ratio(p, dot->parameters.mean) : "-") << " |\n";
  }
  r.md << "\n(gaussian runs at d_model 32 and batch 64, as the paper had to shrink it.)\n\n";
  if (!runs.paper_size.empty()) {
    const json& size = plan.manifest["paper_size"];
    r.md << "### At the paper's size, by formula\n\n"
         << size.value("note", std::string())
         << ". Counted by core/models/model_size.h, whose formula equals the built model's count "
            "(tests/core/test_model.cpp).\n\n| mechanism | attention, all layers | whole model | "
            "whole model vs dot |\n|---|---|---|---|\n";
    const auto dot_size = runs.paper_size.find("dot");
    for (const auto& arm : plan.arms) {
      const auto it = runs.paper_size.find(arm.name);
      if (it == runs.paper_size.end()) continue;
      r.md << "| " << arm.name << " | " << it->second.attention << " | " << it->second.total
           << " | "
           << (dot_size != runs.paper_size.end()
                   ? fixed_number(static_cast<double>(it->second.total) / dot_size->second.total,
                                  3) +
                         "x"
                   : std::string("-"))
           << " |\n";
    }
    r.md << "\n";
  }
  r.md << "## Figures\n\n";
  r.figure(seed_band_overlay(group_curves(plan, runs, {}), "Fashion-MNIST ViT"), "loss",
           "Loss and test accuracy over steps: mean over seeds, the 95% interval shaded.");
  const auto pts = group_points(g, &GroupSummary::parameters, &GroupSummary::eval_accuracy);
  if (!pts.empty())
    r.figure(figures::scatter_figure("params_accuracy", "", "parameters (whole model)",
                                     "test accuracy (mean over seeds)", pts),
             "params_accuracy", "Test accuracy against the whole model's parameter count.", 3.5);
}

void neural_section(ReproReport& r, const ReproPlan& plan, const std::vector<GroupSummary>& g,
                    const ReproRuns& runs) {
  r.md << "## Figures\n\n";
  r.figure(seed_band_overlay(
               group_curves(plan, runs,
                            {"fortunes-neural", "fortunes-neural-shared", "fortunes-neural-d16",
                             "fortunes-neural-nodown", "fortunes-dot"}),
               "fortunes, character LM"),
           "loss_fortunes",
           "fortunes: eval and train loss, mean over seeds with the 95% interval shaded.");
  r.figure(seed_band_overlay(group_curves(plan, runs, {"fmnist-neural", "fmnist-dot"}),
                             "Fashion-MNIST ViT"),
           "loss_fmnist",
           "Fashion-MNIST: loss and test accuracy, mean over seeds with the 95% interval shaded.");
}

}  // namespace

void ReproReport::figure(const fig::Figure& f, const std::string& stem, const std::string& caption,
                         double width_in) {
  export_report_figure(f, dir, stem, width_in);
  figures.push_back(stem);
  md << "![" << caption << "](" << stem << ".png)\n\n"
     << caption << " ([PDF](" << stem << ".pdf), [data CSV](" << stem << ".csv))\n\n";
}

void paper_section(ReproReport& r, const ReproPlan& plan, const ReproRuns& runs,
                   const std::vector<GroupSummary>& groups) {
  if (plan.paper == "condor") condor_section(r, plan, groups, runs);
  if (plan.paper == "conn") conn_section(r, plan, groups, runs);
  if (plan.paper == "kernel") kernel_section(r, plan, groups, runs);
  if (plan.paper == "neural") neural_section(r, plan, groups, runs);
}

}  // namespace attn
