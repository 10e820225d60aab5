// The config keys that tell runs apart (app/panels/runs/config_diff_model.h), as the Runs and
// Compare panels show them: flattened dotted keys, the differing ones only, "name" left out, a
// key missing from one run counted as differing; and the two panels' models giving them for
// runs that all read "dot" but differ in position, seed and learning rate.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "app/panels/runs/config_diff_model.h"
#include "app/panels/runs/runs_model.h"
#include "app/panels/training/compare_model.h"
#include "test_panel_helpers.h"

using namespace attn;
using nlohmann::json;

TEST_CASE("config diff: the dotted keys whose values differ, and each run's values of them") {
  const json a = json::parse(R"({"name": "a", "seed": 1, "model": {"attention": "dot",
      "position": "learned", "opts": {}}, "train": {"lr": 0.001, "steps": 100}})");
  json b = a;
  b["name"] = "b";
  b["model"]["position"] = "rope";
  json c = a;
  c["seed"] = 2;
  c["train"]["lr"] = 0.003;
  c["train"].erase("steps");
  CHECK(gui::flatten_config(a).count("model.attention") == 1);
  CHECK(gui::flatten_config(a).at("model.opts") == json::object());  // an empty object is a leaf
  CHECK(gui::differing_keys({a}).empty());
  CHECK(gui::differing_keys({a, a}).empty());
  CHECK(gui::differing_keys({a, b}) == std::vector<std::string>{"model.position"});  // not name
  const std::vector<std::string> keys = gui::differing_keys({a, b, c});
  CHECK(keys == std::vector<std::string>{"model.position", "seed", "train.lr", "train.steps"});
  CHECK(gui::differing_text(b, keys) ==
        "model.position=rope, seed=1, train.lr=0.001, train.steps=100");
  CHECK(gui::differing_text(c, keys) ==
        "model.position=learned, seed=2, train.lr=0.003, train.steps=-");
  CHECK(gui::differing_text(a, {}).empty());
}

namespace {

ExperimentConfig dot_with(const std::string& position, uint64_t seed, double lr) {
  ExperimentConfig c = test::small_config("dot", seed);
  c.model.position = position;
  c.train.lr = lr;
  return c;
}

}  // namespace

TEST_CASE("config diff: Compare and Runs tell apart runs that all read dot") {
  test::ScopedTempDir tmp("config-diff");
  test::write_saved_run(tmp.path / "r1", dot_with("learned", 1, 1e-3), {{10, 2.0, 2.5, 0.25}});
  test::write_saved_run(tmp.path / "r2", dot_with("rope", 1, 1e-3), {{10, 2.0, 2.5, 0.25}});
  test::write_saved_run(tmp.path / "r3", dot_with("learned", 2, 3e-3), {{10, 2.0, 2.5, 0.25}});

  gui::CompareModel compare;
  for (const char* r : {"r1", "r2", "r3"}) REQUIRE(compare.add_saved_run((tmp.path / r).string()));
  CHECK(compare.differing_keys() == std::vector<std::string>{"model.position", "seed", "train.lr"});
  CHECK(compare.row(1).differs == "model.position=rope, seed=1, train.lr=0.001");
  CHECK(compare.row(2).differs == "model.position=learned, seed=2, train.lr=0.003");
  CHECK(compare.report()["runs"][1]["differs"] == "model.position=rope, seed=1, train.lr=0.001");

  gui::RunsModel runs(tmp.path.string());
  Snapshot snap;
  gui::UiState ui;
  const auto start = std::chrono::steady_clock::now();
  auto read = [&] {
    if (runs.size() != 3) return false;
    for (size_t i = 0; i < runs.size(); ++i)
      if (!runs.run(i).readable) return false;
    return true;
  };
  while (!read() && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    runs.update(snap, ui, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  runs.update(snap, ui, 0);
  REQUIRE(read());
  CHECK(runs.differing_keys() == std::vector<std::string>{"model.position", "seed", "train.lr"});
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs.label(i) == "r2")
      CHECK(runs.differs(i) == "model.position=rope, seed=1, train.lr=0.001");
  const json r = runs.report();
  REQUIRE(r.size() == 3);
  CHECK(r[0]["differs"].get<std::string>().find("train.lr=") != std::string::npos);
}
