// KY Transform lab panel (seed 000, section 3): type f(x), pick x0 and a connection-function
// kind, and watch theta(h) as h -> 0 with the limit it reaches. For the polynomial kinds both
// readings are shown side by side: the (n+1)-point fit (Taylor coefficients) and the seed's
// literal two-constraint minimum-norm system (f, f', 0, ...). Also: f against the fitted
// connection function, the linear-linear chain-rule check (eq. 32) and the seed's Example 3.1
// contradiction, with computed numbers.
// Contract: the view of KyLabModel (ky_lab_model.h), which holds the inputs, computes and builds
// the figures (ky-theta, ky-fit, ky-convergence, also written by `attnlab ky --figure`); this
// file has only ImGui calls. Bad input is shown in red, never thrown. Uses no torch and no
// training state.
#pragma once
#include "app/gui/plot/live_figure.h"
#include "app/panels/mechanisms/ky_lab_model.h"
#include "app/panels/model_panel.h"

struct ImFont;

namespace attn::gui {

class KyLabPanel : public ModelPanel<KyLabModel> {
 public:
  void draw(FrameContext& frame) override;

 private:
  void draw_error();
  void draw_inputs();
  void draw_theta_plot(ImFont* font);
  void draw_parameter_table();
  void draw_poly_table();
  void draw_fit_plot(ImFont* font);
  void draw_chain_section();
  void draw_seed_note();

  LiveFigure theta_plot_, fit_plot_;
};

}  // namespace attn::gui
