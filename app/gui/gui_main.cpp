// run_gui(): the window's frame loop. Loads the experiment, starts the trainer thread, and per
// frame takes one snapshot, draws the menu bar and the workspace (gui/layout/workspace.h: the
// panels of gui/panel.h's table in tiles) and the Export dialog; never waits for the trainer. Test
// hooks (exit report, panel cycling, scripted export, screenshots, frame statistics) live here
// only.
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
#include "app/figures/figures.h"
#include "app/gui/gui.h"
#include "app/gui/help/menus.h"
#include "app/gui/layout/workspace.h"
#include "app/gui/panel.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/plot/live_figure.h"
#include "app/gui/timeline.h"
#include "app/gui/ui_state.h"
#include "app/gui/window/draw_guard.h"
#include "app/gui/window/window.h"
#include "core/base/atomic_file.h"
#include "core/base/version.h"
#include "core/config/config.h"
#include "core/runs/run_writer.h"
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
ExperimentConfig load_experiment(const std::string& requested, gui::UiState& ui) {
  std::string path = requested;
  if (path.empty()) {
    // Installed (share/attnlab) or in the source tree: app/common/data_paths.h looks in both.
    path = find_data_path("configs/copy.json");
  }
  if (path.empty()) {
    ui.config_source = "built-in defaults";
    return ExperimentConfig{};
  }
  try {
    ExperimentConfig c = load_config_file(path);
    ui.config_source = path;
    return c;
  } catch (const std::exception& e) {  // attn::Error, or anything a parser may throw
    ui.config_error = e.what();
    ui.config_source = "built-in defaults (" + path + " failed to load)";
    return ExperimentConfig{};
  }
}

