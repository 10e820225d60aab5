#include "app/panels/attention/interventions_panel.h"

#include <imgui.h>

#include <algorithm>
#include <string>
#include <utility>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/timeline.h"
#include "app/gui/window/widgets.h"

namespace attn::gui {
namespace {

bool ablated(const InterventionRequest& r, int layer, int head) {
  return std::find(r.ablate.begin(), r.ablate.end(), HeadRef{layer, head}) != r.ablate.end();
}

// The screen rectangle (top-left, bottom-right) of data (x0, y0)..(x1, y1) of the plot's panel 0.
std::pair<ImVec2, ImVec2> screen_rect(const LiveFigure& plot, double x0, double y0, double x1,
                                      double y1) {
  const ImVec2 a = plot.to_screen(0, x0, y0), b = plot.to_screen(0, x1, y1);
  return {ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
          ImVec2(std::max(a.x, b.x), std::max(a.y, b.y))};
}

}  // namespace

nlohmann::json InterventionsPanel::report() const {
  nlohmann::json r = model_.report();
  r["plot_px"] = plot_px_;
  r["font_px"] = font_px_;
  return r;
}

// Ablation mode, importance, loss or accuracy, Restore all; true when the request changed.
bool InterventionsPanel::controls(InterventionRequest& r) {
  bool changed = false;
  int mode = static_cast<int>(r.mode);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  if (ImGui::Combo("ablation", &mode, "zero\0mean\0uniform\0"))
    changed |= InterventionsModel::set_mode(r, mode);
  if (ImGui::IsItemHovered())
    tooltip(
        "zero: the head's output is 0\nmean: its mean over the eval batches, per position\n"
        "uniform: it attends uniformly over the keys it may see");
  same_line_if_fits(checkbox_width("importance"));
  if (ImGui::Checkbox("importance", &r.importance)) changed = true;
  if (ImGui::IsItemHovered())
    tooltip(
        "Ablate each head alone and map the eval loss change (recomputed at every "
        "recorded step while training)");
  same_line_if_fits(checkbox_width("accuracy"));
  ImGui::Checkbox("accuracy", &model_.show_accuracy);
  if (ImGui::IsItemHovered()) tooltip("Map the accuracy change instead of the loss's");
  same_line_if_fits(button_width("Restore all"));
  ImGui::BeginDisabled(r.ablate.empty());
  if (ImGui::SmallButton("Restore all")) changed |= InterventionsModel::restore_all(r);
  ImGui::EndDisabled();
  return patch_controls(r) || changed;
}

// The patch's probes: typed, or the run's probe and the task's corrupted twin.
bool InterventionsPanel::patch_controls(InterventionRequest& r) {
  bool changed = false;
  // Both fields and Patch on one line where the hints fit whole, else the corrupted field and
  // Patch on a line of their own (a 1280x720 tile clipped "corrupted").
  const char* clean_hint = "clean: the run's probe";
  const char* corrupt_hint = "corrupted: the task's twin";
  const ImGuiStyle& style = ImGui::GetStyle();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float hint = ImGui::CalcTextSize(corrupt_hint).x + 2 * style.FramePadding.x;
  const float button = ImGui::CalcTextSize("Patch").x + 2 * style.FramePadding.x;
  const bool one_line = 2 * hint + button + 2 * style.ItemSpacing.x <= avail;
  const float field = one_line ? std::max(hint, avail * 0.3f) : avail;
  ImGui::SetNextItemWidth(field);
  ImGui::InputTextWithHint("##clean", clean_hint, model_.clean(),
                           InterventionsModel::kProbeCapacity);
  if (one_line) ImGui::SameLine();
  ImGui::SetNextItemWidth(one_line ? field : avail - button - style.ItemSpacing.x);
  ImGui::InputTextWithHint("##corrupt", corrupt_hint, model_.corrupt(),
                           InterventionsModel::kProbeCapacity);
  if (ImGui::IsItemHovered())
    tooltip(
        "Empty: the clean probe with one token changed so the answer changes "
        "(recall: the last queried key's value; copy: the copied symbol)");
  ImGui::SameLine();
  const bool patch_pressed = ImGui::SmallButton("Patch");
  model_.set_patch_button({ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y,
                           ImGui::GetItemRectMax().x, ImGui::GetItemRectMax().y});
  if (patch_pressed) changed |= model_.patch(r);
  if (r.patch) {
    ImGui::SameLine();
    if (ImGui::SmallButton("Stop patching")) changed |= InterventionsModel::stop_patching(r);
  }
  return changed;
}

void InterventionsPanel::summary(const Snapshot& snap, int64_t timeline_step) {
  const InterventionsModel::Summary s =
      InterventionsModel::summary(snap.interventions.get(), timeline_step);
  if (s.waiting) {
    ImGui::TextDisabled("%s", s.text.c_str());
    return;
  }
  if (!s.error.empty()) ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "%s", s.error.c_str());
  if (s.items.empty()) return;
  if (s.dimmed)
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  // Wrapped between its items, never inside a number (ImGui's wrapping breaks after a '.').
  const auto width = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
  for (const std::string& line : wrap_items(s.items, ImGui::GetContentRegionAvail().x, width))
    ImGui::TextUnformatted(line.c_str());
  if (s.dimmed) ImGui::PopStyleColor();
}

