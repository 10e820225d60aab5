// Gaussian-MHSA kernel map, exact, never materialising the [S, S, D, D] tensor.
// Forward: one block per 16 x 16 tile of the map, upper-triangular tiles only (the map is
// symmetric: swapping s and r swaps d1 and d2); each thread sums D x D exponentials in
// registers while D is streamed through shared memory in chunks of 32.
// Backward: one thread per (s, d), summing over r and d2 with the symmetrised map gradient.
#include "core/kernels/common.cuh"
#include "core/kernels/kernels.h"

namespace attn::kernels {
namespace {

using detail::imin;

constexpr int kTile = 16;   // forward map tile
constexpr int kChunk = 32;  // feature chunk streamed through shared memory
constexpr int kRows = 8;    // backward rows per block

// exp(-t^2 / (2 sigma^2)) with the constant folded: float uses exp2 (one MUFU op).
template <typename T>
struct GaussianTerm;
template <>
struct GaussianTerm<float> {
  float c;
  __host__ __device__ explicit GaussianTerm(double sigma)
      : c(static_cast<float>(-1.4426950408889634 / (2.0 * sigma * sigma))) {}
  __device__ __forceinline__ float operator()(float t) const { return exp2f(t * t * c); }
};
template <>
struct GaussianTerm<double> {
  double c;
  __host__ __device__ explicit GaussianTerm(double sigma) : c(-1.0 / (2.0 * sigma * sigma)) {}
  __device__ __forceinline__ double operator()(double t) const { return exp(t * t * c); }
};

// Rows row0 .. row0 + kTile - 1, columns c0 .. c0 + n - 1 of one head's x [S, D] into a shared
// tile, zero beyond S and n.
template <typename T>
__device__ __forceinline__ void load_tile(T (&tile)[kTile][kChunk + 1], const T* xb, int64_t row0,
                                          int64_t c0, int n, int64_t S, int64_t D) {
  for (int idx = threadIdx.x; idx < kTile * kChunk; idx += blockDim.x) {
    const int row = idx / kChunk, col = idx % kChunk;
    const int64_t g = row0 + row;
    tile[row][col] = (g < S && col < n) ? xb[g * D + c0 + col] : T(0);
  }
}

template <typename T>
__global__ void __launch_bounds__(kTile* kTile)
    gaussian_forward_kernel(int64_t BH, int64_t S, int64_t D, GaussianTerm<T> term,
                            const T* __restrict__ x, T* __restrict__ map) {
  __shared__ T xs[kTile][kChunk + 1];
  __shared__ T xr[kTile][kChunk + 1];
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
  const int64_t tiles = (S + kTile - 1) / kTile;
  int64_t pair = blockIdx.x, ts = 0;
  while (pair >= tiles - ts) pair -= tiles - ts++;
  const int64_t tr = ts + pair;
  const int64_t s = ts * kTile + ty, r = tr * kTile + tx;

  for (int64_t bh = blockIdx.y; bh < BH; bh += gridDim.y) {
    const T* xb = x + bh * S * D;
    T acc = T(0);
    for (int64_t c1 = 0; c1 < D; c1 += kChunk) {
      const int n1 = static_cast<int>(imin(kChunk, D - c1));
      __syncthreads();
      load_tile(xs, xb, ts * kTile, c1, n1, S, D);
      __syncthreads();
      T a[kChunk];
#pragma unroll
      for (int u = 0; u < kChunk; ++u) a[u] = xs[ty][u];
      for (int64_t c2 = 0; c2 < D; c2 += kChunk) {
        const int n2 = static_cast<int>(imin(kChunk, D - c2));
        __syncthreads();
        load_tile(xr, xb, tr * kTile, c2, n2, S, D);
        __syncthreads();
        if (n1 == kChunk) {
          for (int v = 0; v < n2; ++v) {
            const T b = xr[tx][v];
#pragma unroll
            for (int u = 0; u < kChunk; ++u) acc += term(a[u] - b);
          }
        } else {
          for (int v = 0; v < n2; ++v) {
            const T b = xr[tx][v];
#pragma unroll
            for (int u = 0; u < kChunk; ++u)
              if (u < n1) acc += term(a[u] - b);
          }
        }
      }
    }
    if (s < S && r < S) {
      map[bh * S * S + s * S + r] = acc;
      if (tr != ts) map[bh * S * S + r * S + s] = acc;
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kRows* kChunk)
    gaussian_backward_kernel(int64_t BH, int64_t S, int64_t D, GaussianTerm<T> term, T inv_sigma2,
                             const T* __restrict__ x, const T* __restrict__ gsym,
                             T* __restrict__ dx) {
  __shared__ T xr[kChunk][kChunk + 1];
  __shared__ T g[kRows][kChunk + 1];
  const int tx = threadIdx.x % kChunk, ty = threadIdx.x / kChunk;
  const int64_t dchunks = (D + kChunk - 1) / kChunk;
  const int64_t s = (blockIdx.x / dchunks) * kRows + ty;
  const int64_t d = (blockIdx.x % dchunks) * kChunk + tx;
  for (int64_t bh = blockIdx.y; bh < BH; bh += gridDim.y) {
    const T* xb = x + bh * S * D;
    const T* gb = gsym + bh * S * S;
    const T a = (s < S && d < D) ? xb[s * D + d] : T(0);
    T acc = T(0);
    for (int64_t r0 = 0; r0 < S; r0 += kChunk) {
      const int nr = static_cast<int>(imin(kChunk, S - r0));
      for (int64_t c2 = 0; c2 < D; c2 += kChunk) {
        const int n2 = static_cast<int>(imin(kChunk, D - c2));
        __syncthreads();
        for (int idx = threadIdx.x; idx < kChunk * kChunk; idx += blockDim.x) {
          const int row = idx / kChunk, col = idx % kChunk;
          xr[row][col] = (row < nr && col < n2) ? xb[(r0 + row) * D + c2 + col] : T(0);
        }
        {
          const int row = threadIdx.x / kChunk, col = threadIdx.x % kChunk;
          const int64_t gs = (blockIdx.x / dchunks) * kRows + row;
          g[row][col] = (gs < S && col < nr) ? gb[gs * S + r0 + col] : T(0);
        }
        __syncthreads();
        for (int rr = 0; rr < nr; ++rr) {
          T inner = T(0);
          for (int v = 0; v < n2; ++v) {
            const T t = a - xr[rr][v];
            inner += t * term(t);
          }
          acc += g[ty][rr] * inner;
        }
      }
    }
    if (s < S && d < D) dx[bh * S * D + s * D + d] = -acc * inv_sigma2;
  }
}

unsigned grid_y(int64_t BH) {
  return static_cast<unsigned>(imin(BH, detail::kMaxGridYZ));
}

}  // namespace

template <typename T>
cudaError_t gaussian_map_forward(int64_t BH, int64_t S, int64_t D, double sigma, const T* x, T* map,
                                 cudaStream_t stream) {
  if (BH <= 0 || S <= 0 || D <= 0 || !(sigma > 0)) return cudaErrorInvalidValue;
  const int64_t tiles = (S + kTile - 1) / kTile;
  const int64_t pairs = tiles * (tiles + 1) / 2;
  if (pairs > 0x7fffffff) return cudaErrorInvalidValue;
  dim3 grid(static_cast<unsigned>(pairs), grid_y(BH));
  gaussian_forward_kernel<T>
      <<<grid, kTile * kTile, 0, stream>>>(BH, S, D, GaussianTerm<T>(sigma), x, map);
  return cudaGetLastError();
}

template <typename T>
cudaError_t gaussian_map_backward(int64_t BH, int64_t S, int64_t D, double sigma, const T* x,
                                  const T* gsym, T* dx, cudaStream_t stream) {
  if (BH <= 0 || S <= 0 || D <= 0 || !(sigma > 0)) return cudaErrorInvalidValue;
  const int64_t blocks = ((S + kRows - 1) / kRows) * ((D + kChunk - 1) / kChunk);
  if (blocks > 0x7fffffff) return cudaErrorInvalidValue;
  dim3 grid(static_cast<unsigned>(blocks), grid_y(BH));
  gaussian_backward_kernel<T><<<grid, kRows * kChunk, 0, stream>>>(
      BH, S, D, GaussianTerm<T>(sigma), static_cast<T>(1.0 / (sigma * sigma)), x, gsym, dx);
  return cudaGetLastError();
}

template cudaError_t gaussian_map_forward<float>(int64_t, int64_t, int64_t, double, const float*,
                                                 float*, cudaStream_t);
template cudaError_t gaussian_map_forward<double>(int64_t, int64_t, int64_t, double, const double*,
                                                  double*, cudaStream_t);
template cudaError_t gaussian_map_backward<float>(int64_t, int64_t, int64_t, double, const float*,
                                                  const float*, float*, cudaStream_t);
template cudaError_t gaussian_map_backward<double>(int64_t, int64_t, int64_t, double, const double*,
                                                   const double*, double*, cudaStream_t);

}  // namespace attn::kernels
