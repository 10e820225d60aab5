// The Compare panel's model (app/panels/training/compare_model.h) without a window: saved runs
// written by hand, the overlay figure it gives, and how its controls (the y scale, seed bands,
// a run's colour) change what is drawn.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "app/panels/training/compare_model.h"
#include "test_panel_helpers.h"

using namespace attn;
using attn::gui::CompareModel;

using test::find_line;
using test::find_panel;
using test::line_names;

TEST_CASE("compare model: saved runs are overlaid with their own eval losses") {
  test::ScopedTempDir tmp("compare");
  test::write_saved_run(tmp.path / "dot", test::small_config("dot", 1),
                        {{10, 2.0, 2.5, 0.25}, {20, 1.0, 1.5, 0.5}});
  test::write_saved_run(tmp.path / "ky", test::small_config("ky", 1),
                        {{10, 2.0, 2.25, 0.125}, {20, 1.5, 2.0, 0.375}});
  CompareModel m;
  REQUIRE(m.add_saved_run((tmp.path / "dot").string()));
  REQUIRE(m.add_saved_run((tmp.path / "ky").string()));
  CHECK(m.error().empty());
  const fig::Figure& f = m.overlay();
  const fig::Panel* eval = find_panel(f, "eval loss");
  REQUIRE(eval);
  CHECK(line_names(*eval) == std::vector<std::string>{"dot", "ky"});
  CHECK(find_line(*eval, "dot")->x == std::vector<double>{10, 20});
  CHECK(find_line(*eval, "dot")->y == std::vector<double>{2.5, 1.5});
  CHECK(find_line(*eval, "ky")->y == std::vector<double>{2.25, 2.0});
  CHECK_FALSE(m.log_y_shown());  // 1.5 .. 2.5: less than a decade

  const CompareModel::Row row = m.row(1);
  CHECK(row.label == "ky");
  CHECK(row.state == "saved (unfinished)");
  CHECK(std::isnan(row.eval_loss));  // no summary.json: no final figures
  CHECK(row.saved == (tmp.path / "ky").string());

  const nlohmann::json r = m.report();
  CHECK(r["eval_lines"] == nlohmann::json::array({"dot", "ky"}));
  CHECK(r["runs"][0]["eval_loss"] == 1.5);
}

TEST_CASE("compare model: a directory that is no run is refused and changes nothing") {
  test::ScopedTempDir tmp("compare-bad");
  CompareModel m;
  const std::string missing = (tmp.path / "nothing-here").string();
  CHECK_FALSE(m.add_saved_run(missing));
  CHECK(m.error().find("nothing-here") != std::string::npos);
  CHECK(m.size() == 0);
  CHECK_FALSE(m.start_runs(test::small_config("dot", 1), "model.attention", "no-such-mechanism"));
  CHECK(m.error().find("no-such-mechanism") != std::string::npos);
  CHECK(m.size() == 0);
}

TEST_CASE("compare model: the y scale, the seed bands and a run's colour change the overlay") {
  test::ScopedTempDir tmp("compare-controls");
  // Two seeds of one experiment and another experiment: eval losses spanning two decades.
  test::write_saved_run(tmp.path / "dot" / "seed-1", test::small_config("dot", 1),
                        {{10, 5.0, 4.0, 0.1}, {20, 1.0, 1.0, 0.5}});
  test::write_saved_run(tmp.path / "dot" / "seed-2", test::small_config("dot", 2),
                        {{10, 5.0, 2.0, 0.2}, {20, 1.0, 0.5, 0.7}});
  test::write_saved_run(tmp.path / "ky", test::small_config("ky", 1),
                        {{10, 2.0, 0.04, 0.9}, {20, 1.0, 0.02, 1.0}});
  CompareModel m;
  for (const char* d : {"dot/seed-1", "dot/seed-2", "ky"})
    REQUIRE(m.add_saved_run((tmp.path / d).string()));

  SUBCASE("auto is log past a decade; linear and log as chosen") {
    CHECK(m.overlay().panels.front().y.log);
    m.y_scale = 1;
    CHECK_FALSE(m.overlay().panels.front().y.log);
    m.y_scale = 2;
    CHECK(m.overlay().panels.front().y.log);
  }
  SUBCASE("seed bands draw the two seeds as their mean with a band") {
    CHECK(line_names(*find_panel(m.overlay(), "eval loss")) ==
          std::vector<std::string>{"dot/seed-1", "dot/seed-2", "ky"});
    m.seed_bands = 1;
    const fig::Panel* eval = find_panel(m.overlay(), "eval loss");
    const fig::LineSeries* mean = find_line(*eval, "dot (mean of 2 seeds)");
    REQUIRE(mean);
    CHECK(mean->y == std::vector<double>{3.0, 0.75});
    CHECK(find_line(*eval, "ky"));
    CHECK_FALSE(find_line(*eval, "dot/seed-1"));
    REQUIRE(eval->polygons.size() == 1);
    CHECK(m.report()["eval_bands"].size() == 1);
  }
  SUBCASE("a new colour recolours its line") {
    float* c = m.color(2);
    c[0] = 1, c[1] = 0, c[2] = 0;
    const fig::LineSeries* ky = find_line(*find_panel(m.overlay(), "eval loss"), "ky");
    REQUIRE(ky);
    CHECK(ky->color.r == doctest::Approx(1.0));
    CHECK(ky->color.g == doctest::Approx(0.0));
  }
}
