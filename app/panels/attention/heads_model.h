// The Heads panel's model (heads_panel.h is its ImGui view): the head metrics
// (core/analysis/head_metrics.h) of every recorded step of the timeline's runs, the metric
// control, the step the layer x head map shows, the two figures (figures::heads_figure over
// training, figures::heads_at_step_figure at that step), the recorded attribution patching of
// that step (views.rec's ViewRecord::attribution, figures::recorded_attribution_figure), the
// positions the metrics average over and the shared colour scale, the hover readouts and the
// report.
// Contract: plain data, no ImGui, no torch. collect() decodes at most kRecordsPerFrame records a
// call (a long run fills in over a few frames, never stalling one), keeps metrics per step until
// the sources or the positions change and drops steps thinned away; build() rebuilds the figures
// only when the rows, the step, the metric or the colour scale changed.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/config.h"
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
  // What collect() adds for one record: its head metrics over the chosen positions and its
  // recorded attribution (none: the step says so instead of showing another step's).
  void add_record(const ViewRecord& record);

  // The query rows the map metrics average over: 0 "answer" (the positions the task scores),
  // 1 "query" (from the first scored one on), 2 "all" (the default; every row), as `attnlab export
  // --figure heads --positions` (probe_rows, core/training/interventions/run_interventions.h).
  static const std::vector<std::string>& position_labels();
  int positions() const { return positions_; }
  // Chooses the positions for the run of `config` (its task gives the scored positions); the
  // metrics are read again. A choice the task cannot give (an image task) keeps "all" and says
  // why in positions_note(). true when the metrics will change.
  bool set_positions(int which, const ExperimentConfig& config);
  const std::string& positions_note() const { return positions_note_; }
  // One colour scale for the map over every recorded step (figures::heads_at_step_figure's
  // shared_scale): colours compare as the timeline moves.
  bool shared_scale = false;

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
  // The recorded attribution patching of the map's step, titled "attribution patching at step
  // S (recorded)"; without one, attribution_note() says so in one line (older runs, image tasks,
  // train.record_attribution false), and no other step's values are shown.
  bool attribution_ok() const { return attribution_ok_; }
  const fig::Figure& attribution() const { return attribution_figure_; }
  const std::string& attribution_note() const { return attribution_note_; }
  std::string status() const;  // "N recorded steps; map at step S"
  // The readouts of a line point (series name, panel title, value, step) and a map cell.
  static std::string line_text(const std::string& name, const std::string& panel, double value,
                               double step);
  std::string cell_text(int layer, int head, float value) const;
  std::string attribution_text(int layer, int head, float value) const;
  // The least height, in pixels at font size `font_px`, that keeps each row of `figure`'s plots
  // readable (about 4 font sizes of plot, its title and ticks); a shorter tile scrolls instead
  // of squeezing them (at UI scale 2 or 1280x720 they shrank to 0-35 px).
  static float min_height(const fig::Figure& figure, float font_px);

  // "step" (the map's), "steps" (steps with metrics), "metric", "rows", "positions",
  // "shared_scale", "attribution" (the map's step has a recorded one).
  nlohmann::json report() const;
  // "heads", "heads-step" and "attribution" as shown, or nullptr.
  const fig::Figure* shown_figure(const std::string& name) const;

 private:
  void update_rows();
  void clear();
  void put(const ViewRecord& record);  // its metrics and attribution, rows not gathered yet
  void build_attribution(int64_t step);

  std::vector<std::string> sources_;                    // the timeline's, when metrics were read
  std::map<int64_t, std::vector<HeadMetric>> by_step_;  // recorded step -> its metrics
  std::map<int64_t, RecordedAttribution> attribution_;  // recorded step -> its attribution
  using RowsOf = std::function<std::vector<int>(const std::vector<std::string>&)>;
  RowsOf rows_of_;  // the positions' rows of a probe; empty: every row
  int positions_ = 2;
  std::string positions_note_;
  uint64_t rows_key_ = 0, built_key_ = ~uint64_t(0);
  bool dirty_ = false;  // the steps held changed since the rows were gathered
  int64_t shown_step_ = -1;
  std::vector<HeadMetric> rows_;
  fig::Figure lines_figure_, grid_figure_;
  bool grid_ok_ = false;
  std::string grid_note_;
  fig::Figure attribution_figure_;
  bool attribution_ok_ = false;
  std::string attribution_note_;
};

}  // namespace attn::gui
