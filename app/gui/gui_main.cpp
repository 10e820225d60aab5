// run_gui(): the window's frame loop. Loads the experiment, starts the trainer thread, and per
// frame takes one snapshot and draws the frame's content (gui/frame.h: the menu bar, the
// workspace's panels of gui/panel.h's table in tiles and the Export dialog, the same code the
// headless panel harness draws); never waits for the trainer. Frames are drawn when the snapshot
// or the input changed, at most at 60 Hz (gui/window/frame_pacer.h). Test hooks (exit report, panel
// cycling, scripted export, screenshots, frame statistics) live here only.
#include <imgui.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/common/data_paths.h"
#include "app/common/exit_codes.h"
#include "app/figures/catalog/figures.h"
#include "app/gui/frame.h"
#include "app/gui/gui.h"
#include "app/gui/help/menus.h"
#include "app/gui/layout/workspace.h"
#include "app/gui/panel.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/plot/live_figure.h"
#include "app/gui/timeline.h"
#include "app/gui/ui_state.h"
#include "app/gui/window/draw_guard.h"
#include "app/gui/window/frame_pacer.h"
#include "app/gui/window/window.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/version.h"
#include "core/config/config.h"
#include "core/config/config_set.h"
#include "core/runs/directory/run_writer.h"
#include "core/training/trainer.h"
#include "render/gl/frame_stats.h"
#include "render/gl/screenshot.h"

namespace attn {
namespace {

// Ctrl+C or kill: close the window the normal way (trainer stopped, layout saved).
std::atomic<bool> g_quit_requested{false};
extern "C" void request_quit(int) {
  g_quit_requested.store(true);
}

constexpr size_t kWarmupFrames = 30;  // excluded from frame statistics (shader/font warm-up)

// The experiment to open: the given file, else the bundled default, else built-in defaults.
// A broken file never stops the window: the error is shown and defaults are used.
// The experiment the window opens: --config, else the installed (share/attnlab) or source
// tree's copy.json (app/common/data_paths.h looks in both); empty when neither exists.
std::string experiment_path(const std::string& requested) {
  return requested.empty() ? find_data_path("configs/copy.json") : requested;
}

ExperimentConfig load_experiment(const std::string& requested, const std::vector<std::string>& sets,
                                 gui::UiState& ui) {
  const std::string path = experiment_path(requested);
  if (path.empty()) {
    ui.config_source = "built-in defaults";
    return ExperimentConfig{};
  }
  try {
    ExperimentConfig c = load_config_with_sets(path, sets);
    ui.config_source = path;
    return c;
  } catch (const std::exception& e) {  // attn::Error, or anything a parser may throw
    ui.config_error = e.what();
    ui.config_source = "built-in defaults (" + path + " failed to load)";
    return ExperimentConfig{};
  }
}

// Faults caught while drawing (gui/window/draw_guard.h): each said on stderr once (repeats
// counted), the newest shown in the window until dismissed, and the run saved so that a fault
// never costs training. The window and the trainer go on.
struct DrawFaults {
  std::map<std::string, int> counts;  // "where: what" -> times caught
  nlohmann::json list = nlohmann::json::array();
  std::string shown;  // the newest, in the window ("" = dismissed)
  int saves = 0;
  double last_save = -1e9;
};

void handle_draw_faults(DrawFaults& faults, Trainer& trainer, double now) {
  for (const gui::DrawFaultRecord& f : gui::take_draw_faults()) {
    const std::string line = f.where + ": " + f.what;
    if (faults.counts[line]++ > 0) continue;
    std::fprintf(stderr,
                 "attnlab: a drawing error was caught in the %s (the window recovered; the run "
                 "is saved and training goes on): %s\n",
                 f.where.c_str(), f.what.c_str());
    faults.list.push_back({{"where", f.where}, {"what", f.what}});
    faults.shown = line;
    // A new fault: save the run at once (at most every 10 s when faults repeat), into its own
    // recorded directory; training goes on.
    if (trainer.state() == TrainerState::Running && now - faults.last_save >= 10.0) {
      trainer.save_checkpoint("");
      faults.last_save = now;
      ++faults.saves;
    }
  }
}

// The newest caught fault, until dismissed.
void draw_fault_notice(DrawFaults& faults, const Snapshot& live) {
  if (faults.shown.empty()) return;
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(display.x - 12, display.y - 12), ImGuiCond_Always, ImVec2(1, 1));
  ImGui::SetNextWindowSize(ImVec2(std::min(560.0f, display.x * 0.6f), 0));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize;
  if (ImGui::Begin("Drawing error##draw-fault", nullptr, flags)) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::TextWrapped("A drawing error was caught and the window recovered: %s",
                       faults.shown.c_str());
    ImGui::PopStyleColor();
    ImGui::TextWrapped(
        "The run was saved%s%s and training goes on. Please report this error "
        "(it is also on stderr).",
        live.run_dir.empty() ? "" : " in ", live.run_dir.c_str());
    if (ImGui::Button("Dismiss")) faults.shown.clear();
  }
  ImGui::End();
}

