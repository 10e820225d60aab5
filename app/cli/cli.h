// Headless subcommands of the attnlab executable.
// Contract: a command is its arguments' type XArgs, with two overloads in namespace attn:
//   CLI::App* add_command(CLI::App& app, XArgs& args);  // registers it; args fill when parsed
//   int run_command(const XArgs& args);  // runs it: the exit code; prints its errors
// main.cpp lists the types, in --help's order, and calls the overload of the one parsed.
#pragma once
#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/common/exit_codes.h"
#include "render/plot/export/figure_export.h"

namespace attn {

// Sets a subcommand's help footer: its own text, then the exit-code table. Returns cmd.
inline CLI::App* with_footer(CLI::App* cmd, const std::string& text) {
  cmd->footer(text.empty() ? std::string(kExitCodesHelp) : text + "\n" + kExitCodesHelp);
  return cmd;
}

// What the commands share (app/cli/cli_common.cpp):

// v with `precision` decimals ("0.8720"), or "-" when it is not finite: the tables' number.
std::string fixed_number(double v, int precision);

// Torch threads for each of `jobs` runs at a time: the cores shared out, at least one each.
int threads_per_job(int jobs);

// The shipped data file or folder `relative` (app/common/data_paths.h); when it is in none of
// the places looked at, throws attn::Error "cannot find the <what> (tried ...); give <option>".
std::string find_data_path_or_throw(const std::string& relative, const std::string& what,
                                    const std::string& option);

// Now as "YYYY-MM-DD HH:MM UTC": the date in reports and leaderboards.
std::string utc_now();

// Runs a command's body and turns what escapes it into the exit code, each said on stderr as
// "attnlab <command>: <what>": attn::Error and fig::FigureError (bad input) give kExitUsage, any
// other exception (the input was accepted, the work failed) kExitRunFailed.
int run_reporting_errors(const std::string& command, const std::function<int()>& body);

// The output options of the commands that print a result and may draw it (analyze, eval):
// --figure FILE with its --width-in and --dpi, then --json. Their args derive from it.
struct FigureOutputArgs {
  std::string figure;          // empty: no figure
  fig::ExportRequest request;  // --width-in, --dpi
  bool json = false;
};
// Adds the four options in that order; the help of --figure, --dpi and --json.
struct FigureOutputHelp {
  std::string figure, dpi, json;
};
void add_figure_output_options(CLI::App* cmd, FigureOutputArgs& out, const FigureOutputHelp& help);
// --threads (torch threads per run, >= 0; 0: chosen) and --checkpoint-every (steps, >= 0; 0: at
// the end only): train's, and sweep's that it passes on to each run. The help of each.
struct RunPacingHelp {
  std::string threads, checkpoint_every;
};
void add_run_pacing_options(CLI::App* cmd, int& threads, long long& checkpoint_every,
                            const RunPacingHelp& help);

// The request that writes `figure`: its format from the extension (.pdf, .svg, .png, .csv), the
// options' size and resolution; throws attn::Error or fig::FigureError naming --figure.
fig::ExportRequest figure_file_request(const std::string& figure,
                                       const fig::ExportRequest& options);

// True when every number in j is finite. nlohmann::json writes NaN/Inf as null, so the JSON
// commands check their output with this and refuse to print a result that is not.
inline bool all_finite(const nlohmann::json& j) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  for (const auto& v : j)
    if ((v.is_array() || v.is_object() || v.is_number_float()) && !all_finite(v)) return false;
  return true;
}

struct TrainArgs {
  std::string config;
  std::vector<std::string> set;  // --set key=value (core/config/config_set.h)
  long long steps = -1;
  long long seed = -1;
  long long until = -1;
  std::string out;
  std::string resume;
  int threads = 0;
  int max_threads = 0;
  long long checkpoint_every = 0;
  bool quiet = false;
  bool json = false;   // print summary.json (and the run directory) as one JSON document
  bool force = false;  // replace a run already in --out
  bool wait = false;   // wait for another writer of --out instead of refusing
};

// `attnlab train`: run_command prints its errors and never throws.
CLI::App* add_command(CLI::App& app, TrainArgs& args);
int run_command(const TrainArgs& args);

// `attnlab ky` (the KY Transform lab): app/cli/labs/cli_ky.h.

