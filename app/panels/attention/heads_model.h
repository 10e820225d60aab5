// The Heads panel's model (heads_panel.h is its ImGui view): the head metrics
// (core/analysis/head_metrics.h) of every recorded step of the timeline's runs, the metric
// control, the step the layer x head map shows, the two figures (figures::heads_figure over
// training, figures::heads_at_step_figure at that step), the hover readouts and the report.
// Contract: plain data, no ImGui, no torch. collect() decodes at most kRecordsPerFrame records a
// call (a long run fills in over a few frames, never stalling one), keeps metrics per step until
// the sources change and drops steps thinned away; build() rebuilds the figures only when the
// rows, the step or the metric changed.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/runs/records/view_records.h"
#include "core/runs/records/view_timeline.h"
#include "render/plot/figure.h"

namespace attn::gui {

class HeadsModel {
 public:
  static constexpr int kRecordsPerFrame = 24;  // decoded per call while a long run fills in

  // Reads the metrics of the timeline's recorded steps (see the contract).
  void collect(ViewTimeline& records);
  // The metrics of one recorded step (what collect() adds per record), e.g. head_metrics(record).
  void add_step(int64_t step, std::vector<HeadMetric> metrics);

  bool empty() const { return rows_.empty(); }
  size_t steps() const { return by_step_.size(); }
  // The map's step for the timeline's (-1: the live model): the recorded step at or before it,
  // the newest while following the model (empty() must not hold).
  int64_t step_for(int64_t timeline_step) const;

  // The metric the layer x head map shows: an index into figures::head_metric_labels().
  int metric = 0;
  const std::string& metric_label() const;

  // Builds the figures for the map at `step` (a no-op when nothing changed).
  void build(int64_t step);
  const fig::Figure& lines() const { return lines_figure_; }
  const fig::Figure& grid() const { return grid_figure_; }
  bool grid_ok() const { return grid_ok_; }
  const std::string& grid_note() const { return grid_note_; }  // why there is no map
  std::string status() const;                                  // "N recorded steps; map at step S"
  // The readouts of a line point (series name, panel title, value, step) and a map cell.
  static std::string line_text(const std::string& name, const std::string& panel, double value,
                               double step);
  std::string cell_text(int layer, int head, float value) const;
  // The least height, in pixels at font size `font_px`, that keeps each row of `figure`'s plots
  // readable (about 4 font sizes of plot, its title and ticks); a shorter tile scrolls instead
  // of squeezing them (at UI scale 2 or 1280x720 they shrank to 0-35 px).
  static float min_height(const fig::Figure& figure, float font_px);

  // "step" (the map's), "steps" (steps with metrics), "metric", "rows".
  nlohmann::json report() const;
  // "heads" and "heads-step" as shown, or nullptr.
  const fig::Figure* shown_figure(const std::string& name) const;

 private:
  void update_rows();

  std::vector<std::string> sources_;                    // the timeline's, when metrics were read
  std::map<int64_t, std::vector<HeadMetric>> by_step_;  // recorded step -> its metrics
  uint64_t rows_key_ = 0, built_key_ = ~uint64_t(0);
  int64_t shown_step_ = -1;
  std::vector<HeadMetric> rows_;
  fig::Figure lines_figure_, grid_figure_;
  bool grid_ok_ = false;
  std::string grid_note_;
};

}  // namespace attn::gui