// The last resort (std::terminate on the UI thread: an error the frame loop could not catch):
// the run is saved before the process ends.
Trainer* g_trainer = nullptr;
std::thread::id g_ui_thread;
[[noreturn]] void save_then_abort() {
  if (g_trainer && std::this_thread::get_id() == g_ui_thread &&
      g_trainer->state() == TrainerState::Running) {
    std::fprintf(stderr,
                 "attnlab: the window hit an error it cannot recover from; saving the "
                 "run before it closes\n");
    const uint64_t before = g_trainer->latest()->serial;
    g_trainer->save_checkpoint("");
    for (int i = 0; i < 3000; ++i) {  // at most 30 s
      const auto s = g_trainer->latest();
      if (s->serial != before && (s->message.rfind("saved checkpoint", 0) == 0 ||
                                  s->message.rfind("save failed", 0) == 0)) {
        std::fprintf(stderr, "attnlab: %s\n", s->message.c_str());
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::abort();
}

// ATTN_GUI_REPORT: what the last frame showed, for tests and scripts.
bool write_report(const std::string& path, const gui::Workspace& workspace, const gui::Menus& menus,
                  const gui::ExportDialog& exporter, const gui::Timeline& timeline,
                  const nlohmann::json& live_figures, const DrawFaults& faults, size_t frames,
                  const nlohmann::json& pacing, int width, int height, std::string* error) {
  nlohmann::json report = workspace.report();
  report["timeline"] = timeline.report();
  report["live_figures"] = live_figures;
  report["help"] = menus.report();
  report["frames"] = frames;
  report["pacing"] = pacing;
  report["draw_faults"] = faults.list;
  report["draw_fault_saves"] = faults.saves;
  report["window"] = {width, height};
  const gui::ExportDialog::Status st = exporter.status();
  const ImVec4 r2 = exporter.preview_rect();
  const char* states[] = {"none", "running", "done", "failed"};
  report["export"] = {{"open", exporter.is_open()},
                      {"figure", st.figure},
                      {"state", states[static_cast<int>(st.state)]},
                      {"message", st.message},
                      {"files", st.files},
                      {"preview", {r2.x, r2.y, r2.z, r2.w}}};
  try {
    write_file_atomic(path, report.dump(2) + "\n");
  } catch (const std::exception& e) {
    *error = std::string("cannot write the GUI report: ") + e.what();
    return false;
  }
  return true;
}

// ATTN_GUI_FIGURES_DIR: every live figure of the last frame written as a PNG of the same page,
// theme and pixel size as on screen; returns [{name, file, rect}] for the report.
nlohmann::json export_live_figures(const std::string& dir, int* exit_code) {
  nlohmann::json out = nlohmann::json::array();
  int index = 0;
  for (const gui::CapturedFigure& c : gui::LiveFigure::captured()) {
    fig::ExportRequest request;
    request.format = fig::ExportFormat::Png;
    request.path = dir + "/" + std::to_string(index++) + "-" + c.figure.name + ".png";
    request.width_in = c.page.width_pt / 72.0;
    request.height_in = c.page.height_pt / 72.0;
    request.font_pt = c.page.font_pt;
    request.dpi = static_cast<int>(std::lround(72.0 * c.w / c.page.width_pt));
    request.dark = true;
    request.sidecars = false;
    try {
      fig::export_figure(c.figure, request, fig::Provenance{});
      out.push_back(
          {{"name", c.figure.name}, {"file", request.path}, {"rect", {c.x, c.y, c.w, c.h}}});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attnlab: ATTN_GUI_FIGURES_DIR: %s\n", e.what());
      *exit_code = 1;
    }
  }
  return out;
}

// Space: start/pause, S: one step, Ctrl+S: save. Ignored while a text field has the keyboard.
void handle_shortcuts(gui::Window& window, Trainer& trainer, TrainerState state,
                      const gui::UiState& ui) {
  const bool typing = ImGui::GetIO().WantTextInput;
  for (const gui::KeyPress& k : window.take_key_presses()) {
    if (typing) continue;
    const bool ctrl = k.mods & GLFW_MOD_CONTROL;
    const bool other_mods = k.mods & (GLFW_MOD_ALT | GLFW_MOD_SUPER | GLFW_MOD_SHIFT);
    if (other_mods) continue;
    if (k.key == GLFW_KEY_SPACE && !ctrl) {
      gui::toggle_running(trainer, state);
    } else if (k.key == GLFW_KEY_S && ctrl) {
      gui::save_checkpoint(trainer, state, ui);
    } else if (k.key == GLFW_KEY_S && gui::can_step(state)) {
      trainer.step_once();
    }
  }
}

}  // namespace

const std::vector<std::string>& gui_panel_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const gui::PanelRow& row : gui::panel_table()) out.push_back(row.name);
    return out;
  }();
  return names;
}

