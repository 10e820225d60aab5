// Dot's softmax attention on the CPU straight from the packed q|k|v projection (cpu_kernels.h).
// Per (batch, head): scores, softmax and the weighted sum of values row by row, causal rows
// stopping at the diagonal; the backward likewise. It replaces LibTorch's
// permute/bmm/div/masked_fill/softmax/bmm chain (and the copies its backward makes to scatter
// q, k, v gradients back into the packed layout), whose per-op cost dominates at small sizes.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/kernels/cpu_kernels.h"
#include "core/kernels/cpu_math.h"

namespace attn::cpu {
namespace {

// Strides of one (batch, head): q, k, v rows are `row` apart (3 D in the packed projection),
// the output's (and its gradient's) rows `orow` apart (D).
struct HeadLayout {
  int64_t L, Dh, row, orow;
  bool causal;
};

// One row of weights: p[0, n) = softmax(scores[0, n)), p[n, L) = 0. scores may alias p.
template <typename T>
inline __attribute__((always_inline)) void softmax_row(const T* scores, T* p, int64_t n,
                                                       int64_t L) {
  const T m = max_lanes(scores, n);
  for (int64_t j = 0; j < n; ++j) p[j] = exp_nonpositive(scores[j] - m);
  const T inv = T(1) / sum_lanes(p, n);
  for (int64_t j = 0; j < n; ++j) p[j] *= inv;
  for (int64_t j = n; j < L; ++j) p[j] = 0;
}

// One row of the scores' gradient from dp = g V^T (the dropped weights' gradient, overwritten):
// ds[0, n) = P (dp keep - rowsum(P dp keep)) scale, ds[n, L) = 0. ds may alias dp.
template <typename T>
inline __attribute__((always_inline)) void score_grad_row(T* dp, const T* p, const T* keep, T* ds,
                                                          int64_t n, int64_t L, T scale) {
  if (keep)
    for (int64_t j = 0; j < n; ++j) dp[j] *= keep[j];
  const T row_dot = dot_lanes(p, dp, n);
  for (int64_t j = 0; j < n; ++j) ds[j] = p[j] * (dp[j] - row_dot) * scale;
  for (int64_t j = n; j < L; ++j) ds[j] = 0;
}

// Forward of one head. kt: [Dh, L] scratch (k transposed, so the score loop runs over keys);
// acc: [Dh] scratch; probs: this head's [L, L] weights, written in full (0 above the diagonal
// when causal) for the backward.
template <typename T>
inline __attribute__((always_inline)) void forward_head(const T* __restrict q,
                                                        const T* __restrict k,
                                                        const T* __restrict v, T* __restrict out,
                                                        T* __restrict probs,
                                                        const T* __restrict keep, T* __restrict kt,
                                                        T* __restrict acc, HeadLayout s, T scale) {
  const int64_t L = s.L, Dh = s.Dh;
  for (int64_t j = 0; j < L; ++j)
    for (int64_t d = 0; d < Dh; ++d) kt[d * L + j] = k[j * s.row + d];
  for (int64_t i = 0; i < L; ++i) {
    const int64_t n = s.causal ? i + 1 : L;
    T* p = probs + i * L;
    const T* qi = q + i * s.row;
    for (int64_t j = 0; j < n; ++j) p[j] = 0;
    for (int64_t d = 0; d < Dh; ++d) {
      const T a = qi[d] * scale;
      const T* kd = kt + d * L;
      for (int64_t j = 0; j < n; ++j) p[j] += a * kd[j];
    }
    softmax_row(p, p, n, L);
    for (int64_t d = 0; d < Dh; ++d) acc[d] = 0;
    for (int64_t j = 0; j < n; ++j) {
      const T w = keep ? p[j] * keep[i * L + j] : p[j];
      const T* vj = v + j * s.row;
      for (int64_t d = 0; d < Dh; ++d) acc[d] += w * vj[d];
    }
    T* o = out + i * s.orow;
    for (int64_t d = 0; d < Dh; ++d) o[d] = acc[d];
  }
}

// Backward of one head: with dp = g V^T, ds = P (dp - rowsum(P dp)) scale,
//   dq = ds K, dk = ds^T Q, dv = P^T g.
// vt: [Dh, L]; ds: [L]; dk_acc, dv_acc: [L, Dh]; dq_acc: [Dh] (all scratch).
template <typename T>
inline __attribute__((always_inline)) void backward_head(
    const T* __restrict q, const T* __restrict k, const T* __restrict v, const T* __restrict probs,
    const T* __restrict keep, const T* __restrict g, T* __restrict dq, T* __restrict dk,
    T* __restrict dv, T* __restrict vt, T* __restrict ds, T* __restrict dk_acc,
    T* __restrict dv_acc, T* __restrict dq_acc, HeadLayout s, T scale) {
  const int64_t L = s.L, Dh = s.Dh;
  for (int64_t j = 0; j < L; ++j)
    for (int64_t d = 0; d < Dh; ++d) vt[d * L + j] = v[j * s.row + d];
  std::fill(dk_acc, dk_acc + L * Dh, T(0));
  std::fill(dv_acc, dv_acc + L * Dh, T(0));
  for (int64_t i = 0; i < L; ++i) {
    const int64_t n = s.causal ? i + 1 : L;
    const T* p = probs + i * L;
    const T* gi = g + i * s.orow;
    const T* qi = q + i * s.row;
    for (int64_t j = 0; j < n; ++j) ds[j] = 0;
    for (int64_t d = 0; d < Dh; ++d) {
      const T a = gi[d];
      const T* vd = vt + d * L;
      for (int64_t j = 0; j < n; ++j) ds[j] += a * vd[j];
    }
    score_grad_row(ds, p, keep ? keep + i * L : nullptr, ds, n, n, scale);
    for (int64_t d = 0; d < Dh; ++d) dq_acc[d] = 0;
    for (int64_t j = 0; j < n; ++j) {
      const T sj = ds[j], pj = keep ? p[j] * keep[i * L + j] : p[j];
      const T* kj = k + j * s.row;
      T* dkj = dk_acc + j * Dh;
      T* dvj = dv_acc + j * Dh;
      for (int64_t d = 0; d < Dh; ++d) {
        dq_acc[d] += sj * kj[d];
        dkj[d] += sj * qi[d];
        dvj[d] += pj * gi[d];
      }
    }
    T* dqi = dq + i * s.row;
    for (int64_t d = 0; d < Dh; ++d) dqi[d] = dq_acc[d];
  }
  for (int64_t j = 0; j < L; ++j)
    for (int64_t d = 0; d < Dh; ++d) {
      dk[j * s.row + d] = dk_acc[j * Dh + d];
      dv[j * s.row + d] = dv_acc[j * Dh + d];
    }
}

// --- Register-blocked versions for the common head widths (DH a compile-time constant), so
// that accumulators stay in registers across the reduction instead of going through memory.

// Explicit vectors (GCC/Clang vector extensions: AVX in the x86-64-v3 clone, SSE pairs in the
// baseline): the auto-vectoriser shuffled these blocks through the stack.
template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(32)));
};
template <typename T>
using Vec = typename VecOf<T>::type;
template <typename T>
constexpr int kLanes = 32 / sizeof(T);
// load/store are always inlined, so no vector crosses a call boundary whatever the clone's ISA
// (GCC warns about the ABI of such calls otherwise).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
template <typename T>
inline __attribute__((always_inline)) Vec<T> load(const T* p) {
  Vec<T> v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
inline __attribute__((always_inline)) void store(T* p, Vec<T> v) {
  __builtin_memcpy(p, &v, sizeof v);
}

constexpr int64_t kKeyBlock = 16;  // keys per score block: two float vectors, four double
inline int64_t round_up(int64_t n, int64_t m) {
  return (n + m - 1) / m * m;
}

// out[r] = sum_{k in [lo, hi)} c(r, k) x[k] for R rows of NV vectors each: x rows xstride apart,
// out rows ostride apart. The one inner loop of the scores and the weighted sums below.
template <typename T, int R, int NV, typename Coef>
inline __attribute__((always_inline)) void rows_times(int64_t lo, int64_t hi, Coef c,
                                                      const T* __restrict x, int64_t xstride,
                                                      T* __restrict out, int64_t ostride) {
  Vec<T> acc[R][NV] = {};
  for (int64_t k = lo; k < hi; ++k) {
    Vec<T> xk[NV];
    for (int v = 0; v < NV; ++v) xk[v] = load(x + k * xstride + v * kLanes<T>);
    for (int r = 0; r < R; ++r) {
      const Vec<T> ck = Vec<T>{} + c(r, k);
      for (int v = 0; v < NV; ++v) acc[r][v] += ck * xk[v];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) store(out + r * ostride + v * kLanes<T>, acc[r][v]);
}

// s[r][j] = sum_d a[r][d] xt[d][j] for 4 rows r and keys j < n (in blocks of 16; xt is padded
// to Lp >= round_up(n, 16) columns with zeros). a: [4][DH]; s: [4][Lp].
template <typename T, int DH>
inline __attribute__((always_inline)) void scores_4rows(const T* __restrict a,
                                                        const T* __restrict xt, int64_t Lp,
                                                        int64_t n, T* __restrict s) {
  constexpr int NV = kKeyBlock / kLanes<T>;
  const auto coef = [a](int r, int64_t d) { return a[r * DH + d]; };
  for (int64_t jb = 0; jb < n; jb += kKeyBlock)
    rows_times<T, 4, NV>(0, DH, coef, xt + jb, Lp, s + jb, Lp);
}

// out[r] = sum_{j in [lo, hi)} w(r, j) x[j] for R rows, where w(r, j) = w[r * rs + j * js]
// (rs = row stride, js = 1: W's rows; rs = 1, js = L: W's columns, so W^T x without forming
// W^T); x rows xstride apart (DH wide), out rows ostride apart.
template <typename T, int DH, int R>
inline __attribute__((always_inline)) void weighted_rows(const T* __restrict w, int64_t rs,
                                                         int64_t js, int64_t lo, int64_t hi,
                                                         const T* __restrict x, int64_t xstride,
                                                         T* __restrict out, int64_t ostride) {
  const auto coef = [w, rs, js](int r, int64_t j) { return w[r * rs + j * js]; };
  rows_times<T, R, DH / kLanes<T>>(lo, hi, coef, x, xstride, out, ostride);
}

// Rows [0, L) of out = W x (rs = L, js = 1) or W^T x (rs = 1, js = L) for W [L, L], each row i
// summing over j in [lo(i), hi(i)) (W is 0 outside, so a group of rows may share the union of
// their ranges). Rows in groups of R, R x DH / lanes = 8 accumulator vectors where DH allows.
template <typename T, int DH, typename Range>
inline __attribute__((always_inline)) void weighted_all_rows(const T* __restrict w, int64_t rs,
                                                             int64_t js, int64_t L, Range range,
                                                             const T* __restrict x, int64_t xstride,
                                                             T* __restrict out, int64_t ostride) {
  constexpr int NV = DH / kLanes<T>;
  constexpr int R = NV >= 8 ? 1 : 8 / NV;
  int64_t i = 0;
  for (; i + R <= L; i += R) {
    int64_t lo = range(i).first, hi = range(i).second;
    for (int r = 1; r < R; ++r) {
      lo = std::min(lo, range(i + r).first);
      hi = std::max(hi, range(i + r).second);
    }
    weighted_rows<T, DH, R>(w + i * rs, rs, js, lo, hi, x, xstride, out + i * ostride, ostride);
  }
  for (; i < L; ++i)
    weighted_rows<T, DH, 1>(w + i * rs, rs, js, range(i).first, range(i).second, x, xstride,
                            out + i * ostride, ostride);
}

// x rows (stride `row`) -> xt [DH][Lp], zero past L.
template <typename T, int DH>
inline __attribute__((always_inline)) void transpose_padded(const T* __restrict x, int64_t row,
                                                            int64_t L, int64_t Lp,
                                                            T* __restrict xt) {
  for (int d = 0; d < DH; ++d)
    for (int64_t j = L; j < Lp; ++j) xt[d * Lp + j] = 0;
  for (int64_t j = 0; j < L; ++j)
    for (int d = 0; d < DH; ++d) xt[d * Lp + j] = x[j * row + d];
}

// The head widths with register-blocked kernels (backward_any and forward_any dispatch on it).
constexpr bool has_blocked_kernel(int64_t Dh) {
  return Dh == 16 || Dh == 32 || Dh == 64;
}

// Scratch of one head for the blocked kernels (sizes for L, DH; owned per thread).
template <typename T>
struct BlockScratch {
  std::vector<T> xt, a, s, m1;  // m1: [L, L], the dropped weights or the scores' gradient
  void size_for(int64_t L, int64_t Dh) {
    const int64_t Lp = round_up(L, kKeyBlock);
    xt.resize(Dh * Lp);
    a.resize(4 * Dh);
    s.resize(4 * Lp);
    m1.resize(L * L);
  }
};

template <typename T, int DH>
inline __attribute__((always_inline)) void forward_head_blocked(
    const T* __restrict q, const T* __restrict k, const T* __restrict v, T* __restrict out,
    T* __restrict probs, const T* __restrict keep, BlockScratch<T>& sc, HeadLayout s, T scale) {
  const int64_t L = s.L, Lp = round_up(L, kKeyBlock);
  transpose_padded<T, DH>(k, s.row, L, Lp, sc.xt.data());
  T* a = sc.a.data();
  T* sb = sc.s.data();
  for (int64_t i0 = 0; i0 < L; i0 += 4) {
    const int64_t rows = std::min<int64_t>(4, L - i0);
    for (int64_t r = 0; r < 4; ++r)
      for (int d = 0; d < DH; ++d) a[r * DH + d] = r < rows ? q[(i0 + r) * s.row + d] * scale : 0;
    const int64_t n_max = s.causal ? i0 + rows : L;
    scores_4rows<T, DH>(a, sc.xt.data(), Lp, n_max, sb);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r, n = s.causal ? i + 1 : L;
      softmax_row(sb + r * Lp, probs + i * L, n, L);
    }
  }
  const bool causal = s.causal;
  const T* w = probs;
  if (keep) {  // the dropped weights meet the values; probs stays the softmax, for the backward
    T* dropped = sc.m1.data();
    for (int64_t e = 0; e < L * L; ++e) dropped[e] = probs[e] * keep[e];
    w = dropped;
  }
  weighted_all_rows<T, DH>(
      w, L, 1, L, [=](int64_t i) { return std::pair<int64_t, int64_t>(0, causal ? i + 1 : L); }, v,
      s.row, out, s.orow);
}

template <typename T, int DH>
inline __attribute__((always_inline)) void backward_head_blocked(
    const T* __restrict q, const T* __restrict k, const T* __restrict v, const T* __restrict probs,
    const T* __restrict keep, const T* __restrict g, T* __restrict dq, T* __restrict dk,
    T* __restrict dv, BlockScratch<T>& sc, HeadLayout s, T scale) {
  const int64_t L = s.L, Lp = round_up(L, kKeyBlock);
  const bool causal = s.causal;
  transpose_padded<T, DH>(v, s.row, L, Lp, sc.xt.data());
  T* a = sc.a.data();
  T* sb = sc.s.data();
  T* ds = sc.m1.data();  // [L, L], 0 above the diagonal when causal
  for (int64_t i0 = 0; i0 < L; i0 += 4) {
    const int64_t rows = std::min<int64_t>(4, L - i0);
    for (int64_t r = 0; r < 4; ++r)
      for (int d = 0; d < DH; ++d) a[r * DH + d] = r < rows ? g[(i0 + r) * s.orow + d] : 0;
    const int64_t n_max = causal ? i0 + rows : L;
    scores_4rows<T, DH>(a, sc.xt.data(), Lp, n_max, sb);  // dp = g V^T
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r, n = causal ? i + 1 : L;
      score_grad_row(sb + r * Lp, probs + i * L, keep ? keep + i * L : nullptr, ds + i * L, n, L,
                     scale);
    }
  }
  auto below = [=](int64_t i) { return std::pair<int64_t, int64_t>(0, causal ? i + 1 : L); };
  auto above = [=](int64_t j) { return std::pair<int64_t, int64_t>(causal ? j : 0, L); };
  weighted_all_rows<T, DH>(ds, L, 1, L, below, k, s.row, dq, s.row);  // dq = dS K
  weighted_all_rows<T, DH>(ds, 1, L, L, above, q, s.row, dk, s.row);  // dk = dS^T Q
  const T* w = probs;
  if (keep) {  // the dropped weights met the values; ds is no longer needed, so its buffer
    T* dropped = sc.m1.data();
    for (int64_t e = 0; e < L * L; ++e) dropped[e] = probs[e] * keep[e];
    w = dropped;
  }
  weighted_all_rows<T, DH>(w, 1, L, L, above, g, s.orow, dv, s.row);  // dv = P^T g
}

