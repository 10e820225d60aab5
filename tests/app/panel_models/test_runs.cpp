// The Runs panel's model (app/panels/runs/runs_model.h) without a window, on a temporary runs
// directory written by hand: what it lists, how ticking runs changes the overlay, Add's refusal
// of a file, and the Open outcome read from the trainer's snapshot.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "app/panels/runs/runs_model.h"
#include "test_panel_helpers.h"

using namespace attn;
using attn::gui::RunsModel;

namespace {

// Updates the model (as the window does every frame) until `done` or 20 s; false on timeout.
template <class Pred>
bool update_until(RunsModel& m, const Snapshot& snap, gui::UiState& ui, Pred done) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const double now =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.update(snap, ui, now);
    if (done()) return true;
    if (now > 20) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int index_of(const RunsModel& m, const std::string& label) {
  for (size_t i = 0; i < m.size(); ++i)
    if (m.label(i) == label) return static_cast<int>(i);
  return -1;
}

bool all_read(const RunsModel& m, size_t n) {
  if (m.size() != n) return false;
  for (size_t i = 0; i < m.size(); ++i)
    if (!m.run(i).readable) return false;
  return true;
}

std::vector<std::string> eval_lines(const fig::Figure& f) {
  const fig::Panel* eval = test::find_panel(f, "eval loss");
  return eval ? test::line_names(*eval) : std::vector<std::string>{};
}

}  // namespace

TEST_CASE("runs model: lists the runs root, and ticks choose the overlaid curves") {
  test::ScopedTempDir root("runs");
  test::write_saved_run(root.path / "a", test::small_config("dot", 1),
                        {{10, 2.0, 2.5, 0.25}, {20, 1.0, 1.5, 0.5}});
  test::write_saved_run(root.path / "sweep" / "b", test::small_config("ky", 1),
                        {{10, 2.0, 2.25, 0.125}, {20, 1.5, 2.0, 0.375}, {30, 1.25, 1.75, 0.5}});
  RunsModel m(root.path.string());
  Snapshot snap;
  gui::UiState ui;
  REQUIRE(update_until(m, snap, ui, [&] { return all_read(m, 2); }));
  const int a = index_of(m, "a"), b = index_of(m, "sweep/b");
  REQUIRE(a >= 0);
  REQUIRE(b >= 0);
  CHECK(m.run(a).rows == 2);
  CHECK(m.run(b).last_step == 30);
  CHECK(m.run(b).run->mechanism() == "ky");
  CHECK_FALSE(m.can_open(a));  // no checkpoint
  m.update(snap, ui, 60);      // File > Recent runs, refreshed every half second
  CHECK(ui.recent_runs.size() == 2);

  // Nothing ticked: nothing overlaid.
  CHECK_FALSE(m.any_overlaid());
  CHECK(m.color_indices() == std::vector<int>{-1, -1});

  m.selected(b) = true;
  REQUIRE(m.any_overlaid());
  CHECK(eval_lines(m.overlay()) == std::vector<std::string>{"sweep/b"});
  const uint64_t serial = m.overlay_serial();
  m.overlay();
  CHECK(m.overlay_serial() == serial);  // unchanged ticks: the same figure

  m.selected(a) = true;
  const fig::Figure& both = m.overlay();
  CHECK(m.overlay_serial() == serial + 1);
  CHECK(eval_lines(both).size() == 2);
  const fig::LineSeries* line_a = test::find_line(*test::find_panel(both, "eval loss"), "a");
  REQUIRE(line_a);
  CHECK(line_a->y == std::vector<double>{2.5, 1.5});
  std::vector<int> colors = m.color_indices();
  CHECK(colors[static_cast<size_t>(a)] >= 0);
  CHECK(colors[static_cast<size_t>(b)] >= 0);
  CHECK(colors[static_cast<size_t>(a)] != colors[static_cast<size_t>(b)]);

  const nlohmann::json r = m.report();
  REQUIRE(r.size() == 2);
  CHECK(r[a]["selected"] == true);
  CHECK(r[b]["metric_rows"] == 3);
}

TEST_CASE("runs model: Add takes a folder of runs ticked, refuses a file, follows an empty one") {
  test::ScopedTempDir root("runs-root"), other("runs-other");
  test::write_saved_run(other.path / "c", test::small_config("dot", 3), {{10, 2.0, 2.5, 0.25}});
  RunsModel m(root.path.string());
  Snapshot snap;
  gui::UiState ui;

  const std::string file = (other.path / "c" / "metrics.csv").string();
  CHECK_FALSE(m.add_dir(file, true));
  CHECK(m.error().find(file) != std::string::npos);
  CHECK(m.size() == 0);
  CHECK_FALSE(m.add_dir("", true));

  REQUIRE(m.add_dir(other.path.string(), /*select=*/true));
  CHECK(m.error().empty());
  REQUIRE(update_until(m, snap, ui, [&] { return all_read(m, 1); }));
  CHECK(m.selected(0));
  CHECK(eval_lines(m.overlay()) == std::vector<std::string>{m.label(0)});

  // A folder with no run yet: listed (unreadable) and followed; its run replaces it once
  // written, and takes its tick.
  const auto later = root.path / "later";
  std::filesystem::create_directories(later);
  REQUIRE(m.add_dir(later.string(), /*select=*/true));
  CHECK(m.note().find("holds no run yet") != std::string::npos);
  CHECK(m.size() == 2);
  test::write_saved_run(later / "d", test::small_config("dot", 4), {{10, 2.0, 2.5, 0.25}});
  m.rescan();
  REQUIRE(update_until(m, snap, ui, [&] { return all_read(m, 2); }));
  const int d = index_of(m, "later/d");
  REQUIRE(d >= 0);
  CHECK(m.selected(d));
}

TEST_CASE("runs model: Open asks for the checkpoint and reads the outcome from the snapshot") {
  test::ScopedTempDir root("runs-open");
  const auto dir = root.path / "e";
  test::write_saved_run(dir, test::small_config("dot", 1), {{10, 2.0, 2.5, 0.25}});
  std::filesystem::create_directories(dir / "checkpoint");
  std::ofstream(dir / "checkpoint" / "state.json") << "{}\n";
  RunsModel m(root.path.string());
  Snapshot snap;
  snap.serial = 1;
  gui::UiState ui;
  REQUIRE(update_until(m, snap, ui, [&] { return all_read(m, 1); }));
  REQUIRE(m.can_open(0));
  const std::string checkpoint = (dir / "checkpoint").string();
  CHECK(m.open(0, snap) == checkpoint);
  CHECK(m.report()[0]["open"] == "loading");
  m.update(snap, ui, 100);  // the same snapshot: still loading
  CHECK(m.report()[0]["open"] == "loading");

  Snapshot failed = snap;
  failed.serial = 2;
  failed.message = "load failed: " + checkpoint + "/state.json: bad";
  m.update(failed, ui, 101);
  CHECK(m.report()[0]["open"] == "failed");
  CHECK(m.error().find(checkpoint) != std::string::npos);

  REQUIRE(m.open(0, failed) == checkpoint);
  Snapshot loaded = failed;
  loaded.serial = 3;
  loaded.message = "loaded checkpoint " + checkpoint;
  m.update(loaded, ui, 102);
  CHECK(m.report()[0]["open"] == "loaded");
  CHECK(m.note().find("is loaded") != std::string::npos);

  // The window's own run is never opened over itself.
  Snapshot own = loaded;
  own.run_dir = dir.string();
  m.update(own, ui, 103);
  CHECK(m.own(0));
  CHECK_FALSE(m.can_open(0));
  CHECK(m.open(0, own).empty());
}