// The workspace layout (tiles, tabs) lives beside ImGui's own settings file.
std::string workspace_path(const std::string& imgui_ini) {
  if (imgui_ini.empty()) return {};
  return std::filesystem::path(imgui_ini).replace_extension(".json").string();
}

namespace {

// A --panel name not in the table: said with the allowed ones.
bool check_panel_names(const std::vector<std::string>& panels) {
  const auto& names = gui_panel_names();
  for (const std::string& name : panels) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string allowed;
    for (const std::string& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "attnlab: --panel: unknown panel '%s' (allowed: %s)\n", name.c_str(),
                 allowed.c_str());
    return false;
  }
  return true;
}

std::unique_ptr<gui::Window> open_window(const GuiOptions& options) {
  gui::WindowOptions wo;
  wo.width = std::max(320, options.width);
  wo.height = std::max(240, options.height);
  wo.vsync = options.exit_after_frames <= 0;  // benchmark frames measure our work, not the
                                              // display's refresh
  wo.layout_path = options.layout_path;
  std::string error;
  std::unique_ptr<gui::Window> window = gui::Window::open(wo, &error);
  if (!window)
    std::fprintf(stderr,
                 "attnlab: cannot open a window (%s). Run headless instead: attnlab train "
                 "--config assets/configs/copy.json --out runs/copy\n",
                 error.c_str());
  return window;
}

// The open window from its first frame to its close: the trainer, the shared UI state, the
// workspace of panels, the menus, the timeline, the Export dialog and the test hooks. Members are
// built in this order and destroyed in the reverse: the panels own GL textures, so the
// workspace goes before the window.
class GuiRun {
 public:
  GuiRun(const GuiOptions& options, std::unique_ptr<gui::Window> window);
  void loop();
  // Stops the trainer (every run it trained saved), saves the layout, writes the test hooks'
  // files; returns the exit code.
  int close();

 private:
  enum class Pace { Draw, Skip, Quit };
  void start_trainer();
  void open_workspace();
  Pace wait_for_frame(bool* closing);
  gui::PaceInput pace_input() const;
  void note_frame_needs();
  void cycle_panels();
  bool draw();
  void request_hook_export(const Snapshot& shown);
  void advance_hook_export();
  void present(bool last);
  void write_exit_files();
  nlohmann::json pacing_report() const;

