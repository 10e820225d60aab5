// `attnlab analyze`: interventions on a saved run's heads (ablation, head importance,
// activation patching), the numbers the Interventions panel shows, from the checkpoint.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/cli/cli.h"
#include "app/figures/catalog/figures.h"
#include "app/figures/runs/intervention_figures.h"
#include "core/base/error.h"
#include "core/base/version.h"
#include "core/models/memory_estimate.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/recording/saved_run.h"
#include "render/plot/export/figure_export.h"

namespace attn {
namespace {

constexpr const char* kAnalyzeFooter =
    R"(Give one of --ablate, --importance or --patch. Ablation replaces a head's output (before
the output projection) by 0 (--mode zero), its mean over the evaluated batches per position
(mean) or uniform attention over the keys it may see (uniform); weights are never changed.
--importance ablates each head alone. The eval batches are the run's own (train.eval_batches,
or the first --batches of them), the same for every head, so an --importance row equals
--ablate L.H with the same mode. --patch runs the corrupted probe with one head's output from
the clean probe's run and reports the share of the metric's clean-minus-corrupted difference
that comes back: the metric is logit(clean answer) - logit(corrupted answer) at the last
position ("logit_diff"), or the clean answer's cross-entropy ("loss") when both probes give
the same answer. --clean defaults to the run's probe, --corrupt to the task's corrupted twin
(recall rebinds the last queried key; copy and reverse change the copied symbol).
--figure FILE writes the heatmap (.pdf, .svg, .png, .csv) with its CSV and JSON sidecars.
--json prints: --ablate {"baseline": {"eval_loss", "eval_accuracy"}, "ablated": {...},
"heads": [{"layer", "head"}], "mode", "batches", "step"}; --importance {"baseline", "heads":
[{"layer", "head", "eval_loss", "eval_accuracy"}], "mode", "batches", "step", "seconds"};
--patch {"clean_metric", "corrupt_metric", "metric", "clean_answer", "corrupt_answer",
"clean", "corrupt", "heads": [{"layer", "head", "restored"}], "positions": [{"layer", "head",
"position", "token", "restored"}], "step"}.)";

