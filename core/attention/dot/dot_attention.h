// Scaled dot-product multi-head attention, softmax(Q K^T / sqrt(Dh)) V: the baseline every
// mechanism is compared against (docs/design/MECHANISMS.md §0). Torch; internal to core.
#pragma once
#include <torch/torch.h>

#include "core/attention/attention.h"

namespace attn {

class DotAttention : public AttentionModule {
 public:
  explicit DotAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;

 protected:
  // Position encoding applied to q and k [B, H, L, Dh] before the scores; dot has none (it sees
  // position only through the model's absolute embeddings). RopeAttention rotates them.
  virtual void encode_positions(torch::Tensor& q, torch::Tensor& k) const {}

  HeadShape shape_;
  torch::nn::Linear qkv_{nullptr}, out_{nullptr};
};

// Softmax attention of q, k, v [B, H, L, Dh] with logits scaled by 1/sqrt(Dh), causal mask when
// asked, dropout on the weights in training; weights (if given) receives them before dropout.
// Shared by dot and the relative-position variants (core/attention/rope/).
torch::Tensor softmax_attention(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, bool causal, double dropout, bool training,
                                torch::Tensor* weights);

}  // namespace attn
