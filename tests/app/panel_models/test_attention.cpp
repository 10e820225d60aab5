// The Attention panel's model (app/panels/attention/attention_model.h) without a window: the grid
// of heatmaps it gives for a hand-built snapshot holds exactly the maps' weights, and its
// controls (layer, colour scale) change what is drawn.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "app/panels/attention/attention_model.h"

using namespace attn;
using attn::gui::AttentionModel;

namespace {

constexpr int kLayers = 2, kHeads = 2, kTokens = 3;

// Map (layer, head): a distinct row-stochastic 3 x 3 matrix per head.
std::vector<float> weights(int layer, int head) {
  std::vector<float> w;
  for (int q = 0; q < kTokens; ++q) {
    const float a = 0.1f * static_cast<float>(1 + layer * kHeads + head) / (q + 1);
    w.insert(w.end(), {a, 0.5f - a / 2, 0.5f - a / 2});
  }
  return w;
}

Snapshot attention_snapshot(uint64_t serial = 1) {
  Snapshot s;
  s.serial = serial;
  s.task = "copy";
  s.layers = kLayers;
  s.heads = kHeads;
  s.attention_step = 30;
  s.step = 31;
  s.mechanisms = {"dot", "dot"};
  s.probe_tokens = {"a", "b", "c"};
  s.probe_text = "a b c";
  auto maps = std::make_shared<std::vector<AttentionMap>>();
  for (int l = 0; l < kLayers; ++l)
    for (int h = 0; h < kHeads; ++h) maps->push_back({l, h, kTokens, weights(l, h)});
  s.attention = maps;
  return s;
}

std::vector<const fig::Heatmap*> heatmaps(const fig::Figure& f) {
  std::vector<const fig::Heatmap*> out;
  for (const fig::Panel& p : f.panels)
    for (const fig::Heatmap& m : p.heatmaps) out.push_back(&m);
  return out;
}

}  // namespace

TEST_CASE("attention model: the heatmaps hold the snapshot's weights, one per layer and head") {
  AttentionModel m;
  const Snapshot s = attention_snapshot();
  REQUIRE(AttentionModel::has_maps(s));
  const fig::Figure& f = m.figure(s);
  const auto maps = heatmaps(f);
  REQUIRE(maps.size() == kLayers * kHeads);
  for (const fig::Heatmap* h : maps) {
    CHECK(h->rows == kTokens);
    CHECK(h->cols == kTokens);
    CHECK(h->values == weights(h->layer, h->head));
  }
  CHECK(AttentionModel::figures(s) == std::vector<std::string>{"attention"});
  CHECK(AttentionModel::status(s).find("probe at step 30, 3 tokens") == 0);
}

TEST_CASE("attention model: the layer control shows that layer's maps only") {
  AttentionModel m;
  const Snapshot s = attention_snapshot();
  m.controls.layer = 1;
  const auto maps = heatmaps(m.figure(s));
  REQUIRE(maps.size() == kHeads);
  for (const fig::Heatmap* h : maps) {
    CHECK(h->layer == 1);
    CHECK(h->values == weights(1, h->head));
  }
  m.controls.layer = -1;  // back to every layer: rebuilt without a new snapshot
  CHECK(heatmaps(m.figure(s)).size() == kLayers * kHeads);
}

TEST_CASE("attention model: the scale control sets each map's colour range") {
  AttentionModel m;
  const Snapshot s = attention_snapshot();
  float largest = 0;
  for (int l = 0; l < kLayers; ++l)
    for (int h = 0; h < kHeads; ++h) {
      const auto w = weights(l, h);
      largest = std::max(largest, *std::max_element(w.begin(), w.end()));
    }
  for (const fig::Heatmap* h : heatmaps(m.figure(s))) CHECK(h->vmax == doctest::Approx(largest));
  m.controls.scale = static_cast<int>(figures::AttentionScale::PerMap);
  for (const fig::Heatmap* h : heatmaps(m.figure(s))) {
    const auto w = weights(h->layer, h->head);
    CHECK(h->vmax == doctest::Approx(*std::max_element(w.begin(), w.end())));
    CHECK(h->colorbar_relative);
  }
  m.controls.scale = static_cast<int>(figures::AttentionScale::Fixed);
  for (const fig::Heatmap* h : heatmaps(m.figure(s))) CHECK(h->vmax == 1.0);
}