// `attnlab geometry`: the 2-D geometry of softmax attention (core/analysis/geometry.h) without a
// window. Every value is kept as the text given (std::nullopt: the option was not given) and
// parsed by run_command(const GeometryArgs&), so each message names its option.
struct GeometryArgs {
  std::optional<std::string> tokens, preset, wq, wk, wv, temperature;
  std::optional<std::string> query, circle, grid;  // the mode: exactly one
  std::optional<std::string> samples, extent, mode, alpha, gaussian;
  bool json = false;
};
// Registers `geometry`; run_command prints nothing on stdout when it fails.
CLI::App* add_command(CLI::App& app, GeometryArgs& args);
int run_command(const GeometryArgs& args);

// `attnlab spectral`: rho(I + C), ||I + C||_2 and the eigenvalues of I + C for a CSV matrix C
// (the Connection Transformer's connection matrix), optionally after a stability control.
struct SpectralArgs {
  std::string matrix;
  std::string control;  // empty: no control
  double limit = 0.95;
  std::string out;
  bool json = false;
};
CLI::App* add_command(CLI::App& app, SpectralArgs& args);
int run_command(const SpectralArgs& args);

// `attnlab export`: figures of a saved run (a directory `attnlab train --out` wrote) as PDF,
// SVG, PNG or CSV, each with its data CSV and a JSON provenance sidecar beside it.
struct ExportArgs {
  std::string run;
  std::string figure;
  bool all = false;
  bool list = false;
  bool list_steps = false;
  long long step = -1;
  std::string steps;           // a filmstrip: "a:b:k" or "s1,s2,..."
  std::string format;          // empty: from --out's extension (--all: pdf)
  fig::ExportRequest request;  // size, dpi, font, theme: the options bind to its fields
  int layer = -1;
  long long image = -1;
  std::string colormap = "viridis";
  // connections: one plot per head, the beta row, faded earlier frames, plots per row.
  bool multiples = false;
  bool beta = false;
  int history = 0;
  int cols = 0;
  std::string out;
  bool json = false;
  std::string weights;       // --weights FILE.safetensors: the checkpoint's tensors
  bool tensorboard = false;  // --tensorboard: a TensorBoard event file in the run directory
  // heads: the query rows the head metrics average over: answer, query or all
  // (core/training/interventions/run_interventions.h, probe_rows).
  std::string positions = "all";
  std::string crop;  // attention: a region of the task's probe (core/data/task_regions.h)
};
// A failed `attnlab export` writes no file.

CLI::App* add_command(CLI::App& app, ExportArgs& args);
int run_command(const ExportArgs& args);

// `attnlab analyze`: ablation, head importance and activation patching of a saved run's heads
// (core/training/interventions/run_interventions.h). Exactly one of ablate / importance / patch.
struct AnalyzeArgs : FigureOutputArgs {
  std::string run;
  std::string ablate;  // "L.H[,L.H...]"
  bool importance = false;
  bool patch = false;
  std::string mode = "zero";
  int batches = 0;  // 0: every eval batch of the run
  std::string clean, corrupt;
  // Issue 48's causal analyses (core/views/causal_view.h).
  bool attribution = false, by_position = false, path_patch = false, dla = false,
       logit_lens = false;
  std::string receiver;  // --path-patch: "L.H" (empty: every head of layers 1 and up)
  // Run the probe analyses on a clean-minus-corrupted difference below kMinPatchDifference.
  bool allow_small_difference = false;
};
CLI::App* add_command(CLI::App& app, AnalyzeArgs& args);
int run_command(const AnalyzeArgs& args);

// `attnlab eval`: saved runs evaluated at other lengths
// (core/training/interventions/length_eval.h).
struct EvalArgs : FigureOutputArgs {
  std::vector<std::string> runs;
  std::vector<std::string> set;  // --set task.* / train.eval_*: how the runs are evaluated
  std::string context;           // "L" or "L1,L2,..."
};
CLI::App* add_command(CLI::App& app, EvalArgs& args);
int run_command(const EvalArgs& args);

// `attnlab migrate` (app/cli/run/cli_migrate.cpp): an old-format checkpoint (TorchScript) to
// the data-only one, reading the archives as data (core/runs/formats/legacy_archive.h).
struct MigrateArgs {
  std::string run;
  bool trust = false;          // accepted and ignored (earlier versions required it)
  bool to_old_format = false;  // hidden, tests only: the reverse conversion
};
CLI::App* add_command(CLI::App& app, MigrateArgs& args);
int run_command(const MigrateArgs& args);

// `attnlab bench-step` (app/cli/run/cli_bench_step.cpp).
struct BenchStepArgs {
  std::string config;
  std::vector<std::string> set;
  int warmup = 3, steps = 20;
  bool unfused = false;
};
CLI::App* add_command(CLI::App& app, BenchStepArgs& args);
int run_command(const BenchStepArgs& args);

}  // namespace attn
