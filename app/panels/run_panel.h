// Run panel: trainer controls (start, pause, step, reset, save/load, live learning rate), the
// run's status from the snapshot, and the experiment editor ("Apply & reset").
// Contract: draws one ImGui window named "Run". Reads the snapshot and `state` (taken once per
// frame by the caller); talks to the trainer only through its non-blocking commands, except
// trainer.config() on "Revert" (a short copy under the trainer's lock, never a training step).
#pragma once
#include "core/views/snapshot.h"
#include "core/training/trainer.h"
#include "gui/ui_state.h"

namespace attn::gui {

// open: the window's close button (may be null: no button).
void draw_run_panel(const Snapshot& snap, TrainerState state, Trainer& trainer, UiState& ui,
                    bool* open = nullptr);

}  // namespace attn::gui
