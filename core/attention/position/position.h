// Relative position inside attention (model.position "rope" and "alibi"; torch, internal to
// core). The model adds learned absolute embeddings only for "learned"; for "rope" and "alibi"
// each attention module applies one of these, and for "none" the model sees no position at all
// except through the causal mask (docs/design/MECHANISMS.md §0, "Position").
//
// RoPE (Su et al. 2021): per head, the query and key at position m are rotated before the score:
// feature pairs (i, i + Dh/2), i < Dh/2, turn by the angle m theta_i, theta_i = base^(-2i/Dh)
// (the half-split pairing of GPT-NeoX and LLaMA). Rotations compose, so rot(q, m) . rot(k, n)
// depends on m - n only. The head width Dh must be even.
//
// ALiBi (Press et al. 2022): the logit of query i and key j gets -m_h (i - j) added after the
// 1/sqrt(Dh) (or 1/Dh) scale, with the standard slopes m_h (alibi_slopes). Bidirectional models
// (the classifier) use -m_h |i - j|, the usual symmetric variant. No parameters.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

namespace attn {

struct AttentionSpec;

// Rotates x [..., L, Dh] (Dh even): position p = first_position + row.
torch::Tensor rope_rotate(const torch::Tensor& x, double base, int64_t first_position = 0);

// The standard ALiBi slopes for `heads` heads: for a power of two n, m_h = 2^(-8h/n),
// h = 1..n; otherwise the slopes of the largest power of two n below `heads`, then every other
// slope of 2n (Press et al.'s get_slopes). heads >= 1.
std::vector<double> alibi_slopes(int heads);

// The ALiBi logit bias [H, L, L] for query rows i and key columns j: -m_h (i - j) when causal
// (entries j > i are masked anyway), -m_h |i - j| otherwise. In `like`'s dtype and device.
torch::Tensor alibi_bias(int heads, int64_t length, bool causal, const torch::Tensor& like);

// What a mechanism applies for its spec's model.position: nothing for "learned" and "none",
// the rotation for "rope", the bias for "alibi". The rotation's cos/sin tables are cached while
// the length, device and dtype stay the same (the trainer's steps reuse them).
class RelativePosition {
 public:
  // Throws attn::Error when rope is asked for with an odd head width, naming model.position.
  explicit RelativePosition(const AttentionSpec& spec);
  bool rope() const { return kind_ == "rope"; }
  bool alibi() const { return kind_ == "alibi"; }
  // Rotates q and k [B, H, L, Dh] in place of the tensors (a no-op unless rope).
  void rotate(torch::Tensor& q, torch::Tensor& k) const;
  // [H, L, L] bias for alibi, undefined otherwise. Cached per (length, device, dtype), as rope's
  // angles are: building it copies host values to the device, which a CUDA graph's capture
  // refuses, so the training step's warm-up builds it and the capture reuses it. Read only.
  torch::Tensor bias(int64_t length, const torch::Tensor& like) const;
  // The slopes as a [H] tensor in like's dtype/device, undefined unless alibi (cached likewise).
  torch::Tensor slopes(const torch::Tensor& like) const;

 private:
  std::string kind_;
  int heads_;
  bool causal_;
  double base_;
  mutable torch::Tensor cos_, sin_, bias_, slopes_;
};

}  // namespace attn
