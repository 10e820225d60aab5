// Connection panel (Neural KY-Attention, docs/design/MECHANISMS.md section 1): the learned
// connection functions g_h(t) of one `ky` layer, per head, as the trainer publishes them in
// Snapshot::connection_history().
//  - Curves: small multiples (one plot per head, shared y range) or overlaid (one Okabe-Ito
//    colour per head, legend). Bottom axis t in [0, 1]; top axis "key offset i - j" with a tick
//    per window slot (query_slot - j at t_j = j / (W-1)), so a curve rising toward t = 1 reads
//    as recency (offset 0 = the current token). Slot values g_h(t_j) are dots on the curve.
//  - beta_h = softmax_j g_h(t_j) as W bars per head under the curves (grouped in overlaid mode).
//  - History: a slider picks a frame (default the latest, following new frames while at the
//    end); up to 8 evenly spaced earlier frames are drawn faded behind it.
//  - One computed line per head from describe_curve() (core/analysis/connections.h) for that frame.
//  - The layer's effective attention maps on the probe input (band-shaped: zero outside the
//    window), one heatmap per head, from the latest probe.
//  - Hover readouts: curve (head, t, offset, g), bars (slot, t, offset, beta, g) and maps
//    (query i -> key j = w, with the probe's tokens).
// Contract: draws one ImGui window named "Connections" (a close button when `open` is given;
// nothing when *open is false) from the snapshot only. Derived data (summaries, faded frames,
// y range) is cached and recomputed only when the history, the chosen frame or the layer
// change; heatmaps are GL textures re-uploaded only when the maps change (generation and
// attention_step) or the layer does, never every frame. Needs the GL context current; destroy
// before the window. No torch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/views/snapshot.h"
#include "gui/panel.h"
#include "gui/plot_draw.h"
#include "render/gl/gl_texture.h"

namespace attn::gui {

class ConnectionPanel : public Panel {
 public:
  // What the last draw() showed, for the GUI's exit report (ATTN_GUI_REPORT) and tests.
  struct Report {
    bool drawn = false;                  // the window was visible and had curves to show
    int layer = -1;                      // model layer shown (-1: none)
    int heads = 0;                       // heads whose curve was drawn for the chosen frame
    int faded_curves = 0;                // curves of earlier frames drawn behind them
    int maps = 0;                        // attention heatmaps drawn
    int64_t step = -1;                   // step of the frame shown
    int frame = -1;                      // its index in the history
    int frames = 0;                      // history length
    bool overlaid = false;               // heads drawn in one plot (asked for, or too little room)
    std::vector<std::string> summaries;  // describe_curve() sentence per head
  };

  void draw(FrameContext& frame) override;
  nlohmann::json report() const override;
  std::vector<std::string> figures(const Snapshot& snap) const override;
  bool wants_auto_open(const Snapshot& snap) const override {
    return !snap.connection_history().empty();
  }
  const Report& last_report() const { return report_; }

 private:
  // Everything derived from (history, frame, layer): recomputed only when its key changes.
  struct View {
    uint64_t key = 0;
    bool valid = false;
    std::vector<int> faded;  // history indices drawn faded, oldest first
    double y_lo = 0, y_hi = 1;
    float beta_max = 1;
    std::vector<float> slot_t;  // t_j = j / (W-1)
    std::vector<std::string> summaries;
  };

  void choose_frame(const std::vector<ConnectionFrame>& history, uint64_t generation);
  void update_view(const std::vector<ConnectionFrame>& history, uint64_t generation);
  void draw_toolbar(const std::vector<ConnectionFrame>& history);
  void draw_curves(const std::vector<ConnectionFrame>& history, ImFont* font, float height);
  void draw_head_plot(ImDrawList* dl, const std::vector<ConnectionFrame>& history, ImFont* font,
                      ImVec2 p0, ImVec2 p1, int head);  // head -1: all heads overlaid
  void draw_beta_bars(ImDrawList* dl, const ConnectionCurves& c, const PlotArea& a, ImFont* font,
                      float top, float bottom, int head);
  void draw_summaries(ImFont* font);
  void draw_maps(const Snapshot& snap, ImFont* font, float height);
  void update_textures(const Snapshot& snap, const std::vector<int>& map_indices);

  // The chosen layer's curves in history frame `index` (nullptr if that frame lacks it or its
  // shape differs from the chosen frame's).
  const ConnectionCurves* curves_in(const std::vector<ConnectionFrame>& history, int index) const;

  int layer_ = -1;             // model layer index of the ky layer shown
  bool overlaid_ = false;      // false: small multiples
  bool show_history_ = true;   // faded earlier frames
  bool show_maps_ = true;      // the band-shaped attention maps
  int frame_ = -1;             // chosen history index
  int64_t frame_step_ = -1;    // ...and its step, to find it again after the history thins
  bool follow_latest_ = true;  // the slider is at the end: track new frames
  uint64_t generation_ = ~uint64_t(0);
  int hovered_head_ = -1;  // from the previous frame's maps/plots: highlighted
  int hovered_head_next_ = -1;
  const ConnectionCurves* current_ = nullptr;  // chosen frame's curves (valid during draw)
  bool too_small_for_grid_ = false;            // small multiples asked for, overlaid drawn
  bool curves_hovered_ = false;                // the curve region has the mouse this frame
  std::vector<int> map_indices_;               // attention_maps() of the layer (reused)

  View view_;
  std::vector<render::Texture2D> maps_;  // one per head of the chosen layer
  render::Texture2D colorbar_;
  uint64_t uploaded_key_ = 0;
  float vmax_ = 1.0f;
  Report report_;
};

}  // namespace attn::gui
