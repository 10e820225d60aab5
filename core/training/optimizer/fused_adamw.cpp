#include "core/training/optimizer/fused_adamw.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <cmath>
#include <cstring>

#include "core/kernels/cpu_kernels.h"
#include "core/training/optimizer/adamw_state.h"

namespace attn {
namespace {

bool fused_tensor(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
         t.is_contiguous();
}

// One tensor's update: p, g, m, v of n elements. The operations and their order are
// torch::optim::AdamW::step()'s (torch/csrc/api/src/optim/adamw.cpp), in float like its CPU
// kernels, so the two agree to rounding.
struct Update {
  float* p;
  float* g;
  float* m;
  float* v;
  int64_t n;
  float decay;  // 1 - lr * weight_decay
  float beta1, beta2;
  float one_minus_beta1, one_minus_beta2;
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^step)
  float eps;
  float neg_step_size;  // -lr / (1 - beta1^step)
  float grad_scale;     // the clip coefficient
};

// Straight-line float arithmetic GCC vectorises (AVX2 where the CPU has it); the finiteness
// test is an integer OR over the exponent bits, which vectorises where std::isfinite does not.
// Returns false if an updated weight is Inf or NaN.
ATTN_CPU_CLONES bool update_range(const Update& u, int64_t begin, int64_t end) {
  float* __restrict p = u.p;
  float* __restrict g = u.g;
  float* __restrict m = u.m;
  float* __restrict v = u.v;
  if (u.grad_scale != 1.0f)
    for (int64_t i = begin; i < end; ++i) g[i] *= u.grad_scale;
  uint32_t bad = 0;
  for (int64_t i = begin; i < end; ++i) {
    const float gi = g[i];
    float pi = p[i] * u.decay;
    const float mi = m[i] * u.beta1 + u.one_minus_beta1 * gi;
    const float vi = v[i] * u.beta2 + u.one_minus_beta2 * gi * gi;
    const float denom = std::sqrt(vi) * u.inv_sqrt_bc2 + u.eps;
    pi += u.neg_step_size * mi / denom;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi;
    uint32_t bits;
    std::memcpy(&bits, &pi, sizeof bits);
    bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

}  // namespace

bool fused_adamw_applies(torch::optim::AdamW& optimizer) {
  for (auto& group : optimizer.param_groups()) {
    if (static_cast<torch::optim::AdamWOptions&>(group.options()).amsgrad()) return false;
    for (const auto& p : group.params())
      if (!fused_tensor(p)) return false;
  }
  return true;
}

double gradient_norm(const std::vector<torch::Tensor>& parameters) {
  double sum = 0;
  for (const auto& p : parameters) {
    const auto& g = p.grad();
    if (!g.defined()) continue;
    if (!fused_tensor(g)) {
      sum += g.to(torch::kFloat64).pow(2).sum().item<double>();
      continue;
    }
    const float* x = g.data_ptr<float>();
    const int64_t n = g.numel();
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
    sum += s;
  }
  return std::sqrt(sum);
}

double clip_coefficient(double norm, double max_norm) {
  return std::min(1.0, max_norm / (norm + 1e-6));
}

bool fused_adamw_step(torch::optim::AdamW& optimizer, double grad_scale) {
  torch::NoGradGuard no_grad;
  std::vector<Update> updates;
  auto& states = optimizer.state();
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    for (auto& p : group.params()) {
      auto g = p.grad();
      if (!g.defined()) continue;
      TORCH_CHECK(fused_tensor(p) && fused_tensor(g), "fused_adamw_step: not a fused tensor");
      const auto key = adamw_state_key(states, p);
      auto it = states.find(key);
      if (it == states.end()) {
        auto state = std::make_unique<torch::optim::AdamWParamState>();
        state->step(0);
        state->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
        state->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
        it = states.emplace(key, std::move(state)).first;
      }
      auto& s = static_cast<torch::optim::AdamWParamState&>(*it->second);
      // A loaded checkpoint's moments may be strided: made contiguous once, in the state.
      if (!fused_tensor(s.exp_avg())) s.exp_avg(s.exp_avg().contiguous().to(torch::kFloat32));
      if (!fused_tensor(s.exp_avg_sq()))
        s.exp_avg_sq(s.exp_avg_sq().contiguous().to(torch::kFloat32));
      s.step(s.step() + 1);
      const double bc1 = 1 - std::pow(beta1, s.step()), bc2 = 1 - std::pow(beta2, s.step());
      Update u;
      u.p = p.data_ptr<float>();
      u.g = g.data_ptr<float>();
      u.m = s.exp_avg().data_ptr<float>();
      u.v = s.exp_avg_sq().data_ptr<float>();
      u.n = p.numel();
      u.decay = static_cast<float>(1 - o.lr() * o.weight_decay());
      u.beta1 = static_cast<float>(beta1);
      u.beta2 = static_cast<float>(beta2);
      u.one_minus_beta1 = static_cast<float>(1 - beta1);
      u.one_minus_beta2 = static_cast<float>(1 - beta2);
      u.inv_sqrt_bc2 = static_cast<float>(1 / std::sqrt(bc2));
      u.eps = static_cast<float>(o.eps());
      u.neg_step_size = static_cast<float>(-o.lr() / bc1);
      u.grad_scale = static_cast<float>(grad_scale);
      updates.push_back(u);
    }
  }
  // Small models: one thread, no parallel region to enter. Large ones: chunks across the
  // intra-op team the thread policy chose.
  int64_t total = 0;
  for (const auto& u : updates) total += u.n;
  constexpr int64_t kChunk = 1 << 15;
  if (total < 4 * kChunk || at::get_num_threads() == 1) {
    bool finite = true;
    for (const auto& u : updates) finite &= update_range(u, 0, u.n);
    return finite;
  }
  struct Piece {
    size_t update;
    int64_t begin, end;
  };
  std::vector<Piece> pieces;
  for (size_t k = 0; k < updates.size(); ++k)
    for (int64_t b = 0; b < updates[k].n; b += kChunk)
      pieces.push_back({k, b, std::min(updates[k].n, b + kChunk)});
  std::atomic<bool> finite{true};
  at::parallel_for(0, static_cast<int64_t>(pieces.size()), 1, [&](int64_t lo, int64_t hi) {
    bool ok = true;
    for (int64_t i = lo; i < hi; ++i)
      ok &= update_range(updates[pieces[i].update], pieces[i].begin, pieces[i].end);
    if (!ok) finite.store(false, std::memory_order_relaxed);
  });
  return finite.load();
}

void zero_gradients(const std::vector<torch::Tensor>& parameters) {
  for (const auto& p : parameters) {
    const auto& g = p.grad();
    if (!g.defined()) continue;
    if (fused_tensor(g))
      std::memset(g.data_ptr(), 0, g.nbytes());
    else
      p.mutable_grad().zero_();
  }
}

}  // namespace attn
