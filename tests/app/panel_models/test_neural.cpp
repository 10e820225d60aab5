// The Neural panel's model (app/panels/mechanisms/neural_model.h): the score-surface figure equals
// the published view, the settings reach the trainer once per change, a new view for another head
// changes what is drawn, the layout control moves the slice, and the parameter table shows b_a's
// gradient as the exact 0 it is.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "app/panels/mechanisms/neural_model.h"
#include "core/attention/neural/neural_view.h"

using namespace attn;
using gui::NeuralModel;

namespace {

constexpr int kGrid = 3;

// A view of layer 1 (two heads) whose surface for `head` is known: learned z = 10 head + index.
std::shared_ptr<const NeuralView> neural_view(int head, bool available = true) {
  auto v = std::make_shared<NeuralView>();
  v->step = 100 + head;
  v->request.layer = 1;
  v->request.head = head;
  NeuralLayerInfo info;
  info.layer = 1, info.heads = 2, info.head_dim = 4, info.reduced_dim = 2, info.hidden = 8;
  info.down_projection = true, info.activation = "relu";
  for (int h = 0; h < 2; ++h)
    info.parameters.push_back({{"U", false, 1.5 + h, 0.25, true}, {"b_a", true, 0.3, 0.0, true}});
  v->layers = {info};
  NeuralScoreSurface& s = v->surface;
  s.layer = 1, s.head = head;
  if (!available) {
    s.note = "d' = 4, not 2";
    return v;
  }
  s.available = true;
  s.grid = kGrid;
  s.xs = {-1, 0, 1};
  s.ys = {-2, 0, 2};
  for (int i = 0; i < kGrid * kGrid; ++i) {
    s.learned.push_back(10.0f * head + i);
    s.paraboloid.push_back(s.xs[i % kGrid] * s.xs[i % kGrid] + s.ys[i / kGrid] * s.ys[i / kGrid]);
  }
  s.query_x = 0.5f, s.query_y = -1.0f, s.key_angle = 0;
  s.slice_t = {-1, 0, 1, 2};
  s.slice_learned = {3, 1, 2, 5};
  s.slice_dot = {-0.5f, 0, 0.5f, 1};
  return v;
}

Snapshot snapshot_of(std::shared_ptr<const NeuralView> v) {
  Snapshot s;
  s.mechanism_views = std::make_shared<const std::vector<MechanismFrame>>(
      std::vector<MechanismFrame>{neural_frame_of(*v)});
  return s;
}

std::vector<double> doubles(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

}  // namespace

TEST_CASE("neural model: the figure for a snapshot holds the view's surface and slice") {
  NeuralModel m;
  const std::shared_ptr<const NeuralView> src = neural_view(0);
  const Snapshot snap = snapshot_of(src);
  m.update(snap);
  REQUIRE(m.figure_ok());
  const fig::Figure& f = m.figure();
  REQUIRE(f.panels.size() == 3);
  CHECK(f.panels[0].heatmaps.at(0).values == src->surface.learned);
  CHECK(f.panels[1].heatmaps.at(0).values == src->surface.paraboloid);
  REQUIRE(f.panels[2].lines.size() == 2);
  CHECK(f.panels[2].lines[0].x == doubles(src->surface.slice_t));
  CHECK(f.panels[2].lines[0].y == doubles(src->surface.slice_learned));
  CHECK(f.panels[2].lines[1].y == doubles(src->surface.slice_dot));
  CHECK(f.title.find("head 0") != std::string::npos);
  CHECK(f.title.find("slice at q' = (0.50, -1.00)") != std::string::npos);
  const NeuralModel::Report& r = m.report();
  CHECK(r.drawn);
  CHECK(r.surface_available);
  CHECK(r.surface_finite);
  CHECK(r.grid == kGrid);
  CHECK(r.step == 100);
  CHECK(r.slice_points == 4);
  CHECK(r.table_heads == 2);
  CHECK(r.gradients_present);
  CHECK(r.score_bias_gradient_zero);
  CHECK(m.report_json()["slice_points"] == 4);
  CHECK(m.figures(snap) == std::vector<std::string>{"neural-surface"});
}

TEST_CASE("neural model: a changed setting is requested once, and the new view is what is drawn") {
  NeuralModel m;
  m.update(snapshot_of(neural_view(0)));
  CHECK_FALSE(m.take_request());  // nothing changed yet
  m.select_layer(1);
  m.select_head(1);
  const auto request = m.take_request();
  REQUIRE(request);
  CHECK(request->layer == 1);
  CHECK(request->head == 1);
  CHECK_FALSE(m.take_request());  // sent once
  // A head the layer lacks is clamped to its last one.
  m.select_head(7);
  m.update(snapshot_of(neural_view(0)));
  CHECK(m.request().head == 1);
  // The trainer publishes the view for head 1: the figure shows its values, not head 0's.
  const Snapshot head1 = snapshot_of(neural_view(1));
  m.update(head1);
  CHECK(m.figure().panels[0].heatmaps.at(0).values == neural_view(1)->surface.learned);
  CHECK(m.figure().panels[0].heatmaps.at(0).values != neural_view(0)->surface.learned);
  CHECK(m.figure().title.find("head 1") != std::string::npos);
  CHECK(m.report().head == 1);
  CHECK(m.report().step == 101);
}

TEST_CASE("neural model: two by two puts the slice second; a row puts it last") {
  NeuralModel m;
  m.update(snapshot_of(neural_view(0)));
  m.arrange(true);
  CHECK(m.slice_panel() == 1);
  CHECK(m.figure().rows == 2);
  CHECK(m.figure().cols == 2);
  CHECK(m.figure().panels[1].lines.size() == 2);     // the slice's two lines
  CHECK(m.figure().panels[2].heatmaps.size() == 1);  // the paraboloid
  m.arrange(false);
  CHECK(m.slice_panel() == 2);
  CHECK(m.figure().cols == 3);
  CHECK(m.figure().panels[2].lines.size() == 2);
}

TEST_CASE("neural model: the parameter table, and a view without a surface") {
  const std::shared_ptr<const NeuralView> v = neural_view(0, /*available=*/false);
  const NeuralModel::Table t = NeuralModel::parameter_table(v->layers[0]);
  CHECK(t.columns == std::vector<std::string>{"head", "|U|", "|grad U|", "b_a", "grad b_a"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[1][0].text == "1");
  CHECK(t.rows[1][1].text == "2.5");
  CHECK(t.rows[1][2].text == "0.25");
  CHECK(t.rows[1][4].text == "0 (exact)");
  CHECK(t.rows[1][4].kind == NeuralModel::Cell::Kind::ExactZero);
  NeuralLayerInfo fresh = v->layers[0];
  fresh.parameters[0][0].has_gradient = false;
  CHECK(NeuralModel::parameter_table(fresh).rows[0][2].kind == NeuralModel::Cell::Kind::NoGradient);

  NeuralModel m;
  const Snapshot snap = snapshot_of(v);
  m.update(snap);
  CHECK(m.report().drawn);
  CHECK_FALSE(m.surface_shown());
  CHECK(m.missing_note(*v) == "d' = 4, not 2");
  CHECK(m.report().note == "d' = 4, not 2");
  CHECK(m.report().table_heads == 2);
  CHECK(m.figures(snap).empty());
  // No neural layer at all: nothing drawn.
  m.update(Snapshot{});
  CHECK_FALSE(m.report().drawn);
}
