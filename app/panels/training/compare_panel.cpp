#include "app/panels/training/compare_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/widgets.h"
#include "render/plot/colormap.h"

namespace attn::gui {
namespace {

const ImVec4 kRed(1.0f, 0.45f, 0.4f, 1.0f);

ImU32 to_u32(const float c[3], float alpha = 1.0f) {
  return ImGui::ColorConvertFloat4ToU32(ImVec4(c[0], c[1], c[2], alpha));
}

void number_cell(double v, const char* fmt) {
  ImGui::TableNextColumn();
  if (std::isfinite(v))
    ImGui::Text(fmt, v);
  else
    ImGui::TextDisabled("-");
}

}  // namespace

void ComparePanel::draw_controls(const ExperimentConfig& base) {
  ImGui::TextUnformatted("Vary");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(150);
  ImGui::InputText("##key", model_.key, sizeof model_.key);
  ImGui::SameLine();
  ImGui::TextUnformatted("=");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(160);
  ImGui::InputText("##values", model_.values, sizeof model_.values);
  ImGui::SameLine();
  if (ImGui::Button("Start runs")) model_.start_runs(base, model_.key, model_.values);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "One run per value from the Run panel's experiment: same seed, same data "
        "order. Recorded under %s as they train (the Runs panel lists them).",
        model_.save_root().c_str());
  ImGui::SetNextItemWidth(320);
  ImGui::InputTextWithHint("##dir", "run directory (attnlab train --out)", model_.dir,
                           sizeof model_.dir);
  ImGui::SameLine();
  if (ImGui::Button("Add saved run") && model_.dir[0]) model_.add_saved_run(model_.dir);
  if (!model_.error().empty()) ImGui::TextColored(kRed, "%s", model_.error().c_str());
}

void ComparePanel::draw(FrameContext& frame) {
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  draw_controls(frame.ui.pending);
  if (model_.size() == 0) {
    ImGui::TextDisabled("No runs yet: start some above, or add saved run directories.");
    return;
  }
  draw_table();
  ImGui::SetNextItemWidth(90);
  ImGui::Combo("y scale", &model_.y_scale, "auto\0linear\0log\0");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("auto: log when the loss curves span more than a decade");
  ImGui::SameLine();
  seed_bands_combo(&model_.seed_bands, "Runs");
  ImGui::SameLine();
  const fig::Figure& figure = model_.overlay();
  if (ImGui::SmallButton("Export...")) request_figure_export(figure, false);
  // Saved runs have no attention maps: the curves then take the whole rest of the panel.
  const bool maps = model_.any_maps();
  const float avail = ImGui::GetContentRegionAvail().y;
  draw_curves(figure, font, maps ? std::max(140.0f, avail * 0.45f) : std::max(140.0f, avail - 4),
              frame.ui);
  draw_maps(font);
}

void ComparePanel::draw_table() {
  // Scrolls both ways inside at most a third of the panel (at least three rows): long seed-group
  // labels and many runs then cost the table its width and height, never the plots theirs.
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_ScrollY;
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y + 1;
  // Header and rows, plus the horizontal scrollbar's own height (ScrollX draws it under the last
  // row; two-thirds of a row left the last row half hidden).
  const float wanted = (static_cast<float>(model_.size()) + 1) * row_h +
                       ImGui::GetStyle().ScrollbarSize + ImGui::GetStyle().CellPadding.y;
  const float height =
      std::min(wanted, std::max(4 * row_h, ImGui::GetContentRegionAvail().y * 0.33f));
  if (!ImGui::BeginTable("runs", 11, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(2, 1);  // colour and run name stay while the rest scrolls
  // "differs": the config keys that tell the runs apart (W&B's runs table), beside the name.
  for (const char* h : {"", "run", "differs", "state", "step", "eval loss", "eval acc",
                        "parameters", "attn params", "steps/s", "saved"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (size_t i = 0; i < model_.size(); ++i) {
    const CompareModel::Row row = model_.row(i);
    ImGui::TableNextRow();
    ImGui::PushID(static_cast<int>(i));
    ImGui::TableNextColumn();
    ImGui::ColorEdit3("##c", model_.color(i),
                      ImGuiColorEditFlags_NoInputs | ImGuiColorEditFlags_NoLabel);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.label.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.differs.empty() ? "-" : row.differs.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.state.c_str());
    number_cell(row.step, "%.0f");
    number_cell(row.eval_loss, "%.4f");
    number_cell(row.eval_accuracy, "%.4f");
    number_cell(row.parameters, "%.0f");
    number_cell(row.attention_parameters, "%.0f");
    number_cell(row.steps_per_second, "%.1f");
    ImGui::TableNextColumn();
    if (row.tone == CompareModel::SavedTone::Failed)
      ImGui::TextColored(kRed, "%s", row.saved.c_str());
    else if (row.tone == CompareModel::SavedTone::Recording)
      ImGui::TextDisabled("%s", row.saved.c_str());
    else
      ImGui::TextUnformatted(row.saved.c_str());
    ImGui::PopID();
  }
  ImGui::EndTable();
}

void ComparePanel::draw_curves(const fig::Figure& figure, ImFont* font, float height, UiState& ui) {
  if (!model_.any_metrics()) {
    ImGui::TextDisabled("No metrics yet.");
    return;
  }
  curves_.draw(figure, ImVec2(ImGui::GetContentRegionAvail().x, height), font);
  mark_timeline(curves_, ui);
  if (const auto h = curves_.hover(figure)) {
    ImGui::GetWindowDrawList()->AddCircle(h->screen, 5.0f, IM_COL32(255, 255, 255, 220), 0, 1.5f);
    const fig::Panel& panel = figure.panels[static_cast<size_t>(h->panel)];
    ImGui::SetTooltip("%s\n%s: %.4g at step %.0f", h->name.empty() ? "(unnamed)" : h->name.c_str(),
                      panel.title.c_str(), h->y, h->x);
  }
}

void ComparePanel::draw_maps(ImFont* font) {
  const int layers = model_.map_layers(), heads = model_.map_heads();
  if (layers == 0) return;
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("layer", &model_.layer, 0, layers - 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("head", &model_.head, 0, std::max(0, heads - 1));
  ImGui::SameLine();
  ImGui::TextDisabled("probe input's attention (row = query, column = key)");
  const float side =
      std::clamp(ImGui::GetContentRegionAvail().y - font->FontSize * 2, 80.0f, 220.0f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  const float x0 = p.x;
  int shown = 0;
  for (const CompareModel::MapShown& m : model_.maps()) {
    if (shown > 0 && p.x + side > x0 + ImGui::GetContentRegionAvail().x) break;
    dl->AddText(font, font->FontSize, p, to_u32(m.color), m.label.c_str());
    const ImVec2 m0(p.x, p.y + font->FontSize + 2);
    const int n = m.map->size;
    const float cell = side / n;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const render::Rgba8 c = render::viridis(m.map->weights[i * n + j]);
        dl->AddRectFilled(ImVec2(m0.x + j * cell, m0.y + i * cell),
                          ImVec2(m0.x + (j + 1) * cell, m0.y + (i + 1) * cell),
                          IM_COL32(c.r, c.g, c.b, 255));
      }
    dl->AddRect(m0, ImVec2(m0.x + side, m0.y + side), to_u32(m.color), 0, 0, 2.0f);
    p.x += side + 14;
    ++shown;
  }
  ImGui::Dummy(ImVec2(ImGui::GetContentRegionAvail().x, side + font->FontSize + 6));
}

}  // namespace attn::gui
