// Workspace: the window's tiled work area. ImGui 1.86 has no docking, so this builds it: the
// panels of the panel table (gui/panel.h) arranged by a TileLayout (gui/layout/tile_layout.h) into
// opaque tiles with tabs, separated by splitters the user drags.
// Contract:
//  - UI thread only. draw() fills the given rectangle (below the menu bar) every frame; no two
//    panels ever overlap, whatever the window size (TileLayout's guarantee).
//  - The layout persists as JSON (save()/load()); a missing, unreadable or stale file falls back
//    to the experiment's default layout and says so in note().
//  - A panel whose wants_auto_open() turns true is opened once, unless the user closed it.
//  - report() gives, per panel of the table: title, open, drawn, tile and (when drawn) "rect":
//    [x, y, w, h] in window pixels, plus each panel's own report under its name ('-' -> '_').
#pragma once
#include <imgui.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "app/gui/layout/tile_layout.h"
#include "app/gui/panel.h"

namespace attn::gui {

class Workspace {
 public:
  explicit Workspace(const PanelSetup& setup);

  // The layout: read from `path` (empty: none) or the experiment's default.
  void load(const std::string& path, const PanelSetup& setup);
  bool save(std::string* error) const;
  void reset_layout();
  const std::string& note() const { return note_; }
  // The UI scale saved with the layout (0: not chosen; the window follows the monitor).
  float ui_scale() const { return ui_scale_; }
  void set_ui_scale(float s) { ui_scale_ = s; }

  bool is_open(const std::string& name) const { return layout_.is_open(name); }
  void open(const std::string& name);  // and bring its tab to the front
  void close(const std::string& name);
  // Test and benchmark hooks: exactly these panels open (each in its default tile).
  void show_only(const std::vector<std::string>& names);
  // Stops auto-opening (the soak test's panel cycling decides what is shown).
  void disable_auto_open() { auto_open_enabled_ = false; }

  void draw(FrameContext& frame, ImVec2 pos, ImVec2 size);
  // The View menu's panel items (show/hide, place into a tile) and Reset layout.
  void draw_view_menu();

  Panel* panel(const std::string& name) const;
  std::vector<std::string> figures(const Snapshot& snap) const;  // of the drawn panels
  // The figure as a drawn panel shows it (Panel::shown_figure), or nullptr.
  const fig::Figure* shown_figure(const std::string& name) const;
  nlohmann::json report() const;
  // Panel::close() of every panel, in table order, as the window closes: the runs they could not
  // record whole.
  std::vector<std::string> close_panels();

 private:
  struct Entry {
    const PanelRow* row;
    std::unique_ptr<Panel> panel;
    bool drawn = false;
    TileRect rect;  // content rectangle of the last draw (window pixels)
    bool auto_open_done = false;
  };
  Entry* entry(const std::string& name);
  const Entry* entry(const std::string& name) const;
  TilePlace place_of(const std::string& name) const;
  void select_active();  // every tile's active tab is brought to the front in the next draw
  void draw_tile(FrameContext& frame, TileLayout::Node* tile, const TileRect& rect);
  void draw_tab_menu(const std::string& name);
  void draw_splitters();
  std::string tile_label(const TileLayout::Node& tile) const;

  std::vector<Entry> entries_;
  TileLayout layout_;
  std::string path_;
  std::string note_;
  std::vector<std::pair<std::string, TilePlace>> defaults_;  // the experiment's default panels
  std::set<std::string> select_;  // tabs to bring to the front in the next draw
  std::set<std::string> user_closed_;
  TileRect area_{0, 0, 1280, 720};
  bool auto_open_enabled_ = true;
  float ui_scale_ = 0;
};

}  // namespace attn::gui
