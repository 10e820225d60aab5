// Dispatch between the fused CUDA kernels and the LibTorch reference paths.
#include "core/attention/fused_attention.h"

#include <atomic>

#include "core/attention/attention.h"  // causal_mask
#include "core/kernels/cpu_kernels.h"

#ifdef ATTN_WITH_CUDA
#include "core/attention/cuda_ops.h"
#endif

namespace attn {
namespace {

std::atomic<bool> g_fused_enabled{true};

#ifdef ATTN_WITH_CUDA
// The kernels handle float32 and float64 tensors on a CUDA device.
bool fused_path(const torch::Tensor& t) {
  return fused_kernels_enabled() && t.is_cuda() &&
         (t.scalar_type() == torch::kFloat || t.scalar_type() == torch::kDouble);
}
#endif

}  // namespace

bool fused_kernels_available() {
#ifdef ATTN_WITH_CUDA
  return cuda::device_present();
#else
  return false;
#endif
}

std::string cuda_device_name() {
#ifdef ATTN_WITH_CUDA
  return cuda::device_name();
#else
  return {};
#endif
}

int64_t cuda_memory_allocated() {
#ifdef ATTN_WITH_CUDA
  return cuda::memory_allocated();
#else
  return 0;
#endif
}

void release_cuda_cache() {
#ifdef ATTN_WITH_CUDA
  cuda::empty_cache();
#endif
}

void set_fused_kernels_enabled(bool enabled) {
  g_fused_enabled = enabled;
}
bool fused_kernels_enabled() {
  return g_fused_enabled;
}

namespace {
std::atomic<bool> g_fused_path_taken{false};
}
void note_fused_path() {
  g_fused_path_taken.store(true, std::memory_order_relaxed);
}
bool fused_path_taken() {
  return g_fused_path_taken.load(std::memory_order_relaxed);
}
void reset_fused_path_taken() {
  g_fused_path_taken.store(false, std::memory_order_relaxed);
}

bool neural_cpu_kernel_applies(const torch::Tensor& p, NeuralActivation act) {
  return fused_kernels_enabled() && cpu::accepts(p) && act == NeuralActivation::relu;
}

torch::Tensor gaussian_kernel_map(const torch::Tensor& x, double sigma) {
#ifdef ATTN_WITH_CUDA
  if (fused_path(x)) return cuda::gaussian_map(x, sigma);
#endif
  if (fused_kernels_enabled() && cpu::accepts(x)) {
    note_fused_path();
    return cpu::gaussian_map(x, sigma);
  }
  return gaussian_kernel_map_reference(x, sigma);
}

torch::Tensor neural_attention(const torch::Tensor& p, const torch::Tensor& r,
                               const torch::Tensor& w, const torch::Tensor& b,
                               const torch::Tensor& v, NeuralActivation act, double scale,
                               bool causal, torch::Tensor* weights, const torch::Tensor& keep,
                               const torch::Tensor& slopes) {
#ifdef ATTN_WITH_CUDA
  // The fused kernel never forms the weights; the probe (weights requested) takes the reference,
  // as do dropout and ALiBi, which it has no argument for.
  if (!weights && !keep.defined() && !slopes.defined() && fused_path(p) &&
      p.size(3) <= cuda::kNeuralMaxWidth && v.size(3) <= cuda::kNeuralMaxWidth)
    return cuda::neural(p, r, w, b, v, act, scale, causal);
#endif
  if (neural_cpu_kernel_applies(p, act)) {
    note_fused_path();
    // Scores from the kernel ([B, H, n, n], like dot's), then ALiBi, mask, softmax, dropout and
    // values as the reference's blocks do.
    const int64_t n = p.size(2);
    // b is left out: softmax is shift-invariant, so it changes nothing and its gradient is
    // exactly 0; "+ 0 b" on the output keeps that gradient defined and exact, as the reference's.
    auto scores = cpu::neural_relu_scores(p, r, w, causal) * scale;
    if (slopes.defined()) {
      auto index = torch::arange(n, torch::TensorOptions().dtype(scores.scalar_type()));
      auto distance = index.unsqueeze(1) - index.unsqueeze(0);  // i - j
      if (!causal) distance = distance.abs();
      scores = scores - slopes.view({1, -1, 1, 1}) * distance;
    }
    if (causal) scores = scores.masked_fill(causal_mask(n, scores.device()), -INFINITY);
    auto attention = torch::softmax(scores, -1);
    if (weights) *weights = attention;
    if (keep.defined()) attention = attention * keep;  // dropout, after the probe's copy
    return torch::matmul(attention, v) + (b * 0).view({1, -1, 1, 1});
  }
  return neural_attention_reference(p, r, w, b, v, act, scale, causal, 32, weights, keep, slopes);
}

}  // namespace attn
