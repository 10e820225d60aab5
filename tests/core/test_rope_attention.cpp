// Rotary-position attention (core/attention/rope/) against an independent brute force in double:
// explicit 2x2 rotation matrices per position and feature pair, plain loops for the softmax.
// Also: scores depend on the relative offset only, gradients match finite differences, the
// registry row works end to end (config, parameter count, a model that trains).
#include <doctest/doctest.h>

#include <cmath>

#include "core/attention/registry.h"
#include "core/attention/rope/rope_attention.h"
#include "core/base/error.h"
#include "core/config/config.h"
#include "core/training/session.h"
#include "tests/core/attention_reference.h"
#include "tests/core/helpers.h"

using namespace attn;

namespace {

// The rotation of feature pair (i, i + Dh/2) at position p, applied to one vector, with std::
// maths only: [a'; b'] = [cos -sin; sin cos] [a; b], angle p * base^(-2i/Dh).
std::vector<double> rotate_pairs(std::vector<double> v, int64_t p, double base) {
  const int64_t Dh = static_cast<int64_t>(v.size()), half = Dh / 2;
  for (int64_t i = 0; i < half; ++i) {
    const double angle = double(p) * std::pow(base, -2.0 * double(i) / double(Dh));
    const double a = v[i], b = v[i + half];
    v[i] = std::cos(angle) * a - std::sin(angle) * b;
    v[i + half] = std::sin(angle) * a + std::cos(angle) * b;
  }
  return v;
}

std::shared_ptr<RopeAttention> make(int D, int H, bool causal, nlohmann::json options = {}) {
  AttentionSpec spec;
  spec.d_model = D;
  spec.heads = H;
  spec.causal = causal;
  spec.options = options.is_null() ? nlohmann::json::object() : options;
  auto a = std::make_shared<RopeAttention>(spec);
  a->to(torch::kDouble);
  return a;
}

}  // namespace

TEST_CASE("rope attention equals the brute-force rotation formula (causal and bidirectional)") {
  torch::manual_seed(11);
  for (bool causal : {true, false}) {
    for (double base : {10000.0, 3.0}) {  // 3: large angles, every pair turns visibly
      auto a = make(12, 2, causal, {{"base", base}});
      auto x = torch::randn({2, 7, 12}, torch::kDouble);
      auto got = a->forward(x);
      auto want = test::reference_attention(
          *a, x, 2, causal,
          [&](std::vector<double> v, int64_t p) { return rotate_pairs(v, p, base); });
      CHECK((got - want).abs().max().item<double>() < 1e-12);
    }
  }
}

TEST_CASE("rotated scores depend on the relative offset only") {
  torch::manual_seed(12);
  auto q = torch::randn({1, 1, 1, 16}, torch::kDouble),
       k = torch::randn({1, 1, 1, 16}, torch::kDouble);
  auto score = [&](int64_t m, int64_t n) {
    return (rope_rotate(q, 10.0, m) * rope_rotate(k, 10.0, n)).sum().item<double>();
  };
  const double at_3_1 = score(3, 1);
  CHECK(std::abs(score(103, 101) - at_3_1) < 1e-10);
  CHECK(std::abs(score(2, 0) - at_3_1) < 1e-10);
  CHECK(std::abs(score(3, 2) - at_3_1) > 1e-3);  // another offset, another score
  // A rotation keeps the norm.
  CHECK(std::abs(rope_rotate(q, 10.0, 57).norm().item<double>() - q.norm().item<double>()) < 1e-12);
}

TEST_CASE("rope attention's gradient matches central finite differences (double)") {
  torch::manual_seed(13);
  auto a = make(8, 2, true, {{"base", 5.0}});
  auto x = torch::randn({1, 5, 8}, torch::kDouble).requires_grad_(true);
  auto w = torch::randn({1, 5, 8}, torch::kDouble);
  (a->forward(x) * w).sum().backward();
  auto analytic = x.grad().clone();
  const double h = 1e-6;
  double worst = 0;
  torch::NoGradGuard no_grad;
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto xp = x.detach().clone(), xm = x.detach().clone();
    xp.view(-1)[i] += h;
    xm.view(-1)[i] -= h;
    const double numeric =
        ((a->forward(xp) * w).sum().item<double>() - (a->forward(xm) * w).sum().item<double>()) /
        (2 * h);
    worst = std::max(worst, std::abs(numeric - analytic.view(-1)[i].item<double>()));
  }
  CHECK(worst < 1e-7);
}

TEST_CASE("rope: the registry row, options, parameter count and a model that trains") {
  const auto& names = attention_mechanism_names();
  CHECK(std::find(names.begin(), names.end(), "rope") != names.end());
  CHECK_THROWS_WITH_AS(validate_attention_options("rope", {{"base", 1.0}}),
                       doctest::Contains("model.attention_options.rope.base must be in (1"), Error);
  CHECK_THROWS_WITH_AS(validate_attention_options("rope", {{"bse", 2.0}}),
                       doctest::Contains("unknown key 'model.attention_options.rope.bse'"), Error);
  CHECK_THROWS_WITH_AS(make(9, 3, true), doctest::Contains("must be even"), Error);  // Dh = 3

  auto a = make(16, 4, true);
  int64_t numel = 0;
  for (const auto& p : a->parameters()) numel += p.numel();
  CHECK(numel == attention_parameter_count("rope", 16, 4, nlohmann::json::object()));
  CHECK(numel == attention_parameter_count("dot", 16, 4, nlohmann::json::object()));

  ExperimentConfig c = test::tiny_config("copy");
  c.model.attention = {"rope"};
  c.train.steps = 300;
  c.train.lr = 1e-2;
  c.model.attention_options = {{"rope", {{"base", 100.0}}}};
  c = parse_config(to_json(c), "test");  // the config round trip accepts the row
  torch::manual_seed(2);
  TrainingSession session(c);
  CHECK(session.attention_parameters() ==
        c.model.layers * attention_parameter_count("rope", c.model.d_model, c.model.heads,
                                                   c.model.attention_options["rope"]));
  const double first = session.train_step();
  double last = first;
  for (int s = 1; s < 300; ++s) last = session.train_step();
  CHECK(last < 0.25 * first);  // the bar the other mechanisms meet on copy
}
