#include "app/panels/training/run_model.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "core/base/error.h"

namespace attn::gui {

RunModel::Controls RunModel::controls(TrainerState state, const UiState& ui) {
  Controls c;
  c.diverged = state == TrainerState::Diverged;
  const bool resume = state == TrainerState::Paused || c.diverged;
  c.start_label = resume ? "Resume" : "Start";
  c.start_tip = c.diverged ? "Continue from the restored weights with the lr set below" : "Space";
  c.start = can_start(state);
  c.pause = can_pause(state);
  c.step = can_step(state);
  c.reset = state != TrainerState::Stopping;
  c.set_lr = ui.lr_input > 0 && state != TrainerState::Error;
  c.save = can_save(state);
  c.load = !ui.checkpoint_dir.empty() && state != TrainerState::Stopping;
  return c;
}

std::string RunModel::human_count(int64_t n) {
  char buf[32];
  if (n >= 1000000)
    std::snprintf(buf, sizeof buf, "%.2fM", n / 1e6);
  else if (n >= 10000)
    std::snprintf(buf, sizeof buf, "%.1fk", n / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  return buf;
}

RunModel::Status RunModel::status(const Snapshot& snap, TrainerState state) {
  Status s;
  s.state = to_string(state);
  s.task = snap.task;
  s.fraction = snap.total_steps > 0
                   ? std::clamp(static_cast<float>(snap.step) / snap.total_steps, 0.0f, 1.0f)
                   : 0.0f;
  s.progress = std::to_string(snap.step) + " / " + std::to_string(snap.total_steps);
  s.parameters = "parameters " + human_count(snap.parameters) + " (attention " +
                 human_count(snap.attention_parameters) + ")";
  if (!snap.message.empty() && snap.message != snap.record_error) {
    s.message = snap.message;
    s.message_bad = state == TrainerState::Error || state == TrainerState::Diverged ||
                    snap.message.rfind("save failed", 0) == 0 ||
                    snap.message.rfind("load failed", 0) == 0;
  }
  // Where this run is recorded, or (kept until the model is replaced) why it is not.
  if (!snap.record_error.empty()) {
    s.recording = snap.record_error;
    s.recording_bad = true;
  } else if (!snap.run_dir.empty()) {
    s.recording = "recording to " + snap.run_dir;
  }
  return s;
}

void RunModel::normalise_attention(ModelConfig& m) {
  const size_t layers = static_cast<size_t>(std::max(1, m.layers));
  if (m.attention.empty()) m.attention.push_back("dot");
  if (m.attention.size() != layers) m.attention.resize(layers, m.attention.back());
}

void RunModel::follow_task(ExperimentConfig& c, const std::string& task_before) {
  if (c.task.name == task_before) return;
  c.model.head = c.task.name == "fashion-mnist" ? "classifier" : "lm";
  c.model.classes = 0;
  // Its size means images for fashion-mnist, sequences for the synthetic tasks, and must be 0
  // for text and modadd: a value carried across tasks would change meaning or be refused.
  c.task.train_examples = 0;
}

void RunModel::mark_edited(UiState& ui) {
  ui.pending_dirty = true;
  ui.apply_error.clear();
}

std::optional<ExperimentConfig> RunModel::apply(UiState& ui) const {
  try {
    // Same validation as a config file: a bad value is named, never silently clamped.
    ExperimentConfig valid = parse_config(to_json(ui.pending), "experiment");
    ui.pending = valid;
    ui.pending_dirty = false;
    ui.apply_error.clear();
    return valid;
  } catch (const Error& e) {
    ui.apply_error = e.what();
  } catch (const std::exception& e) {  // e.g. nlohmann::json errors
    ui.apply_error = e.what();
  }
  return std::nullopt;
}

void RunModel::revert(UiState& ui, const ExperimentConfig& trainer_config) {
  ui.pending = trainer_config;
  ui.pending_dirty = false;
  ui.apply_error.clear();
}

const RunModel::OptionsText& RunModel::options_text(const ModelConfig& m,
                                                    const std::string& mechanism) {
  OptionsText& t = texts_[mechanism];
  const std::string current =
      m.attention_options.contains(mechanism) ? m.attention_options.at(mechanism).dump() : "{}";
  if (current != t.synced) t = {current, current, ""};
  return t;
}

bool RunModel::set_options_text(ModelConfig& m, const std::string& mechanism,
                                const std::string& text) {
  OptionsText& t = texts_[mechanism];
  t.text = text;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object()) throw std::runtime_error("must be a JSON object");
    m.attention_options[mechanism] = j;
    t.synced = j.dump();
    t.error.clear();
    return true;
  } catch (const std::exception& e) {
    t.error = "model.attention_options." + mechanism + ": " + e.what();
    return false;
  }
}

void RunModel::update(const Snapshot& snap, TrainerState state, UiState& ui,
                      const std::function<ExperimentConfig()>& trainer_config) {
  report_ = {{"threads", snap.threads},           {"threads_reason", snap.threads_reason},
             {"state", to_string(state)},         {"message", snap.message},
             {"record_error", snap.record_error}, {"run_dir", snap.run_dir},
             {"save_field", ui.checkpoint_dir}};
  // A run opened from disk: the editor shows its config (unless the user is editing one).
  if (snap.generation != seen_generation_) {
    seen_generation_ = snap.generation;
    if (!snap.source_dir.empty() && !ui.pending_dirty) {
      ui.pending = trainer_config();
      ui.config_source = snap.source_dir + " (the opened run's config)";
      ui.config_error.clear();
      ui.apply_error.clear();
    }
  }
}

}  // namespace attn::gui
