// Heads panel: when a head forms. The head metrics (core/analysis/head_metrics.h: entropy,
// diagonal, previous-token, induction, ky's effective window, conn's rho(I + C)) of every
// recorded step of the run on screen (the timeline's views.rec), as one small multiple per
// metric with one line per layer and head (figures::heads_figure, the figure `attnlab export
// --figure heads` writes), and one metric of every layer x head as a heatmap at the timeline's
// step (figures::heads_at_step_figure).
// Contract: metrics are computed from the recorded maps a few records per frame (a long run
// fills in over a few frames, never stalling one) and kept per step until the timeline's
// sources change; records thinned away leave. The line figure marks the timeline's step and a
// click on it moves the timeline; hover names the head, step and value. Export sends exactly the
// figures on screen. report(): "step" (the heatmap's), "steps" (steps with metrics), "metric".
// No torch; needs the GL context current.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "core/runs/view_records.h"
#include "render/plot/figure.h"

namespace attn::gui {

class HeadsPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  nlohmann::json report() const override;
  const fig::Figure* shown_figure(const std::string& name) const override;

 private:
  void collect(Timeline& timeline);

  std::vector<std::string> sources_;                    // the timeline's, when metrics were read
  std::map<int64_t, std::vector<HeadMetric>> by_step_;  // recorded step -> its metrics
  uint64_t rows_key_ = 0, built_key_ = ~uint64_t(0);
  int metric_ = 0;  // index into figures::head_metric_labels()
  int64_t shown_step_ = -1;
  std::vector<HeadMetric> rows_;
  LiveFigure lines_, grid_;
  fig::Figure lines_figure_, grid_figure_;
  bool grid_ok_ = false;
  std::string grid_note_;
};

}  // namespace attn::gui
