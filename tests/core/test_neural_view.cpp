// The Neural panel's data (core/attention/neural/neural_view.h) against independent computations:
// the score surface and slice against the scorer written as explicit loops over the module's
// parameters, the parameter table against norms summed by hand; the generic view the module
// observes (NeuralAttention::observe) read back as the same data, and the trainer's request
// channel (Trainer::request_mechanism_view).
#include <doctest/doctest.h>

#include <cmath>

#include "core/attention/dot/dot_attention.h"
#include "core/base/error.h"
#include "core/attention/neural/neural_attention.h"
#include "core/attention/neural/neural_surface.h"
#include "core/attention/neural/neural_view.h"
#include "core/training/trainer.h"
#include "tests/core/helpers.h"

using namespace attn;

namespace {

std::shared_ptr<NeuralAttention> make_module(int D, int H, nlohmann::json options, int layer = 0) {
  AttentionSpec s;
  s.d_model = D;
  s.heads = H;
  s.causal = true;
  s.layer = layer;
  s.options = std::move(options);
  return std::make_shared<NeuralAttention>(s);
}

double activation(const std::string& name, double z) {
  if (name == "relu") return z > 0 ? z : 0.0;
  if (name == "gelu") return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
  return std::tanh(z);
}

// score = sum_c w_a[c] act(sum_d U[c][d] q[d] + V[c][d] k[d] + b_h[c]) + b_a, unit by unit,
// read from the module's parameters in double.
double loop_score(const NeuralAttention& m, int64_t head, const std::string& act, double q0,
                  double q1, double k0, double k1) {
  auto U = m.hidden_query().detach().to(torch::kDouble),
       V = m.hidden_key().detach().to(torch::kDouble);
  auto bh = m.hidden_bias().detach().to(torch::kDouble);
  auto wa = m.score_weight().detach().to(torch::kDouble);
  auto ba = m.score_bias().detach().to(torch::kDouble);
  auto u = U.accessor<double, 3>(), v = V.accessor<double, 3>();
  auto b = bh.accessor<double, 2>(), w = wa.accessor<double, 2>();
  double score = ba.accessor<double, 1>()[head];
  for (int64_t c = 0; c < U.size(1); ++c) {
    const double z = u[head][c][0] * q0 + u[head][c][1] * q1 + v[head][c][0] * k0 +
                     v[head][c][1] * k1 + b[head][c];
    score += w[head][c] * activation(act, z);
  }
  return score;
}

// Frobenius norm of t[head], summed element by element.
double loop_norm(const torch::Tensor& t, int64_t head) {
  auto flat = t.detach()[head].to(torch::kDouble).contiguous().view({-1});
  auto a = flat.accessor<double, 1>();
  double sum = 0;
  for (int64_t i = 0; i < flat.size(0); ++i) sum += a[i] * a[i];
  return std::sqrt(sum);
}

// Every module's observed view as the session makes a frame of them (neural layers named so).
MechanismFrame frame_of(const std::vector<std::shared_ptr<AttentionModule>>& modules,
                        int64_t step) {
  MechanismFrame frame;
  frame.step = step;
  for (size_t l = 0; l < modules.size(); ++l) {
    std::optional<MechanismView> v = modules[l]->observe();
    if (!v) continue;
    v->layer = static_cast<int>(l);
    v->mechanism = "neural";
    check_mechanism_view(*v);
    frame.layers.push_back(std::move(*v));
  }
  return frame;
}

// The latest published neural view of a trainer's snapshot, or null.
std::shared_ptr<const NeuralView> neural_of(const std::shared_ptr<const Snapshot>& s) {
  return s ? neural_view_of(s->mechanism_history()) : nullptr;
}

bool close(double a, double b, double tol = 1e-5) {
  return std::abs(a - b) <= tol * (1.0 + std::abs(b));
}

}  // namespace