template <typename T>
inline __attribute__((always_inline)) void backward_any(const T* q, const T* k, const T* v,
                                                        const T* probs, const T* keep, const T* g,
                                                        T* dq, T* dk, T* dv, T* vt, T* ds,
                                                        T* dk_acc, T* dv_acc, T* dq_acc,
                                                        BlockScratch<T>& sc, HeadLayout s,
                                                        T scale) {
  switch (s.Dh) {
    case 16:
      return backward_head_blocked<T, 16>(q, k, v, probs, keep, g, dq, dk, dv, sc, s, scale);
    case 32:
      return backward_head_blocked<T, 32>(q, k, v, probs, keep, g, dq, dk, dv, sc, s, scale);
    case 64:
      return backward_head_blocked<T, 64>(q, k, v, probs, keep, g, dq, dk, dv, sc, s, scale);
    default:
      return backward_head<T>(q, k, v, probs, keep, g, dq, dk, dv, vt, ds, dk_acc, dv_acc, dq_acc,
                              s, scale);
  }
}

// The kernels for one head: the blocked ones for head widths 16, 32 and 64, the plain loops
// otherwise.
template <typename T>
inline __attribute__((always_inline)) void forward_any(const T* q, const T* k, const T* v, T* out,
                                                       T* probs, const T* keep, T* kt, T* acc,
                                                       BlockScratch<T>& sc, HeadLayout s, T scale) {
  switch (s.Dh) {
    case 16:
      return forward_head_blocked<T, 16>(q, k, v, out, probs, keep, sc, s, scale);
    case 32:
      return forward_head_blocked<T, 32>(q, k, v, out, probs, keep, sc, s, scale);
    case 64:
      return forward_head_blocked<T, 64>(q, k, v, out, probs, keep, sc, s, scale);
    default:
      return forward_head<T>(q, k, v, out, probs, keep, kt, acc, s, scale);
  }
}

