#include "core/src/kernel_attention.h"

#include <cmath>

#include "core/error.h"
#include "core/src/fused_attention.h"
#include "core/src/ky_attention.h"
#include "core/src/neural_attention.h"
#include "core/src/run_random.h"

namespace attn {

namespace {

std::string option_key(const std::string& mechanism, const std::string& key) {
  return "model.attention_options." + mechanism + "." + key;
}

void require_object(const std::string& mechanism, const nlohmann::json& options) {
  if (!options.is_object())
    throw Error("model.attention_options." + mechanism + " must be an object");
}

void reject_all_options(const std::string& mechanism, const nlohmann::json& options) {
  require_object(mechanism, options);
  if (!options.empty())
    throw Error("unknown key '" + option_key(mechanism, options.begin().key()) + "' (mechanism \"" +
                mechanism + "\" takes no options)");
}

// Like torch::nn::Linear's default for a Dh -> Dh layer: U(-1/sqrt(Dh), 1/sqrt(Dh)). GPT-2's
// N(0, 0.02) only reaches 2-D weights; these per-head tensors keep this scale, so that neither
// A nor Wv starts as a near-zero factor in a product of three small matrices.
void init_per_head(torch::Tensor& t, int head_dim) {
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(head_dim));
  t.uniform_(-bound, bound);
}

}  // namespace

// --- options --------------------------------------------------------------------------------

GaussianOptions parse_gaussian_options(const nlohmann::json& options) {
  require_object("gaussian", options);
  GaussianOptions o;
  for (auto it = options.begin(); it != options.end(); ++it) {
    const std::string key = option_key("gaussian", it.key());
    const auto& v = it.value();
    if (it.key() == "sigma") {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
        throw Error(key + " must be a finite number > 0, got " + v.dump());
      o.sigma = v.get<double>();
    } else {
      throw Error("unknown key '" + key + "' (allowed: sigma)");
    }
  }
  return o;
}

LinearSimOptions parse_linear_sim_options(const nlohmann::json& options) {
  require_object("linear-sim", options);
  LinearSimOptions o;
  constexpr int kMaxLen = 4096;  // W holds max_len n Dh^2 weights per layer
  for (auto it = options.begin(); it != options.end(); ++it) {
    const std::string key = option_key("linear-sim", it.key());
    const auto& v = it.value();
    if (it.key() == "max_len") {
      if (!v.is_number_integer())
        throw Error(key + " must be an integer in [1, " + std::to_string(kMaxLen) + "], got " +
                    v.dump());
      const int64_t n = v.get<int64_t>();
      if (n < 1 || n > kMaxLen)
        throw Error(key + " must be in [1, " + std::to_string(kMaxLen) + "], got " +
                    std::to_string(n));
      o.max_len = static_cast<int>(n);
    } else {
      throw Error("unknown key '" + key + "' (allowed: max_len)");
    }
  }
  return o;
}

void validate_pseudo_options(const nlohmann::json& options) {
  reject_all_options("pseudo", options);
}
void validate_semi_fusion_options(const nlohmann::json& options) {
  reject_all_options("semi-fusion", options);
}
void validate_gaussian_options(const nlohmann::json& options) {
  parse_gaussian_options(options);
}
void validate_linear_sim_options(const nlohmann::json& options) {
  parse_linear_sim_options(options);
}

