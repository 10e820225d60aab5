// Connection panel (Neural KY-Attention, docs/design/MECHANISMS.md section 1): the learned
// connection functions g_h(t) of one `ky` layer, per head, as the trainer publishes them in
// Snapshot::mechanism_views (ky's generic views, read by their names: core/attention/ky/
// ky_view.h).
//  - Curves figure: the connections figure of app/figures/models/connections_figure.h (small
//    multiples or overlaid, the beta row, faded earlier frames), built by the same builder
//    `attnlab export --figure connections` uses, with this panel's controls as its options
//    (layer, frame's step, overlaid, beta, history) and the grid the space allows (cols). Where
//    small multiples or the beta row do not fit, the figure is overlaid or loses the row, and
//    the caption (and the dimmed control) says so.
//  - History: a slider picks a frame (default the latest, following new frames while at the
//    end); with "history" up to 8 evenly spaced earlier frames are drawn faded behind it.
//  - One computed line per head from describe_curve() (core/analysis/connections.h) for that
//    frame, as ImGui text.
//  - Maps figure: the layer's effective attention on the probe input (band-shaped: zero
//    outside the window), one heatmap panel per head with one shared colorbar, from the latest
//    probe. Every figure fits the panel whole (no scrolling past it): where the curves and the
//    maps do not both fit, the maps are left out and a line (and the dimmed "maps" control)
//    says so.
//  - Hover readouts: curves (head, t, offset, g at the cursor's t), beta (slot, t, offset,
//    beta, g) and maps (query i -> key j = w, with the probe's tokens); the head under the mouse
//    is outlined in the curves and the maps (its curve thickened when overlaid).
// Contract: "Export..." (curves, "connections") and "Export maps..." ("connections-maps") send
// exactly the figures on screen to the Export dialog; the report's "options" are the builder's,
// so `attnlab export --figure connections` with them writes the same figure. Figures are rebuilt
// only when the history, the chosen frame, the layer, a control or the grid the space allows
// change (curves), or when the maps change (generation, attention_step, layer); the hover marks
// are drawn over them and are not part of the figure. Draws into the workspace's tile from the
// snapshot only. Needs the GL context current; destroy before the window. No torch.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/figures/models/connections_figure.h"
#include "app/gui/panel.h"
#include "app/gui/plot/live_figure.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

struct ImFont;

namespace attn::gui {

class KyConnectionsPanel : public Panel {
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
    bool beta = false;                   // the beta row was drawn
    std::vector<std::string> summaries;  // describe_curve() sentence per head
  };

  void draw(FrameContext& frame) override;
  nlohmann::json report() const override;
  std::vector<std::string> figures(const Snapshot& snap) const override;
  const fig::Figure* shown_figure(const std::string& name) const override {
    return name == "connections" && report_.drawn ? &curves_.figure : nullptr;
  }
  bool wants_auto_open(const Snapshot& snap) const override {
    return has_ky_views(snap.mechanism_history());
  }
  const Report& last_report() const { return report_; }

 private:
  // Everything derived from (history, frame, layer): recomputed only when its key changes.
  struct View {
    uint64_t key = 0;
    bool valid = false;
    std::vector<std::string> summaries;
  };
  // How the curves figure is arranged (chosen from the space and the controls).
  struct Arrangement {
    bool overlaid = false;
    bool beta = false;
    int cols = 1;  // head columns (small multiples)
  };

  void choose_frame(const std::vector<ConnectionFrame>& history, uint64_t generation);
  void update_view(const std::vector<ConnectionFrame>& history, uint64_t generation);
  void draw_toolbar(const std::vector<ConnectionFrame>& history);
  Arrangement arrange(ImVec2 size, ImFont* font) const;
  // The builder's options for what the controls ask and the space allows (the figure's cols).
  figures::ConnectionsOptions options(const Arrangement& a) const;
  void draw_curves(const std::vector<ConnectionFrame>& history, ImFont* font, ImVec2 size);
  void hover_curves(bool hovered);
  void draw_summaries(ImFont* font);
  void build_maps(const Snapshot& snap);
  void draw_maps(const Snapshot& snap, ImFont* font, float height);

  // The chosen layer's curves in history frame `index` (nullptr if that frame lacks it or its
  // shape differs from the chosen frame's).
  const ConnectionCurves* curves_in(const std::vector<ConnectionFrame>& history, int index) const;

  // ky's curves of the snapshot's mechanism views, converted when they change.
  const std::vector<ConnectionFrame>& ky_history(const Snapshot& snap);
  std::shared_ptr<const std::vector<MechanismFrame>> history_source_;  // held: never reused
  std::vector<ConnectionFrame> history_;

  int layer_ = -1;             // model layer index of the ky layer shown
  bool overlaid_ = false;      // false: small multiples
  bool show_history_ = true;   // faded earlier frames
  bool show_beta_ = true;      // the beta row (where there is room)
  bool show_maps_ = true;      // the band-shaped attention maps
  int frame_ = -1;             // chosen history index
  int64_t frame_step_ = -1;    // ...and its step, to find it again after the history thins
  bool follow_latest_ = true;  // the slider is at the end: track new frames
  uint64_t generation_ = ~uint64_t(0);
  int hovered_head_ = -1;  // from the previous frame's maps/plots: highlighted
  int hovered_head_next_ = -1;
  const ConnectionCurves* current_ = nullptr;  // chosen frame's curves (valid during draw)
  Arrangement arranged_;                       // what the curves figure was last built as
  bool too_small_for_grid_ = false;            // small multiples asked for, overlaid drawn
  bool no_room_for_beta_ = false;              // beta asked for, left out
  bool no_room_for_maps_ = false;              // maps asked for, left out

  View view_;
  // The curves figure (what each of its panels shows) and what it was built from.
  figures::ConnectionsFigure curves_;
  uint64_t curves_key_ = 0;
  figures::ConnectionsOptions built_;  // the options curves_ was built with
  std::string curves_error_;           // why the builder refused the last options
  LiveFigure curves_live_;
  // The maps figure: one panel per head (maps_heads_[k]: its head), and what it was built from.
  fig::Figure maps_;
  uint64_t maps_key_ = 0;
  std::vector<int> maps_heads_;
  LiveFigure maps_live_;
  Report report_;
};

}  // namespace attn::gui
