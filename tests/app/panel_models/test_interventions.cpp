// The Interventions panel's model (app/panels/attention/interventions_model.h) without a window:
// the importance and patching maps it gives for a hand-built InterventionView hold the view's
// numbers, its controls (loss or accuracy, ablation mode, Patch, Restore all) change what is
// drawn or asked, and its summary and report state the ablation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "app/panels/attention/interventions_model.h"

using namespace attn;
using attn::gui::InterventionsModel;

namespace {

std::shared_ptr<InterventionView> view() {
  auto v = std::make_shared<InterventionView>();
  v->step = 40;
  ImportanceTable& t = v->importance;
  t.step = 40;
  t.batches = 2;
  t.layers = 2, t.heads = 2;
  t.baseline.loss = 1.0;
  t.baseline.accuracy = 0.5;
  t.loss = {1.5f, 1.25f, 2.0f, 1.0f};
  t.accuracy = {0.25f, 0.5f, 0.125f, 0.5f};
  PatchTable& p = v->patch;
  p.step = 40;
  p.metric = "logit_diff";
  p.layers = 2, p.heads = 2, p.positions = 3;
  p.tokens = {"a", "b", "c"};
  p.restored = {0.75f, 0.125f, -0.25f, 0.5f};
  for (int i = 0; i < 12; ++i) p.restored_at.push_back(0.0625f * i);
  return v;
}

const std::vector<float>& cells(const fig::Figure& f, size_t panel = 0) {
  return f.panels.at(panel).heatmaps.at(0).values;
}

}  // namespace

TEST_CASE("interventions model: the importance map holds each head's loss change") {
  InterventionsModel m;
  const auto v = view();
  m.build(v.get());
  REQUIRE(m.have_importance());
  // loss - baseline loss, layer-major.
  CHECK(cells(m.importance()) == std::vector<float>{0.5f, 0.25f, 1.0f, 0.0f});
  CHECK(m.shown_figure("importance") == &m.importance());
}

TEST_CASE("interventions model: the accuracy control maps the accuracy change in points") {
  InterventionsModel m;
  const auto v = view();
  m.build(v.get());
  m.show_accuracy = true;
  m.build(v.get());  // the same view: rebuilt for the control alone
  const std::vector<float>& c = cells(m.importance());
  REQUIRE(c.size() == 4);
  CHECK(c[0] == doctest::Approx(-25.0));
  CHECK(c[1] == doctest::Approx(0.0));
  CHECK(c[2] == doctest::Approx(-37.5));
  CHECK(c[3] == doctest::Approx(0.0));
  CHECK(m.importance_text(v->importance, 1, 0, -37.5f, false)
            .find("changes the eval accuracy (points) by -37.5000") != std::string::npos);
}

TEST_CASE("interventions model: the patching map holds the restored shares, by position below") {
  InterventionsModel m;
  const auto v = view();
  m.build(v.get());
  REQUIRE(m.have_patch());
  REQUIRE(m.patching().panels.size() == 2);
  CHECK(cells(m.patching(), 0) == v->patch.restored);
  CHECK(cells(m.patching(), 1) == v->patch.restored_at);
  CHECK(InterventionsModel::patch_text(v->patch, 1, 3, 2, 0.5f) ==
        "layer 1 head 1 at position 2 (c): restores 0.500");
  // A narrow tile draws one map at a time, the one `shown` picks.
  CHECK(m.draws_importance(true));
  CHECK_FALSE(m.draws_patch(true));
  m.shown = 1;
  CHECK_FALSE(m.draws_importance(true));
  CHECK(m.draws_patch(true));
  CHECK(m.draws_importance(false));
  CHECK(m.draws_patch(false));
}

TEST_CASE("interventions model: the controls change the request the trainer gets") {
  InterventionsModel m;
  InterventionRequest r;
  CHECK(m.first_show(r));  // the first frame asks for the importance table, once
  CHECK(r.importance);
  CHECK_FALSE(m.first_show(r));
  CHECK(InterventionsModel::set_mode(r, 1));
  CHECK(r.mode == AblationMode::mean);
  CHECK_FALSE(InterventionsModel::set_mode(r, 1));  // unchanged: nothing to send
  CHECK_FALSE(InterventionsModel::set_mode(r, 7));
  r.ablate = {{0, 1}, {1, 0}};
  CHECK(InterventionsModel::restore_all(r));
  CHECK(r.ablate.empty());
  CHECK_FALSE(InterventionsModel::restore_all(r));
  std::snprintf(m.clean(), InterventionsModel::kProbeCapacity, "%s", "1 2 3");
  CHECK(m.patch(r));
  CHECK(r.patch);
  CHECK(r.clean == "1 2 3");
  CHECK(r.corrupt.empty());  // the task's twin
  CHECK(InterventionsModel::stop_patching(r));
  CHECK_FALSE(r.patch);
}

