#include "core/attention/neural/neural_attention.h"

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/random/run_random.h"

namespace attn {

namespace {

const std::string kKeyPrefix = "model.attention_options.neural.";

torch::Tensor activate(const torch::Tensor& z, NeuralActivation act) {
  switch (act) {
    case NeuralActivation::relu:
      return torch::relu(z);
    case NeuralActivation::gelu:
      return torch::gelu(z);  // approximate = "none": the exact erf form
    case NeuralActivation::tanh:
      return torch::tanh(z);
  }
  throw Error("neural attention: invalid activation");
}

// d act(z) / dz.
torch::Tensor activation_slope(const torch::Tensor& z, NeuralActivation act) {
  switch (act) {
    case NeuralActivation::relu:
      return (z > 0).to(z.scalar_type());
    case NeuralActivation::gelu: {
      // gelu(z) = z Phi(z): slope Phi(z) + z phi(z).
      const double inv_sqrt2 = 1.0 / std::sqrt(2.0),
                   inv_sqrt2pi = 1.0 / std::sqrt(2.0 * std::acos(-1.0));
      return 0.5 * (1.0 + torch::erf(z * inv_sqrt2)) + z * torch::exp(-0.5 * z * z) * inv_sqrt2pi;
    }
    case NeuralActivation::tanh: {
      auto t = torch::tanh(z);
      return 1.0 - t * t;
    }
  }
  throw Error("neural attention: invalid activation");
}

// Pre-activations z[b,h,t,j,c] = p[b,h,i0+t,c] + r[b,h,j,c] for `rows` query rows from i0
// against the first `keys` keys: [B, H, rows, keys, h].
torch::Tensor block_preactivation(const torch::Tensor& p, const torch::Tensor& r, int64_t i0,
                                  int64_t rows, int64_t keys) {
  return p.narrow(2, i0, rows).unsqueeze(3) + r.narrow(2, 0, keys).unsqueeze(2);
}

// Softmax weights [B, H, rows, keys] of one block from its activations a = act(z). slopes
// (ALiBi, [H], or undefined) add -m_h (i - j) (|i - j| when not causal) to the scaled logits.
torch::Tensor block_weights(const torch::Tensor& a, const torch::Tensor& w, const torch::Tensor& b,
                            double scale, bool causal, int64_t i0, const torch::Tensor& slopes) {
  const int64_t H = w.size(0), hidden = w.size(1), rows = a.size(2), keys = a.size(3);
  // One GEMV per (b, h, row) instead of a temporary a * w of the block's size.
  auto score = torch::matmul(a, w.view({1, H, 1, hidden, 1})).squeeze(-1) + b.view({1, H, 1, 1});
  score = score * scale;
  if (causal || slopes.defined()) {
    auto opts = torch::TensorOptions().dtype(torch::kLong).device(a.device());
    auto query = torch::arange(i0, i0 + rows, opts).unsqueeze(1);
    auto key = torch::arange(keys, opts).unsqueeze(0);
    if (slopes.defined()) {
      auto distance = (query - key).to(score.scalar_type());
      if (!causal) distance = distance.abs();
      score = score - slopes.view({1, H, 1, 1}) * distance;
    }
    if (causal) score = score.masked_fill(key > query, -INFINITY);
  }
  return torch::softmax(score, -1);
}

// The block's slice [B, H, rows, keys] of the dropout scale (0 or 1/(1-p)), or undefined.
torch::Tensor block_keep(const torch::Tensor& keep, int64_t i0, int64_t rows, int64_t keys) {
  return keep.defined() ? keep.narrow(2, i0, rows).narrow(3, 0, keys) : keep;
}

// Keys a block of query rows [i0, i0 + rows) can see: all, or up to its last row when causal.
int64_t block_keys(int64_t n, int64_t i0, int64_t rows, bool causal) {
  return causal ? i0 + rows : n;
}

// Query-chunked neural attention. Autograd would keep every block's [rows, n, h] activations
// alive until backward, O(n^2 h) in all; this Function saves only p, r, w, b, v (and the
// dropout scale and ALiBi slopes when given) and recomputes each block in backward, so forward
// and backward both stay O(B H chunk n h) beyond the [B, H, n, n] dropout scale.
class NeuralAttentionFunction : public torch::autograd::Function<NeuralAttentionFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& p,
                               const torch::Tensor& r, const torch::Tensor& w,
                               const torch::Tensor& b, const torch::Tensor& v, int64_t act,
                               double scale, bool causal, int64_t chunk, torch::Tensor* weights,
                               const torch::Tensor* keep_in, const torch::Tensor* slopes_in) {
    // keep and slopes travel by pointer: LibTorch 1.13's apply() cannot take an undefined
    // tensor argument. Neither needs a gradient.
    const torch::Tensor keep = *keep_in, slopes = *slopes_in;
    ctx->saved_data["act"] = act;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["causal"] = causal;
    ctx->saved_data["chunk"] = chunk;
    ctx->saved_data["has_keep"] = keep.defined();
    ctx->saved_data["has_slopes"] = slopes.defined();
    ctx->save_for_backward({p, r, w, b, v, keep, slopes});  // undefined ones stay undefined
    const auto activation = static_cast<NeuralActivation>(act);
    const int64_t B = p.size(0), H = p.size(1), n = p.size(2);
    auto out = torch::zeros({B, H, n, v.size(3)}, v.options());
    if (weights) *weights = torch::zeros({B, H, n, n}, p.options());
    for (int64_t i0 = 0; i0 < n; i0 += chunk) {
      const int64_t rows = std::min(chunk, n - i0), keys = block_keys(n, i0, rows, causal);
      auto a = activate(block_preactivation(p, r, i0, rows, keys), activation);
      auto A = block_weights(a, w, b, scale, causal, i0, slopes);
      if (weights) weights->narrow(2, i0, rows).narrow(3, 0, keys).copy_(A);
      if (keep.defined()) A = A * block_keep(keep, i0, rows, keys);  // dropout on the weights
      out.narrow(2, i0, rows).copy_(torch::matmul(A, v.narrow(2, 0, keys)));
    }
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto activation = static_cast<NeuralActivation>(ctx->saved_data["act"].toInt());
    const double scale = ctx->saved_data["scale"].toDouble();
    const bool causal = ctx->saved_data["causal"].toBool();
    const int64_t chunk = ctx->saved_data["chunk"].toInt();
    auto saved = ctx->get_saved_variables();
    const auto &p = saved[0], &r = saved[1], &w = saved[2], &b = saved[3], &v = saved[4];
    const torch::Tensor keep = ctx->saved_data["has_keep"].toBool() ? saved[5] : torch::Tensor();
    const torch::Tensor slopes =
        ctx->saved_data["has_slopes"].toBool() ? saved[6] : torch::Tensor();
    const auto& grad_out = grads[0];
    const int64_t B = p.size(0), H = p.size(1), n = p.size(2), hidden = p.size(3);
    auto dp = torch::zeros_like(p), dr = torch::zeros_like(r), dw = torch::zeros_like(w);
    auto dv = torch::zeros_like(v);
    for (int64_t i0 = 0; i0 < n; i0 += chunk) {
      const int64_t rows = std::min(chunk, n - i0), keys = block_keys(n, i0, rows, causal);
      auto z = block_preactivation(p, r, i0, rows, keys);  // [B, H, rows, keys, h]
      auto a = activate(z, activation);
      auto A = block_weights(a, w, b, scale, causal, i0, slopes);  // [B, H, rows, keys]
      auto g = grad_out.narrow(2, i0, rows);                       // [B, H, rows, Dv]
      auto v_keys = v.narrow(2, 0, keys);
      const auto kept = block_keep(keep, i0, rows, keys);
      dv.narrow(2, 0, keys)
          .add_(torch::matmul((kept.defined() ? A * kept : A).transpose(-1, -2), g));
      // Softmax backward; masked keys have A = 0 and so get no gradient.
      auto dA = torch::matmul(g, v_keys.transpose(-1, -2));
      if (kept.defined()) dA = dA * kept;
      auto ds = A * (dA - (A * dA).sum(-1, true)) * scale;  // d loss / d score
      dw.add_(
          torch::matmul(ds.reshape({B, H, 1, rows * keys}), a.reshape({B, H, rows * keys, hidden}))
              .squeeze(2)
              .sum(0));
      auto dz = ds.unsqueeze(-1) * activation_slope(z, activation) * w.view({1, H, 1, 1, hidden});
      dp.narrow(2, i0, rows).add_(dz.sum(3));
      dr.narrow(2, 0, keys).add_(dz.sum(2));
    }
    // The output does not depend on b (softmax is shift-invariant): its gradient is exactly 0,
    // where summing ds over keys would leave rounding noise.
    auto db = torch::zeros_like(b);
    return {dp, dr, dw, db, dv, {}, {}, {}, {}, {}, {}, {}};  // no gradient for the rest
  }
};

