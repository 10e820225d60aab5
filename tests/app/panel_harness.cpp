// The headless panel harness (issue 46, 10c): every panel of the window drawn in a real ImGui
// context with no display, no GL and no platform backend (tests/app/headless_imgui.h), through the
// window's own Workspace, menus, timeline and Export dialog, in each state of the window: nothing
// loaded, training live, paused, a run opened at a recorded step, a followed run being written, a
// run without recordings, and a live model of every mechanism (dot, ky, neural, the four kernels,
// conn, an image task). A seeded random input driver clicks, drags, turns the wheel, presses keys
// and types over what was drawn, thousands of frames per state; any failed ImGui assertion (a
// push/pop mismatch, a missing End, an ID stack error) stops the binary with the state, frame,
// seed, last inputs and the line that replays it.
// Environment: ATTN_PANEL_SEED (default 20261129; "random": a new one, printed), ATTN_PANEL_FRAMES
// (frames per state, default 2000; 4/5 of it for each mechanism), ATTN_PANEL_STATE (only the state
// of that name). GL: the harness links attnlab_render_null (render/gl/null/null_gl.cpp) instead of
// attnlab_render.
#include <doctest/doctest.h>
#include <imgui.h>
#include <imgui_internal.h>  // the hovered and active item ids, for coverage
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "app/gui/frame.h"
#include "app/gui/gui.h"
#include "app/gui/help/menus.h"
#include "app/gui/layout/workspace.h"
#include "app/gui/panel.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/timeline.h"
#include "app/gui/ui_state.h"
#include "app/gui/window/draw_guard.h"
#include "core/config/config.h"
#include "core/training/trainer.h"
#include "headless_imgui.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

constexpr float kWidth = 1280, kHeight = 800;  // the window's default size
constexpr std::chrono::milliseconds kMinFrame{2};

uint64_t harness_seed() {
  static const uint64_t seed = [] {
    const char* s = std::getenv("ATTN_PANEL_SEED");
    uint64_t v = 20261129;
    if (s && std::string(s) == "random")
      v = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
    else if (s && *s)
      v = std::strtoull(s, nullptr, 10);
    std::printf("panel harness: seed %llu (replay: ATTN_PANEL_SEED=%llu)\n",
                static_cast<unsigned long long>(v), static_cast<unsigned long long>(v));
    return v;
  }();
  return seed;
}

int frames_per_state() {
  const char* s = std::getenv("ATTN_PANEL_FRAMES");
  return s && *s ? std::max(1, std::atoi(s)) : 2000;
}

bool wanted(const std::string& state) {
  const char* s = std::getenv("ATTN_PANEL_STATE");
  return !s || !*s || state == s;
}

bool wait_until(const std::function<bool()>& pred, double seconds = 120) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

// One directory for the whole binary, the working directory too: whatever a panel writes (a
// typed export path, Save, Compare's runs) lands here. HOME and XDG_* point here as well.
const fs::path& harness_root() {
  // Never destroyed: the exit handler below removes it after every static has gone.
  static const fs::path* root = [] {
    auto* p =
        new fs::path(fs::temp_directory_path() / ("attnlab-panels-" + std::to_string(::getpid()) +
                                                  "-" + std::to_string(std::random_device{}())));
    fs::create_directories(*p);
    fs::current_path(*p);
    for (const char* var : {"HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"}) setenv(var, p->c_str(), 1);
    std::atexit([] {
      std::error_code ec;
      fs::current_path(fs::temp_directory_path(), ec);
      fs::remove_all(*root, ec);
    });
    return p;
  }();
  return *root;
}

// The panel table's names, in View-menu order (what gui --panel accepts).
std::vector<std::string> panel_names() {
  std::vector<std::string> out;
  for (const gui::PanelRow& row : gui::panel_table()) out.push_back(row.name);
  return out;
}

ExperimentConfig config_of(const std::string& json_text) {
  return parse_config(nlohmann::json::parse(json_text), "panel harness config");
}

