// run_gui(): the window's main loop. Loads the experiment, starts the trainer thread, and draws
// the main menu bar and the panels (Run, Loss, Attention, Connections, KY Transform lab,
// Geometry, Neural; the View menu shows and hides them) from one snapshot per frame; never waits
// for the trainer.
#include <imgui.h>
#include <imgui_internal.h>  // FindWindowByName: whether a panel really drew (exit report)
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/base/atomic_file.h"
#include "core/config/config.h"
#include "core/training/trainer.h"
#include "gui/gui.h"
#include "gui/ui_state.h"
#include "gui/window.h"
#include "app/figures/figures.h"
#include "core/base/version.h"
#include "gui/export_dialog.h"
#include "panels/attention_panel.h"
#include "panels/compare_panel.h"
#include "panels/conn_panel.h"
#include "panels/connection_panel.h"
#include "panels/geometry/geometry_panel.h"
#include "panels/image_attention_panel.h"
#include "panels/ky_lab_panel.h"
#include "panels/loss_panel.h"
#include "panels/neural_panel.h"
#include "panels/run_panel.h"
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
    const std::string bundled = std::string(ATTN_SOURCE_DIR) + "/assets/configs/copy.json";
    if (std::filesystem::exists(bundled)) path = bundled;
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

bool uses_ky(const ExperimentConfig& c) {
  return std::find(c.model.attention.begin(), c.model.attention.end(), "ky") !=
         c.model.attention.end();
}

// Which panels are shown (the View menu's checkmarks, the windows' close buttons).
struct PanelVisibility {
  bool run = true, loss = true, attention = true, connections = false, ky_lab = false,
       geometry = false, neural = false, image_attention = false, conn = false, compare = false;
  // The flag of a gui_panel_names() entry; nullptr for any other name.
  bool* by_name(const std::string& name) {
    if (name == "run") return &run;
    if (name == "loss") return &loss;
    if (name == "attention") return &attention;
    if (name == "connections") return &connections;
    if (name == "ky-lab") return &ky_lab;
    if (name == "geometry") return &geometry;
    if (name == "neural") return &neural;
    if (name == "image-attention") return &image_attention;
    if (name == "conn") return &conn;
    if (name == "compare") return &compare;
    return nullptr;
  }
  bool is_open(const std::string& name) const {
    const bool* flag = const_cast<PanelVisibility*>(this)->by_name(name);
    return flag && *flag;
  }
};

// Window titles, parallel to gui_panel_names().
constexpr const char* kPanelTitles[] = {
    "Run",      "Loss",   "Attention",       "Connections",           "KY Transform lab",
    "Geometry", "Neural", "Image attention", "Connection Transformer", "Compare"};
constexpr size_t kPanelCount = sizeof kPanelTitles / sizeof kPanelTitles[0];

// First-launch tiling (ImGuiCond_FirstUseEver: a saved layout wins), under the menu bar: Run on
// the left, Loss top-right, Attention bottom-right. When Connections is shown from the start
// (a ky experiment), the bottom-right row is split: Attention left, Connections right (it gets
// the larger share: curves, bars and maps), and Loss is a little shorter. Opened later,
// Connections takes the same slot over Attention's right part. The lab floats over the right.
// Geometry (no model needed) covers the whole right side, Loss and Attention, when shown; so
// does Neural (two heatmaps side by side, a slice and a table need the room). Image attention
// (a models x heads grid of pictures) takes the space below Loss, over Attention.
enum class Slot {
  Run,
  Loss,
  Attention,
  Connections,
  KyLab,
  Geometry,
  Neural,
  ImageAttention,
  Conn,
  Compare
};
void place_default(Slot slot, float menu_h, bool split) {
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  const float top = menu_h, h = std::max(1.0f, d.y - menu_h);
  const float left_w = std::clamp(d.x * 0.3f, 320.0f, 420.0f);
  const float right_w = d.x - left_w;
  const float top_h = std::floor(h * (split ? 0.34f : 0.42f));
  const float attention_w = std::floor(split ? right_w * 0.4f : right_w);
  const float connections_x = left_w + std::floor(right_w * 0.4f);
  ImVec2 pos, size;
  switch (slot) {
    case Slot::Run:
      pos = {0, top}, size = {left_w, h};
      break;
    case Slot::Loss:
      pos = {left_w, top}, size = {right_w, top_h};
      break;
    case Slot::Attention:
    case Slot::ImageAttention:
      pos = {left_w, top + top_h}, size = {attention_w, h - top_h};
      break;
    case Slot::Connections:
      pos = {connections_x, top + top_h}, size = {d.x - connections_x, h - top_h};
      break;
    case Slot::Geometry:
    case Slot::Neural:
    case Slot::Conn:
    case Slot::Compare:
      pos = {left_w, top}, size = {right_w, h};
      break;
    case Slot::KyLab:  // the lab sets its own first size; keep it on screen
      pos = {left_w + 24, top + 12};
      ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(FLT_MAX, std::max(100.0f, h - 24)));
      ImGui::SetNextWindowPos(pos, ImGuiCond_FirstUseEver);
      return;
  }
  ImGui::SetNextWindowPos(pos, ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(size, ImGuiCond_FirstUseEver);
}

