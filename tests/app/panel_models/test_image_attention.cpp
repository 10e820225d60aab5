// The Image attention panel's model (app/panels/attention/image_attention_model.h) without a
// window: for a hand-built snapshot of an image classifier (a 4 x 4 picture in 2 x 2 patches, so
// 5 tokens: CLS and 4 patches), the grid's overlays hold each head's CLS row on the patches and
// their mean, the full map of a clicked cell holds the whole map, and the controls (colormap,
// alpha, head mean, layer, shared scale) change what is drawn.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "app/panels/attention/image_attention_model.h"

using namespace attn;
using attn::gui::ImageAttentionModel;

namespace {

constexpr int kLayers = 2, kHeads = 2, kTokens = 5;

std::vector<float> map_weights(int layer, int head) {
  std::vector<float> w(kTokens * kTokens);
  for (int i = 0; i < kTokens * kTokens; ++i)
    w[static_cast<size_t>(i)] = 0.01f * static_cast<float>((i * 7 + layer * 5 + head * 3) % 23);
  return w;
}

// The CLS row on the patches: query 0, keys 1..4.
std::vector<float> cls_row(int layer, int head) {
  const auto w = map_weights(layer, head);
  return {w.begin() + 1, w.begin() + kTokens};
}

Snapshot image_snapshot() {
  Snapshot s;
  s.serial = 1;
  s.generation = 1;
  s.task = "fashion-mnist";
  s.layers = kLayers;
  s.heads = kHeads;
  s.attention_step = 12;
  s.mechanisms = {"dot", "dot"};
  s.probe_image.rows = s.probe_image.cols = 4;
  s.probe_image.patch = 2;
  s.probe_image.index = 3;
  s.probe_image.label = 7;
  s.probe_image.label_name = "Sneaker";
  for (int i = 0; i < 16; ++i) s.probe_image.pixels.push_back(i / 15.0f);
  s.probe_probabilities = {0.1f, 0.2f, 0.7f};
  auto maps = std::make_shared<std::vector<AttentionMap>>();
  for (int l = 0; l < kLayers; ++l)
    for (int h = 0; h < kHeads; ++h) maps->push_back({l, h, kTokens, map_weights(l, h)});
  s.attention = maps;
  return s;
}

// The overlay (the panel's second heatmap) of the grid's panel showing (layer, column).
const fig::Heatmap* overlay(const ImageAttentionModel& m, int layer, int column) {
  for (size_t k = 0; k < m.cells().size(); ++k) {
    const auto& c = m.cells()[k];
    if (c.row == 0 && c.layer == layer && c.column == column)
      return m.grid().panels.at(k).heatmaps.size() > 1 ? &m.grid().panels[k].heatmaps[1] : nullptr;
  }
  return nullptr;
}

int count_columns(const ImageAttentionModel& m, int column) {
  int n = 0;
  for (const auto& c : m.cells()) n += c.column == column;
  return n;
}

}  // namespace

TEST_CASE("image attention model: the overlays hold each head's CLS row on the patches") {
  ImageAttentionModel m;
  const Snapshot s = image_snapshot();
  CHECK(m.refresh(s, true) == -1);  // the live run's own image: nothing to ask the trainer
  CHECK(m.index() == 3);
  REQUIRE(m.grid_error().empty());
  REQUIRE(m.grid_has_live());
  for (int l = 0; l < kLayers; ++l) {
    for (int h = 0; h < kHeads; ++h) {
      const fig::Heatmap* o = overlay(m, l, h);
      REQUIRE(o != nullptr);
      CHECK(o->rows == 2);
      CHECK(o->cols == 2);
      CHECK(o->values == cls_row(l, h));
    }
    // The mean column: the heads' mean, computed here element by element.
    const fig::Heatmap* mean = overlay(m, l, kHeads);
    REQUIRE(mean != nullptr);
    for (size_t i = 0; i < 4; ++i)
      CHECK(mean->values[i] == doctest::Approx(0.5 * (cls_row(l, 0)[i] + cls_row(l, 1)[i])));
  }
  // The report carries the same weights per map.
  m.make_report(s, {});
  const nlohmann::json& maps = m.report()["rows"][0]["maps"];
  REQUIRE(maps.size() == kLayers * (kHeads + 1));
  CHECK(maps[1]["cls_patch_weights"].get<std::vector<float>>() == cls_row(0, 1));
  CHECK(m.report()["rows"][0]["predicted"] == 2);
  CHECK(m.report()["image_index"] == 3);
}

