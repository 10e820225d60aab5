// Issue 48 item 5: corrupted twins that make sense for every benchmark task (Task::twin,
// core/data/tasks.h) and a patch metric read where the task scores (interventions.h). Each
// twin is checked on every eval example against answers recomputed here from the tasks'
// definitions (not from the generators): exactly one token changes, and the answers change at
// exactly the positions the twin says the metric reads. The scored positions read from the
// tokens equal the eval set's loss mask.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/base/error.h"
#include "core/config/config.h"
#include "core/data/tasks.h"
#include "core/runs/records/view_records.h"
#include "core/training/interventions/interventions.h"
#include "core/training/interventions/run_interventions.h"
#include "core/training/session/session.h"
#include "core/views/intervention_view.h"
#include "helpers.h"
#include "task_helpers.h"

using namespace attn;

namespace {

using test::row;
using test::task_config;

// The tasks under test: each with a small shape its settings accept.
std::vector<TaskConfig> benchmark_tasks() {
  return {task_config("mqar", 32, 4, 64),           task_config("selective_copy", 16, 4, 10),
          task_config("induction_head", 20, 4, 12), task_config("parity", 0, 6, 2),
          task_config("reverse_string", 0, 5, 4),   task_config("duplicate_string", 0, 4, 4)};
}

// The answer at every scored position of `x`, from the task's definition (position -> token).
std::map<int64_t, int64_t> answers(const TaskConfig& c, const std::vector<int64_t>& x) {
  std::map<int64_t, int64_t> a;
  const int64_t L = static_cast<int64_t>(x.size());
  if (c.name == "mqar") {  // a queried key answers the value bound to it in the pairs
    for (int64_t q = 2 * c.length; q < L; ++q)
      for (int i = 0; i < c.length; ++i)
        if (x[q] != 0 && x[q] == x[2 * i]) a[q] = x[2 * i + 1];
  } else if (c.name == "selective_copy") {  // the blanks after the copy token, in order
    const int64_t copy = std::find(x.begin(), x.end(), c.vocab - 1) - x.begin();
    int64_t next = copy + 1;
    for (int64_t t = 0; t < copy; ++t)
      if (x[t] != c.vocab - 2) a[next++] = x[t];
  } else if (c.name == "induction_head") {  // the token after the earlier trigger
    for (int64_t t = 0; t + 1 < L - 1; ++t)
      if (x[t] == c.vocab - 2) a[L - 1] = x[t + 1];
  } else {  // Chomsky: n symbols, then the outputs at the placeholders
    const int64_t n = std::find(x.begin(), x.end(), c.vocab) - x.begin();
    std::vector<int64_t> s(x.begin(), x.begin() + n), y;
    if (c.name == "parity") {
      int64_t sum = 0;
      for (auto v : s) sum += v;
      y = {sum % 2};
    } else {
      y = s;
      if (c.name == "reverse_string") std::reverse(y.begin(), y.end());
      if (c.name == "duplicate_string") y.insert(y.end(), s.begin(), s.end());
    }
    for (size_t i = 0; i < y.size(); ++i) a[n + static_cast<int64_t>(i)] = y[i];
  }
  return a;
}

}  // namespace

