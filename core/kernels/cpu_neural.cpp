// Neural Attention's ReLU scores on the CPU (cpu_kernels.h): per (batch, head) and query row i,
// per hidden unit c, one vector loop over the keys j of a transposed copy of r.
#include <ATen/Parallel.h>

#include <vector>

#include "core/base/error.h"
#include "core/kernels/cpu_kernels.h"

namespace attn::cpu {
namespace {

// p: [T, C]; rt: [C, T]; w: [C]; out: [T, T] (overwritten).
template <typename T>
inline __attribute__((always_inline)) void forward_scores(const T* __restrict p,
                                                          const T* __restrict rt,
                                                          const T* __restrict w, T* __restrict out,
                                                          int64_t n, int64_t C, bool causal) {
  for (int64_t i = 0; i < n; ++i) {
    T* row = out + i * n;
    const int64_t keys = causal ? i + 1 : n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0;
    for (int64_t c = 0; c < C; ++c) {
      const T a = p[i * C + c], wc = w[c];
      const T* rc = rt + c * n;
      for (int64_t j = 0; j < keys; ++j) {
        const T z = a + rc[j];
        row[j] += wc * (z > 0 ? z : T(0));
      }
    }
  }
}

// g: [T, T] the scores' gradient. dp: [T, C] (overwritten); drt: [C, T] and dw: [C]
// (accumulated into).
template <typename T>
inline __attribute__((always_inline)) void backward_scores(
    const T* __restrict p, const T* __restrict rt, const T* __restrict w, const T* __restrict g,
    T* __restrict dp, T* __restrict drt, T* __restrict dw, int64_t n, int64_t C, bool causal) {
  for (int64_t i = 0; i < n; ++i) {
    const T* gi = g + i * n;
    const int64_t keys = causal ? i + 1 : n;
    for (int64_t c = 0; c < C; ++c) {
      const T a = p[i * C + c], wc = w[c];
      const T* rc = rt + c * n;
      T* drc = drt + c * n;
      T sum_g = 0, sum_gz = 0;
      for (int64_t j = 0; j < keys; ++j) {
        const T z = a + rc[j];
        const T gz = z > 0 ? gi[j] : T(0);  // relu'(z) g; relu'(0) = 0 as in torch
        sum_g += gz;
        sum_gz += gz * z;  // g relu(z)
        drc[j] += wc * gz;
      }
      dp[i * C + c] = wc * sum_g;
      dw[c] += sum_gz;
    }
  }
}

ATTN_CPU_CLONES void forward_f32(const float* p, const float* rt, const float* w, float* out,
                                 int64_t n, int64_t C, bool causal) {
  forward_scores<float>(p, rt, w, out, n, C, causal);
}
ATTN_CPU_CLONES void backward_f32(const float* p, const float* rt, const float* w, const float* g,
                                  float* dp, float* drt, float* dw, int64_t n, int64_t C,
                                  bool causal) {
  backward_scores<float>(p, rt, w, g, dp, drt, dw, n, C, causal);
}
void forward_kernel(const float* p, const float* rt, const float* w, float* out, int64_t n,
                    int64_t C, bool causal) {
  forward_f32(p, rt, w, out, n, C, causal);
}
void forward_kernel(const double* p, const double* rt, const double* w, double* out, int64_t n,
                    int64_t C, bool causal) {
  forward_scores<double>(p, rt, w, out, n, C, causal);
}
void backward_kernel(const float* p, const float* rt, const float* w, const float* g, float* dp,
                     float* drt, float* dw, int64_t n, int64_t C, bool causal) {
  backward_f32(p, rt, w, g, dp, drt, dw, n, C, causal);
}
void backward_kernel(const double* p, const double* rt, const double* w, const double* g,
                     double* dp, double* drt, double* dw, int64_t n, int64_t C, bool causal) {
  backward_scores<double>(p, rt, w, g, dp, drt, dw, n, C, causal);
}

template <typename T>
void transpose(const T* x, T* xt, int64_t rows, int64_t cols) {
  for (int64_t a = 0; a < rows; ++a)
    for (int64_t b = 0; b < cols; ++b) xt[b * rows + a] = x[a * cols + b];
}

template <typename T>
torch::Tensor scores_forward(const torch::Tensor& p, const torch::Tensor& r, const torch::Tensor& w,
                             bool causal) {
  const int64_t B = p.size(0), H = p.size(1), n = p.size(2), C = p.size(3);
  auto out = torch::empty({B, H, n, n}, p.options());
  const T *pp = p.data_ptr<T>(), *rp = r.data_ptr<T>(), *wp = w.data_ptr<T>();
  T* op = out.data_ptr<T>();
  at::parallel_for(0, B * H, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> rt(n * C);
    for (int64_t m = begin; m < end; ++m) {
      transpose(rp + m * n * C, rt.data(), n, C);
      forward_kernel(pp + m * n * C, rt.data(), wp + (m % H) * C, op + m * n * n, n, C, causal);
    }
  });
  return out;
}

template <typename T>
std::vector<torch::Tensor> scores_backward(const torch::Tensor& p, const torch::Tensor& r,
                                           const torch::Tensor& w, const torch::Tensor& g,
                                           bool causal) {
  const int64_t B = p.size(0), H = p.size(1), n = p.size(2), C = p.size(3);
  auto dp = torch::empty_like(p), dr = torch::empty_like(r);
  auto dw = torch::zeros({B * H, C}, w.options());  // per (batch, head); summed over batches
  const T *pp = p.data_ptr<T>(), *rp = r.data_ptr<T>(), *wp = w.data_ptr<T>(),
          *gp = g.data_ptr<T>();
  T *dpp = dp.data_ptr<T>(), *drp = dr.data_ptr<T>(), *dwp = dw.data_ptr<T>();
  at::parallel_for(0, B * H, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> rt(n * C), drt(n * C);
    for (int64_t m = begin; m < end; ++m) {
      transpose(rp + m * n * C, rt.data(), n, C);
      std::fill(drt.begin(), drt.end(), T(0));
      backward_kernel(pp + m * n * C, rt.data(), wp + (m % H) * C, gp + m * n * n, dpp + m * n * C,
                      drt.data(), dwp + m * C, n, C, causal);
      transpose(drt.data(), drp + m * n * C, C, n);
    }
  });
  return {dp, dr, dw.view({B, H, C}).sum(0)};
}