// A tiny copy model: trains in well under a second, records its views every 10 steps.
std::string tiny(const std::string& model, int64_t steps, int record_every = 10,
                 const std::string& task = R"({"name": "copy", "length": 4, "vocab": 8})") {
  return R"({"name": "harness", "seed": 1, "threads": 1, "task": )" + task + R"(, "model": )" +
         model + R"(, "train": {"steps": )" + std::to_string(steps) +
         R"(, "batch_size": 8, "lr": 3e-3, "warmup": 5, "eval_every": 10, "eval_batches": 2,)" +
         R"( "record_every": )" + std::to_string(record_every) + "}}";
}

const char* const kDotModel = R"({"d_model": 16, "heads": 2, "layers": 2, "attention": "dot"})";

TrainerOptions trainer_options(const fs::path& runs_root) {
  TrainerOptions o;
  o.threads = 1;
  o.publish_interval_ms = 20;
  o.runs_root = runs_root.string();
  return o;
}

// A finished run recorded by the library the way the window records one; its directory.
std::string recorded_run(const std::string& name, int record_every) {
  const fs::path root = harness_root() / "recorded" / name;
  Trainer t(config_of(tiny(kDotModel, 60, record_every)), trainer_options(root));
  t.start();
  REQUIRE(wait_until([&] { return t.state() == TrainerState::Finished; }));
  const std::string dir = t.latest()->run_dir;
  REQUIRE(!dir.empty());
  REQUIRE(t.close().empty());
  return dir;
}

// What the window holds (gui_main.cpp's run_gui): a trainer, the shared UI state, the workspace
// of panels, the menus, the timeline and the Export dialog.
struct HarnessWindow {
  GuiOptions options;
  ExperimentConfig config;
  gui::UiState ui;
  std::unique_ptr<Trainer> trainer;
  std::unique_ptr<gui::Workspace> workspace;
  gui::Menus menus{false};
  gui::Timeline timeline;
  gui::ExportDialog export_dialog;
  float ui_scale = 1.0f;

  HarnessWindow(const ExperimentConfig& c, GuiOptions o) : options(std::move(o)), config(c) {
    options.runs_dir = (harness_root() / "runs").string();
    options.compare_out = (harness_root() / "compare").string();
    ui.pending = config;
    ui.lr_input = config.train.lr;
    ui.config_source = "panel harness";
    trainer = std::make_unique<Trainer>(config, trainer_options(options.runs_dir));
    const gui::PanelSetup setup{options, config};
    workspace = std::make_unique<gui::Workspace>(setup);
    workspace->load("", setup);
    if (options.start_step >= 0 && options.follow_runs.size() == 1) {
      ui.open_run_requests.push_back(options.follow_runs.front());
      timeline.start_at(options.follow_runs.front(), options.start_step);
    }
    if (!options.follow_runs.empty()) workspace->open("runs");
  }
  ~HarnessWindow() {
    // As the window closes: trainers stopped and their runs saved, then the panels'.
    std::vector<std::string> unsaved = trainer->close();
    for (std::string& line : workspace->close_panels()) unsaved.push_back(std::move(line));
    for (const std::string& line : unsaved) std::printf("panel harness: note: %s\n", line.c_str());
  }
};

// One frame, as run_gui draws it: one snapshot and state, the timeline updated from them, then
// the window's own frame content (gui/frame.h: the menu bar, the timeline bar, the workspace's
// panels, the menus' windows and the Export dialog). The View menu's UI scale is the window's too;
// the harness keeps its font atlas, built once.
void draw_frame(HarnessWindow& w, size_t frame, ImFont* small_font) {
  const std::shared_ptr<const Snapshot> live = w.trainer->latest();
  const TrainerState state = w.trainer->state();
  w.timeline.update(*live, w.ui, static_cast<double>(frame) / 60.0);
  ImGui::NewFrame();
  gui::FrameParts parts{*w.trainer, w.ui, *w.workspace, w.menus, w.timeline, w.export_dialog};
  const gui::FrameInput input{live, state, small_font, &w.ui_scale,
                              w.options.start_step >= 0 && frame == 0};
  gui::draw_frame(parts, input);
  ImGui::Render();
}

struct StateResult {
  size_t frames = 0;
  size_t vertices = 0;                   // drawn, over all frames
  std::set<ImGuiID> hovered, activated;  // items the input reached
  double seconds = 0;
  std::vector<std::string> panels_drawn;
};

