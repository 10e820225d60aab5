// Mechanism panels: the panels that show one attention mechanism or architecture (the KY
// connections and KY lab for "ky", Neural for "neural", the Connection Transformer for "conn").
// Each registers its panel-table row from its own .cpp, keyed by the mechanism's name, so the
// panel table (app/panels/panel_table.cpp) names no mechanism: it lists the generic panels and
// then every registered mechanism panel, ordered by mechanism and panel name.
// Adding a mechanism's panel: its files under app/panels/mechanisms/ (a model and a thin view)
// and, in its .cpp, one registration:
//   const bool kRow = register_mechanism_panel(
//       {"mine", false, {"mine", "My mechanism", TilePlace::Right,
//                        [](const PanelSetup& s) { return experiment_uses(s, "mine"); },
//                        make_mechanism_panel<MyPanel>}});
// Contract: registration runs in static initialisers, which the linker keeps because app/panels
// is built as an object library (app/CMakeLists.txt: attnlab_gui, also linked whole by the
// headless harness); never put a mechanism panel in a static library. Rows registered twice
// under one panel name are an error (the later one is refused with a message on stderr).
#pragma once
#include <memory>
#include <vector>

#include "app/gui/panel.h"

namespace attn::gui {

struct MechanismPanelRow {
  const char* mechanism;  // the model.attention entry or model.architecture the panel shows
  // An architecture without attention maps (conn): where this panel opens at start, the
  // generic Attention panel does not.
  bool replaces_attention = false;
  PanelRow row;
};

// Adds `row` to the table; returns true, for a namespace-scope `const bool` initialiser.
bool register_mechanism_panel(const MechanismPanelRow& row);
// Every registered row, ordered by mechanism, then panel name.
std::vector<MechanismPanelRow> mechanism_panel_rows();

// True when the experiment uses `name` as an attention mechanism (model.attention) or as its
// architecture (model.architecture).
bool experiment_uses(const PanelSetup& setup, const char* name);

template <class T>
std::unique_ptr<Panel> make_mechanism_panel(const PanelSetup&) {
  return std::make_unique<T>();
}

}  // namespace attn::gui
