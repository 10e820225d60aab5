#include "app/gui/layout/workspace.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include "app/gui/window/draw_guard.h"
#include "app/gui/window/palette.h"
#include "core/base/atomic_file.h"

namespace attn::gui {
namespace {

// Edits of the layout asked for while the tiles are being drawn, applied after the loop (the
// tree must not change under it).
std::vector<std::function<void(TileLayout&)>> g_deferred;

std::string report_key(const std::string& name) {
  std::string key = name;
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

}  // namespace

Workspace::Workspace(const PanelSetup& setup) {
  for (const PanelRow& row : panel_table()) {
    Entry e;
    e.row = &row;
    e.panel = row.make(setup);
    entries_.push_back(std::move(e));
  }
  for (const Entry& e : entries_)
    if (e.row->open_at_start(setup)) defaults_.emplace_back(e.row->name, e.row->place);
  layout_ = TileLayout::make_default(defaults_);
  select_active();
}

void Workspace::select_active() {
  for (const TileLayout::Tile& t : layout_.tiles(area_))
    if (!t.node->active.empty()) select_.insert(t.node->active);
}

Workspace::Entry* Workspace::entry(const std::string& name) {
  for (Entry& e : entries_)
    if (name == e.row->name) return &e;
  return nullptr;
}
const Workspace::Entry* Workspace::entry(const std::string& name) const {
  return const_cast<Workspace*>(this)->entry(name);
}

Panel* Workspace::panel(const std::string& name) const {
  const Entry* e = entry(name);
  return e ? e->panel.get() : nullptr;
}

TilePlace Workspace::place_of(const std::string& name) const {
  const Entry* e = entry(name);
  return e ? e->row->place : TilePlace::Right;
}

void Workspace::load(const std::string& path, const PanelSetup& setup) {
  path_ = path;
  if (path.empty()) return;
  std::ifstream in(path);
  if (!in) return;  // first launch: the default layout
  std::vector<std::string> known;
  for (const Entry& e : entries_) known.push_back(e.row->name);
  std::string error;
  std::unique_ptr<TileLayout> loaded;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    loaded = TileLayout::from_json(j, known, &error);
    if (j.is_object() && j.contains("ui_scale") && j["ui_scale"].is_number()) {
      const float s = j["ui_scale"].get<float>();
      if (s >= 0.5f && s <= 4.0f) ui_scale_ = s;
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!loaded) {
    note_ = "Layout " + path + " not used (" + error + "); default layout shown";
    return;
  }
  layout_ = std::move(*loaded);
  select_active();
  // The experiment's own panels (a ky run's Connections...) join a saved layout.
  for (const Entry& e : entries_)
    if (e.row->open_at_start(setup) && !layout_.is_open(e.row->name))
      layout_.open(e.row->name, e.row->place, area_);
}

bool Workspace::save(std::string* error) const {
  if (path_.empty()) return true;
  try {
    nlohmann::json j = layout_.to_json();
    if (ui_scale_ > 0) j["ui_scale"] = ui_scale_;
    write_file_atomic(path_, j.dump(1) + "\n");
  } catch (const std::exception& e) {
    *error = std::string("cannot save the layout: ") + e.what();
    return false;
  }
  return true;
}

void Workspace::reset_layout() {
  layout_ = TileLayout::make_default(defaults_);
  user_closed_.clear();
  select_active();
}

void Workspace::open(const std::string& name) {
  if (!entry(name)) return;
  layout_.open(name, place_of(name), area_);
  user_closed_.erase(name);
  select_.insert(name);
}

void Workspace::close(const std::string& name) {
  layout_.close(name);
  user_closed_.insert(name);
}

void Workspace::show_only(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, TilePlace>> panels;
  for (const std::string& n : names)
    if (entry(n)) panels.emplace_back(n, place_of(n));
  layout_ = TileLayout::make_default(panels);
  select_active();
}

std::string Workspace::tile_label(const TileLayout::Node& tile) const {
  std::string label;
  for (const std::string& tab : tile.tabs) {
    const Entry* e = entry(tab);
    label += (label.empty() ? "" : ", ") + std::string(e ? e->row->title : tab.c_str());
  }
  return "Tile with " + (label.empty() ? std::string("nothing") : label);
}

void Workspace::draw_tab_menu(const std::string& name) {
  if (!ImGui::BeginPopupContextItem()) return;
  const TileLayout::Node* own = layout_.tile_of(name);
  const bool alone = own && own->tabs.size() < 2;
  if (ImGui::MenuItem("Split right", nullptr, false, !alone))
    g_deferred.push_back([name](TileLayout& l) { l.split_off(name, true); });
  if (ImGui::MenuItem("Split down", nullptr, false, !alone))
    g_deferred.push_back([name](TileLayout& l) { l.split_off(name, false); });
  if (ImGui::BeginMenu("Move to")) {
    for (const TileLayout::Tile& t : layout_.tiles(area_)) {
      if (t.node == own) continue;
      const std::string id = t.node->id;
      if (ImGui::MenuItem((tile_label(*t.node) + "##" + id).c_str()))
        g_deferred.push_back([name, id](TileLayout& l) { l.move(name, id); });
    }
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Close")) g_deferred.push_back([this, name](TileLayout&) { close(name); });
  ImGui::EndPopup();
}

void Workspace::draw_tile(FrameContext& frame, TileLayout::Node* tile, const TileRect& r) {
  ImGui::SetCursorScreenPos(ImVec2(r.x, r.y));
  const ImGuiWindowFlags tile_flags = ImGuiWindowFlags_NoScrollbar |
                                      ImGuiWindowFlags_NoScrollWithMouse |
                                      ImGuiWindowFlags_NoSavedSettings;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(4, 4));
  const bool visible =
      ImGui::BeginChild(("##tile-" + tile->id).c_str(), ImVec2(r.w, r.h), true, tile_flags);
  ImGui::PopStyleVar();
  if (visible && tile->tabs.empty()) {
    ImGui::TextDisabled("No panel here. Open one from the View menu.");
  } else if (visible && ImGui::BeginTabBar("tabs", ImGuiTabBarFlags_Reorderable |
                                                       ImGuiTabBarFlags_FittingPolicyScroll)) {
    const std::vector<std::string> tabs = tile->tabs;  // the loop may queue edits
    // A tab brought to the front by code (--panel, View menu, auto-open) is selected by ImGui a
    // frame later: until it is, the tab ImGui still shows must not take `active` back.
    const std::string wanted = select_.count(tile->active) ? tile->active : "";
    for (const std::string& name : tabs) {
      Entry* e = entry(name);
      if (!e) continue;
      bool keep = true;
      const ImGuiTabItemFlags flags = name == wanted ? ImGuiTabItemFlags_SetSelected : 0;
      const std::string label = std::string(e->row->title) + "###" + name;
      const bool selected = ImGui::BeginTabItem(label.c_str(), &keep, flags);
      draw_tab_menu(name);
      if (selected) {
        if (wanted.empty() || name == wanted) {
          tile->active = name;
          select_.erase(name);
        }
        const ImVec2 avail = ImGui::GetContentRegionAvail();
        if (ImGui::BeginChild(e->row->title, ImVec2(avail.x, std::max(1.0f, avail.y)), false)) {
          const ImVec2 p = ImGui::GetWindowPos(), s = ImGui::GetWindowSize();
          e->rect = {p.x, p.y, s.x, s.y};
          e->drawn = s.x > 0 && s.y > 0;
          // A panel that throws or trips an ImGui assertion shows its error; the others draw on.
          draw_guarded(name, [&] { e->panel->draw(frame); });
        }
        ImGui::EndChild();
        ImGui::EndTabItem();
      }
      if (!keep) g_deferred.push_back([this, name](TileLayout&) { close(name); });
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

void Workspace::draw_splitters() {
  const ImGuiIO& io = ImGui::GetIO();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  int index = 0;
  for (const TileLayout::Splitter& s : layout_.splitters(area_)) {
    ImGui::SetCursorScreenPos(ImVec2(s.rect.x, s.rect.y));
    ImGui::PushID(index++);
    ImGui::InvisibleButton("splitter", ImVec2(std::max(1.0f, s.rect.w), std::max(1.0f, s.rect.h)));
    ImGui::PopID();
    const bool active = ImGui::IsItemActive(), hovered = ImGui::IsItemHovered();
    if (active) TileLayout::drag(s, s.columns ? io.MouseDelta.x : io.MouseDelta.y);
    if (active || hovered) {
      ImGui::SetMouseCursor(s.columns ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
      dl->AddRectFilled(
          ImVec2(s.rect.x, s.rect.y), ImVec2(s.rect.x + s.rect.w, s.rect.y + s.rect.h),
          ImGui::GetColorU32(active ? ImGuiCol_SeparatorActive : ImGuiCol_SeparatorHovered));
    }
  }
}

void Workspace::draw(FrameContext& frame, ImVec2 pos, ImVec2 size) {
  area_ = {pos.x, pos.y, std::max(1.0f, size.x), std::max(1.0f, size.y)};
  for (Entry& e : entries_) {
    e.panel->update(frame);
    e.drawn = false;
    if (auto_open_enabled_ && !e.auto_open_done && !user_closed_.count(e.row->name) &&
        e.panel->wants_auto_open(frame.snap)) {
      e.auto_open_done = true;
      if (!layout_.is_open(e.row->name)) open(e.row->name);
    }
    if (layout_.is_open(e.row->name)) e.auto_open_done = true;  // seen: never reopened by itself
  }
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(ImVec2(area_.w, area_.h));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  const ImGuiWindowFlags host_flags =
      ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
      ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse |
      ImGuiWindowFlags_NoBackground;  // the framebuffer is cleared to the window colour
  ImGui::Begin("##workspace", nullptr, host_flags);
  ImGui::PopStyleVar(3);
  for (const TileLayout::Tile& t : layout_.tiles(area_)) draw_tile(frame, t.node, t.rect);
  draw_splitters();
  ImGui::End();
  std::vector<std::function<void(TileLayout&)>> edits;
  edits.swap(g_deferred);
  for (auto& edit : edits) edit(layout_);
}

void Workspace::draw_view_menu() {
  for (const Entry& e : entries_) {
    const bool is_open = layout_.is_open(e.row->name);
    if (ImGui::MenuItem(e.row->title, nullptr, is_open)) {
      if (is_open)
        close(e.row->name);
      else
        open(e.row->name);
    }
  }
  ImGui::Separator();
  if (ImGui::BeginMenu("Place panel in")) {
    const auto tiles = layout_.tiles(area_);
    for (const Entry& e : entries_) {
      if (!ImGui::BeginMenu(e.row->title)) continue;
      const TileLayout::Node* own = layout_.tile_of(e.row->name);
      for (const TileLayout::Tile& t : tiles) {
        const std::string id = t.node->id, name = e.row->name;
        if (ImGui::MenuItem((tile_label(*t.node) + "##" + id).c_str(), nullptr, t.node == own)) {
          layout_.move(name, id);
          user_closed_.erase(name);
          select_.insert(name);
        }
      }
      ImGui::EndMenu();
    }
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Reset layout")) reset_layout();
}

std::vector<std::string> Workspace::figures(const Snapshot& snap) const {
  std::vector<std::string> out;
  for (const Entry& e : entries_)
    if (e.drawn)
      for (const std::string& f : e.panel->figures(snap)) out.push_back(f);
  return out;
}

const fig::Figure* Workspace::shown_figure(const std::string& name) const {
  for (const Entry& e : entries_)
    if (e.drawn)
      if (const fig::Figure* f = e.panel->shown_figure(name)) return f;
  return nullptr;
}

std::vector<std::string> Workspace::close_panels() {
  std::vector<std::string> out;
  for (Entry& e : entries_)
    for (std::string& line : e.panel->close()) out.push_back(std::move(line));
  return out;
}

nlohmann::json Workspace::report() const {
  nlohmann::json panels = nlohmann::json::object(), out = nlohmann::json::object();
  for (const Entry& e : entries_) {
    const TileLayout::Node* tile = layout_.tile_of(e.row->name);
    nlohmann::json p = {{"title", e.row->title},
                        {"open", tile != nullptr},
                        {"drawn", e.drawn},
                        {"tile", tile ? tile->id : ""}};
    if (e.drawn) p["rect"] = {e.rect.x, e.rect.y, e.rect.w, e.rect.h};
    panels[e.row->name] = std::move(p);
    nlohmann::json own = e.panel->report();
    if (!own.is_null()) out[report_key(e.row->name)] = std::move(own);
  }
  out["panels"] = std::move(panels);
  return out;
}

}  // namespace attn::gui
