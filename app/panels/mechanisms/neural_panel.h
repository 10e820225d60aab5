// Neural panel (Neural Attention, seed 003; docs/design/MECHANISMS.md section 4): what the learned
// scorer of a `neural` layer computes, from Snapshot::neural (core/views/neural_view.h).
//  - The paper's Figure 1, live: with d' = 2 and q' = k' = (x, y), the learned score surface
//    z(x, y) as a heatmap with contour lines, beside the dot product's paraboloid x^2 + y^2 over
//    the same range, each with its own colorbar. Hover: x, y, z.
//  - The slice: the query q' fixed, the key moving along k'(t) = t (cos a, sin a); the learned
//    score against the dot product q'.k'(t), which is a straight line in t. Where the two
//    differ in shape is where the scorer is not a dot product.
//  - The parameter table of the layer: per head, the norms of Wq', Wk' (with a down-projection),
//    U, V, b_h, w_a, b_a's value, and the same of their last gradients. b_a's gradient is shown
//    as the exact 0 it is (softmax is shift-invariant), never hidden.
// The settings (layer, head, range, grid, query, direction) go to the trainer through
// Trainer::request_neural_view whenever they change; the trainer answers at once and refreshes
// the view at every probe. Surface and slice need d' = 2: otherwise the panel says so and
// shows the table only. The attention heatmaps are in the Attention panel.
// Contract: draws into its tile from the snapshot only. Surface and slice are one figure of the
// figure model drawn by the screen painter (gui/plot/live_figure.h): figures::neural_surface_figure
// of the published view (range, query and slice are the view's request, so the builder already
// shows them), transformed here only to colour the slice as the panel always has (learned score
// orange, dot product sky blue) and to state the slice's query and key direction in its title.
// Export sends that same figure to the Export dialog. The figure is rebuilt only when a new view
// is published. Needs the GL context current; destroy before the window. No torch.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "core/views/neural_view.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

struct ImFont;

namespace attn {
class Trainer;
}

namespace attn::gui {

class NeuralPanel : public Panel {
 public:
  // What the last draw() showed, for the GUI's exit report (ATTN_GUI_REPORT) and tests.
  struct Report {
    bool drawn = false;              // the window was visible with a view to show
    bool surface_available = false;  // d' = 2: surface and slice drawn
    bool surface_finite = false;     // every learned surface and slice value is finite
    int layer = -1, head = -1, grid = 0;
    int64_t step = -1;         // step the view was computed at
    int contour_segments = 0;  // over both heatmaps
    int slice_points = 0;
    int table_heads = 0;                    // heads in the parameter table
    bool gradients_present = false;         // every table row has a gradient
    bool score_bias_gradient_zero = false;  // b_a's gradient is exactly 0 in every head
    std::string note;                       // why the surface is missing, if it is
  };

  void draw(FrameContext& frame) override;
  nlohmann::json report() const override { return report_json(); }
  std::vector<std::string> figures(const Snapshot& snap) const override;
  const Report& last_report() const { return report_; }
  nlohmann::json report_json() const;

 private:
  void draw_settings(const NeuralView& view);
  void rebuild(const Snapshot& snap);
  void draw_surface(const NeuralScoreSurface& s, ImFont* font, ImVec2 size);
  void draw_parameter_table(const NeuralLayerInfo& info);

  NeuralViewRequest request_;  // the panel's settings, sent when they differ from sent_
  NeuralViewRequest sent_;
  bool sent_once_ = false;
  // The figure of the view last built (compared by pointer: views are immutable).
  std::shared_ptr<const NeuralView> built_;
  fig::Figure figure_;
  bool figure_ok_ = false;
  std::string figure_note_;   // why there is no figure (the builder's message)
  int contour_segments_ = 0;  // in figure_'s two surface panels
  int slice_panel_ = 2;       // the slice's index in figure_.panels (the grid shown orders them)
  LiveFigure plot_;
  Report report_;
};

}  // namespace attn::gui