ATTN_CPU_CLONES void forward_f32(const float* q, const float* k, const float* v, float* out,
                                 float* probs, const float* keep, float* kt, float* acc,
                                 BlockScratch<float>& sc, HeadLayout s, float scale) {
  forward_any<float>(q, k, v, out, probs, keep, kt, acc, sc, s, scale);
}
ATTN_CPU_CLONES void backward_f32(const float* q, const float* k, const float* v,
                                  const float* probs, const float* keep, const float* g, float* dq,
                                  float* dk, float* dv, float* vt, float* ds, float* dk_acc,
                                  float* dv_acc, float* dq_acc, BlockScratch<float>& sc,
                                  HeadLayout s, float scale) {
  backward_any<float>(q, k, v, probs, keep, g, dq, dk, dv, vt, ds, dk_acc, dv_acc, dq_acc, sc, s,
                      scale);
}

// float goes through the clones (AVX2 where the CPU has it); double (tests) straight through:
// f32 is a kernel's cloned float entry, any its template's instance for T.
template <typename T, typename F32, typename Any, typename... Args>
void through_clones(F32 f32, Any any, Args&&... args) {
  if constexpr (std::is_same_v<T, float>)
    f32(std::forward<Args>(args)...);
  else
    any(std::forward<Args>(args)...);
}

