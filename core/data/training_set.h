// A synthetic task's fixed training set (task.train_examples > 0; private to core/data): N
// training sequences generated once from one seed, then served in shuffled epochs. Step s takes
// the examples at places s*B .. s*B+B-1 of the endless concatenation of epochs 0, 1, 2, ...,
// each epoch a permutation of the N examples drawn from (order seed, epoch). The reference
// dataloaders (Safari's, Zoology's, MAD's: a PyTorch DataLoader with shuffle=True) walk their
// fixed sets the same way, without replacement within an epoch, so every example is seen as
// often as every other; and since the place is a function of the step alone, a resumed run
// (whose checkpoint stores the step) continues bit-identically without storing the set.
// Not thread-safe: the current epoch's order is cached (the session is single-threaded).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "core/data/tasks.h"

namespace attn {
namespace detail {

class TrainingSet {
 public:
  // `make(rng, count)`: count training examples drawn from rng, as one batch ([count, L] inputs
  // and targets). The set is make's first `examples` examples from mt19937_64(seed), made in
  // chunks (the draws do not depend on the chunking, as make draws example after example).
  using MakeBatch = std::function<Batch(std::mt19937_64&, int64_t)>;
  TrainingSet(int64_t examples, uint64_t seed, uint64_t order_seed, const MakeBatch& make)
      : order_seed_(order_seed) {
    constexpr int64_t kChunk = 1024;
    std::mt19937_64 rng(seed);
    for (int64_t at = 0; at < examples; at += kChunk) {
      const Batch b = make(rng, std::min(kChunk, examples - at));
      if (at == 0) {  // the shape is known from the first chunk: one allocation
        inputs_ = torch::empty({examples, b.inputs.size(1)}, b.inputs.options());
        targets_ = torch::empty({examples, b.targets.size(1)}, b.targets.options());
      }
      inputs_.narrow(0, at, b.inputs.size(0)).copy_(b.inputs);
      targets_.narrow(0, at, b.targets.size(0)).copy_(b.targets);
    }
  }

  int64_t size() const { return inputs_.size(0); }
  const torch::Tensor& inputs() const { return inputs_; }    // [N, L], in generation order
  const torch::Tensor& targets() const { return targets_; }  // [N, L]

  // Step `step`'s batch of `batch_size` (steps from 0): the next places of the shuffled epochs.
  Batch at_step(int batch_size, int64_t step) const {
    const int64_t n = size();
    std::vector<int64_t> rows(batch_size);
    for (int i = 0; i < batch_size; ++i) {
      const int64_t place = step * batch_size + i;
      rows[i] = order(place / n)[place % n];
    }
    return gather(rows);
  }

  // batch_size examples uniformly with replacement, from mt19937_64(seed): for a caller that
  // has a stream seed but no step (Task::train_batch).
  Batch sample(int batch_size, uint64_t seed) const {
    std::mt19937_64 rng(seed);
    std::vector<int64_t> rows(batch_size);
    for (auto& r : rows) r = below(rng, size());
    return gather(rows);
  }

 private:
  Batch gather(const std::vector<int64_t>& rows) const {
    const auto index = torch::tensor(rows, torch::kInt64);
    return {inputs_.index_select(0, index), targets_.index_select(0, index)};
  }

  // A draw in [0, bound) from the engine's own bits: std::shuffle and
  // std::uniform_int_distribution are implementation-defined, so libstdc++ and libc++ would
  // order the same set differently (the modulo bias is below 2^-40 for any set that fits).
  static int64_t below(std::mt19937_64& rng, int64_t bound) {
    return static_cast<int64_t>(rng() % static_cast<uint64_t>(bound));
  }

  // Epoch e's order: Fisher-Yates with below()'s draws.
  const std::vector<int64_t>& order(int64_t epoch) const {
    if (epoch != epoch_) {
      const int64_t n = size();
      order_.resize(n);
      for (int64_t i = 0; i < n; ++i) order_[i] = i;
      std::mt19937_64 rng(mix_seed(order_seed_, static_cast<uint64_t>(epoch)));
      for (int64_t i = n - 1; i > 0; --i) std::swap(order_[i], order_[below(rng, i + 1)]);
      epoch_ = epoch;
    }
    return order_;
  }

  torch::Tensor inputs_, targets_;
  uint64_t order_seed_;
  mutable std::vector<int64_t> order_;
  mutable int64_t epoch_ = -1;
};

}  // namespace detail
}  // namespace attn
