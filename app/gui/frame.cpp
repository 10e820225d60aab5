// The window's frame content (frame.h): the same code in the window and in the panel harness.
#include "app/gui/frame.h"

#include <imgui.h>

#include <cmath>
#include <cstdio>

#include "app/figures/catalog/figures.h"
#include "app/gui/help/menus.h"
#include "app/gui/layout/workspace.h"
#include "app/gui/panel.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/plot/live_figure.h"
#include "app/gui/timeline.h"
#include "app/gui/ui_state.h"
#include "core/base/version.h"

namespace attn::gui {
namespace {

// The main menu bar: File (gui/help/menus.h), Training (the keyboard shortcuts' actions), View
// (panels, tiles, layout, UI scale) and Help. Returns its height: the workspace starts below it.
float draw_menu_bar(FrameParts& p, TrainerState state, float* ui_scale, const Snapshot& live) {
  float height = 0;
  if (!ImGui::BeginMainMenuBar()) return height;
  p.menus.draw_file_menu(p.ui, live);
  if (ImGui::BeginMenu("Training")) {
    const bool pause = can_pause(state);
    if (ImGui::MenuItem(pause ? "Pause" : "Start", "Space", false, pause || can_start(state)))
      toggle_running(p.trainer, state);
    if (ImGui::MenuItem("Step once", "S", false, can_step(state))) p.trainer.step_once();
    if (ImGui::MenuItem("Save checkpoint", "Ctrl+S", false, can_save(state)))
      save_checkpoint(p.trainer, state, p.ui);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    p.workspace.draw_view_menu();
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
  p.menus.draw_help_menu();
  height = ImGui::GetWindowSize().y;
  ImGui::EndMainMenuBar();
  return height;
}

// A figure export a panel's button requested (gui/plot/live_figure.h) opens the Export dialog,
// with the run's provenance when the figure comes from the run.
void open_requested_export(FrameParts& p, const Snapshot& shown) {
  auto request = take_figure_export_request();
  if (!request) return;
  fig::Provenance prov;
  if (request->from_run) {
    prov = figures::provenance_for(shown, p.trainer.config(), "live");
  } else {
    prov.program_version = version_string();
    prov.run_id = "live";
  }
  p.export_dialog.open(std::move(*request), prov);
}

}  // namespace

std::shared_ptr<const Snapshot> draw_frame(
    FrameParts& p, const FrameInput& in,
    const std::function<void(const Snapshot& shown)>& before_export) {
  LiveFigure::captured().clear();
  p.ui.small_font = in.small_font;
  const float menu_h = draw_menu_bar(p, in.state, in.ui_scale, *in.live);
  // (--run DIR --step N's own request: Runs is open already and the panels asked for keep
  // their tiles' focus.)
  if (!p.ui.open_run_requests.empty() && !in.keep_step_focus) p.workspace.open("runs");
  p.workspace.set_ui_scale(*in.ui_scale);
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float top = menu_h + p.timeline.draw(0, menu_h, display.x, *in.ui_scale);
  const std::shared_ptr<const Snapshot> shown = p.timeline.view(in.live);
  FrameContext frame{*shown, in.state, p.trainer, p.ui, in.small_font, &p.timeline};
  p.workspace.draw(frame, ImVec2(0, top), ImVec2(display.x, display.y - top));
  p.menus.draw_windows(p.ui, p.trainer, *in.live);
  if (before_export) before_export(*shown);
  open_requested_export(p, *shown);
  p.export_dialog.draw(nullptr);
  return shown;
}

}  // namespace attn::gui
