// The named regions of each benchmark task (core/data/task_regions.h) against the task's own
// generator: on eval examples, whose targets say which positions are scored, each region holds
// what its name claims (MQAR's queries exactly span the queried keys, selective copy's answers
// the scored blanks and its copied region the tokens they answer, ...), inside the sequence.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/config/config.h"
#include "core/data/task_regions.h"
#include "core/data/tasks.h"
#include "tests/core/helpers.h"

using namespace attn;

namespace {

TaskConfig task_config(const std::string& name, int context, int length, int vocab) {
  TaskConfig t;
  t.name = name;
  t.context = context;
  t.length = length;
  t.vocab = vocab;
  return t;
}

struct Example {
  std::vector<int64_t> tokens;
  std::vector<int64_t> scored;   // positions with a target, from the generator
  std::vector<int64_t> answers;  // their targets
};

// The first few eval examples of `task`, as the generator made them.
std::vector<Example> eval_examples(const Task& task, int count) {
  std::vector<Example> out;
  const Batch& b = task.eval_set().at(0);
  for (int64_t i = 0; i < std::min<int64_t>(count, b.inputs.size(0)); ++i) {
    Example e;
    for (int64_t t = 0; t < b.inputs.size(1); ++t) {
      e.tokens.push_back(b.inputs[i][t].item<int64_t>());
      const int64_t target = b.targets[i][t].item<int64_t>();
      if (target >= 0) e.scored.push_back(t), e.answers.push_back(target);
    }
    out.push_back(e);
  }
  return out;
}

const TaskRegion& region(const std::vector<TaskRegion>& regions, const std::string& name) {
  const TaskRegion* r = find_region(regions, name);
  REQUIRE_MESSAGE(r != nullptr, name << " not among " << region_names(regions));
  return *r;
}

// Every region lies inside the sequence, rows and keys; the first is the whole sequence.
void check_inside(const std::vector<TaskRegion>& regions, int64_t L) {
  REQUIRE(!regions.empty());
  CHECK(regions.front().name == "whole");
  CHECK(regions.front().first == 0);
  CHECK(regions.front().last == L - 1);
  for (const TaskRegion& r : regions) {
    CHECK(0 <= r.first);
    CHECK(r.first <= r.last);
    CHECK(r.last < L);
    CHECK(0 <= r.key_first);
    CHECK(r.key_first <= r.key_last);
    CHECK(r.key_last < L);
  }
}

// A cross region has the rows of `rows` and the keys of `keys`.
void check_cross(const std::vector<TaskRegion>& regions, const std::string& name,
                 const std::string& rows, const std::string& keys) {
  const TaskRegion &c = region(regions, name), &r = region(regions, rows),
                   &k = region(regions, keys);
  CHECK(c.first == r.first);
  CHECK(c.last == r.last);
  CHECK(c.key_first == k.first);
  CHECK(c.key_last == k.last);
}

}  // namespace

TEST_CASE("task regions: mqar's context holds the pairs and its queries span the queried keys") {
  const TaskConfig c = task_config("mqar", 64, 4, 72);
  const auto task = make_task(c, 3, 1, 16);
  for (const Example& e : eval_examples(*task, 16)) {
    const auto regions = task_regions(c, e.tokens);
    check_inside(regions, static_cast<int64_t>(e.tokens.size()));
    const TaskRegion& context = region(regions, "context");
    CHECK(context.first == 0);
    CHECK(context.last == 2 * c.length - 1);
    for (int64_t t = 0; t <= context.last; ++t)  // keys at even positions, values at odd
      CHECK((t % 2 == 0) == (e.tokens[t] < c.vocab / 2));
    const TaskRegion& queries = region(regions, "queries");
    REQUIRE(e.scored.size() == static_cast<size_t>(c.length));
    CHECK(queries.first == e.scored.front());
    CHECK(queries.last == e.scored.back());
    for (int64_t t = queries.first; t <= queries.last; ++t)  // between them: fillers only
      CHECK((e.tokens[t] != 0) == std::count(e.scored.begin(), e.scored.end(), t));
    check_cross(regions, "queries-context", "queries", "context");
  }
}

