// The Gaussian-MHSA map on the CPU (cpu_kernels.h): per map, per query row s, per feature pair
// (d1, d2), one vector loop over the keys r >= s of a transposed copy of the map's tokens.
#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/base/error.h"
#include "core/kernels/cpu_kernels.h"
#include "core/kernels/cpu_math.h"

namespace attn::cpu {
namespace {

// xt: [Dh, S] (the map's tokens, transposed); out: [S, S]. c = 1 / (2 sigma^2).
template <typename T>
inline __attribute__((always_inline)) void forward_map(const T* __restrict x,
                                                       const T* __restrict xt, T* __restrict out,
                                                       int64_t S, int64_t Dh, T c) {
  for (int64_t s = 0; s < S; ++s) {
    T* row = out + s * S;
    for (int64_t r = s; r < S; ++r) row[r] = 0;
    for (int64_t d1 = 0; d1 < Dh; ++d1) {
      const T a = x[s * Dh + d1];
      for (int64_t d2 = 0; d2 < Dh; ++d2) {
        const T* keys = xt + d2 * S;
        for (int64_t r = s; r < S; ++r) {
          const T t = a - keys[r];
          row[r] += exp_nonpositive(-c * t * t);
        }
      }
    }
    for (int64_t r = s + 1; r < S; ++r) out[r * S + s] = row[r];
  }
}

// g: [S, S] upstream gradient; grad: [S, Dh] (overwritten); gt: [Dh, S], gs and qs: [S] scratch.
// For the pair (s, r >= s) with weight w = g[s,r] + g[r,s] (g[s,s] on the diagonal), each term
// t = x[s,d1] - x[r,d2], k = exp(-c t^2) adds -2c w k t to grad[s,d1] and +2c w k t to grad[r,d2].
template <typename T>
inline __attribute__((always_inline)) void backward_map(
    const T* __restrict x, const T* __restrict xt, const T* __restrict g, T* __restrict grad,
    T* __restrict gt, T* __restrict gs, T* __restrict qs, int64_t S, int64_t Dh, T c) {
  std::fill(gt, gt + Dh * S, T(0));
  for (int64_t s = 0; s < S; ++s) {
    gs[s] = g[s * S + s];
    for (int64_t r = s + 1; r < S; ++r) gs[r] = g[s * S + r] + g[r * S + s];
    for (int64_t d1 = 0; d1 < Dh; ++d1) {
      const T a = x[s * Dh + d1];
      // Summed per key first, then over the keys: no reduction inside the vector loop (which
      // the compiler would keep scalar to preserve the order of float additions).
      for (int64_t r = s; r < S; ++r) qs[r] = 0;
      for (int64_t d2 = 0; d2 < Dh; ++d2) {
        const T* keys = xt + d2 * S;
        T* key_grad = gt + d2 * S;
        for (int64_t r = s; r < S; ++r) {
          const T t = a - keys[r];
          const T w = gs[r] * t * exp_nonpositive(-c * t * t);
          qs[r] += w;
          key_grad[r] += w;
        }
      }
      T total = 0;
      for (int64_t r = s; r < S; ++r) total += qs[r];
      grad[s * Dh + d1] = -2 * c * total;
    }
  }
  for (int64_t r = 0; r < S; ++r)
    for (int64_t d2 = 0; d2 < Dh; ++d2) grad[r * Dh + d2] += 2 * c * gt[d2 * S + r];
}

template <typename T>
void transpose(const T* x, T* xt, int64_t S, int64_t Dh) {
  for (int64_t s = 0; s < S; ++s)
    for (int64_t d = 0; d < Dh; ++d) xt[d * S + s] = x[s * Dh + d];
}

// The float32 loops get an AVX2+FMA clone (chosen at load time where the CPU has them).
ATTN_CPU_CLONES void forward_f32(const float* x, const float* xt, float* out, int64_t S, int64_t Dh,
                                 float c) {
  forward_map<float>(x, xt, out, S, Dh, c);
}
ATTN_CPU_CLONES void backward_f32(const float* x, const float* xt, const float* g, float* grad,
                                  float* gt, float* gs, float* qs, int64_t S, int64_t Dh, float c) {
  backward_map<float>(x, xt, g, grad, gt, gs, qs, S, Dh, c);
}
void forward_kernel(const float* x, const float* xt, float* out, int64_t S, int64_t Dh, float c) {
  forward_f32(x, xt, out, S, Dh, c);
}
void forward_kernel(const double* x, const double* xt, double* out, int64_t S, int64_t Dh,
                    double c) {
  forward_map<double>(x, xt, out, S, Dh, c);
}
void backward_kernel(const float* x, const float* xt, const float* g, float* grad, float* gt,
                     float* gs, float* qs, int64_t S, int64_t Dh, float c) {
  backward_f32(x, xt, g, grad, gt, gs, qs, S, Dh, c);
}
void backward_kernel(const double* x, const double* xt, const double* g, double* grad, double* gt,
                     double* gs, double* qs, int64_t S, int64_t Dh, double c) {
  backward_map<double>(x, xt, g, grad, gt, gs, qs, S, Dh, c);
}

template <typename T>
torch::Tensor map_forward(const torch::Tensor& x, double sigma) {
  const int64_t B = x.size(0), H = x.size(1), S = x.size(2), Dh = x.size(3), N = B * H;
  auto map = torch::empty({B, H, S, S}, x.options());
  const T* xp = x.data_ptr<T>();
  T* mp = map.data_ptr<T>();
  const T c = T(1) / (T(2) * T(sigma) * T(sigma));
  at::parallel_for(0, N, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> xt(S * Dh);
    for (int64_t n = begin; n < end; ++n) {
      transpose(xp + n * S * Dh, xt.data(), S, Dh);
      forward_kernel(xp + n * S * Dh, xt.data(), mp + n * S * S, S, Dh, c);
    }
  });
  return map;
}

template <typename T>
torch::Tensor map_backward(const torch::Tensor& x, const torch::Tensor& g, double sigma) {
  const int64_t B = x.size(0), H = x.size(1), S = x.size(2), Dh = x.size(3), N = B * H;
  auto grad = torch::empty_like(x);
  const T* xp = x.data_ptr<T>();
  const T* gp = g.data_ptr<T>();
  T* dp = grad.data_ptr<T>();
  const T c = T(1) / (T(2) * T(sigma) * T(sigma));
  at::parallel_for(0, N, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> xt(S * Dh), gt(S * Dh), gs(S), qs(S);
    for (int64_t n = begin; n < end; ++n) {
      transpose(xp + n * S * Dh, xt.data(), S, Dh);
      backward_kernel(xp + n * S * Dh, xt.data(), gp + n * S * S, dp + n * S * Dh, gt.data(),
                      gs.data(), qs.data(), S, Dh, c);
    }
  });
  return grad;
}

