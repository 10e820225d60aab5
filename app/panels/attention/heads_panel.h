// Heads panel: when a head forms. The head metrics (core/analysis/head_metrics.h: entropy,
// diagonal, previous-token, induction, ky's effective window, conn's rho(I + C)) of every
// recorded step of the run on screen (the timeline's views.rec), as one small multiple per
// metric with one line per layer and head (figures::heads_figure, the figure `attnlab export
// --figure heads` writes), and one metric of every layer x head as a heatmap at the timeline's
// step (figures::heads_at_step_figure), with that step's recorded attribution patching under them
// ("attribution patching at step N (recorded)", or a line saying the step recorded none). The
// map metrics average over the positions the control picks (answer | query | all, as `attnlab
// export --positions`) and the map can share one colour scale over every step.
// Contract: the panel is a HeadsModel (heads_model.h: the metrics per step, the metric control,
// the figures, the report) and this ImGui view of it. The line figure marks the timeline's step
// and a click on it moves the timeline; hover names the head, step and value. Export sends
// exactly the figures on screen. report(): "step" (the heatmap's), "steps" (steps with metrics),
// "metric", "positions", "shared_scale", "attribution", and "plot_px": {"lines"|"grid"|
// "attribution": [w, h]} as drawn last frame (never below a least size in font sizes: the tile
// scrolls), "map_px" the layer x head map's smaller side, "font_px". No torch; needs the GL
// context current.
#pragma once
#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "app/panels/attention/heads_model.h"

namespace attn::gui {

class HeadsPanel : public Panel {
 public:
  void draw(FrameContext& frame) override;
  nlohmann::json report() const override;
  const fig::Figure* shown_figure(const std::string& name) const override {
    return model_.shown_figure(name);
  }

 private:
  void toolbar(FrameContext& frame);
  void positions_control(FrameContext& frame);
  void draw_figures(FrameContext& frame);
  void draw_attribution(ImFont* font);
  float attribution_height(float width) const;

  HeadsModel model_;
  LiveFigure lines_, grid_, attribution_;
  nlohmann::json plot_px_ = nlohmann::json::object();  // report()'s "plot_px"
  float map_px_ = 0, font_px_ = 0;
  uint64_t generation_ = 0;  // the model's, when the positions were chosen
};

}  // namespace attn::gui