nlohmann::json figures_json(const EvalFigures& e) {
  return {{"eval_loss", e.loss}, {"eval_accuracy", e.accuracy}};
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void write_figure(const AnalyzeArgs& a, const fig::Figure& figure, const RunDirectory& run,
                  int64_t step) {
  const fig::ExportRequest r = figure_file_request(a.figure, a.request);
  fig::Provenance p;
  p.program_version = version_string();
  p.run_id = run.id;
  p.seed = run.config.seed;
  p.step = step;
  for (const auto& m : run.config.model.attention)
    if (p.mechanism.find(m) == std::string::npos)
      p.mechanism += (p.mechanism.empty() ? "" : "+") + m;
  for (const std::string& f : fig::export_figure(figure, r, p).files)
    std::cerr << "wrote " << f << "\n";
}

nlohmann::json ablation_json(const AblationResult& r, int64_t step) {
  nlohmann::json heads = nlohmann::json::array();
  for (const HeadRef& h : r.heads) heads.push_back({{"layer", h.layer}, {"head", h.head}});
  return {{"baseline", figures_json(r.baseline)},
          {"ablated", figures_json(r.ablated)},
          {"heads", heads},
          {"mode", ablation_mode_name(r.mode)},
          {"batches", r.batches},
          {"step", step}};
}

nlohmann::json importance_json(const ImportanceTable& t, double seconds) {
  nlohmann::json heads = nlohmann::json::array();
  for (int l = 0; l < t.layers; ++l)
    for (int h = 0; h < t.heads; ++h) {
      const size_t i = static_cast<size_t>(l) * t.heads + h;
      heads.push_back({{"layer", l},
                       {"head", h},
                       {"eval_loss", static_cast<double>(t.loss[i])},
                       {"eval_accuracy", static_cast<double>(t.accuracy[i])}});
    }
  return {{"baseline", figures_json(t.baseline)},
          {"heads", heads},
          {"mode", ablation_mode_name(t.mode)},
          {"batches", t.batches},
          {"step", t.step},
          {"seconds", seconds}};
}

nlohmann::json patch_json(const PatchTable& t) {
  nlohmann::json heads = nlohmann::json::array(), positions = nlohmann::json::array();
  for (int l = 0; l < t.layers; ++l)
    for (int h = 0; h < t.heads; ++h) {
      heads.push_back({{"layer", l},
                       {"head", h},
                       {"restored", t.restored[static_cast<size_t>(l) * t.heads + h]}});
      for (int p = 0; p < t.positions; ++p) {
        const float v = t.restored_at[(static_cast<size_t>(l) * t.heads + h) * t.positions + p];
        if (!std::isfinite(v)) continue;  // a classifier's CLS is not patched alone
        positions.push_back({{"layer", l},
                             {"head", h},
                             {"position", p},
                             {"token", p < static_cast<int>(t.tokens.size()) ? t.tokens[p] : ""},
                             {"restored", v}});
      }
    }
  return {{"metric", t.metric},
          {"clean_metric", t.clean_metric},
          {"corrupt_metric", t.corrupt_metric},
          {"clean_answer", t.clean_answer},
          {"corrupt_answer", t.corrupt_answer},
          {"clean", t.tokens},
          {"corrupt", t.corrupt_tokens},
          {"differing_positions", t.differing},
          {"heads", heads},
          {"positions", positions},
          {"step", t.step}};
}

void print_grid(const std::string& title, int layers, int heads,
                const std::function<std::string(int, int)>& cell) {
  std::cout << title << "\n        ";
  for (int h = 0; h < heads; ++h) std::printf("%9s", ("head " + std::to_string(h)).c_str());
  std::fflush(stdout);
  std::cout << "\n";
  for (int l = 0; l < layers; ++l) {
    std::printf("layer %-2d", l);
    for (int h = 0; h < heads; ++h) std::printf("%9s", cell(l, h).c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace

CLI::App* add_command(CLI::App& app, AnalyzeArgs& a) {
  auto* cmd = app.add_subcommand(
      "analyze", "Ablate heads, rank them by importance, or patch activations of a saved run");
  cmd->add_option("--run", a.run, "Run directory (attnlab train --out)")->required();
  cmd->add_option("--ablate", a.ablate, "Heads to ablate together: LAYER.HEAD[,LAYER.HEAD...]");
  cmd->add_flag("--importance", a.importance, "Ablate each head alone: a layer x head table");
  cmd->add_flag("--patch", a.patch, "Activation patching from --clean into --corrupt");
  cmd->add_option("--mode", a.mode, "Ablation: zero, mean or uniform (default zero)");
  // 0 is the default's "all" inside AnalyzeArgs, never a value to give: --batches 0 would run
  // no batch, so it is refused like -1 (CLI11 checks only a given value).
  cmd->add_option("--batches", a.batches,
                  "Eval batches to use, 1 or more (default: all of the run's, train.eval_batches)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            long long n = 0;
            size_t used = 0;
            try {
              n = std::stoll(v, &used);
            } catch (const std::exception&) {
            }
            if (used == v.size() && n >= 1) return "";
            return "got " + v +
                   "; give 1 or more eval batches (leave --batches out to use all of the run's)";
          },
          ""));
  cmd->add_option("--clean", a.clean, "--patch: the clean probe (default: the run's probe)");
  cmd->add_option("--corrupt", a.corrupt,
                  "--patch: the corrupted probe (default: the task's corrupted twin of --clean)");
  add_figure_output_options(
      cmd, a,
      {"--importance or --patch: write the heatmap to FILE (.pdf, .svg, .png, .csv)",
       "--figure PNG resolution (30..2400, default 300)", "Print the result as one JSON document"});
  return with_footer(cmd, kAnalyzeFooter);
}

int run_command(const AnalyzeArgs& a) {
  return run_reporting_errors("analyze", [&] {
    const int modes = (a.ablate.empty() ? 0 : 1) + (a.importance ? 1 : 0) + (a.patch ? 1 : 0);
    if (modes != 1)
      throw Error("give exactly one of --ablate L.H[,L.H...], --importance or --patch");
    const AblationMode mode = parse_ablation_mode(a.mode, "--mode");
    if (a.batches < 0) throw Error("--batches " + std::to_string(a.batches) + ": must be >= 1");
    if (!a.patch && (!a.clean.empty() || !a.corrupt.empty()))
      throw Error("--clean and --corrupt go with --patch");
    if (!a.figure.empty() && !a.ablate.empty())
      throw Error("--figure draws --importance or --patch (an ablation is two numbers)");
    if (!a.figure.empty()) {  // check the request before the (slower) checkpoint load
      fig::ExportRequest r = a.request;
      r.path = a.figure;
      fig::validate(r);
    }
    const RunDirectory run = read_run_directory(a.run);
    SavedSession saved(run);
    check_interventions_apply(saved.config());
    // Its eval batches with every layer's weights kept: refused before they are allocated.
    require_memory_for(saved.config(), task_shape(saved.config().task), MemoryUse::analyze,
                       "analyze");
    TrainingSession& session = saved.session();
    const int layers = saved.config().model.layers, head_count = saved.config().model.heads;
    if (a.batches > saved.eval_batches())
      throw Error("--batches " + std::to_string(a.batches) + ": the run has " +
                  std::to_string(saved.eval_batches()) + " eval batches (train.eval_batches)");
    nlohmann::json out;
    if (!a.ablate.empty()) {
      const auto heads = parse_head_list(a.ablate, layers, head_count, "--ablate");
      const AblationResult r = ablate_session(session, heads, mode, a.batches);
      out = ablation_json(r, saved.step());
      if (!a.json)
        std::cout << "step " << saved.step() << ", " << r.batches << " eval batches, "
                  << ablation_mode_name(mode) << " ablation of " << head_list_text(heads) << "\n"
                  << "  baseline: loss " << fixed(r.baseline.loss, 4) << ", accuracy "
                  << fixed(100 * r.baseline.accuracy, 2) << "%\n"
                  << "  ablated:  loss " << fixed(r.ablated.loss, 4) << ", accuracy "
                  << fixed(100 * r.ablated.accuracy, 2) << "%\n";
    } else if (a.importance) {
      const auto start = std::chrono::steady_clock::now();
      const ImportanceTable t = session_importance(session, mode, a.batches);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      out = importance_json(t, seconds);
      if (!a.json) {
        std::cout << "step " << t.step << ", " << t.batches << " eval batches, "
                  << ablation_mode_name(mode) << " ablation of each head, " << fixed(seconds, 1)
                  << " s\nbaseline: loss " << fixed(t.baseline.loss, 4) << ", accuracy "
                  << fixed(100 * t.baseline.accuracy, 2) << "%\n";
        print_grid("eval loss change (nats):", t.layers, t.heads,
                   [&](int l, int h) { return fixed(t.loss_change(l, h), 3); });
        print_grid("eval accuracy change (points):", t.layers, t.heads,
                   [&](int l, int h) { return fixed(100 * t.accuracy_change(l, h), 2); });
      }
      if (!a.figure.empty()) write_figure(a, figures::importance_figure(t), run, t.step);
    } else {
      const PatchProbes probes = patch_probes(session, a.clean, a.corrupt, "--clean", "--corrupt");
      const PatchTable t = session_patch(session, probes);
      if (t.clean_metric == t.corrupt_metric)
        throw Error("the clean and corrupted probes give the same " + t.metric + " (" +
                    fixed(t.clean_metric, 4) +
                    "): there is no difference for a head to restore; corrupt a token the "
                    "answer depends on");
      out = patch_json(t);
      if (!a.json) {
        std::cout << "step " << t.step << ", metric " << t.metric << ": clean "
                  << fixed(t.clean_metric, 4) << " (answer " << t.clean_answer << "), corrupted "
                  << fixed(t.corrupt_metric, 4) << " (answer " << t.corrupt_answer << ")\n";
        print_grid("share of the difference each head restores:", t.layers, t.heads,
                   [&](int l, int h) {
                     return fixed(t.restored[static_cast<size_t>(l) * t.heads + h], 3);
                   });
      }
      if (!a.figure.empty()) write_figure(a, figures::patch_figure(t), run, t.step);
    }
    if (!all_finite(out))
      throw Error("the result holds a value that is not finite (the model diverged?)");
    if (a.json) std::cout << out.dump(2) << "\n";
    return kExitOk;
  });
}

}  // namespace attn
