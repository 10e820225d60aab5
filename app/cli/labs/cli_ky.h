// `attnlab ky`: the KY Transform lab (core/analysis/ky_transform.h) without a window, its
// arguments and its two entry points (app/cli/labs/cli_ky.cpp). The lab's own place, so that
// app/cli/cli.h names no mechanism.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <tuple>

#include "app/cli/cli.h"
#include "core/analysis/ky_transform.h"

namespace attn {

// `attnlab ky` exits 0 when it converged, 2 on usage or input errors (bad option, unparseable
// expression, f not finite near x0, settings out of range), 4 when it ran but did not converge
// (the best estimate is still printed, converged false).
struct KyArgs {
  std::string function;
  double x0 = 0;
  std::string kind = "poly";  // parsed into settings.kind, so the message can name --kind
  KySettings settings;        // the options bind to its fields
  std::string chain;          // g for the linear-linear chain-rule check of f o g (empty: none)
  bool json = false;
  // --figure ky-theta | ky-fit written to --out FILE (format from its extension), as the KY lab
  // panel draws it (app/figures/models/ky_lab_figures.h): the theta component shown (-1: all) and the
  // step h_k whose fit is drawn. Checked before anything is computed; a refusal writes nothing.
  std::string figure, out;
  int component = -1;
  int fit_step = 0;
};

// Registers `ky` (the KY Transform lab, headless) on the app.
CLI::App* add_command(CLI::App& app, KyArgs& args);
// Runs `attnlab ky`; returns the exit code above (prints errors, never throws).
int run_command(const KyArgs& args);

// The labs' commands, in --help's order: main.cpp registers them as one group, so that the KY
// lab is named only in the labs.
using LabCommands = std::tuple<KyArgs, GeometryArgs, SpectralArgs>;

}  // namespace attn