class NeuralScoresFunction : public torch::autograd::Function<NeuralScoresFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor p,
                               torch::Tensor r, torch::Tensor w, bool causal) {
    p = p.contiguous();
    r = r.contiguous();
    w = w.contiguous();
    ctx->save_for_backward({p, r, w});
    ctx->saved_data["causal"] = causal;
    return p.scalar_type() == torch::kDouble ? scores_forward<double>(p, r, w, causal)
                                             : scores_forward<float>(p, r, w, causal);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const bool causal = ctx->saved_data["causal"].toBool();
    const auto g = grads[0].contiguous();
    auto d = saved[0].scalar_type() == torch::kDouble
                 ? scores_backward<double>(saved[0], saved[1], saved[2], g, causal)
                 : scores_backward<float>(saved[0], saved[1], saved[2], g, causal);
    return {d[0], d[1], d[2], torch::Tensor()};
  }
};

}  // namespace

torch::Tensor neural_relu_scores(const torch::Tensor& p, const torch::Tensor& r,
                                 const torch::Tensor& w, bool causal) {
  if (p.dim() != 4 || r.sizes() != p.sizes() || w.dim() != 2 || w.size(0) != p.size(1) ||
      w.size(1) != p.size(3))
    throw Error("neural_relu_scores: p and r must be [B, H, n, hidden] and w [H, hidden]");
  if (r.scalar_type() != p.scalar_type() || w.scalar_type() != p.scalar_type())
    throw Error("neural_relu_scores: p, r and w must have one dtype");
  return NeuralScoresFunction::apply(p, r, w, causal);
}

}  // namespace attn::cpu
