// Multi-head softmax attention written out with plain loops in double, the independent reference
// for the dot-product family (test_attention.cpp, test_position.cpp):
//   out = W_o concat_h( sum_j softmax_j( rot(q_i, i) . rot(k_j, j) / sqrt(Dh) + b(h,i,j) ) v_j )
//         + b_o,
// q, k, v from the fused projection "qkv" (rows [q; k; v], heads contiguous), rot the identity
// unless a position rotation is given.
#pragma once
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <vector>

namespace attn::test {

using Rotation = std::function<std::vector<double>(std::vector<double>, int64_t position)>;
// An additive logit bias b(h, i, j) after the 1/sqrt(Dh) scale (ALiBi), zero when empty.
using LogitBias = std::function<double(int head, int64_t query, int64_t key)>;

inline std::vector<double> to_vector(const torch::Tensor& row) {
  std::vector<double> v(row.size(0));
  for (int64_t d = 0; d < row.size(0); ++d) v[d] = row[d].item<double>();
  return v;
}

inline torch::Tensor reference_attention(torch::nn::Module& module, const torch::Tensor& x,
                                         int heads, bool causal, const Rotation& rotate = {},
                                         const LogitBias& logit_bias = {}) {
  auto params = module.named_parameters();
  auto Wqkv = params["qkv.weight"], bqkv = params["qkv.bias"];
  auto Wo = params["out.weight"], bo = params["out.bias"];
  const int64_t B = x.size(0), L = x.size(1), D = x.size(2), Dh = D / heads;
  auto out = torch::zeros({B, L, D}, torch::kDouble);
  auto position = [&](std::vector<double> v, int64_t p) { return rotate ? rotate(v, p) : v; };
  for (int64_t b = 0; b < B; ++b) {
    auto project = [&](int64_t offset) {
      return x[b].matmul(Wqkv.slice(0, offset, offset + Dh).t()) +
             bqkv.slice(0, offset, offset + Dh);
    };
    auto mixed = torch::zeros({L, D}, torch::kDouble);
    for (int h = 0; h < heads; ++h) {
      auto q = project(h * Dh), k = project(D + h * Dh), v = project(2 * D + h * Dh);
      for (int64_t i = 0; i < L; ++i) {
        const auto qi = position(to_vector(q[i]), i);
        const int64_t last = causal ? i : L - 1;
        std::vector<double> s;
        double mx = -1e300;
        for (int64_t j = 0; j <= last; ++j) {
          const auto kj = position(to_vector(k[j]), j);
          double dot = 0;
          for (int64_t d = 0; d < Dh; ++d) dot += qi[d] * kj[d];
          s.push_back(dot / std::sqrt(double(Dh)) + (logit_bias ? logit_bias(h, i, j) : 0.0));
          mx = std::max(mx, s.back());
        }
        double z = 0;
        for (auto& e : s) z += (e = std::exp(e - mx));
        for (int64_t d = 0; d < Dh; ++d) {
          double acc = 0;
          for (int64_t j = 0; j <= last; ++j) acc += s[j] / z * v[j][d].item<double>();
          mixed[i][h * Dh + d] = acc;
        }
      }
    }
    out[b] = mixed.matmul(Wo.t()) + bo;
  }
  return out;
}

}  // namespace attn::test