int64_t attention_parameter_count(const std::string& mechanism, int d_model, int heads,
                                  const nlohmann::json& options) {
  if (d_model <= 0 || heads <= 0 || d_model % heads != 0)
    throw Error("attention_parameter_count: d_model (" + std::to_string(d_model) +
                ") must be a positive multiple of heads (" + std::to_string(heads) + ")");
  const int64_t D = d_model, n = heads, Dh = D / n;
  const int64_t projections = 2 * D * D + 2 * D;  // U, b1, P, b2
  if (mechanism == "dot") {
    reject_all_options("dot", options);
    return 4 * D * D + 4 * D;
  }
  if (mechanism == "ky") {
    const KyOptions o = parse_ky_options(options);
    const int64_t h = o.hidden;
    // w1, b1, w3 [n, h], w2 [n, h, h], b2 [n, h], b3 [n] per connection network.
    const int64_t connection = o.connection == "learned" ? n * (h * h + 4 * h + 1) : 0;
    return 4 * D * D + 4 * D + connection;
  }
  if (mechanism == "neural") {  // the neural module itself (placement aside)
    const NeuralOptions o = parse_neural_options(options);
    const int64_t d = o.down > 0 ? o.down : Dh, h = o.hidden;
    const int64_t down = o.down > 0 ? 2 * n * Dh * d : 0;           // Wq', Wk' [n, Dh, d']
    return 4 * D * D + 4 * D + down + n * (2 * h * d + 2 * h + 1);  // U, V, b_h, w_a, b_a
  }
  if (mechanism == "pseudo") {
    validate_pseudo_options(options);
    return projections + n * Dh * Dh;
  }
  if (mechanism == "semi-fusion") {
    validate_semi_fusion_options(options);
    return 2 * D * D + 2 * n * Dh * Dh + D;  // U, A, Wv, W^O, b_O
  }
  if (mechanism == "gaussian") {
    validate_gaussian_options(options);
    return projections;
  }
  if (mechanism == "linear-sim") {
    const LinearSimOptions o = parse_linear_sim_options(options);
    return projections + int64_t(o.max_len) * n * Dh * Dh;
  }
  throw Error("attention_parameter_count: unknown attention mechanism \"" + mechanism + "\"");
}

// --- Gaussian kernel map ----------------------------------------------------------------------

