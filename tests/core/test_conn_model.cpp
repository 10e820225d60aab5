// The Connection Transformer (core/models/conn/conn_model.h): slot mixing against explicit loops, the
// literal form, exact causality (output t = the seed's model on the prefix x_0..x_t), the
// parameter count against the seed's formula, config errors, and a short training run on
// recall under each control.
#include <doctest/doctest.h>

#include <cmath>

#include "core/base/error.h"
#include "core/models/architectures/architecture.h"
#include "core/models/conn/conn_model.h"
#include "core/models/conn/conn_monitor.h"
#include "core/models/conn/conn_view.h"
#include "core/models/model.h"
#include "core/models/model_size.h"
#include "core/training/session/session.h"
#include "core/training/trainer.h"
#include "helpers.h"

using namespace attn;

namespace {

ModelConfig conn_model_config(int n = 6, int d = 8, int k = 3) {
  ModelConfig m;
  m.architecture = "conn";
  m.d_model = d;
  m.heads = 1;
  m.conn.slots = n;
  m.conn.steps = k;
  m.conn.init_std = 0.3;  // large enough that mixing matters in the checks below
  return m;
}

ExperimentConfig conn_recall_config() {
  ExperimentConfig c = test::tiny_config("recall");
  c.model.architecture = "conn";
  c.model.d_model = 32;
  c.model.heads = 1;
  c.model.conn.slots = 48;  // more than the tracker's 24 Krylov vectors
  c.model.conn.steps = 2;
  c.train.steps = 200;
  c.train.batch_size = 32;
  c.train.lr = 3e-3;
  c.train.warmup = 20;
  c.train.eval_every = 200;
  c.train.eval_batches = 4;
  return c;
}

// The seed's forward pass (non-causal, one sequence), written out from the model's weights.
torch::Tensor seed_forward_last(ConnModelImpl& m, const torch::Tensor& ids) {
  auto p = m.named_parameters();
  const int64_t T = ids.size(0);
  const double s = 1.0 / std::sqrt(double(m.d_model()));
  auto x = p["token.weight"].index_select(0, ids) + p["position"].slice(0, 0, T);  // [T, D]
  auto H = m.slots;
  auto q = torch::matmul(x, p["wq_in.weight"].t());
  auto k = torch::matmul(H, p["wk_slots.weight"].t());
  auto v = torch::matmul(x, p["wv_in.weight"].t());
  auto A = torch::softmax(torch::matmul(q, k.t()) * s, -1);  // [T, N]
  auto h = H + torch::matmul(A.t(), v);                      // [N, D]
  auto C = p["connection"].mean(0);
  for (int step = 0; step < m.options().steps; ++step) {
    auto infl = torch::einsum("ij,id->jd", {C, h});
    if (m.options().variant == "nonlinear") infl = torch::gelu(infl);
    const auto n = "norm" + std::to_string(step);
    h = torch::layer_norm(h + infl, {m.d_model()}, p[n + ".weight"], p[n + ".bias"]);
  }
  auto qo = torch::matmul(x, p["wq_out.weight"].t());
  auto kf = torch::matmul(h, p["wk_final.weight"].t());
  auto vf = torch::matmul(h, p["wv_final.weight"].t());
  auto a = torch::softmax(torch::matmul(qo, kf.t()) * s, -1);
  auto y = torch::matmul(a, vf);
  return torch::matmul(y, p["vocab_head.weight"].t())[T - 1];
}

}  // namespace

// The session's monitor, as the Connection Transformer's (the session holds a generic one).
const ConnMonitor* monitor_of(const TrainingSession& s) {
  return dynamic_cast<const ConnMonitor*>(s.architecture_monitor());
}

TEST_CASE("conn model: slot mixing equals the explicit double loop sum_i C[i,j] H[b,i,:]") {
  torch::manual_seed(3);
  for (auto [B, N, D] : {std::tuple<int, int, int>{2, 5, 3}, {3, 7, 7}, {1, 4, 9}}) {
    auto c = torch::randn({N, N}, torch::kFloat64), h = torch::randn({B, N, D}, torch::kFloat64);
    auto got = mix_slots(c, h);
    auto want = torch::zeros({B, N, D}, torch::kFloat64);
    auto ca = c.accessor<double, 2>();
    auto ha = h.accessor<double, 3>();
    auto wa = want.accessor<double, 3>();
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < N; ++j)
        for (int d = 0; d < D; ++d) {
          double sum = 0;
          for (int i = 0; i < N; ++i) sum += ca[i][j] * ha[b][i][d];
          wa[b][j][d] = sum;
        }
    CHECK((got - want).abs().max().item<double>() < 1e-12);
    // With N == D the literal H @ C is a different operation (it mixes features, not slots).
    if (N == D) CHECK((mix_literal(h, c) - want).abs().max().item<double>() > 1e-3);
  }
}

