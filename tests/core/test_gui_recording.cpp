// The window's Save and the end of its recordings (issue 30): Save writes into the model's own
// recorded run unless the user picks a directory, and then never into another run or a locked
// directory; a recording that fails keeps what it can, stays visible in the snapshot and is
// returned by Trainer::close(); TrainerOptions::run_dir records a model exactly there (Compare).
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config/config.h"
#include "core/runs/directory/run_dir.h"
#include "core/runs/directory/run_lock.h"
#include "core/training/trainer.h"
#include "helpers.h"
#include "recording_helpers.h"

using namespace attn;
namespace fs = std::filesystem;
using test::in_state;
using test::wait_until;

namespace {

bool message_has(const Trainer& t, const std::string& what) {
  return t.latest()->message.find(what) != std::string::npos;
}

// A run directory another writer made: config.json and a checkpoint that must survive.
void foreign_run(const fs::path& dir) {
  fs::create_directories(dir / "checkpoint");
  std::ofstream(dir / "config.json") << "{\"name\": \"theirs\"}\n";
  std::ofstream(dir / "checkpoint" / "state.json") << "theirs\n";
}

}  // namespace

TEST_CASE("Save with no directory writes into the model's own recorded run") {
  const fs::path root = test::temp_dir("gui-save-own");
  auto c = test::tiny_config();
  c.train.steps = 100000;
  Trainer t(c, test::recording_options(root.string()));
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step >= 12 && !t.latest()->run_dir.empty(); }));
  const fs::path dir = t.latest()->run_dir;
  t.save_checkpoint("");
  REQUIRE(wait_until([&] { return message_has(t, "saved checkpoint to"); }));
  CHECK(message_has(t, dir.string()));
  REQUIRE(fs::exists(dir / "checkpoint" / "state.json"));
  CHECK(test::json_of(dir / "checkpoint" / "state.json")["config"]["name"] == c.name);
  // Training on removes the summary the save wrote (never an old summary beside a newer model).
  const int64_t saved_at = test::json_of(dir / "checkpoint" / "state.json")["step"];
  REQUIRE(wait_until([&] { return t.latest()->step > saved_at + 2; }));
  CHECK_FALSE(fs::exists(dir / "summary.json"));
  t.close();
  CHECK(test::json_of(dir / "summary.json")["interrupted_by"] == "window closed");
  fs::remove_all(root);
}

TEST_CASE("Save to a directory refuses another run and a locked directory, and touches neither") {
  const fs::path root = test::temp_dir("gui-save-pick");
  auto c = test::tiny_config();
  c.train.steps = 100000;
  Trainer t(c, test::recording_options((root / "runs").string()));
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step >= 12; }));

  foreign_run(root / "theirs");
  t.save_checkpoint((root / "theirs" / "checkpoint").string());
  REQUIRE(wait_until([&] { return message_has(t, "save failed"); }));
  CHECK(message_has(t, (root / "theirs").string()));
  CHECK(message_has(t, "did not write"));
  CHECK(test::file_bytes(root / "theirs" / "checkpoint" / "state.json") == "theirs\n");
  CHECK(test::file_bytes(root / "theirs" / "config.json") == "{\"name\": \"theirs\"}\n");

  {
    const RunDirLock held((root / "busy").string(), "attnlab train", /*wait=*/false);
    t.save_checkpoint((root / "busy").string());
    REQUIRE(wait_until([&] { return message_has(t, "being written by"); }));
    CHECK(message_has(t, "pid " + std::to_string(::getpid()) + ": attnlab train"));
    CHECK_FALSE(fs::exists(root / "busy" / "checkpoint"));
  }

  // A fresh directory gets a whole run that read_run_directory and --resume take; saving there
  // again is allowed (the window wrote it).
  for (int i = 0; i < 2; ++i) {
    t.save_checkpoint((root / "mine").string());
    REQUIRE(wait_until(
        [&] { return message_has(t, "saved checkpoint to " + (root / "mine").string()); }));
    const RunDirectory run = read_run_directory((root / "mine").string());
    CHECK(run.has_checkpoint);
    CHECK(run.summary["interrupted_by"] == "saved in the window");
    CHECK(run.config.name == c.name);
    t.save_checkpoint("");  // a different message, so the next wait sees the next save
    REQUIRE(wait_until(
        [&] { return message_has(t, "saved checkpoint to " + (root / "runs").string()); }));
  }
  CHECK(t.close().empty());
  fs::remove_all(root);
}

