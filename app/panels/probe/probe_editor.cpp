#include "app/panels/probe/probe_editor.h"

#include <imgui.h>

#include <algorithm>

namespace attn::gui {

void ProbeEditor::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  if (!ProbeEditorModel::shown(snap)) return;
  model_.follow(snap, ImGui::IsItemActive());
  ImGui::SetNextItemWidth(std::max(120.0f, ImGui::GetContentRegionAvail().x - 190));
  const bool enter =
      ImGui::InputTextWithHint("##probe", ProbeEditorModel::hint(snap), model_.buffer(),
                               ProbeEditorModel::kCapacity, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button("Probe") || enter) frame.trainer.request_probe(model_.submit());
  ImGui::SameLine();
  ImGui::BeginDisabled(!ProbeEditorModel::can_reset(snap));
  if (ImGui::Button("Task's probe")) frame.trainer.request_probe(model_.reset());
  ImGui::EndDisabled();
  if (!snap.probe_error.empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", snap.probe_error.c_str());
}

}  // namespace attn::gui
