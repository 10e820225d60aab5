// Attribution patching (torch; internal to core): the gradient estimate of activation patching
// for every head and every (head, position) of a Transformer (core/views/causal_view.h holds the
// result and its definition).
// Contract: the clean probe runs forward once, the corrupted probe forward and backward once;
// the metric, its answers (`answers`/`twin_answers`, else the argmaxes) and its read positions
// `read` are patch_heads's (interventions.h). Eval
// mode; weights, their gradients and every random stream untouched; no hook left behind. Throws
// attn::Error when the probes' lengths differ or the model has no heads.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>

#include "core/models/model.h"
#include "core/views/causal_view.h"

namespace attn {

AttributionTable attribute_heads(Transformer& model, const torch::Tensor& clean,
                                 const torch::Tensor& corrupt,
                                 const std::function<std::string(int64_t)>& label,
                                 const std::vector<int64_t>& read = {},
                                 const std::vector<int64_t>& answers = {},
                                 const std::vector<int64_t>& twin_answers = {});

}  // namespace attn
