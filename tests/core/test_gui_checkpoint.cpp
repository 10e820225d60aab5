// The window's recorded run is checkpointed periodically while it trains (issue 46, 10a:
// TrainerOptions::checkpoint_every_s), so a window that dies mid-run loses at most that much: the
// checkpoint appears while training goes on, without a summary (the run reads as unfinished),
// with the metrics rows flushed, and `train --resume` continues it.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/config/config.h"
#include "core/runs/directory/run_lock.h"
#include "core/training/headless/headless.h"
#include "core/training/trainer.h"
#include "helpers.h"

using namespace attn;
namespace fs = std::filesystem;
using test::wait_until;

namespace {

int64_t checkpoint_step(const fs::path& run) {
  std::ifstream in(run / "checkpoint" / "state.json");
  std::stringstream s;
  s << in.rdbuf();
  return nlohmann::json::parse(s.str())["step"].get<int64_t>();
}

int64_t metric_rows(const fs::path& run) {
  std::ifstream in(run / "metrics.csv");
  int64_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines - 1;  // the header
}

}  // namespace

TEST_CASE("the window's run is checkpointed every checkpoint_every_s while training, and resumes") {
  const fs::path root = test::temp_dir("gui-periodic");
  auto c = test::tiny_config();
  c.train.steps = 1000000;
  c.train.eval_every = 5;
  TrainerOptions o = test::fast_options();
  o.runs_root = (root / "runs").string();
  o.checkpoint_every_s = 0.3;
  // The trainer thread stops before a step (between steps, where the periodic checkpoint is
  // written) once the test asks, so the run directory can be copied as a kill -9 would leave it.
  std::atomic<bool> freeze{false}, frozen{false};
  o.before_step = [&](int64_t) {
    if (!freeze.load()) return;
    frozen.store(true);
    while (freeze.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    frozen.store(false);
  };
  Trainer t(c, o);
  t.start();
  REQUIRE(wait_until([&] { return !t.latest()->run_dir.empty(); }));
  const fs::path dir = t.latest()->run_dir;
  // Never paused or saved: only the periodic checkpoint can write checkpoint/.
  REQUIRE(wait_until([&] { return fs::exists(dir / "checkpoint" / "state.json"); }));
  freeze.store(true);
  REQUIRE(wait_until([&] { return frozen.load(); }));
  CHECK(t.state() == TrainerState::Running);
  CHECK_FALSE(fs::exists(dir / "summary.json"));  // still reads as an unfinished run
  const int64_t first = checkpoint_step(dir);
  CHECK(first > 0);
  CHECK(metric_rows(dir) >= first / c.train.eval_every);  // the rows up to it are on disk
  // What a kill -9 now leaves behind (the lock is the trainer's and is not copied).
  const fs::path killed = root / "killed";
  fs::copy(dir, killed, fs::copy_options::recursive);
  fs::remove(killed / kRunLockName);
  freeze.store(false);

  // It goes on: a later checkpoint, still without a summary, while the trainer keeps running.
  REQUIRE(wait_until([&] { return checkpoint_step(dir) > first; }));
  CHECK(t.state() == TrainerState::Running);
  CHECK_FALSE(fs::exists(dir / "summary.json"));
  CHECK(t.close().empty());

  // `attnlab train --resume` continues the copied run from its periodic checkpoint.
  HeadlessOptions h;
  h.out_dir = h.resume_dir = killed.string();
  h.until = first + 7;
  h.threads = 1;
  const RunSummary s = train_headless(c, h);
  CHECK(s.steps == first + 7);
  CHECK(checkpoint_step(killed) == first + 7);
  CHECK(fs::exists(killed / "summary.json"));
  fs::remove_all(root);
}

TEST_CASE("checkpoint_every_s 0 writes no checkpoint while training") {
  const fs::path root = test::temp_dir("gui-periodic-off");
  auto c = test::tiny_config();
  c.train.steps = 1000000;
  TrainerOptions o = test::fast_options();
  o.runs_root = (root / "runs").string();
  o.checkpoint_every_s = 0;
  Trainer t(c, o);
  t.start();
  REQUIRE(wait_until([&] { return !t.latest()->run_dir.empty(); }));
  const fs::path dir = t.latest()->run_dir;
  const int64_t step = t.latest()->step;
  REQUIRE(wait_until([&] { return t.latest()->step > step + 200; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK_FALSE(fs::exists(dir / "checkpoint"));
  t.close();
  CHECK(fs::exists(dir / "checkpoint" / "state.json"));  // the close still saves
  fs::remove_all(root);
}
