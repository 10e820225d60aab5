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
// - Per head by default: each head has its own Wq', Wk' and scorer (U, V, b_h, w_a, b_a). With
//   share_across_heads one copy serves every head, as in the authors' code; the tensors then
//   have a leading size 1 instead of H (down_bias adds bq', bk'). NeuralOptions says why.
// - Dropout acts on the softmax weights (as for dot, ky and the kernel family), not on the
//   output; model.position "alibi" adds -m_h (i - j) to the scaled scores, "rope" is refused.
#pragma once
#include <torch/torch.h>

#include <string>

#include "core/attention/attention.h"
#include "core/attention/fused_attention.h"
#include "core/attention/neural/neural_options.h"
#include "core/attention/neural/neural_view.h"
#include "core/attention/position/position.h"

namespace attn {

// make_neural_attention (core/attention/attention.h) builds a NeuralAttention for every layer it
// is asked for: the model asks for the layers of the resolved model.attention, where placement
// "first-layer" has already put dot-product attention after layer 0.

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
  // Copies of the down-projection and scorer: H, or 1 with share_across_heads. Every tensor
  // below has this leading size; head h uses copy scorer_of_head(h).
  int64_t scorer_copies() const { return options_.share_across_heads ? 1 : shape_.heads; }
  int64_t scorer_of_head(int64_t head) const { return options_.share_across_heads ? 0 : head; }
  // b_a [C]: a parameter whose gradient is exactly zero (softmax shift invariance).
  const torch::Tensor& score_bias() const { return score_bias_; }
  // The scorer's other parameters, read by the views (core/attention/neural/neural_surface.cpp) and
  // tests.
  const torch::Tensor& query_down() const { return query_down_; }  // undefined when "none"
  const torch::Tensor& key_down() const { return key_down_; }      // undefined when "none"
  const torch::Tensor& query_down_bias() const { return query_down_bias_; }  // bq' or undefined
  const torch::Tensor& key_down_bias() const { return key_down_bias_; }      // bk' or undefined
  const torch::Tensor& hidden_query() const { return hidden_query_; }        // U
  const torch::Tensor& hidden_key() const { return hidden_key_; }            // V
  const torch::Tensor& hidden_bias() const { return hidden_bias_; }          // b_h
  const torch::Tensor& score_weight() const { return score_weight_; }        // w_a
  // Raw scores of m (query, key) pairs of one head, before the 1/sqrt(d) scale and the mask:
  // q_reduced, k_reduced [m, d'] (already down-projected) -> [m] with
  // w_a^T act(U q'_m + V k'_m + b_h) + b_a. The same function forward() applies to every pair.
  torch::Tensor pair_scores(int64_t head, const torch::Tensor& q_reduced,
                            const torch::Tensor& k_reduced) const;

  // The Neural panel's request (core/attention/neural/neural_view.h, its JSON form); throws
  // attn::Error naming the key and leaves the request as it was when the JSON is not one.
  void set_view_request(const nlohmann::json& request) override;
  // The parameter table and, with d' = 2, every head's surface and slice at the request
  // (neural_mechanism_view's layout; core/attention/neural/neural_surface.cpp).
  std::optional<MechanismView> observe() override;

 private:
  // A [C, ...] parameter as [H, ...] (an expand when shared; autograd sums the heads' grads).
  torch::Tensor per_head(const torch::Tensor& t) const;
  // x [B, H, L, Dh] -> x Wq' (+ bq') [B, H, L, d'], or x itself without a down-projection.
  torch::Tensor reduce(const torch::Tensor& x, const torch::Tensor& down,
                       const torch::Tensor& bias) const;

  NeuralOptions options_;
  NeuralViewRequest view_request_;
  HeadShape shape_;
  RelativePosition position_;
  torch::nn::Linear qkv_{nullptr}, out_{nullptr};
  torch::Tensor query_down_, key_down_;            // Wq', Wk' [C, Dh, d'] (undefined when "none")
  torch::Tensor query_down_bias_, key_down_bias_;  // bq', bk' [C, d'] (down_bias only)
  torch::Tensor hidden_query_;                     // U   [C, h, d'] (acts on q')
  torch::Tensor hidden_key_;                       // V   [C, h, d'] (acts on k')
  torch::Tensor hidden_bias_;                      // b_h [C, h]
  torch::Tensor score_weight_;                     // w_a [C, h]
  torch::Tensor score_bias_;                       // b_a [C]
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