TEST_CASE("image attention model: colormap, alpha and the shared scale change the overlays") {
  ImageAttentionModel m;
  const Snapshot s = image_snapshot();
  m.refresh(s, true);
  const uint64_t key = m.grid_key();
  CHECK(overlay(m, 0, 0)->colormap == render::Colormap::Hot);
  CHECK(overlay(m, 0, 0)->alpha == doctest::Approx(0.6));
  m.controls.colormap = 1;
  m.controls.alpha = 0.25f;
  m.refresh(s, true);
  CHECK(m.grid_key() != key);
  CHECK(overlay(m, 0, 0)->colormap == render::Colormap::Viridis);
  CHECK(overlay(m, 1, 1)->alpha == doctest::Approx(0.25));
  // Shared: one range for every overlay; per map: each its own largest weight.
  const double shared = overlay(m, 0, 0)->vmax;
  CHECK(overlay(m, 1, 1)->vmax == shared);
  m.controls.shared_scale = false;
  m.refresh(s, true);
  for (int l = 0; l < kLayers; ++l)
    for (int h = 0; h < kHeads; ++h) {
      const auto w = cls_row(l, h);
      CHECK(overlay(m, l, h)->vmax == doctest::Approx(*std::max_element(w.begin(), w.end())));
    }
  m.make_report(s, {});
  CHECK(m.report()["colormap"] == "viridis");
  CHECK(m.report()["shared_scale"] == false);
}

TEST_CASE("image attention model: head mean and layer choose the columns and layers drawn") {
  ImageAttentionModel m;
  const Snapshot s = image_snapshot();
  m.refresh(s, true);
  CHECK(count_columns(m, kHeads) == kLayers);
  m.controls.show_mean = false;
  m.refresh(s, true);
  CHECK(count_columns(m, kHeads) == 0);
  CHECK(count_columns(m, 0) == kLayers);
  m.controls.layer = 1;
  m.refresh(s, true);
  for (const auto& c : m.cells())
    if (c.column != figures::ImageAttentionCell::kNoCell) CHECK(c.layer == 1);
  CHECK(overlay(m, 1, 0)->values == cls_row(1, 0));
  CHECK(overlay(m, 0, 0) == nullptr);
}

TEST_CASE("image attention model: a clicked cell's full map holds the whole map") {
  ImageAttentionModel m;
  const Snapshot s = image_snapshot();
  m.refresh(s, true);
  figures::ImageAttentionCell cell;
  cell.row = 0, cell.layer = 1, cell.column = 0, cell.heads = kHeads;
  m.select(cell);
  REQUIRE(m.selection_is_live());
  const fig::Figure& full = m.full_map();
  REQUIRE(full.panels.size() == 1);
  const fig::Heatmap& h = full.panels[0].heatmaps.at(0);
  CHECK(h.rows == kTokens);
  CHECK(h.values == map_weights(1, 0));
  CHECK(m.full_title().find("layer 1, head 0: full 5x5 map") != std::string::npos);
  CHECK(m.full_map_text(0, 4, 0.5f) == "query 0 CLS -> key 4 patch (1, 1) = 0.5000");
  // The mean column's full map: the heads' mean.
  cell.column = kHeads;
  m.select(cell);
  const fig::Heatmap& mean = m.full_map().panels[0].heatmaps.at(0);
  for (size_t i = 0; i < mean.values.size(); ++i)
    CHECK(mean.values[i] == doctest::Approx(0.5 * (map_weights(1, 0)[i] + map_weights(1, 1)[i])));
  m.make_report(s, {});
  CHECK(m.report()["full_map"]["size"] == kTokens);
  m.close_full_map();
  m.make_report(s, {});
  CHECK(m.report()["full_map"]["size"] == 0);
}

TEST_CASE("image attention model: a token task and an unloadable run say why, never throw") {
  ImageAttentionModel m;
  Snapshot s;
  s.task = "copy";
  m.refresh(s, false);
  CHECK(m.row(0).error.find("not an image task") != std::string::npos);
  CHECK(m.grid().panels.empty());
  m.add_run("/nonexistent/attnlab-run");
  REQUIRE(m.row_count() == 2);
  CHECK_FALSE(m.row(1).error.empty());
  CHECK(m.row_label(1) == "attnlab-run");
  m.remove_run(1);
  CHECK(m.row_count() == 1);
  m.show_pick();  // no data directory yet
  CHECK(m.pick_error().find("no image task") == 0);
}

TEST_CASE("image attention model: a requested image goes to the trainer once") {
  ImageAttentionModel m;
  const Snapshot s = image_snapshot();
  m.request_image(9);
  CHECK(m.refresh(s, true) == 9);
  CHECK(m.index() == 9);
  CHECK(m.refresh(s, true) == -1);
}
