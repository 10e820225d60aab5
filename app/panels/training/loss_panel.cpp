#include "panels/training/loss_panel.h"

#include <imgui.h>

#include <cstdio>

#include "gui/plot/export_dialog.h"

namespace attn::gui {

figures::FigureOptions LossPanel::options() const {
  figures::FigureOptions o;
  o.smoothing = smoothing_;
  o.log_y = log_y_;
  o.show_accuracy = show_accuracy_;
  return o;
}

void LossPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  ImGui::SetNextItemWidth(160);
  ImGui::SliderFloat("smoothing", &smoothing_, 0.0f, 0.995f, "%.3f");
  ImGui::SameLine();
  ImGui::Checkbox("log y", &log_y_);
  ImGui::SameLine();
  ImGui::Checkbox("accuracy", &show_accuracy_);
  ImGui::SameLine();
  const bool empty = snap.train_loss.empty() && snap.eval_loss.empty();
  if (!empty && (snap.serial != figure_serial_ || smoothing_ != built_smoothing_ ||
                 log_y_ != built_log_y_ || show_accuracy_ != built_accuracy_)) {
    figure_ = figures::loss_figure(snap, options());
    figure_serial_ = snap.serial;
    built_smoothing_ = smoothing_, built_log_y_ = log_y_, built_accuracy_ = show_accuracy_;
  }
  ImGui::BeginDisabled(empty);
  if (ImGui::SmallButton("Export...")) request_figure_export(figure_);
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (!snap.train_loss.empty())
    ImGui::TextDisabled("  step %lld  loss %.4f", static_cast<long long>(snap.step),
                        snap.train_loss.values.back());
  if (empty) {
    ImGui::Dummy(ImVec2(0, ImGui::GetContentRegionAvail().y * 0.4f));
    ImGui::TextDisabled("No training steps yet: press Start (Space) or Step (S).");
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  plot_.draw(figure_, ImVec2(avail.x, std::max(80.0f, avail.y)), font);
  mark_timeline(plot_, frame.ui);
  if (const auto h = plot_.hover(figure_)) {
    ImGui::GetWindowDrawList()->AddCircle(h->screen, 5.0f, IM_COL32(255, 255, 255, 220), 0, 1.5f);
    ImGui::SetTooltip("%s %.4f\nstep %.0f", h->name.empty() ? "train (raw)" : h->name.c_str(), h->y,
                      h->x);
  }
}

}  // namespace attn::gui
