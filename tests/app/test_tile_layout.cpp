// TileLayout (app/gui/layout/tile_layout.h): the workspace's tiles partition the window at every
// size, whatever sequence of opens, closes, moves, splits and drags led there; the layout file
// round-trips and a damaged one never breaks the window.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "app/gui/layout/tile_layout.h"

using attn::gui::TileLayout;
using attn::gui::TilePlace;
using attn::gui::TileRect;

namespace {

const std::vector<std::string> kPanels = {"run",    "loss",     "attention", "connections",
                                          "ky-lab", "geometry", "neural",    "image-attention",
                                          "conn",   "compare"};

// Checks the partition: tiles inside the area, pairwise disjoint, disjoint from the splitters,
// and tiles plus splitters cover the area exactly (their areas add up to it).
void check_partition(const TileLayout& t, const TileRect& area) {
  const auto tiles = t.tiles(area);
  const auto splitters = t.splitters(area);
  double covered = 0;
  for (size_t i = 0; i < tiles.size(); ++i) {
    const TileRect& r = tiles[i].rect;
    CHECK(r.w >= 0);
    CHECK(r.h >= 0);
    CHECK(r.x >= area.x);
    CHECK(r.y >= area.y);
    CHECK(r.x + r.w <= area.x + area.w + 1e-3f);
    CHECK(r.y + r.h <= area.y + area.h + 1e-3f);
    for (size_t j = i + 1; j < tiles.size(); ++j) CHECK_FALSE(r.overlaps(tiles[j].rect));
    for (const auto& s : splitters) CHECK_FALSE(r.overlaps(s.rect));
    covered += double(r.w) * r.h;
  }
  for (const auto& s : splitters) covered += double(s.rect.w) * s.rect.h;
  CHECK(covered == doctest::Approx(double(area.w) * area.h).epsilon(1e-4));
}

// Every panel is in at most one tile, and every tile's active tab is one of its tabs.
void check_tabs(const TileLayout& t) {
  std::set<std::string> seen;
  for (const auto& tile : t.tiles({0, 0, 1280, 720})) {
    for (const std::string& tab : tile.node->tabs) CHECK(seen.insert(tab).second);
    if (!tile.node->tabs.empty())
      CHECK(std::count(tile.node->tabs.begin(), tile.node->tabs.end(), tile.node->active) == 1);
  }
}

std::map<std::string, std::string> tab_tiles(const TileLayout& t) {
  std::map<std::string, std::string> out;
  for (const auto& tile : t.tiles({0, 0, 1280, 720}))
    for (const std::string& tab : tile.node->tabs) out[tab] = tile.node->id;
  return out;
}

}  // namespace

TEST_CASE("the default layout puts each panel in its place, and unused places get no tile") {
  const TileLayout t = TileLayout::make_default({{"run", TilePlace::Side},
                                                 {"loss", TilePlace::Top},
                                                 {"attention", TilePlace::Bottom},
                                                 {"connections", TilePlace::Right}});
  auto where = tab_tiles(t);
  CHECK(where["run"] == "side");
  CHECK(where["loss"] == "top");
  CHECK(where["attention"] == "bottom");
  CHECK(where["connections"] == "right");
  const TileRect area{0, 22, 1280, 698};
  const auto tiles = t.tiles(area);
  REQUIRE(tiles.size() == 4);
  for (const auto& tile : tiles) {  // at 1280x720 every tile keeps the minimum size
    CHECK(tile.rect.w >= TileLayout::kMinTile);
    CHECK(tile.rect.h >= TileLayout::kMinTile);
  }
  check_partition(t, area);

  // Without a right panel, bottom takes the whole row under top.
  const TileLayout u = TileLayout::make_default(
      {{"run", TilePlace::Side}, {"loss", TilePlace::Top}, {"attention", TilePlace::Bottom}});
  REQUIRE(u.tiles(area).size() == 3);
  CHECK(u.find_tile("right") == nullptr);
  const TileRect top = u.tiles(area)[1].rect, bottom = u.tiles(area)[2].rect;
  CHECK(top.w == bottom.w);
  CHECK(top.x == bottom.x);
}