TEST_CASE("interventions model: the summary and report state the ablation") {
  auto v = view();
  v->ablation.mode = AblationMode::zero;
  v->ablation.heads = {{1, 0}};
  v->ablation.batches = 1;
  v->ablation.baseline = {1.0, 0.5};
  v->ablation.ablated = {2.0, 0.125};
  v->prediction = "b";
  v->prediction_probability = 0.75;
  v->ablated_prediction = "c";
  v->ablated_probability = 0.5;
  const auto s = InterventionsModel::summary(v.get());
  CHECK_FALSE(s.waiting);
  CHECK(s.text ==
        "zero ablation of 1.0 at step 40 (1 eval batch): loss 1.0000 -> 2.0000, accuracy 50.0% "
        "-> 12.5%; the probe predicts b (0.75) -> c (0.50)");
  CHECK(InterventionsModel::summary(nullptr).waiting);
  InterventionsModel m;
  InterventionRequest r;
  r.ablate = {{1, 0}};
  m.observe(r, v.get());
  CHECK(m.report()["ablate"] == "1.0");
  CHECK(m.report()["ablated_loss"] == 2.0);
  CHECK(m.report()["baseline_loss"] == 1.0);
  CHECK(m.report()["importance_step"] == 40);
  // Only heads inside the table are outlined.
  const auto out = InterventionsModel::outlined(v->importance, {{1, 1}, {2, 0}});
  REQUIRE(out.size() == 1);
  CHECK(out[0] == HeadRef{1, 1});
  Snapshot snap;
  snap.interventions = v;
  CHECK(InterventionsModel::figures(snap) == std::vector<std::string>{"importance", "patching"});
}

TEST_CASE("interventions model: the summary states the timeline's step and the batch count") {
  // The timeline at recorded step 400 while the model is at 1000: the view carries the recorded
  // importance (its baseline over 8 eval batches at 400) and the model's own figures at 1000.
  auto v = view();
  v->step = 1000;
  v->prediction = "b";
  v->ablation.batches = 4;
  v->ablation.baseline = {0.25, 0.875};
  v->importance.step = 400;
  v->importance.batches = 8;
  const auto s = InterventionsModel::summary(v.get(), 400);
  CHECK(s.dimmed);
  CHECK(s.text.find("Eval loss 1.0000, accuracy 50.0% at step 400 (8 eval batches).") !=
        std::string::npos);
  CHECK(s.text.find("1000") == std::string::npos);
  // An ablation runs on the model: its step, and the one the timeline shows.
  v->ablation.heads = {{0, 1}};
  v->ablation.ablated = {0.5, 0.5};
  v->ablated_prediction = "c";
  const auto a = InterventionsModel::summary(v.get(), 400);
  CHECK(a.text.find("at step 1000 (4 eval batches)") != std::string::npos);
  CHECK(a.text.find("(the model at step 1000; the timeline shows step 400)") != std::string::npos);
  // Following the live model: nothing to add.
  v->importance.step = 1000;
  CHECK(InterventionsModel::summary(v.get(), -1).text.find("timeline") == std::string::npos);
}

TEST_CASE("interventions model: the summary wraps between items, never inside a number") {
  // A proportional stand-in for the font: digits and '.' narrow, letters wider.
  const auto measure = [](const std::string& t) {
    float w = 0;
    for (char c : t) w += (c >= '0' && c <= '9') || c == '.' ? 6.0f : 7.5f;
    return w;
  };
  auto v = view();
  v->prediction = "v5";
  v->importance.baseline = {1.2095, 0.996};
  const auto idle = InterventionsModel::summary(v.get(), 40);
  v->ablation.heads = {{0, 1}, {1, 0}};
  v->ablation.batches = 8;
  v->ablation.baseline = {0.0090, 0.996};
  v->ablation.ablated = {4.4712, 0.125};
  v->ablated_prediction = "v3";
  const auto ablated = InterventionsModel::summary(v.get(), 40);
  for (const auto& s : {idle, ablated}) {
    REQUIRE(s.items.size() >= 5);
    // Every number of the line, as a whole word ("1.2095", "99.6%", "4.4712,").
    std::vector<std::string> numbers;
    std::istringstream words(s.text);
    for (std::string w; words >> w;)
      if (w.find_first_of("0123456789") != std::string::npos) numbers.push_back(w);
    REQUIRE(numbers.size() >= 4);
    for (float width = 20; width <= 900; width += 3) {
      CAPTURE(width);
      const auto lines = gui::wrap_items(s.items, width, measure);
      std::string joined;
      for (const auto& line : lines) {
        joined += (joined.empty() ? "" : " ") + line;
        // Wider than the width only when the line is one word.
        if (measure(line) > width) CHECK(line.find(' ') == std::string::npos);
      }
      CHECK(joined == s.text);  // nothing lost, nothing split without a space
      for (const auto& n : numbers) {
        bool whole = false;
        for (const auto& line : lines) {
          std::istringstream in(line);
          for (std::string w; in >> w;) whole |= w == n;
        }
        CHECK_MESSAGE(whole, "the number " << n << " is split");
      }
      // An item that fits the width is never broken.
      for (const auto& item : s.items) {
        if (measure(item) > width) continue;
        bool kept = false;
        for (const auto& line : lines) kept |= line.find(item) != std::string::npos;
        CHECK_MESSAGE(kept, "the item '" << item << "' is broken");
      }
    }
  }
  // The items the reader sees as pairs stay together.
  CHECK(std::find(idle.items.begin(), idle.items.end(), "Eval loss 1.2095,") != idle.items.end());
}