TEST_CASE("attention model: the grid is rebuilt for a new snapshot, not for the same one") {
  AttentionModel m;
  Snapshot s = attention_snapshot(5);
  m.figure(s);
  // The same serial: the figure built last stands (nothing is rebuilt per frame).
  auto changed = std::make_shared<std::vector<AttentionMap>>(s.attention_maps());
  (*changed)[0].weights.assign(kTokens * kTokens, 1.0f / kTokens);
  s.attention = changed;
  CHECK(heatmaps(m.figure(s))[0]->values == weights(0, 0));
  s.serial = 6;
  CHECK(heatmaps(m.figure(s))[0]->values == (*changed)[0].weights);
}

TEST_CASE("attention model: ablated heads' maps are the ones outlined; the readout names them") {
  AttentionModel m;
  const Snapshot s = attention_snapshot();
  m.figure(s);
  CHECK(m.ablated_maps({}).empty());
  const auto refs = m.ablated_maps({{1, 0}});
  REQUIRE(refs.size() == 1);
  const fig::Heatmap& h = m.shown().panels[refs[0].panel].heatmaps[refs[0].heatmap];
  CHECK(h.layer == 1);
  CHECK(h.head == 0);
  const std::string text = m.hover_text(s, refs[0], 2, 0, 0.25f, true);
  CHECK(text.find("layer 1, head 0: query 2 (c) -> key 0 (a) = 0.250") == 0);
  CHECK(text.find("restore this head") != std::string::npos);
  CHECK(m.hover_text(s, refs[0], 0, 1, 0.5f, false).find("ablate this head") != std::string::npos);
}

TEST_CASE("attention model: the report carries the probe's state") {
  AttentionModel m;
  Snapshot s = attention_snapshot();
  s.probe_error = "unknown token 'z'";
  m.observe(s);
  const nlohmann::json& r = m.report();
  CHECK(r["probe_text"] == "a b c");
  CHECK(r["probe_error"] == "unknown token 'z'");
  CHECK(r["probe_tokens"] == nlohmann::json({"a", "b", "c"}));
  CHECK(r["attention_step"] == 30);
  CHECK(r["step"] == 31);
  Snapshot none;
  CHECK_FALSE(AttentionModel::has_maps(none));
  CHECK(AttentionModel::figures(none).empty());
  CHECK(AttentionModel::status(none).empty());
}

TEST_CASE("attention model: a crop preset crops the map view to the task's region") {
  // An MQAR probe as the snapshot labels it: 3 pairs, then fillers and two queried keys.
  ExperimentConfig config;
  config.task.name = "mqar";
  config.task.vocab = 16;
  config.task.length = 3;
  config.task.context = 12;
  Snapshot s = attention_snapshot();
  s.probe_tokens = {"k1", "v1", "k2", "v3", "k5", "v0", ".", ".", "k2", ".", "k1", "."};
  AttentionModel m;
  int asked = 0;
  const auto& presets = m.crop_presets(s, [&] {
    ++asked;
    return config;
  });
  std::vector<std::string> names;
  for (const fig::CropPreset& p : presets) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"whole", "context", "queries", "queries-context"});
  m.crop_presets(s, [&] { return ++asked, config; });  // the same probe: not worked out again
  CHECK(asked == 1);
  fig::MapView view;
  view.set_size(12, 12);
  REQUIRE(m.choose_crop("queries-context", view));
  CHECK(view.crop_rows() == fig::CellRange{8, 11});  // the queried keys at 8 and 10
  CHECK(view.crop_cols() == fig::CellRange{0, 6});   // the six context tokens
  CHECK(view.preset_shown(presets) == 3);
  REQUIRE(m.choose_crop("context", view));
  CHECK(view.crop_rows() == fig::CellRange{0, 6});
  CHECK(view.crop_cols() == fig::CellRange{0, 6});
  view.set_crop({1, 4}, {0, 6});
  CHECK(view.preset_shown(presets) == -1);  // custom
  CHECK_FALSE(m.choose_crop("answers", view));
  CHECK(view.crop_rows() == fig::CellRange{1, 4});
  REQUIRE(m.choose_crop("whole", view));
  CHECK_FALSE(view.zoomed());
  // Another task's probe: the whole map only.
  s.probe_tokens = {"a", "b", "c"};
  config.task.name = "copy";
  CHECK(m.crop_presets(s, [&] { return config; }).size() == 1);
}

