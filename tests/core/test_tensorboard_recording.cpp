// The window's recording (RunRecorder, core/training/recording/run_recorder.h) writes the run's
// TensorBoard event file as it trains: the config, each metrics row and each recorded view's head
// metrics, before any save; the window's Save to a directory gives the copy one event file of its
// own rows, however often it saves there. (`attnlab train`'s file is decoded field by field by
// tests/e2e/tensorboard_events.py; here the records are walked by their framing only.)
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/runs/formats/tensorboard_events.h"
#include "core/training/recording/run_recorder.h"
#include "core/training/trainer.h"
#include "helpers.h"
#include "tensorboard_helpers.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

using test::event_files;
using test::event_records;

size_t count_with(const std::vector<std::string>& events, const std::string& tag) {
  size_t n = 0;
  for (const auto& e : events) n += e.find(tag) != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("tensorboard: the window's recorded run has its event file as it trains") {
  const fs::path dir = fs::path(test::temp_dir("tb-window")) / "run";
  ExperimentConfig c = test::tiny_config();
  c.train.steps = 20;
  c.train.record_every = 10;
  TrainingSession session(c);
  {
    RunRecorder recorder(dir.string(), session, "test");
    for (int i = 0; i < 20; ++i) {
      session.train_step();
      recorder.on_step(session);
      if (session.step() % 10 == 0)
        recorder.on_eval(session, session.evaluate(), session.learning_rate());
    }
    // Before any save: written as training went.
    const std::vector<fs::path> files = event_files(dir);
    REQUIRE(files.size() == 1);
    const auto events = event_records(files[0]);
    CHECK(events[0].find("brain.Event:2") != std::string::npos);
    CHECK(count_with(events, std::string("\x0a\x06") + "config") == 1);
    CHECK(count_with(events, "loss/eval") == 2);  // the rows at steps 10 and 20
    CHECK(count_with(events, "train/lr") == 2);
    // Views recorded at steps 0, 10 and 20: every head's entropy at each.
    CHECK(count_with(events, "heads_entropy/layer1/head1") == 3);
  }
  fs::remove_all(dir.parent_path());
}

TEST_CASE("tensorboard: the window's Save to a directory writes one event file of the copy") {
  const fs::path root = test::temp_dir("tb-save-to");
  ExperimentConfig c = test::tiny_config();
  c.train.steps = 100000;
  c.train.eval_every = 4;
  TrainerOptions o = test::fast_options();
  o.runs_root = (root / "runs").string();
  Trainer t(c, o);
  t.start();
  const fs::path mine = root / "mine";
  for (int i = 0; i < 2; ++i) {  // saved twice: the second save's file replaces the first's
    const int64_t at = t.latest()->step;
    REQUIRE(test::wait_until([&] { return t.latest()->step >= at + 9; }));
    t.save_checkpoint(mine.string());
    REQUIRE(test::wait_until([&] {
      return t.latest()->message.find("saved checkpoint to " + mine.string()) != std::string::npos;
    }));
    const std::vector<fs::path> files = event_files(mine);
    REQUIRE(files.size() == 1);
    const auto events = event_records(files[0]);
    CHECK(count_with(events, std::string("\x0a\x06") + "config") == 1);
    // One loss/eval scalar per metrics.csv row of the copy.
    std::ifstream metrics(mine / "metrics.csv");
    size_t rows = 0;
    for (std::string line; std::getline(metrics, line);) rows += !line.empty();
    REQUIRE(rows >= 2 + i);  // the header and the rows at steps 4, 8 (and 12, ...)
    CHECK(count_with(events, "loss/eval") == rows - 1);
    t.save_checkpoint("");  // another message, so the next wait sees the next save
    REQUIRE(test::wait_until([&] {
      return t.latest()->message.find("saved checkpoint to " + (root / "runs").string()) !=
             std::string::npos;
    }));
  }
  t.close();
  fs::remove_all(root);
}
