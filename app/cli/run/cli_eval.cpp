// `attnlab eval`: a saved run evaluated at other lengths (train short, test long).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "app/cli/cli.h"
#include "app/figures/runs/length_figure.h"
#include "core/base/error.h"
#include "core/base/version.h"
#include "core/training/interventions/length_eval.h"
#include "core/training/recording/saved_run.h"
#include "render/plot/export/figure_export.h"

namespace attn {
namespace {

constexpr const char* kEvalFooter =
    R"(Evaluates each --run's checkpoint on its task rebuilt at every --context length: task.context
for text, mqar, selective_copy and induction_head (the sequence), task.length for copy, reverse,
sort (symbols), recall (key-value pairs), induction (the repeated prefix), parity,
reverse_string and duplicate_string (the string; their eval set is at exactly that length).
The eval set is drawn from the run's seed as at training, so the
training length gives the run's own eval. Models with learned positions cannot run beyond their
table and are refused with the reason; rope, alibi, none, ky and neural run at any length.
--json prints {"run", "context", "key", "tokens", "eval_loss", "eval_accuracy", "batches"} for
one run and one length, else a list of them. --figure FILE draws eval accuracy and loss against
length, one line per run (.pdf, .svg, .png, .csv).)";

std::vector<int> parse_lengths(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty() || item.size() > 7 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      throw Error("--context " + text + ": \"" + item +
                  "\" is not a length (a whole number >= 1; a list like 64,128,256)");
    out.push_back(std::stoi(item));
    if (out.back() < 1) throw Error("--context " + text + ": lengths start at 1");
  }
  if (out.empty()) throw Error("--context: give a length or a list like 64,128,256");
  return out;
}

}  // namespace

CLI::App* add_command(CLI::App& app, EvalArgs& a) {
  auto* cmd = app.add_subcommand(
      "eval",
      "Evaluate saved runs at other lengths (length generalisation: train short, test long)");
  cmd->add_option("--run", a.runs, "Run directory (attnlab train --out); repeat for several")
      ->required();
  cmd->add_option("--context", a.context, "Length or list of lengths, e.g. 64,128,256,512")
      ->required();
  cmd->add_option("--set", a.set,
                  "Draw the eval set otherwise (repeatable): --set train.eval_batches=32, "
                  "--set seed=7; the model and its task stay the checkpoint's");
  add_figure_output_options(cmd, a,
                            {"Write metric-against-length to FILE (.pdf, .svg, .png, .csv)",
                             "--figure PNG resolution (30..2400)", "Print the results as JSON"});
  return with_footer(cmd, kEvalFooter);
}

int run_command(const EvalArgs& a) {
  return run_reporting_errors("eval", [&] {
    const std::vector<int> lengths = parse_lengths(a.context);
    fig::ExportRequest request = a.request;
    // Checked before any checkpoint is loaded.
    if (!a.figure.empty()) request = figure_file_request(a.figure, a.request);
    nlohmann::json list = nlohmann::json::array();
    std::vector<figures::LengthCurve> curves;
    for (const std::string& dir : a.runs) {
      const RunDirectory run = read_run_directory(dir);
      SavedSession saved(run);
      const ExperimentConfig eval_config = eval_config_with_sets(saved.config(), a.set);
      figures::LengthCurve curve;
      curve.name = run.id;
      curve.trained = task_length(saved.config().task);
      curve.key = length_key(saved.config().task);
      for (const int length : lengths) {
        const LengthEvalResult r = evaluate_at_length(saved.session(), length, eval_config);
        list.push_back({{"run", run.dir},
                        {"context", r.length},
                        {"key", r.key},
                        {"tokens", r.tokens},
                        {"eval_loss", r.figures.loss},
                        {"eval_accuracy", r.figures.accuracy},
                        {"batches", r.batches}});
        curve.lengths.push_back(r.length);
        curve.loss.push_back(r.figures.loss);
        curve.accuracy.push_back(r.figures.accuracy);
        if (!a.json)
          std::printf("%-24s %s %6d (%5d tokens%s): eval loss %.4f, accuracy %.2f%%, %d batches\n",
                      run.id.c_str(), r.key.c_str(), r.length, r.tokens,
                      r.length == curve.trained ? ", trained" : "", r.figures.loss,
                      100 * r.figures.accuracy, r.batches);
      }
      curves.push_back(std::move(curve));
    }
    if (!all_finite(list)) throw Error("a result is not finite (the model diverged?)");
    if (!a.figure.empty()) {
      fig::Provenance p;
      p.program_version = version_string();
      p.run_id = curves.size() == 1 ? curves.front().name : "several";
      for (const std::string& f :
           fig::export_figure(figures::length_figure(curves), request, p).files)
        std::cerr << "wrote " << f << "\n";
    }
    if (a.json) std::cout << (list.size() == 1 ? list[0] : list).dump(2) << "\n";
    return kExitOk;
  });
}

}  // namespace attn
