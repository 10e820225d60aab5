// The machinery of the synthetic token tasks (private to core/data): an example is a whole
// token sequence plus which positions are scored; SyntheticTask draws training batches from a
// step seed (or, with task.train_examples, from a fixed training set), a fixed eval set from the
// run seed, and a probe. Shared by tasks.cpp (attnlab's own tasks) and benchmark_tasks.cpp (the
// field's standard ones).
#pragma once
#include <memory>
#include <numeric>
#include <random>

#include "core/config/task_shape.h"
#include "core/data/tasks.h"
#include "core/data/training_set.h"

namespace attn {
namespace detail {

constexpr uint64_t kEvalSalt = 0xE7A1;
// The fixed training set's examples and its epochs' order (task.train_examples > 0).
constexpr uint64_t kTrainSetSalt = 0x75E7, kTrainOrderSalt = 0x0DE5;

// One example, in one of two forms:
//  - next-token: a full token sequence (one longer than the model input) and, per position,
//    whether predicting it is scored (scored[t]: token t is a target, t >= 1);
//  - explicit: `tokens` is the model input itself and targets[t] the target of input t (-1 = not
//    scored), for tasks whose targets are not the next input (MQAR's answers follow a filler,
//    the Chomsky tasks answer at placeholder tokens).
struct Example {
  std::vector<int64_t> tokens;
  std::vector<bool> scored;
  std::vector<int64_t> targets;  // non-empty: the explicit form
};

inline Batch to_batch(const std::vector<Example>& examples) {
  const bool explicit_targets = !examples.at(0).targets.empty();
  const int64_t B = examples.size(), L = examples[0].tokens.size() - (explicit_targets ? 0 : 1);
  auto inputs = torch::empty({B, L}, torch::kInt64);
  auto targets = torch::empty({B, L}, torch::kInt64);
  auto in = inputs.accessor<int64_t, 2>();
  auto tg = targets.accessor<int64_t, 2>();
  for (int64_t b = 0; b < B; ++b) {
    const auto& e = examples[b];
    for (int64_t t = 0; t < L; ++t) {
      in[b][t] = e.tokens[t];
      tg[b][t] = explicit_targets ? e.targets[t] : e.scored[t + 1] ? e.tokens[t + 1] : -1;
    }
  }
  return {inputs, targets};
}

// Synthetic tasks: symbols 0..V-1 plus task-specific special tokens after them.
class SyntheticTask : public Task {
 public:
  SyntheticTask(const TaskConfig& c, uint64_t seed, int eval_batches, int batch_size)
      : c_(c), seed_(seed), eval_batches_(eval_batches), batch_size_(batch_size) {}

  Batch train_batch(int batch_size, uint64_t seed) const override {
    if (c_.train_examples > 0) return training_set().sample(batch_size, seed);
    std::mt19937_64 rng(seed);
    return fresh(rng, batch_size);
  }

  Batch step_batch(int batch_size, uint64_t seed, int64_t step) const override {
    if (c_.train_examples > 0) return training_set().at_step(batch_size, step);
    return train_batch(batch_size, seed);
  }

  // task.train_examples > 0: the fixed training set, made at the first training batch (a task
  // built only to evaluate never makes it). Its examples are training examples (eval = false)
  // from a stream of their own, mix_seed(run seed, kTrainSetSalt): not the eval set's, the
  // validation set's (another run seed) or the probe's. Throws attn::Error naming
  // task.train_examples, before allocating, when the set would pass its memory limit.
  const TrainingSet& training_set() const {
    if (!train_set_) {
      check_train_examples(c_, "task");  // the input length is this task's (length eval's too)
      train_set_ = std::make_unique<TrainingSet>(
          c_.train_examples, mix_seed(seed_, kTrainSetSalt), mix_seed(seed_, kTrainOrderSalt),
          [this](std::mt19937_64& rng, int64_t count) { return fresh(rng, count); });
    }
    return *train_set_;
  }

  const std::vector<Batch>& eval_set() const override {
    if (eval_.empty()) {
      std::mt19937_64 rng(mix_seed(seed_, kEvalSalt));
      for (int b = 0; b < eval_batches_; ++b) {
        std::vector<Example> ex;
        for (int i = 0; i < batch_size_; ++i) ex.push_back(example(rng, /*eval=*/true));
        eval_.push_back(to_batch(ex));
      }
    }
    return eval_;
  }

  std::vector<int64_t> probe() const override {
    std::mt19937_64 rng(mix_seed(seed_, 0x9806E));
    auto e = example(rng, true);
    if (e.targets.empty()) e.tokens.pop_back();
    return e.tokens;
  }

  std::string token_label(int64_t t) const override {
    if (t < c_.vocab) return std::to_string(t);
    return special_label(t);
  }

  std::vector<int64_t> corrupted_twin(const std::vector<int64_t>& clean) const override {
    if (clean.empty()) throw Error("the clean probe is empty: nothing to corrupt");
    auto twin = clean;
    twin[0] = twin[0] < c_.vocab ? (twin[0] + 1) % c_.vocab : 0;
    return twin;
  }

 protected:
  virtual Example example(std::mt19937_64& rng, bool eval) const = 0;
  virtual std::string special_label(int64_t t) const { return "#"; }

  std::vector<int64_t> random_symbols(std::mt19937_64& rng, int n, int vocab) const {
    std::uniform_int_distribution<int64_t> d(0, vocab - 1);
    std::vector<int64_t> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  }

  std::vector<int64_t> distinct_symbols(std::mt19937_64& rng, int n, int vocab) const {
    std::vector<int64_t> all(vocab);
    std::iota(all.begin(), all.end(), 0);
    // Partial Fisher-Yates with our own draws (std::shuffle is implementation-defined).
    for (int i = 0; i < n; ++i) {
      std::uniform_int_distribution<int> d(i, vocab - 1);
      std::swap(all[i], all[d(rng)]);
    }
    all.resize(n);
    return all;
  }

  TaskConfig c_;
  uint64_t seed_;
  int eval_batches_, batch_size_;
  mutable std::vector<Batch> eval_;
  mutable std::unique_ptr<TrainingSet> train_set_;

 private:
  // `count` fresh training examples drawn from rng, one after another.
  Batch fresh(std::mt19937_64& rng, int64_t count) const {
    std::vector<Example> ex;
    ex.reserve(count);
    for (int64_t i = 0; i < count; ++i) ex.push_back(example(rng, /*eval=*/false));
    return to_batch(ex);
  }
};

}  // namespace detail
}  // namespace attn
