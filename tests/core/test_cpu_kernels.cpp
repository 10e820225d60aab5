// The fused CPU kernels (core/kernels/cpu_kernels.h) against the LibTorch references they
// replace (computed by other code: chunked autograd-free reference and autograd of the literal
// form) and against central finite differences in float64.
#include <doctest/doctest.h>

#include "core/kernels/cpu_kernels.h"
#include "core/kernels/fused_attention.h"

using namespace attn;

namespace {

// The largest difference relative to the largest magnitude of the reference b (gradients mix
// signs, so entries near zero carry only rounding).
double max_rel_diff(const torch::Tensor& a, const torch::Tensor& b) {
  auto ad = a.to(torch::kDouble), bd = b.to(torch::kDouble);
  return (ad - bd).abs().max().item<double>() / std::max(1e-12, bd.abs().max().item<double>());
}

// The literal [B, H, S, S, Dh, Dh] form: autograd gives its gradient independently of both the
// chunked reference's hand-written backward and the kernel's.
torch::Tensor gaussian_literal(const torch::Tensor& x, double sigma) {
  auto k = x.unsqueeze(3).unsqueeze(5) - x.unsqueeze(2).unsqueeze(4);
  return torch::exp(-k.pow(2) / (2 * sigma * sigma)).sum({4, 5});
}

struct Shape {
  int64_t B, H, S, Dh;
  double sigma;
};
const Shape kShapes[] = {{1, 1, 1, 1, 1.0},
                         {2, 3, 13, 5, 0.7},
                         {1, 2, 33, 8, 1.3},
                         {2, 1, 9, 16, 0.4},
                         {1, 1, 64, 3, 2.0}};

}  // namespace

TEST_CASE("cpu gaussian map: forward and gradient match the literal form (float64, float32)") {
  torch::manual_seed(21);
  for (const auto& sh : kShapes) {
    for (const auto dtype : {torch::kDouble, torch::kFloat}) {
      CAPTURE(sh.S);
      CAPTURE(sh.Dh);
      CAPTURE(dtype);
      const double tol = dtype == torch::kDouble ? 1e-11 : 2e-5;
      auto x0 = torch::randn({sh.B, sh.H, sh.S, sh.Dh}, torch::kDouble);
      auto upstream = torch::randn({sh.B, sh.H, sh.S, sh.S}, torch::kDouble);  // not symmetric
      auto xl = x0.clone().requires_grad_(true);
      auto literal = gaussian_literal(xl, sh.sigma);
      (literal * upstream).sum().backward();
      auto xk = x0.to(dtype).requires_grad_(true);
      auto kernel = cpu::gaussian_map(xk, sh.sigma);
      (kernel * upstream.to(dtype)).sum().backward();
      REQUIRE(kernel.sizes() == literal.sizes());
      CHECK(max_rel_diff(kernel, literal) < tol);
      CHECK(max_rel_diff(xk.grad(), xl.grad()) < (dtype == torch::kDouble ? 1e-11 : 2e-5));
      // The chunked reference (a second, independent implementation) agrees as well.
      CHECK(max_rel_diff(kernel, gaussian_kernel_map_reference(x0.to(dtype), sh.sigma)) < tol);
    }
  }
}

TEST_CASE("cpu gaussian map: gradient against central finite differences (float64)") {
  torch::manual_seed(5);
  const double sigma = 0.8, h = 1e-5;
  auto x = torch::randn({2, 2, 7, 4}, torch::kDouble);
  auto upstream = torch::randn({2, 2, 7, 7}, torch::kDouble);
  auto loss = [&](const torch::Tensor& t) {
    return (cpu::gaussian_map(t, sigma) * upstream).sum().item<double>();
  };
  auto xg = x.clone().requires_grad_(true);
  (cpu::gaussian_map(xg, sigma) * upstream).sum().backward();
  auto analytic = xg.grad();
  auto numeric = torch::empty_like(x);
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto plus = x.clone(), minus = x.clone();
    plus.view({-1})[i] += h;
    minus.view({-1})[i] -= h;
    numeric.view({-1})[i] = (loss(plus) - loss(minus)) / (2 * h);
  }
  CHECK(max_rel_diff(analytic, numeric) < 1e-7);
}

TEST_CASE("cpu gaussian map: the dispatcher takes it on the CPU; off, the reference") {
  torch::manual_seed(8);
  auto x = torch::randn({1, 2, 10, 4});
  auto fused = gaussian_kernel_map(x, 0.9);
  set_fused_kernels_enabled(false);
  auto reference = gaussian_kernel_map(x, 0.9);
  set_fused_kernels_enabled(true);
  CHECK(max_rel_diff(fused, reference) < 2e-5);
  CHECK(torch::equal(fused, cpu::gaussian_map(x, 0.9)));  // the kernel, not the reference
  CHECK_THROWS_WITH(cpu::gaussian_map(x, -1.0), doctest::Contains("sigma must be finite and > 0"));
}
