// Direct logit attribution and the logit lens (torch; internal to core): what each head, each
// MLP and the embedding write directly to the answer's logit, and what the residual stream
// after each block would predict (core/views/causal_view.h holds the results and their
// definitions). Eval mode, no gradients, no hook left behind; the model is unchanged.
// The answer is the model's top prediction at the answer position of `probe` ([1, L] tokens).
// Throws attn::Error for a model without blocks (the Connection Transformer).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>

#include "core/models/model.h"
#include "core/views/causal_view.h"

namespace attn {

LogitAttribution direct_logit_attribution(Transformer& model, const torch::Tensor& probe,
                                          const std::function<std::string(int64_t)>& label);

LogitLens logit_lens(Transformer& model, const torch::Tensor& probe,
                     const std::function<std::string(int64_t)>& label);

}  // namespace attn
