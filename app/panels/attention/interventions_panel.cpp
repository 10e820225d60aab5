#include "app/panels/attention/interventions_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "app/figures/intervention_figures.h"
#include "app/gui/plot/export_dialog.h"
#include "core/views/intervention_view.h"

namespace attn::gui {
namespace {

bool ablated(const InterventionRequest& r, int layer, int head) {
  return std::find(r.ablate.begin(), r.ablate.end(), HeadRef{layer, head}) != r.ablate.end();
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  return buf;
}

}  // namespace

void InterventionsPanel::update(FrameContext& frame) {
  const InterventionView* v = frame.snap.interventions.get();
  report_ = {{"ablate", head_list_text(frame.ui.interventions.ablate)},
             {"mode", ablation_mode_name(frame.ui.interventions.mode)},
             {"importance", v && !v->importance.empty()},
             {"patch", v && !v->patch.empty()},
             {"step", v ? v->step : -1},
             {"error", v ? v->error : ""}};
  if (v && !v->ablation.heads.empty()) {
    report_["ablated_loss"] = v->ablation.ablated.loss;
    report_["baseline_loss"] = v->ablation.baseline.loss;
  }
  if (v && !v->importance.empty()) report_["importance_step"] = v->importance.step;
  report_["cells"] = cells_;
  report_["patch_button"] = patch_button_;
}

void InterventionsPanel::controls(FrameContext& frame) {
  InterventionRequest& r = frame.ui.interventions;
  bool changed = false;
  int mode = static_cast<int>(r.mode);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  if (ImGui::Combo("ablation", &mode, "zero\0mean\0uniform\0")) {
    r.mode = static_cast<AblationMode>(mode);
    changed = true;
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "zero: the head's output is 0\nmean: its mean over the eval batches, per position\n"
        "uniform: it attends uniformly over the keys it may see");
  ImGui::SameLine();
  if (ImGui::Checkbox("importance", &r.importance)) changed = true;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Ablate each head alone and map the eval loss change (recomputed at every "
        "recorded step while training)");
  ImGui::SameLine();
  ImGui::Checkbox("accuracy", &show_accuracy_);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Map the accuracy change instead of the loss's");
  ImGui::SameLine();
  ImGui::BeginDisabled(r.ablate.empty());
  if (ImGui::SmallButton("Restore all")) {
    r.ablate.clear();
    changed = true;
  }
  ImGui::EndDisabled();
  // The patch's probes: typed, or the run's probe and the task's corrupted twin.
  const float field = std::max(80.0f, ImGui::GetContentRegionAvail().x * 0.3f);
  ImGui::SetNextItemWidth(field);
  ImGui::InputTextWithHint("##clean", "clean: the run's probe", clean_, sizeof clean_);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(field);
  ImGui::InputTextWithHint("##corrupt", "corrupted: the task's twin", corrupt_, sizeof corrupt_);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Empty: the clean probe with one token changed so the answer changes "
        "(recall: the last queried key's value; copy: the copied symbol)");
  ImGui::SameLine();
  const bool patch_pressed = ImGui::SmallButton("Patch");
  patch_button_ = {ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y, ImGui::GetItemRectMax().x,
                   ImGui::GetItemRectMax().y};
  if (patch_pressed) {
    r.patch = true;
    r.clean = clean_;
    r.corrupt = corrupt_;
    changed = true;
  }
  if (r.patch) {
    ImGui::SameLine();
    if (ImGui::SmallButton("Stop patching")) {
      r.patch = false;
      changed = true;
    }
  }
  if (changed) send_interventions(frame.trainer, frame.ui);
}