  const GuiOptions options_;
  GuiOptions resolved_;  // options_ with the runs root filled in
  const bool benchmark_;
  std::unique_ptr<gui::Window> window_;
  gui::UiState ui_;
  ExperimentConfig config_;
  std::unique_ptr<Trainer> trainer_;
  DrawFaults draw_faults_;
  std::unique_ptr<gui::Workspace> workspace_;
  std::unique_ptr<gui::Menus> menus_;
  gui::Timeline timeline_;
  gui::ExportDialog export_dialog_;  // every panel's Export button opens it
  float ui_scale_ = 1;
  const char* figures_dir_ = nullptr;  // ATTN_GUI_FIGURES_DIR
  nlohmann::json live_figures_ = nlohmann::json::array();
  int export_hook_stage_;  // --export-figure: -1 none, 0 waiting, 1 requested, 2 exporting
  int export_hook_frames_ = 0;
  render::FrameClock clock_;
  gui::FramePacer pacer_;
  uint64_t last_drawn_serial_ = 0;
  int64_t snapshots_drawn_ = 0;  // distinct snapshot serials the frames drew
  int exit_code_ = 0;
  double frame_start_ = 0;
  int faulted_frames_ = 0;  // frames a drawing fault ended early
};

GuiRun::GuiRun(const GuiOptions& options, std::unique_ptr<gui::Window> window)
    : options_(options),
      resolved_(options),
      benchmark_(options.exit_after_frames > 0),
      window_(std::move(window)),
      export_hook_stage_(options.export_figure.empty() ? -1 : 0),
      clock_(benchmark_ ? options.exit_after_frames + 1 : 4096) {
  // Runs trained here are recorded under the runs root, which the Runs panel lists.
  if (resolved_.runs_dir.empty()) resolved_.runs_dir = default_runs_root();
  ui_.notes = window_->notes();
  if (resolved_.runs_dir.empty())
    ui_.notes += std::string(ui_.notes.empty() ? "" : "\n") +
                 "Runs not recorded: neither XDG_DATA_HOME nor HOME is set (give --runs-dir)";
  ui_.small_font = window_->small_font();
  config_ = load_experiment(options_.config_path, options_.config_sets, ui_);
  ui_.pending = config_;
  ui_.lr_input = config_.train.lr;
  // Save (Ctrl+S) writes into this run's own recorded directory unless the user types one.
  // Test hook: ATTN_GUI_SAVE_DIR types one (tests/e2e/gui_run_safety.sh).
  if (const char* dir = std::getenv("ATTN_GUI_SAVE_DIR"); dir && *dir) ui_.checkpoint_dir = dir;
  start_trainer();
  open_workspace();
  // Test hook: the live figures of the last frame exported as PNG (tests/e2e/gui_figures.sh).
  figures_dir_ = std::getenv("ATTN_GUI_FIGURES_DIR");
  gui::LiveFigure::set_capture(figures_dir_ && *figures_dir_);
  frame_start_ = glfwGetTime();
}

void GuiRun::start_trainer() {
  // Default options: threads = 0 leaves a core for this thread.
  TrainerOptions trainer_options;
  trainer_options.runs_root = resolved_.runs_dir;
  trainer_options.checkpoint_every_s = options_.checkpoint_every_s;
  trainer_ = std::make_unique<Trainer>(config_, trainer_options);
  if (!options_.probe_text.empty()) trainer_->request_probe(options_.probe_text);
  if (options_.autostart) trainer_->start();
  // From here an assertion or exception while drawing is caught, and the run saved
  // (gui/window/draw_guard.h); past the frame loop's net, the run is saved before the end.
  gui::route_asserts_to_draw_faults();
  g_trainer = trainer_.get();
  g_ui_thread = std::this_thread::get_id();
  std::set_terminate(save_then_abort);
}