TEST_CASE("task regions: selective copy's answers are the scored blanks, copied what they copy") {
  const TaskConfig c = task_config("selective_copy", 32, 4, 12);
  const auto task = make_task(c, 5, 1, 16);
  for (const Example& e : eval_examples(*task, 16)) {
    const auto regions = task_regions(c, e.tokens);
    check_inside(regions, static_cast<int64_t>(e.tokens.size()));
    const TaskRegion& answers = region(regions, "answers");
    CHECK(answers.first == e.scored.front());
    CHECK(answers.last == e.scored.back());
    CHECK(answers.last - answers.first + 1 == static_cast<int64_t>(e.scored.size()));
    const TaskRegion& copied = region(regions, "copied");
    std::vector<int64_t> data;  // the non-blank tokens of the copied region, in order
    for (int64_t t = copied.first; t <= copied.last; ++t)
      if (e.tokens[t] != c.vocab - 2) data.push_back(e.tokens[t]);
    CHECK(data == e.answers);
    CHECK(e.tokens[copied.first] != c.vocab - 2);     // starts at the first copied token
    CHECK(e.tokens[copied.last + 1] == c.vocab - 1);  // ends before the copy token
    check_cross(regions, "answers-copied", "answers", "copied");
  }
}

TEST_CASE("task regions: induction head's trigger holds the answer the last position gives") {
  const TaskConfig c = task_config("induction_head", 30, 8, 20);
  const auto task = make_task(c, 7, 1, 16);
  for (const Example& e : eval_examples(*task, 16)) {
    const auto regions = task_regions(c, e.tokens);
    check_inside(regions, static_cast<int64_t>(e.tokens.size()));
    const TaskRegion& answer = region(regions, "answer");
    REQUIRE(e.scored.size() == 1);
    CHECK(answer.first == e.scored.front());
    CHECK(answer.last == e.scored.front());
    const TaskRegion& trigger = region(regions, "trigger");
    CHECK(trigger.last == trigger.first + 1);
    CHECK(e.tokens[trigger.first] == c.vocab - 2);
    CHECK(e.tokens[trigger.last] == e.answers.front());
    check_cross(regions, "answer-trigger", "answer", "trigger");
  }
}

TEST_CASE("task regions: the Chomsky tasks' input is the symbols, output the scored answers") {
  for (const std::string name : {"parity", "reverse_string", "duplicate_string"}) {
    CAPTURE(name);
    const TaskConfig c = task_config(name, 0, 6, name == std::string("parity") ? 2 : 4);
    const auto task = make_task(c, 9, 1, 8);
    for (const Example& e : eval_examples(*task, 8)) {
      const auto regions = task_regions(c, e.tokens);
      check_inside(regions, static_cast<int64_t>(e.tokens.size()));
      const TaskRegion& input = region(regions, "input");
      CHECK(input.first == 0);
      CHECK(input.last == c.length - 1);
      const TaskRegion& output = region(regions, "output");
      CHECK(output.first == e.scored.front());
      CHECK(output.last == e.scored.back());
      CHECK(output.last - output.first + 1 == static_cast<int64_t>(e.scored.size()));
      check_cross(regions, "output-input", "output", "input");
    }
  }
}

TEST_CASE("task regions: from labels as from ids; other tasks and odd probes the whole only") {
  ExperimentConfig config = test::tiny_config();
  config.task = task_config("mqar", 32, 3, 40);
  const auto task = make_task(config.task, config.seed, 1, 1);
  const std::vector<int64_t> probe = task->probe();
  std::vector<std::string> labels;
  for (const int64_t t : probe) labels.push_back(task->token_label(t));
  const auto by_id = task_regions(config.task, probe),
             by_label = task_regions_of_labels(config, labels);
  REQUIRE(by_id.size() == 4);
  REQUIRE(by_label.size() == by_id.size());
  for (size_t i = 0; i < by_id.size(); ++i) {
    CHECK(by_label[i].name == by_id[i].name);
    CHECK(by_label[i].first == by_id[i].first);
    CHECK(by_label[i].key_last == by_id[i].key_last);
  }
  labels[3] = "no such token";
  CHECK(region_names(task_regions_of_labels(config, labels)) == "whole");
  // A typed MQAR probe without queries has its context, not queries.
  CHECK(region_names(task_regions(config.task, {1, 17, 2, 18, 3, 19, 0, 0})) == "whole, context");
  config.task = task_config("copy", 32, 4, 10);
  CHECK(region_names(task_regions(config.task, {1, 2, 3})) == "whole");
  CHECK(task_regions(config.task, {}).empty());
}
