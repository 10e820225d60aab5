// The benchmark suite (core/training/headless/suite.h) on a tiny manifest trained in this process:
// the per-pair learning-rate grid, the choice on the validation set (never the reported eval
// figures), the seeds at the chosen rate, the leaderboard's statistics against the runs' own
// summaries, length evaluation, and resumption.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/analysis/statistics.h"
#include "core/base/error.h"
#include "core/config/config.h"
#include "core/runs/directory/run_dir.h"
#include "core/training/headless/suite.h"
#include "core/training/headless/tuned_arms.h"
#include "core/training/interventions/length_eval.h"
#include "core/training/recording/saved_run.h"
#include "core/training/session/session.h"
#include "temp_dir.h"

using namespace attn;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void write(const fs::path& p, const json& j) {
  std::ofstream(p) << j.dump(2) << "\n";
}

json tiny_task(const json& task) {
  return {{"seed", 1},
          {"threads", 1},
          {"task", task},
          {"model", {{"d_model", 16}, {"heads", 2}, {"layers", 1}, {"attention", "dot"}}},
          {"train",
           {{"steps", 24},
            {"batch_size", 8},
            {"lr", 3e-3},
            {"warmup", 2},
            {"eval_every", 8},
            {"eval_batches", 2},
            {"record_every", 0}}}};
}

fs::path tiny_manifest(const fs::path& dir) {
  write(dir / "parity.json", tiny_task({{"name", "parity"}, {"length", 4}, {"vocab", 2}}));
  write(dir / "mqar.json",
        tiny_task({{"name", "mqar"}, {"context", 16}, {"length", 2}, {"vocab", 32}}));
  const json manifest = {
      {"title", "tiny"},
      {"seeds", 2},
      {"lr_grid", {0.25, 4}},
      {"threshold", 0.4},
      {"tasks",
       {{{"name", "parity"}, {"config", "parity.json"}, {"source", "test"}, {"extrapolate", {8}}},
        {{"name", "mqar"}, {"config", "mqar.json"}, {"source", "test"}}}},
      {"mechanisms",
       {{{"name", "dot"}, {"position", "learned"}, {"set", {{"model.position", "learned"}}}},
        {{"name", "dot-rope"}, {"position", "rope"}, {"set", {{"model.position", "rope"}}}}}}};
  write(dir / "suite.json", manifest);
  return dir / "suite.json";
}

}  // namespace