// Draws `frames` frames of one state under random input. Every panel of the table is brought to
// the front in turn beside Run (gui --cycle's arrangement), then all of them at once in their
// default tiles; the input may then move, close and re-tile them as a user would.
StateResult drive(const std::string& name, HarnessWindow& w, test::HeadlessImGui& imgui,
                  int frames) {
  const uint64_t seed = harness_seed() ^ std::hash<std::string>{}(name);
  test::RandomInput input(seed);
  std::vector<std::string> names = panel_names();
  const size_t segments = names.size() + 1;
  const int per_segment = std::max(1, frames / static_cast<int>(segments));
  StateResult result;
  const auto start = std::chrono::steady_clock::now();
  for (int f = 0; f < frames; ++f) {
    const size_t segment = static_cast<size_t>(f / per_segment);
    if (f % per_segment == 0) {
      if (segment < names.size())
        w.workspace->show_only(names[segment] == "run"
                                   ? std::vector<std::string>{"run"}
                                   : std::vector<std::string>{"run", names[segment]});
      else
        w.workspace->show_only(names);
    }
    input.next_frame(ImGui::GetIO());
    test::set_assert_context(
        "state '" + name + "', frame " + std::to_string(f) + " of " + std::to_string(frames) +
        ", panel cycle at '" + (segment < names.size() ? names[segment] : "all") +
        "'; replay: ATTN_PANEL_SEED=" + std::to_string(harness_seed()) + " ATTN_PANEL_STATE='" +
        name + "' test_panels; its files are left in " + harness_root().string() +
        "\nlast inputs:\n" + input.recent());
    const auto frame_start = std::chrono::steady_clock::now();
    draw_frame(w, static_cast<size_t>(f), imgui.small_font());
    // The window's draw guard (gui/window/draw_guard.h) repairs a panel that throws or leaves
    // its stacks unbalanced and draws on; here any such repair is a failure, not a recovery.
    for (const gui::DrawFaultRecord& fault : gui::take_draw_faults())
      FAIL_CHECK("state '", name, "', frame ", f, ": the draw guard caught a fault in ",
                 fault.where, ": ", fault.what, " (replay: ATTN_PANEL_SEED=", harness_seed(),
                 " ATTN_PANEL_STATE='", name, "')");
    input.observe(ImGui::GetDrawData());
    result.vertices += static_cast<size_t>(ImGui::GetDrawData()->TotalVtxCount);
    if (GImGui->HoveredId) result.hovered.insert(GImGui->HoveredId);
    if (GImGui->ActiveId) result.activated.insert(GImGui->ActiveId);
    // At least kMinFrame per frame: the trainers publish and the Runs panel's watcher reads
    // while the input plays, as they would between a user's frames.
    std::this_thread::sleep_until(frame_start + kMinFrame);
    // Drawn in the segment's first frames (a new tab shows from its second; input may close it
    // later).
    if (f % per_segment < 3) {
      const nlohmann::json report = w.workspace->report();
      for (const auto& [panel, entry] : report["panels"].items())
        if (entry.value("drawn", false) &&
            std::find(result.panels_drawn.begin(), result.panels_drawn.end(), panel) ==
                result.panels_drawn.end())
          result.panels_drawn.push_back(panel);
    }
  }
  result.frames = static_cast<size_t>(frames);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  test::set_assert_context("");
  std::printf(
      "panel harness: state '%s': %zu frames in %.1f s, %zu panels drawn, %zu vertices a "
      "frame, %zu items hovered, %zu activated\n",
      name.c_str(), result.frames, result.seconds, result.panels_drawn.size(),
      result.vertices / std::max<size_t>(1, result.frames), result.hovered.size(),
      result.activated.size());
  std::fflush(stdout);
  return result;
}

// The Runs panel's entry for `dir` in the workspace's report, or null.
nlohmann::json runs_entry(const HarnessWindow& w, const std::string& dir) {
  const nlohmann::json report = w.workspace->report();
  if (report.contains("runs"))
    for (const nlohmann::json& e : report["runs"])
      if (e.value("path", "") == dir) return e;
  return nullptr;
}

using Ready = std::function<bool(HarnessWindow&)>;

