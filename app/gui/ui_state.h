// UiState: what the window's panels share besides the snapshot and the trainer: the experiment
// being edited, notes to show, and the actions that both buttons and keyboard shortcuts use.
// Contract: touched only by the UI thread. Actions only queue trainer commands (never wait), and
// are no-ops in states where the trainer would ignore them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/training/trainer.h"
#include "core/views/intervention_view.h"
#include "core/views/snapshot.h"

struct ImFont;

namespace attn::gui {

struct UiState {
  ExperimentConfig pending;    // edited in the Run panel; applied with "Apply & reset"
  bool pending_dirty = false;  // differs from what the trainer was last given
  std::string config_source;   // where the experiment came from (path or "built-in defaults")
  std::string config_error;    // loading the config file failed (shown in red)
  std::string apply_error;     // the pending config did not validate (shown in red)
  std::string notes;           // font / layout fallbacks (shown in grey)
  // Save, Ctrl+S and Load's directory. Empty: Save writes into this run's own recorded directory
  // (Trainer::save_checkpoint); a typed run directory is taken under its lock, never one holding
  // a run this window did not write.
  std::string checkpoint_dir;
  double lr_input = 0;  // the "set learning rate" field
  double frame_ms = 0;  // smoothed frame time, for the status line
  // Runs to open (File > Open run, Recent runs): the Runs panel lists, ticks and loads them.
  std::vector<std::string> open_run_requests;
  std::vector<std::string> recent_runs;  // newest first, from the Runs panel (File > Recent runs)
  // The timeline (gui/timeline.h): the recorded step every panel shows (-1: the live model),
  // whether it plays, and a panel's request to move it (a click on a loss curve; -1: none).
  int64_t timeline_step = -1;
  bool timeline_playing = false;
  int64_t timeline_request = -1;
  ImFont* small_font = nullptr;
  // The Interventions panel's request (heads ablated, mode, importance, patch), shared so the
  // Attention panel can mark and toggle ablated heads; sent with send_interventions.
  InterventionRequest interventions;
};

// Sends the shared intervention request to the trainer (which answers in Snapshot::interventions).
inline void send_interventions(Trainer& trainer, const UiState& ui) {
  trainer.request_interventions(ui.interventions);
}

// Ablates the head if it is not ablated, else restores it; sends the request.
inline void toggle_ablated_head(Trainer& trainer, UiState& ui, HeadRef head) {
  auto& heads = ui.interventions.ablate;
  const auto it = std::find(heads.begin(), heads.end(), head);
  if (it == heads.end()) {
    heads.push_back(head);
    std::sort(heads.begin(), heads.end());
  } else {
    heads.erase(it);
  }
  send_interventions(trainer, ui);
}

inline bool can_start(TrainerState s) {
  return s == TrainerState::Idle || s == TrainerState::Paused || s == TrainerState::Diverged;
}
inline bool can_pause(TrainerState s) {
  return s == TrainerState::Running;
}
inline bool can_step(TrainerState s) {
  return can_start(s);
}
inline bool can_save(TrainerState s) {
  return s != TrainerState::Error && s != TrainerState::Stopping;
}

// Space: pause a running trainer, otherwise start it.
inline void toggle_running(Trainer& trainer, TrainerState s) {
  if (can_pause(s))
    trainer.pause();
  else if (can_start(s))
    trainer.start();
}

inline void save_checkpoint(Trainer& trainer, TrainerState s, const UiState& ui) {
  if (can_save(s)) trainer.save_checkpoint(ui.checkpoint_dir);
}

}  // namespace attn::gui