TEST_CASE("suite: grid, validation choice, seeds at the chosen rate, leaderboard, resume") {
  test::ScopedTempDir tmp("suite");
  const SuitePlan plan = load_suite(tiny_manifest(tmp.path).string(), false);
  REQUIRE(plan.pairs.size() == 4);
  CHECK(plan.pairs[0].dir == "parity/dot");
  CHECK(plan.pairs[3].dir == "mqar/dot-rope");
  const SweepPlan grid = suite_grid_plan(plan, plan.pairs[0]);
  REQUIRE(grid.cells.size() == 2);
  CHECK(grid.cells[0].config.train.lr == doctest::Approx(7.5e-4));
  CHECK(grid.cells[1].config.train.lr == doctest::Approx(0.012));
  CHECK(grid.cells[0].config.seed == 1);

  SuiteRunOptions o;
  o.out_dir = (tmp.path / "out").string();
  const SuiteOutcome first = run_suite(plan, o);
  CHECK(first.ran == 4 * 3);  // 2 grid runs + 1 further seed per pair

  const json board = suite_leaderboard(plan, o.out_dir);
  REQUIRE(board["cells"].size() == 4);
  for (const auto& cell : board["cells"]) {
    CAPTURE(cell.dump());
    CHECK(cell["status"] == "done");
    CHECK(cell["seeds"] == 2);
    // The chosen rate is the grid's best on the validation set (ties to the lower loss).
    const auto& trials = cell["lr_grid"];
    REQUIRE(trials.size() == 2);
    const auto& a = trials[0];
    const auto& b = trials[1];
    const bool first_wins =
        a["validation_accuracy"].get<double>() > b["validation_accuracy"].get<double>() + 1e-9 ||
        (std::fabs(a["validation_accuracy"].get<double>() -
                   b["validation_accuracy"].get<double>()) <= 1e-9 &&
         a["validation_loss"].get<double>() <= b["validation_loss"].get<double>());
    CHECK(cell["lr_chosen"] == (first_wins ? a["lr"] : b["lr"]));
    CHECK(cell["lr_at_edge"] == true);  // a grid of two rates, not extended: either is an edge
    // The values are the runs' own summaries; the interval is the t-interval of them.
    std::vector<double> values;
    for (const auto& rel : cell["runs"]) {
      const RunDirectory run =
          read_run_directory((fs::path(o.out_dir) / rel.get<std::string>()).string());
      CHECK(run.config.train.lr == doctest::Approx(cell["lr_chosen"].get<double>()));
      values.push_back(run.summary["eval_accuracy"].get<double>());
    }
    CHECK(cell["values"].get<std::vector<double>>() == values);
    const MeanInterval m = mean_interval(values);
    CHECK(cell["mean"].get<double>() == doctest::Approx(m.mean));
    if (m.sd > 0) {
      CHECK(cell["ci95"][0].get<double>() == doctest::Approx(m.lo));
      CHECK(cell["ci95"][1].get<double>() == doctest::Approx(m.hi));
    }
    if (cell["task"] == "parity") {
      REQUIRE(cell["length_eval"].size() == 1);
      const auto& l = cell["length_eval"][0];
      CHECK(l["length"] == 8);
      if (cell["mechanism"] == "dot")
        CHECK(l["refused"].get<std::string>().find("learned") != std::string::npos);
      else
        CHECK(l["values"].size() == 2);
    }
  }
  CHECK(board["tasks"][0]["key"] == "task.length");
  CHECK(board["tasks"][0]["trained_length"] == 4);

  // Nothing is retrained.
  const SuiteOutcome again = run_suite(plan, o);
  CHECK(again.ran == 0);
  CHECK(again.skipped == 4 * 3);

  // The choice never reads the reported eval figures: reverse them in every grid run's summary
  // and metrics (the better rate now looks worse) and choose again.
  for (const auto& pair : plan.pairs) {
    const LrChoice before = choose_learning_rate(plan, pair, o.out_dir);
    REQUIRE(before.chosen >= 0);
    for (size_t i = 0; i < before.trials.size(); ++i) {
      const fs::path summary = fs::path(o.out_dir) / before.trials[i].run / "summary.json";
      json s = json::parse(std::ifstream(summary));
      const bool chosen = static_cast<int>(i) == before.chosen;
      s["eval_accuracy"] = chosen ? 0.0 : 1.0;
      s["eval_loss"] = chosen ? 99.0 : 0.0;
      write(summary, s);
    }
    const LrChoice after = choose_learning_rate(plan, pair, o.out_dir);
    CHECK(after.chosen == before.chosen);
  }
}

TEST_CASE("suite: the validation set is not the eval set; tasks without one are refused") {
  ExperimentConfig c =
      parse_config(tiny_task({{"name", "mqar"}, {"context", 16}, {"length", 2}, {"vocab", 32}}));
  TrainingSession s(c);
  for (int i = 0; i < 5; ++i) s.train_step();
  const EvalFigures v = evaluate_validation(s);
  const EvalResult e = s.evaluate();
  CHECK(std::isfinite(v.loss));
  CHECK(v.loss != e.loss);
  CHECK(evaluate_validation(s).loss == v.loss);  // fixed, like the eval set
  ExperimentConfig m = c;
  m.task = TaskConfig{};
  m.task.name = "modadd";
  TrainingSession mod(m);
  CHECK_THROWS_WITH_AS(evaluate_validation(mod), doctest::Contains("no validation set"), Error);
}

