// Fused CPU kernels: the exotic attention scores (the CPU counterparts of gaussian_map.cu and
// neural.cu), with nothing of size S x S x Dh x Dh (or n x n x hidden) in memory, and dot's
// softmax attention on the packed projection. Loops the compiler vectorises, with an AVX2+FMA
// clone picked at load time where the CPU has it. Private to core (includes torch);
// fused_attention.cpp and dot_attention.cpp dispatch to them for CPU tensors.
#pragma once
#include <torch/torch.h>

// The kernels' inner loops are built twice, AVX2+FMA and baseline, and the loader picks one through
// an ifunc resolver. ThreadSanitizer builds take the baseline only: the resolver runs while the
// dynamic loader relocates the binary, before TSan's runtime exists, and crashes there.
#if defined(__SANITIZE_THREAD__)
#define ATTN_CPU_CLONES
#else
// x86-64-v3: AVX2 with FMA (which "avx2" alone does not enable), as every AVX2 CPU since
// Haswell and Zen 1 has.
#define ATTN_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#endif

namespace attn::cpu {

// True for the tensors these kernels take: on the CPU, float32 or float64.
bool accepts(const torch::Tensor& t);

// The Gaussian-MHSA map of gaussian_kernel_map_reference (fused_attention.h), differentiable:
// x [B, H, S, Dh] -> map[b,h,s,r] = sum_{d1,d2} exp(-(x[b,h,s,d1] - x[b,h,r,d2])^2 / (2 sigma^2)).
// The map is symmetric in (s, r): each pair is computed once. Extra memory O(S Dh) per thread.
// float32 uses a vectorisable exp accurate to ~2 ulp; float64 uses std::exp.
torch::Tensor gaussian_map(const torch::Tensor& x, double sigma);

}  // namespace attn::cpu

namespace attn::cpu {

// Neural Attention's scores with the ReLU scorer (neural.cu's algorithm on the CPU),
// differentiable in p, r and w:
//   score[b,h,i,j] = sum_c w[h,c] relu(p[b,h,i,c] + r[b,h,j,c])   (0 for j > i when causal).
// p, r: [B, H, n, hidden]; w: [H, hidden], which may be an expanded view of one scorer shared by
// every head (its gradient then sums over the heads through autograd). Memory: the [B, H, n, n]
// scores (as dot's attention matrix) plus O(n hidden) per thread, never [n, n, hidden].
torch::Tensor neural_relu_scores(const torch::Tensor& p, const torch::Tensor& r,
                                 const torch::Tensor& w, bool causal);

}  // namespace attn::cpu

namespace attn::cpu {

// Dot's attention core from the packed projection, differentiable in qkv:
// qkv [B, L, 3 * H * Dh] as the qkv linear layer emits it (q | k | v, heads within each third);
// returns y [B, L, H * Dh] with y[b,i,h] = sum_j softmax_j(q_i . k_j / sqrt(Dh)) v_j, keys j <= i
// when causal. No logit bias. keep (if defined, [B, H, L, L] of 0 or 1/(1-p): dropout drawn by
// the caller) multiplies the weights before they meet v, as softmax_attention's dropout does.
// Keeps the [B, H, L, L] weights for the backward (as LibTorch's softmax does) and nothing
// else of size L x L.
torch::Tensor packed_softmax_attention(const torch::Tensor& qkv, int64_t heads, bool causal,
                                       const torch::Tensor& keep = torch::Tensor());

}  // namespace attn::cpu
