// task.train_examples (core/data/training_set.h): a synthetic task trains on a fixed set of N
// sequences generated once from the seed, served in shuffled epochs; 0 keeps the endless fresh
// stream; a resumed run continues bit-identically; text, modadd and oversized sets are refused.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>

#include "core/base/error.h"
#include "core/config/config.h"
#include "core/data/tasks.h"
#include "core/training/session/session.h"
#include "helpers.h"
#include "task_helpers.h"

using namespace attn;
using nlohmann::json;
using test::row;
using test::task_config;

namespace {

using Sequence = std::vector<int64_t>;  // one example: its input row, then its target row

std::vector<Sequence> sequences(const Batch& b) {
  std::vector<Sequence> out;
  for (int64_t i = 0; i < b.inputs.size(0); ++i) {
    auto s = row(b.inputs, i);
    const auto t = row(b.targets, i);
    s.insert(s.end(), t.begin(), t.end());
    out.push_back(s);
  }
  return out;
}

// Each distinct sequence of steps [0, steps) of step_batch, with how often it came.
std::map<Sequence, int> drawn(const Task& task, int batch_size, int64_t steps) {
  std::map<Sequence, int> count;
  for (int64_t s = 0; s < steps; ++s)
    for (const auto& q : sequences(task.step_batch(batch_size, 1000 + s, s))) ++count[q];
  return count;
}

// Tasks whose sequences are too many to repeat among a few hundred draws (reverse_string's
// one-symbol strings among them: 1,000 symbols).
std::vector<TaskConfig> task_configs(int train_examples) {
  std::vector<TaskConfig> out = {
      task_config("induction_head", 16, 8, 10), task_config("mqar", 64, 4, 256),
      task_config("selective_copy", 32, 4, 16), task_config("reverse_string", 128, 12, 1000),
      task_config("copy", 128, 8, 10),          task_config("induction", 128, 6, 10)};
  for (auto& t : out) t.train_examples = train_examples;
  return out;
}

}  // namespace

TEST_CASE("task.train_examples: every training batch comes from one fixed set of N sequences") {
  const int n = 24, batch = 8;  // 3 steps an epoch
  for (const auto& c : task_configs(n)) {
    INFO(c.name);
    const auto task = make_task(c, 7, 2, batch);
    // One epoch: each of the N sequences exactly once (drawn without replacement).
    const auto epoch = drawn(*task, batch, 3);
    CHECK(epoch.size() == static_cast<size_t>(n));
    // Ten epochs: the same N sequences, each exactly ten times.
    const auto ten = drawn(*task, batch, 30);
    REQUIRE(ten.size() == static_cast<size_t>(n));
    for (const auto& [q, times] : ten) {
      CHECK(epoch.count(q) == 1);
      CHECK(times == 10);
    }
    // train_batch (a stream seed, no step) draws from the same set.
    std::set<Sequence> sampled;
    for (uint64_t s = 0; s < 40; ++s)
      for (const auto& q : sequences(task->train_batch(batch, s))) sampled.insert(q);
    CHECK(sampled.size() <= static_cast<size_t>(n));
    for (const auto& q : sampled) CHECK(epoch.count(q) == 1);
    // Epochs are shuffled apart: the second epoch's first batch is another order.
    CHECK(
        !torch::equal(task->step_batch(batch, 0, 0).inputs, task->step_batch(batch, 0, 3).inputs));

    // Another task object with the same seed serves the same batches; another seed another set.
    const auto twin = make_task(c, 7, 2, batch);
    for (int64_t s : {0, 1, 2, 5, 29}) {
      CHECK(
          torch::equal(task->step_batch(batch, 1, s).inputs, twin->step_batch(batch, 1, s).inputs));
      CHECK(torch::equal(task->step_batch(batch, 1, s).targets,
                         twin->step_batch(batch, 1, s).targets));
    }
    const auto other = drawn(*make_task(c, 8, 2, batch), batch, 3);
    int shared = 0;
    for (const auto& [q, times] : other) shared += static_cast<int>(epoch.count(q));
    CHECK(shared == 0);
  }
}

TEST_CASE("task.train_examples: a set of N not a multiple of the batch crosses epochs in a batch") {
  auto c = task_config("induction_head", 16, 8, 10);
  c.train_examples = 5;
  const auto task = make_task(c, 3, 2, 8);
  // Batch 8 over 5 examples: 40 draws are exactly 8 epochs, so each sequence comes 8 times.
  const auto count = drawn(*task, 8, 5);
  REQUIRE(count.size() == 5);
  for (const auto& [q, times] : count) CHECK(times == 8);
}

TEST_CASE("task.train_examples 0 (or absent) keeps the endless fresh stream as it was") {
  const json absent = json::parse(R"({"task": {"name": "induction_head", "context": 16}})");
  json zero = absent;
  zero["task"]["train_examples"] = 0;
  const auto a = parse_config(absent), z = parse_config(zero);
  CHECK(to_json(a) == to_json(z));
  CHECK(config_hash(a) == config_hash(z));  // older runs' configs read the same
  for (const auto& c : task_configs(0)) {
    INFO(c.name);
    const auto task = make_task(c, 7, 2, 8);
    std::set<Sequence> seen;
    for (int64_t s = 0; s < 20; ++s) {
      const Batch stepped = task->step_batch(8, 500 + s, s), fresh = task->train_batch(8, 500 + s);
      CHECK(torch::equal(stepped.inputs, fresh.inputs));
      CHECK(torch::equal(stepped.targets, fresh.targets));
      for (const auto& q : sequences(stepped)) seen.insert(q);
    }
    CHECK(seen.size() > 150);  // 160 draws, fresh each time: no small set behind them
  }
}

