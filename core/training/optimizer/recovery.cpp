#include "core/training/optimizer/recovery.h"

#include <cstring>
#include <string>

#include "core/training/optimizer/adamw_state.h"

namespace attn {
namespace {

// Copies src into *dst, allocating *dst only when its shape or type does not fit.
void copy_into(torch::Tensor* dst, const torch::Tensor& src) {
  if (!src.defined()) {
    *dst = torch::Tensor();
    return;
  }
  if (!dst->defined() || !dst->sizes().equals(src.sizes()) || dst->dtype() != src.dtype() ||
      dst->device() != src.device())
    *dst = torch::empty_like(src, torch::MemoryFormat::Contiguous);
  // A plain memcpy on the CPU: capture() runs before every update, ~90 tensors for a small
  // model, and copy_'s dispatch costs more than the copy there.
  if (src.device().is_cpu() && src.is_contiguous())
    std::memcpy(dst->data_ptr(), src.data_ptr(), src.nbytes());
  else
    dst->copy_(src);
}

std::vector<torch::Tensor> state_tensors(torch::nn::Module& model) {
  std::vector<torch::Tensor> out = model.parameters();
  for (const auto& b : model.buffers()) out.push_back(b);
  return out;
}

}  // namespace

void GoodState::capture(torch::nn::Module& model, torch::optim::AdamW& optimizer) {
  torch::NoGradGuard no_grad;
  const auto live = state_tensors(model);
  tensors_.resize(live.size());
  for (size_t i = 0; i < live.size(); ++i) copy_into(&tensors_[i], live[i]);
  size_t k = 0;
  auto& states = optimizer.state();
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      if (k >= moments_.size()) moments_.emplace_back();
      Moments& m = moments_[k++];
      auto it = states.find(adamw_state_key(states, p));
      m.present = it != states.end();
      if (!m.present) continue;
      auto& s = static_cast<torch::optim::AdamWParamState&>(*it->second);
      m.step = s.step();
      copy_into(&m.exp_avg, s.exp_avg());
      copy_into(&m.exp_avg_sq, s.exp_avg_sq());
      copy_into(&m.max_exp_avg_sq, s.max_exp_avg_sq());
    }
  }
  moments_.resize(k);
  captured_ = true;
}

void GoodState::restore(torch::nn::Module& model, torch::optim::AdamW& optimizer) const {
  TORCH_CHECK(captured_, "GoodState::restore without a capture");
  torch::NoGradGuard no_grad;
  auto live = state_tensors(model);
  TORCH_CHECK(live.size() == tensors_.size(), "GoodState::restore: another model");
  for (size_t i = 0; i < live.size(); ++i) live[i].copy_(tensors_[i]);
  size_t k = 0;
  auto& states = optimizer.state();
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      TORCH_CHECK(k < moments_.size(), "GoodState::restore: another optimiser");
      const Moments& m = moments_[k++];
      const auto key = adamw_state_key(states, p);
      if (!m.present) {
        states.erase(key);
        continue;
      }
      auto state = std::make_unique<torch::optim::AdamWParamState>();
      state->step(m.step);
      // Fresh clones: the optimiser updates its moments in place, the copy must stay intact.
      state->exp_avg(m.exp_avg.clone());
      state->exp_avg_sq(m.exp_avg_sq.clone());
      if (m.max_exp_avg_sq.defined()) state->max_exp_avg_sq(m.max_exp_avg_sq.clone());
      states[key] = std::move(state);
    }
  }
}

}  // namespace attn
