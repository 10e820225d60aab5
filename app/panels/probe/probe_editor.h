// The probe editor: one line above a panel's maps where the user types the probe input
// (characters for a text task; token ids or labels separated by spaces for a synthetic task).
// Shared by the Attention and Connections panels; Trainer::request_probe does the work, so the
// maps update at once for the live model and for a run opened from the Runs panel.
// The field's state is a ProbeEditorModel (probe_editor_model.h); this is its ImGui view.
// Contract: UI thread only; never waits. A refused probe (an unknown character, too long) is
// shown in red under the field from Snapshot::probe_error; the run goes on.
#pragma once
#include "app/gui/panel.h"
#include "app/panels/probe/probe_editor_model.h"

namespace attn::gui {

class ProbeEditor {
 public:
  void draw(FrameContext& frame);
  const ProbeEditorModel& model() const { return model_; }

 private:
  ProbeEditorModel model_;
};

}  // namespace attn::gui