void check_neural_shapes(const torch::Tensor& p, const torch::Tensor& r, const torch::Tensor& w,
                         const torch::Tensor& b, const torch::Tensor& v) {
  const bool ok = p.dim() == 4 && r.sizes() == p.sizes() && w.dim() == 2 &&
                  w.size(0) == p.size(1) && w.size(1) == p.size(3) && b.dim() == 1 &&
                  b.size(0) == p.size(1) && v.dim() == 4 && v.size(0) == p.size(0) &&
                  v.size(1) == p.size(1) && v.size(2) == p.size(2);
  if (!ok)
    throw Error("neural_attention: expected p, r [B, H, n, h], w [H, h], b [H], v [B, H, n, Dv]");
}

}  // namespace

torch::Tensor neural_attention_reference(const torch::Tensor& p, const torch::Tensor& r,
                                         const torch::Tensor& w, const torch::Tensor& b,
                                         const torch::Tensor& v, NeuralActivation act, double scale,
                                         bool causal, int64_t query_chunk, torch::Tensor* weights,
                                         const torch::Tensor& keep, const torch::Tensor& slopes) {
  check_neural_shapes(p, r, w, b, v);
  if (query_chunk < 1)
    throw Error("neural_attention_reference: query_chunk must be >= 1, got " +
                std::to_string(query_chunk));
  const int64_t B = p.size(0), H = p.size(1), n = p.size(2);
  if (keep.defined() && keep.sizes() != torch::IntArrayRef({B, H, n, n}))
    throw Error("neural_attention_reference: keep must be [B, H, n, n]");
  if (slopes.defined() && (slopes.dim() != 1 || slopes.size(0) != H))
    throw Error("neural_attention_reference: slopes must be [H]");
  return NeuralAttentionFunction::apply(p, r, w, b, v, static_cast<int64_t>(act), scale, causal,
                                        query_chunk, weights, &keep, &slopes);
}

