// The Loss panel's model (app/panels/training/loss_model.h) without a window: the figure it
// gives for a hand-built snapshot, how its controls (smoothing, log y, accuracy) change what is
// drawn, and the eval-length row.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/panels/training/loss_model.h"
#include "core/views/intervention_view.h"
#include "test_panel_helpers.h"

using namespace attn;
using attn::gui::LossModel;

namespace {

Snapshot loss_snapshot() {
  Snapshot s;
  s.serial = 7;
  s.step = 40;
  s.train_loss.steps = {10, 20, 30, 40};
  s.train_loss.values = {4.0f, 3.0f, 2.5f, 1.0f};
  s.eval_loss.steps = {20, 40};
  s.eval_loss.values = {3.25f, 1.5f};
  s.eval_accuracy.steps = {20, 40};
  s.eval_accuracy.values = {0.25f, 0.75f};
  return s;
}

const fig::LineSeries* line(const fig::Figure& f, size_t panel, const std::string& name) {
  return panel < f.panels.size() ? test::find_line(f.panels[panel], name) : nullptr;
}

// The debiased EMA (TensorBoard's), written out here in double as an independent reference.
std::vector<double> ema(const std::vector<float>& x, double beta) {
  std::vector<double> out;
  double acc = 0, power = 1;
  for (float v : x) {
    acc = beta * acc + (1 - beta) * v;
    power *= beta;
    out.push_back(acc / (1 - power));
  }
  return out;
}

}  // namespace

TEST_CASE("loss model: the figure holds the snapshot's train and eval losses and accuracy") {
  LossModel m;
  const Snapshot s = loss_snapshot();
  const fig::Figure& f = m.figure(s);
  REQUIRE(f.panels.size() == 2);
  CHECK(f.panels[0].y.log);
  const fig::LineSeries* train = line(f, 0, "train");
  const fig::LineSeries* smooth = line(f, 0, "train (EMA)");
  const fig::LineSeries* eval = line(f, 0, "eval");
  REQUIRE(train);
  REQUIRE(smooth);
  REQUIRE(eval);
  CHECK(train->x == std::vector<double>{10, 20, 30, 40});
  CHECK(train->y == std::vector<double>{4.0, 3.0, 2.5, 1.0});
  CHECK(eval->x == std::vector<double>{20, 40});
  CHECK(eval->y == std::vector<double>{3.25, 1.5});
  const std::vector<double> want = ema(s.train_loss.values, m.smoothing);
  REQUIRE(smooth->y.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i)
    CHECK(smooth->y[i] == doctest::Approx(want[i]).epsilon(1e-6));
  const fig::LineSeries* acc = line(f, 1, "eval accuracy");
  REQUIRE(acc);
  CHECK(acc->y == std::vector<double>{0.25, 0.75});
}

TEST_CASE("loss model: smoothing, log y and accuracy change what is drawn") {
  LossModel m;
  const Snapshot s = loss_snapshot();
  SUBCASE("smoothing 0 draws the raw curve alone") {
    m.smoothing = 0;
    const fig::Figure& f = m.figure(s);
    CHECK(test::line_names(f.panels[0]) == std::vector<std::string>{"train", "eval"});
  }
  SUBCASE("a stronger smoothing lags the EMA more") {
    m.smoothing = 0.2f;
    const double light = line(m.figure(s), 0, "train (EMA)")->y.back();
    m.smoothing = 0.9f;
    const double heavy = line(m.figure(s), 0, "train (EMA)")->y.back();
    CHECK(light == doctest::Approx(ema(s.train_loss.values, 0.2f).back()).epsilon(1e-6));
    CHECK(heavy == doctest::Approx(ema(s.train_loss.values, 0.9f).back()).epsilon(1e-6));
    CHECK(heavy > light);  // further from the last value 1.0
  }
  SUBCASE("log y off gives a linear axis") {
    m.log_y = false;
    CHECK_FALSE(m.figure(s).panels[0].y.log);
  }
  SUBCASE("accuracy off drops the accuracy panel") {
    m.show_accuracy = false;
    const fig::Figure& f = m.figure(s);
    CHECK(f.panels.size() == 1);
    CHECK(f.cols != 2);
  }
}

