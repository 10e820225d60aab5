// The Connection Transformer (seed 001, docs/design/MECHANISMS.md section 2), model.architecture
// "conn" (private to core: includes torch). A whole model, not an attention module:
//
//   X = TokenEmbedding + PositionEmbedding                                   [B, L, D]
//   compression:  A = softmax over slots of (X Wq)(H Wk)^T / sqrt(D)          [B, L, N]
//                 H_0 = H + A^T (X Wv)                                        [B, N, D]
//   K steps:      Infl = mix(H_{t-1}, C);  H_t = LayerNorm_t(H_{t-1} + Infl)   (nonlinear: +
//   GELU(Infl)) expansion:    Y = softmax((X Wq')(H_K Wk')^T / sqrt(D)) (H_K Wv')           [B, L,
//   D] logits = Y W_vocab                                                        [B, L, V]
//
// H [N, D] ~ N(0, 1) is a buffer (fixed, never trained). C ~ N(0, init_std); with
// connection_heads h there are C_1..C_h and every step uses their mean (the seed's
// sum_j H @ C_j / h; for the linear and GELU variants alike that is exactly mix(H, mean C), so
// the heads only reparametrise one matrix: they change optimisation and regularisation, not
// what the model can express). Projections have no biases, as in the seed's appendix.
//
// Slot mixing ("slots", default): Influence[b,j,:] = sum_i C[i,j] H[b,i,:] (einsum
// "ij,bid->bjd"), for any N, D: C[i,j] is how much slot i influences slot j. "literal" is the
// seed's H_state @ C, which only type-checks when N == D and then mixes the feature columns
// inside each slot (no slot ever influences another); the config refuses it when N != D.
//
// Causality. The seed compresses all positions into the slots, so in a language model every
// position would read the slots that contain the tokens it must predict. attnlab makes the
// model causal exactly: position t uses the slot states of its own prefix x_0..x_t. Because the
// compression softmax runs over slots (each position's weights are independent of the others),
// H_0 of prefix t is H + sum_{s<=t} A_s^T v_s, a cumulative sum over positions; the K steps and
// the expansion then run per prefix. Output t is therefore exactly the seed's model applied to
// x_0..x_t and read at its last position. Cost: O(B L K N^2 D) time and B L N D memory per
// step, against the seed's O(B K N^2 D) for one slot state per sequence. Every token task here
// (copy, recall, text, ...) feeds answers back as inputs, so no task can use the non-causal
// form without leaking; there is no switch for it. Image classification is refused.
#pragma once
#include <torch/torch.h>

#include "core/config/config.h"

namespace attn {

// Influence[..., j, :] = sum_i c[i, j] h[..., i, :]  (h: [..., N, D], c: [N, N]).
torch::Tensor mix_slots(const torch::Tensor& c, const torch::Tensor& h);
// The seed's literal h @ c (h: [..., N, D], c: [N, N]); throws attn::Error unless D == N.
torch::Tensor mix_literal(const torch::Tensor& h, const torch::Tensor& c);

class ConnModelImpl : public torch::nn::Module {
 public:
  ConnModelImpl(const ModelConfig& m, int vocab, int max_length);
  // tokens [B, L] int64 -> logits [B, L, V]; output t depends on tokens 0..t only.
  torch::Tensor forward(const torch::Tensor& tokens);
  // Slot states of sample 0's whole input (its last prefix): after compression and after each
  // reasoning step, K + 1 tensors [N, D].
  std::vector<torch::Tensor> reasoning_states(const torch::Tensor& tokens);
  // The matrix every step uses: the mean of the connection heads, [N, N].
  torch::Tensor effective_connection() const;
  // lambda * sum_j ||C_j||_F^2 (a scalar; 0 when lambda is 0).
  torch::Tensor regularization() const;
  // The stability control on every head after an optimiser step (spectral::apply_control_tensor:
  // decided on C's device, nothing read back); whether C changed, as a 0-dim bool tensor there.
  // For norm-bound, ||I + C_j||_2 <= r for every head implies ||I + mean C_j||_2 <= r (convexity).
  torch::Tensor apply_control();

  const ConnConfig& options() const { return o_; }
  int d_model() const { return d_; }
  int vocab() const { return vocab_; }
  int max_length() const { return max_length_; }
  // The seed's parameter formula N^2 + 8 D^2 + S D + V D (section 2.4).
  static int64_t spec_parameter_formula(int64_t n, int64_t d, int64_t s, int64_t v);
  // What this implementation has: h N^2 + 6 D^2 + 2 V D + S D + 2 K D. The seed lists seven
  // D x D matrices but W_vocab is D x V; it counts V D once though the embedding and W_vocab
  // are both V x D (untied in its own appendix); it leaves out the K LayerNorms (2 D each).
  static int64_t parameter_formula(const ConnConfig& c, int64_t d, int64_t s, int64_t v);

  torch::Tensor slots;       // H [N, D], buffer
  torch::Tensor connection;  // [h, N, N]

 private:
  // Slot states after the K steps for every prefix: [B, L, N, D] (trace: every step's states).
  torch::Tensor reason(torch::Tensor h, std::vector<torch::Tensor>* trace);
  torch::Tensor embed(const torch::Tensor& tokens);
  torch::Tensor compress(const torch::Tensor& x);

  ConnConfig o_;
  int d_, vocab_, max_length_;
  torch::nn::Embedding token_{nullptr};
  torch::Tensor position_;
  torch::nn::Linear wq_in_{nullptr}, wk_slots_{nullptr}, wv_in_{nullptr};
  torch::nn::Linear wq_out_{nullptr}, wk_final_{nullptr}, wv_final_{nullptr}, vocab_head_{nullptr};
  std::vector<torch::nn::LayerNorm> norms_;
};
TORCH_MODULE(ConnModel);

}  // namespace attn
