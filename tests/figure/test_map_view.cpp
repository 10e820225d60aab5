// Issue 48 item 7: reading maps of 64 tokens and more. The map view (render/plot/map_view.h) zooms
// about the mouse, pans within the map, crops, shows one head alone, and the figure it gives (what
// the window draws and exports) holds exactly the visible cells, named as in the whole map.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "render/plot/export/figure_export.h"
#include "render/plot/map_view.h"

using namespace attn::fig;

namespace {

// A grid of `heads` n x n attention maps whose cell (r, c) holds 1000 h + n r + c, token ticks.
Figure maps_figure(int n, int heads) {
  Figure f;
  f.name = "attention";
  f.title = "maps";
  f.cols = heads;
  std::vector<std::string> tokens;
  for (int i = 0; i < n; ++i) tokens.push_back("t" + std::to_string(i));
  for (int h = 0; h < heads; ++h) {
    Panel p = matrix_panel("key", "query", token_ticks(tokens, n));
    p.title = "head " + std::to_string(h);
    std::vector<float> v;
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) v.push_back(static_cast<float>(1000 * h + n * r + c));
    Heatmap m = square_heatmap("head" + std::to_string(h), n, v);
    m.layer = 0, m.head = h;
    p.heatmaps.push_back(m);
    f.panels.push_back(p);
  }
  return f;
}

// The cell under a point at fraction f of the visible range.
double point_at(const CellRange& r, double f) {
  return r.begin + f * r.size();
}

}  // namespace

TEST_CASE("map view: zooming about a point keeps the cell under it") {
  MapView v;
  v.set_size(64, 64);
  CHECK(v.visible_rows() == CellRange{0, 64});
  // The mouse at fractions (fy, fx) of the plot, well inside: after each wheel step the same
  // fractions lie over the same cell, for every step down to the smallest span.
  for (double fy : {0.3, 0.52, 0.71})
    for (double fx : {0.25, 0.5, 0.66}) {
      v.reset();
      for (int step = 0; step < 20; ++step) {
        const double row = point_at(v.visible_rows(), fy), col = point_at(v.visible_cols(), fx);
        const int cell_r = static_cast<int>(std::floor(row)), cell_c = static_cast<int>(col);
        v.zoom_at(1.25, row, col);
        INFO("fy " << fy << " fx " << fx << " step " << step);
        CHECK(static_cast<int>(std::floor(point_at(v.visible_rows(), fy))) == cell_r);
        CHECK(static_cast<int>(std::floor(point_at(v.visible_cols(), fx))) == cell_c);
      }
      CHECK(v.visible_rows().size() == MapView::kMinSpan);  // zoomed all the way in
    }
  // Zooming out ends at the whole map.
  for (int step = 0; step < 40; ++step) v.zoom_at(0.8, 10, 10);
  CHECK(v.visible_rows() == CellRange{0, 64});
  CHECK(v.visible_cols() == CellRange{0, 64});
  CHECK_FALSE(v.zoomed());
}

TEST_CASE("map view: zoom near an edge and pan stay inside the map") {
  MapView v;
  v.set_size(64, 48);
  v.zoom_at(4, 63.9, 0.1);  // the bottom-left corner
  CHECK(v.visible_rows().end == 64);
  CHECK(v.visible_cols().begin == 0);
  CHECK(v.visible_rows().size() == 16);
  CHECK(v.visible_cols().size() == 12);
  // Fractions accumulate into whole cells.
  v.pan(-0.4, 0.4);
  CHECK(v.visible_rows() == CellRange{48, 64});
  CHECK(v.visible_cols() == CellRange{0, 12});
  v.pan(-0.7, 0.7);
  CHECK(v.visible_rows() == CellRange{47, 63});
  CHECK(v.visible_cols() == CellRange{1, 13});
  // Far beyond the edges: clamped, the span kept.
  v.pan(-1000, 1000);
  CHECK(v.visible_rows() == CellRange{0, 16});
  CHECK(v.visible_cols() == CellRange{36, 48});
  v.pan(1e9, -1e9);
  CHECK(v.visible_rows() == CellRange{48, 64});
  CHECK(v.visible_cols() == CellRange{0, 12});
  v.pan(NAN, 1);  // ignored
  CHECK(v.visible_rows() == CellRange{48, 64});
  v.reset();
  CHECK_FALSE(v.zoomed());
}

TEST_CASE("map view: the crop limits zoom, pan and reset, and is clamped into the map") {
  MapView v;
  v.set_size(64, 64);
  v.set_crop({40, 64}, {0, 40});
  CHECK(v.visible_rows() == CellRange{40, 64});
  CHECK(v.visible_cols() == CellRange{0, 40});
  CHECK(v.zoomed());
  v.zoom_at(0.5, 50, 20);  // out: never past the crop
  CHECK(v.visible_rows() == CellRange{40, 64});
  v.zoom_at(2, 41, 39);
  CHECK(v.visible_rows().begin >= 40);
  CHECK(v.visible_cols().end <= 40);
  v.pan(-100, 100);
  CHECK(v.visible_rows().begin == 40);
  CHECK(v.visible_cols().end == 40);
  v.reset();
  CHECK(v.visible_rows() == CellRange{40, 64});
  // Out-of-range or empty crops are clamped to at least one cell inside the map.
  v.set_crop({-5, 500}, {70, 10});
  CHECK(v.crop_rows() == CellRange{0, 64});
  CHECK(v.crop_cols() == CellRange{63, 64});
  v.clear_crop();
  CHECK_FALSE(v.zoomed());
  // Another map size resets everything.
  v.set_crop({1, 3}, {1, 3});
  v.select(2);
  v.set_size(32, 32);
  CHECK(v.crop_rows() == CellRange{0, 32});
  CHECK(v.selected() == -1);
}

