// Kept checkpoints (train.keep_checkpoints; core/config/config.h, core/runs/directory/run_files.h,
// core/training/recording/run_recorder.h): where and when `attnlab train` and the window's
// recorder keep them, that each holds its step's weights, the cap on their number, and that
// replacing a run removes them and nothing of the user's.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "core/base/error.h"
#include "core/config/config.h"
#include "core/runs/directory/run_files.h"
#include "core/training/headless/headless.h"
#include "core/training/recording/run_recorder.h"
#include "core/training/session/session.h"
#include "helpers.h"

namespace fs = std::filesystem;
using namespace attn;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

using Names = std::set<std::string>;

// The names in dir/checkpoints (empty when it is absent).
Names kept_names(const fs::path& dir) {
  std::set<std::string> out;
  if (!fs::exists(dir / "checkpoints")) return out;
  for (const auto& e : fs::directory_iterator(dir / "checkpoints"))
    out.insert(e.path().filename().string());
  return out;
}

ExperimentConfig keeping(int64_t steps, int64_t every) {
  ExperimentConfig c = test::tiny_config();
  c.train.steps = steps;
  c.train.keep_checkpoints = every;
  c.train.record_every = 0;  // no views.rec: not what these tests are about
  return c;
}

// `attnlab train --out out [--until N]` on one thread.
HeadlessOptions into(const fs::path& out, std::optional<int64_t> until = std::nullopt) {
  HeadlessOptions o;
  o.threads = 1;
  o.out_dir = out.string();
  o.until = until;
  return o;
}

}  // namespace

TEST_CASE("train.keep_checkpoints keeps every K steps and the last, as the brute force counts") {
  for (int64_t steps : {1, 7, 10, 12}) {
    for (int64_t k : {1, 3, 5, 10, 20}) {
      TrainConfig t;
      t.steps = steps;
      t.keep_checkpoints = k;
      int64_t count = 0;
      for (int64_t s = 1; s <= steps; ++s) {
        const bool want = s % k == 0 || s == steps;
        CHECK(keeps_checkpoint_at(t, s) == want);
        count += want;
      }
      CHECK(kept_checkpoint_count(t) == count);
      CHECK_FALSE(keeps_checkpoint_at(t, 0));
    }
  }
  TrainConfig none;
  none.steps = 10;
  CHECK(kept_checkpoint_count(none) == 0);
  for (int64_t s = 0; s <= 10; ++s) CHECK_FALSE(keeps_checkpoint_at(none, s));
}

TEST_CASE("a config keeping more than kMaxKeptCheckpoints is refused naming the key") {
  nlohmann::json j = to_json(test::tiny_config());
  j["train"]["steps"] = 1000000;
  j["train"]["warmup"] = 5;
  j["train"]["keep_checkpoints"] = 9;  // 111,112 checkpoints
  CHECK_THROWS_WITH_AS(parse_config(j, "c.json"),
                       doctest::Contains("c.json: train.keep_checkpoints 9"), Error);
  j["train"]["keep_checkpoints"] = 10;  // exactly 100,000
  CHECK(parse_config(j, "c.json").train.keep_checkpoints == 10);
  j["train"]["keep_checkpoints"] = -1;
  CHECK_THROWS_WITH_AS(parse_config(j, "c.json"), doctest::Contains("train.keep_checkpoints"),
                       Error);
  // 0 (the default) is left out of the resolved config, so older runs' config hashes hold.
  CHECK_FALSE(to_json(test::tiny_config()).at("train").contains("keep_checkpoints"));
  CHECK(to_json(keeping(10, 5)).at("train").at("keep_checkpoints") == 5);
}