TEST_CASE("a runs root that cannot be written stays visible to the end and close() names it") {
  const fs::path root = test::temp_dir("gui-record-bad");
  auto c = test::tiny_config();
  c.train.steps = 30;
  Trainer t(c, test::recording_options(test::blocked_runs_root(root)));
  t.start();
  REQUIRE(wait_until([&] { return in_state(t, TrainerState::Finished); }, 120));
  const std::string error = t.latest()->record_error;
  CHECK(error.find("not recorded") != std::string::npos);  // not replaced by "finished"
  CHECK(error.find((root / "file").string()) != std::string::npos);
  const std::vector<std::string> unsaved = t.close();
  REQUIRE(unsaved.size() == 1);
  CHECK(unsaved[0] == error);
  fs::remove_all(root);
}

TEST_CASE(
    "a checkpoint that cannot be written at close: the summary is still written, and says so") {
  const fs::path root = test::temp_dir("gui-record-full");
  auto c = test::tiny_config();
  c.train.steps = 100000;
  Trainer t(c, test::recording_options(root.string()));
  t.start();
  REQUIRE(wait_until([&] { return t.latest()->step >= 25 && !t.latest()->run_dir.empty(); }));
  const fs::path dir = t.latest()->run_dir;
  // RLIMIT_FSIZE fails writes past 4 KiB (EFBIG) as a full disk does: the model's weights do
  // not fit, the summary does.
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  rlimit low = old;
  low.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &low) == 0);
  const std::vector<std::string> unsaved = t.close();
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &old) == 0);
  std::signal(SIGXFSZ, SIG_DFL);
  REQUIRE(unsaved.size() == 1);
  CHECK(unsaved[0].find(dir.string()) != std::string::npos);
  CHECK(unsaved[0].find("checkpoint: ") != std::string::npos);
  CHECK(unsaved[0].find("kept: metrics.csv") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "checkpoint" / "state.json"));
  const RunDirectory run = read_run_directory(dir.string());
  CHECK(run.rows >= 2);  // the rows written while training stay
  REQUIRE(run.finished);
  CHECK(run.summary["interrupted_by"] == "window closed");
  REQUIRE(run.summary["save_errors"].is_array());
  CHECK(run.summary["save_errors"][0].get<std::string>().rfind("checkpoint: ", 0) == 0);
  fs::remove_all(root);
}

TEST_CASE("TrainerOptions::run_dir records the model exactly there, as the window's own run") {
  const fs::path root = test::temp_dir("gui-run-dir");
  auto c = test::tiny_config();
  c.train.steps = 30;
  TrainerOptions o = test::fast_options();
  o.run_dir = (root / "compare" / "run-1" / "model.attention=dot").string();
  {
    Trainer t(c, o);
    t.start();
    REQUIRE(wait_until([&] { return in_state(t, TrainerState::Finished); }, 120));
    CHECK(t.latest()->run_dir == o.run_dir);
    CHECK(t.latest()->record_error.empty());
    CHECK(t.close().empty());
  }
  const RunDirectory run = read_run_directory(o.run_dir);
  CHECK(run.rows == 3);  // a row per evaluation
  CHECK(run.has_checkpoint);
  REQUIRE(run.finished);
  CHECK_FALSE(run.summary.contains("interrupted"));
  CHECK(run.summary["steps"] == 30);
  fs::remove_all(root);
}
