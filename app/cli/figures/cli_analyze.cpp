// `attnlab analyze`: interventions on a saved run's heads (ablation, head importance,
// activation patching), the numbers the Interventions panel shows, from the checkpoint.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/cli/cli.h"
#include "app/figures/catalog/figures.h"
#include "app/figures/runs/causal_figures.h"
#include "app/figures/runs/intervention_figures.h"
#include "core/base/decimal.h"
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
that comes back: the metric is logit(clean answer) - logit(corrupted answer) ("logit_diff"),
summed over the positions the task scores whose answer the twin changes ("read_positions" in the
JSON; a typed --corrupt: every scored position). With the task's twin the answers are the task's
own targets there (whatever the model predicts); with a typed --corrupt, or a twin that states
none, they are the model's top tokens, and the metric is the clean answer's cross-entropy
("loss") when those agree everywhere. --clean defaults to the run's probe, --corrupt to the
task's corrupted twin (mqar and recall rebind the last queried key; copy, reverse and
selective_copy change a copied symbol; induction_head the token after the earlier trigger;
parity, reverse_string and duplicate_string the first symbol). A clean-minus-corrupted
difference below 0.1 is refused (every share would be a ratio of noise) unless
--allow-small-difference.
--figure FILE writes the heatmap (.pdf, .svg, .png, .csv) with its CSV and JSON sidecars.
--json prints: --ablate {"baseline": {"eval_loss", "eval_accuracy"}, "ablated": {...},
"heads": [{"layer", "head"}], "mode", "batches", "step"}; --importance {"baseline", "heads":
[{"layer", "head", "eval_loss", "eval_accuracy"}], "mode", "batches", "step", "seconds"};
--patch {"clean_metric", "corrupt_metric", "metric", "clean_answer", "corrupt_answer",
"clean", "corrupt", "heads": [{"layer", "head", "restored"}], "positions": [{"layer", "head",
"position", "token", "restored"}], "step"}.

Causal analyses (docs/guide/analyze.md): --attribution estimates --patch for every head (and
with --by-position every head at every position) from one forward pass on --clean and one
forward and backward pass on --corrupt: (clean - corrupted head output) . d metric / d output,
the gradient taken on the corrupted run; it is printed beside --patch's value for the same
head, both as the share of the clean-minus-corrupted difference. --path-patch gives, for every
sender head and every receiver head of a later layer (or --receiver L.H), the share restored when
only the receiver's input takes the sender's clean-minus-corrupted write, everything else held
at the corrupted run (the receiver's query, key and value input together). --dla splits the
answer's logit at the last position of --clean (the model's top prediction) into the embedding's,
each head's, each layer's attention bias and each MLP's direct writes, through the final norm
with its scale frozen and the unembedding; they sum to "total" = the logit minus the final
norm's and the unembedding's biases ("held_out"). --logit-lens decodes the residual stream after
each block through the final norm and unembedding; its last layer is the model's output.
--json prints: --attribution {"metric", "clean", "corrupted", "clean_answer", "corrupt_answer",
"heads": [{"layer", "head", "attribution", "two_point", "patched"}], "positions" (--by-position):
[{"layer", "head", "position", "token", "attribution", "patched"}], "step"} ("clean" and
"corrupted" are the metric's values); --path-patch {"metric", "clean", "corrupted", "senders":
[{"layer", "head", "receivers": [{"layer", "head", "effect"}]}], "step"}; --dla {"answer",
"answer_logit", "total", "held_out", "components": [{"name", "value"}], "step"}; --logit-lens
{"answer", "model_answer_logprob", "layers": [{"layer", "answer_rank", "answer_logprob",
"top"}], "step"}.)";

