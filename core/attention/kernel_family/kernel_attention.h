// The kernel attention family (seed 002, "Function Fitting Based on Kolmogorov-Arnold Theorem and
// Kernel Functions"; docs/design/MECHANISMS.md §3). Torch; internal to core.
//
// Every member maps x [B, L, D] -> [B, L, D] with n = heads, Dh = D / n:
//   X~ = X U (+ b1), split into heads X~_i [B, L, Dh]
//   AttnMap_i = softmax(M_i / Dh)          (1/Dh, not 1/sqrt(Dh), as the paper specifies;
//                                           keys r > s masked with -inf when the spec is causal)
//   Head_i = AttnMap_i V_i,  Output = concat_i(Head_i) P + b2
// and they differ in the raw map M_i and the values V_i:
//
//   pseudo       (the paper's Param-Fusion, Algorithm 1)
//                M_i[s,r] = x~_s^T A_i x~_r,  V_i = X~_i.
//                Parameters U, b1, A [n, Dh, Dh], P, b2:  2D^2 + n Dh^2 + 2D.
//   semi-fusion  (Algorithm 1 with W~v and W^O kept, eqs. 32-34; the paper's best model)
//                X~ = X U (no b1: eq. 31's X~_i = X U_i), M_i as pseudo, V_i = X~_i Wv_i with a
//                per-head Wv_i [Dh, Dh], then Output = concat(Head) W^O + b_O.
//                Parameters U, A, Wv [n, Dh, Dh], W^O, b_O:  2D^2 + 2 n Dh^2 + D.
//   gaussian     (Algorithm 2)
//                M_i[s,r] = sum_{d1,d2} exp(-(x~_{s,d1} - x~_{r,d2})^2 / (2 sigma^2)), i.e. A_i
//                fixed to ones; V_i = X~_i. Parameters U, b1, P, b2: 2D^2 + 2D.
//                Summing over every (d1, d2) pair makes the score blind to permutations of a
//                token's own coordinates. The map comes from gaussian_kernel_map()
//                (fused_attention.h), which never builds the [B, n, L, L, Dh, Dh] tensor.
//                The authors' code also layer-normalises each head's X~ before the map (the
//                paper's variance argument, eq. 41, assumes it); Algorithm 2 does not, nor
//                does this: the kernel's scale is set by U alone.
//   linear-sim   (the Linear-MHSA block of §3.2)
//                The inner function Psi of Lemma 2.2 with the linear kernel k(a, b) = a b, the
//                sequence itself as reference (Ref = X~_i) and one weight W_{i,o} [Dh, Dh] per
//                output slot o, the output width set to the sequence length:
//                  M_i[s,o] = sum_r <W_{i,o}, x~_s x~_r^T>_F / sqrt(|R_s|)
//                           = x~_s^T W_{i,o} (sum_{r in R_s} x~_r) / sqrt(|R_s|),
//                a "simulated attention map" whose column o weights the value x~_o, V_i = X~_i.
//                The score of key o depends on the query, on the pooled sequence and on o's
//                position only: key o's own content never enters it (it enters every column
//                alike, through the pool). Parameters U, b1, W [max_len, n, Dh, Dh], P, b2:
//                  2D^2 + 2D + max_len n Dh^2.
//                Departures from the paper, and why:
//                - The paper ties the map width to one fixed S (its W has exactly S slots). Here
//                  W has max_len slots (an option) and a sequence of L <= max_len tokens uses
//                  the first L: slot o is absolute position o. Longer inputs are an error.
//                - The paper's W^inner [H, R, D, D] would also vary with the reference token r
//                  (S^2 n Dh^2 weights); it is shared over r, as in the authors' code and as
//                  the paper's 5.60M parameter count implies.
//                - The pool is scaled by 1/sqrt(|R_s|) (the authors' code divides the map by
//                  Dh sqrt(S)), so that the map does not grow with the sequence length.
//                - Causal: the pool R_s is the prefix r <= s (a prefix sum), not the whole
//                  sequence, so no future token reaches position s through it; bidirectional:
//                  R_s is every token.
//                - The authors' code applies a softmax over each head's Dh features of X~ (a
//                  module named "ln") before the map and the values; the paper does not, and
//                  neither does this.
//
// Dropout (spec.dropout) is applied to the attention weights in training, as DotAttention does;
// record_weights stores the [B, n, L, L] softmax weights, detached. model.position "alibi" adds
// -m_h (i - j) to the scaled logits M_i / Dh; "rope" is refused (kernel_options.cpp says why).
// Option init "xavier" (kernel_options.h) re-initialises U, P and the per-head tensors.
#pragma once
#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/attention/attention.h"
#include "core/attention/kernel_family/kernel_options.h"
#include "core/attention/position/position.h"

namespace attn {

// What the four share: head split, 1/Dh scaling, causal mask, softmax, dropout, recording.
class KernelAttentionBase : public AttentionModule {
 public:
  // The input projection X~ = X U (+ b1) and the output projection; each mechanism registers
  // them (in its own order, which fixes the initialisation's random draws).
  torch::nn::Linear in{nullptr}, out{nullptr};

  // Initialises the tensors registered by register_per_head (U(+-1/sqrt(Dh)), or Glorot uniform
  // over Dh -> Dh), and with xavier U and P too (Glorot uniform, zero biases).
  void reset_own_parameters() final;

 protected:
  explicit KernelAttentionBase(const AttentionSpec& spec);
  // [B, L, D] -> [B, n, L, Dh]
  torch::Tensor split_heads(const torch::Tensor& t) const;
  // map: raw scores M [B, n, L, L]; values [B, n, L, Dh]. Returns concat_i(softmax(M_i / Dh)
  // V_i) as [B, L, D], masked when causal, with dropout and recording as documented above.
  torch::Tensor attend(const torch::Tensor& map, const torch::Tensor& values);
  // Registers a [n, Dh, Dh] parameter, one matrix per head, or with `slots` > 0 a
  // [slots, n, Dh, Dh] one (values set by reset_own_parameters, in registration order).
  torch::Tensor register_per_head(const std::string& name, int64_t slots = 0);

  HeadShape shape_;
  RelativePosition position_;
  KernelInit init_ = KernelInit::standard;  // the member's option "init"

 private:
  std::vector<std::string> per_head_;  // register_per_head's names
};

class PseudoAttention : public KernelAttentionBase {
 public:
  explicit PseudoAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;

  torch::Tensor head_kernel;  // A [n, Dh, Dh]; in: U, b1; out: P, b2
};

class SemiFusionAttention : public KernelAttentionBase {
 public:
  explicit SemiFusionAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;

  torch::Tensor head_kernel;  // A [n, Dh, Dh]; in: U (no bias); out: W^O, b_O
  torch::Tensor head_value;   // Wv [n, Dh, Dh]
};

class GaussianAttention : public KernelAttentionBase {
 public:
  explicit GaussianAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;
  double sigma() const { return options_.sigma; }  // in: U, b1; out: P, b2

 private:
  GaussianOptions options_;
};

class LinearSimAttention : public KernelAttentionBase {
 public:
  explicit LinearSimAttention(const AttentionSpec& spec);
  torch::Tensor forward(const torch::Tensor& x) override;
  int max_len() const { return options_.max_len; }

  torch::Tensor slot_kernel;  // W [max_len, n, Dh, Dh]; in: U, b1; out: P, b2

 private:
  LinearSimOptions options_;
};

}  // namespace attn
