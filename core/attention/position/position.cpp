#include "core/attention/position/position.h"

#include <cmath>

#include "core/attention/attention.h"
#include "core/base/error.h"

namespace attn {

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

std::vector<double> alibi_slopes(int heads) {
  auto power_of_two = [](int n) {
    std::vector<double> s;
    for (int h = 1; h <= n; ++h) s.push_back(std::pow(2.0, -8.0 * h / n));
    return s;
  };
  int n = 1;
  while (n * 2 <= heads) n *= 2;
  std::vector<double> slopes = power_of_two(n);
  if (n == heads) return slopes;
  const std::vector<double> finer = power_of_two(2 * n);
  for (size_t i = 0; static_cast<int>(slopes.size()) < heads; i += 2) slopes.push_back(finer[i]);
  return slopes;
}

torch::Tensor alibi_bias(int heads, int64_t length, bool causal, const torch::Tensor& like) {
  const auto opts = torch::TensorOptions().dtype(torch::kDouble).device(like.device());
  auto i = torch::arange(length, opts).unsqueeze(1), j = torch::arange(length, opts).unsqueeze(0);
  auto distance = causal ? (i - j) : (i - j).abs();  // [L, L]
  const auto s = alibi_slopes(heads);
  auto slopes = torch::tensor(s, opts).view({heads, 1, 1});
  return (-slopes * distance.unsqueeze(0)).to(like.scalar_type());
}

RelativePosition::RelativePosition(const AttentionSpec& spec)
    : kind_(spec.position), heads_(spec.heads), causal_(spec.causal), base_(spec.rope_base) {
  if (rope() && (spec.d_model / spec.heads) % 2 != 0)
    throw Error(
        "model.position \"rope\" rotates feature pairs, so the head width model.d_model / "
        "model.heads must be even, got " +
        std::to_string(spec.d_model) + " / " + std::to_string(spec.heads) + " = " +
        std::to_string(spec.d_model / spec.heads));
}

void RelativePosition::rotate(torch::Tensor& q, torch::Tensor& k) const {
  if (!rope()) return;
  const int64_t L = q.size(-2);
  if (!cos_.defined() || cos_.size(0) != L || cos_.device() != q.device() ||
      cos_.scalar_type() != q.scalar_type())
    std::tie(cos_, sin_) = rope_angles(L, q.size(-1), base_, 0, q);
  q = rotate_halves(q, cos_, sin_);
  k = rotate_halves(k, cos_, sin_);
}

namespace {
bool cached_for(const torch::Tensor& cached, const torch::Tensor& like) {
  return cached.defined() && cached.device() == like.device() &&
         cached.scalar_type() == like.scalar_type();
}
}  // namespace

torch::Tensor RelativePosition::bias(int64_t length, const torch::Tensor& like) const {
  if (!alibi()) return {};
  if (!cached_for(bias_, like) || bias_.size(-1) != length)
    bias_ = alibi_bias(heads_, length, causal_, like);
  return bias_;
}

torch::Tensor RelativePosition::slopes(const torch::Tensor& like) const {
  if (!alibi()) return {};
  if (!cached_for(slopes_, like))
    slopes_ = torch::tensor(alibi_slopes(heads_), torch::TensorOptions().dtype(torch::kDouble))
                  .to(like.options());
  return slopes_;
}

}  // namespace attn
