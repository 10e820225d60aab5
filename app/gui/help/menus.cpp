#include "app/gui/help/menus.h"

#include <imgui.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "app/common/data_paths.h"
#include "app/gui/help/experiment_notes.h"
#include "core/base/atomic_file.h"
#include "core/config/config.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/recording/saved_run.h"

namespace attn::gui {
namespace fs = std::filesystem;

namespace {

const ImVec4 kRed(1.0f, 0.45f, 0.4f, 1), kAmber(0.95f, 0.75f, 0.35f, 1);

void place_window(float width_share, float height_share) {
  const ImVec2 d = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowSize(ImVec2(d.x * width_share, d.y * height_share), ImGuiCond_Appearing);
  ImGui::SetNextWindowPos(ImVec2(d.x * 0.5f, d.y * 0.5f), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
}

// The run directory whose checkpoint File > Export weights writes: the window's own recording of
// the model, else the run it was opened from; "" when neither has a checkpoint.
std::string weights_source(const Snapshot& live) {
  for (const std::string& dir : {live.run_dir, live.source_dir})
    if (!dir.empty() && fs::is_directory(fs::path(dir) / "checkpoint")) return dir;
  return "";
}

std::string configs_dir() {
  const std::string copy = find_data_path("configs/copy.json");
  return copy.empty() ? "" : fs::path(copy).parent_path().string();
}

}  // namespace

Menus::Menus(bool first_launch) : guide_open_(first_launch) {
  if (const char* hook = std::getenv("ATTN_GUI_EXPORT_WEIGHTS")) weights_hook_ = hook;
}

bool Menus::load_config(const std::string& path, UiState& ui, Trainer& trainer) {
  try {
    ExperimentConfig c = load_config_file(path);
    ui.pending = c;
    ui.pending_dirty = false;
    ui.apply_error.clear();
    ui.config_error.clear();
    ui.config_source = path;
    ui.lr_input = c.train.lr;
    trainer.reconfigure(std::move(c));  // the current model's run is saved first (recording)
    error_.clear();
    return true;
  } catch (const std::exception& e) {
    error_ = e.what();
    return false;
  }
}

void Menus::draw_file_menu(UiState& ui, const Snapshot& live) {
  if (!ImGui::BeginMenu("File")) return;
  if (ImGui::MenuItem("Open config...")) open_config_ = true, error_.clear();
  if (ImGui::MenuItem("Open run...")) open_run_ = true, error_.clear();
  if (ImGui::BeginMenu("Recent runs", !ui.recent_runs.empty())) {
    for (const std::string& dir : ui.recent_runs)
      if (ImGui::MenuItem(fs::path(dir).filename().string().c_str()))
        ui.open_run_requests.push_back(dir);
    ImGui::EndMenu();
  }
  const std::string source = weights_source(live);
  if (ImGui::MenuItem("Export weights...", nullptr, false, !source.empty())) {
    export_weights_ = true, weights_dir_ = source, error_.clear();
    std::snprintf(weights_path_, sizeof weights_path_, "%s",
                  (fs::path(source) / "weights.safetensors").string().c_str());
  }
  if (source.empty() && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("No checkpoint yet: pause or save the run first");
  ImGui::EndMenu();
}

std::string Menus::export_weights(const std::string& dir, const std::string& path) {
  if (fs::path(path).extension() != ".safetensors")
    return path + ": the file must end in .safetensors";
  std::error_code ec;
  if (fs::exists(path, ec))
    return path + " exists: weights go to a new file only (choose another name)";
  try {
    write_file_atomic(path, weights_file_of_run(read_run_directory(dir)));
  } catch (const std::exception& e) {
    return e.what();
  }
  weights_written_ = path;
  return "";
}

void Menus::draw_export_weights() {
  const std::string help =
      "The checkpoint of " + weights_dir_ +
      " (the run's last save: Pause or Save checkpoint first for the current model) as "
      "safetensors, with the resolved config; docs/guide/python.md reads it in PyTorch.";
  if (draw_path_dialog("Export weights", &export_weights_, help, "path/to/weights.safetensors",
                       weights_path_, sizeof weights_path_, "Write")) {
    error_ = export_weights(weights_dir_, weights_path_);
    if (error_.empty()) export_weights_ = false;
  }
}

void Menus::draw_help_menu() {
  if (!ImGui::BeginMenu("Help")) return;
  if (ImGui::MenuItem("Getting started", nullptr, guide_open_)) guide_open_ = !guide_open_;
  if (ImGui::MenuItem("Experiments...", nullptr, picker_open_)) picker_open_ = !picker_open_;
  ImGui::EndMenu();
}

void Menus::draw_windows(UiState& ui, Trainer& trainer, const Snapshot& live) {
  if (!weights_hook_.empty())
    if (const std::string source = weights_source(live); !source.empty()) {
      weights_error_ = export_weights(source, weights_hook_);
      weights_hook_.clear();
    }
  if (export_weights_) draw_export_weights();
  if (guide_open_) draw_guide();
  if (picker_open_) draw_picker(ui, trainer);
  if (open_config_) draw_open_config(ui, trainer);
  if (open_run_) draw_open_run(ui);
}

void Menus::draw_guide() {
  place_window(0.5f, 0.6f);
  if (!ImGui::Begin("Getting started", &guide_open_, ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return;
  }
  auto para = [](const char* text) {
    ImGui::TextWrapped("%s", text);
    ImGui::Spacing();
  };
  para("attnlab trains a small attention model on a background thread and shows what it learns.");
  para(
      "1. Pick an experiment: Help > Experiments lists every shipped config with what it is "
      "meant to show (some fail on purpose). File > Open config opens any other file.");
  para(
      "2. Train: Space starts and pauses, S takes one step. The Run panel edits the config "
      "(Apply & reset starts a fresh model).");
  para(
      "3. Watch: Loss shows the curves; Attention shows every layer and head on the probe "
      "input; type your own probe above the maps. Connections (ky), Neural and Connection "
      "Transformer open by themselves for their mechanisms.");
  para(
      "4. Every run is recorded: a run directory in the format of `attnlab train` under the "
      "runs root ($XDG_DATA_HOME/attnlab/runs, or --runs-dir), with metrics while it trains and a "
      "checkpoint and summary whenever it pauses, finishes, resets or the window closes.");
  para(
      "5. Runs (View > Runs) lists them and any folder you add, including runs another process "
      "is still writing (`attnlab gui --run DIR` follows a headless GPU run over a shared "
      "filesystem). Tick runs to overlay their curves; Open loads one into the window.");
  para(
      "6. View arranges the tiles; every plot's Export writes what it shows as PDF, SVG, PNG or "
      "CSV.");
  if (ImGui::Button("Show the experiments")) picker_open_ = true;
  ImGui::SameLine();
  if (ImGui::Button("Close")) guide_open_ = false;
  ImGui::End();
}

void Menus::draw_picker(UiState& ui, Trainer& trainer) {
  place_window(0.7f, 0.7f);
  if (!ImGui::Begin("Experiments", &picker_open_, ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return;
  }
  const std::string dir = configs_dir();
  if (dir.empty())
    ImGui::TextColored(
        kRed, "The shipped configs were not found (attnlab --version says where it looked).");
  if (!error_.empty()) ImGui::TextColored(kRed, "%s", error_.c_str());
  ImGui::TextDisabled(
      "Open starts a fresh model from the config (the current run is saved first).");
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("experiments", 3, flags)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("experiment", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("what it shows", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    const char* group = "";
    int row = 0;
    listed_.clear();
    listed_dir_ = dir;
    for (const ExperimentNote& n : experiment_notes()) {
      ImGui::PushID(row++);
      if (std::string(group) != n.group) {
        group = n.group;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", group);
      }
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      listed_.push_back(n.file);
      const std::string name = fs::path(n.file).stem().string();
      ImGui::TextUnformatted(name.c_str());
      ImGui::TableNextColumn();
      if (n.meant_to_fail) ImGui::PushStyleColor(ImGuiCol_Text, kAmber);
      ImGui::TextWrapped("%s", n.sentence);
      if (n.meant_to_fail) ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      ImGui::BeginDisabled(dir.empty());
      if (ImGui::SmallButton("Open") && load_config((fs::path(dir) / n.file).string(), ui, trainer))
        picker_open_ = false;
      ImGui::EndDisabled();
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  ImGui::End();
}

nlohmann::json Menus::report() const {
  return {{"guide", guide_open_},
          {"experiments", picker_open_},
          {"listed", listed_},
          {"configs_dir", listed_dir_},
          {"error", error_},
          {"weights_written", weights_written_},
          {"weights_error", weights_error_}};
}

// A small window asking for one path: its help line, the field and "Open". Returns true when
// the user asked to open what the field holds (button or Enter); the window stays open until the
// caller closes it.
bool Menus::draw_path_dialog(const char* title, bool* open, const std::string& help,
                             const char* hint, char* path, size_t size, const char* button) {
  place_window(0.45f, 0.25f);
  if (!ImGui::Begin(title, open, ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return false;
  }
  ImGui::TextWrapped("%s", help.c_str());
  ImGui::SetNextItemWidth(-80);
  const bool enter =
      ImGui::InputTextWithHint("##path", hint, path, size, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  const bool asked = ImGui::Button(button) || enter;
  if (!error_.empty()) ImGui::TextColored(kRed, "%s", error_.c_str());
  ImGui::End();
  return asked;
}

void Menus::draw_open_config(UiState& ui, Trainer& trainer) {
  const std::string help = "A config file (JSON). The shipped ones are in " +
                           (configs_dir().empty() ? std::string("(not found)") : configs_dir()) +
                           "; Help > Experiments describes them.";
  if (draw_path_dialog("Open config", &open_config_, help, "path/to/config.json", config_path_,
                       sizeof config_path_) &&
      load_config(config_path_, ui, trainer))
    open_config_ = false;
}

void Menus::draw_open_run(UiState& ui) {
  if (!draw_path_dialog("Open run", &open_run_,
                        "A run directory (`attnlab train --out`, or one the window recorded) or a "
                        "folder of runs (a sweep): listed and followed in the Runs panel; a run "
                        "with a checkpoint is loaded into the window.",
                        "path/to/run", run_path_, sizeof run_path_))
    return;
  std::error_code ec;
  if (!fs::is_directory(run_path_, ec)) {
    error_ = std::string("Open run: ") + run_path_ + " is not a directory";
  } else {
    ui.open_run_requests.push_back(run_path_);
    error_.clear();
    open_run_ = false;
  }
}

}  // namespace attn::gui