// Offsets of head n = b * H + h in the packed projection [B, L, 3, H, Dh] and the output
// [B, L, H, Dh].
struct Packed {
  int64_t B, L, H, Dh;
  int64_t D() const { return H * Dh; }
  int64_t qkv_offset(int64_t n) const { return (n / H) * L * 3 * D() + (n % H) * Dh; }
  int64_t out_offset(int64_t n) const { return (n / H) * L * D() + (n % H) * Dh; }
  HeadLayout layout(bool causal) const { return {L, Dh, 3 * D(), D(), causal}; }
};

// keep: undefined, or [B, H, L, L] contiguous (0 or 1/(1-p)).
template <typename T>
const T* head_keep(const torch::Tensor& keep, int64_t n, int64_t L) {
  return keep.defined() ? keep.data_ptr<T>() + n * L * L : nullptr;
}

template <typename T>
std::pair<torch::Tensor, torch::Tensor> attention_forward(const torch::Tensor& qkv,
                                                          const torch::Tensor& keep, Packed pk,
                                                          bool causal) {
  auto out = torch::empty({pk.B, pk.L, pk.D()}, qkv.options());
  auto probs = torch::empty({pk.B, pk.H, pk.L, pk.L}, qkv.options());
  const T* base = qkv.data_ptr<T>();
  T* op = out.data_ptr<T>();
  T* pp = probs.data_ptr<T>();
  const HeadLayout s = pk.layout(causal);
  const T scale = T(1) / std::sqrt(T(pk.Dh));
  at::parallel_for(0, pk.B * pk.H, 1, [&](int64_t begin, int64_t end) {
    // Scratch of the path this head width takes (forward_any), per thread.
    const bool blocked = has_blocked_kernel(pk.Dh);
    std::vector<T> kt(blocked ? 0 : pk.L * pk.Dh), acc(blocked ? 0 : pk.Dh);
    BlockScratch<T> sc;
    if (blocked) sc.size_for(pk.L, pk.Dh);
    for (int64_t n = begin; n < end; ++n) {
      const T* q = base + pk.qkv_offset(n);
      through_clones<T>(forward_f32, forward_any<T>, q, q + pk.D(), q + 2 * pk.D(),
                        op + pk.out_offset(n), pp + n * pk.L * pk.L, head_keep<T>(keep, n, pk.L),
                        kt.data(), acc.data(), sc, s, scale);
    }
  });
  return {out, probs};
}