TEST_CASE("suite: manifest errors name the culprit") {
  test::ScopedTempDir tmp("suite-bad");
  const fs::path manifest = tiny_manifest(tmp.path);
  SuiteFilter f;
  f.tasks = {"nope"};
  CHECK_THROWS_WITH_AS(
      load_suite(manifest.string(), false, f),
      doctest::Contains("task \"nope\" is not in the suite (it has: parity, mqar)"), Error);
  json j = json::parse(std::ifstream(manifest));
  // lr_extend: each pair's grid may grow past its edge; quick.lr_extend for the quick slice.
  CHECK(load_suite(manifest.string(), false).lr_extend == 0);
  j["lr_extend"] = 2;
  j["quick"] = {{"lr_extend", 1}};
  write(manifest, j);
  const SuitePlan extended = load_suite(manifest.string(), false);
  CHECK(extended.lr_extend == 2);
  CHECK(suite_arm(extended, extended.pairs[0]).extend == 2);
  CHECK(load_suite(manifest.string(), true).lr_extend == 1);
  for (const json& bad : {json(-1), json(11), json(1.5), json("2")}) {
    j["lr_extend"] = bad;
    write(manifest, j);
    const std::string message = "lr_extend must be an integer from 0 to 10, got " + bad.dump();
    CHECK_THROWS_WITH_AS(load_suite(manifest.string(), false), doctest::Contains(message.c_str()),
                         Error);
  }
  j["lr_extend"] = 0;
  j["quick"]["lr_extend"] = 12;
  write(manifest, j);
  CHECK_THROWS_WITH_AS(load_suite(manifest.string(), true),
                       doctest::Contains("quick.lr_extend must be an integer"), Error);
  j.erase("lr_extend");
  j.erase("quick");
  j["mechanisms"][1]["set"]["model.position"] = "sideways";
  write(manifest, j);
  CHECK_THROWS_WITH_AS(load_suite(manifest.string(), false),
                       doctest::Contains("mechanism \"dot-rope\""), Error);
}