TEST_CASE("twins change exactly one token, and the answers exactly where the metric reads") {
  for (const TaskConfig& c : benchmark_tasks()) {
    CAPTURE(c.name);
    auto task = make_task(c, 11, 2, 16);
    int examples = 0;
    for (const Batch& batch : task->eval_set())
      for (int64_t b = 0; b < batch.inputs.size(0); ++b, ++examples) {
        const auto clean = row(batch.inputs, b), targets = row(batch.targets, b);
        CAPTURE(b);
        // The reference answers are the eval set's own targets (the reference is right).
        const auto clean_answers = answers(c, clean);
        for (const auto& [p, v] : clean_answers) REQUIRE(targets.at(p) == v);
        const Task::Twin twin = task->twin(clean);
        REQUIRE(twin.tokens.size() == clean.size());
        int changed = 0;
        for (size_t t = 0; t < clean.size(); ++t) changed += twin.tokens[t] != clean[t];
        CHECK(changed == 1);
        CHECK(task->corrupted_twin(clean) == twin.tokens);
        // The twin is still a valid input: the same positions answer.
        const auto twin_answers = answers(c, twin.tokens);
        std::vector<int64_t> differ;
        for (const auto& [p, v] : clean_answers) {
          REQUIRE(twin_answers.count(p) == 1);
          if (twin_answers.at(p) != v) differ.push_back(p);
        }
        CHECK(!twin.read.empty());
        CHECK(twin.read == differ);
        // The twin states the task's answers where the metric reads, on each probe.
        REQUIRE(twin.answers.size() == twin.read.size());
        REQUIRE(twin.twin_answers.size() == twin.read.size());
        for (size_t i = 0; i < twin.read.size(); ++i) {
          CHECK(twin.answers[i] == clean_answers.at(twin.read[i]));
          CHECK(twin.twin_answers[i] == twin_answers.at(twin.read[i]));
        }
      }
    CHECK(examples == 32);
  }
}

TEST_CASE("the scored positions read from the tokens are the eval set's loss mask") {
  for (const TaskConfig& c : benchmark_tasks()) {
    CAPTURE(c.name);
    auto task = make_task(c, 5, 2, 16);
    for (const Batch& batch : task->eval_set())
      for (int64_t b = 0; b < batch.inputs.size(0); ++b) {
        const auto targets = row(batch.targets, b);
        std::vector<int64_t> scored;
        for (size_t t = 0; t < targets.size(); ++t)
          if (targets[t] != -1) scored.push_back(static_cast<int64_t>(t));
        CHECK(task->scored_positions(row(batch.inputs, b)) == scored);
        // A twin reads a subset of them.
        const Task::Twin twin = task->twin(row(batch.inputs, b));
        for (const int64_t p : twin.read)
          CHECK(std::find(scored.begin(), scored.end(), p) != scored.end());
      }
  }
}

TEST_CASE("the patch metric reads the twin's answer positions, not the last position") {
  ExperimentConfig c = test::tiny_config();
  c.task = task_config("mqar", 16, 2, 24);
  TrainingSession s(c);
  for (int i = 0; i < 5; ++i) s.train_step();
  const PatchProbes probes = patch_probes(s, "", "", "clean", "corrupt");
  const Task::Twin twin = s.task().twin(probes.clean);
  CHECK(probes.corrupt == twin.tokens);
  CHECK(probes.read == twin.read);
  REQUIRE(probes.read.size() == 1);
  const PatchTable t = session_patch(s, probes);
  CHECK(t.read_positions == probes.read);
  // Brute force: the logits at the read position of each run, the answers the task's (the
  // twin's), whatever the barely trained model predicts there.
  torch::NoGradGuard no_grad;
  s.model()->eval();
  auto logits_at = [&](const std::vector<int64_t>& x) {
    return s.model()->forward(torch::tensor(x, torch::kInt64).unsqueeze(0))[0][probes.read[0]].to(
        torch::kFloat64);
  };
  const torch::Tensor zc = logits_at(probes.clean), zx = logits_at(probes.corrupt);
  REQUIRE(twin.answers.size() == 1);
  REQUIRE(twin.twin_answers.size() == 1);
  const int64_t ac = twin.answers[0], ax = twin.twin_answers[0];
  REQUIRE(ac != ax);
  CHECK(t.clean_answer == s.task().token_label(ac));
  CHECK(t.corrupt_answer == s.task().token_label(ax));
  auto metric = [&](const torch::Tensor& z) { return (z[ac] - z[ax]).item<double>(); };
  CHECK(t.metric == "logit_diff");
  CHECK(t.clean_metric == doctest::Approx(metric(zc)).epsilon(1e-6));
  CHECK(t.corrupt_metric == doctest::Approx(metric(zx)).epsilon(1e-6));
  // A typed corrupted probe reads every scored position of the clean one.
  std::string typed;
  for (const int64_t v : probes.corrupt) typed += s.task().token_label(v) + " ";
  CHECK(patch_probes(s, "", typed, "clean", "corrupt").read ==
        s.task().scored_positions(probes.clean));
}

