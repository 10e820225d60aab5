// Neural panel (Neural Attention, seed 003; docs/design/MECHANISMS.md section 4): what the learned
// scorer of a `neural` layer computes, from the snapshot's mechanism views (core/attention/neural/neural_view.h). The
// view of NeuralModel (neural_model.h), which holds the settings, the figure and the report.
//  - The paper's Figure 1, live: with d' = 2 and q' = k' = (x, y), the learned score surface
//    z(x, y) as a heatmap with contour lines, beside the dot product's paraboloid x^2 + y^2 over
//    the same range, each with its own colorbar. Hover: x, y, z.
//  - The slice: the query q' fixed, the key moving along k'(t) = t (cos a, sin a); the learned
//    score against the dot product q'.k'(t), which is a straight line in t. Where the two
//    differ in shape is where the scorer is not a dot product.
//  - The parameter table of the layer: per head, the norms of Wq', Wk' (with a down-projection),
//    U, V, b_h, w_a, b_a's value, and the same of their last gradients.
// The settings go to the trainer through Trainer::request_mechanism_view whenever they change; the
// trainer answers at once and refreshes the view at every probe. Surface and slice need d' = 2:
// otherwise the panel says so and shows the table only. The attention heatmaps are in the
// Attention panel.
// Contract: draws into its tile from the snapshot only; Export sends the figure on screen to the
// Export dialog. Needs the GL context current; destroy before the window. No torch.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "app/panels/mechanisms/neural_model.h"

struct ImFont;

namespace attn::gui {

class NeuralPanel : public Panel {
 public:
  using Report = NeuralModel::Report;

  void draw(FrameContext& frame) override;
  nlohmann::json report() const override { return model_.report_json(); }
  std::vector<std::string> figures(const Snapshot& snap) const override {
    return model_.figures(snap);
  }
  const Report& last_report() const { return model_.report(); }
  nlohmann::json report_json() const { return model_.report_json(); }

 private:
  void draw_settings(const NeuralView& view);
  void draw_ranges();
  void draw_figure(const NeuralView& view, ImFont* font);
  void draw_surface(const NeuralScoreSurface& s, ImFont* font, ImVec2 size);
  void draw_parameter_table(const NeuralLayerInfo& info);

  NeuralModel model_;
  LiveFigure plot_;
};

}  // namespace attn::gui
