// Windowed attention with a per-head slot bias (KY), forward and backward.
// A group of G lanes owns one query (or one key in the key pass) and holds its row in registers.
// Neighbouring queries share their window's keys, so the re-reads hit L1/L2 and device memory sees
// each row about once.
#include <type_traits>

#include "core/kernels/common.cuh"
#include "core/kernels/kernels.h"

namespace attn::kernels {
namespace {

using detail::exp_;
using detail::log_;
using detail::neg_inf;

constexpr int kThreads = 256;

template <int G>
__device__ __forceinline__ unsigned group_mask() {
  if constexpr (G == 32) {
    return 0xffffffffu;
  } else {
    const unsigned lane = threadIdx.x % 32;
    return ((1u << G) - 1u) << (lane / G * G);
  }
}

template <int G, typename T>
__device__ __forceinline__ T group_sum_masked(T v, unsigned mask) {
#pragma unroll
  for (int o = G / 2; o > 0; o /= 2) v += __shfl_xor_sync(mask, v, o);
  return v;
}

// Rows are read VEC elements at a time (16-byte loads when D allows): lane g of a group holds the
// chunks g + G*e (e < E) of a row, elements chunk*VEC .. chunk*VEC + VEC-1.
template <typename T, int VEC>
struct Chunk {
  // float x4 -> float4, double x2 -> double2, one element -> T itself.
  static_assert(VEC == 1 || (std::is_same_v<T, float> && VEC == 4) ||
                    (std::is_same_v<T, double> && VEC == 2),
                "16-byte chunks: float x4 or double x2");
  using type = std::conditional_t<VEC == 1, T, std::conditional_t<VEC == 4, float4, double2>>;
};

template <typename T, int VEC>
__device__ __forceinline__ void load_chunk(const T* p, T (&out)[VEC]) {
  union {
    typename Chunk<T, VEC>::type v;
    T a[VEC];
  } u;
  u.v = *reinterpret_cast<const typename Chunk<T, VEC>::type*>(p);
#pragma unroll
  for (int x = 0; x < VEC; ++x) out[x] = u.a[x];
}

template <typename T, int VEC>
__device__ __forceinline__ void store_chunk(T* p, const T (&in)[VEC]) {
  union {
    typename Chunk<T, VEC>::type v;
    T a[VEC];
  } u;
#pragma unroll
  for (int x = 0; x < VEC; ++x) u.a[x] = in[x];
  *reinterpret_cast<typename Chunk<T, VEC>::type*>(p) = u.v;
}

// f(e, x) for each chunk e of the lane's in a memory row of D values (chunk e starts at
// (lane + G e) VEC; those past D are skipped), x its VEC values.
template <typename T, int G, int E, int VEC, typename F>
__device__ __forceinline__ void for_lane_chunks(const T* row, int lane, int64_t D, F f) {
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int64_t d0 = int64_t(lane + G * e) * VEC;
    if (d0 < D) {
      T x[VEC];
      load_chunk<T, VEC>(row + d0, x);
      f(e, x);
    }
  }
}

// dot of the lane's chunks of a register row with a memory row
template <typename T, int G, int E, int VEC>
__device__ __forceinline__ T lane_dot(const T (&reg)[E][VEC], const T* row, int lane, int64_t D) {
  T acc = T(0);
  for_lane_chunks<T, G, E, VEC>(row, lane, D, [&](int e, const T(&x)[VEC]) {
#pragma unroll
    for (int u = 0; u < VEC; ++u) acc += reg[e][u] * x[u];
  });
  return acc;
}

// reg += a * row (the lane's chunks)
template <typename T, int G, int E, int VEC>
__device__ __forceinline__ void lane_axpy(T (&reg)[E][VEC], T a, const T* row, int lane,
                                          int64_t D) {
  for_lane_chunks<T, G, E, VEC>(row, lane, D, [&](int e, const T(&x)[VEC]) {
#pragma unroll
    for (int u = 0; u < VEC; ++u) reg[e][u] += a * x[u];
  });
}

template <typename T, int G, int E, int VEC>
__device__ __forceinline__ void lane_load(T (&reg)[E][VEC], const T* row, T scale, int lane,
                                          int64_t D) {
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int64_t d0 = int64_t(lane + G * e) * VEC;
    T x[VEC];
    if (d0 < D) {
      load_chunk<T, VEC>(row + d0, x);
    } else {
#pragma unroll
      for (int u = 0; u < VEC; ++u) x[u] = T(0);
    }
#pragma unroll
    for (int u = 0; u < VEC; ++u) reg[e][u] = x[u] * scale;
  }
}

