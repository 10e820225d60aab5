// The Connection Transformer panel's model (conn_transformer_panel.h draws it): the panel's
// control, the four figures it shows for a snapshot and the text beside them, from the
// snapshot's generic conn view (Snapshot::model_views), decoded by core/models/conn/conn_view.h.
//  - Figures: C (figures::conn_matrix_figure; with "reorder" its slots are ordered by total
//    |C| in and out, strongest first, the heatmap's rows and columns permuted, the ticks
//    labelled with the real slot indices and the title saying so), the eigenvalues of I + C,
//    rho and ||I + C||_2 over training, and the reasoning trace (figures::conn_trace_figure).
//    A figure that cannot be built keeps the builder's message as its note.
// Contract: plain data, no ImGui, no torch; UI thread only. update() rebuilds the figures only
// when the snapshot (serial) or the control changed since the last call.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/models/conn/conn_view.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

namespace attn::gui {

class ConnTransformerModel {
 public:
  // A plot area's content: the figure, whether it could be built, and why not.
  struct Plot {
    fig::Figure figure;
    bool ok = false;
    std::string note;
  };
  enum PlotId { kMatrix, kEigenvalues, kSpectral, kTrace, kPlots };

  // Whether the snapshot is a conn model with C recorded (else the panel shows only a note).
  static bool shows(const Snapshot& snap) { return has_conn_matrix(snap); }

  // The "reorder" control.
  bool reorder() const { return reorder_; }
  void set_reorder(bool on) { reorder_ = on; }

  // Rebuilds the figures for `snap` when it or the control changed (nothing when !shows(snap)).
  void update(const Snapshot& snap);
  const Plot& plot(PlotId id) const { return plots_[id]; }
  // The matrix shown: display position -> slot.
  const std::vector<int>& order() const { return order_; }

  // The exportable figures shown (names, in screen order), and the one named as shown.
  std::vector<std::string> figures(const Snapshot& snap) const;
  const fig::Figure* shown_figure(const std::string& name) const;
  // The view decoded at the last update() that built (nullptr before one).
  const ConnView* view() const { return view_.get(); }

  // The text above and below the figures: the model's shape and control, the parameter count
  // and estimate note, and the connection statistics (one string per line).
  static std::string summary(const ConnView& v);
  static std::string parameters_note(const ConnView& v);
  static std::vector<std::string> stats_lines(const ConnView& v);

  // For the exit report and tests: the control, the step built, and each figure's name (or
  // note when it could not be built).
  nlohmann::json report() const;

 private:
  std::array<Plot, kPlots> plots_;
  std::vector<int> order_;
  std::shared_ptr<const ConnView> view_;
  bool reorder_ = false;
  uint64_t built_serial_ = ~uint64_t(0);
  bool built_reorder_ = false;
  int64_t built_step_ = -1;
};

}  // namespace attn::gui
