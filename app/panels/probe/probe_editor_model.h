// The probe editor's model (panels/probe/probe_editor.h draws it): the field's text, which
// follows the trainer's accepted probe (Snapshot::probe_text: another panel's editor, a reset)
// unless the user is editing it, and what a press of "Probe" or "Task's probe" asks the trainer.
// Contract: plain data, no ImGui, no torch; UI thread only.
#pragma once
#include <cstddef>
#include <string>

#include "core/views/snapshot.h"

namespace attn::gui {

class ProbeEditorModel {
 public:
  static constexpr size_t kCapacity = 512;  // bytes of the field, its terminating NUL included

  // Image tasks pick a test image instead: the editor is not shown.
  static bool shown(const Snapshot& snap) { return snap.probe_image.empty(); }
  // The field's hint: characters for a text task, token ids or labels for a synthetic one.
  static const char* hint(const Snapshot& snap);
  // "Task's probe" applies only while a typed probe is in use.
  static bool can_reset(const Snapshot& snap) { return !snap.probe_text.empty(); }

  // Fills the field from the snapshot's accepted probe when it changed, unless `editing`.
  void follow(const Snapshot& snap, bool editing);
  // The probe "Probe" (or Enter) asks the trainer for: the field as typed.
  std::string submit() const { return text_; }
  // "Task's probe": empties the field; the trainer is asked for "" (the task's own probe).
  std::string reset();

  // The field's buffer, for the view's text input (kCapacity bytes, NUL-terminated).
  char* buffer() { return text_; }
  std::string text() const { return text_; }
  void set_text(const std::string& text);  // as if typed (truncated to the field's capacity)

 private:
  char text_[kCapacity] = "";
  std::string shown_;  // the snapshot's probe_text the field was last filled from
};

}  // namespace attn::gui