TEST_CASE("neural view: the score surface and slice equal the scorer written as loops") {
  for (const char* act : {"relu", "gelu", "tanh"}) {
    CAPTURE(act);
    torch::manual_seed(3);
    auto m = make_module(8, 2, {{"down", 2}, {"hidden", 5}, {"activation", act}});
    NeuralViewRequest r;
    r.x_min = -2, r.x_max = 1, r.y_min = -0.5, r.y_max = 2.5, r.grid = 7;
    r.query_x = 0.7f, r.query_y = -1.3f, r.key_angle = 0.6f, r.slice_min = -1, r.slice_max = 2;
    for (int head = 0; head < 2; ++head) {
      const NeuralScoreSurface s = neural_score_surface(*m, 0, head, r);
      REQUIRE(s.available);
      CHECK(s.note.empty());
      REQUIRE(s.grid == 7);
      REQUIRE(s.xs.size() == 7);
      REQUIRE(s.learned.size() == 49);
      REQUIRE(s.paraboloid.size() == 49);
      CHECK(s.xs.front() == doctest::Approx(-2));
      CHECK(s.xs.back() == doctest::Approx(1));
      CHECK(s.ys.front() == doctest::Approx(-0.5));
      CHECK(s.ys.back() == doctest::Approx(2.5));
      int mismatches = 0;
      for (int row = 0; row < 7; ++row)
        for (int col = 0; col < 7; ++col) {
          const double x = -2 + col * 0.5, y = -0.5 + row * 0.5;  // the grid, independently
          const size_t i = static_cast<size_t>(row) * 7 + col;
          if (!close(s.learned[i], loop_score(*m, head, act, x, y, x, y))) ++mismatches;
          if (!close(s.paraboloid[i], x * x + y * y)) ++mismatches;
        }
      CHECK(mismatches == 0);
      REQUIRE(s.slice_t.size() >= 2);
      REQUIRE(s.slice_learned.size() == s.slice_t.size());
      REQUIRE(s.slice_dot.size() == s.slice_t.size());
      CHECK(s.slice_t.front() == doctest::Approx(-1));
      CHECK(s.slice_t.back() == doctest::Approx(2));
      int slice_mismatches = 0;
      for (size_t i = 0; i < s.slice_t.size(); ++i) {
        const double t = s.slice_t[i], k0 = t * std::cos(0.6), k1 = t * std::sin(0.6);
        if (!close(s.slice_learned[i], loop_score(*m, head, act, 0.7, -1.3, k0, k1)))
          ++slice_mismatches;
        if (!close(s.slice_dot[i], 0.7 * k0 - 1.3 * k1)) ++slice_mismatches;
      }
      CHECK(slice_mismatches == 0);
    }
  }
}

TEST_CASE("neural view: a changed parameter changes the surface (the comparison can fail)") {
  // A sanity check that the comparison above can fail: perturb one parameter after computing.
  torch::manual_seed(4);
  auto m = make_module(8, 2, {{"down", 2}, {"hidden", 4}});
  NeuralViewRequest r;
  r.grid = 5;
  const NeuralScoreSurface before = neural_score_surface(*m, 0, 1, r);
  {
    torch::NoGradGuard no_grad;
    m->hidden_bias().add_(0.5);
  }
  const NeuralScoreSurface after = neural_score_surface(*m, 0, 1, r);
  int changed = 0;
  for (size_t i = 0; i < before.learned.size(); ++i)
    changed += before.learned[i] != after.learned[i];
  CHECK(changed > 0);
  CHECK(close(after.learned[12], loop_score(*m, 1, "relu", 0, 0, 0, 0)));  // centre (0, 0)
}

TEST_CASE("neural view: without d' = 2 there is no surface, a note says why, the table stays") {
  torch::manual_seed(5);
  for (auto options : {nlohmann::json{{"down", 3}}, nlohmann::json{{"down", "none"}}}) {
    CAPTURE(options.dump());
    auto m = make_module(8, 2, options);
    const NeuralScoreSurface s = neural_score_surface(*m, 0, 0, NeuralViewRequest{});
    CHECK_FALSE(s.available);
    CHECK(s.note.find("d' = 2") != std::string::npos);
    CHECK(s.learned.empty());
    CHECK(s.slice_t.empty());
    const NeuralLayerInfo info = neural_layer_info(*m, 0);
    CHECK(info.parameters.size() == 2);
  }
  auto m = make_module(8, 2, {{"down", 2}});
  CHECK_THROWS_AS(neural_score_surface(*m, 0, 2, NeuralViewRequest{}), Error);
}

TEST_CASE("neural view: an empty or reversed range is repaired, the grid clamped") {
  auto m = make_module(8, 2, {{"down", 2}});
  NeuralViewRequest r;
  r.x_min = 2, r.x_max = -1;  // reversed
  r.y_min = 1, r.y_max = 1;   // empty
  r.grid = 1000;
  const NeuralScoreSurface s = neural_score_surface(*m, 0, 0, r);
  REQUIRE(s.available);
  CHECK(s.grid == 256);
  CHECK(s.xs.front() == doctest::Approx(-1));
  CHECK(s.xs.back() == doctest::Approx(2));
  CHECK(s.ys.back() > s.ys.front());
}

