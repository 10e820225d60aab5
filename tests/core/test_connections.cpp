// Connection-function summaries against curves whose shape is known analytically, and the
// session's record of g_h(t) for ky layers (against the module evaluated directly).
#include <doctest/doctest.h>

#include "core/analysis/connections.h"
#include "core/base/error.h"
#include "core/attention/ky/ky_attention.h"
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

TEST_CASE("a session records g_h(t) of its ky layers, thinned, and round-trips it through JSON") {
  ExperimentConfig c = test::tiny_config("copy");
  c.model.attention = {"dot", "ky"};
  c.model.attention_options = {{"ky", {{"window", 5}, {"hidden", 4}}}};
  c.train.eval_every = 1;
  c = parse_config(to_json(c));
  TrainingSession s(c);
  REQUIRE(s.connection_history().size() == 1);
  for (int k = 0; k < 70; ++k) {
    s.train_step();
    s.evaluate();
  }
  const auto& h = s.connection_history();
  CHECK(h.size() <= 64);
  CHECK(h.front().step == 0);
  CHECK(h.back().step == 70);
  for (size_t i = 1; i < h.size(); ++i) CHECK(h[i].step > h[i - 1].step);

  const ConnectionCurves& c1 = h.back().layers.at(0);
  CHECK(c1.layer == 1);
  CHECK(c1.window == 5);
  CHECK(c1.query_slot == 4);
  REQUIRE(c1.beta.size() == 2 * 5);
  // Against the module itself: g at the slots and beta = softmax(g).
  auto* ky = dynamic_cast<KyAttention*>(s.model()->attention_modules()[1].get());
  REQUIRE(ky);
  auto table = ky->bias_table().detach();
  for (int head = 0; head < 2; ++head) {
    double z = 0;
    for (int j = 0; j < 5; ++j) z += std::exp(table[head][j].item<double>());
    for (int j = 0; j < 5; ++j) {
      CHECK(c1.slot_values(head)[j] == doctest::Approx(table[head][j].item<double>()).epsilon(1e-5));
      CHECK(c1.beta_values(head)[j] ==
            doctest::Approx(std::exp(table[head][j].item<double>()) / z).epsilon(1e-5));
    }
    // The fine curve passes through the slot values (t = 0 and t = 1 are samples of both).
    CHECK(c1.curve(head)[0] == doctest::Approx(c1.slot_values(head)[0]).epsilon(1e-5));
    CHECK(c1.curve(head)[c1.t.size() - 1] == doctest::Approx(c1.slot_values(head)[4]).epsilon(1e-5));
  }

  auto back = connection_frames_from_json(connection_frames_to_json(h));
  REQUIRE(back.size() == h.size());
  CHECK(back.back().layers[0].g == h.back().layers[0].g);
  CHECK(back.back().layers[0].edges == "masked");
  auto broken = connection_frames_to_json(h);
  broken["frames"][0]["layers"][0]["beta"] = {1.0};
  CHECK_THROWS_AS(connection_frames_from_json(broken), Error);

  // A model without ky layers records nothing.
  TrainingSession plain(parse_config(to_json(test::tiny_config("copy"))));
  CHECK(plain.connection_history().empty());
}
