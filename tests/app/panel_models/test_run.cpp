// The Run panel's model (app/panels/training/run_model.h) without a window: what the trainer
// controls allow in each state, the status a snapshot gives, and the experiment editor's rules
// (Apply's validation, Revert, the head following the task, one mechanism per layer, the
// attention options text, a run opened from disk).
#include <doctest/doctest.h>

#include <string>

#include "app/panels/training/run_model.h"
#include "test_panel_helpers.h"

using namespace attn;
using attn::gui::RunModel;

TEST_CASE("run model: the controls each trainer state allows") {
  gui::UiState ui;
  ui.lr_input = 1e-3;
  const RunModel::Controls idle = RunModel::controls(TrainerState::Idle, ui);
  CHECK(std::string(idle.start_label) == "Start");
  CHECK(idle.start);
  CHECK_FALSE(idle.pause);
  CHECK_FALSE(idle.load);  // no directory typed
  const RunModel::Controls running = RunModel::controls(TrainerState::Running, ui);
  CHECK_FALSE(running.start);
  CHECK(running.pause);
  const RunModel::Controls paused = RunModel::controls(TrainerState::Paused, ui);
  CHECK(std::string(paused.start_label) == "Resume");
  CHECK(paused.start);
  const RunModel::Controls diverged = RunModel::controls(TrainerState::Diverged, ui);
  CHECK(diverged.diverged);
  CHECK(std::string(diverged.start_label) == "Resume");
  CHECK(std::string(diverged.start_tip).find("restored weights") != std::string::npos);
  ui.checkpoint_dir = "somewhere";
  CHECK(RunModel::controls(TrainerState::Paused, ui).load);
  CHECK_FALSE(RunModel::controls(TrainerState::Stopping, ui).load);
  CHECK_FALSE(RunModel::controls(TrainerState::Stopping, ui).reset);
  ui.lr_input = 0;
  CHECK_FALSE(RunModel::controls(TrainerState::Paused, ui).set_lr);
}

TEST_CASE("run model: the status a snapshot gives") {
  Snapshot s;
  s.step = 25, s.total_steps = 100;
  s.parameters = 1234567, s.attention_parameters = 23456;
  s.message = "load failed: x/checkpoint: bad";
  s.run_dir = "/runs/r1";
  RunModel::Status st = RunModel::status(s, TrainerState::Paused);
  CHECK(st.state == "Paused");
  CHECK(st.fraction == doctest::Approx(0.25));
  CHECK(st.progress == "25 / 100");
  CHECK(st.parameters == "parameters 1.23M (attention 23.5k)");
  CHECK(st.message == s.message);
  CHECK(st.message_bad);
  CHECK(st.recording == "recording to /runs/r1");
  CHECK_FALSE(st.recording_bad);
  s.record_error = "cannot record to /runs/r1: disk full";
  s.message = s.record_error;  // said once, as the recording's error
  st = RunModel::status(s, TrainerState::Paused);
  CHECK(st.message.empty());
  CHECK(st.recording == s.record_error);
  CHECK(st.recording_bad);
  CHECK(RunModel::human_count(999) == "999");
}

TEST_CASE("run model: Apply validates the edited experiment and Revert restores the trainer's") {
  gui::UiState ui;
  const ExperimentConfig base = test::small_config("dot", 1);
  ui.pending = base;
  RunModel m;
  ui.pending.train.batch_size = 32;
  RunModel::mark_edited(ui);
  CHECK(ui.pending_dirty);
  const auto applied = m.apply(ui);
  REQUIRE(applied);
  CHECK(applied->train.batch_size == 32);
  CHECK_FALSE(ui.pending_dirty);
  CHECK(ui.apply_error.empty());

  ui.pending.train.warmup = ui.pending.train.steps + 10;  // refused by validation, named
  RunModel::mark_edited(ui);
  const ExperimentConfig edited = ui.pending;
  CHECK_FALSE(m.apply(ui));
  CHECK(ui.apply_error.find("train.warmup") != std::string::npos);
  CHECK(ui.pending_dirty);
  CHECK(to_json(ui.pending) == to_json(edited));  // nothing changed

  RunModel::revert(ui, base);
  CHECK(to_json(ui.pending) == to_json(base));
  CHECK_FALSE(ui.pending_dirty);
  CHECK(ui.apply_error.empty());
}

TEST_CASE("run model: the editor's rules") {
  ExperimentConfig c = test::small_config("dot", 1);
  c.task.name = "fashion-mnist";
  c.task.train_examples = 300;  // copy's fixed set of 300 sequences
  RunModel::follow_task(c, "copy");
  CHECK(c.model.head == "classifier");
  CHECK(c.task.train_examples == 0);  // not 300 images
  c.task.train_examples = 3000;       // images
  RunModel::follow_task(c, "fashion-mnist");
  CHECK(c.task.train_examples == 3000);  // the same task: kept
  c.task.name = "copy";
  RunModel::follow_task(c, "fashion-mnist");
  CHECK(c.model.head == "lm");
  CHECK(c.task.train_examples == 0);

  c.model.layers = 3;
  c.model.attention = {"ky"};
  RunModel::normalise_attention(c.model);
  CHECK(c.model.attention == std::vector<std::string>{"ky", "ky", "ky"});
  c.model.layers = 1;
  RunModel::normalise_attention(c.model);
  CHECK(c.model.attention == std::vector<std::string>{"ky"});

  RunModel m;
  CHECK(m.options_text(c.model, "ky").text == "{}");
  CHECK_FALSE(m.set_options_text(c.model, "ky", "[1, 2]"));
  CHECK(m.options_text(c.model, "ky").error.find("model.attention_options.ky") == 0);
  CHECK_FALSE(c.model.attention_options.contains("ky"));  // only parsed objects are stored
  CHECK(m.options_text(c.model, "ky").text == "[1, 2]");  // the typed text survives
  REQUIRE(m.set_options_text(c.model, "ky", R"({"window": 8})"));
  CHECK(c.model.attention_options.at("ky") == nlohmann::json{{"window", 8}});
  CHECK(m.options_text(c.model, "ky").error.empty());
  c.model.attention_options["ky"] = {{"window", 4}};  // changed elsewhere (Revert): resynced
  CHECK(m.options_text(c.model, "ky").text == R"({"window":4})");
}

TEST_CASE("run model: a run opened from disk puts its config in the editor unless edited") {
  RunModel m;
  gui::UiState ui;
  ui.pending = test::small_config("dot", 1);
  const ExperimentConfig opened = test::small_config("ky", 7);
  int asked = 0;
  auto trainer_config = [&] { return ++asked, opened; };
  Snapshot s;
  s.generation = 1;
  m.update(s, TrainerState::Idle, ui, trainer_config);
  CHECK(asked == 0);  // the window's own model: the editor keeps what it has
  s.generation = 2;
  s.source_dir = "/runs/old";
  s.threads = 3;
  m.update(s, TrainerState::Paused, ui, trainer_config);
  CHECK(asked == 1);
  CHECK(ui.pending.seed == 7);
  CHECK(ui.config_source == "/runs/old (the opened run's config)");
  CHECK(m.report()["threads"] == 3);
  CHECK(m.report()["state"] == "Paused");
  m.update(s, TrainerState::Paused, ui, trainer_config);
  CHECK(asked == 1);  // once per model
  s.generation = 3;
  ui.pending_dirty = true;
  ui.pending.seed = 99;
  m.update(s, TrainerState::Paused, ui, trainer_config);
  CHECK(ui.pending.seed == 99);  // the user's edits win
}
