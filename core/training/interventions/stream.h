// The residual stream of a Transformer, walked block by block in eval mode (torch; internal to
// core/training/interventions): what direct logit attribution, the logit lens and path patching
// read. Callers hold a detail::Scope (intervention_scope.h): no gradients, eval mode, hooks
// cleared on return.
#pragma once
#include <torch/torch.h>

#include <vector>

#include "core/training/interventions/intervention_scope.h"

namespace attn::detail {

struct Stream {
  torch::Tensor embed;               // [1, T, D]: the stream entering block 0
  std::vector<torch::Tensor> resid;  // resid[l]: entering block l; resid[layers]: leaving the last
  std::vector<torch::Tensor> attn;   // block l's attention write [1, T, D]
  std::vector<torch::Tensor> mlp;    // block l's MLP write [1, T, D]
  std::vector<torch::Tensor> z;      // block l's per-head outputs [1, H, T, Dh]
  torch::Tensor logits;              // the model's output, as forward() gives it
};

// Walks `inputs` ([1, L] tokens) through the model: forward() at every step, the writes kept.
Stream walk(Scope& scope, const torch::Tensor& inputs);

// Layer l's attention write when its per-head outputs are `z` [1, H, T, Dh] (every head
// replaced): the output projection applied to them, bias included. `x` is any stream of the
// same length (the mechanism runs on it, then its heads are replaced).
torch::Tensor write_of(Scope& scope, int layer, const torch::Tensor& x, const torch::Tensor& z);

// Head h's share of write_of: write_of(z with only head h) - write_of(zeros).
torch::Tensor head_write(Scope& scope, int layer, int head, const torch::Tensor& x,
                         const torch::Tensor& z);

// Layer l's per-head outputs [1, H, T, Dh] when the stream entering the block is `x`.
torch::Tensor heads_on(Scope& scope, int layer, const torch::Tensor& x);

// The answer position of a stream of length T: T - 1 (language model) or 0 (a classifier's CLS).
int64_t answer_position(Scope& scope, int64_t T);

}  // namespace attn::detail
