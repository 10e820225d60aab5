// Dot-product attention against an independent brute-force implementation, in double.
#include <doctest/doctest.h>

#include "core/attention/dot/dot_attention.h"
#include "core/attention/registry.h"
#include "tests/core/attention_reference.h"

using namespace attn;

namespace {

std::shared_ptr<DotAttention> make(int D, int H, bool causal) {
  AttentionSpec spec;
  spec.d_model = D;
  spec.heads = H;
  spec.causal = causal;
  auto a = std::make_shared<DotAttention>(spec);
  a->to(torch::kDouble);
  return a;
}

}  // namespace

TEST_CASE("dot attention equals the brute-force formula (causal and bidirectional)") {
  torch::manual_seed(3);
  for (bool causal : {true, false}) {
    auto a = make(8, 2, causal);
    auto x = torch::randn({2, 5, 8}, torch::kDouble);
    auto got = a->forward(x);
    auto want = test::reference_attention(*a, x, 2, causal);
    CHECK(got.sizes() == want.sizes());
    CHECK((got - want).abs().max().item<double>() < 1e-12);
  }
}

TEST_CASE("recorded weights are row-stochastic and zero above the diagonal when causal") {
  torch::manual_seed(4);
  auto a = make(12, 3, true);
  a->record_weights = true;
  a->forward(torch::randn({2, 6, 12}, torch::kDouble));
  auto w = a->recorded_weights;
  REQUIRE(w.defined());
  CHECK(w.sizes() == torch::IntArrayRef({2, 3, 6, 6}));
  CHECK((w.sum(-1) - 1).abs().max().item<double>() < 1e-12);
  CHECK(w.triu(1).abs().max().item<double>() == 0.0);
  auto on_or_below = torch::ones({6, 6}, torch::kBool).tril();
  CHECK(w.masked_select(on_or_below).min().item<double>() > 0.0);
}

TEST_CASE("dot attention gradients match central finite differences (double)") {
  torch::manual_seed(5);
  auto a = make(6, 2, true);
  auto x = torch::randn({1, 4, 6}, torch::kDouble);
  auto target = torch::randn({1, 4, 6}, torch::kDouble);
  auto loss_of = [&] { return (a->forward(x) - target).pow(2).sum(); };
  a->zero_grad();
  loss_of().backward();
  auto W = a->named_parameters()["qkv.weight"];
  auto grad = W.grad().clone();
  const double h = 1e-6;
  torch::NoGradGuard no_grad;
  for (int64_t r : {0, 5, 7, 13, 17}) {
    for (int64_t c : {0, 3, 5}) {
      const double w0 = W[r][c].item<double>();
      W[r][c] = w0 + h;
      const double up = loss_of().item<double>();
      W[r][c] = w0 - h;
      const double down = loss_of().item<double>();
      W[r][c] = w0;
      const double fd = (up - down) / (2 * h);
      CHECK(grad[r][c].item<double>() == doctest::Approx(fd).epsilon(1e-6));
    }
  }
}

TEST_CASE("the registry builds dot and rejects unknown names and options") {
  AttentionSpec spec;
  spec.d_model = 8;
  spec.heads = 2;
  auto m = make_attention("dot", spec);
  CHECK(m->forward(torch::randn({1, 3, 8})).sizes() == torch::IntArrayRef({1, 3, 8}));
  CHECK_THROWS_WITH_AS(make_attention("nope", spec), doctest::Contains("nope"), std::exception);
  CHECK_THROWS_WITH_AS(validate_attention_options("dot", {{"window", 3}}),
                       doctest::Contains("model.attention_options.dot.window"), std::exception);
}
