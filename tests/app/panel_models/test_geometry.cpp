// The Geometry explorer's model (app/panels/geometry/geometry_model.h) without a window: dragging
// a token moves the hull, the output and the predicted ellipse it reports, a drag of the
// Gaussian's mean resamples the tokens, and the exported figure follows the scene.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "app/panels/geometry/geometry_model.h"

using namespace attn;
using attn::gui::GeometryModel;
namespace g = attn::geometry;

namespace {

GeometryModel triangle() {
  GeometryModel m;
  m.scene.tokens = {{0, 0}, {1, 0}, {0, 1}};
  m.scene.wq = m.scene.wk = m.scene.wv = g::Mat2{};
  m.scene.temperature = 1;
  m.query = {0.5, 0.5};
  m.views.linear = true;  // the predicted ellipses too
  m.changed();
  m.update_derived();
  REQUIRE(m.derived.error.empty());
  return m;
}

bool has_point(const nlohmann::json& points, double x, double y) {
  for (const auto& p : points)
    if (std::abs(p[0].get<double>() - x) < 1e-12 && std::abs(p[1].get<double>() - y) < 1e-12)
      return true;
  return false;
}

}  // namespace

TEST_CASE("geometry model: dragging a token moves the hull, z and the ellipse it reports") {
  GeometryModel m = triangle();
  const nlohmann::json before = m.report();
  CHECK(before["hull"].size() == 3);
  CHECK(has_point(before["hull"], 1, 0));
  CHECK(before["box"][1] == nlohmann::json::array({1.0, 1.0}));

  // A click within the hit radius finds token 2 (t2 at (1, 0)), not one farther away.
  const int t = m.token_at({1.02, 0.01}, 0.05);
  REQUIRE(t == 1);
  CHECK(m.token_at({0.5, 0.5}, 0.05) == -1);
  REQUIRE(m.move_token(t, {3, -1}));
  CHECK_FALSE(m.move_token(t, {3, -1}));  // the same place: nothing changed
  m.update_derived();
  const nlohmann::json after = m.report();
  CHECK(after["tokens"][1] == nlohmann::json::array({3.0, -1.0}));
  CHECK(has_point(after["hull"], 3, -1));
  CHECK_FALSE(has_point(after["hull"], 1, 0));
  CHECK(after["box"][0] == nlohmann::json::array({0.0, -1.0}));
  CHECK(after["box"][1] == nlohmann::json::array({3.0, 1.0}));

  // z = softmax(v T) T^T, recomputed here: the model reports the moved token's pull.
  const std::vector<g::Vec2> tokens = {{0, 0}, {3, -1}, {0, 1}};
  double w[3], sum = 0, zx = 0, zy = 0;
  for (int j = 0; j < 3; ++j) sum += w[j] = std::exp(0.5 * tokens[j].x + 0.5 * tokens[j].y);
  for (int j = 0; j < 3; ++j) zx += w[j] / sum * tokens[j].x, zy += w[j] / sum * tokens[j].y;
  CHECK(after["output"][0].get<double>() == doctest::Approx(zx).epsilon(1e-12));
  CHECK(after["output"][1].get<double>() == doctest::Approx(zy).epsilon(1e-12));
  CHECK(after["weights"][1].get<double>() == doctest::Approx(w[1] / sum).epsilon(1e-12));
  CHECK(after["inside_hull"] == true);

  // The predicted ellipse of the linear view follows the tokens.
  CHECK(after["ellipse"] != before["ellipse"]);
  CHECK(m.derived.ellipses.size() == static_cast<size_t>(m.circle_count));
  const g::Ellipse expect = g::predicted_linear_image(m.scene, m.radius);
  CHECK(after["ellipse"]["radii"][0].get<double>() == doctest::Approx(expect.radius1));
  CHECK(after["ellipse"]["radii"][1].get<double>() == doctest::Approx(expect.radius2));
}

TEST_CASE("geometry model: Gaussian tokens cannot be dragged one by one; dragging mu resamples") {
  GeometryModel m = triangle();
  m.set_gaussian(true);
  m.sync_gaussian_tokens();
  m.update_derived();
  REQUIRE(m.scene.tokens.size() == static_cast<size_t>(m.gaussian_n));
  const g::Vec2 first = m.scene.tokens[0];
  CHECK(m.token_at(first, 1.0) == -1);
  CHECK_FALSE(m.move_token(0, {5, 5}));
  REQUIRE(m.move_mean({m.gaussian_params.mean.x + 2, m.gaussian_params.mean.y}));
  m.sync_gaussian_tokens();
  m.update_derived();
  CHECK(m.scene.tokens[0].x == doctest::Approx(first.x + 2));  // the same draw, shifted
  m.set_gaussian(false);                                       // the user's own tokens come back
  CHECK(m.scene.tokens.size() == 3);
}

TEST_CASE("geometry model: the exported figure follows the scene and names a bad one") {
  GeometryModel m = triangle();
  const fig::Figure f = m.figure();
  CHECK(f.name == "geometry");
  CHECK_FALSE(f.panels.empty());
  m.scene.temperature = 0;  // does not validate
  m.changed();
  m.update_derived();
  CHECK_FALSE(m.derived.error.empty());
  CHECK(m.report()["error"] == m.derived.error);
  const fig::Figure bad = m.figure();
  CHECK(bad.panels.empty());
  CHECK(bad.title.find("cannot build the figure") == 0);
}