TEST_CASE(
    "neural view: the parameter table holds the norms of values and last gradients; "
    "b_a's gradient is exactly zero") {
  torch::manual_seed(6);
  auto m = make_module(12, 3, {{"down", 2}, {"hidden", 6}, {"activation", "gelu"}});
  const NeuralLayerInfo before = neural_layer_info(*m, 4);
  CHECK(before.layer == 4);
  CHECK(before.heads == 3);
  CHECK(before.head_dim == 4);
  CHECK(before.reduced_dim == 2);
  CHECK(before.down_projection);
  CHECK(before.hidden == 6);
  CHECK(before.activation == "gelu");
  REQUIRE(before.parameters.size() == 3);
  for (const auto& p : before.parameters[0]) CHECK_FALSE(p.has_gradient);

  auto x = torch::randn({2, 5, 12});
  (m->forward(x) * torch::randn({2, 5, 12})).sum().backward();
  const NeuralLayerInfo info = neural_layer_info(*m, 4);
  const std::vector<std::pair<std::string, torch::Tensor>> expected = {
      {"Wq'", m->query_down()}, {"Wk'", m->key_down()},    {"U", m->hidden_query()},
      {"V", m->hidden_key()},   {"b_h", m->hidden_bias()}, {"w_a", m->score_weight()}};
  for (int64_t h = 0; h < 3; ++h) {
    CAPTURE(h);
    const auto& row = info.parameters[h];
    REQUIRE(row.size() == expected.size() + 1);
    for (size_t i = 0; i < expected.size(); ++i) {
      CAPTURE(expected[i].first);
      CHECK(row[i].name == expected[i].first);
      CHECK_FALSE(row[i].scalar);
      CHECK(row[i].has_gradient);
      CHECK(close(row[i].value, loop_norm(expected[i].second, h), 1e-6));
      CHECK(close(row[i].gradient, loop_norm(expected[i].second.grad(), h), 1e-6));
      CHECK(row[i].gradient > 0);  // every other scorer parameter does get a gradient
    }
    const NeuralParameterStat& bias = row.back();
    CHECK(bias.name == "b_a");
    CHECK(bias.scalar);
    CHECK(bias.value == doctest::Approx(m->score_bias()[h].item<double>()));
    CHECK(bias.has_gradient);
    CHECK(bias.gradient == 0.0);  // exactly, not approximately
  }
  // Without a down-projection there are no Wq', Wk' rows.
  auto plain = make_module(8, 2, {{"down", "none"}});
  const NeuralLayerInfo none = neural_layer_info(*plain, 0);
  CHECK_FALSE(none.down_projection);
  CHECK(none.reduced_dim == 4);
  CHECK(none.parameters[0].size() == 5);
  CHECK(none.parameters[0].front().name == "U");
}

TEST_CASE("neural view: the requested neural layer, else the first; null without neural") {
  torch::manual_seed(7);
  AttentionSpec dot_spec;
  dot_spec.d_model = 8;
  dot_spec.heads = 2;
  std::vector<std::shared_ptr<AttentionModule>> modules = {
      std::make_shared<DotAttention>(dot_spec),
      make_module(8, 2, {{"down", 2}, {"placement", "all-layers"}}, 1),
      make_module(8, 2, {{"down", 2}, {"placement", "all-layers"}}, 2)};
  NeuralViewRequest r;
  r.layer = 0;  // dot: falls back to the first neural layer
  r.head = 9;   // clamped to the last head
  for (auto& m : modules) m->set_view_request(neural_request_to_json(r));
  auto view = neural_view_of(frame_of(modules, 42));
  REQUIRE(view);
  CHECK(view->step == 42);
  CHECK(view->request == r);
  REQUIRE(view->layers.size() == 2);
  CHECK(view->layers[0].layer == 1);
  CHECK(view->layers[1].layer == 2);
  CHECK(view->layer_info(0) == nullptr);
  CHECK(view->surface.layer == 1);
  CHECK(view->surface.head == 1);
  r.layer = 2;
  r.head = 0;
  view = neural_view_of(frame_of(modules, 43), &r);  // picked from the views at once
  REQUIRE(view);
  CHECK(view->surface.layer == 2);
  CHECK(view->surface.head == 0);
  CHECK(neural_view_of(frame_of({modules[0]}, 0)) == nullptr);
}