// Issue 49: with gate_on_reference the reference (dot-rope) trains first, and the other
// mechanisms train only on the tasks it learned (solved by at least 80% of its seeds); the board
// marks the rest "not_trained". Parity at threshold 0.3 on 128 eval sequences is "solved" by any
// model (chance is 0.5), MQAR after 24 steps is not (chance about 1/32): one task of each kind.
TEST_CASE("suite: gated on the reference, the others train only where it learned") {
  test::ScopedTempDir tmp("suite-gate");
  const fs::path manifest = tiny_manifest(tmp.path);
  json m = json::parse(std::ifstream(manifest));
  m["gate_on_reference"] = true;
  m["threshold"] = 0.3;
  write(manifest, m);
  json parity = json::parse(std::ifstream(tmp.path / "parity.json"));
  parity["train"]["eval_batches"] = 16;
  write(tmp.path / "parity.json", parity);
  const SuitePlan plan = load_suite(manifest.string(), false);
  CHECK(plan.reference == "dot-rope");
  CHECK(plan.reference_index == 1);
  CHECK(plan.gate);

  SuiteRunOptions o;
  o.out_dir = (tmp.path / "out").string();
  std::vector<std::string> lines;
  o.log = [&](const std::string& line) { lines.push_back(line); };
  const SuiteOutcome out = run_suite(plan, o);
  // The reference's outcome, counted again from its runs' own summaries.
  auto recount = [&](const std::string& task) {
    int k = 0, n = 0;
    const TunedRuns runs =
        tuned_runs(suite_arm(plan, plan.pairs[task == "parity" ? 1 : 3]), o.out_dir);
    for (const auto& rel : runs.runs) {
      const json s = json::parse(std::ifstream(fs::path(o.out_dir) / rel / "summary.json"));
      ++n;
      k += s["eval_accuracy"].get<double>() >= 0.3;
    }
    return std::make_pair(k, n);
  };
  const ReferenceResult on_parity = reference_result(plan, 0, o.out_dir);
  const ReferenceResult on_mqar = reference_result(plan, 1, o.out_dir);
  REQUIRE(on_parity.finished);
  REQUIRE(on_mqar.finished);
  CHECK(std::make_pair(on_parity.solved, on_parity.n) == recount("parity"));
  CHECK(std::make_pair(on_mqar.solved, on_mqar.n) == recount("mqar"));
  REQUIRE(on_parity.learned);  // 2 of 2
  REQUIRE_FALSE(on_mqar.learned);
  CHECK(out.ran == 3 * 3);  // both references and parity/dot: 2 grid runs and 1 seed each
  CHECK(fs::is_directory(fs::path(o.out_dir) / "parity" / "dot" / "seeds"));
  CHECK_FALSE(fs::exists(fs::path(o.out_dir) / "mqar" / "dot"));
  std::vector<std::string> gated;  // among the progress lines
  for (const auto& line : lines)
    if (line.find("not learned at this budget") != std::string::npos) gated.push_back(line);
  REQUIRE(gated.size() == 1);
  CHECK(gated[0].find("mqar: not learned at this budget (dot-rope solved " +
                      std::to_string(on_mqar.solved) + "/2): its other 1 mechanism is not trained") == 0);

  const json board = suite_leaderboard(plan, o.out_dir);
  CHECK(board["reference"] == "dot-rope");
  CHECK(board["gate_on_reference"] == true);
  for (const auto& cell : board["cells"]) {
    CAPTURE(cell.dump());
    const bool gated_off = cell["task"] == "mqar" && cell["mechanism"] == "dot";
    CHECK(cell["status"] == (gated_off ? "not_trained" : "done"));
    if (gated_off)
      CHECK(cell["why"].get<std::string>().find("not learned at this budget: dot-rope solved") ==
            0);
  }
  // Resuming trains nothing more; shards stay independent, so they train every pair ungated.
  CHECK(run_suite(plan, o).ran == 0);
  SuiteRunOptions shard = o;
  shard.out_dir = (tmp.path / "shards").string();
  shard.shard_count = 2;
  int ran = 0;
  for (int i = 0; i < 2; ++i) {
    shard.shard_index = i;
    ran += run_suite(plan, shard).ran;
  }
  CHECK(ran == 4 * 3);
  CHECK(fs::is_directory(fs::path(shard.out_dir) / "mqar" / "dot" / "seeds"));

  // The manifest's keys are checked.
  m["reference"] = "nope";
  write(manifest, m);
  CHECK_THROWS_WITH_AS(load_suite(manifest.string(), false),
                       doctest::Contains("reference \"nope\" must name a mechanism"), Error);
  m["reference"] = "dot";
  m["gate_on_reference"] = "yes";
  write(manifest, m);
  CHECK_THROWS_WITH_AS(load_suite(manifest.string(), false),
                       doctest::Contains("gate_on_reference must be true or false, got \"yes\""),
                       Error);
  m["gate_on_reference"] = false;
  write(manifest, m);
  SuiteFilter without_reference;
  without_reference.mechanisms = {"dot-rope"};
  CHECK(load_suite(manifest.string(), false).reference_index == 0);
  CHECK(load_suite(manifest.string(), false, without_reference).reference_index == -1);
}

