// The mechanism-views model (app/panels/mechanisms/mechanism_views_model.h) without a window: the
// figure it gives for a hand-built snapshot of two layers' views of a mechanism no app code names,
// and how its controls (layer, frame) change what is drawn.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "app/panels/mechanisms/mechanism_views_model.h"

using namespace attn;
using attn::gui::MechanismViewsModel;

namespace {

MechanismView view_of(int layer, float scale) {
  MechanismView v;
  v.mechanism = "made-up";
  v.layer = layer;
  v.curves.push_back({"profile",
                      {"offset", "tokens"},
                      {"weight", ""},
                      {0, 1, 2},
                      {"head 0", "head 1"},
                      {scale, 2 * scale, 3 * scale, 0, 1, scale}});
  v.matrices.push_back(
      {"mix", {"head", ""}, {"head", ""}, {"w", ""}, 2, 2, {}, {}, {1, 0, 0, scale}});
  v.scalars.push_back({"spread", "", -1, scale});
  return v;
}

Snapshot views_snapshot() {
  Snapshot s;
  s.serial = 3;
  auto frames = std::make_shared<std::vector<MechanismFrame>>();
  frames->push_back({0, {view_of(0, 1), view_of(2, 10)}});
  frames->push_back({50, {view_of(0, 5), view_of(2, 50)}});
  s.mechanism_views = frames;
  return s;
}

}  // namespace

TEST_CASE(
    "mechanism-views model: every layer's curves and matrices, the controls pick layer and frame") {
  const Snapshot s = views_snapshot();
  MechanismViewsModel m;
  CHECK(MechanismViewsModel::layers(s) == std::vector<int>{0, 2});
  const fig::Figure& all = m.figure(s);
  CHECK(m.error().empty());
  CHECK(all.step == 50);
  REQUIRE(all.panels.size() == 4);  // two layers x (curves, matrix)
  CHECK(all.panels[0].title.find("layer 0 made-up: profile") == 0);
  CHECK(all.panels[0].title.find("spread 5") != std::string::npos);
  REQUIRE(all.panels[0].lines.size() == 2);
  CHECK(all.panels[0].lines[0].y == std::vector<double>{5, 10, 15});
  CHECK(all.panels[3].heatmaps.at(0).values == std::vector<float>{1, 0, 0, 50});

  m.layer = 2;
  m.frame = 0;
  const fig::Figure& one = m.figure(s);
  CHECK(one.step == 0);
  REQUIRE(one.panels.size() == 2);
  CHECK(one.panels[0].lines[0].y == std::vector<double>{10, 20, 30});
  CHECK(m.report()["panels"].size() == 2);

  m.layer = 1;  // no view there: nothing drawn, and why
  CHECK(m.figure(s).panels.empty());
  CHECK(m.error().find("layer 1 shows no mechanism view") != std::string::npos);
  CHECK(m.report()["error"] == m.error());

  const Snapshot none;
  MechanismViewsModel n;
  CHECK(MechanismViewsModel::empty(none));
  CHECK(n.figure(none).panels.empty());
  CHECK(!n.error().empty());
}
