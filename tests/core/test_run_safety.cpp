// Run directories that never lose or mix data (core/training/headless/headless.h, core/runs/directory/run_lock.h,
// core/base/file_io.h, core/base/atomic_file.h): each finding of the reliability attack that a
// library call can reproduce.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/interrupt.h"
#include "core/runs/directory/run_dir.h"
#include "core/runs/directory/run_lock.h"
#include "core/training/headless/headless.h"
#include "core/training/headless/sweep.h"
#include "helpers.h"

namespace fs = std::filesystem;
using namespace attn;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// Every line of metrics.csv after the header has the header's six fields, and the file ends
// with a newline: no mangled or cut row.
void check_metrics_whole(const fs::path& p) {
  const std::string text = slurp(p);
  REQUIRE(!text.empty());
  CHECK(text.back() == '\n');
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) CHECK(std::count(line.begin(), line.end(), ',') == 5);
}

nlohmann::json summary_of(const fs::path& dir) {
  return nlohmann::json::parse(slurp(dir / "summary.json"));
}

HeadlessOptions into(const std::string& dir) {
  HeadlessOptions o;
  o.out_dir = dir;
  o.threads = 1;
  return o;
}

}  // namespace

TEST_CASE("read_regular_file refuses directories, FIFOs and oversized files, without hanging") {
  const fs::path dir = test::temp_dir("read-regular");
  spit(dir / "a.txt", "hello\n");
  CHECK(read_regular_file((dir / "a.txt").string()) == "hello\n");
  CHECK(regular_file_or_absent((dir / "a.txt").string()));
  CHECK_FALSE(regular_file_or_absent((dir / "missing").string()));
  CHECK_THROWS_WITH_AS(read_regular_file(dir.string()), doctest::Contains("is a directory"), Error);
  REQUIRE(::mkfifo((dir / "pipe").c_str(), 0644) == 0);
  // Opened blocking, a FIFO with no writer would hang this test forever.
  CHECK_THROWS_WITH_AS(read_regular_file((dir / "pipe").string()), doctest::Contains("FIFO"),
                       Error);
  CHECK_THROWS_WITH_AS(regular_file_or_absent((dir / "pipe").string()), doctest::Contains("FIFO"),
                       Error);
  spit(dir / "big", std::string(3 << 20, 'x'));
  CHECK_THROWS_WITH_AS(read_regular_file((dir / "big").string(), 1 << 20),
                       doctest::Contains("at most 1 MiB"), Error);
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomic replaces only regular files: a FIFO, a link or a device stays") {
  const fs::path dir = test::temp_dir("write-regular");
  REQUIRE(::mkfifo((dir / "pipe").c_str(), 0644) == 0);
  CHECK_THROWS_WITH_AS(write_file_atomic((dir / "pipe").string(), "x"), doctest::Contains("FIFO"),
                       Error);
  CHECK(fs::is_fifo(dir / "pipe"));
  spit(dir / "target", "keep");
  fs::create_symlink(dir / "target", dir / "link");
  CHECK_THROWS_WITH_AS(write_files_atomic({{(dir / "link").string(), "x"}}),
                       doctest::Contains("symbolic link"), Error);
  CHECK(fs::is_symlink(dir / "link"));
  CHECK(slurp(dir / "target") == "keep");
  // A device node made here (never in /dev); mknod needs CAP_MKNOD, which CI's root has.
  if (::mknod((dir / "null").c_str(), S_IFCHR | 0644, makedev(1, 3)) == 0) {
    CHECK_THROWS_WITH_AS(write_file_atomic((dir / "null").string(), "x"),
                         doctest::Contains("a device"), Error);
    struct stat st {};
    REQUIRE(::lstat((dir / "null").c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  } else {
    MESSAGE("mknod not permitted here: the device case is covered by tests/e2e/run_safety.sh");
  }
  fs::remove_all(dir);
}

TEST_CASE("a run directory has one writer: a second lock is refused naming the holder") {
  const fs::path dir = test::temp_dir("lock");
  {
    RunDirLock first(dir.string(), "attnlab train test", false);
    CHECK(run_lock_holder(dir.string()).find("pid " + std::to_string(::getpid())) == 0);
    // flock is per open file: a second open in this process conflicts like another process.
    const std::string expected =
        "is being written by pid " + std::to_string(::getpid()) + ": attnlab train test";
    CHECK_THROWS_WITH_AS(RunDirLock(dir.string(), "second", false),
                         doctest::Contains(expected.c_str()), Error);
  }
  CHECK(run_lock_holder(dir.string()).empty());
  RunDirLock again(dir.string(), "again", false);  // released with the first
  fs::remove_all(dir);
}

TEST_CASE("--out onto another run is refused; --force replaces that run, and only its files") {
  const fs::path dir = test::temp_dir("out-policy");
  const fs::path run = dir / "run";
  ExperimentConfig c = test::tiny_config();
  c.train.steps = 20;
  train_headless(c, into(run.string()));
  const std::string old_hash = summary_of(run)["config_hash"];
  ExperimentConfig other = c;
  other.model.attention.assign(2, "ky");
  CHECK_THROWS_WITH_AS(train_headless(other, into(run.string())),
                       doctest::Contains("already holds an attnlab run"), Error);
  CHECK(summary_of(run)["config_hash"] == old_hash);  // untouched
  HeadlessOptions force = into(run.string());
  force.force = true;
  spit(run / "notes.txt", "the user's, beside the run");
  train_headless(other, force);
  CHECK(summary_of(run)["config_hash"] != old_hash);
  CHECK(summary_of(run)["mechanism"] == "ky");
  CHECK(slurp(run / "notes.txt") == "the user's, beside the run");  // not the run's: kept
  fs::remove_all(dir);
}

TEST_CASE("a stop signal checkpoints, marks the summary interrupted, and resume is bit-exact") {
  const fs::path dir = test::temp_dir("interrupt");
  ExperimentConfig c = test::tiny_config();
  c.train.steps = 40;
  install_stop_signals();
  HeadlessOptions o = into((dir / "cut").string());
  o.log = [](const std::string& line) {
    if (line.rfind("step 20/", 0) == 0) std::raise(SIGTERM);
  };
  int caught = 0;
  try {
    train_headless(c, o);
  } catch (const Interrupted& i) {
    caught = i.signal;
  }
  clear_stop_signal();
  CHECK(caught == SIGTERM);
  const auto cut = summary_of(dir / "cut");
  CHECK(cut["interrupted"] == true);
  CHECK(cut["interrupted_by"] == "SIGTERM");
  CHECK(cut["steps"] == 20);
  CHECK(cell_state((dir).string(), SweepCell{0, "", "", "cut", 0, {}, c}) == CellState::Partial);

  HeadlessOptions resume = into((dir / "cut").string());
  resume.resume_dir = resume.out_dir;
  train_headless(c, resume);
  train_headless(c, into((dir / "straight").string()));
  const auto a = read_run_directory((dir / "cut").string());
  const auto b = read_run_directory((dir / "straight").string());
  CHECK(a.summary.value("interrupted", false) == false);
  CHECK(a.summary["final_train_loss"] == b.summary["final_train_loss"]);
  CHECK(a.eval_loss.values == b.eval_loss.values);
  CHECK(a.train_loss.steps == b.train_loss.steps);
  fs::remove_all(dir);
}

TEST_CASE("a finished checkpoint without its summary is completed by resume, not refused") {
  const fs::path dir = test::temp_dir("complete");
  ExperimentConfig c = test::tiny_config();
  c.train.steps = 20;
  const fs::path run = dir / "run";
  train_headless(c, into(run.string()));
  const auto before = summary_of(run);
  HeadlessOptions resume = into(run.string());
  resume.resume_dir = run.string();
  CHECK_THROWS_WITH_AS(train_headless(c, resume), doctest::Contains("already finished"), Error);
  fs::remove(run / "summary.json");  // as if killed between the checkpoint and the summary
  train_headless(c, resume);
  const auto after = summary_of(run);
  CHECK(after["steps"] == 20);
  CHECK(after["final_train_loss"] == before["final_train_loss"]);
  CHECK(after["eval_loss"] == before["eval_loss"]);
  check_metrics_whole(run / "metrics.csv");
  fs::remove_all(dir);
}

TEST_CASE("extending a finished run drops its summary first; resume A --out B keeps A's rows") {
  const fs::path dir = test::temp_dir("extend");
  ExperimentConfig c = test::tiny_config();
  c.train.steps = 20;
  const fs::path a = dir / "a", b = dir / "b";
  train_headless(c, into(a.string()));
  // A crash while extending (here: an exception from the progress callback after one eval).
  HeadlessOptions extend = into(a.string());
  extend.resume_dir = a.string();
  extend.steps = 40;
  extend.log = [](const std::string& line) {
    if (line.rfind("step 30/", 0) == 0) throw std::runtime_error("simulated crash");
  };
  CHECK_THROWS_AS(train_headless(c, extend), std::runtime_error);
  CHECK_FALSE(fs::exists(a / "summary.json"));  // no old summary beside newer files

  HeadlessOptions other = into(b.string());
  other.resume_dir = a.string();
  other.steps = 40;
  train_headless(c, other);
  const auto rb = read_run_directory(b.string());
  REQUIRE(!rb.eval_loss.steps.empty());
  CHECK(rb.eval_loss.steps.front() == 10);  // A's rows, then B's own
  CHECK(rb.eval_loss.steps.back() == 40);
  CHECK(rb.eval_loss.steps.size() == 4);
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint copied from a run of another model is refused on resume") {
  const fs::path dir = test::temp_dir("foreign-checkpoint");
  ExperimentConfig dot = test::tiny_config();
  dot.train.steps = 10;
  ExperimentConfig ky = dot;
  ky.model.attention.assign(2, "ky");
  train_headless(dot, into((dir / "dot").string()));
  train_headless(ky, into((dir / "ky").string()));
  fs::remove_all(dir / "dot" / "checkpoint");
  fs::copy(dir / "ky" / "checkpoint", dir / "dot" / "checkpoint", fs::copy_options::recursive);
  HeadlessOptions resume = into((dir / "dot").string());
  resume.resume_dir = resume.out_dir;
  resume.steps = 20;
  CHECK_THROWS_WITH_AS(train_headless(dot, resume), doctest::Contains("holds another model"),
                       Error);
  fs::remove_all(dir);
}

TEST_CASE("a failed metrics write stops the run with an error and leaves no mangled row") {
  const fs::path dir = test::temp_dir("metrics-full");
  ExperimentConfig c = test::tiny_config();
  c.train.steps = 200;
  // RLIMIT_FSIZE makes writes past the limit fail (EFBIG), as a full disk does (ENOSPC).
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  HeadlessOptions o = into((dir / "run").string());
  bool limited = false;
  o.log = [&](const std::string& line) {
    if (!limited && line.rfind("step 50/", 0) == 0) {
      rlimit low = old;
      low.rlim_cur = fs::file_size(dir / "run" / "metrics.csv") + 40;  // less than two rows
      REQUIRE(::setrlimit(RLIMIT_FSIZE, &low) == 0);
      limited = true;
    }
  };
  std::string message;
  try {
    train_headless(c, o);
  } catch (const Error& e) {
    message = e.what();
  }
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &old) == 0);
  std::signal(SIGXFSZ, SIG_DFL);
  CHECK(message.find("cannot append to") != std::string::npos);
  CHECK(message.find("metrics.csv") != std::string::npos);
  CHECK(message.find("checkpoint") != std::string::npos);  // says whether it was saved
  CHECK_FALSE(fs::exists(dir / "run" / "summary.json"));   // not reported as done
  check_metrics_whole(dir / "run" / "metrics.csv");
  fs::remove_all(dir);
}

TEST_CASE("a sweep cell with a damaged or interrupted summary is not done") {
  const fs::path dir = test::temp_dir("cell-state");
  ExperimentConfig c = test::tiny_config();
  const SweepCell cell{0, "", "", "cell", 0, {}, c};
  fs::create_directories(dir / "cell");
  spit(dir / "cell" / "summary.json", "{garbage");
  CHECK(cell_state(dir.string(), cell) != CellState::Done);
  spit(dir / "cell" / "summary.json", R"({"steps": 50, "interrupted": true})");
  CHECK(cell_state(dir.string(), cell) != CellState::Done);
  spit(dir / "cell" / "summary.json", R"({"steps": 50})");
  CHECK(cell_state(dir.string(), cell) == CellState::Done);
  fs::remove_all(dir);
}

TEST_CASE("metrics.csv: a last line without its newline is not read as data") {
  RunDirectory run;
  parse_metrics_csv(
      "step,train_loss,eval_loss,eval_accuracy,lr,steps_per_s\n10,2.5,2.4,0.1,,\n20,2.3,2.", "m",
      run);
  CHECK(run.train_loss.steps == std::vector<int64_t>{10});
  CHECK(run.eval_loss.values == std::vector<float>{2.4f});
}
