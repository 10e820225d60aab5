// The standard synthetic tasks (core/data/benchmark_tasks.h) against references written here
// from the tasks' definitions: every example is decoded back into what its generator promised.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "core/base/error.h"
#include "core/config/config.h"
#include "core/data/tasks.h"
#include "core/training/interventions/length_eval.h"
#include "task_helpers.h"

using namespace attn;

using test::row;
using test::task_config;

TEST_CASE("mqar: distinct keys, queries only over presented keys, answers at the query") {
  const int L = 64, n = 4, V = 256, half = V / 2;
  auto task = make_task(task_config("mqar", L, n, V), 7, 2, 16);
  CHECK(task->vocab_size() == V);
  CHECK(task->sequence_length() == L);
  std::map<int, int> gap_count;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Batch b = task->train_batch(16, seed);
    REQUIRE(b.inputs.sizes() == torch::IntArrayRef({16, L}));
    for (int64_t e = 0; e < 16; ++e) {
      const auto x = row(b.inputs, e), y = row(b.targets, e);
      std::map<int64_t, int64_t> bound;  // key -> value from the context
      for (int i = 0; i < n; ++i) {
        const int64_t k = x[2 * i], v = x[2 * i + 1];
        CHECK(k >= 1);
        CHECK(k < half);
        CHECK(v >= half);
        CHECK(v < V);
        CHECK(bound.count(k) == 0);  // keys distinct within a sequence
        bound[k] = v;
        CHECK(y[2 * i] == -1);
        CHECK(y[2 * i + 1] == -1);
      }
      std::set<int64_t> queried;
      for (int t = 2 * n; t < L; ++t) {
        if (x[t] == 0) {
          CHECK(y[t] == -1);  // filler: never scored
          continue;
        }
        CHECK((t - 2 * n) % 2 == 0);      // queries at even offsets after the context
        REQUIRE(bound.count(x[t]) == 1);  // only presented keys are queried
        CHECK(y[t] == bound[x[t]]);       // the answer is scored at the query itself
        CHECK(queried.insert(x[t]).second);
        ++gap_count[(t - 2 * n) / 2];
      }
      CHECK(queried.size() == static_cast<size_t>(n));  // every key queried once
    }
  }
  // Weights a*i^(a-1): gap 0 is drawn about (space)^(1-a) ~ 25x as often as the last gap.
  CHECK(gap_count[0] > 5 * std::max(1, gap_count[(L - 2 * n) / 2 - 1]));
}

TEST_CASE("selective copy: the marked tokens in order after the copy token, blanks ignored") {
  const int L = 40, n = 6, V = 16;
  auto task = make_task(task_config("selective_copy", L, n, V), 3, 2, 8);
  CHECK(task->sequence_length() == L);
  const Batch b = task->train_batch(32, 11);
  for (int64_t e = 0; e < 32; ++e) {
    const auto x = row(b.inputs, e), y = row(b.targets, e);
    REQUIRE(x.size() == static_cast<size_t>(L));
    std::vector<int64_t> data;
    int blanks = 0;
    for (int t = 0; t < L - n - 1; ++t) {
      CHECK(y[t] == -1);
      if (x[t] == V - 2)
        ++blanks;
      else
        data.push_back(x[t]);
    }
    CHECK(x[L - n - 1] == V - 1);  // the copy token
    CHECK(y[L - n - 1] == -1);
    CHECK(x[L - n - 2] != V - 2);  // np.insert never puts a blank after the last token
    CHECK(blanks == L - 2 * n - 1);
    REQUIRE(data.size() == static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      CHECK(x[L - n + i] == V - 2);
      CHECK(y[L - n + i] == data[i]);
    }
  }
}

TEST_CASE("induction head: the token after the earlier trigger; eval scores only the answer") {
  const int L = 30, V = 20;
  auto task = make_task(task_config("induction_head", L, 8, V), 5, 2, 8);
  CHECK(task->sequence_length() == L + 1);
  const Batch eval = task->eval_set().at(0);
  for (int64_t e = 0; e < eval.inputs.size(0); ++e) {
    const auto x = row(eval.inputs, e), y = row(eval.targets, e);
    REQUIRE(x.size() == static_cast<size_t>(L + 1));
    CHECK(x[L] == V - 2);  // ends on the trigger
    int triggers = 0, p = -1;
    for (int t = 0; t < L; ++t)
      if (x[t] == V - 2) ++triggers, p = t;
    CHECK(triggers == 1);
    CHECK(p <= L - 3);
    for (int t = 0; t < L; ++t) CHECK(y[t] == -1);
    CHECK(y[L] == x[p + 1]);
  }
  const Batch train = task->train_batch(8, 1);
  for (int64_t e = 0; e < 8; ++e) {
    const auto x = row(train.inputs, e), y = row(train.targets, e);
    for (int t = 0; t < L; ++t) CHECK(y[t] == x[t + 1]);  // every next token is a target
    int p = -1;
    for (int t = 0; t < L; ++t)
      if (x[t] == V - 2) p = t;
    CHECK(y[L] == x[p + 1]);  // the plain LM loss scores the answer too
  }
}