template <typename T, int G, int E, int VEC>
__device__ __forceinline__ void lane_store(T* row, const T (&reg)[E][VEC], T scale, int lane,
                                           int64_t D) {
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const int64_t d0 = int64_t(lane + G * e) * VEC;
    if (d0 < D) {
      T x[VEC];
#pragma unroll
      for (int u = 0; u < VEC; ++u) x[u] = reg[e][u] * scale;
      store_chunk<T, VEC>(row + d0, x);
    }
  }
}

template <typename T, int G, int E, int VEC>
__global__ void __launch_bounds__(kThreads)
    ky_forward_kernel(KyWindowShape s, const T* __restrict__ q, const T* __restrict__ k,
                      const T* __restrict__ v, const T* __restrict__ bias, T* __restrict__ out,
                      T* __restrict__ lse) {
  const int64_t total = s.B * s.H * s.L;
  int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  const bool active = row < total;
  if (!active) row = total - 1;  // idle groups compute a copy and write nothing
  const int lane = threadIdx.x % G;
  const unsigned mask = group_mask<G>();
  const int64_t L = s.L, D = s.D, i = row % L, bh = row / L;
  const int h = static_cast<int>(bh % s.H);
  const T* kb = k + bh * L * D;
  const T* vb = v + bh * L * D;
  const T* bias_h = bias + int64_t(h) * s.W;

  T qr[E][VEC], o[E][VEC];
  lane_load<T, G, E, VEC>(qr, q + row * D, static_cast<T>(s.scale), lane, D);
#pragma unroll
  for (int e = 0; e < E; ++e)
#pragma unroll
    for (int u = 0; u < VEC; ++u) o[e][u] = T(0);
  T m = neg_inf<T>(), l = T(0);
  for (int t = 0; t < s.W; ++t) {
    const int64_t j = i - s.first_offset + t;
    const bool in = j >= 0 && j < L;
    if (!in && s.masked_edges) continue;  // uniform over the group
    const T dot = in ? lane_dot<T, G, E, VEC>(qr, kb + j * D, lane, D) : T(0);
    const T logit = group_sum_masked<G>(dot, mask) + bias_h[t];
    if (logit > m) {
      const T c = exp_(m - logit);
      l *= c;
#pragma unroll
      for (int e = 0; e < E; ++e)
#pragma unroll
        for (int u = 0; u < VEC; ++u) o[e][u] *= c;
      m = logit;
    }
    const T pe = exp_(logit - m);
    l += pe;
    if (in) lane_axpy<T, G, E, VEC>(o, pe, vb + j * D, lane, D);
  }
  if (!active) return;
  lane_store<T, G, E, VEC>(out + row * D, o, T(1) / l, lane, D);
  if (lane == 0) lse[row] = m + log_(l);
}