void InterventionsPanel::summary(const Snapshot& snap) {
  const InterventionView* v = snap.interventions.get();
  if (!v) {
    ImGui::TextDisabled("Asking the trainer...");
    return;
  }
  if (!v->error.empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", v->error.c_str());
  const AblationResult& a = v->ablation;
  if (!a.heads.empty()) {
    ImGui::TextWrapped(
        "%s ablation of %s at step %lld (%d eval batch%s): loss %.4f -> %.4f, "
        "accuracy %s -> %s; the probe predicts %s (%.2f) -> %s (%.2f)",
        ablation_mode_name(a.mode), head_list_text(a.heads).c_str(),
        static_cast<long long>(v->step), a.batches, a.batches == 1 ? "" : "es", a.baseline.loss,
        a.ablated.loss, percent(a.baseline.accuracy).c_str(), percent(a.ablated.accuracy).c_str(),
        v->prediction.c_str(), v->prediction_probability, v->ablated_prediction.c_str(),
        v->ablated_probability);
  } else if (v->step >= 0 && !v->prediction.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped(
        "No head ablated: click a cell of the importance map (or right-click a map "
        "in the Attention panel). Eval loss %.4f, accuracy %s at step %lld.",
        a.baseline.loss, percent(a.baseline.accuracy).c_str(), static_cast<long long>(v->step));
    ImGui::PopStyleColor();
  }
}

void InterventionsPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  if (!sent_) {  // first shown: the importance table is what a first look wants
    sent_ = true;
    frame.ui.interventions.importance = true;
    send_interventions(frame.trainer, frame.ui);
  }
  controls(frame);
  summary(snap);
  const InterventionView* v = snap.interventions.get();
  if (v != built_view_ || show_accuracy_ != built_accuracy_) {
    built_view_ = v;
    built_accuracy_ = show_accuracy_;
    have_importance_ = v && !v->importance.empty();
    have_patch_ = v && !v->patch.empty();
    if (have_importance_)
      importance_figure_ = figures::importance_figure(v->importance, show_accuracy_);
    if (have_patch_) patch_figure_ = figures::patch_figure(v->patch, true);
  }
  if (!have_importance_ && !have_patch_) {
    ImGui::TextDisabled("Tick importance, or press Patch, to map what each head does.");
    return;
  }
  ImGui::BeginDisabled(!have_importance_);
  if (ImGui::SmallButton("Export importance...")) request_figure_export(importance_figure_);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!have_patch_);
  if (ImGui::SmallButton("Export patching...")) request_figure_export(patch_figure_);
  ImGui::EndDisabled();
  if (have_importance_ && v->importance.step != v->step && v->step >= 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("importance recorded at step %lld",
                        static_cast<long long>(v->importance.step));
  }

  // Side by side in wide tiles; in narrow ones (a 1280x720 window's tile) one map at a time,
  // each the whole tile, chosen beside the Export buttons.
  const bool both = have_importance_ && have_patch_;
  const bool narrow = both && ImGui::GetContentRegionAvail().x < 40 * ImGui::GetFontSize();
  if (narrow) {
    ImGui::SameLine();
    ImGui::RadioButton("importance##show", &shown_, 0);
    ImGui::SameLine();
    ImGui::RadioButton("patching##show", &shown_, 1);
  }
  const bool draw_importance = have_importance_ && (!narrow || shown_ == 0);
  const bool draw_patch = have_patch_ && (!narrow || shown_ == 1);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float w = draw_importance && draw_patch ? (avail.x - spacing) * 0.4f : avail.x;
  const float h = std::max(100.0f, avail.y);
  if (draw_importance) {
    importance_plot_.draw(importance_figure_, ImVec2(w, h), font);
    const ImportanceTable& t = v->importance;
    cells_ = nlohmann::json::object();
    for (int l = 0; l < t.layers; ++l)
      for (int h = 0; h < t.heads; ++h) {
        const ImVec2 a = importance_plot_.to_screen(0, h, l),
                     b = importance_plot_.to_screen(0, h + 1, l + 1);
        cells_[std::to_string(l) + "." + std::to_string(h)] = {
            std::min(a.x, b.x), std::min(a.y, b.y), std::max(a.x, b.x), std::max(a.y, b.y)};
      }
    // Ablated heads outlined; a click on a cell ablates or restores that head.
    for (const HeadRef& head : frame.ui.interventions.ablate) {
      if (head.layer >= t.layers || head.head >= t.heads) continue;
      const ImVec2 a = importance_plot_.to_screen(0, head.head, head.layer);
      const ImVec2 b = importance_plot_.to_screen(0, head.head + 1, head.layer + 1);
      ImGui::GetWindowDrawList()->AddRect(ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
                                          ImVec2(std::max(a.x, b.x), std::max(a.y, b.y)),
                                          IM_COL32(255, 190, 0, 255), 0, 0, 3.0f);
    }
    if (const auto c = importance_plot_.hover_cell(importance_figure_)) {
      ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
      const bool is_ablated = ablated(frame.ui.interventions, c->row, c->col);
      ImGui::SetTooltip(
          "layer %d head %d: %s ablated alone changes the eval %s by %+.4f\n"
          "click: %s this head",
          c->row, c->col, ablation_mode_name(t.mode),
          show_accuracy_ ? "accuracy (points)" : "loss (nats)", c->value,
          is_ablated ? "restore" : "ablate");
      if (ImGui::IsMouseClicked(ImGuiMouseButton_Left))
        toggle_ablated_head(frame.trainer, frame.ui, {c->row, c->col});
    }
  }
  if (draw_patch) {
    if (draw_importance) ImGui::SameLine();
    const ImVec2 rest = ImGui::GetContentRegionAvail();
    patch_plot_.draw(patch_figure_, ImVec2(draw_importance ? rest.x : avail.x, h), font);
    if (const auto c = patch_plot_.hover_cell(patch_figure_)) {
      ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
      const PatchTable& p = v->patch;
      if (c->panel == 0)
        ImGui::SetTooltip("layer %d head %d restores %.3f of the %s difference", c->row, c->col,
                          c->value, p.metric.c_str());
      else
        ImGui::SetTooltip(
            "layer %d head %d at position %d (%s): restores %.3f", c->row / p.heads,
            c->row % p.heads, c->col,
            c->col < static_cast<int>(p.tokens.size()) ? p.tokens[c->col].c_str() : "?", c->value);
    }
  }
}

std::vector<std::string> InterventionsPanel::figures(const Snapshot& snap) const {
  std::vector<std::string> names;
  if (snap.interventions && !snap.interventions->importance.empty()) names.push_back("importance");
  if (snap.interventions && !snap.interventions->patch.empty()) names.push_back("patching");
  return names;
}

const fig::Figure* InterventionsPanel::shown_figure(const std::string& name) const {
  if (name == "importance" && have_importance_) return &importance_figure_;
  if (name == "patching" && have_patch_) return &patch_figure_;
  return nullptr;
}

}  // namespace attn::gui
