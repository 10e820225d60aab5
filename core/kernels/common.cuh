// Device helpers shared by the kernels (no torch).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace attn::kernels::detail {

// expf/logf for float, exp/log for double (float maths never promoted to double: the condition
// is a constant, so only one call is compiled in).
template <typename T>
__device__ __forceinline__ T exp_(T x) {
  return std::is_same_v<T, float> ? expf(x) : exp(x);
}
template <typename T>
__device__ __forceinline__ T log_(T x) {
  return std::is_same_v<T, float> ? logf(x) : log(x);
}

template <typename T>
__device__ __forceinline__ T neg_inf() {
  return -static_cast<T>(INFINITY);
}

__host__ __device__ inline int64_t imin(int64_t a, int64_t b) {
  return a < b ? a : b;
}

inline unsigned blocks_for(int64_t n, int per_block) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

// Launch-size limits: grid.y and grid.z are at most 65535.
constexpr int64_t kMaxGridYZ = 65535;

}  // namespace attn::kernels::detail
