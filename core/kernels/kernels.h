// Fused CUDA kernels for the attention cores (ATTN_WITH_CUDA builds). No torch here: raw device
// pointers to contiguous row-major arrays, sizes, and the stream to launch on. Every function
// returns cudaSuccess or the launch error; the torch wrappers (core/attention/cuda_ops.cpp) check
// it. T is float or double. Shapes use B (batch), H (heads); "[B, H, L, D]" means contiguous.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace attn::kernels {

// ---- KY window (core/attention/ky/ky_attention.h)
// ------------------------------------------------------ Slot t (0..W-1) of query i holds key j = i
// - first_offset + t. logit = scale q_i.k_j + bias[h,t]. Out-of-range keys: masked_edges drops the
// slot; otherwise it is a zero key and value whose logit is bias[h,t] (the authors' zero padding).
struct KyWindowShape {
  int64_t B, H, L, D;
  int W, first_offset;
  bool masked_edges;
  double scale;
};
// q, k, v, out: [B, H, L, D]; bias: [H, W]; lse: [B, H, L] (log-sum-exp of the logits).
template <typename T>
cudaError_t ky_window_forward(const KyWindowShape& s, const T* q, const T* k, const T* v,
                              const T* bias, T* out, T* lse, cudaStream_t stream);
// delta: [B, H, L] = sum_d dout*out. Writes dq [B,H,L,D], and the band's probabilities and
// logit gradients p_band, ds_band [B, H, L, W] (dbias = ds_band summed over B and L).
template <typename T>
cudaError_t ky_window_backward_query(const KyWindowShape& s, const T* q, const T* k, const T* v,
                                     const T* bias, const T* lse, const T* dout, const T* delta,
                                     T* dq, T* p_band, T* ds_band, cudaStream_t stream);
// dk, dv: [B, H, L, D] from the band gradients (each key gathers its W queries).
template <typename T>
cudaError_t ky_window_backward_key(const KyWindowShape& s, const T* q, const T* dout,
                                   const T* p_band, const T* ds_band, T* dk, T* dv,
                                   cudaStream_t stream);

// ---- Gaussian-MHSA kernel map (core/attention/fused_attention.h)
// ------------------------------------- x: [B, H, S, D]; map: [B, H, S, S], map[s,r] = sum_{d1,d2}
// exp(-(x[s,d1]-x[r,d2])^2 / (2 sigma^2)).
template <typename T>
cudaError_t gaussian_map_forward(int64_t BH, int64_t S, int64_t D, double sigma, const T* x, T* map,
                                 cudaStream_t stream);
// gsym: [B, H, S, S] = dL/dmap + its transpose. dx[s,d] = sum_r gsym[s,r] sum_d2
// -(x[s,d]-x[r,d2])/sigma^2 exp(-(x[s,d]-x[r,d2])^2 / (2 sigma^2)).
template <typename T>
cudaError_t gaussian_map_backward(int64_t BH, int64_t S, int64_t D, double sigma, const T* x,
                                  const T* gsym, T* dx, cudaStream_t stream);

// ---- Neural Attention (core/attention/fused_attention.h)
// ---------------------------------------------
enum class Activation : int { relu = 0, gelu = 1, tanh = 2 };
struct NeuralShape {
  int64_t B, H, N, C, Dv;  // C: hidden width h
  Activation act;
  double scale;
  bool causal;
};
// p, r: [B, H, N, C]; w: [H, C]; b: [H]; v, out: [B, H, N, Dv]; lse: [B, H, N].
template <typename T>
cudaError_t neural_forward(const NeuralShape& s, const T* p, const T* r, const T* w, const T* b,
                           const T* v, T* out, T* lse, cudaStream_t stream);
// Recomputes the softmax weights; writes probs [B,H,N,N] and the score gradients
// ds = probs * (dout.v_j - delta_i) * scale [B,H,N,N] (zeros where masked).
template <typename T>
cudaError_t neural_backward_scores(const NeuralShape& s, const T* p, const T* r, const T* w,
                                   const T* b, const T* v, const T* lse, const T* dout,
                                   const T* delta, T* probs, T* ds, cudaStream_t stream);
// dp[i,c] = sum_j ds[i,j] w_c act'(p_ic + r_jc);  dr[j,c] = sum_i ds[i,j] w_c act'(p_ic + r_jc);
// dw[h,c] += sum_ij ds[i,j] act(p_ic + r_jc)  (dw must be zeroed by the caller).
template <typename T>
cudaError_t neural_backward_hidden(const NeuralShape& s, const T* p, const T* r, const T* w,
                                   const T* ds, T* dp, T* dr, T* dw, cudaStream_t stream);

}  // namespace attn::kernels