torch::Tensor neural_attention_literal(
    const torch::Tensor& q_reduced, const torch::Tensor& k_reduced, const torch::Tensor& u,
    const torch::Tensor& v_weight, const torch::Tensor& hidden_bias,
    const torch::Tensor& score_weight, const torch::Tensor& score_bias, const torch::Tensor& values,
    NeuralActivation act, double scale, bool causal, torch::Tensor* weights) {
  const int64_t B = q_reduced.size(0), H = q_reduced.size(1), n = q_reduced.size(2);
  const int64_t reduced = q_reduced.size(3), hidden = u.size(1);
  // Eq. 7: C[b,h,i,j] = [q'_i ; k'_j], [B, H, n, n, 2d'].
  auto C = torch::cat({q_reduced.unsqueeze(3).expand({B, H, n, n, reduced}),
                       k_reduced.unsqueeze(2).expand({B, H, n, n, reduced})},
                      -1);
  auto W_h = torch::cat({u, v_weight}, -1);  // [H, h, 2d']
  auto h = activate(torch::matmul(C, W_h.transpose(1, 2).view({1, H, 1, 2 * reduced, hidden})) +
                        hidden_bias.view({1, H, 1, 1, hidden}),
                    act);  // eq. 8's hidden layer, [B, H, n, n, h]
  auto A = torch::matmul(h, score_weight.view({1, H, 1, hidden, 1})).squeeze(-1) +
           score_bias.view({1, H, 1, 1});  // eq. 9
  auto logits = A * scale;
  if (causal) logits = logits.masked_fill(causal_mask(n, logits.device()), -INFINITY);
  auto attention = torch::softmax(logits, -1);  // eq. 10
  if (weights) *weights = attention;
  return torch::matmul(attention, values);
}

