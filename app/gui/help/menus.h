// The File and Help menus and the windows they open.
// File: Open config (the shipped experiments, or any path), Open run (a run directory or a
// folder of runs, listed and followed in the Runs panel), Recent runs (the Runs panel's newest),
// Export weights (the checkpoint of the run on screen as safetensors, as `attnlab export
// --weights` writes it; never over an existing file).
// Help: the first-run guide (shown by itself on a first launch) and the experiment picker (every
// shipped config with what it is meant to show, gui/help/experiment_notes.h).
// Contract: UI thread only; never waits for the trainer. A config that cannot be loaded is
// named with the reason in the window that asked for it, and nothing changes; opening a run
// queues UiState::open_run_requests for the Runs panel (panels/runs/runs_panel.h).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/gui/ui_state.h"
#include "core/training/trainer.h"

namespace attn::gui {

class Menus {
 public:
  // first_launch: show the guide at once.
  explicit Menus(bool first_launch);

  // Inside BeginMainMenuBar: the File menu (before Training) and the Help menu (last).
  void draw_file_menu(UiState& ui, const Snapshot& live);
  void draw_help_menu();
  // The windows the menus opened; after the workspace, so they float above it.
  // live: the model's snapshot (its run directory for Export weights). ATTN_GUI_EXPORT_WEIGHTS
  // (test hook): export the weights there once the run on screen has a checkpoint.
  void draw_windows(UiState& ui, Trainer& trainer, const Snapshot& live);

  bool guide_open() const { return guide_open_; }
  bool picker_open() const { return picker_open_; }
  // Test hook (ATTN_GUI_OPEN_HELP): open the guide and/or the picker as if chosen in Help.
  void open(bool guide, bool picker) { guide_open_ |= guide, picker_open_ |= picker; }
  // For ATTN_GUI_REPORT ("help"): which windows are open, and the experiments the picker
  // listed in its last frame (config file names, in order) with the configs directory.
  nlohmann::json report() const;

 private:
  void draw_guide();
  void draw_picker(UiState& ui, Trainer& trainer);
  void draw_open_config(UiState& ui, Trainer& trainer);
  void draw_open_run(UiState& ui);
  void draw_export_weights();
  // Writes the checkpoint of run directory `dir` to `path` (a new .safetensors file); "" or why
  // not.
  std::string export_weights(const std::string& dir, const std::string& path);
  bool draw_path_dialog(const char* title, bool* open, const std::string& help, const char* hint,
                        char* path, size_t size, const char* button = "Open");
  bool load_config(const std::string& path, UiState& ui, Trainer& trainer);

  bool guide_open_ = false, picker_open_ = false, open_config_ = false, open_run_ = false;
  bool export_weights_ = false;
  char weights_path_[512] = "";
  std::string weights_dir_;      // the run whose checkpoint Export weights writes
  std::string weights_written_;  // the last file written (report, and the dialog's note)
  std::string weights_error_;    // the test hook's outcome when it failed
  std::string weights_hook_;     // ATTN_GUI_EXPORT_WEIGHTS, read once; "" when unset or done
  char config_path_[512] = "";
  char run_path_[512] = "";
  std::string error_;
  std::vector<std::string> listed_;  // the picker's rows last frame
  std::string listed_dir_;
};

}  // namespace attn::gui