// The Export buttons, the importance map's step, and in a narrow tile the choice of map; true
// when the tile is narrow (one map at a time).
bool InterventionsPanel::toolbar(const InterventionView& v) {
  ImGui::BeginDisabled(!model_.have_importance());
  if (ImGui::SmallButton("Export importance...")) request_figure_export(model_.importance());
  ImGui::EndDisabled();
  same_line_if_fits(button_width("Export patching..."));
  ImGui::BeginDisabled(!model_.have_patch());
  if (ImGui::SmallButton("Export patching...")) request_figure_export(model_.patching());
  ImGui::EndDisabled();
  const std::string note = InterventionsModel::importance_note(v);
  if (!note.empty()) {
    same_line_if_fits(ImGui::CalcTextSize(note.c_str()).x);
    ImGui::TextDisabled("%s", note.c_str());
  }
  // Side by side in wide tiles; in narrow ones (a 1280x720 window's tile) one map at a time,
  // each the whole tile, chosen beside the Export buttons.
  const bool both = model_.have_importance() && model_.have_patch();
  const bool narrow = both && ImGui::GetContentRegionAvail().x < 40 * ImGui::GetFontSize();
  if (narrow) {
    same_line_if_fits(checkbox_width("importance") + checkbox_width("patching") +
                      ImGui::GetStyle().ItemSpacing.x);
    ImGui::RadioButton("importance##show", &model_.shown, 0);
    ImGui::SameLine();
    ImGui::RadioButton("patching##show", &model_.shown, 1);
  }
  return narrow;
}

// The importance map: its cells' rectangles for the tests, ablated heads outlined, and a click on
// a cell ablates or restores that head.
void InterventionsPanel::draw_importance(FrameContext& frame, ImVec2 size, ImFont* font) {
  const ImportanceTable& t = frame.snap.interventions->importance;
  importance_plot_.draw(model_.importance(), size, font);
  nlohmann::json cells = nlohmann::json::object();
  for (int l = 0; l < t.layers; ++l)
    for (int h = 0; h < t.heads; ++h) {
      const auto [a, b] = screen_rect(importance_plot_, h, l, h + 1, l + 1);
      cells[std::to_string(l) + "." + std::to_string(h)] = {a.x, a.y, b.x, b.y};
    }
  model_.set_cells(std::move(cells));
  for (const HeadRef& head : InterventionsModel::outlined(t, frame.ui.interventions.ablate)) {
    const auto [a, b] =
        screen_rect(importance_plot_, head.head, head.layer, head.head + 1, head.layer + 1);
    ImGui::GetWindowDrawList()->AddRect(a, b, IM_COL32(255, 190, 0, 255), 0, 0, 3.0f);
  }
  if (const auto c = importance_plot_.hover_cell(model_.importance())) {
    ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
    const bool is_ablated = ablated(frame.ui.interventions, c->row, c->col);
    tooltip("%s", model_.importance_text(t, c->row, c->col, c->value, is_ablated).c_str());
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left))
      toggle_ablated_head(frame.trainer, frame.ui, {c->row, c->col});
  }
}

void InterventionsPanel::draw_patch(const PatchTable& p, ImVec2 size, ImFont* font) {
  patch_plot_.draw(model_.patching(), size, font);
  if (const auto c = patch_plot_.hover_cell(model_.patching())) {
    ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
    tooltip("%s", InterventionsModel::patch_text(p, c->panel, c->row, c->col, c->value).c_str());
  }
}