// --- options -------------------------------------------------------------------------------

std::shared_ptr<AttentionModule> make_neural_attention(const AttentionSpec& spec) {
  // Every layer asked for is neural: placement "first-layer" is resolved in model.attention
  // (resolved_attention_layers, core/attention/registry.h), not here.
  return std::make_shared<NeuralAttention>(spec);
}

// --- module --------------------------------------------------------------------------------

NeuralAttention::NeuralAttention(const AttentionSpec& spec)
    : options_(parse_neural_options(spec.options)), shape_(HeadShape::of(spec)), position_(spec) {
  if (options_.down > shape_.head_dim)
    throw Error(kKeyPrefix + "down (" + std::to_string(options_.down) +
                ") must not exceed the head width Dh = d_model / heads = " +
                std::to_string(shape_.head_dim) +
                ": a projection to d' > Dh is no down-projection and can express nothing that "
                "\"none\" cannot (use d' <= " +
                std::to_string(shape_.head_dim) + " or \"none\")");
  if (options_.scorer == "literal" && (shape_.dropout > 0 || spec.position == "alibi"))
    throw Error(kKeyPrefix +
                "scorer \"literal\" (the paper's form, for benchmarks) takes no dropout and no "
                "ALiBi: set model.dropout to 0 and model.position to learned or none, or use "
                "scorer \"split\"");
  qkv_ = register_module("qkv", torch::nn::Linear(spec.d_model, 3 * spec.d_model));
  out_ = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
  // One copy per head, or one for all (share_across_heads), expanded to H in forward.
  const int64_t C = scorer_copies(), d = reduced_dim(), h = options_.hidden;
  if (has_down_projection()) {
    query_down_ = register_parameter("query_down", torch::empty({C, shape_.head_dim, d}));
    key_down_ = register_parameter("key_down", torch::empty({C, shape_.head_dim, d}));
    if (options_.down_bias) {
      query_down_bias_ = register_parameter("query_down_bias", torch::empty({C, d}));
      key_down_bias_ = register_parameter("key_down_bias", torch::empty({C, d}));
    }
  }
  hidden_query_ = register_parameter("hidden_query", torch::empty({C, h, d}));
  hidden_key_ = register_parameter("hidden_key", torch::empty({C, h, d}));
  hidden_bias_ = register_parameter("hidden_bias", torch::empty({C, h}));
  score_weight_ = register_parameter("score_weight", torch::empty({C, h}));
  score_bias_ = register_parameter("score_bias", torch::empty({C}));
  reset_own_parameters();
}

void NeuralAttention::reset_own_parameters() {
  // nn.Linear's default, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), layer by layer: Dh -> d' (down),
  // 2d' -> h (W_h = [U V], b_h), h -> 1 (w_a, b_a).
  if (has_down_projection()) {
    for (auto* t : {&query_down_, &key_down_, &query_down_bias_, &key_down_bias_})
      if (t->defined()) fan_in_uniform_(*t, shape_.head_dim);
  }
  for (auto* t : {&hidden_query_, &hidden_key_, &hidden_bias_})
    fan_in_uniform_(*t, 2.0 * reduced_dim());
  fan_in_uniform_(score_weight_, options_.hidden);
  fan_in_uniform_(score_bias_, options_.hidden);
}

torch::Tensor NeuralAttention::per_head(const torch::Tensor& t) const {
  if (!t.defined() || t.size(0) == shape_.heads) return t;
  std::vector<int64_t> sizes = t.sizes().vec();
  sizes[0] = shape_.heads;
  return t.expand(sizes);
}

