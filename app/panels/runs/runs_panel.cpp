#include "app/panels/runs/runs_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "app/figures/runs/compare_figures.h"
#include "app/gui/plot/export_dialog.h"
#include "app/gui/window/widgets.h"
#include "core/training/trainer.h"

namespace attn::gui {

namespace {

std::string age_text(double seconds) {
  char buf[32];
  if (seconds < 90)
    std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  else if (seconds < 90 * 60)
    std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  else if (seconds < 36 * 3600)
    std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.1f d", seconds / 86400);
  return buf;
}

ImVec4 state_color(const std::string& state) {
  if (state == "live") return ImVec4(0.45f, 0.85f, 0.45f, 1);
  if (state == "diverged" || state == "unreadable" || state == "deleted")
    return ImVec4(1.0f, 0.45f, 0.4f, 1);
  if (state == "finished") return ImVec4(0.8f, 0.8f, 0.85f, 1);
  return ImVec4(0.95f, 0.75f, 0.35f, 1);  // paused, stopped, incomplete
}

}  // namespace

void RunsPanel::update(FrameContext& frame) {
  for (const std::string& checkpoint : model_.update(frame.snap, frame.ui, ImGui::GetTime()))
    frame.trainer.load_checkpoint(checkpoint);
}

void RunsPanel::draw_row(FrameContext& frame, size_t row, int color) {
  const RunView& f = model_.run(row);
  const RunDirectory* run = f.readable ? f.run.get() : nullptr;
  ImGui::TableNextRow();
  ImGui::PushID(static_cast<int>(row));
  ImGui::TableNextColumn();
  ImGui::Checkbox("##sel", &model_.selected(row));
  if (color >= 0) {
    ImGui::SameLine();
    const fig::Color c = figures::compare_color(color);
    ImGui::ColorButton("##c", ImVec4(c.r, c.g, c.b, 1),
                       ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoPicker,
                       ImVec2(ImGui::GetFontSize(), ImGui::GetFontSize()));
  }
  ImGui::TableNextColumn();
  ImGui::BeginDisabled(!model_.can_open(row));
  if (ImGui::SmallButton("Open")) {
    const std::string checkpoint = model_.open(row, frame.snap);
    if (!checkpoint.empty()) frame.trainer.load_checkpoint(checkpoint);
  }
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Load its checkpoint into the window (every view shows it)");
  ImGui::EndDisabled();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(model_.label(row).c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.dir.c_str());
  if (model_.own(row)) {
    ImGui::SameLine();
    ImGui::TextDisabled("(this window)");
  }
  ImGui::TableNextColumn();  // the config keys that tell the runs apart (W&B's runs table)
  const std::string differs = model_.differs(row);
  ImGui::TextUnformatted(differs.empty() ? "-" : differs.c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(run ? run->mechanism().c_str() : "-");
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(run ? run->config.task.name.c_str() : "-");
  ImGui::TableNextColumn();
  if (run)
    ImGui::Text("%lld/%lld", static_cast<long long>(f.last_step),
                static_cast<long long>(run->config.train.steps));
  else
    ImGui::TextDisabled("-");
  for (const Series* s : {run ? &run->eval_loss : nullptr, run ? &run->eval_accuracy : nullptr}) {
    ImGui::TableNextColumn();
    if (!s || s->values.empty())
      ImGui::TextDisabled("-");
    else
      ImGui::Text(s == &run->eval_loss ? "%.4f" : "%.3f", s->values.back());
  }
  ImGui::TableNextColumn();
  ImGui::TextColored(state_color(f.state), "%s", f.state.c_str());
  if (!f.error.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.error.c_str());
  ImGui::TableNextColumn();
  if (run) ImGui::TextUnformatted(age_text(seconds_since_file_time(f.newest_change_ns)).c_str());
  ImGui::PopID();
}

void RunsPanel::draw_table(FrameContext& frame) {
  // Open sits beside the tick, so it stays in view when the columns are wider than the tile.
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_ScrollX;
  const float rows = static_cast<float>(std::min<size_t>(model_.size(), 8) + 1);
  const float height = ImGui::GetFrameHeightWithSpacing() * (rows + 0.5f);
  if (!ImGui::BeginTable("runs", 11, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(2, 1);
  for (const char* h : {"", "", "run", "differs", "mechanism", "task", "step", "eval loss",
                        "eval acc", "state", "age"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  // Overlay colours in list order (the clipper below draws only the rows in view).
  const std::vector<int> colors = model_.color_indices();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(model_.size()));
  while (clipper.Step())
    for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row)
      draw_row(frame, static_cast<size_t>(row), colors[static_cast<size_t>(row)]);
  ImGui::EndTable();
}

void RunsPanel::draw(FrameContext& frame) {
  const std::string& root = model_.root();
  ImGui::TextDisabled("runs root: %s", root.empty() ? "(none: not recorded)" : root.c_str());
  ImGui::SetNextItemWidth(std::max(120.0f, ImGui::GetContentRegionAvail().x - 260));
  const bool enter =
      ImGui::InputTextWithHint("##add", "run directory or folder of runs", model_.add_field,
                               sizeof model_.add_field, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button("Add") || enter) && model_.add_dir(model_.add_field, true))
    model_.add_field[0] = '\0';
  ImGui::SameLine();
  if (ImGui::Button("Rescan")) model_.rescan();
  if (!model_.error().empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", model_.error().c_str());
  if (!model_.deleted_note().empty())
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.35f, 1), "%s", model_.deleted_note().c_str());
  if (!model_.note().empty()) ImGui::TextDisabled("%s", model_.note().c_str());
  if (model_.size() == 0) {
    ImGui::TextDisabled(
        "No runs yet: train one (Space), or add a directory that `attnlab train` "
        "writes.");
    return;
  }
  draw_table(frame);
  if (!model_.any_overlaid()) {
    ImGui::TextDisabled("Tick runs to overlay their curves.");
    return;
  }
  draw_overlay(frame);
}

void RunsPanel::draw_overlay(FrameContext& frame) {
  const fig::Figure& overlay = model_.overlay();
  if (ImGui::SmallButton("Export...")) request_figure_export(overlay, false);
  ImGui::SameLine();
  seed_bands_combo(&model_.seed_bands, "Ticked runs");
  ImFont* font = frame.small_font ? frame.small_font : ImGui::GetFont();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Drawn into a texture while nothing changes: two thousand runs are six thousand lines.
  curves_.draw(overlay, ImVec2(avail.x, std::max(140.0f, avail.y)), font, model_.overlay_serial());
  if (const auto h = curves_.hover(overlay)) {
    ImGui::GetWindowDrawList()->AddCircle(h->screen, 5.0f, IM_COL32(255, 255, 255, 220), 0, 1.5f);
    const fig::Panel& panel = overlay.panels[static_cast<size_t>(h->panel)];
    ImGui::SetTooltip("%s\n%s: %.4g at step %.0f", h->name.empty() ? "(unnamed)" : h->name.c_str(),
                      panel.title.c_str(), h->y, h->x);
  }
}

}  // namespace attn::gui