TEST_CASE("attnlab train keeps checkpoints/step-<N> at its steps, each that step's checkpoint") {
  const fs::path d = test::temp_dir("kept-train");
  train_headless(keeping(12, 5), into(d / "run", 7));
  CHECK(kept_names(d / "run") == Names{"step-5"});
  // The same run stopped at 5: its checkpoint is the kept one, byte for byte.
  train_headless(keeping(12, 5), into(d / "at5", 5));
  for (const char* f : {"model.safetensors", "optimizer.safetensors"})
    CHECK(slurp(d / "run" / "checkpoints" / "step-5" / f) == slurp(d / "at5" / "checkpoint" / f));
  const auto state =
      nlohmann::json::parse(slurp(d / "run" / "checkpoints" / "step-5" / "state.json"));
  CHECK(state.at("step") == 5);
  CHECK(state.at("format_version") == 2);
  CHECK(state.at("files").contains("model.safetensors"));
  // A resume keeps adding them: 10 and the last step, 12, which is the final checkpoint.
  HeadlessOptions resume = into(d / "run");
  resume.resume_dir = resume.out_dir;
  train_headless(keeping(12, 5), resume);
  CHECK(kept_names(d / "run") == Names{"step-5", "step-10", "step-12"});
  CHECK(slurp(d / "run" / "checkpoints" / "step-12" / "model.safetensors") ==
        slurp(d / "run" / "checkpoint" / "model.safetensors"));
  CHECK(slurp(d / "run" / "checkpoints" / "step-10" / "model.safetensors") !=
        slurp(d / "run" / "checkpoint" / "model.safetensors"));
  // Without the key, no checkpoints/ at all.
  train_headless(keeping(12, 0), into(d / "plain"));
  CHECK_FALSE(fs::exists(d / "plain" / "checkpoints"));
  fs::remove_all(d);
}

TEST_CASE("the window's recorder keeps checkpoints as attnlab train does") {
  const fs::path d = test::temp_dir("kept-window");
  TrainingSession session(keeping(6, 4));
  {
    RunRecorder recorder((d / "run").string(), session, "test");
    while (session.step() < 6) {
      session.train_step();
      recorder.on_step(session);
    }
    recorder.save(session, "", false);
  }
  CHECK(kept_names(d / "run") == Names{"step-4", "step-6"});
  CHECK(slurp(d / "run" / "checkpoints" / "step-6" / "model.safetensors") ==
        slurp(d / "run" / "checkpoint" / "model.safetensors"));
  fs::remove_all(d);
}

TEST_CASE("--force removes the replaced run's kept checkpoints and nothing of the user's") {
  const fs::path d = test::temp_dir("kept-force");
  HeadlessOptions o = into(d / "run");
  train_headless(keeping(10, 5), o);
  REQUIRE(kept_names(d / "run") == Names{"step-5", "step-10"});
  // The user's files beside the kept folders (not inside one) stay.
  std::ofstream(d / "run" / "checkpoints" / "notes.md") << "mine";
  fs::create_directories(d / "run" / "checkpoints" / "step-x");
  o.force = true;
  train_headless(keeping(10, 0), o);
  CHECK(kept_names(d / "run") == Names{"notes.md", "step-x"});
  // A replaced run with no user's file there leaves no checkpoints/ behind.
  fs::remove(d / "run" / "checkpoints" / "notes.md");
  fs::remove(d / "run" / "checkpoints" / "step-x");
  train_headless(keeping(10, 5), o);
  train_headless(keeping(10, 0), o);
  CHECK_FALSE(fs::exists(d / "run" / "checkpoints"));
  fs::remove_all(d);
}

TEST_CASE("a kept checkpoint's folder holding the user's file refuses training, changing nothing") {
  const fs::path d = test::temp_dir("kept-foreign");
  train_headless(keeping(10, 5), into(d / "run", 6));
  std::ofstream(d / "run" / "checkpoints" / "step-5" / "notes.md") << "mine";
  const std::string summary = slurp(d / "run" / "summary.json");
  HeadlessOptions force = into(d / "run");
  force.force = true;
  CHECK_THROWS_WITH_AS(train_headless(keeping(10, 5), force),
                       doctest::Contains("checkpoints/step-5/notes.md"), Error);
  CHECK(slurp(d / "run" / "summary.json") == summary);
  CHECK(slurp(d / "run" / "checkpoints" / "step-5" / "notes.md") == "mine");
  fs::remove_all(d);
}
