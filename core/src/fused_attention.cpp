// Dispatch between the fused CUDA kernels and the LibTorch reference paths.
#include "core/src/fused_attention.h"

namespace attn {

bool fused_kernels_available() { return false; }

torch::Tensor gaussian_kernel_map(const torch::Tensor& x, double sigma) {
  return gaussian_kernel_map_reference(x, sigma);
}

torch::Tensor neural_attention(const torch::Tensor& p, const torch::Tensor& r,
                               const torch::Tensor& w, const torch::Tensor& b,
                               const torch::Tensor& v, NeuralActivation act, double scale,
                               bool causal, torch::Tensor* weights) {
  return neural_attention_reference(p, r, w, b, v, act, scale, causal, 32, weights);
}

}  // namespace attn
