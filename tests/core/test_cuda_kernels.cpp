// The fused CUDA kernels against their LibTorch reference paths, forward and every gradient, in
// float64 and float32, on random inputs at odd sizes. Suite "gpu": without a GPU (or in a build
// without kernels) every case is skipped (doctest's skip), and ctest's `gpu` test reports it
// as skipped (tests/core/main.cpp exits 77).
#include <doctest/doctest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/attention/fused_attention.h"
#include "core/attention/ky/ky_attention.h"

using namespace attn;

namespace {

// Decides at start-up, before any case runs: a skipped case is reported as skipped, not passed.
const bool kNoGpu = !fused_kernels_available();

using Fn = std::function<torch::Tensor(const std::vector<torch::Tensor>&)>;

struct Outcome {
  std::vector<double> errors;  // output, then the gradient of each input (relative L2)
  std::string fused_node;      // grad_fn of the fused run's output
};

// Runs fn with the kernels on (inputs cast to dtype) and off (the reference, in float64, on the
// same device) and compares the output and the gradients of a fixed random projection of it.
Outcome compare(const Fn& fn, const std::vector<torch::Tensor>& inputs, torch::Dtype dtype) {
  torch::Tensor projection;
  auto run = [&](bool fused, torch::Dtype type, std::string* node) {
    set_fused_kernels_enabled(fused);
    std::vector<torch::Tensor> leaves;
    for (const auto& t : inputs) leaves.push_back(t.to(type).detach().requires_grad_(true));
    auto out = fn(leaves);
    if (node) *node = out.grad_fn() ? out.grad_fn()->name() : "none";
    if (!projection.defined()) projection = torch::randn_like(out).to(torch::kDouble);
    (out * projection.to(type)).sum().backward();
    std::vector<torch::Tensor> result{out.detach().to(torch::kDouble)};
    for (auto& l : leaves)
      result.push_back(l.grad().defined() ? l.grad().to(torch::kDouble)
                                          : torch::zeros_like(l).to(torch::kDouble));
    set_fused_kernels_enabled(true);
    return result;
  };
  Outcome o;
  auto fused = run(true, dtype, &o.fused_node);
  auto ref = run(false, torch::kDouble, nullptr);
  for (size_t i = 0; i < fused.size(); ++i) {
    const double denom = std::max(ref[i].norm().item<double>(), 1e-300);
    const double err = (fused[i] - ref[i]).norm().item<double>() / denom;
    o.errors.push_back(std::isfinite(err) ? err : 1e300);
  }
  return o;
}

void check_outcome(const Outcome& o, torch::Dtype dtype, const std::string& what,
                   const std::vector<bool>& expect_gradient) {
  const double tol = dtype == torch::kDouble ? 1e-10 : 2e-4;
  INFO(what);
  CHECK_MESSAGE(o.fused_node.find("Function") != std::string::npos,
                "the fused kernel did not run: grad_fn is " << o.fused_node);
  for (size_t i = 0; i < o.errors.size(); ++i) {
    if (i > 0 && !expect_gradient[i - 1]) continue;
    INFO("tensor " << i << " (0 = output, then input gradients)");
    CHECK(o.errors[i] < tol);
  }
}

torch::Tensor rand_cuda(std::vector<int64_t> shape, double scale = 1.0) {
  return torch::randn(shape, torch::dtype(torch::kDouble).device(torch::kCUDA)) * scale;
}

}  // namespace

