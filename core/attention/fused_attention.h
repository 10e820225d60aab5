// The attention cores that have a fused CUDA kernel (core/kernels/, ATTN_WITH_CUDA builds).
// Private to core (includes torch).
//
// Each core has two entry points:
//   <name>_reference  LibTorch ops only, any device and dtype; the CPU path, and the reference
//                     every kernel is tested against;
//   <name>            the dispatcher the mechanisms call: the fused kernel when the tensors are
//                     on a CUDA device and the build has kernels (and the arguments are in the
//                     kernel's range), else the reference.
// Both are differentiable in every tensor argument and compute the same function.
#pragma once
#include <torch/torch.h>

#include <string>

#include "core/attention/neural/neural_options.h"  // NeuralActivation

namespace attn {

// --- Gaussian-MHSA (seed 002, Algorithm 2; docs/design/MECHANISMS.md §3)
// --------------------------------- x: [B, H, S, Dh] (the in-projected tokens of each head).
// Returns the raw map [B, H, S, S]:
//   map[b,h,s,r] = sum_{d1, d2} exp(-(x[b,h,s,d1] - x[b,h,r,d2])^2 / (2 sigma^2)).
// The reference never builds the [B, H, S, S, Dh, Dh] tensor: it works in chunks so that the
// extra memory stays below max_chunk_elems elements (plus the [B, H, S, S] result).
torch::Tensor gaussian_kernel_map_reference(const torch::Tensor& x, double sigma,
                                            int64_t max_chunk_elems = int64_t(1) << 24);
torch::Tensor gaussian_kernel_map(const torch::Tensor& x, double sigma);

// --- Neural Attention (seed 003; docs/design/MECHANISMS.md §4)
// --------------------------------------------

// p: [B, H, n, h] = Q' U^T + b_h;  r: [B, H, n, h] = K' V^T;  w: [H, h];  b: [H];
// v: [B, H, n, Dv]. With score[b,h,i,j] = sum_c w[h,c] act(p[b,h,i,c] + r[b,h,j,c]) + b[h],
// returns softmax_j(score * scale) v  ([B, H, n, Dv]); causal masks keys j > i.
// If weights is given it receives the [B, H, n, n] softmax weights (probe display only).
// The reference works in blocks of query_chunk rows, so its extra memory is
// O(B H query_chunk n h), never O(B H n^2 h).
// Reference only: keep ([B, H, n, n], 0 or 1/(1-p): dropout on the weights, applied after
// `weights` is recorded) multiplies the softmax weights before they meet v; slopes ([H], ALiBi)
// add -slopes[h] (i - j) (|i - j| when not causal) to the scaled scores.
torch::Tensor neural_attention_reference(const torch::Tensor& p, const torch::Tensor& r,
                                         const torch::Tensor& w, const torch::Tensor& b,
                                         const torch::Tensor& v, NeuralActivation act, double scale,
                                         bool causal, int64_t query_chunk = 32,
                                         torch::Tensor* weights = nullptr,
                                         const torch::Tensor& keep = torch::Tensor(),
                                         const torch::Tensor& slopes = torch::Tensor());
// The dispatcher: CUDA kernel without keep, slopes or weights; the CPU kernel for the ReLU
// scorer (all three honoured); else the reference. The reference's query_chunk is 32 here.
torch::Tensor neural_attention(const torch::Tensor& p, const torch::Tensor& r,
                               const torch::Tensor& w, const torch::Tensor& b,
                               const torch::Tensor& v, NeuralActivation act, double scale,
                               bool causal, torch::Tensor* weights = nullptr,
                               const torch::Tensor& keep = torch::Tensor(),
                               const torch::Tensor& slopes = torch::Tensor());

// True when neural_attention() computes p's scores with the fused CPU kernel (cpu_kernels.h):
// fused kernels enabled, a CPU float32/float64 tensor and the ReLU scorer. The other scorers
// take neural_attention_reference on the CPU.
bool neural_cpu_kernel_applies(const torch::Tensor& p, NeuralActivation act);

// True when this build has the CUDA kernels and a CUDA device is present.
bool fused_kernels_available();
// Off: the dispatchers (and windowed_attention) use the reference path on every device, for
// comparisons and benchmarks. On by default. Process-wide.
void set_fused_kernels_enabled(bool enabled);
bool fused_kernels_enabled();
// Whether a fused CPU kernel (dot's packed softmax, neural's ReLU scorer, gaussian's map) ran
// since the last reset: the step benchmark's path label. Process-wide.
void note_fused_path();
bool fused_path_taken();
void reset_fused_path_taken();

// The GPU LibTorch computes on: its name, and the bytes the caching allocator holds there.
// Empty and 0 in builds without CUDA or without a GPU.
std::string cuda_device_name();
int64_t cuda_memory_allocated();
void release_cuda_cache();  // no-op without CUDA

}  // namespace attn
