// TileLayout: the workspace's arrangement of panels, as plain data (no ImGui, unit-tested in
// tests/app/test_tile_layout.cpp). A binary tree: each inner node splits its rectangle into two
// columns or two rows at a ratio; each leaf is a tile holding one or more panels as tabs.
// Contract:
//  - tiles() partitions the workspace rectangle: tiles never overlap, lie inside it, and are
//    separated by splitter gaps of kGap pixels. Each split gives both sides at least kMinTile
//    pixels when the rectangle allows, whatever the stored ratio, so a small window squeezes
//    tiles instead of pushing them off screen.
//  - A panel is open when it is a tab of some tile; it is in at most one tile.
//  - close() removes a tab; a tile left empty is removed and its sibling takes the parent's place
//    (the last tile stays, empty).
//  - to_json()/from_json() round-trip; from_json() drops unknown or repeated panel names and
//    clamps ratios, so an edited or stale layout file never breaks the window.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn::gui {

struct TileRect {
  float x = 0, y = 0, w = 0, h = 0;
  bool overlaps(const TileRect& o) const {
    return x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h;
  }
};

// Where a panel goes when it opens: the tile of that id, else a new tile split off the largest
// main tile in that direction (or a tab there when a split would be too small).
enum class TilePlace { Side, Top, Bottom, Right };
const char* tile_place_id(TilePlace p);  // "side", "top", "bottom", "right"

class TileLayout {
 public:
  static constexpr float kGap = 6.0f;        // splitter thickness, pixels
  static constexpr float kMinTile = 150.0f;  // smallest tile side a split leaves, pixels

  struct Node {
    enum class Kind { Leaf, Columns, Rows };  // Columns: a left of b; Rows: a above b
    Kind kind = Kind::Leaf;
    float ratio = 0.5f;  // a's share of the extent along the split
    std::unique_ptr<Node> a, b;
    std::string id;                 // leaves: "side", "top", "bottom", "right" or "tile-N"
    std::vector<std::string> tabs;  // leaves: panel names, in tab order
    std::string active;             // leaves: the tab shown
  };
  struct Tile {
    Node* node;
    TileRect rect;
  };
  struct Splitter {
    Node* node;     // the split it moves
    TileRect rect;  // the gap between the two sides
    bool columns;   // true: a vertical bar dragged left/right
    float extent;   // the split's extent along its axis, minus the gap (pixels)
  };

  TileLayout();
  TileLayout(TileLayout&&) = default;
  TileLayout& operator=(TileLayout&&) = default;

  // A fresh layout: side column, then top, bottom and right tiles as the panels need them.
  // side_fraction: the side column's share of the width.
  static TileLayout make_default(const std::vector<std::pair<std::string, TilePlace>>& panels,
                                 float side_fraction = 0.27f, float top_fraction = 0.4f);

  std::vector<Tile> tiles(const TileRect& area) const;
  std::vector<Splitter> splitters(const TileRect& area) const;

  bool is_open(const std::string& panel) const { return tile_of(panel) != nullptr; }
  Node* tile_of(const std::string& panel) const;
  Node* find_tile(const std::string& id) const;
  std::vector<std::string> open_panels() const;

  // Opens `panel` (and makes it the active tab) where `place` says; no-op tab switch when open.
  void open(const std::string& panel, TilePlace place, const TileRect& area);
  // close(), move() and split_off() take their names by value: callers often pass a node's own id or tab,
  // which closing may free.
  void close(std::string panel);
  void activate(const std::string& panel);
  // Moves an open or closed panel into the tile `tile_id` as its active tab.
  void move(std::string panel, std::string tile_id);
  // Splits the panel's tile in two (columns or rows) and moves the panel into the new half.
  void split_off(std::string panel, bool columns);
  // Moves a splitter by `delta` pixels (ratio clamped to keep kMinTile on both sides).
  static void drag(const Splitter& s, float delta);

  nlohmann::json to_json() const;
  // Null layout (and *error set) when the JSON is not a layout at all.
  static std::unique_ptr<TileLayout> from_json(const nlohmann::json& j,
                                               const std::vector<std::string>& known_panels,
                                               std::string* error);

 private:
  std::string next_tile_id();
  Node* largest_main_tile(const TileRect& area) const;
  void remove_empty(Node* leaf);

  std::unique_ptr<Node> root_;
  int next_id_ = 1;
};

}  // namespace attn::gui
