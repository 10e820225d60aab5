// Neural Attention (seed 003; docs/design/MECHANISMS.md §4). Torch; internal to core.
//
// Per head, with q, k, v [n, Dh] from the qkv projection:
//   q' = q Wq', k' = k Wk'   (Wq', Wk' [Dh, d']; or q' = q, k' = k when down is "none")
//   score_ij = w_a^T act(W_h [q'_i ; k'_j] + b_h) + b_a     (W_h [h, 2d'], eq. 8)
//   out_i    = sum_j softmax_j(score_ij / sqrt(d)) v_j        (eq. 10; causal: keys j <= i)
// d is the per-head width Dh of Q and K (the paper's d = 64 per head, §4.1), not d': the paper
// keeps sqrt(d) when it down-projects.
//
// Where this departs from the paper's code, and why:
// - The scores are computed through the exact split W_h [q; k] = U q + V k (U, V [h, d'] the two
//   halves of W_h): P = Q'U^T + b_h and R = K'V^T ([n, h] each) once, then
//   score_ij = sum_c w_a[c] act(P_ic + R_jc) + b_a in blocks of query rows
//   (neural_attention_reference in fused_attention.h). The paper's [n, n, 2d'] tensor C (eq. 7)
//   is never built; neural_attention_literal below builds it, for comparisons only. Backward
//   recomputes each block rather than keeping autograd's per-block activations, so training
//   memory is O(B H chunk n h) as well.
// - One hidden layer, as in the paper's eqs. 3-4; the authors' code uses a deeper MLP that
//   degenerates to uniform attention at small widths.
// - The option `down` must not exceed Dh: a "down"-projection to d' > Dh adds parameters but
//   nothing that "none" cannot express.
// - b_a is kept (it is in the paper) but softmax is shift-invariant, so the output does not
//   depend on it and its gradient is exactly zero; score_bias() exposes it to show that.
#pragma once
#include <torch/torch.h>

#include <string>

#include "core/attention/attention.h"
#include "core/attention/neural/neural_options.h"
#include "core/kernels/fused_attention.h"

namespace attn {

// make_neural_attention (core/attention/attention.h) builds a NeuralAttention, or a DotAttention
// for layers > 0 when the placement is "first-layer".

class NeuralAttention : public AttentionModule {
 public:
  // Throws attn::Error when down exceeds the head width Dh.
  explicit NeuralAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;
  // The model's GPT-2 init overwrites 2-D weights with N(0, 0.02); the scorer keeps
  // nn.Linear's init instead (fan-in uniform), so it does not start flat.
  void reset_own_parameters() override;

  const NeuralOptions& options() const { return options_; }
  bool has_down_projection() const { return options_.down > 0; }
  int reduced_dim() const { return has_down_projection() ? options_.down : shape_.head_dim; }  // d'
  int head_dim() const { return shape_.head_dim; }
  // b_a [H]: a parameter whose gradient is exactly zero (softmax shift invariance).
  const torch::Tensor& score_bias() const { return score_bias_; }
  // The scorer's other parameters, read by the views (core/attention/neural/neural_surface.cpp) and
  // tests.
  const torch::Tensor& query_down() const { return query_down_; }      // undefined when "none"
  const torch::Tensor& key_down() const { return key_down_; }          // undefined when "none"
  const torch::Tensor& hidden_query() const { return hidden_query_; }  // U
  const torch::Tensor& hidden_key() const { return hidden_key_; }      // V
  const torch::Tensor& hidden_bias() const { return hidden_bias_; }    // b_h
  const torch::Tensor& score_weight() const { return score_weight_; }  // w_a
  // Raw scores of m (query, key) pairs of one head, before the 1/sqrt(d) scale and the mask:
  // q_reduced, k_reduced [m, d'] (already down-projected) -> [m] with
  // w_a^T act(U q'_m + V k'_m + b_h) + b_a. The same function forward() applies to every pair.
  torch::Tensor pair_scores(int64_t head, const torch::Tensor& q_reduced,
                            const torch::Tensor& k_reduced) const;

 private:
  NeuralOptions options_;
  HeadShape shape_;
  torch::nn::Linear qkv_{nullptr}, out_{nullptr};
  torch::Tensor query_down_, key_down_;  // Wq', Wk' [H, Dh, d'] (undefined when "none")
  torch::Tensor hidden_query_;           // U   [H, h, d'] (acts on q')
  torch::Tensor hidden_key_;             // V   [H, h, d'] (acts on k')
  torch::Tensor hidden_bias_;            // b_h [H, h]
  torch::Tensor score_weight_;           // w_a [H, h]
  torch::Tensor score_bias_;             // b_a [H]
};

// The paper's literal form (eqs. 7-10), for benchmarks and tests: builds the
// [B, H, n, n, 2d'] concatenation C_ij = [q'_i ; k'_j] and applies
// w_a^T act([U V] C_ij + b_h) + b_a, then softmax(score * scale) v. Memory O(B H n^2 (2d' + h)).
// q_reduced, k_reduced: [B, H, n, d']; u, v_weight: [H, h, d']; hidden_bias, score_weight:
// [H, h]; score_bias: [H]; values: [B, H, n, Dv]. Returns [B, H, n, Dv]; weights, if given,
// receives the [B, H, n, n] softmax weights. Plain autograd, differentiable in every tensor.
torch::Tensor neural_attention_literal(
    const torch::Tensor& q_reduced, const torch::Tensor& k_reduced, const torch::Tensor& u,
    const torch::Tensor& v_weight, const torch::Tensor& hidden_bias,
    const torch::Tensor& score_weight, const torch::Tensor& score_bias, const torch::Tensor& values,
    NeuralActivation act, double scale, bool causal, torch::Tensor* weights = nullptr);

}  // namespace attn