TEST_CASE("attention model: a narrow tile stacks the maps in fewer columns, in the same order") {
  AttentionModel m;
  const Snapshot s = attention_snapshot();
  const fig::Figure grid = m.figure(s);
  REQUIRE(grid.cols == kHeads);
  REQUIRE(grid.rows == kLayers);
  m.controls.columns = 1;  // what the panel sets where two maps of the least size do not fit
  const fig::Figure& stacked = m.figure(s);
  CHECK(stacked.cols == 1);
  CHECK(stacked.rows == kLayers * kHeads);
  const auto a = heatmaps(grid), b = heatmaps(stacked);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i]->layer == b[i]->layer);
    CHECK(a[i]->head == b[i]->head);
    CHECK(a[i]->values == b[i]->values);
  }
  // More columns than heads, or 0: the builder's grid.
  m.controls.columns = 5;
  CHECK(m.figure(s).cols == kHeads);
  m.controls.columns = 0;
  CHECK(m.figure(s).rows == kLayers);
}

TEST_CASE("attention model: with a head ablated, the grid shows the ablated model's later maps") {
  // Issue 48 item 8: the grid kept the unablated maps of later layers. The trainer answers an
  // ablation with the probe's maps of the ablated model (InterventionView::ablated_maps).
  AttentionModel m;
  Snapshot s = attention_snapshot();
  auto iv = std::make_shared<InterventionView>();
  iv->request.ablate = {{0, 1}};
  iv->step = s.attention_step;
  for (int l = 0; l < kLayers; ++l)
    for (int h = 0; h < kHeads; ++h) {
      std::vector<float> w = weights(l, h);
      if (l == 1) std::reverse(w.begin(), w.end());  // a later layer's maps change
      iv->ablated_maps.push_back({l, h, kTokens, w});
    }
  s.interventions = iv;
  auto layer1 = [&](const fig::Figure& f) {
    std::vector<std::vector<float>> out;
    for (const fig::Heatmap* h : heatmaps(f))
      if (h->layer == 1) out.push_back(h->values);
    return out;
  };
  const std::vector<std::vector<float>> unablated = layer1(m.figure(s));  // nothing ablated
  REQUIRE(unablated.size() == kHeads);
  CHECK(m.ablation_status(s).empty());
  m.controls.ablated = {{0, 1}};
  const fig::Figure& f = m.figure(s);
  const auto shown = layer1(f);
  REQUIRE(shown.size() == kHeads);
  for (int h = 0; h < kHeads; ++h) {
    CHECK(shown[h] != unablated[h]);
    CHECK(shown[h] == iv->ablated_maps[static_cast<size_t>(kHeads + h)].weights);
  }
  CHECK(f.title.find("heads 0.1 ablated (zero)") != std::string::npos);
  CHECK(m.ablation_status(s).find("the ablated model's at step 30") != std::string::npos);
  // Another set of heads than the answer's, or a recorded step the answer is not of: the
  // unablated maps, and the line says so.
  m.controls.ablated = {{0, 0}};
  CHECK(layer1(m.figure(s)) == unablated);
  m.controls.ablated = {{0, 1}};
  m.controls.live = false;
  s.attention_step = 20;
  s.serial = 2;
  CHECK(layer1(m.figure(s)) == unablated);
  CHECK(m.ablation_status(s).find("unablated model's (outlined) at this recorded step") !=
        std::string::npos);
}