class GaussianMapFunction : public torch::autograd::Function<GaussianMapFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x,
                               double sigma) {
    x = x.contiguous();
    ctx->save_for_backward({x});
    ctx->saved_data["sigma"] = sigma;
    return x.scalar_type() == torch::kDouble ? map_forward<double>(x, sigma)
                                             : map_forward<float>(x, sigma);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto x = ctx->get_saved_variables()[0];
    const double sigma = ctx->saved_data["sigma"].toDouble();
    const auto g = grads[0].contiguous();
    return {x.scalar_type() == torch::kDouble ? map_backward<double>(x, g, sigma)
                                              : map_backward<float>(x, g, sigma),
            torch::Tensor()};
  }
};

}  // namespace

bool accepts(const torch::Tensor& t) {
  return t.device().is_cpu() &&
         (t.scalar_type() == torch::kFloat || t.scalar_type() == torch::kDouble);
}

torch::Tensor gaussian_map(const torch::Tensor& x, double sigma) {
  if (x.dim() != 4)
    throw Error("gaussian_kernel_map: x must be [B, H, S, Dh], got " + std::to_string(x.dim()) +
                " dimensions");
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw Error("gaussian_kernel_map: sigma must be finite and > 0, got " + std::to_string(sigma));
  return GaussianMapFunction::apply(x, sigma);
}

}  // namespace attn::cpu
