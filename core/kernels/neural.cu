// Neural Attention, flash-style: score_ij = sum_c w_c act(p_ic + r_jc) + b, softmax, P V.
// Nothing of size N x N x C is ever stored. Layout of a block: 4 warps x 32 queries (one query
// per lane); the 4 warps split each key tile, so all lanes of a warp read the same key row
// (shared-memory broadcasts) and a block's partial softmax states are merged at the end.
// The backward pass recomputes the scores: one kernel writes the softmax weights and the score
// gradients (key-major, so the writes coalesce), a second reduces dp, dr and dw over them.
#include <type_traits>

#include "core/kernels/common.cuh"
#include "core/kernels/kernels.h"

namespace attn::kernels {
namespace {

using detail::imin;

using detail::exp_;
using detail::log_;
using detail::neg_inf;

constexpr int kSplits = 4;  // warps per block, each taking a quarter of every key tile
constexpr int kLanes = 32;
constexpr int kThreads = kSplits * kLanes;
template <typename T>
__host__ __device__ constexpr int key_tile() {
  return sizeof(T) == 4 ? 32 : 16;
}

template <int ACT, typename T>
__device__ __forceinline__ T act(T x) {
  if constexpr (ACT == 0) {
    return x > T(0) ? x : T(0);
  } else if constexpr (ACT == 1) {
    return T(0.5) * x * (T(1) + erf(x * T(0.70710678118654752440)));
  } else {
    return tanh(x);
  }
}
template <int ACT, typename T>
__device__ __forceinline__ T act_grad(T x) {
  if constexpr (ACT == 0) {
    return x > T(0) ? T(1) : T(0);
  } else if constexpr (ACT == 1) {
    const T cdf = T(0.5) * (T(1) + erf(x * T(0.70710678118654752440)));
    const T pdf = T(0.39894228040143267794) * exp_(T(-0.5) * x * x);
    return cdf + x * pdf;
  } else {
    const T t = tanh(x);
    return T(1) - t * t;
  }
}

// Shared tiles of one key block: r rows [BK][CM], v rows [BK][DM], and w [CM]; reused at the end
// for merging the warps' softmax states.
template <typename T, int CM, int DM>
struct Tiles {
  static constexpr int BK = key_tile<T>();
  T r[BK][CM];
  T v[BK][DM];
};
template <typename T, int CM, int DM>
union ForwardShared {
  Tiles<T, CM, DM> tiles;
  T merge[kLanes][DM];
};

template <typename T, int CM, int DM>
__device__ void load_key_tile(Tiles<T, CM, DM>& tl, const T* rb, const T* vb, int64_t j0, int64_t N,
                              int64_t C, int64_t Dv) {
  constexpr int BK = Tiles<T, CM, DM>::BK;
  for (int idx = threadIdx.x; idx < BK * CM; idx += blockDim.x) {
    const int jj = idx / CM, c = idx % CM;
    tl.r[jj][c] = (j0 + jj < N && c < C) ? rb[(j0 + jj) * C + c] : T(0);
  }
  for (int idx = threadIdx.x; idx < BK * DM; idx += blockDim.x) {
    const int jj = idx / DM, d = idx % DM;
    tl.v[jj][d] = (j0 + jj < N && d < Dv) ? vb[(j0 + jj) * Dv + d] : T(0);
  }
}

// The head's scorer weights w [H, C] into shared ws (zero-padded to CM), and query i's p row into
// registers (zero for inactive lanes and beyond C). Callers synchronise before and after.
template <typename T, int CM>
__device__ __forceinline__ void load_query(T (&pr)[CM], T* ws, const T* w, const T* p, int64_t h,
                                           int64_t bh, int64_t i, bool active, int64_t N,
                                           int64_t C) {
  for (int c = threadIdx.x; c < CM; c += blockDim.x) ws[c] = c < C ? w[h * C + c] : T(0);
#pragma unroll
  for (int c = 0; c < CM; ++c) pr[c] = (active && c < C) ? p[(bh * N + i) * C + c] : T(0);
}

template <int ACT, typename T, int CM>
__device__ __forceinline__ T score(const T (&pr)[CM], const T* rrow, const T* ws, T bias) {
  // Four partial sums: a single accumulator would chain CM dependent FMAs per score.
  T part[4] = {bias, T(0), T(0), T(0)};
#pragma unroll
  for (int c = 0; c < CM; ++c) part[c % 4] += ws[c] * act<ACT>(pr[c] + rrow[c]);
  return (part[0] + part[1]) + (part[2] + part[3]);
}

template <typename T, int CM, int DM, int ACT>
__global__ void __launch_bounds__(kThreads)
    neural_forward_kernel(NeuralShape s, const T* __restrict__ p, const T* __restrict__ r,
                          const T* __restrict__ w, const T* __restrict__ b, const T* __restrict__ v,
                          T* __restrict__ out, T* __restrict__ lse) {
  constexpr int BK = key_tile<T>();
  __shared__ ForwardShared<T, CM, DM> shared;
  Tiles<T, CM, DM>& tl = shared.tiles;
  __shared__ T ws[CM];
  __shared__ T merge_m[kLanes], merge_l[kLanes];
  const int lane = threadIdx.x % kLanes, split = threadIdx.x / kLanes;
  const int64_t N = s.N, C = s.C, Dv = s.Dv;
  const T scale = static_cast<T>(s.scale);
  for (int64_t bh = blockIdx.y; bh < s.B * s.H; bh += gridDim.y) {
    const int64_t h = bh % s.H;
    const int64_t i = int64_t(blockIdx.x) * kLanes + lane;
    const bool active = i < N;
    __syncthreads();
    T pr[CM], o[DM];
    load_query(pr, ws, w, p, h, bh, i, active, N, C);
#pragma unroll
    for (int d = 0; d < DM; ++d) o[d] = T(0);
    const T bias = b[h];
    T m = neg_inf<T>(), l = T(0);
    const int64_t key_end = s.causal ? imin(N, (int64_t(blockIdx.x) + 1) * kLanes) : N;
    for (int64_t j0 = 0; j0 < key_end; j0 += BK) {
      __syncthreads();
      load_key_tile(tl, r + bh * N * C, v + bh * N * Dv, j0, N, C, Dv);
      __syncthreads();
      for (int jj = split; jj < BK; jj += kSplits) {
        const int64_t j = j0 + jj;
        if (j >= N || (s.causal && j > i) || !active) continue;
        const T logit = score<ACT>(pr, tl.r[jj], ws, bias) * scale;
        if (logit > m) {
          const T c = exp_(m - logit);
          l *= c;
#pragma unroll
          for (int d = 0; d < DM; ++d) o[d] *= c;
          m = logit;
        }
        const T pe = exp_(logit - m);
        l += pe;
#pragma unroll
        for (int d = 0; d < DM; ++d) o[d] += pe * tl.v[jj][d];
      }
    }
    // Merge the splits into warp 0, one warp at a time through the (now free) tile memory.
    T(*merge_o)[DM] = shared.merge;
    for (int from = 1; from < kSplits; ++from) {
      __syncthreads();
      if (split == from) {
        merge_m[lane] = m;
        merge_l[lane] = l;
#pragma unroll
        for (int d = 0; d < DM; ++d) merge_o[lane][d] = o[d];
      }
      __syncthreads();
      if (split == 0) {
        const T m2 = merge_m[lane], l2 = merge_l[lane];
        const T mn = m > m2 ? m : m2;
        if (mn != neg_inf<T>()) {
          const T c1 = exp_(m - mn), c2 = exp_(m2 - mn);
          l = l * c1 + l2 * c2;
#pragma unroll
          for (int d = 0; d < DM; ++d) o[d] = o[d] * c1 + merge_o[lane][d] * c2;
          m = mn;
        }
      }
    }
    if (split == 0 && active) {
      const T inv = T(1) / l;
#pragma unroll
      for (int d = 0; d < DM; ++d)
        if (d < Dv) out[(bh * N + i) * Dv + d] = o[d] * inv;
      lse[bh * N + i] = m + log_(l);
    }
  }
}

template <typename T, int CM, int DM, int ACT>
__global__ void __launch_bounds__(kThreads)
    neural_scores_kernel(NeuralShape s, const T* __restrict__ p, const T* __restrict__ r,
                         const T* __restrict__ w, const T* __restrict__ b, const T* __restrict__ v,
                         const T* __restrict__ lse, const T* __restrict__ dout,
                         const T* __restrict__ delta, T* __restrict__ probs_t,
                         T* __restrict__ ds_t) {
  constexpr int BK = key_tile<T>();
  __shared__ Tiles<T, CM, DM> tl;
  __shared__ T ws[CM];
  const int lane = threadIdx.x % kLanes, split = threadIdx.x / kLanes;
  const int64_t N = s.N, C = s.C, Dv = s.Dv;
  const T scale = static_cast<T>(s.scale);
  for (int64_t bh = blockIdx.y; bh < s.B * s.H; bh += gridDim.y) {
    const int64_t h = bh % s.H;
    const int64_t i = int64_t(blockIdx.x) * kLanes + lane;
    const bool active = i < N;
    __syncthreads();
    T pr[CM], g[DM];
    load_query(pr, ws, w, p, h, bh, i, active, N, C);
#pragma unroll
    for (int d = 0; d < DM; ++d) g[d] = (active && d < Dv) ? dout[(bh * N + i) * Dv + d] : T(0);
    const T bias = b[h];
    const T row_lse = active ? lse[bh * N + i] : T(0);
    const T row_delta = active ? delta[bh * N + i] : T(0);
    for (int64_t j0 = 0; j0 < N; j0 += BK) {
      __syncthreads();
      load_key_tile(tl, r + bh * N * C, v + bh * N * Dv, j0, N, C, Dv);
      __syncthreads();
      for (int jj = split; jj < BK; jj += kSplits) {
        const int64_t j = j0 + jj;
        if (j >= N || !active) continue;
        T pij = T(0), dsij = T(0);
        if (!(s.causal && j > i)) {
          pij = exp_(score<ACT>(pr, tl.r[jj], ws, bias) * scale - row_lse);
          T dpp[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
          for (int d = 0; d < DM; ++d) dpp[d % 4] += g[d] * tl.v[jj][d];
          const T dp = (dpp[0] + dpp[1]) + (dpp[2] + dpp[3]);
          dsij = pij * (dp - row_delta) * scale;
        }
        probs_t[(bh * N + j) * N + i] = pij;  // key-major: the warp's lanes write one row
        ds_t[(bh * N + j) * N + i] = dsij;
      }
    }
  }
}

// Hidden-channel gradients for one chunk of 32 channels. MODE 0: rows a are queries (x = p,
// y = r, gradient dp, and dw); MODE 1: rows a are keys (x = r, y = p, gradient dr).
// ds(a, b) is read from the key-major ds_t: MODE 0 reads ds_t[b][a], MODE 1 ds_t[a][b].
constexpr int kHiddenChunk = 32;
constexpr int kHiddenTile = 32;

template <typename T, int ACT, int MODE>
__global__ void __launch_bounds__(kThreads)
    neural_hidden_kernel(NeuralShape s, const T* __restrict__ xs, const T* __restrict__ ys,
                         const T* __restrict__ w, const T* __restrict__ ds_t, T* __restrict__ dx,
                         T* __restrict__ dw) {
  constexpr int HC = kHiddenChunk, BT = kHiddenTile;
  // The tiles and the final reduction never live at the same time: one buffer holds both.
  __shared__ union {
    struct {
      T y[BT][HC];
      T ds[BT][kLanes + 1];  // [b][a]
    } tiles;
    T reduce[kSplits][kLanes][HC + 1];
  } shared;
  auto& y_tile = shared.tiles.y;
  auto& ds_tile = shared.tiles.ds;
  auto& reduce = shared.reduce;
  const int lane = threadIdx.x % kLanes, split = threadIdx.x / kLanes;
  const int64_t N = s.N, C = s.C;
  const int64_t c0 = int64_t(blockIdx.z) * HC;
  for (int64_t bh = blockIdx.y; bh < s.B * s.H; bh += gridDim.y) {
    const int64_t h = bh % s.H;
    const int64_t a0 = int64_t(blockIdx.x) * kLanes, a = a0 + lane;
    const bool active = a < N;
    T x[HC], wc[HC], gx[HC], gw[HC];
#pragma unroll
    for (int c = 0; c < HC; ++c) {
      const bool ok = active && c0 + c < C;
      x[c] = ok ? xs[(bh * N + a) * C + c0 + c] : T(0);
      wc[c] = (c0 + c < C) ? w[h * C + c0 + c] : T(0);
      gx[c] = gw[c] = T(0);
    }
    // Causal: query i meets keys j <= i, key j meets queries i >= j.
    int64_t b_begin = 0, b_end = N;
    if (s.causal) {
      if (MODE == 0)
        b_end = imin(N, a0 + kLanes);
      else
        b_begin = a0 - a0 % BT;
    }
    for (int64_t b0 = b_begin; b0 < b_end; b0 += BT) {
      __syncthreads();
      for (int idx = threadIdx.x; idx < BT * HC; idx += blockDim.x) {
        const int bb = idx / HC, c = idx % HC;
        y_tile[bb][c] = (b0 + bb < N && c0 + c < C) ? ys[(bh * N + b0 + bb) * C + c0 + c] : T(0);
      }
      for (int idx = threadIdx.x; idx < BT * kLanes; idx += blockDim.x) {
        const int outer = idx / kLanes, inner = idx % kLanes;
        if (MODE == 0) {  // rows b of ds_t, columns a: coalesced along a
          const int64_t bb = b0 + outer, aa = a0 + inner;
          ds_tile[outer][inner] = (bb < N && aa < N) ? ds_t[(bh * N + bb) * N + aa] : T(0);
        } else {  // rows a of ds_t, columns b: coalesced along b
          const int64_t aa = a0 + outer, bb = b0 + inner;
          ds_tile[inner][outer] = (bb < N && aa < N) ? ds_t[(bh * N + aa) * N + bb] : T(0);
        }
      }
      __syncthreads();
      for (int bb = split; bb < BT; bb += kSplits) {
        const T d = ds_tile[bb][lane];
        if (d == T(0)) continue;  // masked or vanishing weight: nothing to add
#pragma unroll
        for (int c = 0; c < HC; ++c) {
          const T z = x[c] + y_tile[bb][c];
          gx[c] += d * act_grad<ACT>(z);
          if (MODE == 0) gw[c] += d * act<ACT>(z);
        }
      }
    }
    // Sum the splits (and, for dw, the rows) through shared memory.
    __syncthreads();
#pragma unroll
    for (int c = 0; c < HC; ++c) reduce[split][lane][c] = gx[c] * wc[c];
    __syncthreads();
    if (split == 0 && active) {
      for (int c = 0; c < HC && c0 + c < C; ++c) {
        T sum = T(0);
        for (int k = 0; k < kSplits; ++k) sum += reduce[k][lane][c];
        dx[(bh * N + a) * C + c0 + c] = sum;
      }
    }
    if (MODE == 0) {
      __syncthreads();
#pragma unroll
      for (int c = 0; c < HC; ++c) reduce[split][lane][c] = gw[c];
      __syncthreads();
      if (threadIdx.x < HC && c0 + threadIdx.x < C) {
        T sum = T(0);
        for (int k = 0; k < kSplits; ++k)
          for (int l2 = 0; l2 < kLanes; ++l2) sum += reduce[k][l2][threadIdx.x];
        atomicAdd(&dw[h * C + c0 + threadIdx.x], sum);
      }
    }
  }
}

template <typename F>
cudaError_t with_sizes(const NeuralShape& s, F&& launch) {
  using std::integral_constant;
  if (s.B <= 0 || s.H <= 0 || s.N <= 0 || s.C <= 0 || s.Dv <= 0 || s.C > 128 || s.Dv > 128)
    return cudaErrorInvalidValue;
  auto with_dv = [&](auto cm) {
    if (s.Dv <= 64) return launch(cm, integral_constant<int, 64>{});
    return launch(cm, integral_constant<int, 128>{});
  };
  if (s.C <= 32) return with_dv(integral_constant<int, 32>{});
  if (s.C <= 64) return with_dv(integral_constant<int, 64>{});
  return with_dv(integral_constant<int, 128>{});
}

template <typename F>
cudaError_t with_activation(Activation a, F&& launch) {
  using std::integral_constant;
  switch (a) {
    case Activation::relu:
      return launch(integral_constant<int, 0>{});
    case Activation::gelu:
      return launch(integral_constant<int, 1>{});
    case Activation::tanh:
      return launch(integral_constant<int, 2>{});
  }
  return cudaErrorInvalidValue;
}

dim3 grid_for(const NeuralShape& s, int64_t z = 1) {
  return dim3(detail::blocks_for(s.N, kLanes),
              static_cast<unsigned>(imin(s.B * s.H, detail::kMaxGridYZ)), static_cast<unsigned>(z));
}

}  // namespace

template <typename T>
cudaError_t neural_forward(const NeuralShape& s, const T* p, const T* r, const T* w, const T* b,
                           const T* v, T* out, T* lse, cudaStream_t stream) {
  return with_sizes(s, [&](auto cm, auto dm) {
    return with_activation(s.act, [&](auto ac) {
      constexpr int CM = decltype(cm)::value, DM = decltype(dm)::value, A = decltype(ac)::value;
      neural_forward_kernel<T, CM, DM, A>
          <<<grid_for(s), kThreads, 0, stream>>>(s, p, r, w, b, v, out, lse);
      return cudaGetLastError();
    });
  });
}

template <typename T>
cudaError_t neural_backward_scores(const NeuralShape& s, const T* p, const T* r, const T* w,
                                   const T* b, const T* v, const T* lse, const T* dout,
                                   const T* delta, T* probs_t, T* ds_t, cudaStream_t stream) {
  return with_sizes(s, [&](auto cm, auto dm) {
    return with_activation(s.act, [&](auto ac) {
      constexpr int CM = decltype(cm)::value, DM = decltype(dm)::value, A = decltype(ac)::value;
      neural_scores_kernel<T, CM, DM, A>
          <<<grid_for(s), kThreads, 0, stream>>>(s, p, r, w, b, v, lse, dout, delta, probs_t, ds_t);
      return cudaGetLastError();
    });
  });
}

template <typename T>
cudaError_t neural_backward_hidden(const NeuralShape& s, const T* p, const T* r, const T* w,
                                   const T* ds_t, T* dp, T* dr, T* dw, cudaStream_t stream) {
  if (s.B <= 0 || s.H <= 0 || s.N <= 0 || s.C <= 0) return cudaErrorInvalidValue;
  const int64_t chunks = (s.C + kHiddenChunk - 1) / kHiddenChunk;
  return with_activation(s.act, [&](auto ac) {
    constexpr int A = decltype(ac)::value;
    neural_hidden_kernel<T, A, 0>
        <<<grid_for(s, chunks), kThreads, 0, stream>>>(s, p, r, w, ds_t, dp, dw);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    neural_hidden_kernel<T, A, 1>
        <<<grid_for(s, chunks), kThreads, 0, stream>>>(s, r, p, w, ds_t, dr, nullptr);
    return cudaGetLastError();
  });
}

#define ATTN_NEURAL_INSTANTIATE(T)                                                                 \
  template cudaError_t neural_forward<T>(const NeuralShape&, const T*, const T*, const T*,         \
                                         const T*, const T*, T*, T*, cudaStream_t);                \
  template cudaError_t neural_backward_scores<T>(const NeuralShape&, const T*, const T*, const T*, \
                                                 const T*, const T*, const T*, const T*, const T*, \
                                                 T*, T*, cudaStream_t);                            \
  template cudaError_t neural_backward_hidden<T>(const NeuralShape&, const T*, const T*, const T*, \
                                                 const T*, T*, T*, T*, cudaStream_t);
ATTN_NEURAL_INSTANTIATE(float)
ATTN_NEURAL_INSTANTIATE(double)
#undef ATTN_NEURAL_INSTANTIATE

}  // namespace attn::kernels
