#include "app/panels/training/loss_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/ui_state.h"
#include "app/gui/window/widgets.h"
#include "core/training/trainer.h"

namespace attn::gui {

void LossPanel::draw_length_eval(FrameContext& frame) {
  // The model's task is read once per snapshot, not copied every frame.
  if (model_.task_stale(frame.snap)) model_.set_task(frame.snap, frame.trainer.config().task);
  if (model_.length_key().empty()) {
    report_.erase("length_eval");
    return;
  }
  ImGui::TextUnformatted("eval at");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  // Enter evaluates even when the value did not change (InputInt then returns false).
  const bool entered =
      ImGui::InputInt("##eval_length", &model_.eval_length, 0, 0,
                      ImGuiInputTextFlags_EnterReturnsTrue) ||
      (ImGui::IsItemDeactivated() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)));
  const ImVec2 f0 = ImGui::GetItemRectMin(), f1 = ImGui::GetItemRectMax();
  ImGui::SameLine();
  const bool clicked = ImGui::SmallButton("Evaluate");
  const ImVec2 b0 = ImGui::GetItemRectMin(), b1 = ImGui::GetItemRectMax();
  LossModel::LengthRow row = model_.length_row(frame.snap);
  if (entered || clicked) frame.trainer.request_length_eval(model_.eval_length);
  row.report["field"] = {f0.x, f0.y, f1.x, f1.y};
  row.report["button"] = {b0.x, b0.y, b1.x, b1.y};
  // The result (or the hint) follows the button when it fits, else takes the next line and
  // wraps there: at 1280x720 the panel is narrower than the hint.
  ImGui::SameLine();
  if (ImGui::CalcTextSize(row.text.c_str()).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
  ImGui::PushTextWrapPos(0);
  if (row.tone == LossModel::Tone::Warning)
    ImGui::TextColored(ImVec4(1.0f, 0.62f, 0.25f, 1.0f), "%s", row.text.c_str());
  else if (row.tone == LossModel::Tone::Disabled)
    ImGui::TextDisabled("%s", row.text.c_str());
  else
    ImGui::TextUnformatted(row.text.c_str());
  ImGui::PopTextWrapPos();
  report_["length_eval"] = std::move(row.report);
}

void LossPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  ImGui::SetNextItemWidth(160);
  ImGui::SliderFloat("smoothing", &model_.smoothing, 0.0f, 0.995f, "%.3f");
  // Each control after the first wraps to the next row where the tile is too narrow for it.
  same_line_if_fits(checkbox_width("log y"));
  ImGui::Checkbox("log y", &model_.log_y);
  same_line_if_fits(checkbox_width("accuracy"));
  ImGui::Checkbox("accuracy", &model_.show_accuracy);
  same_line_if_fits(button_width("Export..."));
  const bool empty = LossModel::empty(snap);
  const fig::Figure& figure = model_.figure(snap);
  ImGui::BeginDisabled(empty);
  if (ImGui::SmallButton("Export...")) request_figure_export(figure);
  ImGui::EndDisabled();
  if (!snap.train_loss.empty()) {
    char status[96];
    std::snprintf(status, sizeof status, "  step %lld  loss %.4f",
                  static_cast<long long>(snap.step), snap.train_loss.values.back());
    same_line_if_fits(ImGui::CalcTextSize(status).x);
    ImGui::TextDisabled("%s", status);
  }
  draw_length_eval(frame);
  if (empty) {
    ImGui::Dummy(ImVec2(0, ImGui::GetContentRegionAvail().y * 0.4f));
    ImGui::TextDisabled("No training steps yet: press Start (Space) or Step (S).");
    return;
  }
  // Never below a readable least height: the tile scrolls instead.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float least = LossModel::least_height(figure, ImGui::GetFontSize());
  plot_.draw(figure, ImVec2(avail.x, std::max(least, avail.y)), font);
  report_["plot_px"] = {ImGui::GetItemRectSize().x, ImGui::GetItemRectSize().y};
  report_["font_px"] = ImGui::GetFontSize();
  mark_timeline(plot_, frame.ui);
  if (const auto h = plot_.hover(figure)) {
    ImGui::GetWindowDrawList()->AddCircle(h->screen, 5.0f, IM_COL32(255, 255, 255, 220), 0, 1.5f);
    tooltip("%s %.4f\nstep %.0f", h->name.empty() ? "train (raw)" : h->name.c_str(), h->y, h->x);
  }
}

}  // namespace attn::gui
