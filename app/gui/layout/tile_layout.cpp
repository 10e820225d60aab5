#include "app/gui/layout/tile_layout.h"

#include <algorithm>
#include <functional>
#include <set>

namespace attn::gui {
namespace {

using Node = TileLayout::Node;

// Splits `extent` pixels (gap excluded) between the two sides: ratio-proportional, but each side
// keeps kMinTile while the extent allows it.
float first_extent(float extent, float ratio) {
  const float m = TileLayout::kMinTile;
  float a = std::floor(extent * ratio);
  if (extent >= 2 * m) a = std::clamp(a, m, extent - m);
  return std::max(0.0f, std::min(a, extent));
}

// The splitter gap, narrowed where the rectangle itself is narrower (a squeezed nested split).
float gap_in(float extent) {
  return std::min(TileLayout::kGap, std::max(0.0f, extent));
}

void split_rect(const Node& n, const TileRect& r, TileRect* a, TileRect* b) {
  const float gap = gap_in(n.kind == Node::Kind::Columns ? r.w : r.h);
  if (n.kind == Node::Kind::Columns) {
    const float extent = std::max(0.0f, r.w - gap);
    const float wa = first_extent(extent, n.ratio);
    *a = {r.x, r.y, wa, r.h};
    *b = {r.x + wa + gap, r.y, extent - wa, r.h};
  } else {
    const float extent = std::max(0.0f, r.h - gap);
    const float ha = first_extent(extent, n.ratio);
    *a = {r.x, r.y, r.w, ha};
    *b = {r.x, r.y + ha + gap, r.w, extent - ha};
  }
}

void visit(Node* n, const TileRect& r, const std::function<void(Node*, const TileRect&)>& leaf,
           const std::function<void(Node*, const TileRect&)>& inner) {
  if (n->kind == Node::Kind::Leaf) {
    leaf(n, r);
    return;
  }
  inner(n, r);
  TileRect a, b;
  split_rect(*n, r, &a, &b);
  visit(n->a.get(), a, leaf, inner);
  visit(n->b.get(), b, leaf, inner);
}

Node* find_leaf(Node* n, const std::function<bool(const Node&)>& pred) {
  if (n->kind == Node::Kind::Leaf) return pred(*n) ? n : nullptr;
  if (Node* f = find_leaf(n->a.get(), pred)) return f;
  return find_leaf(n->b.get(), pred);
}

Node* parent_of(Node* root, const Node* child) {
  if (root->kind == Node::Kind::Leaf) return nullptr;
  if (root->a.get() == child || root->b.get() == child) return root;
  if (Node* p = parent_of(root->a.get(), child)) return p;
  return parent_of(root->b.get(), child);
}

std::unique_ptr<Node> make_leaf(std::string id) {
  auto n = std::make_unique<Node>();
  n->id = std::move(id);
  return n;
}

// Turns `leaf` into a split whose `new_first` side (a, else b) is a new empty leaf `id`.
Node* split_leaf(Node* leaf, bool columns, bool new_first, const std::string& id, float ratio) {
  auto old = std::make_unique<Node>();
  old->id = std::move(leaf->id);
  old->tabs = std::move(leaf->tabs);
  old->active = std::move(leaf->active);
  auto fresh = make_leaf(id);
  Node* result = fresh.get();
  leaf->kind = columns ? Node::Kind::Columns : Node::Kind::Rows;
  leaf->ratio = ratio;
  leaf->id.clear();
  leaf->tabs.clear();
  leaf->active.clear();
  leaf->a = new_first ? std::move(fresh) : std::move(old);
  leaf->b = new_first ? std::move(old) : std::move(fresh);
  return result;
}

nlohmann::json node_json(const Node& n) {
  if (n.kind == Node::Kind::Leaf) return {{"tile", n.id}, {"tabs", n.tabs}, {"active", n.active}};
  return {{"split", n.kind == Node::Kind::Columns ? "columns" : "rows"},
          {"ratio", n.ratio},
          {"a", node_json(*n.a)},
          {"b", node_json(*n.b)}};
}

std::unique_ptr<Node> node_from_json(const nlohmann::json& j, const std::set<std::string>& known,
                                     std::set<std::string>& seen_panels,
                                     std::set<std::string>& seen_ids, int depth,
                                     std::string* error) {
  if (depth > 16) {
    *error = "layout nested deeper than 16 splits";
    return nullptr;
  }
  if (!j.is_object()) {
    *error = "layout node is not an object";
    return nullptr;
  }
  auto n = std::make_unique<Node>();
  if (j.contains("split")) {
    const auto& split = j["split"];
    if (!split.is_string() || (split != "columns" && split != "rows")) {
      *error = "layout split must be \"columns\" or \"rows\"";
      return nullptr;
    }
    n->kind = split == "columns" ? Node::Kind::Columns : Node::Kind::Rows;
    const auto ratio = j.value("ratio", nlohmann::json(0.5));
    n->ratio = ratio.is_number() ? std::clamp(ratio.get<float>(), 0.05f, 0.95f) : 0.5f;
    if (!(n->ratio == n->ratio)) n->ratio = 0.5f;  // NaN
    if (!j.contains("a") || !j.contains("b")) {
      *error = "layout split without both sides";
      return nullptr;
    }
    n->a = node_from_json(j["a"], known, seen_panels, seen_ids, depth + 1, error);
    if (!n->a) return nullptr;
    n->b = node_from_json(j["b"], known, seen_panels, seen_ids, depth + 1, error);
    if (!n->b) return nullptr;
    return n;
  }
  const auto id = j.value("tile", nlohmann::json(""));
  n->id = id.is_string() ? id.get<std::string>() : "";
  if (n->id.empty() || seen_ids.count(n->id)) n->id.clear();  // renamed by the caller
  seen_ids.insert(n->id);
  if (j.contains("tabs") && j["tabs"].is_array())
    for (const auto& t : j["tabs"])
      if (t.is_string() && known.count(t.get<std::string>()) &&
          seen_panels.insert(t.get<std::string>()).second)
        n->tabs.push_back(t.get<std::string>());
  const auto active = j.value("active", nlohmann::json(""));
  if (active.is_string() &&
      std::find(n->tabs.begin(), n->tabs.end(), active.get<std::string>()) != n->tabs.end())
    n->active = active.get<std::string>();
  else if (!n->tabs.empty())
    n->active = n->tabs.front();
  return n;
}

}  // namespace

const char* tile_place_id(TilePlace p) {
  constexpr const char* kIds[] = {"side", "top", "bottom", "right"};  // TilePlace's order
  return kIds[static_cast<int>(p)];
}

TileLayout::TileLayout() : root_(make_leaf("top")) {}

TileLayout TileLayout::make_default(const std::vector<std::pair<std::string, TilePlace>>& panels,
                                    float side_fraction, float top_fraction) {
  // Every place gets a tile (side | top over (bottom | right)); the ones no panel uses go below.
  TileLayout t;
  t.root_ = std::make_unique<Node>();
  t.root_->kind = Node::Kind::Columns;
  t.root_->ratio = side_fraction;
  t.root_->a = make_leaf("side");
  t.root_->b = make_leaf("top");
  Node* bottom = split_leaf(t.root_->b.get(), false, false, "bottom", top_fraction);
  split_leaf(bottom, true, false, "right", 0.45f);
  for (const auto& [name, place] : panels) {
    Node* tile = t.find_tile(tile_place_id(place));
    if (!tile) tile = t.find_tile("top");
    if (!tile || t.is_open(name)) continue;
    tile->tabs.push_back(name);
    if (tile->active.empty()) tile->active = name;
  }
  // A tile the panels left empty (top without a top panel) is removed.
  for (;;) {
    Node* empty = find_leaf(t.root_.get(), [](const Node& n) { return n.tabs.empty(); });
    if (!empty || empty == t.root_.get()) break;
    t.remove_empty(empty);
  }
  return t;
}

std::vector<TileLayout::Tile> TileLayout::tiles(const TileRect& area) const {
  std::vector<Tile> out;
  visit(
      root_.get(), area,
      [&](Node* n, const TileRect& r) {
        out.push_back({n, r});
      },
      [](Node*, const TileRect&) {});
  return out;
}

std::vector<TileLayout::Splitter> TileLayout::splitters(const TileRect& area) const {
  std::vector<Splitter> out;
  visit(
      root_.get(), area, [](Node*, const TileRect&) {},
      [&](Node* n, const TileRect& r) {
        TileRect a, b;
        split_rect(*n, r, &a, &b);
        if (n->kind == Node::Kind::Columns)
          out.push_back({n, {a.x + a.w, r.y, gap_in(r.w), r.h}, true, std::max(0.0f, r.w - kGap)});
        else
          out.push_back({n, {r.x, a.y + a.h, r.w, gap_in(r.h)}, false, std::max(0.0f, r.h - kGap)});
      });
  return out;
}

TileLayout::Node* TileLayout::tile_of(const std::string& panel) const {
  return find_leaf(root_.get(), [&](const Node& n) {
    return std::find(n.tabs.begin(), n.tabs.end(), panel) != n.tabs.end();
  });
}

TileLayout::Node* TileLayout::find_tile(const std::string& id) const {
  return find_leaf(root_.get(), [&](const Node& n) { return n.id == id; });
}

std::vector<std::string> TileLayout::open_panels() const {
  std::vector<std::string> out;
  for (const Tile& t : tiles({0, 0, 1000, 1000}))
    out.insert(out.end(), t.node->tabs.begin(), t.node->tabs.end());
  return out;
}

std::string TileLayout::next_tile_id() {
  for (;;) {
    std::string id = "tile-" + std::to_string(next_id_++);
    if (!find_tile(id)) return id;
  }
}

TileLayout::Node* TileLayout::largest_main_tile(const TileRect& area) const {
  Node* best = nullptr;
  float best_area = -1;
  for (const Tile& t : tiles(area)) {
    const float a = t.rect.w * t.rect.h * (t.node->id == "side" ? 0.0f : 1.0f);
    if (a > best_area) best = t.node, best_area = a;
  }
  return best;
}

void TileLayout::open(const std::string& panel, TilePlace place, const TileRect& area) {
  if (is_open(panel)) {
    activate(panel);
    return;
  }
  Node* tile = find_tile(tile_place_id(place));
  if (!tile && root_->kind == Node::Kind::Leaf && root_->tabs.empty()) tile = root_.get();
  if (!tile && place == TilePlace::Side) {
    auto old_root = std::move(root_);
    root_ = std::make_unique<Node>();
    root_->kind = Node::Kind::Columns;
    root_->ratio = 0.27f;
    root_->a = make_leaf("side");
    root_->b = std::move(old_root);
    tile = root_->a.get();
  }
  if (!tile) {
    Node* target = largest_main_tile(area);
    TileRect r{};
    for (const Tile& t : tiles(area))
      if (t.node == target) r = t.rect;
    const bool columns = place == TilePlace::Right;
    const float extent = columns ? r.w : r.h;
    if (extent >= 2 * kMinTile + kGap) {
      tile = split_leaf(target, columns, place == TilePlace::Top, tile_place_id(place),
                        place == TilePlace::Top ? 0.4f : 0.55f);
    } else {
      tile = target;  // too small to split: a tab beside what is there
    }
  }
  tile->tabs.push_back(panel);
  tile->active = panel;
}

void TileLayout::remove_empty(Node* leaf) {
  Node* parent = parent_of(root_.get(), leaf);
  if (!parent) return;  // the root stays, empty
  std::unique_ptr<Node> sibling =
      parent->a.get() == leaf ? std::move(parent->b) : std::move(parent->a);
  *parent = std::move(*sibling);
}

void TileLayout::close(std::string panel) {
  Node* tile = tile_of(panel);
  if (!tile) return;
  auto it = std::find(tile->tabs.begin(), tile->tabs.end(), panel);
  const size_t index = static_cast<size_t>(it - tile->tabs.begin());
  tile->tabs.erase(it);
  if (tile->active == panel)
    tile->active = tile->tabs.empty() ? "" : tile->tabs[std::min(index, tile->tabs.size() - 1)];
  if (tile->tabs.empty()) remove_empty(tile);
}

void TileLayout::activate(const std::string& panel) {
  if (Node* tile = tile_of(panel)) tile->active = panel;
}

void TileLayout::move(std::string panel, std::string tile_id) {
  Node* target = find_tile(tile_id);
  if (!target || target == tile_of(panel)) {
    activate(panel);
    return;
  }
  // Removing the panel may remove its tile and move the target node's contents: find the
  // target again by id afterwards.
  close(panel);
  target = find_tile(tile_id);
  if (!target) target = largest_main_tile({0, 0, 1000, 1000});
  target->tabs.push_back(panel);
  target->active = panel;
}

void TileLayout::split_off(std::string panel, bool columns) {
  Node* tile = tile_of(panel);
  if (!tile || tile->tabs.size() < 2) return;  // nothing would be left in the old half
  tile->tabs.erase(std::find(tile->tabs.begin(), tile->tabs.end(), panel));
  if (tile->active == panel) tile->active = tile->tabs.front();
  Node* fresh = split_leaf(tile, columns, false, next_tile_id(), 0.5f);
  fresh->tabs.push_back(panel);
  fresh->active = panel;
}

void TileLayout::drag(const Splitter& s, float delta) {
  if (s.extent <= 0) return;
  const float a = first_extent(s.extent, s.node->ratio) + delta;
  s.node->ratio = std::clamp(a / s.extent, 0.05f, 0.95f);
  if (s.extent >= 2 * kMinTile)
    s.node->ratio = std::clamp(s.node->ratio, kMinTile / s.extent, 1.0f - kMinTile / s.extent);
}

nlohmann::json TileLayout::to_json() const {
  return {{"version", 1}, {"root", node_json(*root_)}};
}

std::unique_ptr<TileLayout> TileLayout::from_json(const nlohmann::json& j,
                                                  const std::vector<std::string>& known_panels,
                                                  std::string* error) {
  if (!j.is_object() || !j.contains("root")) {
    *error = "not a workspace layout (no \"root\")";
    return nullptr;
  }
  const std::set<std::string> known(known_panels.begin(), known_panels.end());
  std::set<std::string> seen_panels, seen_ids;
  auto root = node_from_json(j["root"], known, seen_panels, seen_ids, 0, error);
  if (!root) return nullptr;
  auto t = std::make_unique<TileLayout>();
  t->root_ = std::move(root);
  // Tiles without a usable id get fresh ones; tiles left empty (panels no longer known) go.
  for (Tile& tile : t->tiles({0, 0, 1000, 1000}))
    if (tile.node->id.empty()) tile.node->id = t->next_tile_id();
  for (;;) {
    Node* empty = find_leaf(t->root_.get(), [](const Node& n) { return n.tabs.empty(); });
    if (!empty || empty == t->root_.get()) break;
    t->remove_empty(empty);
  }
  return t;
}

}  // namespace attn::gui
