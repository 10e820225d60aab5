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
// Contract: draws one ImGui window named "Neural" (a close button when `open` is given). Its
// heatmaps are GL textures re-uploaded only when the published view changes. Needs the GL
// context current; destroy before the window. No torch.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/views/neural_view.h"
#include "core/views/snapshot.h"
#include "gui/panel.h"
#include "render/gl/gl_texture.h"
#include "render/plot/plot_math.h"

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
  void update_textures(const NeuralView& view);
  void draw_heatmap(const char* id, const char* title, const NeuralScoreSurface& s,
                    const std::vector<float>& z, const render::Texture2D& texture, float vmin,
                    float vmax, const std::vector<render::ContourSegment>& contours, ImFont* font,
                    float width, float height);
  void draw_slice(const NeuralScoreSurface& s, ImFont* font, float height);
  void draw_parameter_table(const NeuralLayerInfo& info);

  NeuralViewRequest request_;  // the panel's settings, sent when they differ from sent_
  NeuralViewRequest sent_;
  bool sent_once_ = false;
  // Textures and contours of the view last uploaded (compared by pointer: views are immutable).
  std::shared_ptr<const NeuralView> uploaded_;
  render::Texture2D learned_, paraboloid_, colorbar_;
  float learned_min_ = 0, learned_max_ = 1, paraboloid_min_ = 0, paraboloid_max_ = 1;
  std::vector<render::ContourSegment> learned_contours_, paraboloid_contours_;
  Report report_;
};

}  // namespace attn::gui
