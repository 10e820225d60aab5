// Figures that compare runs (torch-free): built from run directories (core/runs/directory/run_dir.h) and the
// JSON files beside them, drawn and exported by the figure library
// (render/plot/export/figure_export.h). Contract:
//  - Every builder returns a fig::Figure and never draws; colours are given per curve (the
//    caller's stable colour per run or group, Okabe-Ito by index unless the user chose one).
//  - Curves are the run's recorded values, unsmoothed; a run with no recorded point in a
//    panel adds no line there.
//  - Builders throw attn::Error naming the file when an input file lacks what they need.
#pragma once
#include <string>
#include <vector>

#include "core/runs/directory/run_dir.h"
#include "render/plot/figure.h"

namespace attn::figures {

// One curve set: a run with its label (legend and CSV series name) and colour. `show_in_legend`
// false for the second and later seeds of a group: drawn dashed in the group's colour.
struct CompareCurve {
  const RunDirectory* run = nullptr;
  std::string label;
  fig::Color color;
  bool show_in_legend = true;
};

// The stable colour of run or group i: Okabe-Ito colour i (wrapping).
fig::Color compare_color(int index);

enum class YScale { Auto, Linear, Log };

// Runs that differ only by seed (core/runs/directory/seed_groups.h): each its own line, or one mean line
// per group with a shaded band (the sample sd, or the 95% t-interval of the mean) over the steps
// every member has. A group of one run is drawn as its run either way.
enum class SeedBands { Off, Sd, Ci95 };

struct CompareOptions {
  // The loss panels' y axis: Auto is logarithmic when the curves span more than a decade
  // (largest / smallest positive value > 10), else linear.
  YScale y_scale = YScale::Auto;
  SeedBands seed_bands = SeedBands::Off;
};

// Three panels side by side: eval loss, train loss (the mean since the previous evaluation, as
// metrics.csv has it) and, when any run is a classifier or a synthetic token task, eval accuracy
// (its axis padded past 0 and 1). One legend below the panels names every run, always. With
// seed bands, a seed group is named "<its first curve's label, less a trailing /seed-N> (mean of
// N seeds)", its band "<that> ± sd" or "<that> 95% CI" (a polygon series in the CSV, not in the
// legend: the figure's title says what the shading is).
fig::Figure loss_overlay(const std::vector<CompareCurve>& curves, const std::string& title,
                         const CompareOptions& options = {});

// Condor's learned connection functions g_h(t) of one run (its recorded views, last frame):
// the connections figure at its defaults (app/figures/models/connections_figure.h), `title` replacing
// its own when not empty. Throws when the file is missing or has no frame.
fig::Figure connection_curves_figure(const RunDirectory& run, const std::string& title);

// rho(I + C) over training (conn.json "spectral_radius_estimate") for each conn run, with the
// control's limit r dashed. Runs without conn.json are left out; throws when none has one.
fig::Figure spectral_radius_figure(const std::vector<CompareCurve>& curves,
                                   const std::string& title);

// A labelled scatter of one summary value against another (e.g. parameters vs accuracy), one
// point per entry.
struct ScatterPoint {
  std::string label;
  double x = 0, y = 0;
  fig::Color color;
};
fig::Figure scatter_figure(const std::string& name, const std::string& title,
                           const std::string& x_label, const std::string& y_label,
                           const std::vector<ScatterPoint>& points);

}  // namespace attn::figures