// Issue 34: reproduce's arms choose their rate on text held out in spread blocks. Poisoning every
// block but the validation ones (the eval blocks included) after training leaves the choice
// and its figures unchanged.
TEST_CASE("tuned arms: the rate chosen on a text validation split ignores the eval split") {
  test::ScopedTempDir tmp("tuned-text");
  const int blocks = 24;
  // Which blocks validate: one distinct character per block names them (the permutation
  // depends only on the number of blocks).
  auto corpus = [&](const fs::path& file, auto&& block_text) {
    std::string text;
    for (int b = 0; b < blocks; ++b) text += block_text(b);
    std::ofstream(file) << text;
  };
  corpus(tmp.path / "marked.txt",
         [](int b) { return std::string(4096, static_cast<char>('A' + b)); });
  json task = {{"name", "text"},       {"text_path", (tmp.path / "marked.txt").string()},
               {"context", 16},        {"split", "blocks"},
               {"eval_fraction", 0.1}, {"validation_fraction", 0.1}};
  std::set<int> validation_blocks;
  {
    const ExperimentConfig c = parse_config(tiny_task(task));
    TrainingSession s(c);
    for (const auto& b : s.task().validation_set()) {
      auto v = b.inputs.flatten().contiguous();
      for (int64_t i = 0; i < v.numel(); ++i)
        validation_blocks.insert(static_cast<int>(v.data_ptr<int64_t>()[i]));  // token = block
    }
  }
  REQUIRE(validation_blocks.size() == 2);
  // A learnable corpus of the same length; the poisoned copy reverses every other block.
  const std::string sentence = "the cat sat on the mat and the dog sat on the log. ";
  auto plain = [&](int) {
    std::string s;
    while (s.size() < 4096) s += sentence;
    return s.substr(0, 4096);
  };
  const fs::path text = tmp.path / "text.txt";
  corpus(text, plain);
  task["text_path"] = text.string();
  TunedArm arm;
  arm.name = "dot";
  arm.dir = "dot";
  arm.config = tiny_task(task);
  arm.lr_grid = {0.3, 3.0};
  arm.seeds = 1;
  TunedRunOptions o;
  o.out_dir = (tmp.path / "runs").string();
  run_tuned_arms({arm}, o);
  const LrChoice before = choose_tuned_rate(arm, o.out_dir);
  REQUIRE(before.chosen >= 0);
  REQUIRE(before.trials.size() == 2);
  CHECK(before.trials[0].validated);
  corpus(text, [&](int b) {
    std::string s = plain(b);
    if (!validation_blocks.count(b)) std::reverse(s.begin(), s.end());
    return s;
  });
  // The figures were cached beside each grid run; drop the cache so that they are computed
  // again, on the poisoned corpus.
  for (const auto& t : before.trials) {
    const fs::path cache = fs::path(o.out_dir) / t.run / "validation.json";
    REQUIRE(fs::exists(cache));
    fs::remove(cache);
  }
  const LrChoice after = choose_tuned_rate(arm, o.out_dir);
  CHECK(after.chosen == before.chosen);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(after.trials[i].validation_loss == before.trials[i].validation_loss);
    CHECK(after.trials[i].validation_accuracy == before.trials[i].validation_accuracy);
  }
  // The poison reached the eval split: the chosen run scores differently on it now.
  const RunDirectory run =
      read_run_directory((fs::path(o.out_dir) / before.trials[before.chosen].run).string());
  SavedSession saved(run);
  CHECK(saved.session().evaluate().loss != doctest::Approx(run.summary["eval_loss"].get<double>()));
  // A grid on a task without a validation set is refused by name.
  ExperimentConfig m = parse_config(tiny_task(task));
  m.task.split = "tail";
  CHECK(validation_refusal(m.task).find("task.split \"blocks\"") != std::string::npos);
}

// A best rate at the grid's edge grows the grid by a grid step, up to `extend` times. The grid
// runs train for real; their cached validation figures are then set so that the top rate wins,
// which makes the extension certain.
TEST_CASE("tuned arms: a choice at the grid's top edge tries the next rate up") {
  test::ScopedTempDir tmp("tuned-extend");
  TunedArm arm;
  arm.name = "dot";
  arm.dir = "dot";
  arm.config = tiny_task({{"name", "copy"}, {"length", 4}, {"vocab", 8}});
  arm.lr_grid = {0.01, 0.02};  // 3e-5, 6e-5: barely learns in 24 steps (accuracy near 1/8)
  arm.seeds = 1;
  arm.extend = 0;
  TunedRunOptions o;
  o.out_dir = (tmp.path / "runs").string();
  run_tuned_arms({arm}, o);
  const LrChoice grid = choose_tuned_rate(arm, o.out_dir);
  REQUIRE(grid.trials.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const fs::path cache = fs::path(o.out_dir) / grid.trials[i].run / "validation.json";
    json v = json::parse(std::ifstream(cache));
    v["accuracy"] = i == 1 ? 0.9 : 0.1;  // the top rate wins
    write(cache, v);
  }
  CHECK(choose_tuned_rate(arm, o.out_dir).at_edge);
  arm.extend = 2;
  arm.seeds = 2;
  const LrChoice pending = choose_tuned_rate(arm, o.out_dir);
  CHECK(pending.next_rate == doctest::Approx(1.2e-4));  // a grid step (x2) above 6e-5
  CHECK(pending.next_extension == 1);
  CHECK_FALSE(tuned_runs(arm, o.out_dir).grid_done);
  run_tuned_arms({arm}, o);
  const TunedRuns r = tuned_runs(arm, o.out_dir);
  REQUIRE(r.choice.trials.size() == 3);
  CHECK(r.choice.trials[2].run.find("dot/grid-ext1/lr=0.00012/") == 0);
  // 1.2e-4 trained for real (accuracy far below the cached 0.9): 6e-5 stays the best, inside.
  CHECK(r.choice.trials[2].validation_accuracy < 0.9);
  CHECK(r.choice.chosen == 1);
  CHECK_FALSE(r.choice.at_edge);
  CHECK(r.grid_done);
  CHECK(r.all_done);
  REQUIRE(r.runs.size() == 2);
  const RunDirectory second = read_run_directory((fs::path(o.out_dir) / r.runs[1]).string());
  CHECK(second.config.train.lr == doctest::Approx(6e-5));
  CHECK(second.config.seed == 2);
  // Without extension the choice stops at the grid's own edge.
  arm.extend = 0;
  CHECK(choose_tuned_rate(arm, o.out_dir).trials.size() == 2);
}

