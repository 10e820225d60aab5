#include "core/attention/cuda_ops.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/kernels/kernels.h"

namespace attn::cuda {
namespace {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

void check(cudaError_t e, const char* kernel) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA kernel ") + kernel +
                             " failed: " + cudaGetErrorString(e));
}

cudaStream_t current_stream() {
  return at::cuda::getCurrentCUDAStream().stream();
}

void require(const Tensor& t, const char* what) {
  if (!t.is_cuda()) throw std::invalid_argument(std::string(what) + " must be a CUDA tensor");
  if (t.scalar_type() != torch::kFloat && t.scalar_type() != torch::kDouble)
    throw std::invalid_argument(std::string(what) + " must be float32 or float64");
}

// Keeps a function's non-tensor arguments for its backward, under their names (the tensors go
// through save_for_backward).
void save_arguments(AutogradContext* ctx,
                    std::initializer_list<std::pair<const char*, c10::IValue>> arguments) {
  for (const auto& [name, value] : arguments) ctx->saved_data[name] = value;
}

// Calls f(T{}) with T the tensor's element type.
template <typename F>
void by_dtype(const Tensor& t, F&& f) {
  if (t.scalar_type() == torch::kDouble)
    f(double{});
  else
    f(float{});
}

template <typename T>
const T* ptr(const Tensor& t) {
  return t.data_ptr<T>();
}
template <typename T>
T* mut(Tensor& t) {
  return t.data_ptr<T>();
}

// ---- KY window ----------------------------------------------------------------------------------
kernels::KyWindowShape ky_shape(const Tensor& q, int64_t window, int64_t first, bool masked) {
  return {q.size(0),
          q.size(1),
          q.size(2),
          q.size(3),
          static_cast<int>(window),
          static_cast<int>(first),
          masked,
          1.0 / std::sqrt(static_cast<double>(q.size(3)))};
}

struct KyWindowFunction : torch::autograd::Function<KyWindowFunction> {
  static Tensor forward(AutogradContext* ctx, Tensor q, Tensor k, Tensor v, Tensor bias,
                        int64_t window, int64_t first, bool masked) {
    c10::cuda::CUDAGuard guard(q.device());
    q = q.contiguous(), k = k.contiguous(), v = v.contiguous(), bias = bias.contiguous();
    const auto s = ky_shape(q, window, first, masked);
    auto out = torch::empty_like(q);
    auto lse = torch::empty({s.B, s.H, s.L}, q.options());
    by_dtype(q, [&](auto z) {
      using T = decltype(z);
      check(kernels::ky_window_forward<T>(s, ptr<T>(q), ptr<T>(k), ptr<T>(v), ptr<T>(bias),
                                          mut<T>(out), mut<T>(lse), current_stream()),
            "ky_window_forward");
    });
    ctx->save_for_backward({q, k, v, bias, out, lse});
    save_arguments(ctx, {{"window", window}, {"first", first}, {"masked", masked}});
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    auto q = saved[0], k = saved[1], v = saved[2], bias = saved[3], out = saved[4], lse = saved[5];
    c10::cuda::CUDAGuard guard(q.device());
    const auto s = ky_shape(q, ctx->saved_data["window"].toInt(), ctx->saved_data["first"].toInt(),
                            ctx->saved_data["masked"].toBool());
    auto dout = grads[0].contiguous();
    auto delta = (dout * out).sum(-1).contiguous();
    auto dq = torch::empty_like(q), dk = torch::empty_like(k), dv = torch::empty_like(v);
    auto p_band = torch::empty({s.B, s.H, s.L, s.W}, q.options());
    auto ds_band = torch::empty_like(p_band);
    by_dtype(q, [&](auto z) {
      using T = decltype(z);
      check(kernels::ky_window_backward_query<T>(
                s, ptr<T>(q), ptr<T>(k), ptr<T>(v), ptr<T>(bias), ptr<T>(lse), ptr<T>(dout),
                ptr<T>(delta), mut<T>(dq), mut<T>(p_band), mut<T>(ds_band), current_stream()),
            "ky_window_backward_query");
      check(kernels::ky_window_backward_key<T>(s, ptr<T>(q), ptr<T>(dout), ptr<T>(p_band),
                                               ptr<T>(ds_band), mut<T>(dk), mut<T>(dv),
                                               current_stream()),
            "ky_window_backward_key");
    });
    auto dbias = ds_band.sum(torch::IntArrayRef{0, 2});
    return {dq, dk, dv, dbias, Tensor(), Tensor(), Tensor()};
  }
};