// The workspace with its saved layout, the panels asked for, the menus and the timeline.
void GuiRun::open_workspace() {
  const gui::PanelSetup setup{resolved_, config_};
  workspace_ = std::make_unique<gui::Workspace>(setup);
  // A newcomer's first launch (a bare `attnlab`: no config, no panel asked for, no saved layout
  // yet) opens the guide. Not with --frames (tests, benchmarks): screenshots show panels alone.
  std::error_code layout_ec;
  const std::string layout_file = workspace_path(window_->layout_path());
  const bool first_launch = !benchmark_ && options_.config_path.empty() &&
                            options_.panels.empty() && !layout_file.empty() &&
                            !std::filesystem::exists(layout_file, layout_ec);
  menus_ = std::make_unique<gui::Menus>(first_launch);
  // Test hook: ATTN_GUI_OPEN_HELP=guide,experiments opens those windows (tests/e2e/gui_runs.sh).
  if (const char* help = std::getenv("ATTN_GUI_OPEN_HELP"); help && *help)
    menus_->open(std::strstr(help, "guide") != nullptr,
                 std::strstr(help, "experiments") != nullptr);
  workspace_->load(workspace_path(window_->layout_path()), setup);
  if (!workspace_->note().empty())
    ui_.notes += (ui_.notes.empty() ? "" : "\n") + workspace_->note();
  ui_scale_ = options_.ui_scale > 0 ? options_.ui_scale : workspace_->ui_scale();
  // Runs first: a panel asked for by name keeps the focus of its tile.
  if (!options_.follow_runs.empty()) workspace_->open("runs");  // whatever the saved layout says
  for (const std::string& name : options_.panels) workspace_->open(name);
  // Benchmark hook: a new recorded step every frame (frame statistics while scrubbing).
  if (const char* scrub = std::getenv("ATTN_GUI_TIMELINE_SCRUB"); scrub && *scrub == '1')
    timeline_.scrub_every_frame(true);
  if (options_.start_step >= 0 && options_.follow_runs.size() == 1) {
    ui_.open_run_requests.push_back(options_.follow_runs.front());  // loaded once it is read
    timeline_.start_at(options_.follow_runs.front(), options_.start_step);
  }
  // Benchmark hook (see GeometryPanel, tests/e2e/bench_geometry.sh): time the explorer alone.
  if (const char* bench = std::getenv("ATTN_GEOMETRY_BENCH"); bench && *bench)
    workspace_->show_only({"geometry"});
  if (options_.cycle_panels_every > 0) workspace_->disable_auto_open();  // the cycle decides
}

void GuiRun::loop() {
  for (;;) {
    bool closing = false;
    const Pace pace = wait_for_frame(&closing);
    if (pace == Pace::Quit) break;
    if (pace == Pace::Skip) continue;
    const bool drawn = draw();
    handle_draw_faults(draw_faults_, *trainer_, glfwGetTime());
    if (!drawn) {  // nothing complete to show: the next frame draws afresh
      pacer_.request_frame();
      // --frames N ends even when every frame fails (it counts them too).
      if (benchmark_ && ++faulted_frames_ >= options_.exit_after_frames) break;
      continue;
    }
    const bool last = closing || (benchmark_ && static_cast<int>(clock_.frames()) + 1 >=
                                                    options_.exit_after_frames);
    present(last);
    if (last) break;
  }
}

// Waits for the next frame: Draw, Skip (a hidden window) or Quit (closed). With --frames N every
// pass draws (N frames, as fast as they come: benchmarks measure a frame's work); otherwise the
// pacer (gui/window/frame_pacer.h) decides, and the loop sleeps in glfwWaitEventsTimeout, which
// any input ends at once, until a frame is due.
GuiRun::Pace GuiRun::wait_for_frame(bool* closing) {
  if (benchmark_) glfwPollEvents();
  for (;;) {
    if (g_quit_requested.load()) window_->request_close();
    *closing = window_->should_close();
    if (*closing && options_.screenshot_path.empty()) return Pace::Quit;
    if (window_->hidden()) {  // minimised or zero-size: nothing to draw, don't spin
      if (*closing) return Pace::Quit;
      glfwWaitEventsTimeout(0.1);
      return Pace::Skip;
    }
    const gui::PaceInput in = pace_input();
    const gui::FramePacer::Decision d =
        benchmark_ || *closing ? gui::FramePacer::Decision{true, 0, "first"} : pacer_.decide(in);
    if (d.draw) {
      pacer_.frame_begun(in, d);
      frame_start_ = in.now;
      return Pace::Draw;
    }
    pacer_.count_wait();
    glfwWaitEventsTimeout(d.wait_s);
  }
}

// What the pacer looks at: the newest snapshot's serial, the trainer's state, the last event,
// and whether a panel shows what changes outside the snapshot (Runs follows run directories on
// disk, Compare trains its own runs).
gui::PaceInput GuiRun::pace_input() const {
  gui::PaceInput in;
  in.now = glfwGetTime();
  in.snapshot_serial = trainer_->latest()->serial;
  in.trainer_state = static_cast<int>(trainer_->state());
  in.last_event_time = window_->last_event_time();
  in.watching = workspace_->is_open("runs") || workspace_->is_open("compare");
  return in;
}