// An arm judged on its loss is chosen on it (issue 49: the rate on the metric the claim judges):
// accuracy and loss that disagree pick different rates, and the loss criterion follows the
// loss, growing the grid where the loss's best rate lies at its edge.
TEST_CASE("tuned arms: an arm judged on loss takes the rate of the lowest validation loss") {
  // Accuracy peaks at 1e-3 (inside); loss keeps falling up to 4e-3 (beyond the grid's top).
  auto trial = [](double lr, int) {
    LrTrial t;
    t.lr = lr;
    t.finished = t.validated = true;
    t.validation_accuracy = 1 - 0.1 * std::fabs(std::log2(lr / 1e-3));
    t.validation_loss = 1 + 0.1 * std::fabs(std::log2(lr / 4e-3));
    return t;
  };
  const std::vector<double> multipliers = {0.5, 1, 2};
  std::vector<LrTrial> grid;
  for (double m : multipliers) grid.push_back(trial(1e-3 * m, 0));
  const LrChoice on_accuracy = extend_lr_choice(grid, multipliers, 4, true, trial);
  CHECK(on_accuracy.trials.size() == 3);
  CHECK(on_accuracy.trials[on_accuracy.chosen].lr == doctest::Approx(1e-3));
  const LrChoice on_loss = extend_lr_choice(grid, multipliers, 4, true, trial, LrCriterion::loss);
  REQUIRE(on_loss.trials.size() == 5);  // 4e-3, then 8e-3 to bracket it
  CHECK(on_loss.trials[on_loss.chosen].lr == doctest::Approx(4e-3));
  CHECK_FALSE(on_loss.at_edge);
  // Equal losses: the higher accuracy wins.
  std::vector<LrTrial> tie = {trial(1e-3, 0), trial(2e-3, 0)};
  tie[0].validation_loss = tie[1].validation_loss = 0.5;
  CHECK(extend_lr_choice(tie, {1, 2}, 0, true, trial, LrCriterion::loss).chosen == 0);
}

