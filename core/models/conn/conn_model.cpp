#include "core/models/conn/conn_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"
#include "core/models/conn/spectral_tracker.h"

namespace attn {

torch::Tensor mix_slots(const torch::Tensor& c, const torch::Tensor& h) {
  // sum_i c[i, j] h[..., i, :] = (c^T h)[..., j, :]; matmul broadcasts c^T over the batch.
  return torch::matmul(c.t(), h);
}

torch::Tensor mix_literal(const torch::Tensor& h, const torch::Tensor& c) {
  if (h.size(-1) != c.size(0))
    throw Error("model.conn.mixing \"literal\" computes H_state @ C, which needs N == D: C is " +
                std::to_string(c.size(0)) + " x " + std::to_string(c.size(1)) +
                " (N = " + std::to_string(c.size(0)) +
                ") but the slot states have D = " + std::to_string(h.size(-1)) + " features");
  return torch::matmul(h, c);
}

ConnModelImpl::ConnModelImpl(const ModelConfig& m, int vocab, int max_length)
    : o_(m.conn), d_(m.d_model), vocab_(vocab), max_length_(max_length) {
  if (o_.mixing == "literal" && o_.slots != d_)
    throw Error("model.conn.mixing \"literal\" needs model.conn.slots (N = " +
                std::to_string(o_.slots) + ") == model.d_model (D = " + std::to_string(d_) + ")");
  torch::NoGradGuard no_grad;
  token_ = register_module("token", torch::nn::Embedding(vocab, d_));
  position_ = register_parameter("position", torch::randn({max_length, d_}) * 0.02);
  torch::nn::init::normal_(token_->weight, 0.0, 0.02);
  slots = register_buffer("slots", torch::randn({o_.slots, d_}));
  connection = register_parameter(
      "connection", torch::randn({o_.connection_heads, o_.slots, o_.slots}) * o_.init_std);
  auto linear = [&](const char* name, int out) {
    auto l =
        register_module(name, torch::nn::Linear(torch::nn::LinearOptions(d_, out).bias(false)));
    return l;
  };
  wq_in_ = linear("wq_in", d_);
  wk_slots_ = linear("wk_slots", d_);
  wv_in_ = linear("wv_in", d_);
  wq_out_ = linear("wq_out", d_);
  wk_final_ = linear("wk_final", d_);
  wv_final_ = linear("wv_final", d_);
  vocab_head_ = linear("vocab_head", vocab);
  for (auto* l : {&wq_in_, &wk_slots_, &wv_in_, &wq_out_, &wk_final_, &wv_final_})
    torch::nn::init::xavier_uniform_((*l)->weight);
  torch::nn::init::normal_(vocab_head_->weight, 0.0, 0.02);
  for (int k = 0; k < o_.steps; ++k)
    norms_.push_back(register_module("norm" + std::to_string(k),
                                     torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_}))));
}

torch::Tensor ConnModelImpl::embed(const torch::Tensor& tokens) {
  if (tokens.is_floating_point() || tokens.dim() != 2)
    throw Error("the conn model takes int64 tokens [B, L], got " + tokens.toString() + " " +
                c10::str(tokens.sizes()));
  const int64_t L = tokens.size(1);
  if (L > position_.size(0))
    throw Error("input of " + std::to_string(L) + " tokens is longer than the model's " +
                std::to_string(position_.size(0)) + " positions");
  return token_->forward(tokens) + position_.slice(0, 0, L).unsqueeze(0);
}

// Per-prefix H_0: [B, L, N, D], H_0[b, t] = H + sum_{s <= t} A[b, s, :]^T v[b, s].
torch::Tensor ConnModelImpl::compress(const torch::Tensor& x) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_));
  auto q = wq_in_->forward(x);                                   // [B, L, D]
  auto k = wk_slots_->forward(slots);                            // [N, D]
  auto v = wv_in_->forward(x);                                   // [B, L, D]
  auto a = torch::softmax(torch::matmul(q, k.t()) * scale, -1);  // [B, L, N]
  auto contrib = a.unsqueeze(-1) * v.unsqueeze(2);               // [B, L, N, D]
  return slots + torch::cumsum(contrib, 1);
}

torch::Tensor ConnModelImpl::effective_connection() const {
  return o_.connection_heads == 1 ? connection[0] : connection.mean(0);
}

torch::Tensor ConnModelImpl::reason(torch::Tensor h, std::vector<torch::Tensor>* trace) {
  auto c = effective_connection();
  const bool literal = o_.mixing == "literal";
  const bool gelu = o_.variant == "nonlinear";
  if (trace) trace->push_back(h);
  for (int k = 0; k < o_.steps; ++k) {
    auto infl = literal ? mix_literal(h, c) : mix_slots(c, h);
    h = norms_[k]->forward(h + (gelu ? torch::gelu(infl) : infl));
    if (trace) trace->push_back(h);
  }
  return h;
}

torch::Tensor ConnModelImpl::forward(const torch::Tensor& tokens) {
  auto x = embed(tokens);                 // [B, L, D]
  auto h = reason(compress(x), nullptr);  // [B, L, N, D]
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_));
  auto kf = wk_final_->forward(h), vf = wv_final_->forward(h);             // [B, L, N, D]
  auto qo = wq_out_->forward(x).unsqueeze(-1);                             // [B, L, D, 1]
  auto a = torch::softmax(torch::matmul(kf, qo).squeeze(-1) * scale, -1);  // [B, L, N]
  auto y = torch::matmul(a.unsqueeze(-2), vf).squeeze(-2);                 // [B, L, D]
  return vocab_head_->forward(y);
}

std::vector<torch::Tensor> ConnModelImpl::reasoning_states(const torch::Tensor& tokens) {
  auto x = embed(tokens.slice(0, 0, 1));
  auto h0 = compress(x);  // [1, L, N, D]
  std::vector<torch::Tensor> trace;
  reason(h0[0][h0.size(1) - 1], &trace);
  return trace;
}

torch::Tensor ConnModelImpl::regularization() const {
  if (o_.regularization == 0) return torch::zeros({}, connection.options());
  return connection.pow(2).sum() * o_.regularization;
}

torch::Tensor ConnModelImpl::apply_control() {
  const auto control = spectral::parse_control(o_.control);
  torch::NoGradGuard no_grad;
  auto changed = torch::zeros({}, connection.options().dtype(torch::kBool));
  if (control == spectral::Control::None) return changed;
  for (int64_t j = 0; j < connection.size(0); ++j) {
    auto cj = connection[j];
    changed = changed.logical_or(spectral::apply_control_tensor(cj, control, o_.limit));
  }
  return changed;
}

int64_t ConnModelImpl::spec_parameter_formula(int64_t n, int64_t d, int64_t s, int64_t v) {
  return n * n + 8 * d * d + s * d + v * d;
}

int64_t ConnModelImpl::parameter_formula(const ConnConfig& c, int64_t d, int64_t s, int64_t v) {
  const int64_t n = c.slots;
  return c.connection_heads * n * n + 6 * d * d + 2 * v * d + s * d + 2 * int64_t(c.steps) * d;
}

}  // namespace attn