TEST_CASE("conn model: literal mixing is H @ C when N == D and is refused otherwise") {
  torch::manual_seed(4);
  auto c = torch::randn({6, 6}, torch::kFloat64), h = torch::randn({2, 6, 6}, torch::kFloat64);
  auto got = mix_literal(h, c);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) {
        double sum = 0;
        for (int k = 0; k < 6; ++k) sum += h[b][i][k].item<double>() * c[k][j].item<double>();
        CHECK(got[b][i][j].item<double>() == doctest::Approx(sum).epsilon(1e-12));
      }
  CHECK_THROWS_AS(mix_literal(torch::randn({2, 6, 4}), torch::randn({6, 6})), Error);

  nlohmann::json j = {{"task", {{"name", "recall"}}},
                      {"model",
                       {{"architecture", "conn"},
                        {"d_model", 16},
                        {"conn", {{"slots", 5}, {"mixing", "literal"}}}}}};
  try {
    parse_config(j);
    FAIL("literal mixing with N != D was accepted");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(m.find("model.conn.mixing") != std::string::npos);
    CHECK(m.find("N = 5") != std::string::npos);
    CHECK(m.find("D = 16") != std::string::npos);
  }
  j["model"]["conn"]["slots"] = 16;
  CHECK(parse_config(j).model.conn.mixing == "literal");
  // A literal model with N == D builds and runs.
  auto m = conn_model_config(8, 8, 2);
  m.conn.mixing = "literal";
  Transformer t(m, 11, 9);
  CHECK(t->forward(torch::randint(0, 11, {2, 5}, torch::kInt64)).sizes() ==
        torch::IntArrayRef({2, 5, 11}));
}