// Runs one state: a fresh ImGui context and window; frames without input until `ready` holds
// (an opened run loaded, a followed run read: the state itself), then `frames` frames under
// random input. Checks every panel was drawn.
void run_state(const std::string& name, const std::function<std::unique_ptr<HarnessWindow>()>& make,
               const Ready& ready = nullptr, int frames = frames_per_state()) {
  if (!wanted(name)) return;
  harness_root();
  test::HeadlessImGui imgui(kWidth, kHeight);
  std::unique_ptr<HarnessWindow> w = make();
  if (ready) {
    size_t f = 0;
    const bool reached = wait_until([&] {
      draw_frame(*w, f++, imgui.small_font());
      return ready(*w);
    });
    INFO("state '", name, "' not reached: ", w->workspace->report().dump());
    REQUIRE(reached);
  }
  const StateResult r = drive(name, *w, imgui, frames);
  CHECK(r.panels_drawn.size() == panel_names().size());
  w.reset();  // panels go before the ImGui context
}

std::unique_ptr<HarnessWindow> live_window(const std::string& config_json, bool start) {
  auto w = std::make_unique<HarnessWindow>(config_of(config_json), GuiOptions{});
  if (start) {
    w->trainer->start();
    REQUIRE(wait_until([&] { return w->trainer->latest()->step >= 3; }));
  }
  return w;
}

// Draws a Timeline-like bar with a "Latest" button under random input for up to 5000 frames;
// with `buggy`, the colour is pushed when the flag was set before the click but popped when it is
// set after (the Timeline's old bug). Returns the failed assertion ("" if none) and the frames.
std::pair<std::string, int> draw_latest_button(bool buggy) {
  test::HeadlessImGui imgui(640, 480);
  test::RandomInput input(harness_seed());
  test::AssertTrap trap;
  static int frames;  // static: survives the jump back (no register copy to clobber)
  static bool latest;
  frames = 0;
  latest = false;
  if (sigsetjmp(trap.env, 0) == 0) {
    trap.arm();
    for (; frames < 5000; ++frames) {
      input.next_frame(ImGui::GetIO());
      ImGui::NewFrame();
      ImGui::SetNextWindowPos(ImVec2(0, 0));
      ImGui::SetNextWindowSize(ImVec2(640, 480));
      ImGui::Begin("timeline");
      ImGui::TextUnformatted("step 100 of 200");
      const bool before = latest;
      if (before) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(1, 0, 0, 1));
      if (ImGui::SmallButton("Latest")) latest = !latest;
      if (buggy ? latest : before) ImGui::PopStyleColor();
      ImGui::End();
      ImGui::Render();
      input.observe(ImGui::GetDrawData());
    }
    trap.disarm();
  }
  if (!trap.message.empty()) imgui.abandon();  // mid-frame: never used again
  return {trap.message, frames};
}

}  // namespace

// The check is live: the Timeline's old "Latest" bug under the harness's random input is caught
// as a failed ImGui assertion within a few thousand frames; the same button done right is not.
TEST_CASE("the harness catches a push/pop mismatch that only a click reveals") {
  const auto [caught, frames] = draw_latest_button(true);
  MESSAGE("caught after ", frames, " frames: ", caught);
  // ImGui 1.86 fails in PopStyleColor (the colour stack's back() on an empty stack) or, when the
  // click went the other way, at End() ("PushStyleColor/PopStyleColor Mismatch!").
  CHECK((caught.find("ColorMod") != std::string::npos ||
         caught.find("StyleColor") != std::string::npos));
  const auto [clean, all_frames] = draw_latest_button(false);
  CHECK(clean == "");
  CHECK(all_frames == 5000);
}

TEST_CASE("panels: nothing loaded") {
  run_state("empty", [] { return live_window(tiny(kDotModel, 100000), false); });
}

TEST_CASE("panels: training live") {
  run_state("training", [] { return live_window(tiny(kDotModel, 100000), true); });
}

TEST_CASE("panels: paused") {
  run_state("paused", [] {
    auto w = live_window(tiny(kDotModel, 100000), true);
    REQUIRE(wait_until([&] { return w->trainer->latest()->step >= 20; }));
    w->trainer->pause();
    REQUIRE(wait_until([&] { return w->trainer->state() == TrainerState::Paused; }));
    return w;
  });
}

