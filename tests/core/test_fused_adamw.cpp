// The fused CPU optimiser step (core/training/optimizer/fused_adamw.h) against LibTorch's own AdamW and
// clip_grad_norm_, run side by side on identical copies of the same parameters.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "core/training/optimizer/adamw_state.h"
#include "core/training/optimizer/fused_adamw.h"

namespace {

using attn::adamw_state_key;

// Two groups as the session makes them (decayed matrices, undecayed rest), shapes of a small
// transformer's tensors; `skip` never gets a gradient (skipped by both, state never created).
struct Params {
  std::vector<torch::Tensor> decay, no_decay;
  torch::Tensor skip;
  std::vector<torch::Tensor> all() const {
    auto v = decay;
    v.insert(v.end(), no_decay.begin(), no_decay.end());
    v.push_back(skip);
    return v;
  }
};

Params make_params(uint64_t seed) {
  torch::manual_seed(seed);
  auto leaf = [](std::vector<int64_t> shape) { return torch::randn(shape).requires_grad_(); };
  Params p;
  p.decay = {leaf({16, 8}), leaf({8, 24}), leaf({3, 5, 7})};
  p.no_decay = {leaf({8}), leaf({24}), leaf({1})};
  p.skip = leaf({4, 4});
  return p;
}

torch::optim::AdamW make_optimizer(const Params& p, double wd) {
  auto options = [&](double decay) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(1e-2).betas({0.9, 0.98}).weight_decay(decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  auto first = p.decay;
  first.push_back(p.skip);
  groups.emplace_back(first, options(wd));
  groups.emplace_back(p.no_decay, options(0.0));
  return torch::optim::AdamW(std::move(groups), torch::optim::AdamWOptions(1e-2));
}

void set_grads(const Params& p, uint64_t seed, double scale) {
  torch::manual_seed(seed);
  for (auto group : {p.decay, p.no_decay})
    for (const auto& t : group) t.mutable_grad() = torch::randn(t.sizes()) * scale;
}

void set_lr(torch::optim::AdamW& opt, double lr) {
  for (auto& g : opt.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
}

// Largest difference relative to the reference tensor's largest magnitude: the moments have
// near-zero elements whose own relative rounding error means nothing.
double max_rel(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(1e-12, b.abs().max().item<double>());
}

}  // namespace

TEST_CASE("fused AdamW equals torch's AdamW after clip_grad_norm_, step by step") {
  for (double scale : {0.01, 10.0}) {  // below and above the clip threshold
    CAPTURE(scale);
    Params ref = make_params(3), fused = make_params(3);
    auto ref_opt = make_optimizer(ref, 0.1), fused_opt = make_optimizer(fused, 0.1);
    REQUIRE(attn::fused_adamw_applies(fused_opt));
    for (int step = 0; step < 25; ++step) {
      const double lr = 1e-2 * (1.0 + 0.5 * std::cos(step * 0.3));
      set_lr(ref_opt, lr);
      set_lr(fused_opt, lr);
      set_grads(ref, 100 + step, scale);
      set_grads(fused, 100 + step, scale);
      const double ref_norm = torch::nn::utils::clip_grad_norm_(ref.all(), 1.0);
      const double norm = attn::gradient_norm(fused.all());
      CHECK(norm == doctest::Approx(ref_norm).epsilon(1e-6));
      ref_opt.step();
      REQUIRE(attn::fused_adamw_step(fused_opt, attn::clip_coefficient(norm, 1.0)));
    }
    const auto r = ref.all(), f = fused.all();
    for (size_t i = 0; i < r.size(); ++i) {
      CAPTURE(i);
      CHECK(max_rel(f[i], r[i]) < 1e-5);
      CHECK(max_rel(f[i].grad().defined() ? f[i].grad() : torch::zeros({1}),
                    r[i].grad().defined() ? r[i].grad() : torch::zeros({1})) < 1e-5);
    }
    // The moments live in the optimiser's own state, equal to torch's; `skip` has none.
    auto& rs = ref_opt.state();
    auto& fs = fused_opt.state();
    CHECK(fs.size() == rs.size());
    CHECK(fs.count(adamw_state_key(fs, fused.skip)) == 0);
    for (size_t i = 0; i + 1 < r.size(); ++i) {
      auto& a = static_cast<torch::optim::AdamWParamState&>(*rs.at(adamw_state_key(rs, r[i])));
      auto& b = static_cast<torch::optim::AdamWParamState&>(*fs.at(adamw_state_key(fs, f[i])));
      CHECK(b.step() == a.step());
      CHECK(max_rel(b.exp_avg(), a.exp_avg()) < 1e-5);
      CHECK(max_rel(b.exp_avg_sq(), a.exp_avg_sq()) < 1e-5);
    }
  }
}

TEST_CASE("fused AdamW continues torch's state and the reverse (checkpoints mix freely)") {
  Params ref = make_params(5), mixed = make_params(5);
  auto ref_opt = make_optimizer(ref, 0.05), mixed_opt = make_optimizer(mixed, 0.05);
  for (int step = 0; step < 12; ++step) {
    set_grads(ref, 200 + step, 0.3);
    set_grads(mixed, 200 + step, 0.3);
    ref_opt.step();
    if (step % 3 == 1)
      mixed_opt.step();  // torch's step on state the fused step made, and the other way round
    else
      REQUIRE(attn::fused_adamw_step(mixed_opt, 1.0));
  }
  const auto r = ref.all(), m = mixed.all();
  for (size_t i = 0; i < r.size(); ++i) CHECK(max_rel(m[i], r[i]) < 1e-5);
}

TEST_CASE("fused AdamW reports a non-finite weight, and zero_gradients zeroes in place") {
  Params p = make_params(7);
  auto opt = make_optimizer(p, 0.0);
  set_grads(p, 1, 1.0);
  CHECK(attn::fused_adamw_step(opt, 1.0));
  p.no_decay[1].grad()[3] = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(attn::fused_adamw_step(opt, 1.0));
  CHECK(std::isnan(p.no_decay[1][3].item<float>()));
  CHECK_FALSE(std::isfinite(attn::gradient_norm(p.all())));

  const auto before = p.decay[0].grad().data_ptr();
  attn::zero_gradients(p.all());
  CHECK(p.decay[0].grad().data_ptr() == before);  // the same buffer, for backward to fill
  for (const auto& t : p.all())
    if (t.grad().defined()) CHECK(t.grad().abs().sum().item<double>() == 0.0);
  CHECK_FALSE(p.skip.grad().defined());
}

TEST_CASE("fused AdamW does not apply to double, strided or amsgrad parameters") {
  auto d = torch::randn({4, 4}, torch::kFloat64).requires_grad_();
  torch::optim::AdamW doubles({d});
  CHECK_FALSE(attn::fused_adamw_applies(doubles));
  auto base = torch::randn({4, 4});
  auto strided = base.t().requires_grad_();  // a non-contiguous leaf
  torch::optim::AdamW transposed({strided});
  CHECK_FALSE(attn::fused_adamw_applies(transposed));
  auto f = torch::randn({4}).requires_grad_();
  torch::optim::AdamW ams({f}, torch::optim::AdamWOptions(1e-3).amsgrad(true));
  CHECK_FALSE(attn::fused_adamw_applies(ams));
  torch::optim::AdamW plain({f});
  CHECK(attn::fused_adamw_applies(plain));
}
