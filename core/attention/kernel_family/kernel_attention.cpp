#include "core/attention/kernel_family/kernel_attention.h"

#include <cmath>

#include "core/attention/fused_attention.h"
#include "core/attention/mechanism.h"
#include "core/attention/registry.h"
#include "core/base/error.h"
#include "core/random/run_random.h"

namespace attn {

namespace {

// Like torch::nn::Linear's default for a Dh -> Dh layer: U(-1/sqrt(Dh), 1/sqrt(Dh)). GPT-2's
// N(0, 0.02) only reaches 2-D weights; these per-head tensors keep this scale, so that neither
// A nor Wv starts as a near-zero factor in a product of three small matrices.
void init_per_head(torch::Tensor& t, int head_dim) {
  fan_in_uniform_(t, head_dim);
}

}  // namespace

// --- factories --------------------------------------------------------------------------

std::shared_ptr<AttentionModule> make_pseudo_attention(const AttentionSpec& spec) {
  return std::make_shared<PseudoAttention>(spec);
}
std::shared_ptr<AttentionModule> make_semi_fusion_attention(const AttentionSpec& spec) {
  return std::make_shared<SemiFusionAttention>(spec);
}
std::shared_ptr<AttentionModule> make_gaussian_attention(const AttentionSpec& spec) {
  return std::make_shared<GaussianAttention>(spec);
}
std::shared_ptr<AttentionModule> make_linear_sim_attention(const AttentionSpec& spec) {
  return std::make_shared<LinearSimAttention>(spec);
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
    : shape_(HeadShape::of(spec)), position_(spec) {}

void KernelAttentionBase::reset_own_parameters() {
  torch::NoGradGuard no_grad;
  const auto params = named_parameters(/*recurse=*/false);
  std::vector<torch::Tensor> per_head;  // the members' own tensors (shared storage)
  for (const auto& name : per_head_) per_head.push_back(params[name]);
  if (init_ == KernelInit::standard) {
    for (auto& t : per_head) init_per_head(t, shape_.head_dim);
    return;
  }
  const double dh_bound = std::sqrt(6.0 / (2.0 * shape_.head_dim));  // Dh -> Dh
  for (auto& t : per_head) t.uniform_(-dh_bound, dh_bound);
  for (auto* layer : {&in, &out}) {
    torch::nn::init::xavier_uniform_((*layer)->weight);
    if ((*layer)->bias.defined()) (*layer)->bias.zero_();
  }
}

torch::Tensor KernelAttentionBase::split_heads(const torch::Tensor& t) const {
  return t.view({t.size(0), t.size(1), shape_.heads, shape_.head_dim}).transpose(1, 2);
}

torch::Tensor KernelAttentionBase::attend(const torch::Tensor& map, const torch::Tensor& values) {
  const int64_t B = map.size(0), L = map.size(2);
  auto scores = map / static_cast<double>(shape_.head_dim);
  if (position_.alibi()) scores = scores + position_.bias(L, scores);
  if (shape_.causal) scores = scores.masked_fill(causal_mask(L, map.device()), -INFINITY);
  auto weights = torch::softmax(scores, -1);
  if (record_weights) recorded_weights = weights.detach();
  if (shape_.dropout > 0 && is_training()) weights = run_dropout(weights, shape_.dropout);
  auto y = intervene(torch::matmul(weights, values),
                     [&] { return uniform_attention(values, shape_.causal); });
  return y.transpose(1, 2).reshape({B, L, -1});
}

torch::Tensor KernelAttentionBase::register_per_head(const std::string& name, int64_t slots) {
  per_head_.push_back(name);
  const std::vector<int64_t> head = {shape_.heads, shape_.head_dim, shape_.head_dim};
  std::vector<int64_t> sizes = head;
  if (slots > 0) sizes.insert(sizes.begin(), slots);
  return register_parameter(name, torch::empty(sizes));
}

PseudoAttention::PseudoAttention(const AttentionSpec& spec) : KernelAttentionBase(spec) {
  init_ = parse_kernel_common_options(spec.options, "pseudo").init;
  in = register_module("input_proj", torch::nn::Linear(spec.d_model, spec.d_model));
  head_kernel = register_per_head("head_kernel");
  out = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
  reset_own_parameters();
}

torch::Tensor PseudoAttention::forward(const torch::Tensor& x) {
  auto xt = split_heads(in->forward(x));  // [B, n, L, Dh]
  auto map = torch::matmul(torch::matmul(xt, head_kernel), xt.transpose(-2, -1));
  return out->forward(attend(map, xt));
}

SemiFusionAttention::SemiFusionAttention(const AttentionSpec& spec) : KernelAttentionBase(spec) {
  init_ = parse_kernel_common_options(spec.options, "semi-fusion").init;
  in = register_module(
      "input_proj",
      torch::nn::Linear(torch::nn::LinearOptions(spec.d_model, spec.d_model).bias(false)));
  head_kernel = register_per_head("head_kernel");
  head_value = register_per_head("head_value");
  out = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
  reset_own_parameters();
}

torch::Tensor SemiFusionAttention::forward(const torch::Tensor& x) {
  auto xt = split_heads(in->forward(x));
  auto map = torch::matmul(torch::matmul(xt, head_kernel), xt.transpose(-2, -1));
  // AttnMap_i X~_i Wv_i, associated as AttnMap_i (X~_i Wv_i).
  return out->forward(attend(map, torch::matmul(xt, head_value)));
}

GaussianAttention::GaussianAttention(const AttentionSpec& spec)
    : KernelAttentionBase(spec), options_(parse_gaussian_options(spec.options)) {
  init_ = options_.init;
  in = register_module("input_proj", torch::nn::Linear(spec.d_model, spec.d_model));
  out = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
}

torch::Tensor GaussianAttention::forward(const torch::Tensor& x) {
  auto xt = split_heads(in->forward(x));
  return out->forward(attend(gaussian_kernel_map(xt, options_.sigma), xt));
}

LinearSimAttention::LinearSimAttention(const AttentionSpec& spec)
    : KernelAttentionBase(spec), options_(parse_linear_sim_options(spec.options)) {
  init_ = options_.init;
  in = register_module("input_proj", torch::nn::Linear(spec.d_model, spec.d_model));
  slot_kernel = register_per_head("slot_kernel", options_.max_len);
  out = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
  reset_own_parameters();
}

torch::Tensor LinearSimAttention::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), L = x.size(1), n = shape_.heads, Dh = shape_.head_dim;
  if (L > options_.max_len)
    throw Error("linear-sim: a sequence of " + std::to_string(L) +
                " tokens is longer than model.attention_options.linear-sim.max_len (" +
                std::to_string(options_.max_len) + "): raise max_len");
  auto xt = split_heads(in->forward(x));  // [B, n, L, Dh]
  // Pool of the reference tokens R_s, scaled by 1/sqrt(|R_s|): the prefix r <= s when causal.
  torch::Tensor pool;
  if (shape_.causal) {
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
