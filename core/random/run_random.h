// Random streams (torch; internal to core) private to one run, so that runs trained side by side in
// one process (the Compare panel's live runs, each on its own trainer thread) give the results they
// give alone.
//
// torch's default generator is process-wide: two sessions seeding it and drawing from it at
// once interleave their draws. So:
//  - model initialisation (nn modules' reset_parameters draw from the default generator) runs
//    under init_rng_lock(), seeded inside the lock;
//  - dropout during a training step draws from a generator owned by the session, installed for
//    the calling thread by a DropoutStreamScope; run_dropout() uses it.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <mutex>

namespace attn {

// Held while seeding torch's default CPU generator and drawing the initial weights from it.
// The contract for all of attnlab: whoever draws from torch's default generator while runs may
// be training holds this lock (nothing else in core draws from it; tasks and datasets use their
// own std::mt19937_64 streams).
std::unique_lock<std::mutex> init_rng_lock();

// A generator for `device`, independent of the default one, seeded with `seed`. Make one per run
// and reseed it (set_current_seed) rather than one per step: on CUDA it is a clone of the default
// generator, which LibTorch 1.13 never frees.
torch::Generator make_private_generator(const torch::Device& device, uint64_t seed);

// Installs `generator` as this thread's dropout stream until destroyed (scopes nest).
class DropoutStreamScope {
 public:
  explicit DropoutStreamScope(torch::Generator* generator);
  ~DropoutStreamScope();
  DropoutStreamScope(const DropoutStreamScope&) = delete;
  DropoutStreamScope& operator=(const DropoutStreamScope&) = delete;

 private:
  torch::Generator* previous_;
};

// Inverted dropout (keep with probability 1-p, scale kept values by 1/(1-p)), drawing its mask
// from this thread's dropout stream; from torch's default generator when none is installed.
torch::Tensor run_dropout(const torch::Tensor& x, double p);

// The scale run_dropout(x, p) multiplies an x of these sizes by (0 or 1/(1-p)), drawn from the
// same stream in the same order, for kernels that apply dropout themselves: equal, bit for
// bit, to run_dropout(ones(sizes), p). p must be in (0, 1).
torch::Tensor run_dropout_scale(torch::IntArrayRef sizes, const torch::TensorOptions& options,
                                double p);

}  // namespace attn
