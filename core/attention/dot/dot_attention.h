// Scaled dot-product multi-head attention, softmax(Q K^T / sqrt(Dh)) V: the baseline every
// mechanism is compared against (docs/design/MECHANISMS.md §0). Torch; internal to core.
// With model.position "rope" q and k are rotated by position first; with "alibi" the logits
// get -m_h (i - j) (core/attention/position/position.h). Dropout acts on the weights.
#pragma once
#include <torch/torch.h>

#include "core/attention/attention.h"
#include "core/attention/position/position.h"

namespace attn {

class DotAttention : public AttentionModule {
 public:
  // Throws attn::Error for model.position "rope" with an odd head width.
  explicit DotAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;

 protected:
  HeadShape shape_;
  RelativePosition position_;
  torch::nn::Linear qkv_{nullptr}, out_{nullptr};
};

// Softmax attention of q, k, v [B, H, L, Dh] with logits scaled by 1/sqrt(Dh), causal mask when
// asked, dropout on the weights in training; weights (if given) receives them before dropout.
// logit_bias (if defined, [H, L, L]) is added to the scaled logits (ALiBi).
torch::Tensor softmax_attention(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, bool causal, double dropout, bool training,
                                torch::Tensor* weights,
                                const torch::Tensor& logit_bias = torch::Tensor());

}  // namespace attn