TEST_SUITE("gpu") {

TEST_CASE("cuda kernels: KY window equals the reference, forward and gradients" * doctest::skip(kNoGpu)) {
  torch::manual_seed(11);
  struct Case {
    int64_t B, H, L, D;
    int W;
    bool causal, masked;
  };
  const Case cases[] = {{2, 3, 37, 16, 5, true, true},   {1, 2, 50, 64, 15, false, false},
                        {2, 1, 19, 128, 8, true, false}, {1, 2, 33, 24, 4, false, true},
                        {1, 1, 7, 40, 16, true, true},   {1, 2, 45, 200, 6, true, true},
                        {1, 2, 21, 33, 7, true, false}};  // odd D: scalar loads
  for (const auto& c : cases) {
    const int first = ky_first_offset(c.W, c.causal);
    Fn fn = [&](const std::vector<torch::Tensor>& t) {
      return windowed_attention(t[0], t[1], t[2], t[3], c.W, first, c.masked);
    };
    std::vector<torch::Tensor> in{rand_cuda({c.B, c.H, c.L, c.D}), rand_cuda({c.B, c.H, c.L, c.D}),
                                  rand_cuda({c.B, c.H, c.L, c.D}), rand_cuda({c.H, c.W})};
    for (auto dtype : {torch::kDouble, torch::kFloat}) {
      const std::string what = "L=" + std::to_string(c.L) + " D=" + std::to_string(c.D) +
                               " W=" + std::to_string(c.W) + (c.causal ? " causal" : " centered") +
                               (c.masked ? " masked" : " zero-pad") +
                               (dtype == torch::kDouble ? " f64" : " f32");
      check_outcome(compare(fn, in, dtype), dtype, what, {true, true, true, true});
    }
  }
}

TEST_CASE("cuda kernels: Gaussian map equals the reference, forward and gradient" * doctest::skip(kNoGpu)) {
  torch::manual_seed(12);
  struct Case {
    int64_t B, H, S, D;
    double sigma;
  };
  const Case cases[] = {{2, 3, 17, 16, 1.0},
                        {1, 2, 37, 24, 0.7},
                        {2, 1, 20, 40, 1.5},
                        {1, 1, 65, 128, 1.0},
                        {3, 2, 5, 7, 2.0}};
  for (const auto& c : cases) {
    Fn fn = [&](const std::vector<torch::Tensor>& t) { return gaussian_kernel_map(t[0], c.sigma); };
    std::vector<torch::Tensor> in{rand_cuda({c.B, c.H, c.S, c.D})};
    for (auto dtype : {torch::kDouble, torch::kFloat}) {
      const std::string what = "S=" + std::to_string(c.S) + " D=" + std::to_string(c.D) +
                               (dtype == torch::kDouble ? " f64" : " f32");
      check_outcome(compare(fn, in, dtype), dtype, what, {true});
    }
  }
}

TEST_CASE("cuda kernels: Neural attention equals the reference, forward and gradients" * doctest::skip(kNoGpu)) {
  torch::manual_seed(13);
  struct Case {
    int64_t B, H, N, C, Dv;
    NeuralActivation act;
    bool causal;
  };
  const Case cases[] = {{2, 2, 37, 16, 16, NeuralActivation::relu, true},
                        {1, 3, 50, 64, 64, NeuralActivation::gelu, false},
                        {1, 1, 33, 100, 128, NeuralActivation::tanh, true},
                        {2, 1, 70, 32, 24, NeuralActivation::relu, false},
                        {1, 2, 129, 64, 32, NeuralActivation::gelu, true}};
  for (const auto& c : cases) {
    const double scale = 1.0 / std::sqrt(double(c.C));
    Fn fn = [&](const std::vector<torch::Tensor>& t) {
      return neural_attention(t[0], t[1], t[2], t[3], t[4], c.act, scale, c.causal);
    };
    std::vector<torch::Tensor> in{rand_cuda({c.B, c.H, c.N, c.C}), rand_cuda({c.B, c.H, c.N, c.C}),
                                  rand_cuda({c.H, c.C}), rand_cuda({c.H}),
                                  rand_cuda({c.B, c.H, c.N, c.Dv})};
    for (auto dtype : {torch::kDouble, torch::kFloat}) {
      const std::string what = "N=" + std::to_string(c.N) + " C=" + std::to_string(c.C) +
                               " Dv=" + std::to_string(c.Dv) + " " + neural_activation_name(c.act) +
                               (c.causal ? " causal" : "") +
                               (dtype == torch::kDouble ? " f64" : " f32");
      const auto o = compare(fn, in, dtype);
      // The score bias b gets exactly zero gradient on both paths (softmax is shift-invariant).
      check_outcome(o, dtype, what, {true, true, true, false, true});
    }
  }
}

}  // TEST_SUITE("gpu")