// extend_lr_choice (the chooser behind every suite cell and reproduce arm) on a fake grid: no
// training, each trial's validation accuracy a function of its rate that peaks at `peak`, so
// the rate the grid must grow to is known in advance.
TEST_CASE("tuned arms: the grid grows until the chosen rate is interior, up to the cap") {
  auto fake = [](double peak) {
    return [peak](double lr, int) {
      LrTrial t;
      t.lr = lr;
      t.finished = t.validated = true;
      t.validation_accuracy = 1 - 0.1 * std::fabs(std::log2(lr / peak));
      t.validation_loss = 1 - t.validation_accuracy;
      return t;
    };
  };
  const std::vector<double> multipliers = {0.5, 1, 2};
  auto grid_of = [&](double peak) {
    std::vector<LrTrial> g;
    for (double m : multipliers) g.push_back(fake(peak)(1e-3 * m, 0));
    return g;
  };
  auto rates = [](const LrChoice& c) {
    std::vector<double> r;
    for (const auto& t : c.trials) r.push_back(t.lr);
    return r;
  };
  // Peak at 8e-3, three grid steps above 1e-3: 2e-3 (edge) -> 4e-3 -> 8e-3 -> 1.6e-2 brackets.
  const LrChoice up = extend_lr_choice(grid_of(8e-3), multipliers, 4, true, fake(8e-3));
  CHECK(rates(up) == std::vector<double>{5e-4, 1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2});
  CHECK(up.trials[up.chosen].lr == doctest::Approx(8e-3));
  CHECK_FALSE(up.at_edge);
  CHECK(up.next_rate == 0);
  // The same with a cap of 2: it stops at 8e-3, still the highest tried: at the edge.
  const LrChoice capped = extend_lr_choice(grid_of(8e-3), multipliers, 2, true, fake(8e-3));
  CHECK(rates(capped).size() == 5);
  CHECK(capped.trials[capped.chosen].lr == doctest::Approx(8e-3));
  CHECK(capped.at_edge);
  // Downwards: peak at 1.25e-4, two steps below the grid's lowest.
  const LrChoice down = extend_lr_choice(grid_of(1.25e-4), multipliers, 4, true, fake(1.25e-4));
  CHECK(rates(down) == std::vector<double>{5e-4, 1e-3, 2e-3, 2.5e-4, 1.25e-4, 6.25e-5});
  CHECK(down.trials[down.chosen].lr == doctest::Approx(1.25e-4));
  CHECK_FALSE(down.at_edge);
  // A peak inside the grid: nothing is added.
  const LrChoice inside = extend_lr_choice(grid_of(1e-3), multipliers, 4, true, fake(1e-3));
  CHECK(inside.trials.size() == 3);
  CHECK_FALSE(inside.at_edge);
  // An extension not trained yet is asked for, and the choice waits for it.
  auto pending = [&](double lr, int k) {
    LrTrial t = fake(8e-3)(lr, k);
    t.finished = t.validated = k < 2;
    return t;
  };
  const LrChoice waits = extend_lr_choice(grid_of(8e-3), multipliers, 4, true, pending);
  CHECK(waits.next_rate == doctest::Approx(8e-3));
  CHECK(waits.next_extension == 2);
  // A rate above the choice that diverged bounds it: the choice is interior, no more growth.
  auto diverges = [&](double lr, int k) {
    LrTrial t = fake(8e-3)(lr, k);
    t.diverged = lr > 3e-3;
    return t;
  };
  const LrChoice bounded = extend_lr_choice(grid_of(8e-3), multipliers, 4, true, diverges);
  CHECK(rates(bounded).size() == 4);
  CHECK(bounded.trials[bounded.chosen].lr == doctest::Approx(2e-3));
  CHECK_FALSE(bounded.at_edge);
  // Without validation (a grid of one rate) nothing grows.
  CHECK(extend_lr_choice(grid_of(8e-3), multipliers, 4, false, fake(8e-3)).trials.size() == 3);
}

// Zoology's own assertion (multiquery_ar.py: vocab_size > input_seq_len), where the config is
// parsed: the message names both keys and the least vocabulary that passes.
TEST_CASE("mqar: task.vocab must exceed task.context, as Zoology asserts") {
  auto config = [](int context, int length, int vocab) {
    return tiny_task(
        {{"name", "mqar"}, {"context", context}, {"length", length}, {"vocab", vocab}});
  };
  for (const auto& [context, length, vocab, least] :
       std::vector<std::array<int, 4>>{{64, 4, 16, 65}, {64, 4, 64, 65}, {256, 16, 64, 257}}) {
    CAPTURE(vocab);
    try {
      parse_config(config(context, length, vocab), "mqar.json");
      FAIL("accepted");
    } catch (const Error& e) {
      const std::string m = e.what();
      CHECK(m.find("mqar.json") != std::string::npos);
      CHECK(m.find("task.vocab (" + std::to_string(vocab) + ")") != std::string::npos);
      CHECK(m.find("task.context (" + std::to_string(context) + ")") != std::string::npos);
      CHECK(m.find("least task.vocab that passes is " + std::to_string(least)) !=
            std::string::npos);
    }
    CHECK(parse_config(config(context, length, least)).task.vocab == least);
  }
}
