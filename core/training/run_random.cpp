#include "core/training/run_random.h"

namespace attn {
namespace {
thread_local torch::Generator* current_dropout_stream = nullptr;
}

std::unique_lock<std::mutex> init_rng_lock() {
  static std::mutex mutex;
  return std::unique_lock<std::mutex>(mutex);
}

torch::Generator make_private_generator(const torch::Device& device, uint64_t seed) {
  // Cloning the default generator gives a new one of the device's type without naming the
  // CUDA generator class (core builds against CPU-only LibTorch too).
  torch::Generator g = at::globalContext().defaultGenerator(device).clone();
  g.set_current_seed(seed);
  return g;
}

DropoutStreamScope::DropoutStreamScope(torch::Generator* generator)
    : previous_(current_dropout_stream) {
  current_dropout_stream = generator;
}

DropoutStreamScope::~DropoutStreamScope() {
  current_dropout_stream = previous_;
}

torch::Tensor run_dropout(const torch::Tensor& x, double p) {
  if (p <= 0) return x;
  if (!current_dropout_stream) return torch::dropout(x, p, /*train=*/true);
  if (p >= 1) return x * 0;
  auto keep = torch::empty_like(x).bernoulli_(1.0 - p, *current_dropout_stream);
  return x * keep / (1.0 - p);
}

}  // namespace attn