nlohmann::json figures_json(const EvalFigures& e) {
  return {{"eval_loss", e.loss}, {"eval_accuracy", e.accuracy}};
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

// The probe pair's fields that the causal tables' JSON share (issue 48's contracts); --patch's
// older contract names the two metrics clean_metric and corrupt_metric.
template <class Table>
nlohmann::json probe_pair_json(const Table& t, const char* clean = "clean",
                               const char* corrupted = "corrupted") {
  return {{"metric", t.metric},
          {clean, t.clean_metric},
          {corrupted, t.corrupt_metric},
          {"clean_answer", t.clean_answer},
          {"corrupt_answer", t.corrupt_answer},
          {"read_positions", t.read_positions},
          {"step", t.step}};
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
  nlohmann::json out = probe_pair_json(t, "clean_metric", "corrupt_metric");
  out["clean"] = t.tokens;
  out["corrupt"] = t.corrupt_tokens;
  out["differing_positions"] = t.differing;
  out["heads"] = heads;
  out["positions"] = positions;
  return out;
}

// The share of a patch table's clean-minus-corrupted difference that `change` (metric units) is.
double share(double change, double clean, double corrupt) {
  return clean == corrupt ? std::nan("") : change / (clean - corrupt);
}

nlohmann::json attribution_json(const AttributionTable& a, const PatchTable& p, bool by_position) {
  nlohmann::json heads = nlohmann::json::array(), positions = nlohmann::json::array();
  for (int l = 0; l < a.layers; ++l)
    for (int h = 0; h < a.heads; ++h) {
      const size_t i = static_cast<size_t>(l) * a.heads + h;
      heads.push_back({{"layer", l},
                       {"head", h},
                       {"attribution", share(a.attribution[i], a.clean_metric, a.corrupt_metric)},
                       {"two_point", share(a.two_point[i], a.clean_metric, a.corrupt_metric)},
                       {"patched", p.restored[i]}});
      for (int q = 0; by_position && q < a.positions; ++q) {
        const float patched = p.restored_at[i * p.positions + q];
        if (!std::isfinite(patched)) continue;  // a classifier's CLS is not patched alone
        positions.push_back({{"layer", l},
                             {"head", h},
                             {"position", q},
                             {"token", q < static_cast<int>(a.tokens.size()) ? a.tokens[q] : ""},
                             {"attribution", share(a.attribution_at[i * a.positions + q],
                                                   a.clean_metric, a.corrupt_metric)},
                             {"patched", patched}});
      }
    }
  nlohmann::json out = probe_pair_json(a);
  out["heads"] = heads;
  if (by_position) out["positions"] = positions;
  return out;
}

nlohmann::json path_patch_json(const PathPatchTable& t) {
  nlohmann::json senders = nlohmann::json::array();
  const size_t R = t.receivers.size();
  for (int l = 0; l < t.layers; ++l)
    for (int h = 0; h < t.heads; ++h) {
      nlohmann::json receivers = nlohmann::json::array();
      for (size_t r = 0; r < R; ++r) {
        const double e = t.effect[(static_cast<size_t>(l) * t.heads + h) * R + r];
        if (std::isnan(e)) continue;  // no path: the receiver is not in a later layer
        receivers.push_back(
            {{"layer", t.receivers[r].layer}, {"head", t.receivers[r].head}, {"effect", e}});
      }
      if (!receivers.empty())
        senders.push_back({{"layer", l}, {"head", h}, {"receivers", receivers}});
    }
  nlohmann::json out = probe_pair_json(t);
  out["senders"] = senders;
  return out;
}

nlohmann::json dla_json(const LogitAttribution& d) {
  nlohmann::json components = nlohmann::json::array();
  for (const auto& [name, value] : d.components)
    components.push_back({{"name", name}, {"value", value}});
  return {{"answer", d.answer},     {"answer_logit", d.answer_logit}, {"total", d.total},
          {"held_out", d.held_out}, {"components", components},       {"step", d.step}};
}

nlohmann::json lens_json(const LogitLens& lens) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LogitLensRow& r : lens.layers)
    layers.push_back({{"layer", r.layer},
                      {"answer_rank", r.answer_rank},
                      {"answer_logprob", r.answer_logprob},
                      {"top", r.top}});
  return {{"answer", lens.answer},
          {"model_answer_logprob", lens.model_answer_logprob},
          {"layers", layers},
          {"step", lens.step}};
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
  cmd->add_flag("--attribution", a.attribution,
                "Attribution patching: the gradient estimate of --patch for every head, beside it");
  cmd->add_flag("--by-position", a.by_position, "--attribution: every head at every position too");
  cmd->add_flag("--path-patch", a.path_patch,
                "Path patching: each sender head's effect on each later receiver head's input");
  cmd->add_option("--receiver", a.receiver, "--path-patch: one receiver head, LAYER.HEAD");
  cmd->add_flag("--dla", a.dla,
                "Direct logit attribution of the answer at --clean's last position");
  cmd->add_flag("--logit-lens", a.logit_lens,
                "The residual stream after each block decoded through the final norm");
  cmd->add_option("--clean", a.clean,
                  "--patch, --attribution, --path-patch, --dla, --logit-lens: the clean probe "
                  "(default: the run's probe)");
  cmd->add_option("--corrupt", a.corrupt,
                  "--patch, --attribution, --path-patch: the corrupted probe (default: the task's "
                  "corrupted twin of --clean)");
  cmd->add_flag("--allow-small-difference", a.allow_small_difference,
                "--patch, --attribution, --path-patch: run even when the clean and corrupted "
                "metrics differ by less than " +
                    fixed_decimal(kMinPatchDifference, 2));
  add_figure_output_options(
      cmd, a,
      {"--importance, --patch, --attribution or --path-patch: write the heatmap to FILE (.pdf, "
       ".svg, .png, .csv)",
       "--figure PNG resolution (30..2400, default 300)", "Print the result as one JSON document"});
  return with_footer(cmd, kAnalyzeFooter);
}