// The main menu bar: File (gui/help/menus.h), Training (the keyboard shortcuts' actions), View
// (panels, tiles, layout, UI scale) and Help. Returns its height: the workspace starts below it.
float draw_menu_bar(gui::Workspace& workspace, gui::Menus& menus, Trainer& trainer,
                    TrainerState state, gui::UiState& ui, float* ui_scale, const Snapshot& live) {
  float height = 0;
  if (!ImGui::BeginMainMenuBar()) return height;
  menus.draw_file_menu(ui, live);
  if (ImGui::BeginMenu("Training")) {
    const bool pause = gui::can_pause(state);
    if (ImGui::MenuItem(pause ? "Pause" : "Start", "Space", false, pause || gui::can_start(state)))
      gui::toggle_running(trainer, state);
    if (ImGui::MenuItem("Step once", "S", false, gui::can_step(state))) trainer.step_once();
    if (ImGui::MenuItem("Save checkpoint", "Ctrl+S", false, gui::can_save(state)))
      gui::save_checkpoint(trainer, state, ui);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    workspace.draw_view_menu();
    if (ImGui::BeginMenu("UI scale")) {
      for (const float s : {1.0f, 1.25f, 1.5f, 2.0f, 2.5f, 3.0f}) {
        char label[16];
        std::snprintf(label, sizeof label, "%d%%", static_cast<int>(s * 100 + 0.5f));
        if (ImGui::MenuItem(label, nullptr, std::abs(*ui_scale - s) < 0.01f)) *ui_scale = s;
      }
      ImGui::EndMenu();
    }
    ImGui::EndMenu();
  }
  menus.draw_help_menu();
  height = ImGui::GetWindowSize().y;
  ImGui::EndMainMenuBar();
  return height;
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
                  int width, int height, std::string* error) {
  nlohmann::json report = workspace.report();
  report["timeline"] = timeline.report();
  report["live_figures"] = live_figures;
  report["help"] = menus.report();
  report["frames"] = frames;
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

int run_gui(const GuiOptions& options) {
  for (const std::string& name : options.panels) {
    const auto& names = gui_panel_names();
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string allowed;
    for (const std::string& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "attnlab: --panel: unknown panel '%s' (allowed: %s)\n", name.c_str(),
                 allowed.c_str());
    return 2;
  }
  std::signal(SIGINT, request_quit);
  std::signal(SIGTERM, request_quit);
  const bool benchmark = options.exit_after_frames > 0;
  gui::WindowOptions wo;
  wo.width = std::max(320, options.width);
  wo.height = std::max(240, options.height);
  wo.vsync = !benchmark;  // benchmark frames measure our work, not the display's refresh
  wo.layout_path = options.layout_path;
  std::string error;
  std::unique_ptr<gui::Window> window = gui::Window::open(wo, &error);
  if (!window) {
    std::fprintf(stderr,
                 "attnlab: cannot open a window (%s). Run headless instead: attnlab train "
                 "--config assets/configs/copy.json --out runs/copy\n",
                 error.c_str());
    return 2;
  }

  // Runs trained here are recorded under the runs root, which the Runs panel lists.
  GuiOptions resolved = options;
  if (resolved.runs_dir.empty()) resolved.runs_dir = default_runs_root();

  gui::UiState ui;
  ui.notes = window->notes();
  if (resolved.runs_dir.empty())
    ui.notes += std::string(ui.notes.empty() ? "" : "\n") +
                "Runs not recorded: neither XDG_DATA_HOME nor HOME is set (give --runs-dir)";
  ui.small_font = window->small_font();
  const ExperimentConfig config = load_experiment(options.config_path, ui);
  ui.pending = config;
  ui.lr_input = config.train.lr;
  // Save (Ctrl+S) writes into this run's own recorded directory unless the user types one.
  // Test hook: ATTN_GUI_SAVE_DIR types one (tests/e2e/gui_run_safety.sh).
  if (const char* dir = std::getenv("ATTN_GUI_SAVE_DIR"); dir && *dir) ui.checkpoint_dir = dir;

  // Default options: threads = 0 leaves a core for this thread.
  TrainerOptions trainer_options;
  trainer_options.runs_root = resolved.runs_dir;
  trainer_options.checkpoint_every_s = options.checkpoint_every_s;
  auto trainer = std::make_unique<Trainer>(config, trainer_options);
  if (!options.probe_text.empty()) trainer->request_probe(options.probe_text);
  if (options.autostart) trainer->start();
  // From here an assertion or exception while drawing is caught, and the run saved
  // (gui/window/draw_guard.h); past the frame loop's net, the run is saved before the end.
  gui::route_asserts_to_draw_faults();
  g_trainer = trainer.get();
  g_ui_thread = std::this_thread::get_id();
  std::set_terminate(save_then_abort);
  DrawFaults draw_faults;

  // Panels own GL textures: the workspace is declared after the window, destroyed before it.
  const gui::PanelSetup setup{resolved, config};
  gui::Workspace workspace(setup);
  // A newcomer's first launch (a bare `attnlab`: no config, no panel asked for, no saved layout
  // yet) opens the guide. Not with --frames (tests, benchmarks): screenshots show panels alone.
  std::error_code layout_ec;
  const std::string layout_file = workspace_path(window->layout_path());
  const bool first_launch = !benchmark && options.config_path.empty() && options.panels.empty() &&
                            !layout_file.empty() &&
                            !std::filesystem::exists(layout_file, layout_ec);
  gui::Menus menus(first_launch);
  // Test hook: ATTN_GUI_OPEN_HELP=guide,experiments opens those windows (tests/e2e/gui_runs.sh).
  if (const char* help = std::getenv("ATTN_GUI_OPEN_HELP"); help && *help)
    menus.open(std::strstr(help, "guide") != nullptr, std::strstr(help, "experiments") != nullptr);
  workspace.load(workspace_path(window->layout_path()), setup);
  if (!workspace.note().empty()) ui.notes += (ui.notes.empty() ? "" : "\n") + workspace.note();
  float ui_scale = options.ui_scale > 0 ? options.ui_scale : workspace.ui_scale();
  // Runs first: a panel asked for by name keeps the focus of its tile.
  if (!options.follow_runs.empty()) workspace.open("runs");  // whatever the saved layout says
  for (const std::string& name : options.panels) workspace.open(name);
  gui::Timeline timeline;
  // Benchmark hook: a new recorded step every frame (frame statistics while scrubbing).
  if (const char* scrub = std::getenv("ATTN_GUI_TIMELINE_SCRUB"); scrub && *scrub == '1')
    timeline.scrub_every_frame(true);
  if (options.start_step >= 0 && options.follow_runs.size() == 1) {
    ui.open_run_requests.push_back(options.follow_runs.front());  // loaded once it is read
    timeline.start_at(options.follow_runs.front(), options.start_step);
  }
  // Benchmark hook (see GeometryPanel, tests/e2e/bench_geometry.sh): time the explorer alone.
  if (const char* bench = std::getenv("ATTN_GEOMETRY_BENCH"); bench && *bench)
    workspace.show_only({"geometry"});
  if (options.cycle_panels_every > 0) workspace.disable_auto_open();  // the cycle decides

  // Test hook: the live figures of the last frame exported as PNG (tests/e2e/gui_figures.sh).
  const char* figures_dir = std::getenv("ATTN_GUI_FIGURES_DIR");
  gui::LiveFigure::set_capture(figures_dir && *figures_dir);
  nlohmann::json live_figures = nlohmann::json::array();
  gui::ExportDialog export_dialog;  // every panel's Export button opens it
  int export_hook_stage = options.export_figure.empty() ? -1 : 0;  // --export-figure
  int export_hook_frames = 0;
  render::FrameClock clock(benchmark ? options.exit_after_frames + 1 : 4096);
  int exit_code = 0;
  double frame_start = glfwGetTime();
  int faulted_frames = 0;  // frames a drawing fault ended early

  for (;;) {
    if (benchmark) {
      glfwPollEvents();
    } else {
      // Pace at ~60 fps while training or just after input, ~4 fps when idle; any event wakes
      // the loop at once. Vsync caps it further where the driver honours it.
      const double now = glfwGetTime();
      const bool active = trainer->state() == TrainerState::Running || ui.timeline_playing ||
                          now - window->last_event_time() < 0.5;
      const double wait = (active ? 1.0 / 60 : 0.25) - (now - frame_start);
      if (wait > 0)
        glfwWaitEventsTimeout(wait);
      else
        glfwPollEvents();
    }
    if (g_quit_requested.load()) window->request_close();
    const bool closing = window->should_close();
    if (closing && options.screenshot_path.empty()) break;
    if (window->hidden()) {  // minimised or zero-size: nothing to draw, don't spin
      if (closing) break;
      glfwWaitEventsTimeout(0.1);
      continue;
    }
    frame_start = glfwGetTime();

    // One snapshot and one state per frame; everything below draws from these. The timeline
    // picks it: the live model's, or the model's at the recorded step it shows.
    const std::shared_ptr<const Snapshot> live = trainer->latest();
    const TrainerState state = trainer->state();
    timeline.update(*live, ui, glfwGetTime());

    if (options.cycle_panels_every > 0 && clock.frames() % options.cycle_panels_every == 0) {
      const auto& names = gui_panel_names();
      const std::string& cycled =
          names[(clock.frames() / options.cycle_panels_every) % names.size()];
      workspace.show_only({"run", cycled});
    }
    // Everything drawn this frame is under the draw guard's net: a fault outside the panels
    // (which catch their own) ends the frame early, and ImGui is repaired or rebuilt.
    bool drawn = false;
    try {
      gui::LiveFigure::captured().clear();
      window->set_ui_scale(ui_scale);
      window->begin_frame();
      gui::maybe_inject_test_fault("frame");  // test hook (draw_guard.h)
      ui.small_font = window->small_font();   // rebuilt with the UI scale
      handle_shortcuts(*window, *trainer, state, ui);
      const float menu_h = draw_menu_bar(workspace, menus, *trainer, state, ui, &ui_scale, *live);
      // (--run DIR --step N's own request: Runs is open already and the panels asked for keep
      // their tiles' focus.)
      if (!ui.open_run_requests.empty() && !(options.start_step >= 0 && clock.frames() == 0))
        workspace.open("runs");
      workspace.set_ui_scale(ui_scale);
      const ImVec2 display = ImGui::GetIO().DisplaySize;
      const float top = menu_h + timeline.draw(0, menu_h, display.x, ui_scale);
      const std::shared_ptr<const Snapshot> snap = timeline.view(live);
      gui::FrameContext frame{*snap, state, *trainer, ui, ui.small_font, &timeline};
      workspace.draw(frame, ImVec2(0, top), ImVec2(display.x, display.y - top));
      menus.draw_windows(ui, *trainer, *live);
      draw_fault_notice(draw_faults, *live);
      // --export-figure: the same request a panel button makes, with the figure a drawn panel
      // shows when one does (its controls applied), else the builder's defaults.
      const bool export_ready = snap->attention_step >= options.export_after_step;
      if (export_hook_stage == 0 && export_ready)
        if (const fig::Figure* shown = workspace.shown_figure(options.export_figure)) {
          gui::request_figure_export(*shown);
          export_hook_stage = 1;
        }
      if (export_hook_stage == 0) {
        for (const auto& spec : figures::figures_for(*snap))
          if (spec.name == options.export_figure && (export_ready || spec.name == "loss")) {
            try {
              gui::request_figure_export(figures::build_figure(spec.name, *snap));
              export_hook_stage = 1;
            } catch (const std::exception& e) {
              std::fprintf(stderr, "attnlab: --export-figure: %s\n", e.what());
            }
          }
      }
      if (auto request = gui::take_figure_export_request()) {
        fig::Provenance prov;
        if (request->from_run) {
          prov = figures::provenance_for(*snap, trainer->config(), "live");
        } else {
          prov.program_version = version_string();
          prov.run_id = "live";
        }
        export_dialog.open(std::move(*request), prov);
      }
      export_dialog.draw(nullptr);
      if (export_hook_stage == 1 && export_dialog.is_open()) {
        export_dialog.set_path(options.export_out);
        export_dialog.start_export();
        export_hook_stage = 2;
      } else if (export_hook_stage == 2) {
        const auto st = export_dialog.status().state;
        if (st == gui::ExportDialog::JobState::Done || st == gui::ExportDialog::JobState::Failed)
          if (++export_hook_frames > 3) window->request_close();
      }
      window->render();
      drawn = true;
    } catch (const std::exception& e) {
      gui::record_draw_fault("frame", e.what());
      std::string log;
      if (!gui::recover_frame(&log)) {
        std::fprintf(stderr, "attnlab: rebuilding the window's ImGui state (%s)\n", log.c_str());
        window->rebuild_imgui();
      }
    }
    handle_draw_faults(draw_faults, *trainer, glfwGetTime());
    if (!drawn) {  // nothing complete to show: the next frame draws afresh
      // --frames N ends even when every frame fails (it counts them too).
      if (benchmark && ++faulted_frames >= options.exit_after_frames) break;
      continue;
    }

    const bool last =
        closing || (benchmark && static_cast<int>(clock.frames()) + 1 >= options.exit_after_frames);
    if (last && !options.screenshot_path.empty()) {
      int w = 0, h = 0;
      window->framebuffer_size(&w, &h);
      if (!render::save_framebuffer_png(options.screenshot_path, w, h, &error)) {
        std::fprintf(stderr, "attnlab: %s\n", error.c_str());
        exit_code = 1;
      }
    }
    if (last && figures_dir && *figures_dir)
      live_figures = export_live_figures(figures_dir, &exit_code);
    window->swap();
    clock.on_present();
    // Shown in the Run panel: the cost of one frame (build, draw, present), not the pacing wait.
    ui.frame_ms = ui.frame_ms * 0.9 + (glfwGetTime() - frame_start) * 1000.0 * 0.1;
    if (last) break;
  }

  window->hide();  // the trainer may take a moment to finish its step; don't look frozen
  g_trainer = nullptr;
  // Every run the window trained is saved on the way out; what could not be is said, and the
  // exit code says so too (kExitRunFailed).
  std::vector<std::string> unsaved = trainer->close();
  for (std::string& line : workspace.close_panels()) unsaved.push_back(std::move(line));
  trainer.reset();
  for (const std::string& line : unsaved) std::fprintf(stderr, "attnlab: %s\n", line.c_str());
  if (!unsaved.empty() && exit_code == 0) exit_code = kExitRunFailed;
  if (!workspace.save(&error)) std::fprintf(stderr, "attnlab: %s\n", error.c_str());
  if (const char* report = std::getenv("ATTN_GUI_REPORT"); report && *report) {
    int w = 0, h = 0;
    window->framebuffer_size(&w, &h);
    if (!write_report(report, workspace, menus, export_dialog, timeline, live_figures, draw_faults,
                      clock.frames(), w, h, &error)) {
      std::fprintf(stderr, "attnlab: %s\n", error.c_str());
      exit_code = 1;
    }
  }
  if (!options.frame_stats_path.empty()) {
    const size_t warmup = clock.frames() > 2 * kWarmupFrames ? kWarmupFrames : 0;
    if (!clock.write_json(options.frame_stats_path, warmup, &error)) {
      std::fprintf(stderr, "attnlab: %s\n", error.c_str());
      exit_code = 1;
    }
  }
  return exit_code;  // the workspace (panels), then the window, are destroyed here
}

}  // namespace attn