torch::Tensor NeuralAttention::pair_scores(int64_t head, const torch::Tensor& q_reduced,
                                           const torch::Tensor& k_reduced) const {
  if (head < 0 || head >= shape_.heads)
    throw Error("neural attention: head " + std::to_string(head) + " out of range [0, " +
                std::to_string(shape_.heads) + ")");
  if (q_reduced.dim() != 2 || q_reduced.size(1) != reduced_dim() ||
      k_reduced.sizes() != q_reduced.sizes())
    throw Error("neural attention: pair_scores expects q', k' [m, " +
                std::to_string(reduced_dim()) + "]");
  const int64_t c = scorer_of_head(head);
  auto z = torch::matmul(q_reduced, hidden_query_[c].t()) +
           torch::matmul(k_reduced, hidden_key_[c].t()) + hidden_bias_[c];  // [m, h]
  return torch::matmul(activate(z, options_.activation), score_weight_[c]) + score_bias_[c];
}

torch::Tensor NeuralAttention::reduce(const torch::Tensor& x, const torch::Tensor& down,
                                      const torch::Tensor& bias) const {
  if (!has_down_projection()) return x;
  auto y = torch::matmul(x, per_head(down).unsqueeze(0));  // [B, H, L, d']
  return bias.defined() ? y + per_head(bias).unsqueeze(0).unsqueeze(2) : y;
}

torch::Tensor NeuralAttention::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), L = x.size(1), D = x.size(2);
  auto qkv =
      qkv_->forward(x).view({B, L, 3, shape_.heads, shape_.head_dim}).permute({2, 0, 3, 1, 4});
  auto q = reduce(qkv[0], query_down_, query_down_bias_);  // [B, H, L, d']
  auto k = reduce(qkv[1], key_down_, key_down_bias_);
  auto v = qkv[2];  // [B, H, L, Dh]
  // The split W_h [q'; k'] = U q' + V k': P and R once per forward, [B, H, L, h] each.
  auto p = torch::matmul(q, per_head(hidden_query_).transpose(1, 2).unsqueeze(0)) +
           per_head(hidden_bias_).view({1, shape_.heads, 1, options_.hidden});
  auto r = torch::matmul(k, per_head(hidden_key_).transpose(1, 2).unsqueeze(0));
  const auto w = per_head(score_weight_), b = per_head(score_bias_);
  const double scale =
      1.0 / std::sqrt(static_cast<double>(shape_.head_dim));  // the paper's sqrt(d)
  torch::Tensor weights;
  torch::Tensor* weights_out = record_weights ? &weights : nullptr;
  // Dropout acts on the weights, as in every other mechanism: a [B, H, L, L] scale (0 or
  // 1/(1-p)) drawn from the run's dropout stream, applied to the softmax weights on every path.
  torch::Tensor keep;
  if (shape_.dropout > 0 && is_training())
    keep = run_dropout_scale({B, shape_.heads, L, L}, p.options(), shape_.dropout);
  const torch::Tensor slopes = position_.slopes(p);
  // The CUDA kernel has no chunk, dropout or ALiBi argument; the CPU kernel for ReLU (whose
  // memory is dot's, so it needs no chunk) takes dropout and ALiBi after its scores.
  const bool fused = p.is_cuda() ? !keep.defined() && !slopes.defined()
                                 : neural_cpu_kernel_applies(p, options_.activation);
  const bool literal = options_.scorer == "literal";  // no dropout, no ALiBi (constructor)
  auto y =
      literal ? neural_attention_literal(q, k, per_head(hidden_query_), per_head(hidden_key_),
                                         per_head(hidden_bias_), w, b, v, options_.activation,
                                         scale, shape_.causal, weights_out)
      : fused ? neural_attention(p, r, w, b, v, options_.activation, scale, shape_.causal,
                                 weights_out, keep, slopes)
              : neural_attention_reference(p, r, w, b, v, options_.activation, scale, shape_.causal,
                                           options_.chunk, weights_out, keep, slopes);
  if (record_weights) recorded_weights = weights.detach();
  y = intervene(y, [&] { return uniform_attention(v, shape_.causal); });
  return out_->forward(y.transpose(1, 2).reshape({B, L, D}));
}

}  // namespace attn
