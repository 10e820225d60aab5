// The Neural panel's model (neural_panel.h draws it), from the snapshot's latest mechanism views
// (neural_view_of, core/attention/neural/neural_view.h): the panel's settings (layer, head, range,
// grid, slice query and key direction), the score-surface figure it shows and the parameter table,
// and its report.
//  - The settings are a NeuralViewRequest: the trainer has the neural layers observe what they
//    ask for (Trainer::request_mechanism_view with its JSON form); take_request() gives it once
//    each time the settings change. The layer and head are picked from the latest views at once.
//  - The figure is figures::neural_surface_figure of that view (the view's request already sets
//    its range, query and slice), with the slice coloured as the panel always has
//    (learned score orange, dot product sky blue) and the title stating the slice's query and
//    key direction. arrange() lays its three panels in a row, or two by two with the slice
//    beside the learned surface.
//  - b_a's gradient is shown as the exact 0 it is (softmax is shift-invariant), never hidden.
// Contract: plain data, no ImGui, no torch; UI thread only. update() rebuilds the view and the
// figure only when new views are published (compared by pointer) or the layer or head changed.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/attention/neural/neural_view.h"
#include "core/views/snapshot.h"
#include "render/plot/figure.h"

namespace attn::gui {

class NeuralModel {
 public:
  // What the panel showed for the last snapshot, for the GUI's exit report (ATTN_GUI_REPORT) and
  // tests. The JSON keys are the field names (tests/e2e read them).
  struct Report {
    bool drawn = false;              // there was a view to show
    bool surface_available = false;  // d' = 2: surface and slice shown
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
  // One cell of the parameter table: a number, "-" (no backward pass yet) or b_a's exact zero.
  struct Cell {
    enum class Kind { Number, NoGradient, ExactZero };
    std::string text;
    Kind kind = Kind::Number;
  };
  struct Table {
    int layer = 0;
    std::vector<std::string> columns;     // "head", then a value and a gradient per parameter
    std::vector<std::vector<Cell>> rows;  // one per head, the head index first
  };

  // The settings, for the view's widgets.
  NeuralViewRequest& request() { return request_; }
  const NeuralViewRequest& request() const { return request_; }
  // The layer the settings show: the requested one when it is a neural layer of `view`, else the
  // one the trainer fell back to (the surface's).
  int shown_layer(const NeuralView& view) const;
  void select_layer(int layer) { request_.layer = layer; }
  void select_head(int head) { request_.head = head; }
  // The settings to send the trainer when they changed since the last ones sent, once.
  std::optional<NeuralViewRequest> take_request();

  // Clamps the head to the shown layer's, rebuilds the figure for a new view, and the report.
  void update(const Snapshot& snap);
  // The view of the last update(): null when no layer is neural (or nothing observed yet).
  const NeuralView* view() const { return view_.get(); }
  // Whether the surface and slice are shown (else a note, and the table only).
  bool surface_shown() const { return report_.surface_available; }
  const fig::Figure& figure() const { return figure_; }
  bool figure_ok() const { return figure_ok_; }
  const std::string& figure_note() const { return figure_note_; }
  // Three panels in a row, or two by two with the slice second; the slice's panel index.
  void arrange(bool two_by_two);
  int slice_panel() const { return slice_panel_; }
  // Why there is no surface: the view's note, the builder's, or that nothing was computed.
  std::string missing_note(const NeuralView& view) const;

  static Table parameter_table(const NeuralLayerInfo& info);

  const Report& report() const { return report_; }
  nlohmann::json report_json() const;
  // The exportable figures shown: neural-surface when the snapshot gives it.
  std::vector<std::string> figures(const Snapshot& snap) const;

 private:
  void rebuild();
  void fill_report(const NeuralView& view);

  NeuralViewRequest request_;  // the settings, sent when they differ from sent_
  NeuralViewRequest sent_;
  std::shared_ptr<const std::vector<MechanismFrame>> frames_;  // view_'s source
  int view_layer_ = -1, view_head_ = -1;                       // and its request's
  std::shared_ptr<const NeuralView> view_;
  std::string view_error_;  // why the views could not be read
  fig::Figure figure_;
  bool figure_ok_ = false;
  std::string figure_note_;
  int contour_segments_ = 0;  // in figure_'s two surface panels
  int slice_panel_ = 2;
  Report report_;
};

}  // namespace attn::gui
