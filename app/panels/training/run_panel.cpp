#include "app/panels/training/run_panel.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/attention/registry.h"
#include "core/base/error.h"

namespace attn::gui {
namespace {

const ImVec4 kRed(1.0f, 0.42f, 0.38f, 1.0f);
const ImVec4 kGreyText(0.62f, 0.62f, 0.62f, 1.0f);

ImVec4 state_color(TrainerState s) {
  switch (s) {
    case TrainerState::Running:
      return {0.35f, 0.85f, 0.45f, 1.0f};
    case TrainerState::Paused:
      return {0.95f, 0.80f, 0.30f, 1.0f};
    case TrainerState::Finished:
      return {0.45f, 0.72f, 1.0f, 1.0f};
    case TrainerState::Diverged:
      return {1.0f, 0.60f, 0.20f, 1.0f};
    case TrainerState::Error:
      return kRed;
    case TrainerState::Stopping:
      return {0.8f, 0.6f, 0.6f, 1.0f};
    case TrainerState::Idle:
      break;
  }
  return {0.75f, 0.75f, 0.75f, 1.0f};
}

std::string human_count(int64_t n) {
  char buf[32];
  if (n >= 1000000)
    std::snprintf(buf, sizeof buf, "%.2fM", n / 1e6);
  else if (n >= 10000)
    std::snprintf(buf, sizeof buf, "%.1fk", n / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  return buf;
}

// The editors' shared width: nine characters of the current font at least (so fields follow
// the UI scale), and 45% of the column where that is wider (a wide column shows whole values).
float field_width() {
  return std::max(ImGui::GetFontSize() * 9.0f, ImGui::GetContentRegionAvail().x * 0.45f);
}

// Labelled numeric editors with a shared width. Each returns true when the value changed.

bool edit_int(const char* label, int* v) {
  ImGui::SetNextItemWidth(field_width());
  return ImGui::InputInt(label, v, 0, 0);
}
bool edit_i64(const char* label, int64_t* v) {
  ImGui::SetNextItemWidth(field_width());
  return ImGui::InputScalar(label, ImGuiDataType_S64, v);
}
bool edit_u64(const char* label, uint64_t* v) {
  ImGui::SetNextItemWidth(field_width());
  return ImGui::InputScalar(label, ImGuiDataType_U64, v);
}
bool edit_double(const char* label, double* v, const char* format = "%g") {
  ImGui::SetNextItemWidth(field_width());
  return ImGui::InputDouble(label, v, 0.0, 0.0, format);
}

bool combo(const char* label, std::string* value, const std::vector<std::string>& options,
           bool mechanism_tooltips = false) {
  bool changed = false;
  ImGui::SetNextItemWidth(field_width());
  if (ImGui::BeginCombo(label, value->c_str())) {
    for (const auto& option : options) {
      const bool selected = option == *value;
      if (ImGui::Selectable(option.c_str(), selected) && !selected) {
        *value = option;
        changed = true;
      }
      if (mechanism_tooltips && ImGui::IsItemHovered()) {
        const std::string d = attention_mechanism_description(option);
        if (!d.empty()) ImGui::SetTooltip("%s", d.c_str());
      }
      if (selected) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  return changed;
}

void draw_status(const Snapshot& snap, TrainerState state) {
  ImGui::TextUnformatted("State:");
  ImGui::SameLine();
  ImGui::TextColored(state_color(state), "%s", to_string(state));
  if (!snap.task.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(kGreyText, "  %s", snap.task.c_str());
  }

  const float fraction =
      snap.total_steps > 0 ? static_cast<float>(snap.step) / snap.total_steps : 0.0f;
  char overlay[64];
  std::snprintf(overlay, sizeof overlay, "%lld / %lld", static_cast<long long>(snap.step),
                static_cast<long long>(snap.total_steps));
  ImGui::ProgressBar(std::clamp(fraction, 0.0f, 1.0f), ImVec2(-1, 0), overlay);

  ImGui::Text("%.1f steps/s   lr %.2e   %s", snap.steps_per_second, snap.learning_rate,
              snap.device.empty() ? "-" : snap.device.c_str());
  if (snap.gpu_memory > 0) {
    ImGui::SameLine();
    ImGui::Text("  GPU memory %.1f MiB", snap.gpu_memory / (1024.0 * 1024.0));
  }
  if (snap.threads > 0) {
    // The thread policy's choice and its reason (a fixed count, or the measured step times).
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("CPU threads: %s", snap.threads_reason.c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::Text("parameters %s (attention %s)", human_count(snap.parameters).c_str(),
              human_count(snap.attention_parameters).c_str());
  if (!snap.message.empty() && snap.message != snap.record_error) {
    const bool bad = state == TrainerState::Error || state == TrainerState::Diverged ||
                     snap.message.rfind("save failed", 0) == 0 ||
                     snap.message.rfind("load failed", 0) == 0;
    ImGui::PushStyleColor(ImGuiCol_Text, bad ? kRed : kGreyText);
    ImGui::TextWrapped("%s", snap.message.c_str());
    ImGui::PopStyleColor();
  }
  // Where this run is recorded, or (kept until the model is replaced) why it is not.
  if (!snap.record_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kRed);
    ImGui::TextWrapped("%s", snap.record_error.c_str());
    ImGui::PopStyleColor();
  } else if (!snap.run_dir.empty()) {
    ImGui::TextColored(kGreyText, "recording to %s", snap.run_dir.c_str());
  }
}

// The last item's rectangle in window pixels, [x, y, w, h] (the exit report).
std::array<float, 4> item_rect() {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  return {a.x, a.y, b.x - a.x, b.y - a.y};
}

void draw_controls(const Snapshot& snap, TrainerState state, Trainer& trainer, UiState& ui,
                   std::array<float, 4>* start_rect) {
  auto button = [](const char* label, bool enabled, const char* tip) {
    ImGui::BeginDisabled(!enabled);
    const bool pressed = ImGui::Button(label);
    ImGui::EndDisabled();
    if (tip && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", tip);
    return pressed;
  };
  const bool diverged = state == TrainerState::Diverged;
  if (diverged) {  // the trainer restored the last good weights: lower the lr, then resume
    ImGui::TextColored(kRed, "Diverged: lower the peak lr below, Set it, then Resume.");
  }
  if (button(state == TrainerState::Paused || diverged ? "Resume" : "Start", can_start(state),
             diverged ? "Continue from the restored weights with the lr set below" : "Space"))
    trainer.start();
  *start_rect = item_rect();
  ImGui::SameLine();
  if (button("Pause", can_pause(state), "Space")) trainer.pause();
  ImGui::SameLine();
  if (button("Step", can_step(state), "S: one training step")) trainer.step_once();
  ImGui::SameLine();
  if (button("Reset", state != TrainerState::Stopping, "Fresh model from the current config"))
    trainer.reset();

  ImGui::SetNextItemWidth(field_width());
  ImGui::InputDouble("##lr", &ui.lr_input, 0.0, 0.0, "%.3g");
  ImGui::SameLine();
  if (button("Set peak lr", ui.lr_input > 0 && state != TrainerState::Error,
             "Overrides the schedule's peak learning rate from now on"))
    trainer.set_learning_rate(ui.lr_input);

  // Empty: Save (Ctrl+S) writes into this run's own recorded directory. A typed directory gets
  // a whole run, under its lock; one holding another run, or locked by another writer, is
  // refused by the trainer with a message.
  // Save and Load stay beside the field at any UI scale: it leaves them their own width.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float buttons = ImGui::CalcTextSize("Save").x + ImGui::CalcTextSize("Load").x +
                        4 * style.FramePadding.x + 2 * style.ItemSpacing.x;
  ImGui::SetNextItemWidth(-buttons);
  ImGui::InputTextWithHint("##ckpt", "this run's own directory", &ui.checkpoint_dir);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Empty: Save writes the checkpoint into this run's own directory%s%s.\n"
        "A directory: Save writes a whole run there (refused if it holds another run\n"
        "or another process writes it); Load resumes the run saved there.",
        snap.run_dir.empty() ? "" : " (", snap.run_dir.empty() ? "" : (snap.run_dir + ")").c_str());
  ImGui::SameLine();
  if (button("Save", can_save(state), "Ctrl+S")) save_checkpoint(trainer, state, ui);
  ImGui::SameLine();
  if (button("Load", !ui.checkpoint_dir.empty() && state != TrainerState::Stopping,
             "Resume the run saved in this directory"))
    trainer.load_checkpoint(ui.checkpoint_dir);
}

// Keeps model.attention as one entry per layer so each layer has its own combo.
void normalise_attention(ModelConfig& m) {
  const size_t layers = static_cast<size_t>(std::max(1, m.layers));
  if (m.attention.empty()) m.attention.push_back("dot");
  if (m.attention.size() != layers) m.attention.resize(layers, m.attention.back());
}

bool draw_task_fields(TaskConfig& t) {
  bool c = combo("task", &t.name, task_names());
  if (t.name == "text") {
    ImGui::SetNextItemWidth(field_width());
    c |= ImGui::InputText("text file", &t.text_path);
    c |= edit_int("context", &t.context);
    c |= edit_double("eval fraction", &t.eval_fraction);
  } else if (t.name == "fashion-mnist") {
    c |= edit_int("patch", &t.patch);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Patch side in pixels: 1, 2, 4, 7, 14 or 28");
    c |= edit_int("shift", &t.shift);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Random shifts of up to this many pixels");
    c |= edit_int("train images", &t.train_examples);
    c |= edit_int("test images", &t.test_examples);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("0 = all (60000 / 10000)");
    ImGui::SetNextItemWidth(field_width());
    c |= ImGui::InputText("data dir", &t.data_dir);
  } else if (t.name == "modadd") {
    c |= edit_int("modulus", &t.modulus);
    c |= edit_double("train fraction", &t.train_fraction);
  } else {
    c |= edit_int(t.name == "recall" ? "pairs" : "length", &t.length);
    c |= edit_int("vocab", &t.vocab);
  }
  return c;
}

// model.attention_options.<mechanism> as JSON text, one field per mechanism in use that takes
// options. The text survives invalid intermediate input (only parsed objects are stored) and is
// resynchronised when the options change elsewhere (Revert, Apply of a loaded file).
bool edit_attention_options(ModelConfig& m) {
  struct OptionsText {
    std::string text, synced, error;
  };
  static std::map<std::string, OptionsText> texts;
  bool changed = false;
  for (const std::string& name : std::set<std::string>(m.attention.begin(), m.attention.end())) {
    const std::string help = attention_mechanism_options_help(name);
    if (help.empty()) continue;
    OptionsText& t = texts[name];
    const std::string current =
        m.attention_options.contains(name) ? m.attention_options.at(name).dump() : "{}";
    if (current != t.synced) t = {current, current, ""};
    ImGui::SetNextItemWidth(field_width());
    if (ImGui::InputText((name + " options").c_str(), &t.text)) {
      try {
        const nlohmann::json j = nlohmann::json::parse(t.text);
        if (!j.is_object()) throw std::runtime_error("must be a JSON object");
        m.attention_options[name] = j;
        t.synced = j.dump();
        t.error.clear();
        changed = true;
      } catch (const std::exception& e) {
        t.error = "model.attention_options." + name + ": " + e.what();
      }
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("JSON object, e.g. {\"window\": 8}. Keys: %s", help.c_str());
    if (!t.error.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, kRed);
      ImGui::TextWrapped("%s", t.error.c_str());
      ImGui::PopStyleColor();
    }
  }
  return changed;
}

// Connection Transformer fields (model.conn; docs/design/MECHANISMS.md): what a conn model has
// instead of heads, layers and attention mechanisms.
bool draw_conn_fields(ModelConfig& m) {
  ConnConfig& c = m.conn;
  bool changed = edit_int("d_model", &m.d_model);
  changed |= edit_int("slots", &c.slots);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("N: fixed slots H [N, D]; C is N x N");
  changed |= edit_int("steps K", &c.steps);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Reasoning steps H <- H + Influence(H)");
  changed |= combo("mixing", &c.mixing, {"slots", "literal"});
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "slots: Influence[b,j] = sum_i C[i,j] H[b,i] (mixes slots, what the seed means)\n"
        "literal: H @ C as printed (mixes features; needs slots == d_model)");
  changed |= combo("variant", &c.variant, {"linear", "nonlinear"});
  changed |= edit_int("connection heads", &c.connection_heads);
  changed |= combo("control", &c.control, {"none", "spec", "norm-bound"});
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "After each optimiser step. spec rescales only when rho(I+C) > r (the seed's rule);\n"
        "norm-bound keeps ||I+C||_2 <= r, which bounds rho too.");
  changed |= edit_double("limit r", &c.limit);
  changed |= edit_double("regularization", &c.regularization, "%.3g");
  changed |= edit_double("init std", &c.init_std, "%.3g");
  changed |= edit_int("eigen every", &c.eigen_every);
  changed |= edit_int("matrix every", &c.matrix_every);
  return changed;
}

bool draw_model_fields(ModelConfig& m) {
  bool c = combo("architecture", &m.architecture, {"transformer", "conn"});
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("transformer: attention layers; conn: the Connection Transformer");
  if (m.architecture == "conn") return draw_conn_fields(m) || c;
  c |= edit_int("d_model", &m.d_model);
  c |= edit_int("heads", &m.heads);
  c |= edit_int("layers", &m.layers);
  c |= edit_int("mlp ratio", &m.mlp_ratio);
  c |= edit_double("dropout", &m.dropout);
  if (m.layers >= 1 && m.layers <= 64) {  // absurd values are reported by validation instead
    normalise_attention(m);
    for (int l = 0; l < m.layers; ++l) {
      char label[32];
      std::snprintf(label, sizeof label, "attention L%d", l);
      c |= combo(label, &m.attention[l], attention_mechanism_names(), true);
    }
    c |= edit_attention_options(m);
  }
  return c;
}

bool draw_train_fields(TrainConfig& t, uint64_t& seed) {
  bool c = edit_i64("steps", &t.steps);
  c |= edit_int("batch size", &t.batch_size);
  c |= edit_double("lr", &t.lr, "%.3g");
  c |= edit_i64("warmup", &t.warmup);
  c |= edit_double("weight decay", &t.weight_decay);
  c |= edit_double("grad clip", &t.grad_clip);
  c |= edit_i64("eval every", &t.eval_every);
  c |= edit_u64("seed", &seed);
  return c;
}

// Apply & reset and Revert, with the validation error: drawn above the fields, so they are in
// reach at any window height (the fields scroll below them).
void draw_apply_row(Trainer& trainer, UiState& ui, std::array<float, 4>* apply_rect) {
  ExperimentConfig& p = ui.pending;
  ImGui::TextColored(kGreyText, "from %s", ui.config_source.c_str());
  if (!ui.config_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kRed);
    ImGui::TextWrapped("%s", ui.config_error.c_str());
    ImGui::PopStyleColor();
  }
  if (ui.pending_dirty) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.55f, 0.35f, 0.05f, 1));
  const bool apply = ImGui::Button("Apply & reset");
  *apply_rect = item_rect();
  if (ui.pending_dirty) ImGui::PopStyleColor();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Validate the edited experiment and start a fresh model from it");
  if (apply) {
    try {
      // Same validation as a config file: a bad value is named, never silently clamped.
      ExperimentConfig valid = parse_config(to_json(p), "experiment");
      p = valid;
      trainer.reconfigure(std::move(valid));
      ui.pending_dirty = false;
      ui.apply_error.clear();
    } catch (const Error& e) {
      ui.apply_error = e.what();
    } catch (const std::exception& e) {  // e.g. nlohmann::json errors
      ui.apply_error = e.what();
    }
  }
  ImGui::SameLine();
  // Always available: after "Load" the trainer runs the checkpoint's config, not the edited one.
  if (ImGui::Button("Revert")) {
    p = trainer.config();
    ui.pending_dirty = false;
    ui.apply_error.clear();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Discard edits: show the trainer's current config");
  if (ui.pending_dirty) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(0.95f, 0.7f, 0.3f, 1), "edited");
  }
  if (!ui.apply_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kRed);
    ImGui::TextWrapped("%s", ui.apply_error.c_str());
    ImGui::PopStyleColor();
  }
}

