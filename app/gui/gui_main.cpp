// run_gui(): the window's main loop. Loads the experiment, starts the trainer thread, and draws
// the Run, Loss and Attention panels from one snapshot per frame; never waits for the trainer.
#include <imgui.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/config.h"
#include "core/trainer.h"
#include "gui.h"
#include "gui/ui_state.h"
#include "gui/window.h"
#include "panels/attention_panel.h"
#include "panels/loss_panel.h"
#include "panels/run_panel.h"
#include "render/frame_stats.h"
#include "render/screenshot.h"

namespace attn {
namespace {

// Ctrl+C or kill: close the window the normal way (trainer stopped, layout saved).
std::atomic<bool> g_quit_requested{false};
extern "C" void request_quit(int) { g_quit_requested.store(true); }

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

// First-launch tiling (ImGuiCond_FirstUseEver: a saved layout wins): Run on the left, Loss
// top-right, Attention bottom-right.
enum class Slot { Run, Loss, Attention };
void place_default(Slot slot) {
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  const float left_w = std::clamp(d.x * 0.3f, 320.0f, 420.0f);
  const float top_h = std::floor(d.y * 0.42f);
  ImVec2 pos, size;
  switch (slot) {
    case Slot::Run:
      pos = {0, 0}, size = {left_w, d.y};
      break;
    case Slot::Loss:
      pos = {left_w, 0}, size = {d.x - left_w, top_h};
      break;
    case Slot::Attention:
      pos = {left_w, top_h}, size = {d.x - left_w, d.y - top_h};
      break;
  }
  ImGui::SetNextWindowPos(pos, ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(size, ImGuiCond_FirstUseEver);
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

int run_gui(const GuiOptions& options) {
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
  ui.pending = config;
  ui.lr_input = config.train.lr;
  ui.checkpoint_dir = "runs/gui-" + config.name + "/checkpoint";

  // Default options: threads = 0 leaves a core for this thread.
  auto trainer = std::make_unique<Trainer>(config, TrainerOptions{});
  if (options.autostart) trainer->start();

  // Panels own GL textures: declared after the window, destroyed before it.
  gui::LossPanel loss_panel;
  gui::AttentionPanel attention_panel;
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

    window->begin_frame();
    handle_shortcuts(*window, *trainer, state, ui);
    place_default(Slot::Run);
    gui::draw_run_panel(*snap, state, *trainer, ui);
    place_default(Slot::Loss);
    loss_panel.draw(*snap, ui.small_font);
    place_default(Slot::Attention);
    attention_panel.draw(*snap, ui.small_font);
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