TEST_CASE("neural view: the observed generic view holds the table, surface and slice exactly") {
  torch::manual_seed(5);
  auto m = make_module(8, 2, {{"down", 2}, {"hidden", 5}});
  m->forward(torch::randn({2, 4, 8})).sum().backward();
  NeuralViewRequest r;
  r.head = 1;
  r.grid = 7;
  r.query_x = 0.5f;
  r.key_angle = 0.3f;
  m->set_view_request(neural_request_to_json(r));
  auto view = neural_view_of(frame_of({m}, 3));
  REQUIRE(view);
  const NeuralScoreSurface direct = neural_score_surface(*m, 0, 1, r);
  CHECK(view->surface.available);
  CHECK(view->surface.xs == direct.xs);
  CHECK(view->surface.ys == direct.ys);
  CHECK(view->surface.learned == direct.learned);
  CHECK(view->surface.paraboloid == direct.paraboloid);
  CHECK(view->surface.slice_t == direct.slice_t);
  CHECK(view->surface.slice_learned == direct.slice_learned);
  CHECK(view->surface.slice_dot == direct.slice_dot);
  CHECK(view->surface.query_x == direct.query_x);
  CHECK(view->surface.key_angle == direct.key_angle);
  const NeuralLayerInfo info = neural_layer_info(*m, 0);
  const NeuralLayerInfo& back = view->layers.at(0);
  CHECK(back.heads == info.heads);
  CHECK(back.reduced_dim == info.reduced_dim);
  CHECK(back.activation == info.activation);
  REQUIRE(back.parameters.size() == info.parameters.size());
  for (size_t h = 0; h < info.parameters.size(); ++h) {
    REQUIRE(back.parameters[h].size() == info.parameters[h].size());
    for (size_t p = 0; p < info.parameters[h].size(); ++p) {
      const NeuralParameterStat &a = back.parameters[h][p], &b = info.parameters[h][p];
      CHECK(a.name == b.name);
      CHECK(a.scalar == b.scalar);
      CHECK(a.has_gradient == b.has_gradient);
      CHECK(close(a.value, b.value));
      CHECK(close(a.gradient, b.gradient));
    }
  }
  // A request it cannot read names the key and changes nothing.
  CHECK_THROWS_WITH_AS(m->set_view_request({{"grdi", 9}}), doctest::Contains("\"grdi\""), Error);
  CHECK_THROWS_WITH_AS(m->set_view_request({{"grid", "9"}}), doctest::Contains("\"grid\""),
                       Error);
  CHECK(neural_view_of(frame_of({m}, 4))->request == r);
}

TEST_CASE("trainer: the neural view is published at probes and a request is answered at once") {
  auto c = test::tiny_config();
  // The first-layer placement as resolved: neural, then dot (a list naming neural in layer 1 is
  // refused, in code as when parsed).
  c.model.attention = {"neural", "dot"};
  c.model.attention_options = {{"neural", {{"down", 2}, {"hidden", 8}}}};
  c.train.steps = 100000;
  TrainerOptions o;
  o.threads = 1;
  o.publish_interval_ms = 5;
  Trainer t(c, o);
  REQUIRE(test::wait_until([&] { return neural_of(t.latest()) != nullptr; }));
  CHECK(neural_of(t.latest())->layers.size() == 1);  // first-layer placement: layer 1 is dot
  t.step_once();
  REQUIRE(test::wait_until([&] { return neural_of(t.latest()) && neural_of(t.latest())->step == 1; }));
  {
    auto view = neural_of(t.latest());
    const auto& table = view->layers.at(0).parameters;
    REQUIRE(table.size() == 2);
    for (const auto& head : table) {
      CHECK(head.back().name == "b_a");
      CHECK(head.back().has_gradient);
      CHECK(head.back().gradient == 0.0);  // through clipping and AdamW, still exactly zero
    }
  }
  NeuralViewRequest r;
  r.head = 1;
  r.grid = 9;
  r.x_min = -1;
  t.request_mechanism_view("neural", neural_request_to_json(r));  // paused: answered without a training step
  REQUIRE(test::wait_until([&] { return neural_of(t.latest()) && neural_of(t.latest())->request == r; }));
  auto view = neural_of(t.latest());
  CHECK(view->step == 1);
  CHECK(view->surface.available);
  CHECK(view->surface.grid == 9);
  CHECK(view->surface.head == 1);
  CHECK(view->surface.xs.front() == doctest::Approx(-1));
  // Kept across a reset: the fresh model's first view uses the same request.
  t.reset();
  REQUIRE(test::wait_until([&] {
    auto s = t.latest();
    const auto n = neural_of(s);
    return n && n->step == 0 && n->request == r;
  }));
}

TEST_CASE("trainer: no neural layer, no neural view") {
  Trainer t(test::tiny_config(), TrainerOptions{});
  REQUIRE(test::wait_until([&] { return t.latest()->attention_step >= 0; }));
  CHECK(neural_of(t.latest()) == nullptr);
}
