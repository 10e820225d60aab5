// One frame of the window, without the window: the menu bar, the timeline bar, the workspace's
// panels, the menus' windows and the Export dialog, drawn between ImGui::NewFrame and
// ImGui::Render. run_gui (gui_main.cpp) calls it inside its GLFW frame loop, and the headless
// panel harness (tests/app/panel_harness.cpp) calls it in an ImGui context with no display, so
// the harness drives the window's own frame. Needs no GLFW and no GL of its own.
#pragma once
#include <functional>
#include <memory>

#include "core/training/trainer.h"

struct ImFont;

namespace attn::gui {

class Workspace;
class Menus;
class Timeline;
class ExportDialog;
struct UiState;

// What the window holds and a frame draws with; owned by the caller.
struct FrameParts {
  Trainer& trainer;
  UiState& ui;
  Workspace& workspace;
  Menus& menus;
  Timeline& timeline;
  ExportDialog& export_dialog;
};

// What one frame is drawn from: the snapshot and state taken once for the whole frame (the
// timeline already updated from them), the small font, the UI scale the View menu may change,
// and whether this frame keeps the focus that --run DIR --step N gave its tiles (its first).
struct FrameInput {
  std::shared_ptr<const Snapshot> live;
  TrainerState state = TrainerState::Idle;
  ImFont* small_font = nullptr;
  float* ui_scale = nullptr;  // the View menu's UI scale; never null
  bool keep_step_focus = false;
};

// Draws the frame's content (inside ImGui's frame; the caller begins and renders it).
// `before_export`, when given, runs after the panels and the menus' windows and before a figure
// export a panel requested opens the Export dialog (the window's fault notice and its
// --export-figure hook). Returns the snapshot the panels drew: the live one, or the timeline's
// recorded step.
std::shared_ptr<const Snapshot> draw_frame(
    FrameParts& parts, const FrameInput& input,
    const std::function<void(const Snapshot& shown)>& before_export = nullptr);

}  // namespace attn::gui