TEST_CASE("opening, closing, moving and splitting keep one tile per panel and a partition") {
  TileLayout t = TileLayout::make_default({{"run", TilePlace::Side}, {"loss", TilePlace::Top}});
  const TileRect area{0, 0, 1600, 1000};
  t.open("attention", TilePlace::Bottom, area);  // no bottom tile: split off the largest
  CHECK(tab_tiles(t)["attention"] == "bottom");
  t.open("connections", TilePlace::Right, area);
  CHECK(tab_tiles(t)["connections"] == "right");
  t.open("ky-lab", TilePlace::Right, area);  // right exists: a tab there, now active
  CHECK(t.find_tile("right")->tabs.size() == 2);
  CHECK(t.find_tile("right")->active == "ky-lab");
  check_partition(t, area);

  t.close("ky-lab");
  CHECK(t.find_tile("right")->active == "connections");
  t.close("connections");  // the right tile goes; its sibling takes the room
  CHECK(t.find_tile("right") == nullptr);
  check_partition(t, area);

  t.move("loss", "bottom");  // top is emptied and removed: bottom fills the main area
  CHECK(t.find_tile("top") == nullptr);
  CHECK(t.find_tile("bottom")->tabs == std::vector<std::string>{"attention", "loss"});
  t.split_off("attention", true);
  const auto where = tab_tiles(t);
  CHECK(where.at("attention") != where.at("loss"));
  check_partition(t, area);
  check_tabs(t);

  // Closing everything leaves one empty tile covering the area.
  for (const std::string& p : t.open_panels()) t.close(p);
  const auto tiles = t.tiles(area);
  REQUIRE(tiles.size() == 1);
  CHECK(tiles[0].rect.w == area.w);
  CHECK(tiles[0].rect.h == area.h);
  t.open("geometry", TilePlace::Bottom, area);  // into the empty tile, no split
  CHECK(t.tiles(area).size() == 1);
}

TEST_CASE("a too small tile takes a new panel as a tab instead of splitting") {
  TileLayout t = TileLayout::make_default({{"loss", TilePlace::Top}});
  const TileRect tiny{0, 0, 2 * TileLayout::kMinTile, 2 * TileLayout::kMinTile};
  t.open("connections", TilePlace::Right, tiny);
  CHECK(t.tiles(tiny).size() == 1);
  CHECK(t.tile_of("connections") == t.tile_of("loss"));
}

TEST_CASE("random edits, drags and window sizes never make tiles overlap or leave the window") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> op(0, 5), pick(0, static_cast<int>(kPanels.size()) - 1),
      place(0, 3);
  std::uniform_real_distribution<float> delta(-900, 900), width(200, 3840), height(150, 2160);
  TileLayout t = TileLayout::make_default({{"run", TilePlace::Side}, {"loss", TilePlace::Top}});
  for (int i = 0; i < 3000; ++i) {
    const TileRect area{0, 20, width(rng), height(rng)};
    const std::string& p = kPanels[pick(rng)];
    switch (op(rng)) {
      case 0:
      case 1:
        t.open(p, static_cast<TilePlace>(place(rng)), area);
        break;
      case 2:
        t.close(p);
        break;
      case 3: {
        const auto tiles = t.tiles(area);
        t.move(p, tiles[static_cast<size_t>(pick(rng)) % tiles.size()].node->id);
        break;
      }
      case 4:
        t.split_off(p, pick(rng) % 2 == 0);
        break;
      default: {
        const auto splitters = t.splitters(area);
        if (!splitters.empty())
          TileLayout::drag(splitters[static_cast<size_t>(pick(rng)) % splitters.size()],
                           delta(rng));
      }
    }
    check_partition(t, area);
    check_tabs(t);
  }
}

