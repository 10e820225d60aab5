#include "app/panels/probe/probe_editor_model.h"

#include <cstdio>

namespace attn::gui {

const char* ProbeEditorModel::hint(const Snapshot& snap) {
  return snap.task == "text" ? "type a probe: characters of the corpus"
                             : "type a probe: token ids or labels, e.g. 3 1 4 1 5";
}

void ProbeEditorModel::follow(const Snapshot& snap, bool editing) {
  if (snap.probe_text == shown_ || editing) return;
  shown_ = snap.probe_text;
  set_text(shown_);
}

std::string ProbeEditorModel::reset() {
  text_[0] = '\0';
  return "";
}

void ProbeEditorModel::set_text(const std::string& text) {
  std::snprintf(text_, sizeof text_, "%s", text.c_str());
}

}  // namespace attn::gui