// After a frame: what it asks of the pacer (ImGui's state as the frame left it).
void GuiRun::note_frame_needs() {
  const ImGuiIO& io = ImGui::GetIO();
  bool mouse_down = false;
  for (const bool down : io.MouseDown) mouse_down = mouse_down || down;
  gui::FrameNeeds needs;
  // --cycle-panels (soak tests) counts frames: it keeps drawing as the unpaced loop did.
  needs.animating = ImGui::IsAnyItemActive() || mouse_down || ui_.timeline_playing ||
                    export_dialog_.status().state == gui::ExportDialog::JobState::Running ||
                    options_.cycle_panels_every > 0;
  needs.text_input = io.WantTextInput;
  pacer_.frame_needs(needs);
}

// --cycle-panels N: every N frames the next panel of the table beside Run.
void GuiRun::cycle_panels() {
  if (options_.cycle_panels_every <= 0 || clock_.frames() % options_.cycle_panels_every != 0)
    return;
  const auto& names = gui_panel_names();
  const std::string& cycled = names[(clock_.frames() / options_.cycle_panels_every) % names.size()];
  workspace_->show_only({"run", cycled});
}

// One frame: one snapshot and one state, everything drawn from these (gui/frame.h). The
// timeline picks what the panels show: the live model's, or the model's at a recorded step.
// Returns false when a drawing fault ended it early.
bool GuiRun::draw() {
  const std::shared_ptr<const Snapshot> live = trainer_->latest();
  const TrainerState state = trainer_->state();
  if (live->serial != last_drawn_serial_ || snapshots_drawn_ == 0) ++snapshots_drawn_;
  last_drawn_serial_ = live->serial;
  timeline_.update(*live, ui_, glfwGetTime());
  cycle_panels();
  // Everything drawn this frame is under the draw guard's net: a fault outside the panels
  // (which catch their own) ends the frame early, and ImGui is repaired or rebuilt.
  try {
    window_->set_ui_scale(ui_scale_);
    window_->begin_frame();
    gui::maybe_inject_test_fault("frame");  // test hook (draw_guard.h)
    handle_shortcuts(*window_, *trainer_, state, ui_);
    gui::FrameParts parts{*trainer_, ui_, *workspace_, *menus_, timeline_, export_dialog_};
    // The small font is rebuilt with the UI scale.
    const gui::FrameInput input{live, state, window_->small_font(), &ui_scale_,
                                options_.start_step >= 0 && clock_.frames() == 0};
    gui::draw_frame(parts, input, [&](const Snapshot& shown) {
      draw_fault_notice(draw_faults_, *live);
      request_hook_export(shown);
    });
    advance_hook_export();
    window_->render();
    note_frame_needs();
    return true;
  } catch (const std::exception& e) {
    gui::record_draw_fault("frame", e.what());
    std::string log;
    if (!gui::recover_frame(&log)) {
      std::fprintf(stderr, "attnlab: rebuilding the window's ImGui state (%s)\n", log.c_str());
      window_->rebuild_imgui();
    }
    return false;
  }
}

// --export-figure: the same request a panel button makes, with the figure a drawn panel shows
// when one does (its controls applied), else the builder's defaults.
void GuiRun::request_hook_export(const Snapshot& shown) {
  if (export_hook_stage_ != 0) return;
  const bool ready = shown.attention_step >= options_.export_after_step;
  if (ready)
    if (const fig::Figure* figure = workspace_->shown_figure(options_.export_figure)) {
      gui::request_figure_export(*figure);
      export_hook_stage_ = 1;
      return;
    }
  for (const auto& spec : figures::figures_for(shown))
    if (spec.name == options_.export_figure && (ready || spec.name == "loss")) {
      try {
        gui::request_figure_export(figures::build_figure(spec.name, shown));
        export_hook_stage_ = 1;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "attnlab: --export-figure: %s\n", e.what());
      }
    }
}

// --export-figure, once the dialog is open: export with its defaults, then close the window a
// few frames after the job ends.
void GuiRun::advance_hook_export() {
  if (export_hook_stage_ == 1 && export_dialog_.is_open()) {
    export_dialog_.set_path(options_.export_out);
    export_dialog_.start_export();
    export_hook_stage_ = 2;
  } else if (export_hook_stage_ == 2) {
    const auto st = export_dialog_.status().state;
    if (st == gui::ExportDialog::JobState::Done || st == gui::ExportDialog::JobState::Failed)
      if (++export_hook_frames_ > 3) window_->request_close();
  }
}

