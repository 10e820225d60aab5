#include "core/attention/dot/dot_attention.h"

#include <cmath>

#include "core/training/run_random.h"

namespace attn {

std::shared_ptr<AttentionModule> make_dot_attention(const AttentionSpec& spec) {
  return std::make_shared<DotAttention>(spec);
}

torch::Tensor softmax_attention(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, bool causal, double dropout, bool training,
                                torch::Tensor* weights) {
  const int64_t L = q.size(2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(3)));
  if (causal) scores = scores.masked_fill(causal_mask(L, q.device()), -INFINITY);
  auto w = torch::softmax(scores, -1);
  if (weights) *weights = w.detach();
  if (dropout > 0 && training) w = run_dropout(w, dropout);
  return torch::matmul(w, v);
}

DotAttention::DotAttention(const AttentionSpec& spec) : shape_(HeadShape::of(spec)) {
  qkv_ = register_module("qkv", torch::nn::Linear(spec.d_model, 3 * spec.d_model));
  out_ = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
}

torch::Tensor DotAttention::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), L = x.size(1), D = x.size(2);
  // [B, L, 3, H, Dh] -> three [B, H, L, Dh]
  auto qkv =
      qkv_->forward(x).view({B, L, 3, shape_.heads, shape_.head_dim}).permute({2, 0, 3, 1, 4});
  auto q = qkv[0], k = qkv[1];
  encode_positions(q, k);
  auto y = softmax_attention(q, k, qkv[2], shape_.causal, shape_.dropout, is_training(),
                             record_weights ? &recorded_weights : nullptr);
  return out_->forward(y.transpose(1, 2).reshape({B, L, D}));
}

}  // namespace attn
