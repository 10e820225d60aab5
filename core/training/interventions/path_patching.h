// Path patching (torch; internal to core): the effect of a sender head on a receiver head
// through the receiver's input, everything else held at the corrupted run (core/views/
// causal_view.h, PathPatchTable, holds the definition). Only the receiver's whole input (its
// query, key and value together) is patched: the mechanisms read one input.
// Contract: eval mode, no gradients, no hook left behind; the metric and answers are
// patch_heads's (interventions.h). Throws attn::Error for probes of different lengths, a model
// without heads or a head that does not exist.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "core/models/model.h"
#include "core/views/causal_view.h"

namespace attn {

// What writes to the residual stream: a head (layer, head >= 0), a layer's MLP (head kMlp) or
// the embedding (layer -1).
struct StreamSource {
  static constexpr int kMlp = -1;
  int layer = 0, head = 0;
};

// Every head as a sender to each of `receivers` (empty: every head of layers 1 and up). The
// metric reads `answers`/`twin_answers` (the task's, one per read position) where given, else
// the two runs' argmaxes, as patch_heads and attribute_heads do.
PathPatchTable path_patch(Transformer& model, const torch::Tensor& clean,
                          const torch::Tensor& corrupt, const std::vector<HeadRef>& receivers,
                          const std::function<std::string(int64_t)>& label,
                          const std::vector<int64_t>& read = {},
                          const std::vector<int64_t>& answers = {},
                          const std::vector<int64_t>& twin_answers = {});

// The metric of the corrupted run whose `receiver` reads the corrupted stream plus the clean-
// minus-corrupted writes of `senders` (sources after the receiver's layer write nothing to it).
double path_patched_metric(Transformer& model, const torch::Tensor& clean,
                           const torch::Tensor& corrupt, const std::vector<StreamSource>& senders,
                           HeadRef receiver, const std::vector<int64_t>& read = {},
                           const std::vector<int64_t>& answers = {},
                           const std::vector<int64_t>& twin_answers = {});

}  // namespace attn