TEST_CASE(
    "task.train_examples: the fixed set is drawn from the training stream, not the eval set's") {
  auto c = task_config("induction_head", 16, 8, 10);
  c.train_examples = 64;
  const auto task = make_task(c, 11, 4, 16);
  const Batch first = task->step_batch(64, 0, 0);  // the whole first epoch
  std::set<Sequence> eval_inputs;
  for (const auto& b : task->eval_set())
    for (int64_t i = 0; i < b.inputs.size(0); ++i) eval_inputs.insert(row(b.inputs, i));
  REQUIRE(eval_inputs.size() == 64);
  for (int64_t i = 0; i < 64; ++i) CHECK(eval_inputs.count(row(first.inputs, i)) == 0);
  // Training examples, as training scores them: every next token (the eval set: the answer).
  CHECK(first.targets.ge(0).all().item<bool>());
  // Nor is it the probe.
  const auto probe = task->probe();
  for (int64_t i = 0; i < 64; ++i) CHECK(row(first.inputs, i) != probe);
}

TEST_CASE("task.train_examples: a run resumed from a checkpoint matches a straight run") {
  auto c = test::tiny_config();
  c.task.train_examples = 12;  // batch 8: epochs end inside batches
  c.train.steps = 40;
  const auto dir = test::temp_dir("trainset") + "/checkpoint";
  const auto losses_of = [](TrainingSession& s, int steps) {
    std::vector<double> out;
    for (int i = 0; i < steps; ++i) out.push_back(s.train_step());
    return out;
  };

  TrainingSession straight(c);
  const auto straight_losses = losses_of(straight, 20);
  straight.evaluate();
  // Resumed at step 3, an epoch's start (place 24 of 12 an epoch), and at step 10, inside one
  // (place 80: epoch 6, example 8), whose batch runs on into epoch 7.
  for (const int k : {3, 10}) {
    INFO("checkpoint at step " << k);
    TrainingSession first(c);
    auto losses = losses_of(first, k);
    first.save(dir);
    const ExperimentConfig stored = TrainingSession::checkpoint_config(dir);
    CHECK(stored.task.train_examples == 12);
    TrainingSession resumed(stored);
    resumed.load(dir);
    REQUIRE(resumed.step() == k);
    const auto rest = losses_of(resumed, 20 - k);
    losses.insert(losses.end(), rest.begin(), rest.end());
    CHECK(losses == straight_losses);  // exact equality
    CHECK(test::same(test::params_of(resumed), test::params_of(straight)));
    resumed.evaluate();
    CHECK(resumed.last_eval_loss() == straight.last_eval_loss());
  }

  // The key is in effect: the same run on the fresh stream trains on other batches.
  auto fresh_config = c;
  fresh_config.task.train_examples = 0;
  TrainingSession fresh(fresh_config);
  CHECK(losses_of(fresh, 20) != straight_losses);
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST_CASE(
    "task.train_examples refusals name the key: text, modadd, too large a set, out of range") {
  auto parse_fails = [](const char* text, const std::vector<std::string>& parts) {
    INFO(text);
    try {
      parse_config(json::parse(text));
      FAIL("accepted");
    } catch (const Error& e) {
      for (const auto& p : parts) CHECK(std::string(e.what()).find(p) != std::string::npos);
    }
  };
  parse_fails(R"({"task": {"name": "text", "train_examples": 5}})",
              {"task.train_examples 5", "\"text\"", "set 0"});
  parse_fails(R"({"task": {"name": "modadd", "train_examples": 5}})",
              {"task.train_examples 5", "\"modadd\"", "task.train_fraction", "set 0"});
  // 10^7 x 4096 tokens x 16 bytes.
  parse_fails(
      R"({"task": {"name": "mqar", "context": 4096, "length": 8, "vocab": 8192,
                   "train_examples": 10000000}})",
      {"task.train_examples 10000000", "655360000000 bytes", "2147483648 bytes", "at most 32768"});
  parse_fails(R"({"task": {"name": "copy", "train_examples": 10000001}})",
              {"task.train_examples must be in [0, 10000000]"});
  parse_fails(R"({"task": {"name": "fashion-mnist", "train_examples": 70000},
                  "model": {"head": "classifier"}})",
              {"task.train_examples must be in [0, 60000]"});
  // The largest set under the limit parses.
  CHECK_NOTHROW(parse_config(json::parse(
      R"({"task": {"name": "mqar", "context": 4096, "length": 8, "vocab": 8192,
                   "train_examples": 32768}})")));

  // Built without the parser: make_task refuses text, and a synthetic task refuses at its first
  // training batch, before it allocates the set.
  TaskConfig text;
  text.name = "text";
  text.train_examples = 3;
  CHECK_THROWS_WITH_AS(make_task(text, 1, 1, 1), doctest::Contains("task.train_examples 3"), Error);
  auto huge = task_config("mqar", 4096, 8, 8192);
  huge.train_examples = 10000000;
  const auto task = make_task(huge, 1, 1, 1);
  CHECK_THROWS_WITH_AS(task->step_batch(4, 0, 0), doctest::Contains("655360000000 bytes"), Error);
  CHECK_THROWS_WITH_AS(task->train_batch(4, 0), doctest::Contains("task.train_examples"), Error);
}