// The causal tables recorded at the timeline's step (views.rec): their line, and the figure.
void InterventionsPanel::draw_recorded(ImVec2 size, ImFont* font) {
  if (!model_.have_recorded()) return;
  if (!model_.have_recorded_figure()) {
    ImGui::TextDisabled("%s", model_.recorded_line().c_str());
    return;
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", model_.recorded_line().c_str());
  ImGui::PopStyleColor();
  if (ImGui::SmallButton("Export recorded attribution..."))
    request_figure_export(model_.recorded());
  // What is left of the tile once the line and button are drawn, never below a readable least
  // nor below what the colorbars' labels need whole.
  const float least = std::max(10 * ImGui::GetFontSize(),
                               LiveFigure::colorbar_label_height(model_.recorded(), font));
  const float h = std::max(least, ImGui::GetContentRegionAvail().y);
  recorded_plot_.draw(model_.recorded(), ImVec2(size.x, h), font);
  plot_px_["recorded"] = {ImGui::GetItemRectSize().x, ImGui::GetItemRectSize().y};
  if (const auto c = recorded_plot_.hover_cell(model_.recorded())) {
    ImGui::GetWindowDrawList()->AddRect(c->min, c->max, IM_COL32(255, 80, 80, 255));
    tooltip("%s", InterventionsModel::recorded_text(c->panel, c->row, c->col, c->value,
                                                    model_.recorded_step())
                      .c_str());
  }
}

void InterventionsPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  plot_px_ = nlohmann::json::object();
  font_px_ = ImGui::GetFontSize();
  if (model_.first_show(frame.ui.interventions)) send_interventions(frame.trainer, frame.ui);
  if (controls(frame.ui.interventions)) send_interventions(frame.trainer, frame.ui);
  summary(snap, frame.ui.timeline_step);
  // The record is held while it is shown (the model keys its figure on it).
  record_ = frame.timeline ? frame.timeline->causal_record() : nullptr;
  model_.build_recorded(record_.get(), frame.ui.timeline_step, snap.step);
  const InterventionView* v = snap.interventions.get();
  model_.build(v);
  const float font_px = ImGui::GetFontSize();
  // The recorded tables take the lower part of the tile (a line alone when the step has none).
  const float recorded_h = !model_.have_recorded() ? 0.0f
                           : !model_.have_recorded_figure()
                               ? ImGui::GetFrameHeightWithSpacing()
                               : std::max(14 * font_px, 0.42f * ImGui::GetContentRegionAvail().y);
  if (!model_.have_importance() && !model_.have_patch()) {
    ImGui::TextDisabled("Tick importance, or press Patch, to map what each head does.");
    draw_recorded(ImGui::GetContentRegionAvail(), font);
    return;
  }
  const bool narrow = toolbar(*v);
  const bool draw_importance = model_.draws_importance(narrow);
  const bool draw_patch = model_.draws_patch(narrow);
  if (draw_patch && !v->patch.warning.empty())  // a difference too small to share out
    ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.2f, 1.0f), "%s", v->patch.warning.c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float w = draw_importance && draw_patch ? (avail.x - spacing) * 0.4f : avail.x;
  // A readable least height at any UI scale, the colorbars' labels whole (the panel scrolls).
  float least = 12 * font_px;
  if (draw_importance)
    least = std::max(least, LiveFigure::colorbar_label_height(model_.importance(), font));
  if (draw_patch)
    least = std::max(least, LiveFigure::colorbar_label_height(model_.patching(), font));
  const float h = std::max(least, avail.y - recorded_h);
  if (draw_importance) {
    this->draw_importance(frame, ImVec2(w, h), font);
    plot_px_["importance"] = {ImGui::GetItemRectSize().x, ImGui::GetItemRectSize().y};
  }
  if (draw_patch) {
    if (draw_importance) ImGui::SameLine();
    const ImVec2 rest = ImGui::GetContentRegionAvail();
    this->draw_patch(v->patch, ImVec2(draw_importance ? rest.x : avail.x, h), font);
    plot_px_["patch"] = {ImGui::GetItemRectSize().x, ImGui::GetItemRectSize().y};
  }
  draw_recorded(ImGui::GetContentRegionAvail(), font);
}

}  // namespace attn::gui