// Shows the drawn frame; the last one is also saved where the test hooks ask.
void GuiRun::present(bool last) {
  if (last && !options_.screenshot_path.empty()) {
    int w = 0, h = 0;
    window_->framebuffer_size(&w, &h);
    std::string error;
    if (!render::save_framebuffer_png(options_.screenshot_path, w, h, &error)) {
      std::fprintf(stderr, "attnlab: %s\n", error.c_str());
      exit_code_ = 1;
    }
  }
  if (last && figures_dir_ && *figures_dir_)
    live_figures_ = export_live_figures(figures_dir_, &exit_code_);
  window_->swap();
  clock_.on_present();
  pacer_.frame_cost(glfwGetTime() - frame_start_);
  // Shown in the Run panel: the cost of one frame (build, draw, present), not the pacing wait.
  ui_.frame_ms = ui_.frame_ms * 0.9 + (glfwGetTime() - frame_start_) * 1000.0 * 0.1;
}

int GuiRun::close() {
  window_->hide();  // the trainer may take a moment to finish its step; don't look frozen
  g_trainer = nullptr;
  // Every run the window trained is saved on the way out; what could not be is said, and the
  // exit code says so too (kExitRunFailed).
  std::vector<std::string> unsaved = trainer_->close();
  for (std::string& line : workspace_->close_panels()) unsaved.push_back(std::move(line));
  trainer_.reset();
  for (const std::string& line : unsaved) std::fprintf(stderr, "attnlab: %s\n", line.c_str());
  if (!unsaved.empty() && exit_code_ == 0) exit_code_ = kExitRunFailed;
  std::string error;
  if (!workspace_->save(&error)) std::fprintf(stderr, "attnlab: %s\n", error.c_str());
  write_exit_files();
  return exit_code_;
}

// The report's "pacing": the frames begun by the reason the pacer gave (gui/window/frame_pacer.h;
// with --frames N every frame is "first": unpaced), the waits that drew nothing, and the
// distinct snapshots the frames drew.
nlohmann::json GuiRun::pacing_report() const {
  const gui::FramePacer::Counts& c = pacer_.counts();
  return {
      {"paced", !benchmark_},    {"cap_hz", pacer_.options().cap_hz},   {"frames_begun", c.frames},
      {"waits", pacer_.waits()}, {"snapshots_drawn", snapshots_drawn_}, {"by_reason", c.by_reason}};
}

// ATTN_GUI_REPORT and --frame-stats, at exit.
void GuiRun::write_exit_files() {
  std::string error;
  if (const char* report = std::getenv("ATTN_GUI_REPORT"); report && *report) {
    int w = 0, h = 0;
    window_->framebuffer_size(&w, &h);
    if (!write_report(report, *workspace_, *menus_, export_dialog_, timeline_, live_figures_,
                      draw_faults_, clock_.frames(), pacing_report(), w, h, &error)) {
      std::fprintf(stderr, "attnlab: %s\n", error.c_str());
      exit_code_ = 1;
    }
  }
  if (!options_.frame_stats_path.empty()) {
    const size_t warmup = clock_.frames() > 2 * kWarmupFrames ? kWarmupFrames : 0;
    if (!clock_.write_json(options_.frame_stats_path, warmup, &error)) {
      std::fprintf(stderr, "attnlab: %s\n", error.c_str());
      exit_code_ = 1;
    }
  }
}

}  // namespace

void check_config_sets(const GuiOptions& options) {
  if (options.config_sets.empty()) return;
  const std::string path = experiment_path(options.config_path);
  if (path.empty()) throw Error("--set: no config to apply it to (give --config FILE)");
  load_config_with_sets(path, options.config_sets);
}

int run_gui(const GuiOptions& options) {
  if (!check_panel_names(options.panels)) return 2;
  std::signal(SIGINT, request_quit);
  std::signal(SIGTERM, request_quit);
  std::unique_ptr<gui::Window> window = open_window(options);
  if (!window) return 2;
  GuiRun run(options, std::move(window));
  run.loop();
  return run.close();  // the workspace (panels), then the window, are destroyed here
}

}  // namespace attn