namespace {

// The checks that need no checkpoint: one analysis, options that go with it, the figure request.
void check_analyze_args(const AnalyzeArgs& a) {
  const int modes = (a.ablate.empty() ? 0 : 1) + (a.importance ? 1 : 0) + (a.patch ? 1 : 0) +
                    (a.attribution ? 1 : 0) + (a.path_patch ? 1 : 0) + (a.dla ? 1 : 0) +
                    (a.logit_lens ? 1 : 0);
  if (modes != 1)
    throw Error(
        "give exactly one of --ablate L.H[,L.H...], --importance, --patch, --attribution, "
        "--path-patch, --dla or --logit-lens");
  if (a.batches < 0) throw Error("--batches " + std::to_string(a.batches) + ": must be >= 1");
  const bool probes = a.patch || a.attribution || a.path_patch;
  if (!probes && !a.dla && !a.logit_lens && !a.clean.empty())
    throw Error("--clean goes with --patch, --attribution, --path-patch, --dla or --logit-lens");
  if (!probes && !a.corrupt.empty())
    throw Error("--corrupt goes with --patch, --attribution or --path-patch");
  if (a.by_position && !a.attribution) throw Error("--by-position goes with --attribution");
  if (!a.receiver.empty() && !a.path_patch) throw Error("--receiver goes with --path-patch");
  if (a.allow_small_difference && !probes)
    throw Error("--allow-small-difference goes with --patch, --attribution or --path-patch");
  if (!a.figure.empty() && (!a.ablate.empty() || a.dla || a.logit_lens))
    throw Error(
        "--figure draws --importance, --patch, --attribution or --path-patch (--ablate, --dla "
        "and --logit-lens print numbers)");
  if (!a.figure.empty()) {  // check the request before the (slower) checkpoint load
    fig::ExportRequest r = a.request;
    r.path = a.figure;
    fig::validate(r);
  }
}

void refuse_no_difference(const std::string& metric, double clean, double corrupt) {
  if (clean == corrupt)
    throw Error("the clean and corrupted probes give the same " + metric + " (" +
                fixed_decimal(clean, 4) +
                "): there is no difference for a head to restore; corrupt a token the answer "
                "depends on");
}

// A difference below kMinPatchDifference makes every share a ratio of noise: refused (before
// anything is written) unless --allow-small-difference, then printed as a warning.
void refuse_small_difference(const AnalyzeArgs& a, const std::string& warning) {
  if (warning.empty()) return;
  if (!a.allow_small_difference)
    throw Error(warning + " (--allow-small-difference runs it anyway)");
  std::cerr << "warning: " << warning << "\n";
}

nlohmann::json run_ablate(const AnalyzeArgs& a, SavedSession& saved, AblationMode mode) {
  const auto heads = parse_head_list(a.ablate, saved.config().model.layers,
                                     saved.config().model.heads, "--ablate");
  const AblationResult r = ablate_session(saved.session(), heads, mode, a.batches);
  if (!a.json)
    std::cout << "step " << saved.step() << ", " << r.batches << " eval batches, "
              << ablation_mode_name(mode) << " ablation of " << head_list_text(heads) << "\n"
              << "  baseline: loss " << fixed_decimal(r.baseline.loss, 4) << ", accuracy "
              << fixed_decimal(100 * r.baseline.accuracy, 2) << "%\n"
              << "  ablated:  loss " << fixed_decimal(r.ablated.loss, 4) << ", accuracy "
              << fixed_decimal(100 * r.ablated.accuracy, 2) << "%\n";
  return ablation_json(r, saved.step());
}

nlohmann::json run_importance(const AnalyzeArgs& a, SavedSession& saved, AblationMode mode,
                              const RunDirectory& run) {
  const auto start = std::chrono::steady_clock::now();
  const ImportanceTable t = session_importance(saved.session(), mode, a.batches);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!a.json) {
    std::cout << "step " << t.step << ", " << t.batches << " eval batches, "
              << ablation_mode_name(mode) << " ablation of each head, " << fixed_decimal(seconds, 1)
              << " s\nbaseline: loss " << fixed_decimal(t.baseline.loss, 4) << ", accuracy "
              << fixed_decimal(100 * t.baseline.accuracy, 2) << "%\n";
    print_grid("eval loss change (nats):", t.layers, t.heads,
               [&](int l, int h) { return fixed_decimal(t.loss_change(l, h), 3); });
    print_grid("eval accuracy change (points):", t.layers, t.heads,
               [&](int l, int h) { return fixed_decimal(100 * t.accuracy_change(l, h), 2); });
  }
  if (!a.figure.empty()) write_figure(a, figures::importance_figure(t), run, t.step);
  return importance_json(t, seconds);
}

