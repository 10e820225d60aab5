// The Heads panel's model (app/panels/attention/heads_model.h) without a window: for hand-built
// head metrics at two recorded steps, the layer x head map holds the chosen metric's values at
// the timeline's step, the lines hold every step, and the controls (metric, step) change what is
// drawn.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "app/panels/attention/heads_model.h"

using namespace attn;
using attn::gui::HeadsModel;

namespace {

constexpr int kLayers = 2, kHeads = 3;

// A value no two (step, metric, layer, head) share.
double value(int64_t step, const std::string& metric, int layer, int head) {
  return (metric == "entropy" ? 1.0 : 0.01) * static_cast<double>(step) + 0.1 * layer + 0.01 * head;
}

std::vector<HeadMetric> metrics_at(int64_t step) {
  std::vector<HeadMetric> out;
  for (const char* metric : {"entropy", "diagonal"})
    for (int l = 0; l < kLayers; ++l)
      for (int h = 0; h < kHeads; ++h)
        out.push_back({step, l, h, metric, value(step, metric, l, h)});
  return out;
}

HeadsModel two_steps() {
  HeadsModel m;
  m.add_step(10, metrics_at(10));
  m.add_step(20, metrics_at(20));
  return m;
}

// The map's cell (layer, head) for the figure built last.
float cell(const HeadsModel& m, int layer, int head) {
  const fig::Heatmap& h = m.grid().panels.at(0).heatmaps.at(0);
  REQUIRE(h.rows == kLayers);
  REQUIRE(h.cols == kHeads);
  return h.values.at(static_cast<size_t>(layer * kHeads + head));
}

}  // namespace

TEST_CASE("heads model: the map holds the metric of every layer and head at the newest step") {
  HeadsModel m = two_steps();
  REQUIRE_FALSE(m.empty());
  const int64_t step = m.step_for(-1);  // following the live model: the newest recorded step
  CHECK(step == 20);
  m.build(step);
  REQUIRE(m.grid_ok());
  for (int l = 0; l < kLayers; ++l)
    for (int h = 0; h < kHeads; ++h)
      CHECK(cell(m, l, h) == doctest::Approx(value(20, "entropy", l, h)));
  CHECK(m.report()["step"] == 20);
  CHECK(m.report()["steps"] == 2);
  CHECK(m.report()["metric"] == "entropy");
  CHECK(m.status() == "2 recorded steps; map at step 20");
  CHECK(m.shown_figure("heads") == &m.lines());
  CHECK(m.shown_figure("heads-step") == &m.grid());
}

TEST_CASE("heads model: the lines hold each head's metric over every recorded step") {
  HeadsModel m = two_steps();
  m.build(m.step_for(-1));
  const fig::Figure& f = m.lines();
  REQUIRE(f.panels.size() == 2);  // entropy, diagonal
  const fig::LineSeries* line = nullptr;
  for (const fig::LineSeries& l : f.panels[1].lines)
    if (l.name == "L1 h2") line = &l;
  REQUIRE(line != nullptr);
  CHECK(line->x == std::vector<double>{10, 20});
  REQUIRE(line->y.size() == 2);
  CHECK(line->y[0] == doctest::Approx(value(10, "diagonal", 1, 2)));
  CHECK(line->y[1] == doctest::Approx(value(20, "diagonal", 1, 2)));
}

TEST_CASE("heads model: the metric and the timeline's step change the map") {
  HeadsModel m = two_steps();
  m.metric = 1;  // diagonal
  m.build(m.step_for(-1));
  CHECK(cell(m, 1, 2) == doctest::Approx(value(20, "diagonal", 1, 2)));
  CHECK(m.report()["metric"] == "diagonal");
  // The timeline at step 15 shows the recorded step at or before it; before the first, the first.
  CHECK(m.step_for(15) == 10);
  CHECK(m.step_for(5) == 10);
  CHECK(m.step_for(99) == 20);
  m.build(m.step_for(15));
  CHECK(cell(m, 0, 1) == doctest::Approx(value(10, "diagonal", 0, 1)));
  CHECK(m.cell_text(0, 1, 0.5f) == "layer 0 head 1: diagonal mass = 0.5000 at step 10");
}

TEST_CASE("heads model: a metric no head has at the step leaves no map, and says why") {
  HeadsModel m = two_steps();
  m.metric = 4;  // ky effective window: not in these metrics
  m.build(20);
  CHECK_FALSE(m.grid_ok());
  CHECK(m.grid_note().find("at step 20") != std::string::npos);
  CHECK(m.shown_figure("heads-step") == nullptr);
  CHECK(m.shown_figure("heads") != nullptr);  // the lines still show
}

TEST_CASE("heads model: the line figure's least height keeps each row of plots readable") {
  // Two metrics: one row of two plots. At UI scale 2 (a 26 px font) and at scale 1 (13 px) each
  // row keeps at least four font sizes of plot beside its title and ticks; a taller figure (three
  // rows, as six metrics give) asks for proportionally more, and the panel scrolls.
  HeadsModel m = two_steps();
  m.build(20);
  const fig::Figure& lines = m.lines();
  REQUIRE(lines.rows == 1);
  for (float font : {13.0f, 26.0f}) {
    CHECK(HeadsModel::min_height(lines, font) >= 7 * font);
    fig::Figure tall = lines;
    tall.rows = 3;
    CHECK(HeadsModel::min_height(tall, font) >= 3 * 7 * font);
  }
}
