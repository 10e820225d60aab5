#include "app/panels/probe/probe_editor.h"

#include <imgui.h>

#include <algorithm>

#include "app/gui/window/widgets.h"

namespace attn::gui {

void ProbeEditor::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  if (!ProbeEditorModel::shown(snap)) return;
  model_.follow(snap, ImGui::IsItemActive());
  // The field leaves the two buttons their width at any UI scale (at scale 2 a fixed 190 px cut
  // "Task's probe"); in a tile too narrow for that they wrap to the next row.
  const float buttons =
      button_width("Probe") + button_width("Task's probe") + 2 * ImGui::GetStyle().ItemSpacing.x;
  ImGui::SetNextItemWidth(
      std::max(8 * ImGui::GetFontSize(), ImGui::GetContentRegionAvail().x - buttons));
  const bool enter =
      ImGui::InputTextWithHint("##probe", ProbeEditorModel::hint(snap), model_.buffer(),
                               ProbeEditorModel::kCapacity, ImGuiInputTextFlags_EnterReturnsTrue);
  same_line_if_fits(button_width("Probe"));
  if (ImGui::Button("Probe") || enter) frame.trainer.request_probe(model_.submit());
  same_line_if_fits(button_width("Task's probe"));
  ImGui::BeginDisabled(!ProbeEditorModel::can_reset(snap));
  if (ImGui::Button("Task's probe")) frame.trainer.request_probe(model_.reset());
  ImGui::EndDisabled();
  if (!snap.probe_error.empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", snap.probe_error.c_str());
}

}  // namespace attn::gui
