#include "app/panels/training/loss_panel.h"

#include <imgui.h>

#include <cstdio>
#include <string>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/ui_state.h"
#include "core/training/interventions/length_eval.h"
#include "core/training/trainer.h"

namespace attn::gui {

figures::FigureOptions LossPanel::options() const {
  figures::FigureOptions o;
  o.smoothing = smoothing_;
  o.log_y = log_y_;
  o.show_accuracy = show_accuracy_;
  return o;
}

void LossPanel::draw_length_eval(FrameContext& frame) {
  // The model's task is read once per snapshot, not copied every frame.
  if (frame.snap.serial != task_serial_) {
    task_serial_ = frame.snap.serial;
    const ExperimentConfig config = frame.trainer.config();
    try {
      task_key_ = length_key(config.task);
      task_trained_ = task_length(config.task);
    } catch (const std::exception&) {
      task_key_.clear();  // modadd, images: no length to change
    }
  }
  if (task_key_.empty()) {
    report_.erase("length_eval");
    return;
  }
  const std::string& key = task_key_;
  // A new model (a loaded run, another config) refills the field: twice its training length.
  const int trained = task_trained_;
  if (trained != field_trained_ || key != field_key_) {
    eval_length_ = 2 * trained;
    field_trained_ = trained;
    field_key_ = key;
  }
  ImGui::TextUnformatted("eval at");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  // Enter evaluates even when the value did not change (InputInt then returns false).
  const bool entered =
      ImGui::InputInt("##eval_length", &eval_length_, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue) ||
      (ImGui::IsItemDeactivated() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)));
  const ImVec2 f0 = ImGui::GetItemRectMin(), f1 = ImGui::GetItemRectMax();
  eval_length_ = std::max(1, eval_length_);
  ImGui::SameLine();
  const bool clicked = ImGui::SmallButton("Evaluate");
  const ImVec2 b0 = ImGui::GetItemRectMin(), b1 = ImGui::GetItemRectMax();
  if (entered || clicked) frame.trainer.request_length_eval(eval_length_);
  nlohmann::json r = {{"key", key},
                      {"field", {f0.x, f0.y, f1.x, f1.y}},
                      {"button", {b0.x, b0.y, b1.x, b1.y}},
                      {"asked", eval_length_}};
  // The result (or the hint) follows the button when it fits, else takes the next line and
  // wraps there: at 1280x720 the panel is narrower than the hint.
  char line[256];
  std::string text;
  bool disabled = false, warning = false;
  if (const auto& v = frame.snap.length_eval) {
    r["length"] = v->length;
    r["step"] = v->step;
    r["error"] = v->error;
    if (v->error.empty()) {
      r["eval_loss"] = v->figures.loss;
      r["eval_accuracy"] = v->figures.accuracy;
      std::snprintf(line, sizeof line,
                    "%s %d (trained %d): loss %.4f, accuracy %.1f%% at step %lld", key.c_str(),
                    v->length, v->trained, v->figures.loss, 100 * v->figures.accuracy,
                    static_cast<long long>(v->step));
      text = line;
    } else {
      text = v->error;  // may be long: it wraps
      warning = true;
    }
  } else {
    text = key + " of the model's task; Evaluate or Enter";
    disabled = true;
  }
  ImGui::SameLine();
  if (ImGui::CalcTextSize(text.c_str()).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
  ImGui::PushTextWrapPos(0);
  if (warning)
    ImGui::TextColored(ImVec4(1.0f, 0.62f, 0.25f, 1.0f), "%s", text.c_str());
  else if (disabled)
    ImGui::TextDisabled("%s", text.c_str());
  else
    ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  report_["length_eval"] = r;
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
  draw_length_eval(frame);
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