void draw_experiment_fields(UiState& ui) {
  ExperimentConfig& p = ui.pending;
  bool changed = false;
  ImGui::SetNextItemWidth(field_width());
  changed |= ImGui::InputText("name", &p.name);
  const std::string task_before = p.task.name;
  changed |= draw_task_fields(p.task);
  if (p.task.name != task_before) {  // the head follows the task: images are classified
    p.model.head = p.task.name == "fashion-mnist" ? "classifier" : "lm";
    p.model.classes = 0;
  }
  ImGui::Separator();
  changed |= draw_model_fields(p.model);
  ImGui::Separator();
  changed |= draw_train_fields(p.train, p.seed);
  if (changed) {
    ui.pending_dirty = true;
    ui.apply_error.clear();
  }
}

}  // namespace

void RunPanel::update(FrameContext& frame) {
  threads_ = frame.snap.threads;
  threads_reason_ = frame.snap.threads_reason;
  state_ = to_string(frame.state);
  message_ = frame.snap.message;
  record_error_ = frame.snap.record_error;
  run_dir_ = frame.snap.run_dir;
  save_field_ = frame.ui.checkpoint_dir;
  // A run opened from disk: the editor shows its config (unless the user is editing one).
  if (frame.snap.generation != seen_generation_) {
    seen_generation_ = frame.snap.generation;
    if (!frame.snap.source_dir.empty() && !frame.ui.pending_dirty) {
      frame.ui.pending = frame.trainer.config();
      frame.ui.config_source = frame.snap.source_dir + " (the opened run's config)";
      frame.ui.config_error.clear();
      frame.ui.apply_error.clear();
    }
  }
}

void RunPanel::draw(FrameContext& frame) {
  const Snapshot& snap = frame.snap;
  const TrainerState state = frame.state;
  Trainer& trainer = frame.trainer;
  UiState& ui = frame.ui;
  ImGui::PushTextWrapPos(0.0f);
  draw_status(snap, state);
  ImGui::Spacing();
  draw_controls(snap, state, trainer, ui, &start_rect_);
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::TextUnformatted("Experiment");
  draw_apply_row(trainer, ui, &apply_rect_);
  // Only the fields scroll: the controls above stay in reach at 1280x720.
  if (ImGui::BeginChild("##fields", ImVec2(0, 0), false)) {
    draw_experiment_fields(ui);
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_Text, kGreyText);
    ImGui::TextWrapped("Space start/pause   S step   Ctrl+S save   |   frame %.1f ms", ui.frame_ms);
    if (!ui.notes.empty()) ImGui::TextWrapped("%s", ui.notes.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::EndChild();
  ImGui::PopTextWrapPos();
}

}  // namespace attn::gui