// The probe pair's refusals (a difference too small to read, or none) and, as text, its line:
// the step, the metric, both values and their answers.
template <class Table>
void check_probe_pair(const AnalyzeArgs& a, const Table& t) {
  refuse_small_difference(a, t.warning);
  refuse_no_difference(t.metric, t.clean_metric, t.corrupt_metric);
  if (!a.json)
    std::cout << "step " << t.step << ", metric " << t.metric << ": clean "
              << fixed_decimal(t.clean_metric, 4) << " (answer " << t.clean_answer
              << "), corrupted " << fixed_decimal(t.corrupt_metric, 4) << " (answer "
              << t.corrupt_answer << ")\n";
}

nlohmann::json run_patch(const AnalyzeArgs& a, SavedSession& saved, const RunDirectory& run) {
  TrainingSession& session = saved.session();
  const PatchProbes probes = patch_probes(session, a.clean, a.corrupt, "--clean", "--corrupt");
  const PatchTable t = session_patch(session, probes);
  check_probe_pair(a, t);
  if (!a.json) {
    print_grid("share of the difference each head restores:", t.layers, t.heads, [&](int l, int h) {
      return fixed_decimal(t.restored[static_cast<size_t>(l) * t.heads + h], 3);
    });
  }
  if (!a.figure.empty()) write_figure(a, figures::patch_figure(t), run, t.step);
  return patch_json(t);
}

nlohmann::json run_attribution(const AnalyzeArgs& a, SavedSession& saved, const RunDirectory& run) {
  TrainingSession& session = saved.session();
  const PatchProbes probes = patch_probes(session, a.clean, a.corrupt, "--clean", "--corrupt");
  const AttributionTable t = session_attribution(session, probes);
  check_probe_pair(a, t);
  const PatchTable p = session_patch(session, probes);
  if (!a.json) {
    print_grid("attribution (share of the difference, first order):", t.layers, t.heads,
               [&](int l, int h) {
                 return fixed_decimal(share(t.attribution[static_cast<size_t>(l) * t.heads + h],
                                            t.clean_metric, t.corrupt_metric),
                                      3);
               });
    print_grid("activation patching (share restored):", p.layers, p.heads, [&](int l, int h) {
      return fixed_decimal(p.restored[static_cast<size_t>(l) * p.heads + h], 3);
    });
  }
  if (!a.figure.empty())
    write_figure(a, figures::attribution_figure(t, p, a.by_position), run, t.step);
  return attribution_json(t, p, a.by_position);
}

