// Neural KY-Attention (Condor, seed 000 §4; docs/design/MECHANISMS.md §1). Torch; internal to core.
//
// The seed's algorithm (eqs. 42-49) is alpha = softmax_window(q.k / sqrt(Dh)),
// beta_h = softmax_j g_h(t_j), w = alpha*beta / (sum alpha*beta + eps). Since
// alpha*beta / sum(alpha*beta) = softmax_j(q.k_j / sqrt(Dh) + g_h(t_j)), the eps aside, it is
// sliding-window attention plus a learned per-head bias over window slots. That is what is
// computed: the H x W bias table once per forward, added to banded logits.
//
// Window slot j (0-based, 0..W-1) of query i holds key i - first_offset + j, with
//   causal:   first_offset = W-1  (keys i-W+1..i; slot W-1, t = 1, is the query's own token)
//   centered: first_offset = W/2  (keys i-W/2..i+W-1-W/2; the seed's Pad(K, W/2) + Unfold)
// Edges: `masked` drops out-of-range slots from the softmax; `zero-pad` keeps them as zero keys
// and values that still take softmax mass (logit 0 + g), the authors' behaviour.
//
// Memory is O(B H L W): queries are processed in blocks of W against 2W keys (one GEMM per
// block); the band is cut out of each block by a pad-and-reshape skew. No L x L tensor exists
// except the probe's dense copy of the weights (record_weights), built only for display.
#pragma once
#include <torch/torch.h>

#include <string>

#include "core/attention/attention.h"
#include "core/attention/ky/ky_options.h"
#include "core/attention/position/position.h"

namespace attn {

// Slot of the window that holds the query's own token.
inline int ky_first_offset(int window, bool causal) {
  return causal ? window - 1 : window / 2;
}

// Windowed attention with a per-head slot bias. q, k, v: [B, H, L, Dh]; bias: [H, W].
// Returns the output [B, H, L, Dh]; if band_weights is given it receives the [B, H, L, W]
// softmax weights (before dropout). Differentiable in q, k, v and bias.
// windowed_attention runs the fused CUDA kernel for CUDA tensors when it can (no dropout, no
// band weights; see fused_attention.h), else the LibTorch reference, which runs anywhere.
torch::Tensor windowed_attention(const torch::Tensor& q, const torch::Tensor& k,
                                 const torch::Tensor& v, const torch::Tensor& bias, int window,
                                 int first_offset, bool masked_edges, double dropout = 0.0,
                                 bool training = false, torch::Tensor* band_weights = nullptr);
torch::Tensor windowed_attention_reference(const torch::Tensor& q, const torch::Tensor& k,
                                           const torch::Tensor& v, const torch::Tensor& bias,
                                           int window, int first_offset, bool masked_edges,
                                           double dropout = 0.0, bool training = false,
                                           torch::Tensor* band_weights = nullptr);

// Dense [B, H, L, L] copy of band weights [B, H, L, W] (zero outside the window, and for
// zero-pad slots, which point at no real key). For the probe display only.
torch::Tensor band_to_dense(const torch::Tensor& band, int first_offset);

// H independent connection networks g_h(t) = W3 GELU(W2 GELU(W1 t + b1) + b2) + b3 (eq. 37),
// batched over heads. Parameters: w1 [H, n], b1 [H, n], w2 [H, n, n], b2 [H, n], w3 [H, n],
// b3 [H]; initialised like torch::nn::Linear (uniform, +-1/sqrt(fan_in)), or with xavier_init
// Glorot-uniform weights and zero biases (KyOptions::init).
class ConnectionNetImpl : public torch::nn::Module {
 public:
  ConnectionNetImpl(int heads, int hidden, bool xavier_init = false);
  // t: [T] positions in [0, 1]. Returns g: [H, T].
  torch::Tensor forward(const torch::Tensor& t);
  void reset_parameters();
  torch::Tensor w1, b1, w2, b2, w3, b3;

 private:
  int heads_, hidden_;
  bool xavier_;
};
TORCH_MODULE(ConnectionNet);

class KyAttention : public AttentionModule {
 public:
  explicit KyAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;
  void reset_own_parameters() override {
    if (!connection_.is_empty()) connection_->reset_parameters();
    if (table_.defined()) {
      torch::NoGradGuard no_grad;
      table_.zero_();
    }
  }

  // ky's view (core/attention/ky/ky_view.h): g_h(t) on kCurveSamples points of [0, 1], g_h and
  // beta_h at the slots; nothing when connection is "none" (a plain window has no curves).
  std::optional<MechanismView> observe() override;
  static constexpr int kCurveSamples = 65;

  // t_j = j / (W-1) for the W window slots, on the module's device.
  torch::Tensor slot_positions() const;
  // g_h at the slots: [H, W] (the bias table one forward adds to the logits); zeros when
  // connection is "none"; the free table itself when it is "table".
  torch::Tensor bias_table();
  // g_h at positions t in [0, 1] ([T] -> [H, T]), for drawing: the network itself, or for a
  // free table its values at the slots joined by straight lines. Needs has_connection().
  torch::Tensor connection_curve(const torch::Tensor& t);
  // What forward() adds to the logits: bias_table() plus, with model.position "alibi",
  // -m_h |i - j| for each slot's offset i - j (first_offset() - slot).
  torch::Tensor logit_bias_table();
  bool has_connection() const { return !connection_.is_empty() || table_.defined(); }
  ConnectionNet& connection() { return connection_; }  // null unless connection is "learned"
  const KyOptions& options() const { return options_; }
  bool causal_window() const { return options_.placement == "causal"; }
  int first_offset() const { return ky_first_offset(options_.window, causal_window()); }

 private:
  KyOptions options_;
  HeadShape shape_;
  RelativePosition position_;
  torch::nn::Linear qkv_{nullptr}, out_{nullptr};
  ConnectionNet connection_{nullptr};
  torch::Tensor table_;  // [H, W], connection "table" only
};

}  // namespace attn
