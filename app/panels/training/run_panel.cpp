#include "app/panels/training/run_panel.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "app/gui/window/widgets.h"
#include "core/attention/registry.h"
#include "core/models/architectures/architecture.h"

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
        if (!d.empty()) tooltip("%s", d.c_str());
      }
      if (selected) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  return changed;
}

void wrapped_text(const std::string& text, const ImVec4& color) {
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

void draw_status(const Snapshot& snap, TrainerState state) {
  const RunModel::Status s = RunModel::status(snap, state);
  ImGui::TextUnformatted("State:");
  ImGui::SameLine();
  ImGui::TextColored(state_color(state), "%s", s.state.c_str());
  if (!s.task.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(kGreyText, "  %s", s.task.c_str());
  }
  ImGui::ProgressBar(s.fraction, ImVec2(-1, 0), s.progress.c_str());
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
  ImGui::TextUnformatted(s.parameters.c_str());
  if (!s.message.empty()) wrapped_text(s.message, s.message_bad ? kRed : kGreyText);
  if (s.recording_bad)
    wrapped_text(s.recording, kRed);
  else if (!s.recording.empty())
    ImGui::TextColored(kGreyText, "%s", s.recording.c_str());
}

// The last item's rectangle in window pixels, [x, y, w, h] (the exit report).
std::array<float, 4> item_rect() {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  return {a.x, a.y, b.x - a.x, b.y - a.y};
}

bool button(const char* label, bool enabled, const char* tip) {
  ImGui::BeginDisabled(!enabled);
  const bool pressed = ImGui::Button(label);
  ImGui::EndDisabled();
  if (tip && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) tooltip("%s", tip);
  return pressed;
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
    if (ImGui::IsItemHovered()) tooltip("Patch side in pixels: 1, 2, 4, 7, 14 or 28");
    c |= edit_int("shift", &t.shift);
    if (ImGui::IsItemHovered()) tooltip("Random shifts of up to this many pixels");
    c |= edit_int("train images", &t.train_examples);
    c |= edit_int("test images", &t.test_examples);
    if (ImGui::IsItemHovered()) tooltip("0 = all (60000 / 10000)");
    ImGui::SetNextItemWidth(field_width());
    c |= ImGui::InputText("data dir", &t.data_dir);
  } else if (t.name == "modadd") {
    c |= edit_int("modulus", &t.modulus);
    c |= edit_double("train fraction", &t.train_fraction);
  } else {
    c |= edit_int(t.name == "recall" ? "pairs" : "length", &t.length);
    c |= edit_int("vocab", &t.vocab);
    c |= edit_int("train examples", &t.train_examples);
    if (ImGui::IsItemHovered())
      tooltip("0 = a fresh batch every step; N = a fixed set of N sequences, in shuffled epochs");
  }
  return c;
}

// The fields of an architecture's own config section (a model without attention layers), as its
// descriptor lists them (core/models/architectures/architecture.h).
bool draw_architecture_fields(const ArchitectureDescriptor& a, ModelConfig& m) {
  bool changed = false;
  for (const ArchitectureField& f : a.fields) {
    if (f.integer) changed |= edit_int(f.label, f.integer(m));
    if (f.real) changed |= edit_double(f.label, f.real(m), f.format);
    if (f.text) changed |= combo(f.label, f.text(m), f.choices);
    if (*f.tooltip && ImGui::IsItemHovered()) tooltip("%s", f.tooltip);
  }
  return changed;
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

}  // namespace