// The main menu bar: Training (the keyboard shortcuts' actions) and View (the panels).
// Returns its height, so default placement keeps windows below it.
float draw_menu_bar(PanelVisibility& v, Trainer& trainer, TrainerState state,
                    const gui::UiState& ui) {
  float height = 0;
  if (!ImGui::BeginMainMenuBar()) return height;
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
    ImGui::MenuItem("Run", nullptr, &v.run);
    ImGui::MenuItem("Loss", nullptr, &v.loss);
    ImGui::MenuItem("Attention", nullptr, &v.attention);
    ImGui::MenuItem("Connections", nullptr, &v.connections);
    ImGui::MenuItem("KY Transform lab", nullptr, &v.ky_lab);
    ImGui::MenuItem("Geometry", nullptr, &v.geometry);
    ImGui::MenuItem("Neural", nullptr, &v.neural);
    ImGui::MenuItem("Image attention", nullptr, &v.image_attention);
    ImGui::MenuItem("Connection Transformer", nullptr, &v.conn);
    ImGui::MenuItem("Compare", nullptr, &v.compare);
    ImGui::EndMenu();
  }
  height = ImGui::GetWindowSize().y;
  ImGui::EndMainMenuBar();
  return height;
}

// True when the named window was submitted this frame and is not collapsed.
bool window_drawn(const char* title) {
  const ImGuiWindow* w = ImGui::FindWindowByName(title);
  return w && w->Active && !w->Collapsed && !w->Hidden;
}

// ATTN_GUI_REPORT: what the last frame showed, for tests and scripts.
bool write_report(const std::string& path, const PanelVisibility& v,
                  const bool (&drawn)[kPanelCount], const gui::ConnectionPanel& connections,
                  const gui::GeometryPanel& geometry, const gui::NeuralPanel& neural,
                  const gui::ImageAttentionPanel& image_attention,
                  const gui::ExportDialog& exporter, const nlohmann::json& compare,
                  size_t frames, std::string* error) {
  nlohmann::json panels = nlohmann::json::object();
  for (size_t i = 0; i < kPanelCount; ++i)
    panels[gui_panel_names()[i]] = {
        {"title", kPanelTitles[i]}, {"open", v.is_open(gui_panel_names()[i])}, {"drawn", drawn[i]}};
  const gui::ConnectionPanel::Report& r = connections.last_report();
  nlohmann::json report = {{"frames", frames},
                           {"panels", panels},
                           {"connections",
                            {{"drawn", r.drawn},
                             {"layer", r.layer},
                             {"heads", r.heads},
                             {"curves", r.heads},
                             {"faded_curves", r.faded_curves},
                             {"maps", r.maps},
                             {"step", r.step},
                             {"frame", r.frame},
                             {"frames", r.frames},
                             {"mode", r.overlaid ? "overlaid" : "small multiples"},
                             {"summaries", r.summaries}}},
                           {"geometry", geometry.report()},
                           {"neural", neural.report_json()},
                           {"image_attention", image_attention.report_json()},
                           {"compare", compare}};
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
  static const std::vector<std::string> names = {"run",    "loss",   "attention",       "connections",
                                                 "ky-lab", "geometry", "neural", "image-attention",
                                                 "conn",   "compare"};
  return names;
}

