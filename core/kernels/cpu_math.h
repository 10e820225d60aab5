// Scalar maths the CPU kernels (cpu_*.cpp) share, written as straight-line arithmetic so that the
// loops calling it vectorise. Private to core/kernels; no torch.
#pragma once
#include <cmath>
#include <cstdint>

namespace attn::cpu {

// exp(x) for x <= 0 in float (Cephes' expf polynomial after a 2^n split), within ~2 ulp of
// std::exp; below -87 it returns ~1e-38 instead of a denormal. The double overload is std::exp.
inline float exp_nonpositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  // Round x log2(e) to the nearest integer n by adding 1.5 * 2^23: n lands in t's low mantissa
  // bits, from which 2^n is built below with unsigned integer arithmetic (no float-to-int
  // conversion, so a NaN x stays NaN without undefined behaviour).
  const float t = x * 1.44269504088896341f + 12582912.0f;
  const float n = t - 12582912.0f;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const uint32_t k = __builtin_bit_cast(uint32_t, t) - __builtin_bit_cast(uint32_t, 12582912.0f);
  return p * __builtin_bit_cast(float, (k + 127u) << 23);
}
inline double exp_nonpositive(double x) {
  return std::exp(x);
}

// Reductions over n values kept in 8 independent lanes, so that they vectorise without
// -fassociative-math (which would fold exp_nonpositive's rounding trick away).
template <typename T>
inline T sum_lanes(const T* __restrict x, int64_t n) {
  T lane[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lane[l] += x[j + l];
  T s = 0;
  for (; j < n; ++j) s += x[j];
  for (int l = 0; l < 8; ++l) s += lane[l];
  return s;
}
template <typename T>
inline T dot_lanes(const T* __restrict x, const T* __restrict y, int64_t n) {
  T lane[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lane[l] += x[j + l] * y[j + l];
  T s = 0;
  for (; j < n; ++j) s += x[j] * y[j];
  for (int l = 0; l < 8; ++l) s += lane[l];
  return s;
}
// n >= 1.
template <typename T>
inline T max_lanes(const T* __restrict x, int64_t n) {
  T lane[8];
  for (int l = 0; l < 8; ++l) lane[l] = x[0];
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) lane[l] = x[j + l] > lane[l] ? x[j + l] : lane[l];
  T m = x[0];
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;
  for (int l = 0; l < 8; ++l) m = lane[l] > m ? lane[l] : m;
  return m;
}

}  // namespace attn::cpu
