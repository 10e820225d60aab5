// The Run panel's model (run_panel.h is its view): what the trainer controls allow in each
// state, the status lines a snapshot gives, and the experiment editor's rules (the config the
// edited fields give, Apply's validation, Revert, the head that follows the task, one attention
// mechanism per layer, the per-mechanism options as JSON text). No ImGui: tests drive it without
// a window (tests/app/panel_models/test_run.cpp).
// Contract:
//  - controls() and status() are pure: a state and a snapshot in, what the view shows out.
//  - apply() validates ui.pending exactly as a config file (parse_config): a bad value is named
//    (its key and the allowed range) in ui.apply_error and nothing changes; a good one becomes
//    ui.pending, the edit mark is cleared and the config is returned for Trainer::reconfigure.
//  - set_options_text() stores model.attention_options.<mechanism> only when the text parses as
//    a JSON object; otherwise options_text().error names the key. The text is resynchronised
//    when the options change elsewhere (Revert, a loaded run).
//  - update() follows a run opened from disk: a new model generation with a source directory
//    puts that run's config in the editor, unless the user is editing one.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "app/gui/ui_state.h"
#include "core/config/config.h"
#include "core/training/trainer.h"
#include "core/views/snapshot.h"

namespace attn::gui {

class RunModel {
 public:
  // Which trainer buttons are enabled in `state`, and what Start says.
  struct Controls {
    bool diverged = false;  // the trainer restored the last good weights: lower the lr, resume
    const char* start_label = "Start";
    const char* start_tip = "Space";
    bool start = false, pause = false, step = false, reset = false, set_lr = false, save = false,
         load = false;
  };
  static Controls controls(TrainerState state, const UiState& ui);

  // What the status block shows for a snapshot.
  struct Status {
    std::string state, task;
    float fraction = 0;    // of total_steps, in [0, 1]
    std::string progress;  // "step / total"
    std::string parameters;
    std::string message;  // "" when none (or the same as record_error)
    bool message_bad = false;
    std::string recording;  // "recording to DIR", or why the run is not recorded
    bool recording_bad = false;
  };
  static Status status(const Snapshot& snap, TrainerState state);
  static std::string human_count(int64_t n);  // 1234, 12.3k, 1.23M

  // The experiment editor.
  static void normalise_attention(ModelConfig& m);  // one mechanism per layer
  // The head follows the task (images are classified) and task.train_examples returns to 0 (its
  // unit is the task's); call after the task's name changed.
  static void follow_task(ExperimentConfig& c, const std::string& task_before);
  static void mark_edited(UiState& ui);
  std::optional<ExperimentConfig> apply(UiState& ui) const;
  static void revert(UiState& ui, const ExperimentConfig& trainer_config);

  struct OptionsText {
    std::string text, synced, error;
  };
  // model.attention_options.<mechanism> as the editor's text (resynchronised when changed
  // elsewhere), and the text typed there: true when it parsed and was stored.
  const OptionsText& options_text(const ModelConfig& m, const std::string& mechanism);
  bool set_options_text(ModelConfig& m, const std::string& mechanism, const std::string& text);

  // Once a frame: what the report shows, and the opened run's config (trainer_config is called
  // only then).
  void update(const Snapshot& snap, TrainerState state, UiState& ui,
              const std::function<ExperimentConfig()>& trainer_config);
  // threads, threads_reason, state, message, record_error, run_dir, save_field.
  const nlohmann::json& report() const { return report_; }

 private:
  std::map<std::string, OptionsText> texts_;  // by mechanism
  nlohmann::json report_ = nlohmann::json::object();
  uint64_t seen_generation_ = 0;  // the model whose config the editor was last given
};

}  // namespace attn::gui
