// Torch autograd wrappers around the fused CUDA kernels (core/kernels/kernels.h). Compiled only in
// ATTN_WITH_CUDA builds; callers go through the dispatchers in fused_attention.h and
// windowed_attention() (ky_attention.h), which check the ranges documented here first.
// Every function takes CUDA tensors of one dtype (float32 or float64), contiguous or not, and is
// differentiable in each tensor argument (first-order gradients only).
#pragma once
#include <torch/torch.h>

#include "core/attention/fused_attention.h"

namespace attn::cuda {

bool device_present();
std::string device_name();  // of the current device; empty without one

// Windowed attention with slot bias: same contract as windowed_attention() without dropout and
// band weights. q, k, v: [B, H, L, D] with D <= 512; bias: [H, W].
torch::Tensor ky_window(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& bias, int window, int first_offset, bool masked_edges);
constexpr int64_t kKyMaxHeadDim = 512;

// Gaussian-MHSA map, same contract as gaussian_kernel_map_reference().
torch::Tensor gaussian_map(const torch::Tensor& x, double sigma);

// Neural attention core, same contract as neural_attention_reference() without weights.
// Hidden width and value width at most 128.
torch::Tensor neural(const torch::Tensor& p, const torch::Tensor& r, const torch::Tensor& w,
                     const torch::Tensor& b, const torch::Tensor& v, NeuralActivation act,
                     double scale, bool causal);
constexpr int64_t kNeuralMaxWidth = 128;

// Bytes the caching allocator has handed out on the current device: now, and the peak since the
// last reset_peak_memory().
int64_t memory_allocated();
int64_t peak_memory_allocated();
void reset_peak_memory();
// Hands the caching allocator's unused blocks back to the driver (after an out-of-memory).
void empty_cache();

}  // namespace attn::cuda
