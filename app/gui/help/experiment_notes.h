// What each shipped experiment (assets/configs/*.json) is meant to show, in one sentence, for
// the Help menu's experiment picker. Plain data: no ImGui, no torch (tests/app checks that every
// shipped config has a note and every note names a shipped config).
#pragma once
#include <string>
#include <vector>

namespace attn::gui {

struct ExperimentNote {
  const char* file;      // under the configs directory, e.g. "copy_gap_ky.json"
  const char* group;     // "synthetic", "text", "images", "Connection Transformer"
  bool meant_to_fail;    // shows a failure on purpose (the sentence says why)
  const char* sentence;  // what it shows, with the measured outcome where the guide has one
};

const std::vector<ExperimentNote>& experiment_notes();
// The note of a config file name ("copy.json"); nullptr when it has none.
const ExperimentNote* experiment_note(const std::string& file);

}  // namespace attn::gui