TEST_CASE("panels: a run opened at a recorded step") {
  if (!wanted("opened")) return;
  const std::string dir = recorded_run("opened", 10);
  run_state(
      "opened",
      [&] {
        GuiOptions o;
        o.follow_runs = {dir};
        o.start_step = 30;
        return std::make_unique<HarnessWindow>(config_of(tiny(kDotModel, 60)), o);
      },
      [&](HarnessWindow& w) {  // loaded, and the timeline at step 30 (not Latest)
        const nlohmann::json e = runs_entry(w, dir);
        return !e.is_null() && e.value("open", "") == "loaded" && !w.timeline.latest() &&
               w.timeline.step() == 30;
      });
}

TEST_CASE("panels: a followed run being written") {
  if (!wanted("followed")) return;
  // Another trainer writes the run while the window follows it (gui --run DIR).
  Trainer writer(config_of(tiny(kDotModel, 100000)),
                 trainer_options(harness_root() / "recorded" / "followed"));
  writer.start();
  REQUIRE(wait_until([&] { return !writer.latest()->run_dir.empty(); }));
  const std::string dir = writer.latest()->run_dir;
  run_state(
      "followed",
      [&] {
        GuiOptions o;
        o.follow_runs = {dir};
        return std::make_unique<HarnessWindow>(config_of(tiny(kDotModel, 100000)), o);
      },
      [&](HarnessWindow& w) {  // listed, with the rows written so far
        const nlohmann::json e = runs_entry(w, dir);
        return !e.is_null() && e.value("metric_rows", 0) > 0;
      });
  writer.close();
}

TEST_CASE("panels: a run without recordings") {
  if (!wanted("no-recordings")) return;
  const std::string dir = recorded_run("no-recordings", 0);
  run_state(
      "no-recordings",
      [&] {
        GuiOptions o;
        o.follow_runs = {dir};
        o.start_step = 0;
        return std::make_unique<HarnessWindow>(config_of(tiny(kDotModel, 60)), o);
      },
      [&](HarnessWindow& w) {
        const nlohmann::json e = runs_entry(w, dir);
        return !e.is_null() && e.value("open", "") == "loaded";
      });
}

// Every mechanism's model trained live, so each mechanism's own panel (Connections and the KY lab,
// Neural, Connection Transformer, Image attention; Attention and Heads for the others) has data.
TEST_CASE("panels: every mechanism") {
  struct Mechanism {
    const char* state;
    std::string config;
  };
  const int frames = std::max(1, frames_per_state() * 4 / 5);
  const std::vector<Mechanism> mechanisms = {
      {"ky", tiny(R"({"d_model": 16, "heads": 2, "layers": 2, "attention": "ky"})", 100000)},
      {"neural",
       tiny(R"({"d_model": 16, "heads": 2, "layers": 2, "attention": "neural"})", 100000)},
      {"kernels", tiny(R"({"d_model": 16, "heads": 2, "layers": 4, "attention":
                          ["pseudo", "semi-fusion", "gaussian", "linear-sim"]})",
                       100000)},
      {"conn", tiny(R"({"architecture": "conn", "d_model": 16, "heads": 1,
                        "conn": {"slots": 8, "steps": 2}})",
                    100000, 10, R"({"name": "recall", "length": 4, "vocab": 8})")},
  };
  for (const Mechanism& m : mechanisms) {
    CAPTURE(m.state);
    run_state(
        m.state, [&] { return live_window(m.config, true); }, nullptr, frames);
  }
  const fs::path data = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(data / "t10k-labels-idx1-ubyte.gz")) {
    MESSAGE("image task skipped: ", data.string(), " is missing (dataset-fashion-mnist)");
    return;
  }
  run_state(
      "image",
      [] {
        return live_window(tiny(R"({"d_model": 16, "heads": 2, "layers": 1, "attention": "gaussian",
                     "head": "classifier"})",
                                100000, 10,
                                R"({"name": "fashion-mnist", "patch": 7, "train_examples": 300,
                     "test_examples": 50})"),
                           true);
      },
      nullptr, frames);
}