TEST_CASE("loss model: the figure follows a new snapshot, and an empty one keeps the last") {
  LossModel m;
  Snapshot s = loss_snapshot();
  CHECK(line(m.figure(s), 0, "eval")->y.back() == 1.5);
  s.serial = 8;
  s.eval_loss.steps.push_back(60);
  s.eval_loss.values.push_back(0.5f);
  CHECK(line(m.figure(s), 0, "eval")->y.back() == 0.5);
  Snapshot empty;
  empty.serial = 9;
  CHECK(LossModel::empty(empty));
  CHECK(line(m.figure(empty), 0, "eval")->y.back() == 0.5);
}

TEST_CASE("loss model: the eval-length row") {
  LossModel m;
  Snapshot s = loss_snapshot();
  TaskConfig copy;
  copy.name = "copy";
  copy.length = 6;
  REQUIRE(m.task_stale(s));
  m.set_task(s, copy);
  CHECK_FALSE(m.task_stale(s));
  CHECK(m.length_key() == "task.length");
  CHECK(m.eval_length == 12);  // twice the training length

  LossModel::LengthRow hint = m.length_row(s);
  CHECK(hint.tone == LossModel::Tone::Disabled);
  CHECK(hint.report["asked"] == 12);
  CHECK(hint.text.find("task.length") == 0);

  m.eval_length = -3;  // the field never asks for less than one token
  CHECK(m.length_row(s).report["asked"] == 1);

  auto answer = std::make_shared<LengthEvalView>();
  answer->length = 12, answer->key = "task.length", answer->trained = 6, answer->step = 40;
  answer->figures.loss = 0.875, answer->figures.accuracy = 0.5;
  s.length_eval = answer;
  const LossModel::LengthRow done = m.length_row(s);
  CHECK(done.tone == LossModel::Tone::Normal);
  CHECK(done.text == "task.length 12 (trained 6): loss 0.8750, accuracy 50.0% at step 40");
  CHECK(done.report["eval_loss"] == 0.875);

  auto refused = std::make_shared<LengthEvalView>(*answer);
  refused->error = "model.position is \"learned\"";
  s.length_eval = refused;
  const LossModel::LengthRow bad = m.length_row(s);
  CHECK(bad.tone == LossModel::Tone::Warning);
  CHECK(bad.text == refused->error);
  CHECK(bad.report["error"] == refused->error);

  TaskConfig modadd;  // no length to change: no row
  modadd.name = "modadd";
  s.serial = 8;
  m.set_task(s, modadd);
  CHECK(m.length_key().empty());
  TaskConfig text;  // a text task's length is its context, and the field is refilled
  text.name = "text";
  text.context = 32;
  s.serial = 9;
  m.set_task(s, text);
  CHECK(m.length_key() == "task.context");
  CHECK(m.eval_length == 64);
}

TEST_CASE("loss model: the eval-length hint says what the key counts for the task") {
  // Issue 48 item 8: for recall the hint read "task.length of the model's task", as if the key
  // were a sequence length; recall's task.length is its key-value pairs (config.md).
  LossModel m;
  Snapshot s = loss_snapshot();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"recall", "task.length (key-value pairs)"},
      {"copy", "task.length (symbols)"},
      {"induction", "task.length (prefix tokens)"},
      {"parity", "task.length (symbols of the longest string)"},
      {"mqar", "task.context (tokens in the sequence)"},
      {"text", "task.context (tokens per window)"}};
  for (const auto& [task, hint] : cases) {
    CAPTURE(task);
    TaskConfig t;
    t.name = task;
    ++s.serial;
    m.set_task(s, t);
    CHECK(m.length_row(s).text.find(hint + " of the model's task") == 0);
  }
}