TEST_CASE("chomsky tasks: worked examples, lengths 1..N in training, N at eval, padding unscored") {
  const int N = 6;
  for (const std::string name : {"parity", "reverse_string", "duplicate_string"}) {
    CAPTURE(name);
    auto task = make_task(task_config(name, 0, N, 2), 9, 2, 16);
    const int outputs_at_n = name == "parity" ? 1 : name == "reverse_string" ? N : 2 * N;
    CHECK(task->vocab_size() == 3);
    CHECK(task->sequence_length() == N + outputs_at_n);
    std::set<int> lengths;
    auto check = [&](const Batch& b, bool eval) {
      for (int64_t e = 0; e < b.inputs.size(0); ++e) {
        const auto x = row(b.inputs, e), y = row(b.targets, e);
        int n = 0;
        while (n < static_cast<int>(x.size()) && x[n] != 2) ++n;
        lengths.insert(n);
        if (eval) CHECK(n == N);
        REQUIRE(n >= 1);
        const std::vector<int64_t> in(x.begin(), x.begin() + n);
        std::vector<int64_t> want;
        if (name == "parity") {
          int ones = 0;
          for (auto s : in) ones += s == 1;
          want = {ones % 2};
        } else if (name == "reverse_string") {
          want.assign(in.rbegin(), in.rend());
        } else {
          want = in;
          want.insert(want.end(), in.begin(), in.end());
        }
        for (int t = 0; t < n; ++t) CHECK(y[t] == -1);
        for (size_t i = 0; i < want.size(); ++i) {
          CHECK(x[n + i] == 2);  // the placeholder
          CHECK(y[n + i] == want[i]);
        }
        for (size_t t = n + want.size(); t < x.size(); ++t) {
          CHECK(x[t] == 2);
          CHECK(y[t] == -1);
        }
      }
    };
    for (uint64_t s = 0; s < 10; ++s) check(task->train_batch(16, s), false);
    CHECK(lengths.count(1) == 1);
    CHECK(lengths.count(N) == 1);
    CHECK(lengths.size() == static_cast<size_t>(N));
    lengths.clear();
    check(task->eval_set().at(0), true);
  }
}

TEST_CASE("benchmark tasks: settings that cannot make an example name the key") {
  auto refused = [](const std::string& task_json, const std::string& text) {
    CAPTURE(task_json);
    const auto j = nlohmann::json::parse(R"({"task": )" + task_json + "}");
    CHECK_THROWS_WITH_AS(parse_config(j, "suite.json"), doctest::Contains(text.c_str()), Error);
  };
  refused(R"({"name": "mqar", "context": 63, "length": 4, "vocab": 256})", "must be even");
  refused(R"({"name": "mqar", "context": 64, "length": 17, "vocab": 256})",
          "task.length (17 key-value pairs) must be at most task.context / 4 (16)");
  refused(R"({"name": "mqar", "context": 64, "length": 4, "vocab": 9})",
          "task.vocab (9) must be at least 2 * task.length + 2 (10)");
  refused(R"({"name": "selective_copy", "context": 10, "length": 8, "vocab": 16})",
          "at least 2 * task.length + 1 (17)");
  refused(R"({"name": "parity", "length": 8, "vocab": 3})", "must be 2");
  const auto ok = nlohmann::json::parse(
      R"({"task": {"name": "mqar", "context": 64, "length": 4, "vocab": 256}})");
  CHECK(parse_config(ok).task.name == "mqar");
}

TEST_CASE("benchmark tasks: the length key of eval --context") {
  CHECK(length_key(task_config("mqar", 64, 4, 256)) == "task.context");
  CHECK(length_key(task_config("selective_copy", 64, 4, 16)) == "task.context");
  CHECK(length_key(task_config("induction_head", 30, 4, 20)) == "task.context");
  for (const std::string n : {"parity", "reverse_string", "duplicate_string"})
    CHECK(length_key(task_config(n, 0, 8, 2)) == "task.length");
}
