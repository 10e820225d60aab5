// Connection-function summaries against curves whose shape is known analytically, and the
// session's mechanism views: ky's g_h(t) against the formula evaluated from its parameters.
#include <doctest/doctest.h>

#include "core/analysis/connections.h"
#include "core/attention/ky/ky_attention.h"
#include "core/attention/ky/ky_view.h"
#include "core/base/error.h"
#include "core/training/session/session.h"
#include "tests/core/helpers.h"

using namespace attn;

namespace {

CurveShape shape_of(float (*f)(float), int window = 8) {
  std::vector<float> t, g;
  for (int k = 0; k <= 64; ++k) t.push_back(k / 64.0f);
  for (float x : t) g.push_back(f(x));
  return describe_curve(t, g.data(), window, window - 1);
}

}  // namespace

TEST_CASE("describe_curve names trend, curvature and peak offset of known curves") {
  auto sq = shape_of([](float x) { return x * x; });
  CHECK(sq.trend == "increasing");
  CHECK(sq.curvature == "convex");
  CHECK(sq.peak_t == doctest::Approx(1.0));
  CHECK(sq.peak_offset == 0);  // t = 1 is the current token in a causal window
  CHECK(sq.sentence.find("the current token") != std::string::npos);

  auto root = shape_of([](float x) { return std::sqrt(x); });
  CHECK(root.trend == "increasing");
  CHECK(root.curvature == "concave");

  auto fall = shape_of([](float x) { return std::exp(-3 * x); });
  CHECK(fall.trend == "decreasing");
  CHECK(fall.curvature == "convex");
  CHECK(fall.peak_offset == 7);  // t = 0: the oldest key in a window of 8

  auto hill = shape_of([](float x) { return -(x - 0.3f) * (x - 0.3f); });
  CHECK(hill.trend == "peaked");
  CHECK(hill.curvature == "concave");
  CHECK(hill.peak_t == doctest::Approx(0.3).epsilon(0.02));
  CHECK(hill.peak_slot == 2);  // round(0.3 * 7)
  CHECK(hill.peak_offset == 5);

  auto valley = shape_of([](float x) { return std::cos(6.0f * x); });
  CHECK(valley.trend == "dipped");
  CHECK(valley.curvature == "mixed");

  auto line = shape_of([](float x) { return 2 * x - 1; });
  CHECK(line.curvature == "linear");
  auto flat = shape_of([](float) { return 0.5f; });
  CHECK(flat.trend == "flat");
  auto wave = shape_of([](float x) { return std::sin(12.0f * x); });
  CHECK(wave.trend == "non-monotone");

  // A centred window of 9: slot 4 is the query, t = 0 is 4 tokens back.
  std::vector<float> t = {0, 0.25f, 0.5f, 0.75f, 1};
  std::vector<float> g = {3, 2, 1, 0, -1};
  CHECK(describe_curve(t, g.data(), 9, 4).peak_offset == 4);
}

namespace {

// g_h(t) = W3 GELU(W2 GELU(W1 t + b1) + b2) + b3 (eq. 37), in double, from the parameters: an
// independent reference for what ky's view carries.
double reference_g(ConnectionNet& net, int head, double t) {
  auto gelu = [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); };
  auto at = [](const torch::Tensor& p) { return p.detach().to(torch::kDouble).contiguous(); };
  const auto w1 = at(net->w1), b1 = at(net->b1), w2 = at(net->w2), b2 = at(net->b2),
             w3 = at(net->w3), b3 = at(net->b3);
  const int64_t n = w1.size(1);
  std::vector<double> h1(n);
  for (int64_t k = 0; k < n; ++k)
    h1[k] = gelu(w1[head][k].item<double>() * t + b1[head][k].item<double>());
  double g = b3[head].item<double>();
  for (int64_t i = 0; i < n; ++i) {
    double z = b2[head][i].item<double>();
    for (int64_t k = 0; k < n; ++k) z += w2[head][i][k].item<double>() * h1[k];
    g += w3[head][i].item<double>() * gelu(z);
  }
  return g;
}

}  // namespace

TEST_CASE("a session records every layer's mechanism view over training, thinned; ky's is g_h(t)") {
  ExperimentConfig c = test::tiny_config("copy");
  c.model.attention = {"dot", "ky"};
  c.model.attention_options = {{"ky", {{"window", 5}, {"hidden", 4}}}};
  c.train.eval_every = 1;
  c = parse_config(to_json(c));
  TrainingSession s(c);
  REQUIRE(s.mechanism_history().size() == 1);
  for (int k = 0; k < 70; ++k) {
    s.train_step();
    s.evaluate();
  }
  const auto& h = s.mechanism_history();
  CHECK(h.size() <= 64);
  CHECK(h.front().step == 0);
  CHECK(h.back().step == 70);
  for (size_t i = 1; i < h.size(); ++i) CHECK(h[i].step > h[i - 1].step);
  REQUIRE(h.back().layers.size() == 1);  // dot shows nothing of itself
  CHECK(h.back().layers[0].mechanism == "ky");

  const auto curves = ky_curves_of(h.back().layers.at(0));
  REQUIRE(curves.has_value());
  const ConnectionCurves& c1 = *curves;
  CHECK(c1.layer == 1);
  CHECK(c1.window == 5);
  CHECK(c1.query_slot == 4);
  REQUIRE(c1.beta.size() == 2 * 5);
  // Against g_h computed from the module's parameters (not through its forward): the fine
  // curve at every sample, g at the slots t_j = j / 4, and beta = softmax_j g_h(t_j).
  auto* ky = dynamic_cast<KyAttention*>(s.model()->attention_modules()[1].get());
  REQUIRE(ky);
  for (int head = 0; head < 2; ++head) {
    for (size_t k = 0; k < c1.t.size(); ++k)
      CHECK(c1.curve(head)[k] ==
            doctest::Approx(reference_g(ky->connection(), head, c1.t[k])).epsilon(1e-5));
    double z = 0;
    for (int j = 0; j < 5; ++j) z += std::exp(reference_g(ky->connection(), head, j / 4.0));
    for (int j = 0; j < 5; ++j) {
      const double g = reference_g(ky->connection(), head, j / 4.0);
      CHECK(c1.slot_values(head)[j] == doctest::Approx(g).epsilon(1e-5));
      CHECK(c1.beta_values(head)[j] == doctest::Approx(std::exp(g) / z).epsilon(1e-5));
    }
  }

  // Through the run directory's side file and back (the generic JSON codec).
  const auto back = mechanism_frames_from_json(mechanism_frames_to_json(h), "mechanism_views.json");
  REQUIRE(back.size() == h.size());
  CHECK(ky_curves_of(back.back().layers[0])->g == c1.g);
  CHECK(ky_curves_of(back.back().layers[0])->edges == "masked");
  auto broken = mechanism_frames_to_json(h);
  broken["frames"][0]["layers"][0]["curves"][2]["ys"] = {1.0};  // beta of 1 value
  CHECK_THROWS_AS(mechanism_frames_from_json(broken, "mechanism_views.json"), Error);

  // A model whose mechanisms show nothing records nothing.
  TrainingSession plain(parse_config(to_json(test::tiny_config("copy"))));
  CHECK(plain.mechanism_history().empty());
}