void RunPanel::draw_controls(FrameContext& frame) {
  const TrainerState state = frame.state;
  Trainer& trainer = frame.trainer;
  UiState& ui = frame.ui;
  const RunModel::Controls c = RunModel::controls(state, ui);
  if (c.diverged)
    ImGui::TextColored(kRed, "Diverged: lower the peak lr below, Set it, then Resume.");
  // Each button after the first wraps to the next row where the tile is too narrow for it.
  if (button(c.start_label, c.start, c.start_tip)) trainer.start();
  start_rect_ = item_rect();
  same_line_if_fits(button_width("Pause"));
  if (button("Pause", c.pause, "Space")) trainer.pause();
  same_line_if_fits(button_width("Step"));
  if (button("Step", c.step, "S: one training step")) trainer.step_once();
  same_line_if_fits(button_width("Reset"));
  if (button("Reset", c.reset, "Fresh model from the current config")) trainer.reset();
  buttons_rect_ = item_rect();

  ImGui::SetNextItemWidth(field_width());
  ImGui::InputDouble("##lr", &ui.lr_input, 0.0, 0.0, "%.3g");
  same_line_if_fits(button_width("Set peak lr"));
  if (button("Set peak lr", c.set_lr, "Overrides the schedule's peak learning rate from now on"))
    trainer.set_learning_rate(ui.lr_input);
  set_lr_rect_ = item_rect();

  // Empty: Save (Ctrl+S) writes into this run's own recorded directory. A typed directory gets
  // a whole run, under its lock; one holding another run, or locked by another writer, is
  // refused by the trainer with a message.
  // Save and Load stay beside the field at any UI scale: it leaves them their own width.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float buttons = ImGui::CalcTextSize("Save").x + ImGui::CalcTextSize("Load").x +
                        4 * style.FramePadding.x + 2 * style.ItemSpacing.x;
  ImGui::SetNextItemWidth(-buttons);
  ImGui::InputTextWithHint("##ckpt", "this run's own directory", &ui.checkpoint_dir);
  const std::string& run_dir = frame.snap.run_dir;
  if (ImGui::IsItemHovered())
    tooltip(
        "Empty: Save writes the checkpoint into this run's own directory%s%s.\n"
        "A directory: Save writes a whole run there (refused if it holds another run\n"
        "or another process writes it); Load resumes the run saved there.",
        run_dir.empty() ? "" : " (", run_dir.empty() ? "" : (run_dir + ")").c_str());
  ImGui::SameLine();
  if (button("Save", c.save, "Ctrl+S")) save_checkpoint(trainer, state, ui);
  ImGui::SameLine();
  if (button("Load", c.load, "Resume the run saved in this directory"))
    trainer.load_checkpoint(ui.checkpoint_dir);
}

// model.attention_options.<mechanism> as JSON text, one field per mechanism in use that takes
// options (RunModel::set_options_text keeps only parsed objects).
bool RunPanel::edit_attention_options(ModelConfig& m) {
  bool changed = false;
  for (const std::string& name : std::set<std::string>(m.attention.begin(), m.attention.end())) {
    const std::string help = attention_mechanism_options_help(name);
    if (help.empty()) continue;
    std::string text = model_.options_text(m, name).text;
    ImGui::SetNextItemWidth(field_width());
    if (ImGui::InputText((name + " options").c_str(), &text))
      changed |= model_.set_options_text(m, name, text);
    if (ImGui::IsItemHovered())
      tooltip("JSON object, e.g. {\"window\": 8}. Keys: %s", help.c_str());
    const std::string& error = model_.options_text(m, name).error;
    if (!error.empty()) wrapped_text(error, kRed);
  }
  return changed;
}

bool RunPanel::draw_model_fields(ModelConfig& m) {
  bool c = combo("architecture", &m.architecture, architecture_names());
  if (ImGui::IsItemHovered()) tooltip("%s", architecture_summaries().c_str());
  const ArchitectureDescriptor& architecture = architecture_of(m);
  if (!architecture.attention_layers) return draw_architecture_fields(architecture, m) || c;
  c |= edit_int("d_model", &m.d_model);
  c |= edit_int("heads", &m.heads);
  c |= edit_int("layers", &m.layers);
  c |= edit_int("mlp ratio", &m.mlp_ratio);
  c |= edit_double("dropout", &m.dropout);
  if (m.layers >= 1 && m.layers <= 64) {  // absurd values are reported by validation instead
    RunModel::normalise_attention(m);
    for (int l = 0; l < m.layers; ++l) {
      char label[32];
      std::snprintf(label, sizeof label, "attention L%d", l);
      c |= combo(label, &m.attention[l], attention_mechanism_names(), true);
    }
    c |= edit_attention_options(m);
  }
  return c;
}