TEST_CASE("a splitter drag keeps the minimum tile size on both sides") {
  TileLayout t = TileLayout::make_default({{"run", TilePlace::Side}, {"loss", TilePlace::Top}});
  const TileRect area{0, 0, 1280, 720};
  TileLayout::drag(t.splitters(area).at(0), -5000);
  auto tiles = t.tiles(area);
  REQUIRE(tiles.size() == 2);
  CHECK(tiles[0].rect.w == doctest::Approx(TileLayout::kMinTile).epsilon(0.01));
  TileLayout::drag(t.splitters(area).at(0), 5000);
  tiles = t.tiles(area);
  CHECK(tiles[1].rect.w == doctest::Approx(TileLayout::kMinTile).epsilon(0.01));
  CHECK(tiles[0].rect.w > 1000);
  check_partition(t, area);
}

TEST_CASE("the layout file round-trips") {
  TileLayout t = TileLayout::make_default({{"run", TilePlace::Side},
                                           {"loss", TilePlace::Top},
                                           {"attention", TilePlace::Bottom},
                                           {"ky-lab", TilePlace::Right},
                                           {"connections", TilePlace::Right}});
  const TileRect area{0, 0, 1920, 1080};
  TileLayout::drag(t.splitters(area).at(1), 123);
  t.activate("connections");
  std::string error;
  auto back = TileLayout::from_json(nlohmann::json::parse(t.to_json().dump()), kPanels, &error);
  REQUIRE(back);
  CHECK(back->to_json() == t.to_json());
  const auto a = t.tiles(area), b = back->tiles(area);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].rect.x == b[i].rect.x);
    CHECK(a[i].rect.h == b[i].rect.h);
    CHECK(a[i].node->tabs == b[i].node->tabs);
    CHECK(a[i].node->active == b[i].node->active);
  }
}

TEST_CASE("a damaged layout file is repaired or refused, never trusted") {
  std::string error;
  CHECK_FALSE(TileLayout::from_json(nlohmann::json::array(), kPanels, &error));
  CHECK(error.find("root") != std::string::npos);
  CHECK_FALSE(TileLayout::from_json({{"root", {{"split", "diagonal"}}}}, kPanels, &error));
  CHECK(error.find("columns") != std::string::npos);

  // Unknown and repeated panels are dropped; a tile left empty goes; a wild ratio is clamped;
  // a missing active tab falls back to the first.
  const auto j = nlohmann::json::parse(R"({"root": {"split": "columns", "ratio": 1e9,
      "a": {"tile": "side", "tabs": ["run", "no-such-panel"], "active": "gone"},
      "b": {"split": "rows", "ratio": "x",
            "a": {"tile": "x", "tabs": ["run", "loss"]},
            "b": {"tile": "y", "tabs": ["no-such-panel"]}}}})");
  auto t = TileLayout::from_json(j, kPanels, &error);
  REQUIRE(t);
  const auto where = tab_tiles(*t);
  CHECK(where.size() == 2);
  CHECK(where.at("run") == "side");
  CHECK(where.at("loss") == "x");
  CHECK(t->find_tile("y") == nullptr);
  CHECK(t->find_tile("side")->active == "run");
  check_partition(*t, {0, 0, 1280, 720});

  // Nesting deeper than any real layout is refused (no stack overflow on a crafted file).
  nlohmann::json deep = {{"tile", "t"}, {"tabs", {"run"}}};
  for (int i = 0; i < 40; ++i)
    deep = {{"split", "rows"},
            {"a", deep},
            {"b", deep.is_null() ? deep
                                 : nlohmann::json{{"tile", "u" + std::to_string(i)},
                                                  {"tabs", nlohmann::json::array()}}}};
  CHECK_FALSE(TileLayout::from_json({{"root", deep}}, kPanels, &error));
  CHECK(error.find("deeper") != std::string::npos);
}
