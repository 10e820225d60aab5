#include "core/attention/rope/rope_attention.h"

#include "core/base/error.h"

namespace attn {

std::shared_ptr<AttentionModule> make_rope_attention(const AttentionSpec& spec) {
  return std::make_shared<RopeAttention>(spec);
}

namespace {

// cos and sin of p * theta_i for p = first .. first + L - 1, i < Dh/2, in x's dtype and device.
// The angles are computed in double: positions in the thousands keep their precision.
std::pair<torch::Tensor, torch::Tensor> rope_angles(int64_t L, int64_t Dh, double base,
                                                    int64_t first, const torch::Tensor& like) {
  const auto opts = torch::TensorOptions().dtype(torch::kDouble).device(like.device());
  auto theta = torch::pow(base, -2.0 * torch::arange(Dh / 2, opts) / double(Dh));
  auto angle = torch::arange(first, first + L, opts).unsqueeze(1) * theta;
  return {angle.cos().to(like.scalar_type()), angle.sin().to(like.scalar_type())};
}

torch::Tensor rotate_halves(const torch::Tensor& x, const torch::Tensor& cos,
                            const torch::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  auto a = x.narrow(-1, 0, half), b = x.narrow(-1, half, half);
  return torch::cat({a * cos - b * sin, a * sin + b * cos}, -1);
}

}  // namespace

torch::Tensor rope_rotate(const torch::Tensor& x, double base, int64_t first_position) {
  const auto [cos, sin] = rope_angles(x.size(-2), x.size(-1), base, first_position, x);
  return rotate_halves(x, cos, sin);
}

RopeAttention::RopeAttention(const AttentionSpec& spec)
    : DotAttention(spec), options_(parse_rope_options(spec.options)) {
  if (shape_.head_dim % 2 != 0)
    throw Error(
        "model.attention \"rope\" rotates feature pairs, so the head width model.d_model / "
        "model.heads must be even, got " +
        std::to_string(spec.d_model) + " / " + std::to_string(spec.heads) + " = " +
        std::to_string(shape_.head_dim));
}

void RopeAttention::encode_positions(torch::Tensor& q, torch::Tensor& k) const {
  const int64_t L = q.size(-2);
  if (!cos_.defined() || cos_.size(0) != L || cos_.device() != q.device() ||
      cos_.scalar_type() != q.scalar_type())
    std::tie(cos_, sin_) = rope_angles(L, q.size(-1), options_.base, 0, q);
  q = rotate_halves(q, cos_, sin_);
  k = rotate_halves(k, cos_, sin_);
}

}  // namespace attn
