// The mechanism-views model: what any layer's attention mechanism shows of itself
// (Snapshot::mechanism_views, core/views/mechanism_view.h), drawn by the generic mechanism-views
// figure (app/figures/models/mechanism_view_figure.h), with no code naming a mechanism: a new
// mechanism's view reaches it as it reaches views.rec and `attnlab export`. No ImGui: tests drive
// it without a window (tests/app/panel_models/test_mechanism_views.cpp, and the toy mechanism's
// test build).
// Contract:
//  - Controls: layer (-1: every layer with a view) and frame (-1: the latest; else an index
//    into the history, clamped to it).
//  - figure(snap) is the figure for the controls, rebuilt only when snap.serial or a control
//    changed; when the builder refuses (no views, a layer without one) the figure is empty and
//    error() says why.
//  - layers(snap): the layers with a view in the latest frame, for the layer control.
//  - report(): the controls, the step drawn, the panels' titles, error.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/views/snapshot.h"
#include "render/plot/figure.h"

namespace attn::gui {

class MechanismViewsModel {
 public:
  int layer = -1;
  int frame = -1;

  static bool empty(const Snapshot& snap) { return snap.mechanism_history().empty(); }
  static std::vector<int> layers(const Snapshot& snap);
  const fig::Figure& figure(const Snapshot& snap);
  const std::string& error() const { return error_; }
  nlohmann::json report() const;

 private:
  fig::Figure figure_;
  std::string error_;
  uint64_t built_serial_ = ~uint64_t(0);
  int built_layer_ = -2, built_frame_ = -2;
};

}  // namespace attn::gui
