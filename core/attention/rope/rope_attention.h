// Rotary position embeddings (RoPE; Su et al. 2021) on dot-product attention (torch; internal
// to core): the relative-position baseline. Dot attention sees no position at all (the model adds
// learned absolute embeddings), while ky adds a learned bias per window offset; rope answers
// whether a mechanism beats dot only because dot lacks relative position (docs/design/MECHANISMS.md
// §0).
//
// Per head, the query and key at position m are rotated before the usual softmax(q.k/sqrt(Dh)):
// feature pairs (i, i + Dh/2), i < Dh/2, turn by the angle m theta_i, theta_i = base^(-2i/Dh)
// (the half-split pairing of GPT-NeoX and LLaMA). Rotations compose, so
// rot(q, m) . rot(k, n) depends on m - n only. The head width Dh must be even.
#pragma once
#include <torch/torch.h>

#include "core/attention/dot/dot_attention.h"
#include "core/attention/rope/rope_options.h"

namespace attn {

// Rotates x [..., L, Dh] (Dh even): position p = first_position + row.
torch::Tensor rope_rotate(const torch::Tensor& x, double base, int64_t first_position = 0);

// Dot attention (same parameters, same names) whose q and k are rotated by position.
class RopeAttention : public DotAttention {
 public:
  // Throws attn::Error when the head width d_model / heads is odd.
  explicit RopeAttention(const AttentionSpec& spec);
  const RopeOptions& options() const { return options_; }

 protected:
  void encode_positions(torch::Tensor& q, torch::Tensor& k) const override;

 private:
  RopeOptions options_;
  // cos and sin of the angles [L, Dh/2], kept while the length, device and dtype stay the same
  // (the trainer's steps and the probe reuse them instead of rebuilding them every forward).
  mutable torch::Tensor cos_, sin_;
};

}  // namespace attn
