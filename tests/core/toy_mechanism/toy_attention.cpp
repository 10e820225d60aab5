#include "tests/core/toy_mechanism/toy_attention.h"

namespace attn::toy {

ToyAttention::ToyAttention(const AttentionSpec& spec) : shape_(HeadShape::of(spec)) {
  v_ = register_module("v", torch::nn::Linear(spec.d_model, spec.d_model));
  out_ = register_module("out", torch::nn::Linear(spec.d_model, spec.d_model));
  rate = register_parameter("rate", torch::linspace(0.2, 1.0, shape_.heads));
  mix = register_parameter("mix", torch::eye(shape_.heads) + 0.1);
}

torch::Tensor ToyAttention::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), L = x.size(1), D = x.size(2);
  auto v = v_->forward(x).view({B, L, shape_.heads, shape_.head_dim}).transpose(1, 2);
  auto y = uniform_attention(v, shape_.causal) * torch::sigmoid(rate).view({1, -1, 1, 1});
  y = torch::einsum("hg,bgld->bhld", {mix, y});
  return out_->forward(y.transpose(1, 2).reshape({B, L, D}));
}

std::optional<MechanismView> ToyAttention::observe() {
  torch::NoGradGuard no_grad;
  MechanismView view;
  ViewCurves decay{"decay", {"key offset", "tokens"}, {"weight", ""}, {}, {}, {}};
  for (int k = 0; k < kOffsets; ++k) decay.xs.push_back(static_cast<float>(k));
  const auto r = torch::softplus(rate).to(torch::kCPU, torch::kFloat32).contiguous();
  for (int h = 0; h < shape_.heads; ++h) {
    decay.series.push_back("head " + std::to_string(h));
    for (int k = 0; k < kOffsets; ++k) decay.ys.push_back(std::exp(-r[h].item<float>() * k));
  }
  view.curves.push_back(std::move(decay));
  ViewMatrix m{
      "mix", {"head", ""}, {"from head", ""}, {"weight", ""}, shape_.heads, shape_.heads, {}, {},
      {}};
  const auto mc = mix.to(torch::kCPU, torch::kFloat32).contiguous();
  m.values.assign(mc.data_ptr<float>(), mc.data_ptr<float>() + mc.numel());
  view.matrices.push_back(std::move(m));
  view.scalars.push_back({"mean_rate", "1/token", -1, r.mean().item<double>()});
  return view;
}

std::shared_ptr<AttentionModule> make_toy_attention(const AttentionSpec& spec) {
  return std::make_shared<ToyAttention>(spec);
}

const MechanismDescriptor& toy_mechanism() {
  static const MechanismDescriptor d = [] {
    MechanismDescriptor d{};
    d.name = "toy";
    d.description = "a test build's toy: uniform causal attention, gained and mixed per head";
    d.options_help = "";
    // v and out (D x D + D each), rate [H], mix [H, H].
    d.parameter_count = [](int64_t D, int64_t H, const nlohmann::json&) -> int64_t {
      return 2 * (D * D + D) + H + H * H;
    };
    return d;
  }();
  return d;
}

}  // namespace attn::toy