template <typename T, int G, int E, int VEC>
__global__ void __launch_bounds__(kThreads)
    ky_backward_query_kernel(KyWindowShape s, const T* __restrict__ q, const T* __restrict__ k,
                             const T* __restrict__ v, const T* __restrict__ bias,
                             const T* __restrict__ lse, const T* __restrict__ dout,
                             const T* __restrict__ delta, T* __restrict__ dq,
                             T* __restrict__ p_band, T* __restrict__ ds_band) {
  const int64_t total = s.B * s.H * s.L;
  int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  const bool active = row < total;
  if (!active) row = total - 1;
  const int lane = threadIdx.x % G;
  const unsigned mask = group_mask<G>();
  const int64_t L = s.L, D = s.D, i = row % L, bh = row / L;
  const int h = static_cast<int>(bh % s.H);
  const T scale = static_cast<T>(s.scale);
  const T* kb = k + bh * L * D;
  const T* vb = v + bh * L * D;
  const T* bias_h = bias + int64_t(h) * s.W;
  const T row_lse = lse[row], row_delta = delta[row];

  T qr[E][VEC], g[E][VEC], acc[E][VEC];
  lane_load<T, G, E, VEC>(qr, q + row * D, scale, lane, D);
  lane_load<T, G, E, VEC>(g, dout + row * D, T(1), lane, D);
#pragma unroll
  for (int e = 0; e < E; ++e)
#pragma unroll
    for (int u = 0; u < VEC; ++u) acc[e][u] = T(0);
  for (int t = 0; t < s.W; ++t) {
    const int64_t j = i - s.first_offset + t;
    const bool in = j >= 0 && j < L;
    T p = T(0), ds = T(0);
    if (in || !s.masked_edges) {
      T dot = T(0), dp = T(0);
      if (in) {
        dot = lane_dot<T, G, E, VEC>(qr, kb + j * D, lane, D);
        dp = lane_dot<T, G, E, VEC>(g, vb + j * D, lane, D);
      }
      dot = group_sum_masked<G>(dot, mask);
      dp = group_sum_masked<G>(dp, mask);
      p = exp_(dot + bias_h[t] - row_lse);
      ds = p * (dp - row_delta);
      if (in) lane_axpy<T, G, E, VEC>(acc, ds, kb + j * D, lane, D);
    }
    if (active && lane == 0) {
      p_band[row * s.W + t] = p;
      ds_band[row * s.W + t] = ds;
    }
  }
  if (!active) return;
  lane_store<T, G, E, VEC>(dq + row * D, acc, scale, lane, D);
}

// One group per key: gathers the W queries whose window holds it. No reductions across lanes.
template <typename T, int G, int E, int VEC>
__global__ void __launch_bounds__(kThreads)
    ky_backward_key_kernel(KyWindowShape s, const T* __restrict__ q, const T* __restrict__ dout,
                           const T* __restrict__ p_band, const T* __restrict__ ds_band,
                           T* __restrict__ dk, T* __restrict__ dv) {
  const int64_t total = s.B * s.H * s.L;
  const int64_t row = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  if (row >= total) return;
  const int lane = threadIdx.x % G;
  const int64_t L = s.L, D = s.D, j = row % L, bh = row / L;
  T ak[E][VEC], av[E][VEC];
#pragma unroll
  for (int e = 0; e < E; ++e)
#pragma unroll
    for (int u = 0; u < VEC; ++u) ak[e][u] = av[e][u] = T(0);
  for (int t = 0; t < s.W; ++t) {
    const int64_t i = j + s.first_offset - t;
    if (i < 0 || i >= L) continue;
    const int64_t qrow = bh * L + i;
    lane_axpy<T, G, E, VEC>(ak, ds_band[qrow * s.W + t], q + qrow * D, lane, D);
    lane_axpy<T, G, E, VEC>(av, p_band[qrow * s.W + t], dout + qrow * D, lane, D);
  }
  lane_store<T, G, E, VEC>(dk + row * D, ak, static_cast<T>(s.scale), lane, D);
  lane_store<T, G, E, VEC>(dv + row * D, av, T(1), lane, D);
}

// Picks the chunk width VEC (16 bytes when D allows), lanes per row G (a power of two) and
// chunks per lane E, so that a group covers a row: G * E * VEC >= D.
template <typename T, typename F>
cudaError_t with_group_shape(int64_t D, F&& launch) {
  using std::integral_constant;
  if (D <= 0 || D > 512) return cudaErrorInvalidValue;
  constexpr int kWide = 16 / sizeof(T);
  auto pick = [&](auto vec) {
    constexpr int VEC = decltype(vec)::value;
    const int64_t chunks = (D + VEC - 1) / VEC;
    if (chunks <= 4) return launch(integral_constant<int, 2>{}, integral_constant<int, 2>{}, vec);
    if (chunks <= 8) return launch(integral_constant<int, 4>{}, integral_constant<int, 2>{}, vec);
    if (chunks <= 16) return launch(integral_constant<int, 8>{}, integral_constant<int, 2>{}, vec);
    if (chunks <= 32) return launch(integral_constant<int, 16>{}, integral_constant<int, 2>{}, vec);
    if (chunks <= 64) return launch(integral_constant<int, 32>{}, integral_constant<int, 2>{}, vec);
    if (chunks <= 128)
      return launch(integral_constant<int, 32>{}, integral_constant<int, 4>{}, vec);
    if (chunks <= 256)
      return launch(integral_constant<int, 32>{}, integral_constant<int, 8>{}, vec);
    return launch(integral_constant<int, 32>{}, integral_constant<int, 16>{}, vec);
  };
  if (D % kWide == 0) return pick(integral_constant<int, kWide>{});
  return pick(integral_constant<int, 1>{});
}