// ---- Gaussian map -------------------------------------------------------------------------------
struct GaussianMapFunction : torch::autograd::Function<GaussianMapFunction> {
  static Tensor forward(AutogradContext* ctx, Tensor x, double sigma) {
    c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    const int64_t S = x.size(-2), D = x.size(-1), BH = x.numel() / (S * D);
    auto sizes = x.sizes().vec();
    sizes.back() = S;
    auto map = torch::empty(sizes, x.options());
    by_dtype(x, [&](auto z) {
      using T = decltype(z);
      check(kernels::gaussian_map_forward<T>(BH, S, D, sigma, ptr<T>(x), mut<T>(map),
                                             current_stream()),
            "gaussian_map_forward");
    });
    ctx->save_for_backward({x});
    ctx->saved_data["sigma"] = sigma;
    return map;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    auto x = ctx->get_saved_variables()[0];
    c10::cuda::CUDAGuard guard(x.device());
    const double sigma = ctx->saved_data["sigma"].toDouble();
    const int64_t S = x.size(-2), D = x.size(-1), BH = x.numel() / (S * D);
    auto gsym = (grads[0] + grads[0].transpose(-1, -2)).contiguous();
    auto dx = torch::empty_like(x);
    by_dtype(x, [&](auto z) {
      using T = decltype(z);
      check(kernels::gaussian_map_backward<T>(BH, S, D, sigma, ptr<T>(x), ptr<T>(gsym), mut<T>(dx),
                                              current_stream()),
            "gaussian_map_backward");
    });
    return {dx, Tensor()};
  }
};

// ---- Neural attention ---------------------------------------------------------------------------
kernels::Activation kernel_activation(int64_t a) {
  switch (static_cast<NeuralActivation>(a)) {
    case NeuralActivation::relu:
      return kernels::Activation::relu;
    case NeuralActivation::gelu:
      return kernels::Activation::gelu;
    case NeuralActivation::tanh:
      return kernels::Activation::tanh;
  }
  throw std::invalid_argument("unknown activation");
}

kernels::NeuralShape neural_shape(const Tensor& p, const Tensor& v, int64_t act, double scale,
                                  bool causal) {
  return {p.size(0), p.size(1), p.size(2), p.size(3), v.size(3), kernel_activation(act),
          scale,     causal};
}