template <typename T>
torch::Tensor attention_backward(const torch::Tensor& qkv, const torch::Tensor& probs,
                                 const torch::Tensor& keep, const torch::Tensor& g, Packed pk,
                                 bool causal) {
  auto grad = torch::empty_like(qkv);  // every element is written
  const T* base = qkv.data_ptr<T>();
  const T* pp = probs.data_ptr<T>();
  const T* gp = g.data_ptr<T>();
  T* dp = grad.data_ptr<T>();
  const HeadLayout s = pk.layout(causal);
  const T scale = T(1) / std::sqrt(T(pk.Dh));
  at::parallel_for(0, pk.B * pk.H, 1, [&](int64_t begin, int64_t end) {
    const bool blocked = has_blocked_kernel(pk.Dh);
    const int64_t plain = blocked ? 0 : 1;  // the plain loops' scratch only where they run
    std::vector<T> vt(plain * pk.L * pk.Dh), ds(plain * pk.L), dk_acc(plain * pk.L * pk.Dh),
        dv_acc(plain * pk.L * pk.Dh), dq_acc(plain * pk.Dh);
    BlockScratch<T> sc;
    if (blocked) sc.size_for(pk.L, pk.Dh);
    for (int64_t n = begin; n < end; ++n) {
      const int64_t o = pk.qkv_offset(n);
      const T* q = base + o;
      T* dq = dp + o;
      through_clones<T>(backward_f32, backward_any<T>, q, q + pk.D(), q + 2 * pk.D(),
                        pp + n * pk.L * pk.L, head_keep<T>(keep, n, pk.L), gp + pk.out_offset(n),
                        dq, dq + pk.D(), dq + 2 * pk.D(), vt.data(), ds.data(), dk_acc.data(),
                        dv_acc.data(), dq_acc.data(), sc, s, scale);
    }
  });
  return grad;
}