int run_gui(const GuiOptions& options) {
  PanelVisibility visible;
  for (const std::string& name : options.panels) {
    if (visible.by_name(name)) continue;
    std::string allowed;
    for (const std::string& n : gui_panel_names()) allowed += (allowed.empty() ? "" : ", ") + n;
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

  gui::UiState ui;
  ui.notes = window->notes();
  ui.small_font = window->small_font();
  const ExperimentConfig config = load_experiment(options.config_path, ui);
  // Connections: shown for a ky experiment; otherwise it opens by itself the first time the
  // trainer publishes connection curves (a ky config applied later), unless already seen.
  visible.connections = uses_ky(config);
  // A bare `attnlab` (no experiment, no panels asked for) is how a newcomer starts: show the
  // Geometry explorer, which needs no model and answers at once.
  visible.geometry = options.config_path.empty() && options.panels.empty();
  // An image classifier (or runs to compare): its maps are best read over the picture.
  visible.image_attention = config.task.name == "fashion-mnist" || !options.compare_runs.empty();
  // The two share a slot; the image grid's cells open the full maps the Attention panel shows.
  if (visible.image_attention) visible.attention = false;
  for (const std::string& name : options.panels) *visible.by_name(name) = true;
  // Benchmark hook (see GeometryPanel, tests/e2e/bench_geometry.sh): time the explorer alone.
  if (const char* bench = std::getenv("ATTN_GEOMETRY_BENCH"); bench && *bench) {
    visible = PanelVisibility{};
    visible.run = visible.loss = visible.attention = false;
    visible.geometry = true;
  }
  bool connections_may_auto_open = !visible.connections;
  const bool split_layout = visible.connections;
  bool focus_requested = !options.panels.empty();  // bring --panel windows to the front once
  std::string cycled;  // --cycle-panels: the panel switched to this frame, focused once
  auto focus_if_requested = [&](const char* name) {
    if ((focus_requested &&
         std::find(options.panels.begin(), options.panels.end(), name) != options.panels.end()) ||
        cycled == name)
      ImGui::SetNextWindowFocus();
  };
  ui.pending = config;
  ui.lr_input = config.train.lr;
  ui.checkpoint_dir = "runs/gui-" + config.name + "/checkpoint";

  // Default options: threads = 0 leaves a core for this thread.
  auto trainer = std::make_unique<Trainer>(config, TrainerOptions{});
  if (options.autostart) trainer->start();

  // Panels own GL textures: declared after the window, destroyed before it.
  gui::LossPanel loss_panel;
  gui::AttentionPanel attention_panel;
  gui::ConnectionPanel connection_panel;
  gui::KyLabPanel ky_lab_panel;
  gui::GeometryPanel geometry_panel;
  gui::NeuralPanel neural_panel;
  gui::ImageAttentionPanel image_attention_panel;
  for (const std::string& dir : options.compare_runs) image_attention_panel.add_run(dir);
  if (options.image_index >= 0) image_attention_panel.request_image(options.image_index);
  gui::ConnPanel conn_panel;
  gui::ExportDialog export_dialog;  // every panel's Export button opens it
  int export_hook_stage = options.export_figure.empty() ? -1 : 0;  // --export-figure
  int export_hook_frames = 0;
  // Compare: runs side by side (saved ones from --compare-dir, live ones from --compare-vary).
  gui::ComparePanel compare_panel;
  if (!options.compare_out.empty()) compare_panel.set_save_root(options.compare_out);
  for (const std::string& dir : options.compare_dirs) {
    visible.compare = true;
    if (!compare_panel.add_saved_run(dir))
      std::fprintf(stderr, "attnlab: --compare-dir: %s\n", compare_panel.error().c_str());
  }
  if (!options.compare_vary.empty()) {
    visible.compare = true;
    const auto eq = options.compare_vary.find('=');
    if (!compare_panel.start_runs(config, options.compare_vary.substr(0, eq),
                                  eq == std::string::npos ? "" : options.compare_vary.substr(eq + 1)))
      std::fprintf(stderr, "attnlab: --compare-vary: %s\n", compare_panel.error().c_str());
  }
  bool conn_may_auto_open = true;  // a conn model opens its panel once
  bool drawn[kPanelCount] = {};  // per gui_panel_names(), in the last frame
  render::FrameClock clock(benchmark ? options.exit_after_frames + 1 : 4096);
  int exit_code = 0;
  double frame_start = glfwGetTime();

  for (;;) {
    if (benchmark) {
      glfwPollEvents();
    } else {
      // Pace at ~60 fps while training or just after input, ~4 fps when idle; any event wakes
      // the loop at once. Vsync caps it further where the driver honours it.
      const double now = glfwGetTime();
      const bool active =
          trainer->state() == TrainerState::Running || now - window->last_event_time() < 0.5;
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

    // One snapshot and one state per frame; everything below draws from these.
    const std::shared_ptr<const Snapshot> snap = trainer->latest();
    const TrainerState state = trainer->state();

    cycled.clear();
    if (options.cycle_panels_every > 0 && clock.frames() % options.cycle_panels_every == 0) {
      const auto& names = gui_panel_names();
      cycled = names[(clock.frames() / options.cycle_panels_every) % names.size()];
      const bool keep_run = visible.run;
      visible = PanelVisibility{};
      visible.loss = visible.attention = false;
      visible.run = keep_run;
      *visible.by_name(cycled) = true;
      connections_may_auto_open = conn_may_auto_open = false;  // the cycle decides
    }
    window->begin_frame();
    handle_shortcuts(*window, *trainer, state, ui);
    const float menu_h = draw_menu_bar(visible, *trainer, state, ui);
    if (visible.connections)
      connections_may_auto_open = false;
    else if (connections_may_auto_open && !snap->connection_history().empty())
      visible.connections = true, connections_may_auto_open = false;
    if (visible.conn)
      conn_may_auto_open = false;
    else if (conn_may_auto_open && snap->conn)
      visible.conn = true, conn_may_auto_open = false;
    if (visible.run) {
      place_default(Slot::Run, menu_h, split_layout);
      focus_if_requested("run");
      gui::draw_run_panel(*snap, state, *trainer, ui, &visible.run);
    }
    if (visible.loss) {
      place_default(Slot::Loss, menu_h, split_layout);
      focus_if_requested("loss");
      loss_panel.draw(*snap, ui.small_font, &visible.loss);
    }
    if (visible.attention) {
      place_default(Slot::Attention, menu_h, split_layout);
      focus_if_requested("attention");
      attention_panel.draw(*snap, ui.small_font, &visible.attention);
    }
    if (visible.connections) {
      place_default(Slot::Connections, menu_h, split_layout);
      focus_if_requested("connections");
      connection_panel.draw(*snap, &visible.connections, ui.small_font);
    }
    if (visible.ky_lab) {
      place_default(Slot::KyLab, menu_h, split_layout);
      focus_if_requested("ky-lab");
      ky_lab_panel.draw(&visible.ky_lab, ui.small_font);
    }
    if (visible.geometry) {
      place_default(Slot::Geometry, menu_h, split_layout);
      focus_if_requested("geometry");
      geometry_panel.draw(&visible.geometry, ui.small_font);
    }
    if (visible.neural) {
      place_default(Slot::Neural, menu_h, split_layout);
      focus_if_requested("neural");
      neural_panel.draw(*snap, *trainer, ui.small_font, &visible.neural);
    }
    if (visible.image_attention) {
      place_default(Slot::ImageAttention, menu_h, split_layout);
      focus_if_requested("image-attention");
      image_attention_panel.draw(*snap, *trainer, ui.small_font, &visible.image_attention);
    }
    if (visible.conn) {
      place_default(Slot::Conn, menu_h, split_layout);
      focus_if_requested("conn");
      conn_panel.draw(*snap, ui.small_font, &visible.conn);
    }
    if (export_hook_stage == 0) {  // --export-figure: the same request a panel button makes
      for (const auto& spec : figures::figures_for(*snap))
        if (spec.name == options.export_figure && (snap->attention_step >= 0 || spec.name == "loss")) {
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
    if (visible.compare) {
      place_default(Slot::Compare, menu_h, split_layout);
      focus_if_requested("compare");
      compare_panel.draw(ui.pending, ui.small_font, &visible.compare);
    } else {
      compare_panel.poll();  // finished runs are saved even while the panel is closed
    }
    focus_requested = false;
    for (size_t i = 0; i < kPanelCount; ++i) drawn[i] = window_drawn(kPanelTitles[i]);
    window->render();

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
    window->swap();
    clock.on_present();
    // Shown in the Run panel: the cost of one frame (build, draw, present), not the pacing wait.
    ui.frame_ms = ui.frame_ms * 0.9 + (glfwGetTime() - frame_start) * 1000.0 * 0.1;
    if (last) break;
  }

  window->hide();  // the trainer may take a moment to finish its step; don't look frozen
  trainer.reset();
  if (const char* report = std::getenv("ATTN_GUI_REPORT"); report && *report) {
    if (!write_report(report, visible, drawn, connection_panel, geometry_panel, neural_panel,
                      image_attention_panel, export_dialog, compare_panel.report(),
                      clock.frames(), &error)) {
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
  return exit_code;  // panels, then the window, are destroyed here in reverse order
}

}  // namespace attn
