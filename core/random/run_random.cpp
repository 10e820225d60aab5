#include "core/random/run_random.h"

#include <ATen/CPUGeneratorImpl.h>

namespace attn {
namespace {
thread_local torch::Generator* current_dropout_stream = nullptr;
}

std::unique_lock<std::mutex> init_rng_lock() {
  static std::mutex mutex;
  return std::unique_lock<std::mutex>(mutex);
}

torch::Generator make_private_generator(const torch::Device& device, uint64_t seed) {
  // Not a clone on the CPU: LibTorch 1.13's GeneratorImpl::clone() returns its copy with a weak
  // count of 0, so the copy is never freed (2.6 KiB per CPU generator). A new generator seeded
  // with `seed` is in the state a reseeded clone would be in.
  if (device.is_cpu()) return at::make_generator<at::CPUGeneratorImpl>(seed);
  // Other devices: cloning the default generator gives one of the device's type without naming
  // the CUDA generator class (core builds against CPU-only LibTorch too). It leaks the same small
  // object, so callers make one per run, not per step (TrainingSession reseeds its own).
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

torch::Tensor run_dropout_scale(torch::IntArrayRef sizes, const torch::TensorOptions& options,
                                double p) {
  // Without a stream torch::dropout draws in its own way, so the ones go through it.
  if (!current_dropout_stream) return torch::dropout(torch::ones(sizes, options), p, true);
  return torch::empty(sizes, options).bernoulli_(1.0 - p, *current_dropout_stream).div_(1.0 - p);
}

}  // namespace attn