TEST_CASE("map view: the figure shown (and exported) holds exactly the visible cells") {
  const int n = 64;
  const Figure source = maps_figure(n, 3);
  MapView v;
  const Heatmap* first = MapView::first_map(source);
  REQUIRE(first != nullptr);
  v.set_size(first->rows, first->cols);
  CHECK(v.apply(source).panels.size() == 3);
  CHECK(v.apply(source).panels[1].heatmaps[0].rows == n);  // unzoomed: unchanged
  v.set_crop({48, 64}, {0, 64});
  v.zoom_at(2, 56.5, 20.5);
  const CellRange R = v.visible_rows(), C = v.visible_cols();
  REQUIRE(R.size() == 8);
  REQUIRE(C.size() == 32);
  v.select(1);                                   // head 1 alone
  const Figure shown = v.apply(source, true);    // as exported: the title names the range
  CHECK(v.apply(source).title == source.title);  // on screen: the layout stays put
  REQUIRE(shown.panels.size() == 1);
  CHECK(shown.rows == 1);
  CHECK(shown.cols == 1);
  CHECK(v.source_panel(0) == 1);
  CHECK(v.shown_panel(1) == 0);
  CHECK(v.shown_panel(0) == -1);
  const Panel& p = shown.panels[0];
  CHECK(p.title == "head 1");
  const Heatmap& h = p.heatmaps[0];
  CHECK(h.rows == R.size());
  CHECK(h.cols == C.size());
  CHECK(h.first_row == R.begin);
  CHECK(h.first_col == C.begin);
  CHECK(h.y0 == R.begin);
  CHECK(h.y1 == R.end);
  CHECK(h.x0 == C.begin);
  CHECK(h.x1 == C.end);
  CHECK(p.y.min == R.begin);
  CHECK(p.y.max == R.end);
  CHECK(p.x.min == C.begin);
  CHECK(p.x.max == C.end);
  for (int r = 0; r < h.rows; ++r)
    for (int c = 0; c < h.cols; ++c)
      CHECK(h.values[size_t(r) * h.cols + c] == 1000 + n * (R.begin + r) + (C.begin + c));
  for (const Tick& t : p.x.ticks) CHECK((t.value >= C.begin && t.value <= C.end));
  CHECK(p.x.ticks.size() == size_t(C.size()));
  CHECK(p.y.ticks.size() == size_t(R.size()));
  CHECK(shown.title.find("rows (queries) " + std::to_string(R.begin) + "-" +
                         std::to_string(R.end - 1)) != std::string::npos);
  // The CSV export names the cells by their query and key in the whole map, and has no others.
  std::istringstream csv(figure_csv(shown));
  std::string line;
  std::getline(csv, line);
  int cells = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    REQUIRE(f.size() >= 16);
    const int i = std::stoi(f[5]), j = std::stoi(f[6]);
    CHECK(i >= R.begin);
    CHECK(i < R.end);
    CHECK(j >= C.begin);
    CHECK(j < C.end);
    CHECK(std::stoi(f[13]) == i);  // query
    CHECK(std::stoi(f[14]) == j);  // key
    CHECK(std::stof(f[15]) == 1000 + n * i + j);
    ++cells;
  }
  CHECK(cells == R.size() * C.size());
}

TEST_CASE("map view: figures without attention maps are left alone") {
  Figure f = maps_figure(8, 1);
  f.panels[0].heatmaps[0].layer = -1;  // e.g. the head-importance grid
  CHECK_FALSE(MapView::has_maps(f));
  MapView v;
  v.set_size(8, 8);
  v.zoom_at(2, 4, 4);
  CHECK(v.apply(f).panels[0].heatmaps[0].rows == 8);
}

TEST_CASE("map view: with any_heatmap a plain matrix (conn's C) zooms and crops like the maps") {
  Figure f = maps_figure(8, 1);
  f.panels[0].heatmaps[0].layer = -1;  // a matrix, not an attention map
  MapView v;
  v.set_any_heatmap(true);
  REQUIRE(v.map_of(f) == &f.panels[0].heatmaps[0]);
  v.set_size(8, 8);
  v.set_crop({2, 5}, {1, 3});
  const Figure shown = v.apply(f, true);
  CHECK(shown.panels[0].heatmaps[0].rows == 3);
  CHECK(shown.panels[0].heatmaps[0].cols == 2);
  CHECK(shown.panels[0].heatmaps[0].first_row == 2);
  CHECK(shown.panels[0].heatmaps[0].first_col == 1);
  // Named crops: the preset the crop is, clamped as set_crop clamps; none once it is typed.
  const std::vector<CropPreset> presets = {
      {"whole", {0, 8}, {0, 8}}, {"late", {2, 5}, {1, 3}}, {"past the end", {6, 99}, {6, 99}}};
  CHECK(v.preset_shown(presets) == 1);
  v.set_crop(presets[2]);
  CHECK(v.crop_rows() == CellRange{6, 8});
  CHECK(v.preset_shown(presets) == 2);
  v.set_crop({0, 3}, {0, 8});
  CHECK(v.preset_shown(presets) == -1);
}
