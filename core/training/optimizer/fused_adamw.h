// The optimiser's per-step work for small CPU models in plain loops (torch; internal to core).
// A d64 two-layer model has ~30 parameter tensors; LibTorch's AdamW, clip_grad_norm_ and
// zero_grad spend ~10 tensor ops on each (state lookup, mul_, add_, addcmul_, sqrt, div, add_,
// addcdiv_, norms, stack), and at this size every op costs more in dispatch than in arithmetic.
// These functions do the same arithmetic with one loop per tensor (measured in bench_targets'
// "vs PyTorch" rows and docs/guide/performance.md).
//
// Contract:
//  - fused_adamw_applies(): every parameter in the optimiser's groups is a contiguous float32
//    CPU tensor, and no group uses amsgrad. Otherwise use torch's own functions.
//  - The results equal torch::optim::AdamW::step() after clip_grad_norm_() to float rounding
//    (checked step by step in tests/core/test_fused_adamw.cpp): a parameter without a gradient
//    is skipped, a parameter's first step creates its state (step 0, zero moments) in the
//    optimiser's own state map, so save(), load() and GoodState see the usual state.
//  - Each group's options (lr, weight_decay, betas, eps) are read at every step.
#pragma once
#include <torch/torch.h>

#include <vector>

namespace attn {

bool fused_adamw_applies(torch::optim::AdamW& optimizer);

// sqrt(sum of g^2) over every defined gradient, accumulated in double (clip_grad_norm_'s
// total_norm). Non-finite when any gradient element is.
double gradient_norm(const std::vector<torch::Tensor>& parameters);

// clip_grad_norm_'s coefficient for that norm: min(1, max_norm / (norm + 1e-6)).
double clip_coefficient(double norm, double max_norm);

// Scales every gradient by grad_scale (the clip coefficient; 1 leaves them), then one AdamW
// update of every parameter that has a gradient. Returns false when an updated weight is not
// finite (the caller restores its last good state).
bool fused_adamw_step(torch::optim::AdamW& optimizer, double grad_scale);

// Sets every defined gradient to zero in place (what LibTorch 1.13's zero_grad() does; 2.x's
// default drops them, which makes backward allocate new ones every step).
void zero_gradients(const std::vector<torch::Tensor>& parameters);

}  // namespace attn