struct NeuralFunction : torch::autograd::Function<NeuralFunction> {
  static Tensor forward(AutogradContext* ctx, Tensor p, Tensor r, Tensor w, Tensor b, Tensor v,
                        int64_t act, double scale, bool causal) {
    c10::cuda::CUDAGuard guard(p.device());
    p = p.contiguous(), r = r.contiguous(), w = w.contiguous(), b = b.contiguous(),
    v = v.contiguous();
    const auto s = neural_shape(p, v, act, scale, causal);
    auto out = torch::empty_like(v);
    auto lse = torch::empty({s.B, s.H, s.N}, v.options());
    by_dtype(p, [&](auto z) {
      using T = decltype(z);
      check(kernels::neural_forward<T>(s, ptr<T>(p), ptr<T>(r), ptr<T>(w), ptr<T>(b), ptr<T>(v),
                                       mut<T>(out), mut<T>(lse), current_stream()),
            "neural_forward");
    });
    ctx->save_for_backward({p, r, w, b, v, out, lse});
    save_arguments(ctx, {{"act", act}, {"scale", scale}, {"causal", causal}});
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    auto sv = ctx->get_saved_variables();
    auto p = sv[0], r = sv[1], w = sv[2], b = sv[3], v = sv[4], out = sv[5], lse = sv[6];
    c10::cuda::CUDAGuard guard(p.device());
    const auto s =
        neural_shape(p, v, ctx->saved_data["act"].toInt(), ctx->saved_data["scale"].toDouble(),
                     ctx->saved_data["causal"].toBool());
    auto dout = grads[0].contiguous();
    auto delta = (dout * out).sum(-1).contiguous();
    // Key-major [B, H, N(key), N(query)]: the weights and score gradients, O(N^2) like dot's.
    auto probs_t = torch::empty({s.B, s.H, s.N, s.N}, p.options());
    auto ds_t = torch::empty_like(probs_t);
    auto dp = torch::empty_like(p), dr = torch::empty_like(r);
    auto dw = torch::zeros_like(w);
    by_dtype(p, [&](auto z) {
      using T = decltype(z);
      check(kernels::neural_backward_scores<T>(s, ptr<T>(p), ptr<T>(r), ptr<T>(w), ptr<T>(b),
                                               ptr<T>(v), ptr<T>(lse), ptr<T>(dout), ptr<T>(delta),
                                               mut<T>(probs_t), mut<T>(ds_t), current_stream()),
            "neural_backward_scores");
      check(
          kernels::neural_backward_hidden<T>(s, ptr<T>(p), ptr<T>(r), ptr<T>(w), ptr<T>(ds_t),
                                             mut<T>(dp), mut<T>(dr), mut<T>(dw), current_stream()),
          "neural_backward_hidden");
    });
    auto dv = torch::matmul(probs_t, dout);
    // Softmax is shift-invariant: the score bias b gets exactly zero gradient.
    return {dp, dr, dw, torch::zeros_like(b), dv, Tensor(), Tensor(), Tensor()};
  }
};

}  // namespace

bool device_present() {
  return torch::cuda::is_available();
}

std::string device_name() {
  if (!device_present()) return {};
  return at::cuda::getCurrentDeviceProperties()->name;
}

torch::Tensor ky_window(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& bias, int window, int first_offset,
                        bool masked_edges) {
  require(q, "q");
  if (q.size(3) > kKyMaxHeadDim) throw std::invalid_argument("ky_window: head dim over 512");
  return KyWindowFunction::apply(q, k, v, bias.to(q.dtype()), window, first_offset, masked_edges);
}

torch::Tensor gaussian_map(const torch::Tensor& x, double sigma) {
  require(x, "x");
  return GaussianMapFunction::apply(x, sigma);
}

torch::Tensor neural(const torch::Tensor& p, const torch::Tensor& r, const torch::Tensor& w,
                     const torch::Tensor& b, const torch::Tensor& v, NeuralActivation act,
                     double scale, bool causal) {
  require(p, "p");
  if (p.size(3) > kNeuralMaxWidth || v.size(3) > kNeuralMaxWidth)
    throw std::invalid_argument("neural: hidden or value width over 128");
  return NeuralFunction::apply(p, r, w, b, v, static_cast<int64_t>(act), scale, causal);
}

int64_t memory_allocated() {
  if (!device_present()) return 0;
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
  return stats.allocated_bytes[0].current;
}

int64_t peak_memory_allocated() {
  if (!device_present()) return 0;
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
  return stats.allocated_bytes[0].peak;
}

void reset_peak_memory() {
  if (device_present())
    c10::cuda::CUDACachingAllocator::resetPeakStats(c10::cuda::current_device());
}

void empty_cache() {
  if (device_present()) c10::cuda::CUDACachingAllocator::emptyCache();
}

}  // namespace attn::cuda
