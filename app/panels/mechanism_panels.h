// Mechanism panels: the panels that show one attention mechanism or architecture (under
// app/panels/mechanisms/, each beside its model). Each registers its panel-table row from its own
// .cpp, keyed by the mechanism's name, so the panel table (app/panels/panel_table.cpp) names no
// mechanism: it lists the generic panels, with every registered mechanism panel after Attention,
// ordered by mechanism and panel name.
// Adding a mechanism's panel: its files under app/panels/mechanisms/ (a model and a thin view)
// and, at namespace scope in its .cpp, one registration:
//   const bool kRow = register_mechanism_panel<MyPanel>("mine", "mine", "My mechanism",
//                                                       TilePlace::Right, PanelOpens::WhenUsed);
// Contract: registration runs in static initialisers, which the linker keeps because the panels'
// views are an object library (app/CMakeLists.txt: attnlab_gui, also linked whole by the headless
// harness); never register from a static library (attnlab_panel_models). A second row under one
// panel name is refused with a message on stderr.
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

// When a fresh layout (first launch, Reset layout) opens a mechanism panel.
enum class PanelOpens {
  Never,               // only from the View menu (a lab)
  WhenUsed,            // when the experiment uses the mechanism (experiment_uses)
  InsteadOfAttention,  // the same, and the Attention panel then stays closed (no attention maps)
};

// The row of panel T for `mechanism`, made with `new T` (registration as above).
template <class T>
struct MechanismPanelOf {
  static inline const char* mechanism = nullptr;
  static inline PanelOpens opens = PanelOpens::Never;
  static bool open_at_start(const PanelSetup& s) {
    return opens != PanelOpens::Never && experiment_uses(s, mechanism);
  }
};
template <class T>
bool register_mechanism_panel(const char* mechanism, const char* name, const char* title,
                              TilePlace place, PanelOpens opens) {
  MechanismPanelOf<T>::mechanism = mechanism;
  MechanismPanelOf<T>::opens = opens;
  return register_mechanism_panel(
      {mechanism,
       opens == PanelOpens::InsteadOfAttention,
       {name, title, place, MechanismPanelOf<T>::open_at_start, make_mechanism_panel<T>}});
}

}  // namespace attn::gui
