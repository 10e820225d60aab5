// train.record_every has one meaning wherever a run is trained (issue 47): the views.rec cadence,
// 0 = no views.rec, absent = every evaluation (train.eval_every). `attnlab train` (train_headless)
// and the window's Trainer agree, and the window's live interventions refresh at evaluations
// whatever record_every says.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "core/config/config.h"
#include "core/runs/records/view_records.h"
#include "core/training/headless/headless.h"
#include "core/training/trainer.h"
#include "helpers.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

// tiny_config's run as a config file would give it: 12 steps, an evaluation every 5, and
// `record_every` as written (absent when empty).
ExperimentConfig parsed(const std::string& record_every) {
  nlohmann::json j = to_json(test::tiny_config());
  j["train"]["steps"] = 12;
  j["train"]["eval_every"] = 5;
  j["train"].erase("record_every");
  if (!record_every.empty()) j["train"]["record_every"] = std::stoll(record_every);
  return parse_config(j, "test");
}

// The steps views.rec holds in `dir`; {-1} when there is no views.rec.
std::vector<int64_t> recorded_steps(const fs::path& dir) {
  const fs::path rec = dir / kViewRecordsFile;
  if (!fs::exists(rec)) return {-1};
  std::vector<int64_t> steps;
  for (const auto& e : index_view_records(rec.string())) steps.push_back(e.step);
  return steps;
}

std::vector<int64_t> headless_steps(const ExperimentConfig& c, const fs::path& out) {
  HeadlessOptions h;
  h.out_dir = out.string();
  h.threads = 1;
  train_headless(c, h);
  return recorded_steps(out);
}

// The window's path: a Trainer recording under `root`, run to the end.
std::vector<int64_t> trainer_steps(const ExperimentConfig& c, const fs::path& root) {
  TrainerOptions o = test::fast_options();
  o.runs_root = root.string();
  Trainer t(c, o);
  t.start();
  REQUIRE(test::wait_until([&] { return test::in_state(t, TrainerState::Finished); }));
  const std::string dir = t.latest()->run_dir;
  CHECK(t.close().empty());
  REQUIRE(!dir.empty());
  return recorded_steps(dir);
}

}  // namespace

TEST_CASE("train.record_every: 0 records no views.rec, absent records at every evaluation") {
  const fs::path root = test::temp_dir("record-every");
  const std::vector<int64_t> off = {-1}, at_evals = {0, 5, 10, 12}, every_4 = {0, 4, 8, 12};
  CHECK(headless_steps(parsed("0"), root / "headless-0") == off);
  CHECK(trainer_steps(parsed("0"), root / "trainer-0") == off);
  CHECK(headless_steps(parsed(""), root / "headless-absent") == at_evals);
  CHECK(trainer_steps(parsed(""), root / "trainer-absent") == at_evals);
  CHECK(headless_steps(parsed("4"), root / "headless-4") == every_4);
  CHECK(trainer_steps(parsed("4"), root / "trainer-4") == every_4);
  fs::remove_all(root);
}

TEST_CASE("the window's interventions refresh at every evaluation, whatever train.record_every") {
  for (const char* record_every : {"0", "3"}) {
    CAPTURE(record_every);
    ExperimentConfig c = parsed(record_every);
    Trainer t(c, test::fast_options());
    InterventionRequest request;
    request.importance = true;
    t.request_interventions(request);
    std::set<int64_t> answered;  // the steps the published answers were computed at
    for (int64_t step = 1; step <= c.train.steps; ++step) {
      t.step_once();
      REQUIRE(test::wait_until([&] {
        const auto s = t.latest();
        return (s->step == step && s->state == TrainerState::Paused) ||
               s->state == TrainerState::Finished;
      }));
      const auto s = t.latest();
      REQUIRE(s->interventions);
      answered.insert(s->interventions->step);
    }
    // Answered at once (step 0), at each evaluation (5, 10) and at the last step (12); before,
    // a record_every of 3 refreshed at 3, 6, 9 and 0 meant "every eval_every".
    CHECK(answered == std::set<int64_t>{0, 5, 10, 12});
  }
}
