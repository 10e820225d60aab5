#include "core/attention/rope/rope_attention.h"

#include "core/base/error.h"

namespace attn {

std::shared_ptr<AttentionModule> make_rope_attention(const AttentionSpec& spec) {
  return std::make_shared<RopeAttention>(spec);
}

torch::Tensor rope_rotate(const torch::Tensor& x, double base, int64_t first_position) {
  const int64_t L = x.size(-2), Dh = x.size(-1), half = Dh / 2;
  const auto opts = torch::TensorOptions().dtype(torch::kDouble).device(x.device());
  // Angles in double, then cast: positions in the thousands keep their precision.
  auto theta = torch::pow(base, -2.0 * torch::arange(half, opts) / double(Dh));  // [half]
  auto angle = torch::arange(first_position, first_position + L, opts).unsqueeze(1) * theta;
  auto cos = angle.cos().to(x.scalar_type()), sin = angle.sin().to(x.scalar_type());
  auto a = x.narrow(-1, 0, half), b = x.narrow(-1, half, half);
  return torch::cat({a * cos - b * sin, a * sin + b * cos}, -1);
}

RopeAttention::RopeAttention(const AttentionSpec& spec)
    : DotAttention(spec), options_(parse_rope_options(spec.options)) {
  if (head_dim_ % 2 != 0)
    throw Error(
        "model.attention \"rope\" rotates feature pairs, so the head width model.d_model / "
        "model.heads must be even, got " +
        std::to_string(spec.d_model) + " / " + std::to_string(spec.heads) + " = " +
        std::to_string(head_dim_));
}

void RopeAttention::encode_positions(torch::Tensor& q, torch::Tensor& k) const {
  q = rope_rotate(q, options_.base);
  k = rope_rotate(k, options_.base);
}

}  // namespace attn