TEST_CASE("conn model: config keys are validated with the key named") {
  auto error_of = [](nlohmann::json conn, std::string task = "recall") {
    nlohmann::json j = {{"task", {{"name", task}}},
                        {"model", {{"architecture", "conn"}, {"conn", conn}}}};
    try {
      parse_config(j);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(error_of({{"control", "clip"}})
            .find("model.conn.control must be one of none, spec, norm-bound") != std::string::npos);
  CHECK(error_of({{"slots", 0}}).find("model.conn.slots must be in [1, 4096]") !=
        std::string::npos);
  CHECK(error_of({{"limit", 0}}).find("model.conn.limit") != std::string::npos);
  CHECK(error_of({{"slot", 4}}).find("unknown key 'model.conn.slot'") != std::string::npos);
  CHECK(error_of({{"variant", "relu"}}).find("model.conn.variant") != std::string::npos);
  CHECK(error_of({{"track", 1}}).find("model.conn.track must be true or false") !=
        std::string::npos);
  CHECK(error_of(nlohmann::json::object()) == "accepted");
  // Resolved JSON round-trips.
  nlohmann::json j = {
      {"task", {{"name", "recall"}}},
      {"model", {{"architecture", "conn"}, {"conn", {{"slots", 12}, {"control", "spec"}}}}}};
  auto c = parse_config(j);
  CHECK(to_json(parse_config(to_json(c))) == to_json(c));
  CHECK(to_json(c)["model"]["conn"]["slots"] == 12);
}

TEST_CASE("conn model: output t is exactly the seed's model on the prefix x_0..x_t (causal)") {
  for (std::string variant : {"linear", "nonlinear"}) {
    CAPTURE(variant);
    torch::manual_seed(5);
    auto mc = conn_model_config();
    mc.conn.variant = variant;
    mc.conn.connection_heads = 2;
    ConnModel m(mc, 13, 12);
    m->eval();
    torch::NoGradGuard no_grad;
    auto tokens = torch::randint(0, 13, {2, 10}, torch::kInt64);
    auto out = m->forward(tokens);
    for (int64_t t : {0, 3, 9}) {
      auto want = seed_forward_last(*m, tokens[1].slice(0, 0, t + 1));
      CHECK((out[1][t] - want).abs().max().item<float>() < 2e-5f);
    }
    // A future token never changes an earlier output, and does change its own.
    auto changed = tokens.clone();
    changed[0][6] = (changed[0][6].item<int64_t>() + 1) % 13;
    auto out2 = m->forward(changed);
    CHECK((out2.slice(1, 0, 6) - out.slice(1, 0, 6)).abs().max().item<float>() == 0.0f);
    CHECK((out2[0][6] - out[0][6]).abs().max().item<float>() > 1e-5f);
  }
}

TEST_CASE("conn model: connection heads act through their mean") {
  torch::manual_seed(6);
  auto mc = conn_model_config();
  mc.conn.connection_heads = 3;
  mc.conn.variant = "nonlinear";
  ConnModel multi(mc, 9, 8);
  mc.conn.connection_heads = 1;
  ConnModel single(mc, 9, 8);
  {
    torch::NoGradGuard no_grad;
    auto src = multi->named_parameters(), dst = single->named_parameters();
    for (auto& p : src) {
      if (p.key() == "connection")
        dst[p.key()].copy_(p.value().mean(0, true));
      else
        dst[p.key()].copy_(p.value());
    }
    single->slots.copy_(multi->slots);
  }
  auto tokens = torch::randint(0, 9, {2, 8}, torch::kInt64);
  CHECK((multi->forward(tokens) - single->forward(tokens)).abs().max().item<float>() < 1e-5f);
}

TEST_CASE("conn model: parameter count against the seed's formula, the difference explained") {
  for (int heads : {1, 2}) {
    auto mc = conn_model_config(20, 16, 4);
    mc.conn.connection_heads = heads;
    const int V = 30, S = 12;
    Transformer t(mc, V, S);
    const int64_t N = 20, D = 16, K = 4;
    const int64_t count = t->parameter_count();
    CHECK(count == ConnModelImpl::parameter_formula(mc.conn, D, S, V));
    // The torch-free count a reproduction uses at the paper's size (core/models/model_size.h).
    CHECK(model_parameter_count(mc, V, S, 0).total == count);
    CHECK(model_parameter_count(mc, V, S, 0).attention == t->attention_parameter_count());
    // The memory estimate counts the same parameters (one formula, at S tokens and V outputs).
    CHECK(architecture_of(mc).memory(mc, S, V).parameters == static_cast<double>(count));
    CHECK(count == heads * N * N + 6 * D * D + 2 * V * D + S * D + 2 * K * D);
    // The seed: N^2 + 8 D^2 + S D + V D. It counts 7 D x D matrices + "embeddings" as 8 D^2,
    // but W_vocab is D x V, the token embedding V x D is another V D, and the K LayerNorms
    // (2 D each) are left out.
    const int64_t spec = ConnModelImpl::spec_parameter_formula(N, D, S, V);
    CHECK(spec == N * N + 8 * D * D + S * D + V * D);
    CHECK(count - spec == (heads - 1) * N * N - 2 * D * D + V * D + 2 * K * D);
    // H is a buffer: never a parameter, never trained.
    for (const auto& p : t->named_parameters()) CHECK(p.key() != "conn.slots");
    CHECK(t->named_buffers().contains("conn.slots"));
  }
}

TEST_CASE("conn model: regularisation is lambda ||C||_F^2") {
  auto mc = conn_model_config();
  mc.conn.regularization = 0.25;
  mc.conn.connection_heads = 2;
  ConnModel m(mc, 7, 5);
  const double fro2 = m->connection.pow(2).sum().item<double>();
  CHECK(m->regularization().item<double>() == doctest::Approx(0.25 * fro2).epsilon(1e-6));
}

TEST_CASE("conn model: recall trains, and norm-bound keeps rho(I+C) <= r at every step") {
  auto c = conn_recall_config();
  TrainingSession s(c);
  const double before = s.evaluate().loss;
  REQUIRE(monitor_of(s) != nullptr);
  double worst = 0, worst_rho_error = 0, worst_norm_error = 0;
  for (int i = 0; i < 200; ++i) {
    s.train_step();
    auto M = spectral::shifted(s.model()->conn()->effective_connection());
    const double rho = spectral::spectral_radius(M), norm = spectral::spectral_norm(M);
    worst = std::max(worst, rho);
    // The tracker's warm-started estimate of this step, against the exact values.
    const auto v = monitor_of(s)->conn_view();
    worst_rho_error =
        std::max(worst_rho_error, std::abs(v->spectral_radius.values.back() / rho - 1));
    worst_norm_error =
        std::max(worst_norm_error, std::abs(v->spectral_norm.values.back() / norm - 1));
  }
  MESSAGE("tracker's worst relative error over 200 training steps: rho "
          << worst_rho_error << ", norm " << worst_norm_error);
  CHECK(worst_rho_error < 1e-3);
  CHECK(worst_norm_error < 1e-3);
  const auto after = s.evaluate();
  MESSAGE("conn recall: eval loss " << before << " -> " << after.loss << ", accuracy "
                                    << after.accuracy << ", max rho(I+C) " << worst);
  CHECK(after.loss < before - 0.3);
  CHECK(worst <= c.model.conn.limit + 1e-6);
  Snapshot snap;
  s.fill_snapshot(snap);
  s.probe_attention(snap);
  const auto conn = conn_view_of(snap);
  REQUIRE(conn);
  const auto& v = *conn;
  CHECK(v.control_events > 0);
  CHECK(v.spectral_radius.steps.size() == 201);  // step 0 and every step after it
  CHECK(v.spectral_radius.values.back() <= c.model.conn.limit + 1e-4);
  CHECK(v.matrix);
  CHECK(v.matrix->size() == 48u * 48u);
  CHECK(v.trace.size() == 3u * 48u);  // K + 1 rows of N slot norms
  CHECK(v.eigen_re.size() == 48u);
  // The estimate tracks the exact value at the last eigen refresh.
  CHECK(v.exact_radius <= c.model.conn.limit + 1e-6);
  CHECK(v.parameters == s.parameters());
}

TEST_CASE("conn model: the trainer thread publishes the spectra, C, eigenvalues and trace") {
  auto c = conn_recall_config();
  c.model.conn.slots = 12;
  c.model.conn.eigen_every = 5;
  c.train.steps = 30;
  c.train.warmup = 2;
  TrainerOptions o;
  o.threads = 1;
  o.publish_every_steps = 1;
  Trainer t(c, o);
  t.start();
  REQUIRE(test::wait_until([&] { return t.state() == TrainerState::Finished; }, 120));
  const auto s = t.latest();
  const auto conn = conn_view_of(*s);
  REQUIRE(conn);
  const ConnView& v = *conn;
  CHECK(s->mechanisms == std::vector<std::string>{"conn"});
  CHECK(v.spectral_radius.steps.back() == 30);
  CHECK(v.spectral_norm.values.size() == v.spectral_radius.values.size());
  CHECK(v.eigen_step > 0);
  CHECK(v.eigen_re.size() == 12u);
  CHECK(v.trace_step == 30);
  CHECK(v.trace.size() == 3u * 12u);
  REQUIRE(v.matrix);
  CHECK(v.matrix->size() == 144u);
  // The published C is the model's: its exact spectrum is what the view reports.
  std::vector<double> cd(v.matrix->begin(), v.matrix->end());
  CHECK(spectral::shifted_spectrum(cd, 12).spectral_norm <= c.model.conn.limit + 1e-5);
}

TEST_CASE("conn model: a resumed run is bit-identical to an uninterrupted one") {
  auto c = conn_recall_config();
  c.model.conn.slots = 12;
  c.train.steps = 10;
  c.train.warmup = 2;
  const std::string dir = test::temp_dir("conn-resume");
  TrainingSession whole(c), first(c);
  for (int i = 0; i < 10; ++i) whole.train_step();
  for (int i = 0; i < 6; ++i) first.train_step();
  first.save(dir);
  TrainingSession resumed(c);
  resumed.load(dir);
  REQUIRE(monitor_of(resumed));
  CHECK(monitor_of(resumed)->conn_view()->spectral_radius.steps.front() == 6);
  for (int i = 0; i < 4; ++i) resumed.train_step();
  auto a = whole.model()->named_parameters(), b = resumed.model()->named_parameters();
  for (const auto& p : a) CHECK(torch::equal(p.value(), b[p.key()]));
  CHECK(torch::equal(whole.model()->conn()->slots, resumed.model()->conn()->slots));
  std::filesystem::remove_all(dir);
}

TEST_CASE("conn model: without a control rho(I+C) leaves the limit; spec leaves it above 1") {
  auto c = conn_recall_config();
  c.train.steps = 60;
  c.model.conn.init_std = 0.05;
  c.model.conn.control = "none";
  TrainingSession none(c);
  for (int i = 0; i < 60; ++i) none.train_step();
  const double rho_none =
      spectral::spectral_radius(spectral::shifted(none.model()->conn()->effective_connection()));
  CHECK(rho_none > c.model.conn.limit);
  c.model.conn.control = "spec";
  TrainingSession spec(c);
  for (int i = 0; i < 60; ++i) spec.train_step();
  auto Cs = spec.model()->conn()->effective_connection();
  const double rho_spec = spectral::spectral_radius(spectral::shifted(Cs));
  MESSAGE("after 60 steps: rho none " << rho_none << ", spec " << rho_spec << ", ||C||_F spec "
                                      << Cs.norm().item<double>());
  CHECK(rho_spec > c.model.conn.limit);  // the seed's control does not enforce its limit
}
