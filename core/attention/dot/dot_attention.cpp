#include "core/attention/dot/dot_attention.h"

#include <cmath>

#include "core/attention/fused_attention.h"
#include "core/kernels/cpu_kernels.h"
#include "core/random/run_random.h"

namespace attn {

std::shared_ptr<AttentionModule> make_dot_attention(const AttentionSpec& spec) {
  return std::make_shared<DotAttention>(spec);
}

torch::Tensor softmax_attention(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, bool causal, double dropout, bool training,
                                torch::Tensor* weights, const torch::Tensor& logit_bias) {
  const int64_t L = q.size(2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(3)));
  if (logit_bias.defined()) scores = scores + logit_bias;
  if (causal) scores = scores.masked_fill(causal_mask(L, q.device()), -INFINITY);
  auto w = torch::softmax(scores, -1);
  if (weights) *weights = w.detach();
  if (dropout > 0 && training) w = run_dropout(w, dropout);
  return torch::matmul(w, v);
}

DotAttention::DotAttention(const AttentionSpec& spec)
    : shape_(HeadShape::of(spec)), position_(spec) {
  qkv_ = register_module("qkv", torch::nn::Linear(spec.d_model, 3 * spec.d_model));
  out_ = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
}

torch::Tensor DotAttention::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), L = x.size(1), D = x.size(2);
  // On the CPU the core is one kernel on the packed projection (cpu_kernels.h) when it computes
  // softmax attention itself: no rotation, no logit bias, no weights to record. Dropout's mask
  // is drawn here, from the same stream and of the same shape as softmax_attention draws it.
  // An intervention that captures the head outputs (attribution patching, a clean run), zeroes
  // or replaces them (head importance, patching) takes it too: the per-head view of the
  // kernel's output is what the reference path captures and changes, and the projection reads
  // that view, so a gradient with respect to it flows. Only uniform attention needs the values.
  const auto uniform = [&] {
    for (const HeadIntervention::Kind k : intervention->kinds)
      if (k == HeadIntervention::Kind::uniform) return true;
    return false;
  };
  if (fused_kernels_enabled() && cpu::accepts(x) && !position_.rope() && !position_.alibi() &&
      !record_weights && (!intervention || !uniform())) {
    torch::Tensor keep;
    if (shape_.dropout > 0 && is_training())
      keep = run_dropout_scale({B, shape_.heads, L, L}, x.options(), shape_.dropout);
    note_fused_path();
    torch::Tensor y =
        cpu::packed_softmax_attention(qkv_->forward(x), shape_.heads, shape_.causal, keep);
    if (intervention) {
      const torch::Tensor z =
          intervene(y.view({B, L, shape_.heads, shape_.head_dim}).transpose(1, 2),
                    [] { return torch::Tensor(); });  // no head is uniform
      y = z.transpose(1, 2).reshape({B, L, D});
    }
    return out_->forward(y);
  }
  // [B, L, 3, H, Dh] -> three [B, H, L, Dh]
  auto qkv =
      qkv_->forward(x).view({B, L, 3, shape_.heads, shape_.head_dim}).permute({2, 0, 3, 1, 4});
  auto q = qkv[0], k = qkv[1];
  position_.rotate(q, k);
  auto y = softmax_attention(q, k, qkv[2], shape_.causal, shape_.dropout, is_training(),
                             record_weights ? &recorded_weights : nullptr, position_.bias(L, q));
  y = intervene(y, [&] { return uniform_attention(qkv[2], shape_.causal); });
  return out_->forward(y.transpose(1, 2).reshape({B, L, D}));
}

}  // namespace attn
