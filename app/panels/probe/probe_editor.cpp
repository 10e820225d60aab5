#include "app/panels/probe/probe_editor.h"

#include <imgui.h>

#include <cstring>

namespace attn::gui {

void ProbeEditor::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  if (!snap.probe_image.empty()) return;  // image tasks pick a test image instead
  // Follow the trainer's accepted probe (another panel's editor, a reset) unless being edited.
  if (snap.probe_text != shown_ && !ImGui::IsItemActive()) {
    shown_ = snap.probe_text;
    std::snprintf(text_, sizeof text_, "%s", shown_.c_str());
  }
  const bool text_task = snap.task == "text";
  ImGui::SetNextItemWidth(std::max(120.0f, ImGui::GetContentRegionAvail().x - 190));
  const bool enter =
      ImGui::InputTextWithHint("##probe",
                               text_task ? "type a probe: characters of the corpus"
                                         : "type a probe: token ids or labels, e.g. 3 1 4 1 5",
                               text_, sizeof text_, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button("Probe") || enter) frame.trainer.request_probe(text_);
  ImGui::SameLine();
  ImGui::BeginDisabled(snap.probe_text.empty());
  if (ImGui::Button("Task's probe")) {
    text_[0] = '\0';
    frame.trainer.request_probe("");
  }
  ImGui::EndDisabled();
  if (!snap.probe_error.empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", snap.probe_error.c_str());
}

}  // namespace attn::gui