nlohmann::json run_path_patch(const AnalyzeArgs& a, SavedSession& saved, const RunDirectory& run) {
  TrainingSession& session = saved.session();
  const int layers = saved.config().model.layers;
  std::vector<HeadRef> receivers;
  if (!a.receiver.empty()) {
    receivers = parse_head_list(a.receiver, layers, saved.config().model.heads, "--receiver");
    if (receivers.size() != 1) throw Error("--receiver takes one head, LAYER.HEAD");
    if (receivers[0].layer == 0)
      throw Error("--receiver " + a.receiver +
                  ": a layer-0 head has no earlier head to send to it; give a head of layer 1.." +
                  std::to_string(layers - 1));
  }
  if (layers < 2) throw Error("--path-patch needs two layers or more; this model has one");
  const PatchProbes probes = patch_probes(session, a.clean, a.corrupt, "--clean", "--corrupt");
  const PathPatchTable t = session_path_patch(session, probes, receivers);
  refuse_small_difference(a, t.warning);
  refuse_no_difference(t.metric, t.clean_metric, t.corrupt_metric);
  if (!a.json) {
    std::cout << "step " << t.step << ", metric " << t.metric << ": clean "
              << fixed_decimal(t.clean_metric, 4) << ", corrupted "
              << fixed_decimal(t.corrupt_metric, 4)
              << "\nshare restored through each receiver's input (sender -> receiver):\n";
    const size_t R = t.receivers.size();
    for (int l = 0; l < t.layers; ++l)
      for (int h = 0; h < t.heads; ++h)
        for (size_t r = 0; r < R; ++r) {
          const double e = t.effect[(static_cast<size_t>(l) * t.heads + h) * R + r];
          if (!std::isnan(e))
            std::printf("  %d.%d -> %d.%d  %8.3f\n", l, h, t.receivers[r].layer,
                        t.receivers[r].head, e);
        }
    std::fflush(stdout);
  }
  if (!a.figure.empty()) write_figure(a, figures::path_patch_figure(t), run, t.step);
  return path_patch_json(t);
}

nlohmann::json run_logit_analysis(const AnalyzeArgs& a, SavedSession& saved) {
  TrainingSession& session = saved.session();
  const std::vector<int64_t> probe = probe_tokens(session, a.clean, "--clean");
  if (a.dla) {
    const LogitAttribution d = session_logit_attribution(session, probe);
    if (!a.json) {
      std::cout << "step " << d.step << ", answer " << d.answer << ": logit "
                << fixed_decimal(d.answer_logit, 4) << " = total " << fixed_decimal(d.total, 4)
                << " + held-out biases " << fixed_decimal(d.held_out, 4) << "\n";
      for (const auto& [name, value] : d.components)
        std::printf("  %-14s %9.4f\n", name.c_str(), value);
      std::fflush(stdout);
    }
    return dla_json(d);
  }
  const LogitLens lens = session_logit_lens(session, probe);
  if (!a.json) {
    std::cout << "step " << lens.step << ", answer " << lens.answer << " (log-probability "
              << fixed_decimal(lens.model_answer_logprob, 4) << ")\n";
    for (const LogitLensRow& r : lens.layers)
      std::printf("  after block %d: rank %lld, log-probability %.4f, top %s\n", r.layer,
                  static_cast<long long>(r.answer_rank), r.answer_logprob, r.top.c_str());
    std::fflush(stdout);
  }
  return lens_json(lens);
}

}  // namespace

int run_command(const AnalyzeArgs& a) {
  return run_reporting_errors("analyze", [&] {
    check_analyze_args(a);
    const AblationMode mode = parse_ablation_mode(a.mode, "--mode");
    const RunDirectory run = read_run_directory(a.run);
    SavedSession saved(run);
    check_interventions_apply(saved.config());
    // Its eval batches with every layer's weights kept: refused before they are allocated.
    require_memory_for(saved.config(), task_shape(saved.config().task), MemoryUse::analyze,
                       "analyze");
    if (a.batches > saved.eval_batches())
      throw Error("--batches " + std::to_string(a.batches) + ": the run has " +
                  std::to_string(saved.eval_batches()) + " eval batches (train.eval_batches)");
    nlohmann::json out;
    if (!a.ablate.empty())
      out = run_ablate(a, saved, mode);
    else if (a.importance)
      out = run_importance(a, saved, mode, run);
    else if (a.patch)
      out = run_patch(a, saved, run);
    else if (a.attribution)
      out = run_attribution(a, saved, run);
    else if (a.path_patch)
      out = run_path_patch(a, saved, run);
    else
      out = run_logit_analysis(a, saved);
    if (!all_finite(out))
      throw Error("the result holds a value that is not finite (the model diverged?)");
    if (a.json) std::cout << out.dump(2) << "\n";
    return kExitOk;
  });
}

}  // namespace attn
