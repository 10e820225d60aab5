// Fused CPU kernels for the exotic attention scores (the CPU counterparts of gaussian_map.cu
// and neural.cu): plain loops the compiler vectorises (an AVX2 clone picked at load time where
// the CPU has it), nothing of size S x S x Dh x Dh (or n x n x hidden) in memory. Private to
// core (includes torch); fused_attention.cpp dispatches to them for CPU tensors.
#pragma once
#include <torch/torch.h>

namespace attn::cpu {

// True for the tensors these kernels take: on the CPU, float32 or float64.
bool accepts(const torch::Tensor& t);

// The Gaussian-MHSA map of gaussian_kernel_map_reference (fused_attention.h), differentiable:
// x [B, H, S, Dh] -> map[b,h,s,r] = sum_{d1,d2} exp(-(x[b,h,s,d1] - x[b,h,r,d2])^2 / (2 sigma^2)).
// The map is symmetric in (s, r): each pair is computed once. Extra memory O(S Dh) per thread.
// float32 uses a vectorisable exp accurate to ~2 ulp; float64 uses std::exp.
torch::Tensor gaussian_map(const torch::Tensor& x, double sigma);

}  // namespace attn::cpu
