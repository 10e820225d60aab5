// Following a run directory cheaply (core/runs/directory/run_list.h): metrics.csv is read by its appended
// bytes, whole again only when it shrank, was replaced or its steps do not follow; a deleted
// directory is marked; RunWatcher publishes what it read from its own thread.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "core/runs/directory/run_dir.h"
#include "core/runs/directory/run_list.h"
#include "core/runs/directory/run_writer.h"
#include "helpers.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

void append_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::app);
  out << text;
}

std::string rows(int from, int to) {
  std::string out;
  for (int s = from; s <= to; ++s)
    out += std::to_string(s) + "," + std::to_string(1.0 / s) + "," +
           (s % 2 == 0 ? std::to_string(2.0 / s) : std::string()) + ",,0.001,\n";
  return out;
}

void same_series(const RunDirectory& a, const RunDirectory& b) {
  CHECK(a.rows == b.rows);
  CHECK(a.train_loss.steps == b.train_loss.steps);
  CHECK(a.train_loss.values == b.train_loss.values);
  CHECK(a.eval_loss.steps == b.eval_loss.steps);
  CHECK(a.eval_loss.values == b.eval_loss.values);
  CHECK(a.learning_rate.values == b.learning_rate.values);
}

}  // namespace

TEST_CASE("FollowedRun parses only the rows appended since its last read") {
  const fs::path dir = test::temp_dir("follow-append");
  write_run_config(dir.string(), test::tiny_config());
  const fs::path csv = dir / "metrics.csv";
  { std::ofstream(csv) << kMetricsHeader << "\n" << rows(1, 1000); }
  FollowedRun f(dir.string());
  REQUIRE(f.refresh());
  CHECK(f.metric_rows() == 1000);
  CHECK(f.whole_reads() == 1);
  for (int k = 0; k < 5; ++k) {
    append_text(csv, rows(1001 + 10 * k, 1010 + 10 * k));
    CHECK(f.refresh());
  }
  append_text(csv, "1051,0.5,");  // half a row: not data yet
  CHECK(!f.refresh());
  append_text(csv, ",,0.001,\n");
  CHECK(f.refresh());
  CHECK(f.metric_rows() == 1051);
  CHECK(f.whole_reads() == 1);  // never parsed whole again
  CHECK(f.appended_reads() == 6);
  same_series(f.run(), read_run_directory(dir.string()));
  CHECK(f.shared_run()->rows == 1051);

  // Shrunk (rewritten shorter): parsed whole again.
  { std::ofstream(csv) << kMetricsHeader << "\n" << rows(1, 10); }
  CHECK(f.refresh());
  CHECK(f.metric_rows() == 10);
  CHECK(f.whole_reads() == 2);
  // Replaced by another file of the same or larger size (a new inode): whole again.
  { std::ofstream(dir / "m.tmp") << kMetricsHeader << "\n" << rows(101, 130); }
  fs::rename(dir / "m.tmp", csv);
  CHECK(f.refresh());
  CHECK(f.metric_rows() == 30);
  CHECK(f.last_step() == 130);
  CHECK(f.whole_reads() == 3);
  // Appended rows whose steps go back: the file is parsed whole, parse_metrics_csv refuses it
  // naming the line, and the last good reading stays.
  append_text(csv, rows(5, 6));
  f.refresh();
  CHECK(f.appended_reads() == 6);
  CHECK(f.error().find("goes back") != std::string::npos);
  CHECK(f.metric_rows() == 30);
  fs::remove_all(dir);
}

TEST_CASE("a followed directory that is deleted is marked, its last reading kept") {
  const fs::path dir = test::temp_dir("follow-deleted");
  write_run_config(dir.string(), test::tiny_config());
  { std::ofstream(dir / "metrics.csv") << kMetricsHeader << "\n" << rows(1, 7); }
  FollowedRun f(dir.string());
  REQUIRE(f.refresh());
  const uint64_t version = f.version();
  fs::remove_all(dir);
  CHECK(f.refresh());  // news: it is gone
  CHECK(f.gone());
  CHECK(f.state() == "deleted");
  CHECK(f.readable());
  CHECK(f.metric_rows() == 7);
  CHECK(f.error().find("gone") != std::string::npos);
  CHECK(f.error().find(dir.string()) != std::string::npos);
  CHECK(f.version() == version + 1);
  CHECK(!f.refresh());  // said once
  // It comes back: read again.
  fs::create_directories(dir);
  write_run_config(dir.string(), test::tiny_config());
  { std::ofstream(dir / "metrics.csv") << kMetricsHeader << "\n" << rows(1, 3); }
  CHECK(f.refresh());
  CHECK(!f.gone());
  CHECK(f.metric_rows() == 3);
  CHECK(f.error().empty());
  fs::remove_all(dir);
}

TEST_CASE("RunWatcher publishes the runs under a root from its own thread") {
  const fs::path root = test::temp_dir("watcher");
  for (const char* name : {"a", "b"}) {
    write_run_config((root / name).string(), test::tiny_config());
    std::ofstream(root / name / "metrics.csv") << kMetricsHeader << "\n" << rows(1, 4);
  }
  RunWatcher w(0.05, 0.05);
  w.add_root(root.string());
  auto views = [&] { return w.latest(); };
  REQUIRE(test::wait_until([&] {
    const auto v = views();
    return v->size() == 2 && (*v)[0].readable && (*v)[1].readable;
  }));
  CHECK((*views())[0].rows == 4);
  append_text(root / "a" / "metrics.csv", rows(5, 6));
  REQUIRE(test::wait_until([&] { return (*views())[0].rows == 6; }));
  fs::remove_all(root / "b");
  REQUIRE(test::wait_until([&] { return (*views())[1].gone; }));
  CHECK((*views())[1].state == "deleted");
  CHECK((*views())[1].run->rows == 4);
  fs::remove_all(root);
}

TEST_CASE("RunWatcher: follow and unfollow take effect in the order they were asked") {
  const fs::path dir = test::temp_dir("watcher-order");
  write_run_config(dir.string(), test::tiny_config());
  std::ofstream(dir / "metrics.csv") << kMetricsHeader << "\n" << rows(1, 4);
  // A long refresh period: only the requests themselves wake the thread.
  RunWatcher w(30.0, 30.0);
  auto followed = [&] {
    const auto v = w.latest();
    return v->size() == 1 && (*v)[0].dir == dir.string() && (*v)[0].rows == 4;
  };
  w.follow(dir.string());
  REQUIRE(test::wait_until(followed));
  const uint64_t serial = w.serial();
  // Dropped and added again before the thread runs: followed at the end, not dropped.
  w.unfollow(dir.string());
  w.follow(dir.string());
  REQUIRE(test::wait_until([&] { return w.serial() > serial; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both requests handled
  CHECK(followed());
  // An unfollow alone wakes the thread and empties the list.
  w.unfollow(dir.string());
  REQUIRE(test::wait_until([&] { return w.latest()->empty(); }));
  fs::remove_all(dir);
}