class PackedAttentionFunction : public torch::autograd::Function<PackedAttentionFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor qkv,
                               torch::Tensor keep, int64_t heads, bool causal) {
    qkv = qkv.contiguous();
    // No dropout comes as an empty tensor: LibTorch 1.13's apply() cannot take undefined inputs.
    keep = keep.numel() ? keep.to(qkv.scalar_type()).contiguous() : torch::Tensor();
    const Packed pk{qkv.size(0), qkv.size(1), heads, qkv.size(2) / (3 * heads)};
    auto [out, probs] = qkv.scalar_type() == torch::kDouble
                            ? attention_forward<double>(qkv, keep, pk, causal)
                            : attention_forward<float>(qkv, keep, pk, causal);
    ctx->save_for_backward({qkv, probs});
    if (keep.defined()) ctx->saved_data["keep"] = keep;
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["causal"] = causal;
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& qkv = saved[0];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const bool causal = ctx->saved_data["causal"].toBool();
    const Packed pk{qkv.size(0), qkv.size(1), heads, qkv.size(2) / (3 * heads)};
    const auto g = grads[0].contiguous();
    const torch::Tensor keep =
        ctx->saved_data.count("keep") ? ctx->saved_data["keep"].toTensor() : torch::Tensor();
    auto grad = qkv.scalar_type() == torch::kDouble
                    ? attention_backward<double>(qkv, saved[1], keep, g, pk, causal)
                    : attention_backward<float>(qkv, saved[1], keep, g, pk, causal);
    return {grad, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor packed_softmax_attention(const torch::Tensor& qkv, int64_t heads, bool causal,
                                       const torch::Tensor& keep) {
  if (qkv.dim() != 3 || heads < 1 || qkv.size(2) % (3 * heads) != 0 || qkv.size(1) < 1)
    throw Error("packed_softmax_attention: qkv must be [B, L, 3 * heads * Dh] with L >= 1, got " +
                std::to_string(qkv.dim()) + " dimensions for " + std::to_string(heads) + " heads");
  if (!accepts(qkv)) throw Error("packed_softmax_attention: qkv must be a CPU float tensor");
  const int64_t L = qkv.size(1);
  if (keep.defined() && keep.sizes() != torch::IntArrayRef({qkv.size(0), heads, L, L}))
    throw Error("packed_softmax_attention: keep must be [B, heads, L, L]");
  return PackedAttentionFunction::apply(
      qkv, keep.defined() ? keep : torch::empty({0}, qkv.options()), heads, causal);
}

}  // namespace attn::cpu