bool valid(const KyWindowShape& s) {
  return s.B > 0 && s.H > 0 && s.L > 0 && s.W >= 1 && s.first_offset >= 0 && s.first_offset < s.W;
}

}  // namespace

template <typename T>
cudaError_t ky_window_forward(const KyWindowShape& s, const T* q, const T* k, const T* v,
                              const T* bias, T* out, T* lse, cudaStream_t stream) {
  if (!valid(s)) return cudaErrorInvalidValue;
  return with_group_shape<T>(s.D, [&](auto g, auto e, auto vec) {
    constexpr int G = decltype(g)::value, E = decltype(e)::value, VEC = decltype(vec)::value;
    const unsigned blocks = detail::blocks_for(s.B * s.H * s.L * G, kThreads);
    ky_forward_kernel<T, G, E, VEC><<<blocks, kThreads, 0, stream>>>(s, q, k, v, bias, out, lse);
    return cudaGetLastError();
  });
}

template <typename T>
cudaError_t ky_window_backward_query(const KyWindowShape& s, const T* q, const T* k, const T* v,
                                     const T* bias, const T* lse, const T* dout, const T* delta,
                                     T* dq, T* p_band, T* ds_band, cudaStream_t stream) {
  if (!valid(s)) return cudaErrorInvalidValue;
  return with_group_shape<T>(s.D, [&](auto g, auto e, auto vec) {
    constexpr int G = decltype(g)::value, E = decltype(e)::value, VEC = decltype(vec)::value;
    const unsigned blocks = detail::blocks_for(s.B * s.H * s.L * G, kThreads);
    ky_backward_query_kernel<T, G, E, VEC>
        <<<blocks, kThreads, 0, stream>>>(s, q, k, v, bias, lse, dout, delta, dq, p_band, ds_band);
    return cudaGetLastError();
  });
}

template <typename T>
cudaError_t ky_window_backward_key(const KyWindowShape& s, const T* q, const T* dout,
                                   const T* p_band, const T* ds_band, T* dk, T* dv,
                                   cudaStream_t stream) {
  if (!valid(s)) return cudaErrorInvalidValue;
  return with_group_shape<T>(s.D, [&](auto g, auto e, auto vec) {
    constexpr int G = decltype(g)::value, E = decltype(e)::value, VEC = decltype(vec)::value;
    const unsigned blocks = detail::blocks_for(s.B * s.H * s.L * G, kThreads);
    ky_backward_key_kernel<T, G, E, VEC>
        <<<blocks, kThreads, 0, stream>>>(s, q, dout, p_band, ds_band, dk, dv);
    return cudaGetLastError();
  });
}

#define ATTN_KY_INSTANTIATE(T)                                                                  \
  template cudaError_t ky_window_forward<T>(const KyWindowShape&, const T*, const T*, const T*, \
                                            const T*, T*, T*, cudaStream_t);                    \
  template cudaError_t ky_window_backward_query<T>(const KyWindowShape&, const T*, const T*,    \
                                                   const T*, const T*, const T*, const T*,      \
                                                   const T*, T*, T*, T*, cudaStream_t);         \
  template cudaError_t ky_window_backward_key<T>(const KyWindowShape&, const T*, const T*,      \
                                                 const T*, const T*, T*, T*, cudaStream_t);
ATTN_KY_INSTANTIATE(float)
ATTN_KY_INSTANTIATE(double)
#undef ATTN_KY_INSTANTIATE

}  // namespace attn::kernels