// Apply & reset and Revert, with the validation error: drawn above the fields, so they are in
// reach at any window height (the fields scroll below them).
void RunPanel::draw_apply_row(FrameContext& frame) {
  UiState& ui = frame.ui;
  ImGui::TextColored(kGreyText, "from %s", ui.config_source.c_str());
  if (!ui.config_error.empty()) wrapped_text(ui.config_error, kRed);
  if (ui.pending_dirty) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.55f, 0.35f, 0.05f, 1));
  const bool apply = ImGui::Button("Apply & reset");
  apply_rect_ = item_rect();
  if (ui.pending_dirty) ImGui::PopStyleColor();
  if (ImGui::IsItemHovered())
    tooltip("Validate the edited experiment and start a fresh model from it");
  if (apply)
    if (std::optional<ExperimentConfig> valid = model_.apply(ui))
      frame.trainer.reconfigure(std::move(*valid));
  same_line_if_fits(button_width("Revert"));
  // Always available: after "Load" the trainer runs the checkpoint's config, not the edited one.
  if (ImGui::Button("Revert")) RunModel::revert(ui, frame.trainer.config());
  if (ImGui::IsItemHovered()) tooltip("Discard edits: show the trainer's current config");
  if (ui.pending_dirty) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(0.95f, 0.7f, 0.3f, 1), "edited");
  }
  if (!ui.apply_error.empty()) wrapped_text(ui.apply_error, kRed);
}

void RunPanel::draw_experiment_fields(UiState& ui) {
  ExperimentConfig& p = ui.pending;
  bool changed = false;
  ImGui::SetNextItemWidth(field_width());
  changed |= ImGui::InputText("name", &p.name);
  const std::string task_before = p.task.name;
  changed |= draw_task_fields(p.task);
  RunModel::follow_task(p, task_before);
  ImGui::Separator();
  changed |= draw_model_fields(p.model);
  ImGui::Separator();
  changed |= draw_train_fields(p.train, p.seed);
  if (changed) RunModel::mark_edited(ui);
}

void RunPanel::update(FrameContext& frame) {
  Trainer& trainer = frame.trainer;
  model_.update(frame.snap, frame.state, frame.ui, [&trainer] { return trainer.config(); });
}

nlohmann::json RunPanel::report() const {
  nlohmann::json r = model_.report();
  r["start_rect"] = start_rect_;
  r["apply_rect"] = apply_rect_;
  r["buttons_rect"] = buttons_rect_;
  r["set_lr_rect"] = set_lr_rect_;
  return r;
}

void RunPanel::draw(FrameContext& frame) {
  ImGui::PushTextWrapPos(0.0f);
  draw_status(frame.snap, frame.state);
  ImGui::Spacing();
  draw_controls(frame);
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::TextUnformatted("Experiment");
  draw_apply_row(frame);
  // Only the fields scroll: the controls above stay in reach at 1280x720.
  if (ImGui::BeginChild("##fields", ImVec2(0, 0), false)) {
    draw_experiment_fields(frame.ui);
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_Text, kGreyText);
    ImGui::TextWrapped("Space start/pause   S step   Ctrl+S save   |   frame %.1f ms",
                       frame.ui.frame_ms);
    if (!frame.ui.notes.empty()) ImGui::TextWrapped("%s", frame.ui.notes.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::EndChild();
  ImGui::PopTextWrapPos();
}

}  // namespace attn::gui