namespace {

// Chunk sizes over the N = B*H maps, the query rows s and the query features d1. One chunk's
// temporary is [cn, cs, S, cd, Dh]: the full (r, d2) extent for each (n, s, d1) it covers.
struct GaussianChunks {
  int64_t maps, rows, features;
};

GaussianChunks plan_gaussian_chunks(int64_t N, int64_t S, int64_t Dh, int64_t max_elems) {
  // Triples (n, s, d1) per chunk; at least one, so the floor is S*Dh elements.
  int64_t budget = std::max<int64_t>(1, max_elems / std::max<int64_t>(1, S * Dh));
  GaussianChunks c;
  c.features = std::min(Dh, budget);
  budget /= c.features;
  c.rows = std::min(S, budget);
  budget /= c.rows;
  c.maps = std::min(N, budget);
  return c;
}

// Calls f(n0, nn, s0, ns, d0, nd) for every chunk of the plan.
template <typename F>
void for_each_gaussian_chunk(int64_t N, int64_t S, int64_t Dh, const GaussianChunks& c, F&& f) {
  for (int64_t n0 = 0; n0 < N; n0 += c.maps)
    for (int64_t s0 = 0; s0 < S; s0 += c.rows)
      for (int64_t d0 = 0; d0 < Dh; d0 += c.features)
        f(n0, std::min(c.maps, N - n0), s0, std::min(c.rows, S - s0), d0,
          std::min(c.features, Dh - d0));
}

// x~_{s,d1} - x~_{r,d2} for one chunk: [nn, ns, S, nd, Dh]. xf is [N, S, Dh].
torch::Tensor chunk_differences(const torch::Tensor& xf, int64_t n0, int64_t nn, int64_t s0,
                                int64_t ns, int64_t d0, int64_t nd) {
  auto maps = xf.narrow(0, n0, nn);
  auto queries = maps.narrow(1, s0, ns).narrow(2, d0, nd).view({nn, ns, 1, nd, 1});
  auto keys = maps.view({nn, 1, maps.size(1), 1, maps.size(2)});
  return queries - keys;
}

// The map's own backward recomputes each chunk instead of saving it: autograd through the
// chunked forward would keep every chunk's exp alive, i.e. the whole B*H*S*S*Dh*Dh tensor.
class GaussianKernelMapFunction : public torch::autograd::Function<GaussianKernelMapFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x, double sigma,
                               int64_t max_chunk_elems) {
    ctx->save_for_backward({x});
    ctx->saved_data["sigma"] = sigma;
    ctx->saved_data["max_chunk_elems"] = max_chunk_elems;
    const int64_t B = x.size(0), H = x.size(1), S = x.size(2), Dh = x.size(3), N = B * H;
    auto xf = x.reshape({N, S, Dh});
    auto map = torch::zeros({N, S, S}, x.options());
    const double c = 1.0 / (2.0 * sigma * sigma);
    for_each_gaussian_chunk(
        N, S, Dh, plan_gaussian_chunks(N, S, Dh, max_chunk_elems),
        [&](int64_t n0, int64_t nn, int64_t s0, int64_t ns, int64_t d0, int64_t nd) {
          auto k = chunk_differences(xf, n0, nn, s0, ns, d0, nd);
          k.pow_(2).mul_(-c).exp_();
          map.narrow(0, n0, nn).narrow(1, s0, ns).add_(k.sum({3, 4}));
        });
    return map.view({B, H, S, S});
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto x = ctx->get_saved_variables()[0];
    const double sigma = ctx->saved_data["sigma"].toDouble();
    const int64_t max_chunk_elems = ctx->saved_data["max_chunk_elems"].toInt();
    const int64_t B = x.size(0), H = x.size(1), S = x.size(2), Dh = x.size(3), N = B * H;
    auto xf = x.reshape({N, S, Dh});
    auto g = grads[0].reshape({N, S, S});
    auto grad = torch::zeros({N, S, Dh}, x.options());
    const double c = 1.0 / (2.0 * sigma * sigma), inv_var = 1.0 / (sigma * sigma);
    // d map[s,r] / d x_{s,d1} = -sum_{d2} k (x_{s,d1} - x_{r,d2}) / sigma^2, and the opposite
    // for x_{r,d2}. t = g[s,r] k (x_{s,d1} - x_{r,d2}) / sigma^2 per chunk.
    for_each_gaussian_chunk(
        N, S, Dh, plan_gaussian_chunks(N, S, Dh, max_chunk_elems),
        [&](int64_t n0, int64_t nn, int64_t s0, int64_t ns, int64_t d0, int64_t nd) {
          auto t = chunk_differences(xf, n0, nn, s0, ns, d0, nd);
          auto k = (t * t).mul_(-c).exp_();
          t.mul_(k).mul_(g.narrow(0, n0, nn).narrow(1, s0, ns).view({nn, ns, S, 1, 1}) * inv_var);
          grad.narrow(0, n0, nn).narrow(1, s0, ns).narrow(2, d0, nd).sub_(t.sum({2, 4}));
          grad.narrow(0, n0, nn).add_(t.sum({1, 3}));
        });
    return {grad.view({B, H, S, Dh}), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor gaussian_kernel_map_reference(const torch::Tensor& x, double sigma,
                                            int64_t max_chunk_elems) {
  if (x.dim() != 4)
    throw Error("gaussian_kernel_map: x must be [B, H, S, Dh], got " + std::to_string(x.dim()) +
                " dimensions");
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw Error("gaussian_kernel_map: sigma must be finite and > 0, got " + std::to_string(sigma));
  if (max_chunk_elems < 1) throw Error("gaussian_kernel_map: max_chunk_elems must be >= 1");
  return GaussianKernelMapFunction::apply(x, sigma, max_chunk_elems);
}

// --- modules ----------------------------------------------------------------------------------

KernelAttentionBase::KernelAttentionBase(const AttentionSpec& spec)
    : heads_(spec.heads),
      head_dim_(spec.d_model / spec.heads),
      causal_(spec.causal),
      dropout_(spec.dropout) {}

torch::Tensor KernelAttentionBase::split_heads(const torch::Tensor& t) const {
  return t.view({t.size(0), t.size(1), heads_, head_dim_}).transpose(1, 2);
}

torch::Tensor KernelAttentionBase::attend(const torch::Tensor& map, const torch::Tensor& values) {
  const int64_t B = map.size(0), L = map.size(2);
  auto scores = map / static_cast<double>(head_dim_);
  if (causal_) scores = scores.masked_fill(causal_mask(L, map.device()), -INFINITY);
  auto weights = torch::softmax(scores, -1);
  if (record_weights) recorded_weights = weights.detach();
  if (dropout_ > 0 && is_training()) weights = run_dropout(weights, dropout_);
  return torch::matmul(weights, values).transpose(1, 2).reshape({B, L, -1});
}

PseudoAttention::PseudoAttention(const AttentionSpec& spec) : KernelAttentionBase(spec) {
  validate_pseudo_options(spec.options);
  in = register_module("input_proj", torch::nn::Linear(spec.d_model, spec.d_model));
  head_kernel = register_parameter("head_kernel", torch::empty({heads_, head_dim_, head_dim_}));
  out = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
  reset_own_parameters();
}

void PseudoAttention::reset_own_parameters() {
  init_per_head(head_kernel, head_dim_);
}

torch::Tensor PseudoAttention::forward(const torch::Tensor& x) {
  auto xt = split_heads(in->forward(x));  // [B, n, L, Dh]
  auto map = torch::matmul(torch::matmul(xt, head_kernel), xt.transpose(-2, -1));
  return out->forward(attend(map, xt));
}

SemiFusionAttention::SemiFusionAttention(const AttentionSpec& spec) : KernelAttentionBase(spec) {
  validate_semi_fusion_options(spec.options);
  in = register_module(
      "input_proj",
      torch::nn::Linear(torch::nn::LinearOptions(spec.d_model, spec.d_model).bias(false)));
  head_kernel = register_parameter("head_kernel", torch::empty({heads_, head_dim_, head_dim_}));
  head_value = register_parameter("head_value", torch::empty({heads_, head_dim_, head_dim_}));
  out = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
  reset_own_parameters();
}

void SemiFusionAttention::reset_own_parameters() {
  init_per_head(head_kernel, head_dim_);
  init_per_head(head_value, head_dim_);
}

torch::Tensor SemiFusionAttention::forward(const torch::Tensor& x) {
  auto xt = split_heads(in->forward(x));
  auto map = torch::matmul(torch::matmul(xt, head_kernel), xt.transpose(-2, -1));
  // AttnMap_i X~_i Wv_i, associated as AttnMap_i (X~_i Wv_i).
  return out->forward(attend(map, torch::matmul(xt, head_value)));
}

GaussianAttention::GaussianAttention(const AttentionSpec& spec)
    : KernelAttentionBase(spec), options_(parse_gaussian_options(spec.options)) {
  in = register_module("input_proj", torch::nn::Linear(spec.d_model, spec.d_model));
  out = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
}

torch::Tensor GaussianAttention::forward(const torch::Tensor& x) {
  auto xt = split_heads(in->forward(x));
  return out->forward(attend(gaussian_kernel_map(xt, options_.sigma), xt));
}

LinearSimAttention::LinearSimAttention(const AttentionSpec& spec)
    : KernelAttentionBase(spec), options_(parse_linear_sim_options(spec.options)) {
  in = register_module("input_proj", torch::nn::Linear(spec.d_model, spec.d_model));
  slot_kernel = register_parameter("slot_kernel",
                                   torch::empty({options_.max_len, heads_, head_dim_, head_dim_}));
  out = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
  reset_own_parameters();
}

void LinearSimAttention::reset_own_parameters() {
  init_per_head(slot_kernel, head_dim_);
}

torch::Tensor LinearSimAttention::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), L = x.size(1), n = heads_, Dh = head_dim_;
  if (L > options_.max_len)
    throw Error("linear-sim: a sequence of " + std::to_string(L) +
                " tokens is longer than model.attention_options.linear-sim.max_len (" +
                std::to_string(options_.max_len) + "): raise max_len");
  auto xt = split_heads(in->forward(x));  // [B, n, L, Dh]
  // Pool of the reference tokens R_s, scaled by 1/sqrt(|R_s|): the prefix r <= s when causal.
  torch::Tensor pool;
  if (causal_) {
    auto count = torch::arange(1, L + 1, xt.options()).sqrt().view({1, 1, L, 1});
    pool = xt.cumsum(2) / count;
  } else {
    pool = (xt.sum(2, true) / std::sqrt(static_cast<double>(L))).expand_as(xt);
  }
  // M[s,o] = sum_{e,f} x~_{s,e} W_{o}[e,f] pool_{s,f}: the outer product x~_s pool_s^T
  // [B, n, L, Dh*Dh] against the first L slots of W laid out as [n, Dh*Dh, L].
  auto outer = (xt.unsqueeze(-1) * pool.unsqueeze(-2)).reshape({B, n, L, Dh * Dh});
  auto slots = slot_kernel.narrow(0, 0, L).permute({1, 2, 3, 0}).reshape({n, Dh * Dh, L});
  return out->forward(attend(torch::matmul(outer, slots), xt));
}

}  // namespace attn
