// Panel: the one interface every view of the window implements, and the panel table.
// Contract:
//  - The workspace (gui/layout/workspace.h) owns the ImGui window: it places each open panel in a
//  tile
//    (a child window that fills the tile below its tab bar) and calls draw() inside it. A panel
//    draws content only: no ImGui::Begin/End of its own, never wider than the region it is given.
//  - draw() gets everything from one FrameContext: one snapshot and one trainer state per frame,
//    taken by the frame loop (gui_main.cpp); panels never wait for the trainer.
//  - update() runs every frame whether the panel is drawn or not (Compare saves finished runs).
//  - close() runs once as the window closes, before the exit code is chosen: a panel that trains
//    (Compare) stops its trainers there, saving their recorded runs, and returns every run it
//    could not record whole (each line names the run, the directory and why).
//  - report() is the panel's part of the ATTN_GUI_REPORT exit report (null: nothing to add); the
//    workspace adds "open", "drawn" and "rect" for every panel itself.
//  - figures() names the exportable figures (app/figures/catalog/figures.h) the panel shows now, in the
//    order shown; the screen/export agreement test (tests/e2e/gui_figures.sh) exports each.
//  - Adding a panel: its own file(s) under app/panels/ and one row in kPanelTable
//    (app/panels/panel_table.cpp).
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/gui/gui.h"
#include "app/gui/layout/tile_layout.h"
#include "app/gui/ui_state.h"
#include "core/config/config.h"
#include "core/training/trainer.h"
#include "core/views/snapshot.h"

struct ImFont;
namespace attn::fig {
struct Figure;
}

namespace attn::gui {

class Timeline;  // gui/timeline.h

// What a panel may read and do in one frame. snap is the timeline's view (the live model, or the
// model at the recorded step the timeline shows); timeline reads every recorded step.
struct FrameContext {
  const Snapshot& snap;
  TrainerState state;
  Trainer& trainer;
  UiState& ui;
  ImFont* small_font;
  Timeline* timeline = nullptr;
};

class Panel {
 public:
  virtual ~Panel() = default;
  virtual void draw(FrameContext& frame) = 0;
  virtual void update(FrameContext&) {}
  virtual std::vector<std::string> close() { return {}; }
  virtual nlohmann::json report() const { return nullptr; }
  virtual std::vector<std::string> figures(const Snapshot&) const { return {}; }
  // The figure named `name` exactly as this panel drew it last frame (what its Export button
  // sends), or nullptr when it shows no such figure.
  virtual const fig::Figure* shown_figure(const std::string& /*name*/) const { return nullptr; }
  // True once the run gives this panel something new to show (ky connection curves appear, a
  // conn model starts): the workspace opens it the first time, unless the user closed it.
  virtual bool wants_auto_open(const Snapshot&) const { return false; }
};

// What the panel table's rows are built from.
struct PanelSetup {
  const GuiOptions& options;
  const ExperimentConfig& config;
};

struct PanelRow {
  const char* name;   // --panel NAME, the report key, the layout file's tab names
  const char* title;  // tab title
  TilePlace place;    // the tile it opens in (gui/layout/tile_layout.h)
  // Shown on a fresh layout (first launch, Reset layout) for this experiment.
  bool (*open_at_start)(const PanelSetup&);
  std::unique_ptr<Panel> (*make)(const PanelSetup&);
};

// The panel table, in View-menu order.
const std::vector<PanelRow>& panel_table();

}  // namespace attn::gui