TEST_CASE("a clean-corrupted difference below the threshold carries a warning naming both") {
  CHECK(small_difference_warning(1.0, 0.8).empty());
  CHECK(small_difference_warning(-3, 3).empty());
  const std::string w = small_difference_warning(0.5, 0.477);
  CHECK(w.find("0.0230") != std::string::npos);
  CHECK(w.find("0.10") != std::string::npos);
  CHECK(!small_difference_warning(2, 2 + kMinPatchDifference / 2).empty());
}

TEST_CASE("head metrics at the answer positions equal a brute-force mean over the scored rows") {
  ExperimentConfig c = test::tiny_config();
  c.task = task_config("mqar", 16, 2, 24);
  auto task = make_task(c.task, c.seed, 1, 1);
  const std::vector<int64_t> probe = task->probe();
  std::vector<std::string> labels;
  for (const int64_t t : probe) labels.push_back(task->token_label(t));
  const auto answer = probe_rows(c, "answer", "--positions")(labels);
  const auto scored = task->scored_positions(probe);
  CHECK(std::vector<int64_t>(answer.begin(), answer.end()) == scored);
  REQUIRE(!answer.empty());
  CHECK(answer.size() < probe.size());  // a real restriction: MQAR scores its queries only
  const auto query = probe_rows(c, "query", "--positions")(labels);
  CHECK(query.front() == answer.front());
  CHECK(query.back() == static_cast<int>(probe.size()) - 1);
  CHECK(probe_rows(c, "all", "--positions")(labels).empty());
  CHECK_THROWS_WITH_AS(probe_rows(c, "scored", "--positions"),
                       "--positions scored: give answer, query or all", Error);
  // A causal map with rows that differ: row q spreads its weight over keys 0..q unevenly.
  const int L = static_cast<int>(probe.size());
  ViewRecord r;
  r.step = 7;
  r.probe_tokens = labels;
  AttentionMap m;
  m.layer = 0, m.head = 1, m.size = L;
  m.weights.assign(static_cast<size_t>(L) * L, 0.0f);
  for (int q = 0; q < L; ++q) {
    double total = 0;
    for (int k = 0; k <= q; ++k) total += 1.0 + k * (q % 3);
    for (int k = 0; k <= q; ++k)
      m.weights[q * L + k] = static_cast<float>((1.0 + k * (q % 3)) / total);
  }
  r.maps.push_back(m);
  double entropy = 0, diagonal = 0, previous = 0;
  int previous_rows = 0;
  for (const int q : answer) {
    for (int k = 0; k <= q; ++k) {
      const double p = m.weights[q * L + k];
      if (p > 0) entropy -= p * std::log(p);
    }
    diagonal += m.weights[q * L + q];
    if (q >= 1) previous += m.weights[q * L + q - 1], ++previous_rows;
  }
  std::map<std::string, double> want = {{"entropy", entropy / answer.size()},
                                        {"diagonal", diagonal / answer.size()},
                                        {"previous_token", previous / previous_rows}};
  std::map<std::string, double> all_rows;
  for (const HeadMetric& h : head_metrics(r)) all_rows[h.metric] = h.value;
  int checked = 0;
  for (const HeadMetric& h : head_metrics(r, answer)) {
    if (!want.count(h.metric)) continue;
    CAPTURE(h.metric);
    CHECK(h.value == doctest::Approx(want[h.metric]).epsilon(1e-9));
    CHECK(h.value != doctest::Approx(all_rows[h.metric]).epsilon(1e-6));  // restricted
    ++checked;
  }
  CHECK(checked == 3);
}
